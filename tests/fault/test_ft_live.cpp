// A fault-tolerant mesh with every rank alive (run under the launcher's
// fault tolerance, ULFM builds only): it works as any mesh; a revoke on
// one rank reaches every member's operations, also one waiting in another
// thread; agree ANDs the flags; shrink without a failure keeps everyone;
// a revoked mesh is destroyed cleanly; SIGPIPE left at its default is
// ignored from a fault-tolerant creation on, a program's own choice kept;
// a backend failing to open on one survivor fails a shrink on all; a
// backend whose revoke stays local is revoked on every member by the
// mesh's watcher, and one with no way to revoke is refused; below
// MPI_THREAD_MULTIPLE, what needs a thread of the mesh's own is refused; a
// deadline cutting the making of an MPI dim's private duplicate leaves
// that dim's communicator unfreed.
#define BOOST_TEST_MODULE ft_live
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "comm_counter.hpp"
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"
#include "mpi_test.hpp"

using devmesh::DataType;
using devmesh::Mesh;
using devmesh::ReduceOp;
using devmesh::Status;

namespace {

Mesh hsdp() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  return Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
}

// Allreduces along dim until one fails; its status, or success when none
// failed within the bound (a revoke must reach every member well within it).
Status until_revoked(const Mesh& m, const char* dim) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int x = 1, y = 0;
  while (std::chrono::steady_clock::now() < end) {
    const Status s = status_of([&] { m.communicator(dim).allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum); });
    if (s != Status::success) return s;
  }
  return Status::success;
}

}  // namespace

namespace {

extern "C" void program_handler(int) {}

// SIGPIPE's disposition now; sets it to `to` first when given.
void (*sigpipe(void (*to)(int) = nullptr))(int) {
  struct sigaction a {};
  if (to) {
    a.sa_handler = to;
    sigemptyset(&a.sa_mask);
    sigaction(SIGPIPE, &a, nullptr);
  }
  sigaction(SIGPIPE, nullptr, &a);
  return a.sa_handler;
}

}  // namespace

// A survivor writing to a dead peer's socket must get EPIPE, not die of
// SIGPIPE: a fault-tolerant mesh ignores it where the program left the
// default, and keeps what a program chose; other meshes leave it alone.
BOOST_AUTO_TEST_CASE(sigpipe_is_ignored_unless_the_program_chose) {
  void (*const before)(int) = sigpipe();
  sigpipe(SIG_DFL);
  Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"});
  BOOST_TEST((sigpipe() == SIG_DFL));
  { const Mesh m = hsdp(); }
  BOOST_TEST((sigpipe() == SIG_IGN));
  sigpipe(program_handler);
  { const Mesh m = hsdp(); }
  BOOST_TEST((sigpipe() == program_handler));
  sigpipe(before);
}

BOOST_AUTO_TEST_CASE(works_as_any_mesh) {
  const Mesh m = hsdp();
  // Groups against MPI's own: each dim's communicator holds exactly the
  // world ranks the layout names (shard: pairs; replicate: stride 2).
  for (const char* dim : {"shard", "replicate"}) {
    const std::vector<int> want = m.group(dim), got = members(m.comm(dim));
    BOOST_TEST(got == want, boost::test_tools::per_element());
  }
  BOOST_TEST(m.comm_count() == 3);  // root, shard, replicate: all at creation
  BOOST_TEST(!m.is_revoked());
  BOOST_TEST(m.failed_ranks().empty());
  BOOST_TEST(m.agree(true));
  BOOST_TEST(m.agree(world_rank() != 3) == false);  // one rank's false is everyone's
  double x = world_rank(), y = 0;
  m.communicator("replicate").allreduce(&x, &y, 1, DataType::float64, ReduceOp::sum);
  double want = 0;
  for (int r : m.group("replicate")) want += r;
  BOOST_TEST(y == want);
}

