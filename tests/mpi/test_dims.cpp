// devmesh::dims_create against the real MPI_Dims_create, for every world up
// to 1500, 1..4 dims, free and partly fixed.
#define BOOST_TEST_MODULE dims
#include "mpi_test.hpp"

#include <mpi.h>

#include "devmesh/view.hpp"

using namespace devmesh;

BOOST_AUTO_TEST_CASE(matches_mpi_dims_create) {
  int rank = 0, cases = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0) return;  // a local function: one rank is enough
  for (int k = 1; k <= 4; ++k)
    for (int n = 1; n <= 1500; ++n)
      for (int fixed : {0, 2, 3}) {  // fixed: the second dim (if any) is given
        std::vector<int> d(static_cast<std::size_t>(k), 0);
        if (k > 1 && fixed) d[1] = fixed;
        if (fixed && (k == 1 || n % fixed != 0)) continue;
        std::vector<int> mpi = d;
        BOOST_REQUIRE(MPI_Dims_create(n, k, mpi.data()) == MPI_SUCCESS);
        std::vector<index_t> ours = dims_create(n, std::vector<index_t>(d.begin(), d.end()));
        BOOST_TEST(std::vector<index_t>(mpi.begin(), mpi.end()) == ours, "n=" << n << " k=" << k << " fixed=" << fixed);
        ++cases;
      }
  BOOST_TEST(cases > 9000);
}
