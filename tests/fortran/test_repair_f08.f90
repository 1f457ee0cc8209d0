! The repair procedures of the module devmesh where they cannot run, on every
! MPI without the launcher's fault tolerance: create_ex's spares= refused
! (negative, without fault_tolerance: INVALID_ARGUMENT, before ULFM is asked
! for), devmesh_repair, devmesh_repair_ex (mpi_f08 and integer info) and
! devmesh_release_spares of a mesh without fault_tolerance, devmesh_standby
! (mpi_f08 and integer parent) and devmesh_join without ULFM running:
! UNSUPPORTED, naming the procedure, the output handle left null.
! Exits non-zero (error stop) when a check fails on any rank.
program test_repair_f08
  use mpi_f08
  use devmesh
  implicit none
  type(devmesh_t) :: mesh, out
  integer :: nranks, me, failures, total, ierr

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  failures = 0

  call devmesh_create_ex(MPI_COMM_WORLD, [0], ['x'], out, ierr, fault_tolerance=.true., spares=-1)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT, 'spares=-1 refused')
  call check(index(devmesh_last_error(), 'devmesh_create_ex: spares is -1') == 1, 'spares=-1: message')
  call devmesh_create_ex(MPI_COMM_WORLD, [0], ['x'], out, ierr, spares=1)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT, 'spares without fault_tolerance refused')
  call check(index(devmesh_last_error(), 'spares needs fault_tolerance') > 0, 'spares without fault_tolerance: message')
  call devmesh_create_ex(MPI_COMM_WORLD, [0], ['x'], out, ierr, fault_tolerance=.true., spares=nranks)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT, 'spares = the whole parent refused')
  call check(.not. devmesh_associated(out), 'refused creations: no mesh')

  call devmesh_create_ex(MPI_COMM_WORLD, [0], ['x'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create')
  call devmesh_repair(mesh, out, ierr)
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'repair without fault_tolerance')
  call check(index(devmesh_last_error(), 'devmesh_repair: repair needs a mesh made with fault_tolerance') == 1, &
             'repair: message')
  call devmesh_repair(mesh, out, ierr, command='/bin/true', argv=['a ', 'bc'])
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'repair with a spawn, without fault_tolerance')
  call devmesh_repair_ex(mesh, MPI_INFO_NULL, out, ierr, command='/bin/true')
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'repair_ex (mpi_f08 info)')
  call check(index(devmesh_last_error(), 'devmesh_repair_ex: ') == 1, 'repair_ex: message')
  call devmesh_repair_ex(mesh, MPI_INFO_NULL%MPI_VAL, out, ierr)
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'repair_ex (integer info)')
  call devmesh_release_spares(mesh, ierr)
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'release_spares without fault_tolerance')
  call devmesh_standby(MPI_COMM_WORLD, out, ierr)
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'standby without ULFM running')
  call check(index(devmesh_last_error(), 'devmesh_standby: standby: ') == 1, 'standby: message')
  call devmesh_standby(MPI_COMM_WORLD%MPI_VAL, out, ierr)
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'standby (integer parent)')
  call devmesh_join(out, ierr)
  call check(ierr == DEVMESH_ERR_UNSUPPORTED, 'join without ULFM running')
  call check(.not. devmesh_associated(out), 'refused calls: no mesh')

  call devmesh_destroy(mesh, ierr)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (total > 0) error stop 1
  if (me == 0) print '(a)', 'repair procedures refused where they cannot run: ok'

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(a, i0, 2a)', 'FAIL rank ', me, ': ', what
      if (len_trim(devmesh_last_error()) > 0) print '(2a)', '  last error: ', devmesh_last_error()
    end if
  end subroutine check
end program test_repair_f08
