! The variable-size collectives, ialltoallv and batch through `use mpi`
! (see vcoll.inc).
program test_vcoll_mpi
  use mpi
  use devmesh
  use, intrinsic :: iso_c_binding, only: c_associated
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  include 'vcoll.inc'
end program test_vcoll_mpi
