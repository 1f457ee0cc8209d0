! The module devmesh's procedures for views, names and communicators,
! included by devmesh.f90 after `contains`: a part of that module, not
! compiled on its own.

  ! ---- views and names (not collective) -----------------------------------------

  !> A 1-D view of all dims of mesh; name absent or blank: the dim names
  !> joined with '_'. Pass out by keyword when name is omitted.
  subroutine devmesh_flatten(mesh, name, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in), optional :: name
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs
    type(c_ptr) :: cname
    cname = c_null_ptr
    if (present(name)) call to_c_name(name, cs, cname)
    call finish(c_flatten(mesh%ptr, cname, out%ptr), 'devmesh_flatten', ierr)
  end subroutine devmesh_flatten

  !> Replaces dim by size(sizes) dims, split row-major; one size may be -1.
  subroutine devmesh_unflatten(mesh, dim, sizes, names, out, ierr)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim, names(:)
    integer, intent(in) :: sizes(:)
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    type(c_strings), target :: cs, cdim
    integer(c_int) :: s(max(size(sizes), 1))
    if (size(sizes) /= size(names)) then
      call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'devmesh_unflatten: got ' // trim(itoa(size(sizes))) // &
                      ' sizes but ' // trim(itoa(size(names))) // ' names', ierr)
      return
    end if
    call to_c_strings([dim], 1, cdim)
    call to_c_strings(names, size(names), cs)
    s = 0
    s(1:size(sizes)) = int(sizes, c_int)
    call finish(c_unflatten(mesh%ptr, cdim%ptr(1), int(size(sizes), c_int), s, cs%ptr, out%ptr), &
                'devmesh_unflatten', ierr)
  end subroutine devmesh_unflatten

  !> devmesh_flatten_ex(mesh [, name], out [, ierr] [, backend=]
  !> [, backend_options=] [, dim_backends=] [, dim_options=]): devmesh_flatten
  !> whose new dim runs on a backend of its own (the options as
  !> devmesh_create_ex's, applied to the new dim).
  subroutine devmesh_flatten_ex(mesh, name, out, ierr, backend, backend_options, dim_backends, dim_options)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in), optional :: name
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, backend_options, dim_backends, dim_options
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_ptr) :: cname
    type(c_config) :: cfg
    cname = c_null_ptr
    if (present(name)) call to_c_name(name, cs, cname)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    call finish(c_flatten_ex(mesh%ptr, cname, cfg, out%ptr), 'devmesh_flatten_ex', ierr)
  end subroutine devmesh_flatten_ex

  !> devmesh_unflatten_ex(mesh, dim, sizes, names, out [, ierr] [, backend=]
  !> [, backend_options=] [, dim_backends=] [, dim_options=]): devmesh_unflatten
  !> whose new dims run on backends of their own (dim_backends and
  !> dim_options by the new names).
  subroutine devmesh_unflatten_ex(mesh, dim, sizes, names, out, ierr, backend, backend_options, dim_backends, &
                                  dim_options)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim, names(:)
    integer, intent(in) :: sizes(:)
    type(devmesh_t), intent(inout) :: out
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, backend_options, dim_backends, dim_options
    type(c_strings), target :: cs, cdim, cb, cdb, cbo, cdo
    integer(c_int) :: s(max(size(sizes), 1))
    type(c_config) :: cfg
    if (size(sizes) /= size(names)) then
      call fail_local(DEVMESH_ERR_INVALID_ARGUMENT, 'devmesh_unflatten_ex: got ' // trim(itoa(size(sizes))) // &
                      ' sizes but ' // trim(itoa(size(names))) // ' names', ierr)
      return
    end if
    call to_c_strings([dim], 1, cdim)
    call to_c_strings(names, size(names), cs)
    s = 0
    s(1:size(sizes)) = int(sizes, c_int)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    call finish(c_unflatten_ex(mesh%ptr, cdim%ptr(1), int(size(sizes), c_int), s, cs%ptr, cfg, out%ptr), &
                'devmesh_unflatten_ex', ierr)
  end subroutine devmesh_unflatten_ex

  !> Name of dim number index (1-based, like coord(index)) into a
  !> character(len=:), allocatable variable.
  subroutine devmesh_dim_name(mesh, index, name, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(in) :: index
    character(len=:), allocatable, intent(inout) :: name
    integer, intent(out), optional :: ierr
    type(c_ptr) :: p
    integer(c_int) :: st
    p = c_null_ptr
    st = c_dim_name(mesh%ptr, int(index - 1, c_int), p)
    if (st == DEVMESH_SUCCESS) name = from_c_string(p)
    call finish(st, 'devmesh_dim_name', ierr)
  end subroutine devmesh_dim_name

  ! ---- communicators -------------------------------------------------------------

  !> devmesh_cart_comm_periodic(mesh, periodic, comm [, ierr]): dim i
  !> periodic when periodic(i) (one per dim; size 0: none).
  subroutine cart_comm_periodic_int(mesh, periodic, comm, ierr)
    type(devmesh_t), intent(in) :: mesh
    logical, intent(in) :: periodic(:)
    integer, intent(inout) :: comm
    integer, intent(out), optional :: ierr
    integer(c_int) :: p(max(size(periodic), 1)), v, st
    p = 0
    where (periodic) p(1:size(periodic)) = 1
    st = c_cart_comm_periodic_f(mesh%ptr, int(size(periodic), c_int), p, v)
    if (st == DEVMESH_SUCCESS) comm = int(v)
    call finish(st, 'devmesh_cart_comm_periodic', ierr)
  end subroutine cart_comm_periodic_int

  !> Creates the communicators of every dim of mesh at once (path: one of
  !> DEVMESH_COMM_PATH_*, default automatic).
  subroutine devmesh_create_comms(mesh, path, ierr)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(in), optional :: path
    integer, intent(out), optional :: ierr
    integer(c_int) :: p
    p = DEVMESH_COMM_PATH_AUTOMATIC
    if (present(path)) p = int(path, c_int)
    call finish(c_create_comms(mesh%ptr, p), 'devmesh_create_comms', ierr)
  end subroutine devmesh_create_comms

  !> The caller's communicator along dim in the dim's backend: handle is the
  !> C address of the backend's own handle (a C MPI_Comm for 'mpi', an
  !> ncclComm_t for 'nccl'), owned by devmesh; for an MPI handle in Fortran
  !> use devmesh_comm. backend: the backend the caller expects (absent or
  !> blank: any; another one than the dim's gives DEVMESH_ERR_INVALID_ARGUMENT).
  subroutine devmesh_backend_comm(mesh, dim, handle, ierr, backend)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    type(c_ptr), intent(inout) :: handle
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend
    type(c_strings), target :: cs, cb
    type(c_ptr) :: cdim, cback
    call to_c_name(dim, cs, cdim)
    cback = c_null_ptr
    if (present(backend)) call to_c_name(backend, cb, cback)
    call finish(c_backend_comm(mesh%ptr, cdim, cback, handle), 'devmesh_backend_comm', ierr)
  end subroutine devmesh_backend_comm

  !> devmesh_neighbors(mesh, dim, prev, next [, ierr] [, parent_prev=]
  !>                   [, parent_next=] [, periodic=] [, distance=])
  !> The caller's neighbours along dim, as MPI_Cart_shift(distance) gives
  !> them (default 1, any sign): 0-based local ranks k - distance (prev) and
  !> k + distance (next), wrapped when periodic (default .false.), else
  !> MPI_PROC_NULL at an open edge; and the same as parent ranks.
  subroutine devmesh_neighbors(mesh, dim, prev, next, ierr, parent_prev, parent_next, periodic, distance)
    type(devmesh_t), intent(in) :: mesh
    character(len=*), intent(in) :: dim
    integer, intent(inout) :: prev, next
    integer, intent(out), optional :: ierr
    integer, intent(inout), optional :: parent_prev, parent_next
    logical, intent(in), optional :: periodic
    integer, intent(in), optional :: distance
    type(c_strings), target :: cs
    type(c_ptr) :: cdim
    integer(c_int) :: per, dist, p, n, pp, pn, st
    per = 0
    if (present(periodic)) per = merge(1, 0, periodic)
    dist = 1
    if (present(distance)) dist = int(distance, c_int)
    call to_c_name(dim, cs, cdim)
    st = c_neighbors(mesh%ptr, cdim, per, dist, p, n, pp, pn)
    if (st == DEVMESH_SUCCESS) then
      prev = int(p)
      next = int(n)
      if (present(parent_prev)) parent_prev = int(pp)
      if (present(parent_next)) parent_next = int(pn)
    end if
    call finish(st, 'devmesh_neighbors', ierr)
  end subroutine devmesh_neighbors
