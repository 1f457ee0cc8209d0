! MPI Sessions through the Fortran module with mpi_f08, without MPI_Init:
! devmesh_create_from_group over the session's mpi://WORLD group, and
! devmesh_create_from_comms of splits of a communicator made from it, against
! a row-major reference and MPI's own results; errors the same on every
! rank with the output untouched. Exits non-zero when a check fails.
program test_sessions_f08
  use mpi_f08
  use devmesh
  implicit none
  type(MPI_Session) :: session
  type(MPI_Group) :: group
  type(MPI_Comm) :: own, comm, dp, tp
  type(devmesh_t) :: mesh, adopted, untouched
  integer :: n, me, b, a, ierr, k, total, failures, lo, hi, cmp
  integer :: coord(2)
  integer, allocatable :: ranks(:)
  logical :: flag

  failures = 0
  call MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, session)
  call MPI_Group_from_session_pset(session, 'mpi://WORLD', group)
  call MPI_Initialized(flag)
  call check(.not. flag, 'the Sessions model alone')
  call MPI_Group_size(group, n)
  call MPI_Group_rank(group, me)
  call MPI_Comm_create_from_group(group, 'f08-sessions-own', MPI_INFO_NULL, MPI_ERRORS_RETURN, own)
  b = merge(2, 1, mod(n, 2) == 0)
  a = n / b

  ! A (a, b) mesh from the group.
  call devmesh_create_from_group(group, 'f08-sessions', [a, b], [character(len=4) :: 'dp', 'tp'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create_from_group')
  allocate(ranks(a))
  call devmesh_group_ranks(mesh, 'dp', ranks, ierr)
  call check(all(ranks == [(k * b + mod(me, b), k = 0, a - 1)]), 'dp group')
  call devmesh_comm(mesh, 'dp', comm, ierr)
  call MPI_Allreduce(me, total, 1, MPI_INTEGER, MPI_SUM, comm)
  call check(total == sum([(k * b + mod(me, b), k = 0, a - 1)]), 'allreduce over dp')
  call devmesh_destroy(mesh)

  ! The program's own splits, adopted.
  call MPI_Comm_split(own, mod(me, b), me, dp)
  call MPI_Comm_split(own, me / b, me, tp)
  call devmesh_create_from_comms(own, [dp, tp], [character(len=4) :: 'dp', 'tp'], adopted, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create_from_comms')
  call devmesh_coordinate(adopted, coord, ierr)
  call check(all(coord == [me / b, mod(me, b)]), 'coordinate')
  call devmesh_comm(adopted, 'dp', comm, ierr)
  call MPI_Comm_compare(comm, dp, cmp)
  call check(cmp == MPI_IDENT, 'comm(dp) is the program''s dp')
  call devmesh_destroy(adopted)

  ! Errors: a null communicator on rank 0 only; a shape that does not fit.
  untouched%ptr = mesh%ptr
  if (me == 0) then
    call devmesh_create_from_comms(own, [dp, MPI_COMM_NULL], [character(len=4) :: 'dp', 'tp'], mesh, ierr)
  else
    call devmesh_create_from_comms(own, [dp, tp], [character(len=4) :: 'dp', 'tp'], mesh, ierr)
  end if
  call same(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'null comm on rank 0')
  call devmesh_create_from_group(group, 'f08-bad', [n + 1], [character(len=4) :: 'x'], mesh, ierr)
  call same(ierr, DEVMESH_ERR_SHAPE_MISMATCH, 'bad shape')
  call check(.not. devmesh_associated(mesh), 'mesh untouched')

  call MPI_Comm_free(dp)
  call MPI_Comm_free(tp)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_MAX, own)
  call MPI_Comm_free(own)
  call MPI_Group_free(group)
  call MPI_Session_finalize(session)
  if (total /= 0) error stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      write (*, '(a, i0, 2a)') 'FAIL rank ', me, ': ', what
    end if
  end subroutine check

  subroutine same(got, want, what)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: what
    call check(got == want, what)
    call MPI_Allreduce(got, lo, 1, MPI_INTEGER, MPI_MIN, own)
    call MPI_Allreduce(got, hi, 1, MPI_INTEGER, MPI_MAX, own)
    call check(lo == hi, what // ': the same on every rank')
  end subroutine same
end program test_sessions_f08
