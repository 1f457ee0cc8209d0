! 2-D mesh (replicate, shard) = (2, 4) on 8 ranks, from Fortran (mpi_f08).
! Each dim's communicator is verified with an allgather of parent ranks.
!
!   mpiexec -n 8 ./example_f08_2d
program example_2d_f08
  use mpi_f08
  use devmesh
  implicit none
  type(devmesh_t) :: mesh
  integer :: failures, rank, coord(2), ierr

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call devmesh_create(MPI_COMM_WORLD, [2, 4], [character(len=9) :: 'replicate', 'shard'], mesh, ierr)
  if (ierr /= DEVMESH_SUCCESS) then
    write(*, '(a)') 'devmesh_create failed: ' // devmesh_last_error()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if
  if (rank == 0) write(*, '(a)') 'mesh (replicate, shard) = (2, 4):'
  failures = check_dim(mesh, 'replicate') + check_dim(mesh, 'shard')
  call devmesh_coordinate(mesh, coord)   ! no ierr: a failure stops the program
  if (rank == 0) then
    write(*, '(a, i0, a, i0, a)') 'rank 0 sits at (replicate, shard) = (', coord(1), ', ', coord(2), ')'
    if (failures == 0) then
      write(*, '(a)') 'all groups verified'
    else
      write(*, '(a)') 'VERIFICATION FAILED'
    end if
  end if
  call devmesh_destroy(mesh)
  call MPI_Finalize()
  if (failures /= 0) error stop 1

contains

  ! Allgathers the parent ranks over dim's communicator and compares them
  ! with devmesh's group; returns the number of ranks that disagree.
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
end program example_2d_f08
