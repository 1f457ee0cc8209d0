// Mesh creation as a sequence of collective calls: every rank makes the
// same calls on the parent whatever its arguments (so disagreeing ranks get
// an error, never a hang), the duplicate made while the arguments are
// checked is kept or freed exactly once, and each creation path makes the
// communicators it documents.
#define BOOST_TEST_MODULE creation
#include "mpi_test.hpp"

#include <chrono>
#include <functional>
#include <numeric>
#include <string>
#include <thread>

#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh;

BOOST_AUTO_TEST_CASE(creation_makes_no_communicator) {
  const long live = comm_counter::live();
  {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {world_size()}, {"x"});
    BOOST_TEST(comm_counter::live() == live + comm_counter::at_creation);
    BOOST_TEST(m.comm_count() == comm_counter::at_creation);
    // The 1-D dim's communicator holds the parent's ranks in order.
    MPI_Comm c = m.comm("x");
    int result = MPI_UNEQUAL;
    MPI_Comm_compare(c, MPI_COMM_WORLD, &result);
    BOOST_TEST((result == MPI_CONGRUENT));
  }
  BOOST_TEST(comm_counter::live() == live);
}

// The tests' PMPI layer times the collective calls it wraps (what
// bench/creation/paired.cpp subtracts to get a creation's own work): the
// time of an MPI_Allreduce, a wait for a late rank included, is counted;
// work and local MPI calls outside the collectives are not.
BOOST_AUTO_TEST_CASE(the_pmpi_layer_times_collective_calls_only) {
  int one = 1, sum = 0;
  // A first call binds the wrapper's and MPI's symbols, outside the test.
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  const double before = comm_counter::seconds_in_collectives();
  const double spin = MPI_Wtime();
  int rank = -1;
  while (MPI_Wtime() - spin < 0.005) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  BOOST_TEST(comm_counter::seconds_in_collectives() == before);
  if (world_rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  sum = 0;
  const double t0 = MPI_Wtime();
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const double elapsed = MPI_Wtime() - t0;
  BOOST_TEST(sum == world_size());
  // All of the call but what the wrapper's own timer misses (a rank of an
  // oversubscribed run may be descheduled between the two clocks).
  const double inside = comm_counter::seconds_in_collectives() - before;
  BOOST_TEST(inside <= elapsed + 1e-6);
  BOOST_TEST(inside >= 0.5 * elapsed);
}

BOOST_AUTO_TEST_CASE(rank_list_keeps_no_duplicate) {
  const int n = world_size();
  const int w = n > 1 ? n - 1 : 1;
  std::vector<int> ranks(static_cast<std::size_t>(w));
  std::iota(ranks.begin(), ranks.end(), n - w);  // every rank but rank 0 (if n > 1)
  const long live = comm_counter::live();
  {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {w}, {"x"}, ranks);
    const bool member = world_rank() >= n - w;
    BOOST_TEST(m.is_member() == member);
    // Creation makes no communicator, on members or not.
    BOOST_TEST(comm_counter::live() == live + (member ? comm_counter::at_creation : 0));
    if (member) {
      int size = 0;
      MPI_Comm_size(m.comm("x"), &size);
      BOOST_TEST(size == w);
    }
  }
  BOOST_TEST(comm_counter::live() == live);
}

// Some ranks pass a rank list and others do not: different code paths
// inside, the same collective calls, an error everywhere.
BOOST_AUTO_TEST_CASE(rank_list_on_some_ranks_only) {
  const int n = world_size();
  if (n < 2) return;
  const long live = comm_counter::live();
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  const Status s = status_of([&] {
    if (world_rank() % 2 == 0)
      Mesh::create(MPI_COMM_WORLD, {n}, {"x"}, all);
    else
      Mesh::create(MPI_COMM_WORLD, {n}, {"x"});
  });
  BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::inconsistent));
  BOOST_TEST(comm_counter::live() == live);
}

// A rank with an invalid argument (validation fails locally) and ranks with
// valid ones: all get an error, none is left with a communicator.
BOOST_AUTO_TEST_CASE(local_failure_on_one_rank) {
  const int n = world_size();
  const long live = comm_counter::live();
  const Status s = status_of([&] {
    Mesh::create(MPI_COMM_WORLD, {world_rank() == n - 1 ? -1 : n}, {"x"});
  });
  if (n > 1)
    BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::inconsistent));
  else
    BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::invalid_argument));
  BOOST_TEST(comm_counter::live() == live);
}

// The rank whose argument is wrong learns its own reason with the
// cross-rank difference; the others get the difference alone.
BOOST_AUTO_TEST_CASE(inconsistent_creation_tells_the_failing_rank_why) {
  const int n = world_size();
  if (n < 2) return;
  const bool bad = world_rank() == n - 1;
  std::string message;
  try {
    Mesh::create(MPI_COMM_WORLD, {bad ? -2 : n}, {"x"});
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::inconsistent));
    message = e.what();
  }
  BOOST_TEST(message.find("different shapes on rank 0 and rank " + std::to_string(n - 1)) != std::string::npos,
             message);
  BOOST_TEST(message.find("dim names") == std::string::npos, message);  // only what differs is named
  const std::string own = "on this rank: size -2 of dim 'x' is negative";
  BOOST_TEST((message.find(own) != std::string::npos) == bad, message);
}

// Meshes created back to back and alive together stay independent (the
// overlapped duplicate and check of one creation never pair with another's).
BOOST_AUTO_TEST_CASE(many_meshes_back_to_back) {
  const int n = world_size();
  const long live = comm_counter::live();
  {
    std::vector<Mesh> meshes;
    for (int i = 0; i < 20; ++i) {
      meshes.push_back(Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"}));
      if (i % 3 == 0) meshes.back().create_comms();
    }
    for (Mesh& m : meshes) {
      int sum = 0, one = 1;
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, m.comm("b"));
      BOOST_TEST(sum == m.size("b"));
    }
  }
  BOOST_TEST(comm_counter::live() == live);
  (void)n;
}

// Communicators each path makes for a 3-D mesh (all dims of size > 1 where
// the world allows): one per dim, and for cart_sub the Cartesian
// communicator too where some dim is a sub-grid of it (size > 1; a size-1
// dim comes from its group on every path); no root communicator (the check
// runs over MPI_COMM_WORLD).
BOOST_AUTO_TEST_CASE(communicators_per_path) {
  const int n = world_size();
  for (CommPath path : {CommPath::automatic, CommPath::create_group, CommPath::split, CommPath::cart_sub}) {
    const long before = comm_counter::live();
    {
      Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"a", "b", "c"});
      m.create_comms(path);
      const std::vector<int> s = m.shape();
      int distinct = 0;
      for (int v : s) distinct += v > 1;
      distinct += distinct < 3 ? 1 : 0;  // all size-1 dims share the trivial layout
      const bool grid = path == CommPath::cart_sub && n > 1;
      const int expect = comm_counter::at_creation + distinct + (grid ? 1 : 0);
      BOOST_TEST(m.comm_count() == expect);
      BOOST_TEST(comm_counter::live() - before == expect);
    }
    BOOST_TEST(comm_counter::live() == before);
  }
  (void)n;
}