// With a placement, the ranks it leaves over are the spares (their number
// must match): hosts round robin over 4 (host = rank % 4, two ranks each at
// 8 ranks), shape (3, 2) with shard within a host takes 3 hosts, and host 3
// (ranks 3 and 7) stands by. A repair without a death keeps every index and
// the spares; released, they leave standby with the null mesh.
BOOST_AUTO_TEST_CASE(placement_leftovers_are_the_spares) {
  const int w = world_size(), r = world_rank();
  if (w != 8) return;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  setenv("DEVMESH_HOST_ID", ("h" + std::to_string(r % 4)).c_str(), 1);
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  o.placement = {{"shard", "host"}};
  o.spares = 1;  // two are left over
  std::string message;
  BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {3, 2}, {"replicate", "shard"}, o); }, &message) ==
             Status::invalid_argument);
  BOOST_TEST(message.find("leaves 2 ranks over, and spares is 1") != std::string::npos, message);
  o.spares = 2;
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {3, 2}, {"replicate", "shard"}, o);
  unsetenv("DEVMESH_HOST_ID");
  const bool spare = r % 4 == 3;
  BOOST_TEST(m.is_member() == !spare);
  if (spare) {
    BOOST_TEST(!Mesh::standby(MPI_COMM_WORLD).is_member());  // released below
    return;
  }
  const std::vector<int> shard = members(m.comm("shard"));
  BOOST_TEST(shard == (std::vector<int>{r % 4, r % 4 + 4}), boost::test_tools::per_element());
  const int index = m.root_index();
  BOOST_TEST(m.agree(true));      // every member is done with m before one revokes it
  const Mesh again = m.repair();  // revokes m
  BOOST_TEST(again.root_index() == index);
  BOOST_TEST(members(again.comm("shard")) == shard, boost::test_tools::per_element());
  again.release_spares();
}

BOOST_AUTO_TEST_CASE(shrink_without_failure_keeps_everyone) {
  const Mesh m = hsdp();
  m.flatten("everyone");  // registered on the root
  m[{"shard", "replicate"}].flatten("transposed");
  const Mesh s = m.shrink("replicate");
  // Registered flattened names are made again on the new root, with the
  // same groups (here: the same mesh).
  BOOST_TEST(s["everyone"].group("everyone") == m["everyone"].group("everyone"), boost::test_tools::per_element());
  BOOST_TEST(s["transposed"].group("transposed") == m["transposed"].group("transposed"),
             boost::test_tools::per_element());
  BOOST_REQUIRE(s.is_member());
  BOOST_TEST(s.shape() == m.shape(), boost::test_tools::per_element());
  BOOST_TEST(s.names() == m.names(), boost::test_tools::per_element());
  BOOST_TEST(s.root_index() == m.root_index());
  BOOST_TEST(s.shrunk_index(m.root_index()) == m.root_index());
  BOOST_TEST(m.failed_ranks().empty());
  const Mesh all = m.shrink();
  BOOST_TEST(all.ndim() == 1);
  BOOST_TEST(all.names()[0] == "replicate_shard");
  BOOST_TEST(all.size() == world_size());
}

// With a deadline, MPI dims reduce small buffers by interruptible point to
// point (recursive doubling, mpi_backend.cpp) and larger ones by
// MPI_Iallreduce: both against a brute-force sum, on groups of 2, 3, 4, 6
// and 8 (a power of two and not), in place and not, for integers (exact)
// and doubles (the same bits on every member).
BOOST_AUTO_TEST_CASE(allreduce_with_a_deadline_sums_every_group_size) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  o.deadline = 30;
  const Mesh hsdp = Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
  const Mesh six = Mesh::create(MPI_COMM_WORLD, {3, 2}, {"a", "b"}, {7, 1, 5, 3, 0, 6}, o);
  struct Case {
    const Mesh* mesh;
    std::vector<std::string> dims;  // flattened when more than one
  };
  const std::vector<Case> cases = {{&hsdp, {"shard"}}, {&hsdp, {"replicate"}}, {&hsdp, {"replicate", "shard"}},
                                   {&six, {"a"}},      {&six, {"b"}},          {&six, {"a", "b"}}};
  for (const Case& k : cases) {
    if (!k.mesh->is_member()) continue;
    const Mesh v = k.dims.size() == 1 ? *k.mesh : k.mesh->slice(k.dims).flatten();
    const std::string dim = k.dims.size() == 1 ? k.dims[0] : v.names()[0];
    devmesh::Communicator& c = v.communicator(dim);
    const std::vector<int> group = v.group(dim);
    for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{5000}}) {  // 5000 doubles: MPI_Iallreduce
      BOOST_TEST_CONTEXT("group of " << group.size() << " along " << dim << ", " << n << " elements") {
        std::vector<std::int64_t> a(n), want(n, 0);
        std::vector<double> d(n), dsum(n);
        for (std::size_t i = 0; i < n; ++i) {
          a[i] = static_cast<std::int64_t>(world_rank() * 1000 + i);
          d[i] = 1.0 / (world_rank() + 1.0 + static_cast<double>(i));
          for (int r : group) want[i] += static_cast<std::int64_t>(r * 1000 + i);
        }
        c.allreduce(a.data(), a.data(), n, DataType::int64, ReduceOp::sum);  // in place
        BOOST_TEST(a == want, boost::test_tools::per_element());
        c.allreduce(d.data(), dsum.data(), n, DataType::float64, ReduceOp::sum);
        std::vector<double> first(dsum);  // the group's first member's bits
        c.broadcast(first.data(), n, DataType::float64, 0);
        BOOST_TEST(std::memcmp(first.data(), dsum.data(), n * sizeof(double)) == 0);
        double lo = 0;
        for (int r : group) lo += 1.0 / (r + 1.0);
        BOOST_TEST(std::abs(dsum[0] - lo) < 1e-12);
      }
    }
  }
}

