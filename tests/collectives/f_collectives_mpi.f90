! The Fortran collectives from a `use mpi` program (f_collectives.inc).
program f_collectives_mpi
  use mpi
  use devmesh
  use, intrinsic :: iso_c_binding, only: c_associated
  use, intrinsic :: iso_fortran_env, only: int32, real32, real64, error_unit
  implicit none
  type(devmesh_t) :: mesh
  integer :: nranks, failures, total, ierr, e, shape(2)
  call MPI_Init(e)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, e)
  failures = 0
  shape = [1, nranks]
  if (mod(nranks, 2) == 0) shape = [2, nranks / 2]
  call devmesh_create(MPI_COMM_WORLD, shape, ['dp', 'tp'], mesh, ierr)
  call check(ierr == DEVMESH_SUCCESS, 'create (integer handle)', failures)
  call check_dim(mesh, 'tp', failures)
  call check_dim(mesh, 'dp', failures)
  call check_p2p(mesh, 'tp', failures)
  call check_p2p(mesh, 'dp', failures)
  call check_errors(mesh, failures)
  call devmesh_destroy(mesh)
  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, e)
  call MPI_Finalize(e)
  if (total /= 0) error stop 1
contains
  include 'f_collectives.inc'
end program f_collectives_mpi
