! 3-D mesh (replicate, shard, tp) = (2, 2, 2) on 8 ranks, from Fortran with
! the older `use mpi` bindings: communicators are integer handles, and the
! same devmesh calls accept them.
!
!   mpiexec -n 8 ./example_mpi_3d
program example_3d_mpi
  use mpi
  use devmesh
  implicit none
  type(devmesh_t) :: mesh
  integer :: failures, rank, ierr, coord(3)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call devmesh_create(MPI_COMM_WORLD, [2, 2, 2], [character(len=9) :: 'replicate', 'shard', 'tp'], mesh, ierr)
  if (ierr /= DEVMESH_SUCCESS) then
    write(*, '(a)') 'devmesh_create failed: ' // devmesh_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  if (rank == 0) write(*, '(a)') 'mesh (replicate, shard, tp) = (2, 2, 2), use mpi:'
  failures = check_dim(mesh, 'replicate') + check_dim(mesh, 'shard') + check_dim(mesh, 'tp')
  call devmesh_coordinate(mesh, coord, ierr)
  if (rank == 0) then
    write(*, '(a, 2(i0, ", "), i0, a)') 'rank 0 sits at (replicate, shard, tp) = (', coord, ')'
    if (failures == 0) then
      write(*, '(a)') 'all groups verified'
    else
      write(*, '(a)') 'VERIFICATION FAILED'
    end if
  end if
  call devmesh_destroy(mesh, ierr)
  call MPI_Finalize(ierr)
  if (failures /= 0) error stop 1

contains

  integer function check_dim(m, dim) result(total)
    type(devmesh_t), intent(in) :: m
    character(len=*), intent(in) :: dim
    integer :: comm, n, bad, e
    integer, allocatable :: expect(:), got(:)
    call devmesh_size(m, dim, n, e)
    allocate(expect(n), got(n))
    call devmesh_group_ranks(m, dim, expect, e)
    call devmesh_comm(m, dim, comm, e)
    call MPI_Allgather(rank, 1, MPI_INTEGER, got, 1, MPI_INTEGER, comm, e)
    bad = merge(1, 0, any(got /= expect))
    call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, e)
    if (rank == 0) write(*, '(2x, a, a, i0, a, *(i0, :, ","))') dim, ' size ', n, ', rank 0''s group: ', expect
  end function check_dim
end program example_3d_mpi
