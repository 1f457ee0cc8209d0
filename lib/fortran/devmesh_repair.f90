! The module devmesh's procedures for repairing meshes (devmesh.h, "repair";
! docs/SEMANTICS.md "Repair"), included by devmesh.f90 after `contains`: a
! part of that module, not compiled on its own. devmesh_release_spares,
! devmesh_standby and devmesh_join are generated (gen_fortran_interface.py).

  ! ---- repair ----------------------------------------------------------------

  ! command (absent or blank: NULL, spares only) and argv (absent: none) as
  ! C strings: pc the command, av argv's pointers, NULL-terminated as
  ! MPI_Comm_spawn takes them. cc and ca must be TARGETs in the caller and
  ! live until its C call returns.
  subroutine spawn_args(command, argv, cc, pc, ca, av)
    character(len=*), intent(in), optional :: command, argv(:)
    type(c_strings), intent(inout), target :: cc, ca
    type(c_ptr), intent(out) :: pc
    type(c_ptr), allocatable, intent(out) :: av(:)
    integer :: n
    pc = c_null_ptr
    if (present(command)) call to_c_name(command, cc, pc)
    n = 0
    if (present(argv)) n = size(argv)
    allocate(av(n + 1))
    av = c_null_ptr
    if (n > 0) then
      call to_c_strings(argv, n, ca)
      av(1:n) = ca%ptr(1:n)
    end if
  end subroutine spawn_args

  !> devmesh_repair(mesh, repaired [, ierr] [, command=] [, argv=]): the whole
  !> mesh again after a failure (devmesh_repair of devmesh.h): every
  !> survivor keeps its root index, the failed ones are filled by the
  !> root's spares in standby, then, with command (not blank), by processes
  !> MPI_Comm_spawn starts from command with the arguments argv (each calls
  !> devmesh_join). Absent or blank command: spares only.
  !> Collective over the surviving members of mesh's root, its spares in
  !> standby and the processes the repair spawns.
  subroutine devmesh_repair(mesh, repaired, ierr, command, argv)
    type(devmesh_t), intent(in) :: mesh
    type(devmesh_t), intent(inout) :: repaired
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: command, argv(:)
    type(c_strings), target :: cc, ca
    type(c_ptr) :: pc
    type(c_ptr), allocatable :: av(:)
    call spawn_args(command, argv, cc, pc, ca, av)
    call finish(c_repair(mesh%ptr, pc, av, repaired%ptr), 'devmesh_repair', ierr)
  end subroutine devmesh_repair

  !> devmesh_repair_ex(mesh, info, repaired [, ierr] [, command=] [, argv=]):
  !> devmesh_repair with the MPI_Comm_spawn info of the spawn (where to start
  !> the new processes; MPI_INFO_NULL: none).
  !> Collective over the surviving members of mesh's root, its spares in
  !> standby and the processes the repair spawns.
  subroutine repair_ex_int(mesh, info, repaired, ierr, command, argv)
    type(devmesh_t), intent(in) :: mesh
    integer, intent(in) :: info
    type(devmesh_t), intent(inout) :: repaired
    integer, intent(out), optional :: ierr
    character(len=*), intent(in), optional :: command, argv(:)
    type(c_strings), target :: cc, ca
    type(c_ptr) :: pc
    type(c_ptr), allocatable :: av(:)
    call spawn_args(command, argv, cc, pc, ca, av)
    call finish(c_repair_ex_f(mesh%ptr, pc, av, int(info, c_int), repaired%ptr), 'devmesh_repair_ex', ierr)
  end subroutine repair_ex_int
