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

  !> Starts the sends and receives of ops together, ended by one request
  !> (devmesh_wait, devmesh_test, devmesh_waitall); see devmesh_batch in
  !> devmesh.h. The buffers the entries name are the operation's until the
  !> request ends. Not collective: between the ranks named.
  subroutine devmesh_batch(mesh, dim, ops, request, stream, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(devmesh_p2p_t), intent(in) :: ops(:)
    type(devmesh_request_t), intent(inout) :: request
    type(c_ptr), intent(in), optional :: stream
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: p_dim
    type(devmesh_p2p_t), target :: v(max(size(ops), 1))
    integer :: i
    do i = 1, size(ops)
      if (ops(i)%count < 0) then
        call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'devmesh_batch: negative count in ops(' // &
                        trim(itoa(i)) // ')', ierr)
        return
      end if
    end do
    call to_c_name(dim, cs, p_dim)
    v(1:size(ops)) = ops
    call finish(c_batch(mesh%ptr, p_dim, c_loc(v), int(size(ops), c_int), stream_arg(stream), request%ptr), &
                'devmesh_batch', ierr)
  end subroutine devmesh_batch

  !> An entry of devmesh_batch: send (.true.) or receive count elements of
  !> datatype of buffer (which needs the target or asynchronous attribute
  !> in the caller) to or from local rank peer.
  function p2p_count_default(send, peer, buffer, count, datatype) result(op)
    logical, intent(in) :: send
    integer, intent(in) :: peer, count, datatype
    type(*), dimension(..), intent(in), target, contiguous, asynchronous :: buffer
    type(devmesh_p2p_t) :: op
    op = p2p_count_int64(send, peer, buffer, int(count, int64), datatype)
  end function p2p_count_default

  function p2p_count_int64(send, peer, buffer, count, datatype) result(op)
    logical, intent(in) :: send
    integer, intent(in) :: peer, datatype
    integer(int64), intent(in) :: count
    type(*), dimension(..), intent(in), target, contiguous, asynchronous :: buffer
    type(devmesh_p2p_t) :: op
    op%send = merge(1_c_int, 0_c_int, send)
    op%peer = int(peer, c_int)
    op%buffer = c_loc(buffer)
    op%count = int(count, c_size_t)  ! a negative count is refused by devmesh_batch
    op%datatype = int(datatype, c_int)
  end function p2p_count_int64

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
