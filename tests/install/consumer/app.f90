! A Fortran program built against an installed devmesh (pkg-config
! devmesh-fortran or CMake devmesh::fortran).
program app
  use mpi_f08
  use devmesh
  implicit none
  type(devmesh_t) :: mesh
  type(MPI_Comm) :: tp
  integer :: rank, n, ierr, total
  integer, allocatable :: group(:), got(:)
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call devmesh_create(MPI_COMM_WORLD, [2, 0], ['dp', 'tp'], mesh, ierr)
  if (ierr /= DEVMESH_SUCCESS) error stop 'devmesh_create failed'
  call devmesh_size(mesh, 'tp', n)
  allocate(group(n), got(n))
  call devmesh_group_ranks(mesh, 'tp', group)
  call devmesh_comm(mesh, 'tp', tp)
  call MPI_Allgather(rank, 1, MPI_INTEGER, got, 1, MPI_INTEGER, tp)
  call MPI_Allreduce(merge(1, 0, any(got /= group)), total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) write(*, '(a, i0, a, a)') 'fortran consumer: tp group of rank 0 has ', n, ' ranks: ', &
                                          trim(merge('ok   ', 'WRONG', total == 0))
  call devmesh_destroy(mesh)
  call MPI_Finalize()
  if (total /= 0) error stop 1
end program app