// A backend that cannot open on one survivor fails the shrink on every
// survivor alike, with that rank's message: the shrink skips creation's
// argument cross-check, so the failure is carried to the agreement
// (MPIX_Comm_agree) that ends it (ulfm/creation_mode.cpp, check_same_by_construction).
BOOST_AUTO_TEST_CASE(a_backend_failing_on_one_survivor_fails_the_shrink_everywhere) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  o.dim_backends = {{"shard", "faulty3"}};
  o.dim_options = {{"shard", "fail=reopen"}, {"shard", "rank=3"}, {"shard", "message=no second open on rank 3"}};
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
  int x = 1, y = 0;
  m.communicator("shard").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(y == 2);
  std::string msg;
  const Status s = status_of([&] { m.shrink("replicate"); }, &msg);
  BOOST_TEST(s == Status::backend);
  BOOST_TEST(msg.find("no second open on rank 3") != std::string::npos, msg);
  int mine[2] = {static_cast<int>(s), -static_cast<int>(s)}, all[2] = {0, 0};
  MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  BOOST_TEST(all[0] == -all[1]);  // the same status on every rank
}

// A backend whose revoke stays on the calling rank (NCCL's) serves a
// fault-tolerant mesh: each member's watcher sees the root communicator
// revoked and revokes that member's backend communicators, also under an
// operation blocked on the rank that revoked (replicate groups holding
// rank 0 wait for it; the plugin's own timeout would end that only after
// 10 s, with backend).
BOOST_AUTO_TEST_CASE(a_backend_whose_revoke_stays_local_learns_of_a_peer_revoke) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  o.dim_backends = {{"replicate", "localrevoke3"}};
  o.dim_options = {{"replicate", "timeout=10"}};
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
  int x = 1, y = 0;
  m.communicator("replicate").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(y == world_size() / 2);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto t0 = std::chrono::steady_clock::now();
  if (world_rank() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    m.revoke();
  }
  BOOST_TEST(until_revoked(m, "replicate") == Status::revoked);
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST(waited < 5.0, "revoked after " << waited << " s");
}

// A backend that can neither spread a revoke nor take one beside a call
// cannot serve a fault-tolerant mesh: every rank fails creation alike.
BOOST_AUTO_TEST_CASE(a_backend_that_cannot_revoke_for_the_mesh_is_refused) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  o.dim_backends = {{"shard", "norevokecaps3"}};
  std::string msg;
  BOOST_TEST(status_of(
                 [&] {
                   Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
                 },
                 &msg) == Status::unsupported);
  BOOST_TEST(msg.find("'norevokecaps3' cannot revoke its communicators for the mesh") != std::string::npos, msg);
}

