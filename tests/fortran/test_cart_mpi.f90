! Cartesian views, neighbours and all_groups_comm through `use mpi`
! (integer handles; see cart.inc).
program test_cart_mpi
  use mpi
  use devmesh
  implicit none
  integer :: cart, c, direct
  include 'cart.inc'

  logical function same(x, y)
    integer, intent(in) :: x, y
    same = x == y
  end function same
end program test_cart_mpi
