! The variable-size collectives, ialltoallv and batch through mpi_f08 (see
! vcoll.inc).
program test_vcoll_f08
  use mpi_f08
  use devmesh
  use, intrinsic :: iso_c_binding, only: c_associated
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  include 'vcoll.inc'
end program test_vcoll_f08
