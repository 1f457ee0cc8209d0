// Lifetimes and threads: views destroyed in every order free the root's
// communicators exactly once; concurrent queries, view operations and
// communicator look-ups from several threads are safe.
#define BOOST_TEST_MODULE lifetime
#include "mpi_test.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh;

BOOST_AUTO_TEST_CASE(views_destroyed_in_every_order) {
  std::vector<int> order = {0, 1, 2, 3};
  int orders = 0;
  do {
    const long before = comm_counter::live();
    {
      std::vector<std::unique_ptr<Mesh>> handles;
      handles.push_back(std::make_unique<Mesh>(Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"})));
      handles.push_back(std::make_unique<Mesh>((*handles[0])["b"]));
      handles.push_back(std::make_unique<Mesh>(handles[0]->flatten()));
      handles.push_back(std::make_unique<Mesh>(handles[1]->root()));
      handles[1]->comm();
      handles[2]->comm();
      handles[3]->comm("a");
      const long made = comm_counter::live() - before;
      BOOST_TEST(made == handles[0]->comm_count());
      for (int i : order) {
        handles[static_cast<std::size_t>(i)].reset();
        // Until the last handle goes, the communicators stay.
        const bool last = std::none_of(handles.begin(), handles.end(), [](const auto& h) { return h != nullptr; });
        BOOST_TEST(comm_counter::live() - before == (last ? 0 : made));
      }
    }
    BOOST_TEST(comm_counter::live() == before);
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  BOOST_TEST(orders == 24);
}

BOOST_AUTO_TEST_CASE(copies_and_moves_share_the_root) {
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"x"});
  Mesh copy = m;
  Mesh moved = std::move(copy);
  BOOST_TEST(moved.same_root(m));
  BOOST_TEST(moved.comm() == m.comm());
  BOOST_TEST(!copy.is_member());  // a moved-from handle is the null mesh
  BOOST_CHECK_THROW(copy.size(), Error);
}

BOOST_AUTO_TEST_CASE(threads_query_and_look_up_concurrently) {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) return;
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"a", "b", "c"});
  m.create_comms();
  const Mesh flat = m.flatten();
  flat.create_comms();
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const std::string d = std::string(1, static_cast<char>('a' + (i + t) % 3));
        if (m.comm(d) == MPI_COMM_NULL) ++bad;
        if (m[d].local_rank(d) != m.local_rank(d)) ++bad;
        if (m.flatten().comm() != flat.comm()) ++bad;  // registered name, same layout
        if (m.group(d).size() != static_cast<std::size_t>(m.size(d))) ++bad;
        if (m.communicator(d).size() != m.size(d)) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  BOOST_TEST(bad.load() == 0);
  // The threads' collectives on distinct communicators also work.
  std::vector<std::thread> coll;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 3; ++t)
    coll.emplace_back([&, t] {
      const std::string d(1, static_cast<char>('a' + t));
      int one = 1, sum = 0;
      m.communicator(d).allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
      if (sum != m.size(d)) ++wrong;
    });
  for (auto& th : coll) th.join();
  BOOST_TEST(wrong.load() == 0);
}
