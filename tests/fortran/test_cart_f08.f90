! Cartesian views, neighbours and all_groups_comm through mpi_f08 (see cart.inc).
program test_cart_f08
  use mpi_f08
  use devmesh
  implicit none
  type(MPI_Comm) :: cart, c, direct
  include 'cart.inc'

  logical function same(x, y)
    type(MPI_Comm), intent(in) :: x, y
    same = x == y
  end function same
end program test_cart_f08
