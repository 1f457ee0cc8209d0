! devmesh_create_from_comms and devmesh_create_from_group with `use mpi`
! (integer handles) after MPI_Init: the program's splits adopted, checked
! against a row-major reference and MPI (MPI_Comm_compare, MPI_Allreduce);
! errors the same on every rank, output untouched; a mesh from the world's
! group where the build has MPI_Comm_create_from_group (the first argument,
! 1 or 0, from meson: not MPI_VERSION, which Open MPI 5 gives as 3),
! DEVMESH_ERR_UNSUPPORTED without it.
program test_adopt_mpi
  use mpi
  use devmesh
  implicit none
  type(devmesh_t) :: mesh
  integer :: n, me, b, a, ierr, k, total, failures, lo, hi, cmp, comm, dp, tp, diag, group
  integer :: coord(2)
  integer, allocatable :: ranks(:)
  character(len=8) :: arg
  logical :: from_group

  failures = 0
  call get_command_argument(1, arg)
  from_group = trim(arg) == '1'
  call MPI_Init(ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  b = merge(2, n, mod(n, 2) == 0)
  a = n / b
  call MPI_Comm_split(MPI_COMM_WORLD, mod(me, b), me, dp, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, me / b, me, tp, ierr)

  ! Transposed: tp first, so root index x = (me mod b) * a + me / b.
  call devmesh_create_from_comms(MPI_COMM_WORLD, [tp, dp], [character(len=4) :: 'tp', 'dp'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create_from_comms')
  call devmesh_coordinate(mesh, coord, ierr)
  call check(all(coord == [mod(me, b), me / b]), 'coordinate')
  allocate(ranks(a))
  call devmesh_group_ranks(mesh, 'dp', ranks, ierr)
  call check(all(ranks == [(k * b + mod(me, b), k = 0, a - 1)]), 'dp group')
  call devmesh_comm(mesh, 'dp', comm, ierr)
  call MPI_Comm_compare(comm, dp, cmp, ierr)
  call check(a == 1 .or. cmp == MPI_IDENT, 'comm(dp) is the program''s dp')
  call MPI_Allreduce(me, total, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
  call check(total == sum(ranks), 'allreduce over dp')
  call devmesh_destroy(mesh)
  call MPI_Allreduce(me, total, 1, MPI_INTEGER, MPI_SUM, tp, ierr)
  call check(ierr == MPI_SUCCESS, 'tp usable after destroy')

  ! Errors, every rank alike, mesh untouched.
  call devmesh_create_from_comms(MPI_COMM_WORLD, [dp], [character(len=4) :: 'dp', 'tp'], mesh, ierr)
  call same(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'fewer comms than names')
  if (a > 1 .and. b > 1) then
    call MPI_Comm_split(MPI_COMM_WORLD, mod(mod(me, b) + me / b, b), me, diag, ierr)
    call devmesh_create_from_comms(MPI_COMM_WORLD, [diag, tp], [character(len=4) :: 'dp', 'tp'], mesh, ierr)
    call same(ierr, DEVMESH_ERR_INVALID_ARGUMENT, 'comms that do not form a mesh')
    call MPI_Comm_free(diag, ierr)
  end if
  call check(.not. devmesh_associated(mesh), 'mesh untouched')

  call MPI_Comm_group(MPI_COMM_WORLD, group, ierr)
  call devmesh_create_from_group(group, 'f-mpi', [n], [character(len=4) :: 'x'], mesh, ierr)
  if (from_group) then
    call check(ierr == DEVMESH_SUCCESS, 'create_from_group')
    call devmesh_destroy(mesh)
  else
    call same(ierr, DEVMESH_ERR_UNSUPPORTED, 'create_from_group without MPI_Comm_create_from_group')
    call check(.not. devmesh_associated(mesh), 'mesh untouched')
  end if
  call MPI_Group_free(group, ierr)

  call MPI_Comm_free(dp, ierr)
  call MPI_Comm_free(tp, ierr)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
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
    integer :: e
    call check(got == want, what)
    call MPI_Allreduce(got, lo, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, e)
    call MPI_Allreduce(got, hi, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, e)
    call check(lo == hi, what // ': the same on every rank')
  end subroutine same
end program test_adopt_mpi
