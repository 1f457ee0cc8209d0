! The module devmesh's procedures for creating meshes, included by
! devmesh.f90 after `contains`: a part of that module, not compiled on its
! own.

  ! ---- creating --------------------------------------------------------------


  !> devmesh_create(comm, shape, names, mesh [, ierr]): a root mesh over all
  !> ranks of comm (a 0 in shape is chosen as MPI_Dims_create does).
  subroutine create_int(comm, shape, names, mesh, ierr)
    integer, intent(in) :: comm, shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    integer(c_int), allocatable :: shp(:)
    type(c_strings), target :: cs
    integer :: n
    call pad(shape, names, n, shp, cs)
    call finish(c_create_f(int(comm, c_int), int(n, c_int), shp, cs%ptr, mesh%ptr), 'devmesh_create', ierr)
  end subroutine create_int

  !> devmesh_create_from_ranks(comm, shape, ranks, names, mesh [, ierr]): over
  !> the listed ranks of comm (root index x is rank ranks(x+1)); ranks not
  !> listed get the null handle. devmesh_create_ex with ranks=.
  subroutine create_from_ranks_int(comm, shape, ranks, names, mesh, ierr)
    integer, intent(in) :: comm, shape(:), ranks(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    call create_ex_common('devmesh_create_from_ranks', comm, shape, names, mesh, ierr, .true., ranks)
  end subroutine create_from_ranks_int

  ! The rank list is passed when `listed` (not an optional argument:
  ! gfortran passes a zero-size array such as [integer ::] on as absent,
  ! which would turn an empty list into none); an empty list as nranks 0
  ! (the C layer refuses it) with a valid pointer. `proc` names the
  ! caller's procedure in messages.
  subroutine create_ex_common(proc, parent, shape, names, mesh, ierr, listed, ranks, backend, dim_backends, &
                              backend_options, dim_options, host_aware, comm_errors, fault_tolerance, deadline, &
                              spares, placement)
    character(len=*), intent(in) :: proc
    integer, intent(in) :: parent, shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    logical, intent(in) :: listed
    integer, intent(in) :: ranks(:)
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options, placement
    logical, intent(in), optional :: host_aware, fault_tolerance
    integer, intent(in), optional :: comm_errors, spares
    double precision, intent(in), optional :: deadline
    integer(c_int), allocatable :: shp(:)
    integer(c_int), allocatable, target :: rk(:)
    type(c_strings), target :: cs, cb, cdb, cbo, cdo, cpl
    type(c_config) :: cfg
    integer :: n
    call pad(shape, names, n, shp, cs)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    if (listed) then
      allocate(rk(max(size(ranks), 1)))
      rk = 0
      rk(1:size(ranks)) = int(ranks, c_int)
      cfg%nranks = int(size(ranks), c_int)
      cfg%ranks = c_loc(rk)
    end if
    if (present(host_aware)) cfg%host_aware = merge(1_c_int, 0_c_int, host_aware)
    if (present(comm_errors)) cfg%comm_errors = int(comm_errors, c_int)
    if (present(fault_tolerance)) cfg%fault_tolerance = merge(1_c_int, 0_c_int, fault_tolerance)
    if (present(deadline)) cfg%deadline = real(deadline, c_double)
    if (present(spares)) cfg%spares = int(spares, c_int)
    if (present(placement)) call to_c_name(placement, cpl, cfg%placement)
    call finish(c_create_ex_f(int(parent, c_int), int(n, c_int), shp, cs%ptr, cfg, mesh%ptr), proc, ierr)
  end subroutine create_ex_common

  !> devmesh_create_ex(comm, shape, names, mesh [, ierr] [, backend=] [, dim_backends=]
  !> [, backend_options=] [, dim_options=] [, ranks=] [, host_aware=] [, comm_errors=]
  !> [, fault_tolerance=] [, deadline=] [, spares=] [, placement=]):
  !> devmesh_create with the options of devmesh_config_t (devmesh.h); absent
  !> or blank: the default. ranks: as devmesh_create_from_ranks (gfortran
  !> passes a zero-size constant as absent: an empty list is refused only
  !> there); host_aware, fault_tolerance: logical; comm_errors:
  !> DEVMESH_COMM_ERRORS_*; deadline: seconds (double precision); spares:
  !> the parent's last ranks kept as hot spares (they get the null handle
  !> and call devmesh_standby); placement: dims kept within a level,
  !> 'dim=level[,dim=level...]' (ranks the shape leaves over get the null
  !> handle).
  subroutine create_ex_int(comm, shape, names, mesh, ierr, backend, dim_backends, backend_options, dim_options, &
                           ranks, host_aware, comm_errors, fault_tolerance, deadline, spares, placement)
    integer, intent(in) :: comm, shape(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options, placement
    integer, intent(in), optional :: ranks(:), comm_errors, spares
    logical, intent(in), optional :: host_aware, fault_tolerance
    double precision, intent(in), optional :: deadline
    if (present(ranks)) then
      call create_ex_common('devmesh_create_ex', comm, shape, names, mesh, ierr, .true., ranks, backend, &
                            dim_backends, backend_options, dim_options, host_aware, comm_errors, fault_tolerance, &
                            deadline, spares, placement)
    else
      call create_ex_common('devmesh_create_ex', comm, shape, names, mesh, ierr, .false., [integer ::], &
                            backend, dim_backends, backend_options, dim_options, host_aware, comm_errors, &
                            fault_tolerance, deadline, spares, placement)
    end if
  end subroutine create_ex_int

  !> devmesh_create_from_comms(parent, comms, names, mesh [, ierr] [, backend=]
  !> [, dim_backends=] [, backend_options=] [, dim_options=]): comms(i) is the
  !> caller's communicator of dim names(i) (non-members: MPI_COMM_NULL each).
  ! comms and names are padded as in pad (count mismatches fail in C).
  subroutine create_from_comms_int(parent, comms, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options)
    integer, intent(in) :: parent, comms(:)
    character(len=*), intent(in) :: names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    integer(c_int), allocatable :: cc(:)
    type(c_strings), target :: cs, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    integer :: n
    n = max(size(comms), size(names))
    allocate(cc(max(n, 1)))
    cc = int(MPI_COMM_NULL%MPI_VAL, c_int)
    cc(1:size(comms)) = int(comms, c_int)
    call to_c_strings(names, n, cs)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    call finish(c_create_from_comms_f(int(parent, c_int), int(n, c_int), cc, cs%ptr, cfg, mesh%ptr), &
                'devmesh_create_from_comms', ierr)
  end subroutine create_from_comms_int

  !> devmesh_create_from_group(group, tag, shape, names, mesh [, ierr] [, backend=]
  !> [, dim_backends=] [, backend_options=] [, dim_options=] [, host_aware=]):
  !> MPI Sessions: a mesh over the members of group, who pass the same tag.
  subroutine create_from_group_int(group, tag, shape, names, mesh, ierr, backend, dim_backends, backend_options, &
                                   dim_options, host_aware)
    integer, intent(in) :: group, shape(:)
    character(len=*), intent(in) :: tag, names(:)
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: backend, dim_backends, backend_options, dim_options
    logical, intent(in), optional :: host_aware
    integer(c_int), allocatable :: shp(:)
    type(c_strings), target :: cs, ct, cb, cdb, cbo, cdo
    type(c_config) :: cfg
    integer :: n
    call pad(shape, names, n, shp, cs)
    call to_c_strings([tag], 1, ct)
    call new_config(cfg, cb, cdb, cbo, cdo, backend, dim_backends, backend_options, dim_options)
    if (present(host_aware)) cfg%host_aware = merge(1_c_int, 0_c_int, host_aware)
    call finish(c_create_from_group_f(int(group, c_int), ct%ptr(1), int(n, c_int), shp, cs%ptr, cfg, mesh%ptr), &
                'devmesh_create_from_group', ierr)
  end subroutine create_from_group_int

  !> devmesh_create_hosts(comm, mesh [, ierr] [, host_dim=] [, local_dim=]): the
  !> 2-D (host, local) mesh of comm (names absent or blank: 'host', 'local').
  subroutine create_hosts_int(comm, mesh, ierr, host_dim, local_dim)
    integer, intent(in) :: comm
    type(devmesh_t), intent(inout) :: mesh
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: host_dim, local_dim
    type(c_strings), target :: ch, cl
    type(c_ptr) :: hp, lp
    hp = c_null_ptr
    lp = c_null_ptr
    if (present(host_dim)) call to_c_name(host_dim, ch, hp)
    if (present(local_dim)) call to_c_name(local_dim, cl, lp)
    call finish(c_create_hosts_f(int(comm, c_int), hp, lp, mesh%ptr), 'devmesh_create_hosts', ierr)
  end subroutine create_hosts_int

  !> True for a handle that holds a mesh (false for the null handle).
  logical function devmesh_associated(mesh)
    type(devmesh_t), intent(in) :: mesh
    devmesh_associated = c_associated(mesh%ptr)
  end function devmesh_associated