// A deadline passing in the first collective of an MPI dim, while the
// backend makes its private duplicate (MPI_Comm_idup on the dim's
// communicator, which the peer never joins): the request stays pending on
// the mesh's communicator, which must then never be freed (Open MPI 5.0.11
// crashed progressing an abandoned nonblocking collective on a freed
// communicator), and neither may any other revoked communicator of the
// mesh (a late revoke crashed a rank making a communicator that reused
// the freed one's id: tests/fault/create_fails.cpp). So destroying the
// revoked mesh frees nothing, while destroying a fault-tolerant mesh that
// was not revoked frees every communicator it made; the process then goes
// on making and using meshes. Local rank 0 of each shard pair reduces;
// local rank 1 waits in a receive instead (point to point: no duplicate).
BOOST_AUTO_TEST_CASE(a_revoked_mesh_leaves_its_communicators_unfreed) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) return;  // a deadline needs it
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  long freed = 0, made = 0;
  {
    const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
    made = m.comm_count();
    freed = comm_counter::freed();
  }
  BOOST_TEST(made == 3);  // the root's and the two dims'
  BOOST_TEST(comm_counter::freed() - freed == made);
  o.deadline = 1;
  {
    const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
    auto& shard = m.communicator("shard");
    int x = 1, y = 0;
    const Status s = shard.rank() == 0 ? status_of([&] { shard.allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum); })
                                       : status_of([&] { shard.recv(&x, 1, DataType::int32, 0); });
    BOOST_TEST((s == Status::timeout || s == Status::revoked), "status " << static_cast<int>(s));
    BOOST_TEST(m.is_revoked());
    freed = comm_counter::freed();
  }
  BOOST_TEST(comm_counter::freed() - freed == 0);
  // The process goes on.
  const Mesh next = hsdp();
  int one = 1, sum = 0;
  next.communicator("replicate").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(sum == world_size() / 2);
  next.communicator("shard").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(sum == 2);
}

// What needs the mesh's watcher thread (a deadline, or a backend's local
// revoke to spread) needs
// MPI_THREAD_MULTIPLE: below it, every rank fails creation alike with
// invalid_argument naming it (run with --thread-serialized, test
// fault-live-serialized); with it, the same meshes work. A mesh with
// neither needs no thread level.
BOOST_AUTO_TEST_CASE(thread_level_below_multiple_refuses_what_needs_a_thread) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int provided = 0;
  MPI_Query_thread(&provided);
  devmesh::MeshOptions local;
  local.fault_tolerance = true;
  local.dim_backends = {{"replicate", "localrevoke3"}};
  devmesh::MeshOptions deadline;
  deadline.fault_tolerance = true;
  deadline.deadline = 30;
  const std::vector<int> shape{0, 2};
  const std::vector<std::string> names{"replicate", "shard"};
  std::string msg;
  const Status with_local = status_of(
      [&] {
        const Mesh m = Mesh::create(MPI_COMM_WORLD, shape, names, local);
        int x = 1, y = 0;
        m.communicator("replicate").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
        BOOST_TEST(y == world_size() / 2);
      },
      &msg);
  if (provided < MPI_THREAD_MULTIPLE) {
    BOOST_TEST(with_local == Status::invalid_argument);
    BOOST_TEST(msg.find("'localrevoke3', whose revoke stays on the calling rank, needs MPI_THREAD_MULTIPLE") !=
                   std::string::npos,
               msg);
  } else {
    BOOST_TEST(with_local == Status::success, msg);
  }
  msg.clear();
  const Status with_deadline = status_of(
      [&] {
        const Mesh m = Mesh::create(MPI_COMM_WORLD, shape, names, deadline);
        int x = 1, y = 0;
        m.communicator("shard").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
        BOOST_TEST(y == 2);
      },
      &msg);
  if (provided < MPI_THREAD_MULTIPLE) {
    BOOST_TEST(with_deadline == Status::invalid_argument);
    BOOST_TEST(msg.find("a deadline needs MPI_THREAD_MULTIPLE") != std::string::npos, msg);
  } else {
    BOOST_TEST(with_deadline == Status::success, msg);
  }
  // Fault tolerance alone (ULFM spreads the MPI dims' revokes itself).
  const Mesh m = hsdp();
  int x = 1, y = 0;
  m.communicator("replicate").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(y == world_size() / 2);
}

