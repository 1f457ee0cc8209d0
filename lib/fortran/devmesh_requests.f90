! The module devmesh's procedures for requests, errors and the version, included by
! devmesh.f90 after `contains`: a part of that module, not compiled on its
! own.

  ! ---- requests, errors, version ---------------------------------------------------

  !> done = .true. (and request the null request) when request is done;
  !> never blocks.
  subroutine devmesh_test(request, done, ierr)
    type(devmesh_request_t), intent(inout) :: request
    logical, intent(out) :: done
    integer, intent(out), optional :: ierr
    integer(c_int) :: d
    d = 0
    call finish(c_test(request%ptr, d), 'devmesh_test', ierr)
    done = d /= 0
  end subroutine devmesh_test

  !> devmesh_wait on every request; all end even when one fails.
  subroutine devmesh_waitall(requests, ierr)
    type(devmesh_request_t), intent(inout) :: requests(:)
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p(size(requests))
    integer(c_int) :: st
    p = requests(:)%ptr
    st = c_waitall(int(size(requests), c_int), p)
    requests(:)%ptr = p
    call finish(st, 'devmesh_waitall', ierr)
  end subroutine devmesh_waitall

  !> The detail of the last failed devmesh call on this thread (or of the
  !> last failure this module found before calling C); '' if none.
  function devmesh_last_error() result(message)
    character(len=:), allocatable :: message
    if (local_pending) then
      message = local_message
    else
      message = from_c_string(c_last_error())
    end if
  end function devmesh_last_error

  !> A short description of a status value.
  function devmesh_status_string(status) result(text)
    integer, intent(in) :: status
    character(len=:), allocatable :: text
    text = from_c_string(c_status_string(int(status, c_int)))
  end function devmesh_status_string

  !> The library's version (of the shared object the program runs with).
  !> Each argument is optional.
  subroutine devmesh_version(major, minor, patch, ierr)
    integer, intent(inout), optional :: major, minor, patch
    integer, intent(out), optional :: ierr
    integer(c_int) :: a, b, c, st
    st = c_version(a, b, c)
    if (st == DEVMESH_SUCCESS) then
      if (present(major)) major = int(a)
      if (present(minor)) minor = int(b)
      if (present(patch)) patch = int(c)
    end if
    call finish(st, 'devmesh_version', ierr)
  end subroutine devmesh_version
