! 3-D mesh (replicate, shard, tp) = (2, 2, 2) on 8 ranks, from Fortran
! (mpi_f08): HSDP with tensor parallelism; the (replicate, shard) sub-mesh
! flattened is the data-parallel group a gradient all-reduce runs over.
!
!   mpiexec -n 8 ./example_f08_3d
program example_3d_f08
  use mpi_f08
  use devmesh
  implicit none
  type(devmesh_t) :: mesh, dp, dp_flat
  type(MPI_Comm) :: dp_comm
  integer :: failures, rank, coord(3), group(4), bad, total
  double precision :: grad, gsum

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call devmesh_create(MPI_COMM_WORLD, [2, 2, 2], [character(len=9) :: 'replicate', 'shard', 'tp'], mesh)
  if (rank == 0) write(*, '(a)') 'mesh (replicate, shard, tp) = (2, 2, 2):'
  failures = check_dim(mesh, 'replicate') + check_dim(mesh, 'shard') + check_dim(mesh, 'tp')

  call devmesh_slice(mesh, [character(len=9) :: 'replicate', 'shard'], dp)
  call devmesh_flatten(dp, out=dp_flat)           ! default name: replicate_shard
  if (rank == 0) write(*, '(a)') 'flattened data parallel:'
  failures = failures + check_dim(dp_flat, 'replicate_shard')

  ! A gradient all-reduce over the data-parallel communicator.
  call devmesh_comm(dp_flat, '', dp_comm)         ! blank: the only dim
  call devmesh_group_ranks(dp_flat, '', group)
  grad = rank
  call MPI_Allreduce(grad, gsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, dp_comm)
  bad = merge(1, 0, nint(gsum) /= sum(group))  ! a sum of small integers, exact
  call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  failures = failures + total

  call devmesh_coordinate(mesh, coord)
  if (rank == 0) then
    write(*, '(a, 2(i0, ", "), i0, a)') 'rank 0 sits at (replicate, shard, tp) = (', coord, ')'
    if (failures == 0) then
      write(*, '(a)') 'all groups verified'
    else
      write(*, '(a)') 'VERIFICATION FAILED'
    end if
  end if
  call devmesh_destroy(mesh)
  call devmesh_destroy(dp)
  call devmesh_destroy(dp_flat)
  call MPI_Finalize()
  if (failures /= 0) error stop 1

contains

  integer function check_dim(m, dim) result(total)
    type(devmesh_t), intent(in) :: m
    character(len=*), intent(in) :: dim
    type(MPI_Comm) :: comm
    integer :: n, bad
    integer, allocatable :: expect(:), got(:)
    call devmesh_size(m, dim, n)
    allocate(expect(n), got(n))
    call devmesh_group_ranks(m, dim, expect)
    call devmesh_comm(m, dim, comm)
    call MPI_Allgather(rank, 1, MPI_INTEGER, got, 1, MPI_INTEGER, comm)
    bad = merge(1, 0, any(got /= expect))
    call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
    if (rank == 0) write(*, '(2x, a, a, i0, a, *(i0, :, ","))') dim, ' size ', n, ', rank 0''s group: ', expect
  end function check_dim
end program example_3d_f08