BOOST_AUTO_TEST_CASE(a_revoke_reaches_every_member) {
  const Mesh m = hsdp();
  // Both dims asked for once: a revoke fails the next ask all the same.
  status_of([&] { m.communicator("shard"); });
  status_of([&] { m.communicator("replicate"); });
  if (world_rank() == 0) m.revoke();
  // Every member's operations fail with REVOKED soon, whether or not it
  // shares a dim with rank 0; creation-time communicators included.
  BOOST_TEST(until_revoked(m, world_rank() % 2 == 0 ? "shard" : "replicate") == Status::revoked);
  BOOST_TEST(m.is_revoked());
  std::string message;
  BOOST_TEST(status_of([&] { m.comm("shard"); }, &message) == Status::revoked);
  BOOST_TEST(message.find("revoked") != std::string::npos, message);
  for (const char* dim : {"shard", "replicate"}) {
    BOOST_TEST(status_of([&] { m.communicator(dim); }, &message) == Status::revoked);
    BOOST_TEST(message.find("an operation of the mesh") != std::string::npos, message);
  }
  // Views of the root too.
  BOOST_TEST(status_of([&] { m.flatten().comm(); }) == Status::revoked);
  // The survivors (everyone) carry on in a new mesh.
  const Mesh s = m.shrink("replicate");
  BOOST_TEST(m.failed_ranks().empty());
  BOOST_REQUIRE(s.is_member());
  int one = 1, sum = 0;
  s.communicator("replicate").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(sum == s.size("replicate"));
}

BOOST_AUTO_TEST_CASE(a_revoke_wakes_a_thread_waiting_in_the_mesh) {
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE) return;  // mpi_test_main asks for it
  const Mesh m = hsdp();
  // Local rank 1 of each shard pair waits for a message its peer never
  // sends; after a while the peer revokes from its main thread, and the
  // waiting rank's own second thread revokes too (either must wake it).
  auto& shard = m.communicator("shard");
  Status waited = Status::success;
  if (shard.rank() == 1) {
    std::thread waiter([&] {
      int x = 0;
      waited = status_of([&] { shard.recv(&x, 1, DataType::int32, 0); });
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    m.revoke();
    waiter.join();
    BOOST_TEST(waited == Status::revoked);
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    BOOST_TEST(until_revoked(m, "replicate") == Status::revoked);
  }
}

BOOST_AUTO_TEST_CASE(c_api) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  c.fault_tolerance = 1;
  const int shape[] = {0, 2};
  const char* names[] = {"replicate", "shard"};
  devmesh_t m = nullptr;
  BOOST_REQUIRE(devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &c, &m) == DEVMESH_SUCCESS);
  int flag = world_rank() != 1, revoked = -1, n = -1, index = -1;
  // Before the agreement: no rank revokes until every rank is past it.
  BOOST_TEST(devmesh_is_revoked(m, &revoked) == DEVMESH_SUCCESS);
  BOOST_TEST(revoked == 0);
  BOOST_TEST(devmesh_failed_ranks(m, 0, nullptr, &n) == DEVMESH_SUCCESS);
  BOOST_TEST(n == 0);
  BOOST_TEST(devmesh_agree(m, &flag) == DEVMESH_SUCCESS);
  BOOST_TEST(flag == 0);
  BOOST_TEST(devmesh_revoke(m) == DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_revoke(m) == DEVMESH_SUCCESS);  // idempotent
  BOOST_TEST(devmesh_is_revoked(m, &revoked) == DEVMESH_SUCCESS);
  BOOST_TEST(revoked == 1);
  MPI_Comm comm = MPI_COMM_NULL;
  BOOST_TEST(devmesh_comm(m, "shard", &comm) == DEVMESH_ERR_REVOKED);
  devmesh_t s = nullptr;
  BOOST_TEST(devmesh_shrink(m, "nope", &s) == DEVMESH_ERR_UNKNOWN_DIM);
  BOOST_TEST(s == nullptr);
  BOOST_TEST(devmesh_shrink(m, "replicate", &s) == DEVMESH_SUCCESS);
  BOOST_REQUIRE(s != nullptr);
  BOOST_TEST(devmesh_shrunk_index(s, world_rank(), &index) == DEVMESH_SUCCESS);
  BOOST_TEST(index == world_rank());
  BOOST_TEST(devmesh_shrunk_index(s, world_size(), &index) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(devmesh_destroy(&s) == DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_destroy(&m) == DEVMESH_SUCCESS);  // a revoked mesh too
}
