! Cartesian views, neighbours and all_groups_comm through mpi_f08 (see cart.inc).
#define COMM_T type(MPI_Comm)
program test_cart_f08
  use mpi_f08
  use devmesh
#include "cart.inc"

  logical function same(x, y)
    type(MPI_Comm), intent(in) :: x, y
    same = x == y
  end function same
end program test_cart_f08
