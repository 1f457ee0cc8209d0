! Element counts of the collectives and point to point calls, as default
! INTEGER and as INTEGER(int64) (what size(x, kind=8) gives), through the
! generic procedures of the module devmesh (1, 3, 8 ranks); the module's
! named MPI (DEVMESH_MPI_FAMILY) is the one the build used (argument 1).
! Exits non-zero (error stop) when a check fails on any rank.
program test_counts_f08
  use mpi_f08
  use devmesh
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  type(devmesh_t) :: mesh
  integer :: nranks, me, failures, total, ierr, i
  integer(int64) :: n8
  integer(int64) :: x(4), y(4), z(3)
  integer, allocatable :: gathered(:)
  integer :: mine(2)
  character(len=32) :: family

  call MPI_Init()
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_rank(MPI_COMM_WORLD, me)
  failures = 0
  call get_command_argument(1, family)
  call check(DEVMESH_MPI_FAMILY == trim(family), 'DEVMESH_MPI_FAMILY is ' // DEVMESH_MPI_FAMILY // &
             ', the build used ' // trim(family))
  call check(len_trim(DEVMESH_MPI_LIBRARY) > 0, 'DEVMESH_MPI_LIBRARY names the MPI')

  call devmesh_create(MPI_COMM_WORLD, [nranks], ['w'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create')

  ! size(x, kind=8): an INTEGER(int64) count.
  x = [(int(me + i, int64), i = 1, 4)]
  y = -1
  call devmesh_allreduce(mesh, 'w', x, y, size(x, kind=8), DEVMESH_INT64, DEVMESH_SUM, ierr=ierr)
  call check(ierr == DEVMESH_SUCCESS, 'allreduce with size(x, kind=8)')
  call check(all(y == [(int(nranks * i + nranks * (nranks - 1) / 2, int64), i = 1, 4)]), &
             'allreduce with size(x, kind=8): sums')
  ! The default kind, size(x), still works.
  y = -1
  call devmesh_allreduce(mesh, 'w', x, y, size(x), DEVMESH_INT64, DEVMESH_MAX, ierr=ierr)
  call check(ierr == DEVMESH_SUCCESS .and. all(y == [(int(nranks - 1 + i, int64), i = 1, 4)]), &
             'allreduce with size(x)')
  ! An int64 variable, and an int64 literal.
  n8 = 3_int64
  z = int(me, int64)
  call devmesh_broadcast(mesh, 'w', z, n8, DEVMESH_INT64, nranks - 1, ierr=ierr)
  call check(ierr == DEVMESH_SUCCESS .and. all(z == int(nranks - 1, int64)), 'broadcast with an int64 count')
  allocate(gathered(2 * nranks))
  mine = [me, -me]
  call devmesh_allgather(mesh, 'w', mine, gathered, 2_int64, DEVMESH_INT32, ierr=ierr)
  call check(ierr == DEVMESH_SUCCESS .and. all(gathered(1::2) == [(i, i = 0, nranks - 1)]), &
             'allgather with 2_int64')
  call devmesh_barrier(mesh, 'w', ierr=ierr)
  call check(ierr == DEVMESH_SUCCESS, 'barrier')
  ! sendrecv around the ring, both counts int64.
  z = int(me, int64)
  y = -1
  call devmesh_sendrecv(mesh, 'w', z, size(z, kind=8), DEVMESH_INT64, mod(me + 1, nranks), &
                        y, size(z, kind=8), DEVMESH_INT64, mod(me - 1 + nranks, nranks), ierr=ierr)
  call check(ierr == DEVMESH_SUCCESS .and. all(y(1:3) == int(mod(me - 1 + nranks, nranks), int64)) .and. &
             y(4) == -1, 'sendrecv with int64 counts')
  ! A negative int64 count is refused before any communication, as a default one is.
  y = -7
  call devmesh_allreduce(mesh, 'w', x, y, -1_int64, DEVMESH_INT64, DEVMESH_SUM, ierr=ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. all(y == -7), 'negative int64 count refused')
  call check(index(devmesh_last_error(), 'negative count -1') > 0, 'negative int64 count: message')
  call devmesh_allreduce(mesh, 'w', x, y, -2, DEVMESH_INT64, DEVMESH_SUM, ierr=ierr)
  call check(ierr == DEVMESH_ERR_INVALID_ARGUMENT .and. all(y == -7), 'negative default count refused')

  call devmesh_destroy(mesh, ierr)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (total > 0) error stop 1
  if (me == 0) print '(a)', 'counts as default integer and int64: ok'

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
end program test_counts_f08
