// Version 4 of the plugin interface from a plugin's side, with the example
// plugin of examples/plugin (tests/plugins/meson.build builds it as
// example-v4, example-v3 and example-v2) and broken builds of it
// (faulty.c): a version 4 plugin loads through the file search and through
// devmesh_register_backend; its alltoallv gives MPI_Alltoallv's result; a
// table whose capability bits do not state its members exactly is refused;
// and what a plugin lacks is UNSUPPORTED, naming the operation (and the ABI
// version where that version has no such member). The test plugin
// "topology" (topology.c), whose answers come from the environment, keeps
// its promises.
#define BOOST_TEST_MODULE plugin_v4
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "devmesh/backend_plugin.h"
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"
#include "mpi_test.hpp"

using namespace devmesh;

namespace {

using Counts = std::vector<std::size_t>;

// A mesh of the world with one dim, "all", on `backend`.
Mesh world_on(const std::string& backend) {
  MeshOptions o;
  o.backend = backend;
  return Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
}

void expect(Status got, Status want, const std::string& what, std::initializer_list<std::string> needles) {
  BOOST_TEST(static_cast<int>(got) == static_cast<int>(want), "status " << got << ": " << what);
  for (const std::string& n : needles) BOOST_TEST(what.find(n) != std::string::npos, "'" << n << "' not in: " << what);
}

// The example plugin's version 4 table, as exported by the example-v4 build.
const devmesh_backend_v4_t& example_v4() {
  static const devmesh_backend_v4_t* table = [] {
    const std::string path = std::string(TEST_PLUGIN_DIR) + "/libdevmesh-backend-example-v4.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    BOOST_TEST_REQUIRE(h != nullptr, dlerror());
    const auto* t = static_cast<const devmesh_backend_v4_t*>(dlsym(h, DEVMESH_BACKEND_SYMBOL_V4));
    BOOST_TEST_REQUIRE(t != nullptr);
    return t;
  }();
  return *table;
}

// Tables handed to devmesh_register_backend outlive every mesh.
devmesh_backend_v4_t& copy_named(const std::string& name) {
  static std::deque<devmesh_backend_v4_t> tables;
  static std::deque<std::string> names;
  devmesh_backend_v4_t& t = tables.emplace_back(example_v4());
  t.v3.v2.v1.name = names.emplace_back(name).c_str();
  return t;
}

// --- alltoallv against MPI_Alltoallv --------------------------------------

// The element rank `from` sends to rank `to` at position k of its block.
std::int32_t code(int from, int to, std::size_t k) {
  return static_cast<std::int32_t>(from * 100000 + to * 1000 + static_cast<int>(k));
}
constexpr std::int32_t untouched = -7;

// One rank's side of an alltoallv over a group of n: segments laid out in
// a rank-dependent order with a gap of one or two elements before each, so
// that neither buffer is packed and gaps must stay as they were.
struct Side {
  Counts counts, displs;
  std::size_t extent = 0;
};
Side lay_out(const Counts& counts, int me, int seed) {
  const std::size_t n = counts.size();
  Side s{counts, Counts(n), 0};
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::rotate(order.begin(), order.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(me) + 1) % n),
              order.end());
  if ((me + seed) % 2) std::reverse(order.begin(), order.end());
  for (const std::size_t r : order) {
    s.extent += 1 + (r + static_cast<std::size_t>(seed)) % 2;  // the gap
    s.displs[r] = s.extent;
    s.extent += counts[r];
  }
  s.extent += 1;
  return s;
}

// Element counts from rank i to rank j: uneven, some zero (the diagonal of
// round 1, among others); symmetric when in place needs it.
std::size_t count_of(int i, int j, int round, bool symmetric) {
  const int a = symmetric ? std::min(i, j) : i, b = symmetric ? std::max(i, j) : j;
  return static_cast<std::size_t>((a * 5 + b * 3 + round * 7 + a * b) % 6);
}

// alltoallv on dim of m, through the plugin and through MPI_Alltoallv on
// the dim's own MPI communicator, from the same inputs: every element of
// the receive buffer (gaps included) equal, and equal to the brute-force
// expectation.
void check_alltoallv(Mesh& m, const std::string& dim, int round, bool in_place) {
  Communicator& c = m.communicator(dim);
  const int n = c.size(), me = c.rank();
  Counts sc(static_cast<std::size_t>(n)), rc(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    sc[static_cast<std::size_t>(r)] = count_of(me, r, round, in_place);
    rc[static_cast<std::size_t>(r)] = count_of(r, me, round, in_place);
  }
  const Side send = lay_out(sc, me, round), recv = lay_out(rc, me, round + 1);
  std::vector<std::int32_t> sbuf(send.extent, untouched), rbuf(recv.extent, untouched);
  for (int r = 0; r < n; ++r)
    for (std::size_t k = 0; k < sc[static_cast<std::size_t>(r)]; ++k)
      sbuf[send.displs[static_cast<std::size_t>(r)] + k] = code(me, r, k);
  // In place, block r of recv is what goes to r.
  if (in_place)
    for (int r = 0; r < n; ++r)
      for (std::size_t k = 0; k < rc[static_cast<std::size_t>(r)]; ++k)
        rbuf[recv.displs[static_cast<std::size_t>(r)] + k] = code(me, r, k);
  std::vector<std::int32_t> mine = rbuf, mpis = rbuf;

  if (in_place)
    c.alltoallv(mine.data(), {}, {}, mine.data(), rc, recv.displs, DataType::int32);
  else
    c.alltoallv(sbuf.data(), sc, send.displs, mine.data(), rc, recv.displs, DataType::int32);

  std::vector<int> isc(sc.begin(), sc.end()), isd(send.displs.begin(), send.displs.end());
  std::vector<int> irc(rc.begin(), rc.end()), ird(recv.displs.begin(), recv.displs.end());
  BOOST_TEST_REQUIRE(MPI_Alltoallv(in_place ? MPI_IN_PLACE : sbuf.data(), isc.data(), isd.data(), MPI_INT32_T,
                                   mpis.data(), irc.data(), ird.data(), MPI_INT32_T, m.comm(dim)) == MPI_SUCCESS);
  BOOST_TEST(mine == mpis, "round " << round << (in_place ? " in place" : "") << ": differs from MPI_Alltoallv");

  std::vector<std::int32_t> want(recv.extent, untouched);
  for (int r = 0; r < n; ++r)
    for (std::size_t k = 0; k < rc[static_cast<std::size_t>(r)]; ++k)
      want[recv.displs[static_cast<std::size_t>(r)] + k] = code(r, me, k);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < want.size(); ++i) wrong += mine[i] != want[i];
  BOOST_TEST(wrong == 0u, "round " << round << (in_place ? " in place" : "") << ": " << wrong << " elements of "
                                   << want.size() << " wrong (gaps included)");
}

}  // namespace

BOOST_AUTO_TEST_CASE(loaded_through_the_file_search) {
  Mesh m = world_on("example-v4");
  Communicator& c = m.communicator("all");
  BOOST_TEST(c.backend() == "example-v4");
  for (int round = 0; round < 3; ++round) check_alltoallv(m, "all", round, false);
  check_alltoallv(m, "all", 3, true);
  // On the groups of a dim of a (2, n/2) mesh too, with version 1's members
  // beside it on the same communicator.
  if (world_size() % 2) return;
  MeshOptions o;
  o.dim_backends = {{"tp", "example-v4"}};
  Mesh g = Mesh::create(MPI_COMM_WORLD, {2, 0}, {"dp", "tp"}, o);
  check_alltoallv(g, "tp", 1, false);
  std::int32_t x = 1, sum = 0;
  g.communicator("tp").allreduce(&x, &sum, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(sum == g.communicator("tp").size());
  check_alltoallv(g, "tp", 2, true);
}

// What MPI's int counts cannot say, the example refuses on every member
// before calling MPI (so that no member waits for the others), naming the
// array and the element; nothing is written and the communicator stays
// usable.
BOOST_AUTO_TEST_CASE(counts_past_int_refused_by_the_example) {
  Mesh m = world_on("example-v4");
  Communicator& c = m.communicator("all");
  const std::size_t n = static_cast<std::size_t>(c.size());
  const std::size_t huge = std::size_t{1} << 31;
  Counts rc(n, 0), rd(n, 0);
  rc[n - 1] = huge;  // never dereferenced: refused before any transfer
  std::vector<std::int32_t> buf(4, untouched);
  std::string what;
  const Status s = status_of([&] { c.alltoallv(buf.data(), {}, {}, buf.data(), rc, rd, DataType::int32); }, &what);
  expect(s, Status::unsupported, what,
         {"backend 'example-v4', alltoallv: ",
          "at most 2^31-1 elements in recvcounts, got 2147483648 (element " + std::to_string(n - 1) + ")"});
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
  BOOST_TEST(std::count(buf.begin(), buf.end(), untouched) == 4);
  check_alltoallv(m, "all", 5, false);
}

BOOST_AUTO_TEST_CASE(registered_in_process) {
  devmesh_backend_v4_t& t = copy_named("example-v4-linked");
  // Registered through its v1 member, as every version.
  BOOST_TEST_REQUIRE(devmesh_register_backend(&t.v3.v2.v1) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(devmesh_register_backend(&t.v3.v2.v1) == DEVMESH_SUCCESS);  // the same table again
  Mesh m = world_on("example-v4-linked");
  BOOST_TEST(m.communicator("all").backend() == "example-v4-linked");
  check_alltoallv(m, "all", 4, false);
}

// The capability bits of version 4 state its members exactly, and the
// started ones need test and wait: anything else is refused at load
// (UNSUPPORTED, every rank) and at registration (INVALID_ARGUMENT), naming
// the member or bit.
BOOST_AUTO_TEST_CASE(capability_set_checked_at_load) {
  const std::vector<std::pair<std::string, std::string>> broken = {
      {"capnomember4", "it states the capability bit of reduce but its table has no reduce"},
      {"membernocap4", "its table has alltoallv but does not state its capability bit"},
      {"startednop2p4", "DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES (iallreduce"},
      {"batchnop2p4", "DEVMESH_BACKEND_CAP_BATCH (batch) without DEVMESH_BACKEND_CAP_NONBLOCKING"},
      {"topologynocap4", "its table has topology but does not state its capability bit"},
      {"capnotopology4", "it states the capability bit of topology but its table has no topology"},
  };
  for (const auto& [plugin, needle] : broken) {
    BOOST_TEST_CONTEXT(plugin) {
      std::string what;
      const Status s = status_of([&] { (void)world_on(plugin); }, &what);
      expect(s, Status::unsupported, what, {"backend '" + plugin + "'", "cannot be used", needle});
      BOOST_TEST(same_everywhere(static_cast<int>(s)));
      // The C creation alike, its output untouched.
      devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
      cfg.backend = plugin.c_str();
      int shape[1] = {0};
      const char* names[1] = {"all"};
      devmesh_t out = nullptr;
      BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &out) == DEVMESH_ERR_UNSUPPORTED);
      BOOST_TEST(std::string(devmesh_last_error()).find(needle) != std::string::npos, devmesh_last_error());
      BOOST_TEST(out == nullptr);
    }
  }
}

namespace stub {
// Members of tables that are refused, or registered and never called.
int iallreduce(void*, const void*, void*, std::size_t, int, int, void*, void**) { return DEVMESH_ERR_INTERNAL; }
int iallgather(void*, const void*, void*, std::size_t, int, void*, void**) { return DEVMESH_ERR_INTERNAL; }
int ibroadcast(void*, void*, std::size_t, int, int, void*, void**) { return DEVMESH_ERR_INTERNAL; }
int ibarrier(void*, void*, void**) { return DEVMESH_ERR_INTERNAL; }
int batch(void*, const devmesh_backend_p2p_t*, std::size_t, void*, void**) { return DEVMESH_ERR_INTERNAL; }
int reduce(void*, const void*, void*, std::size_t, int, int, int, void*, void**) { return DEVMESH_ERR_INTERNAL; }
int topology(void*, int, char*, std::size_t, std::size_t*) { return DEVMESH_ERR_INTERNAL; }

void started(devmesh_backend_v4_t& t) {
  t.iallreduce = iallreduce;
  t.iallgather = iallgather;
  t.ireduce_scatter = iallreduce;
  t.ibroadcast = ibroadcast;
  t.ialltoall = iallgather;
  t.ibarrier = ibarrier;
}
// Without isend, irecv, test and wait: nothing could end a request.
void no_point_to_point(devmesh_backend_v4_t& t) {
  t.v3.v2.isend = nullptr, t.v3.v2.irecv = nullptr, t.v3.v2.test = nullptr, t.v3.v2.wait = nullptr;
  t.v3.capabilities &= ~DEVMESH_BACKEND_CAP_NONBLOCKING;
}
}  // namespace stub

BOOST_AUTO_TEST_CASE(capability_set_checked_at_registration) {
  struct Variant {
    const char* name;
    void (*change)(devmesh_backend_v4_t&);
    const char* needle;  // "" : accepted
  };
  const Variant variants[] = {
      {"bit-without-member", [](devmesh_backend_v4_t& t) { t.v3.capabilities |= DEVMESH_BACKEND_CAP_REDUCE; },
       "it states the capability bit of reduce but its table has no reduce"},
      {"member-without-bit", [](devmesh_backend_v4_t& t) { t.v3.capabilities &= ~DEVMESH_BACKEND_CAP_ALLTOALLV; },
       "its table has alltoallv but does not state its capability bit"},
      {"reduce-without-bit", [](devmesh_backend_v4_t& t) { t.reduce = stub::reduce; },
       "its table has reduce but does not state its capability bit"},
      {"five-of-six-started",
       [](devmesh_backend_v4_t& t) {
         stub::started(t);
         t.ibarrier = nullptr;
         t.v3.capabilities |= DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES;
       },
       "it states the capability bit of ibarrier but its table has no ibarrier"},
      {"started-without-bit", [](devmesh_backend_v4_t& t) { stub::started(t); },
       "its table has iallreduce but does not state its capability bit"},
      {"started-without-nonblocking",
       [](devmesh_backend_v4_t& t) {
         stub::started(t);
         stub::no_point_to_point(t);
         t.v3.capabilities |= DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES;
       },
       "DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES (iallreduce, iallgather, ireduce_scatter, ibroadcast, ialltoall, "
       "ibarrier) without DEVMESH_BACKEND_CAP_NONBLOCKING"},
      {"batch-bit-without-batch", [](devmesh_backend_v4_t& t) { t.v3.capabilities |= DEVMESH_BACKEND_CAP_BATCH; },
       "it states the capability bit of batch but its table has no batch"},
      {"batch-without-nonblocking",
       [](devmesh_backend_v4_t& t) {
         t.batch = stub::batch;
         stub::no_point_to_point(t);
         t.v3.capabilities |= DEVMESH_BACKEND_CAP_BATCH;
       },
       "DEVMESH_BACKEND_CAP_BATCH (batch) without DEVMESH_BACKEND_CAP_NONBLOCKING"},
      {"topology-without-bit", [](devmesh_backend_v4_t& t) { t.topology = stub::topology; },
       "its table has topology but does not state its capability bit"},
      {"topology-bit-without-topology",
       [](devmesh_backend_v4_t& t) { t.v3.capabilities |= DEVMESH_BACKEND_CAP_TOPOLOGY; },
       "it states the capability bit of topology but its table has no topology"},
      // Consistent sets are accepted.
      {"topology-stated",
       [](devmesh_backend_v4_t& t) {
         t.topology = stub::topology;
         t.v3.capabilities |= DEVMESH_BACKEND_CAP_TOPOLOGY;
       },
       ""},
      {"started-stated",
       [](devmesh_backend_v4_t& t) {
         stub::started(t);
         t.batch = stub::batch;
         t.v3.capabilities |= DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES | DEVMESH_BACKEND_CAP_BATCH;
       },
       ""},
      {"none-of-version-4",
       [](devmesh_backend_v4_t& t) {
         t.alltoallv = nullptr;
         t.v3.capabilities &= ~DEVMESH_BACKEND_CAP_ALLTOALLV;
       },
       ""},
  };
  for (const Variant& v : variants) {
    BOOST_TEST_CONTEXT(v.name) {
      devmesh_backend_v4_t& t = copy_named(std::string("v4-") + v.name);
      v.change(t);
      const int rc = devmesh_register_backend(&t.v3.v2.v1);
      const std::string what = devmesh_last_error();
      if (*v.needle) {
        BOOST_TEST(rc == DEVMESH_ERR_INVALID_ARGUMENT, what);
        BOOST_TEST(what.find("the backend table cannot be used") != std::string::npos, what);
        BOOST_TEST(what.find(v.needle) != std::string::npos, what);
      } else {
        BOOST_TEST(rc == DEVMESH_SUCCESS, what);
      }
    }
  }
}

// --- the test plugin "topology" (topology.c) -------------------------------

namespace topo {

// The plugin's version 4 table, as exported.
const devmesh_backend_v4_t& table() {
  static const devmesh_backend_v4_t* t = [] {
    const std::string path = std::string(TEST_PLUGIN_DIR) + "/libdevmesh-backend-topology.so";
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    BOOST_TEST_REQUIRE(h != nullptr, dlerror());
    const auto* found = static_cast<const devmesh_backend_v4_t*>(dlsym(h, DEVMESH_BACKEND_SYMBOL_V4));
    BOOST_TEST_REQUIRE(found != nullptr);
    return found;
  }();
  return *t;
}

struct Answer {
  int rc;
  std::size_t written;
  std::string text;  // the buffer up to its first NUL, or all of it
  bool guard_kept;   // the byte past `size` untouched
};

// topology() with a buffer of `size` bytes filled with 'x' (one more as a guard).
Answer ask(int host_local_rank, std::size_t size) {
  std::vector<char> buf(size + 1, 'x');
  std::size_t written = 12345;
  const int rc = table().topology(nullptr, host_local_rank, buf.data(), size, &written);
  const auto end = std::find(buf.begin(), buf.end() - 1, '\0');
  return {rc, written, std::string(buf.begin(), end), buf[size] == 'x'};
}

// Sets (or, for nullptr, unsets) the two variables for one scope.
struct Environment {
  Environment(const char* domain, const char* levels) {
    set("DEVMESH_TEST_PLUGIN_DOMAIN", domain);
    set("DEVMESH_TEST_PLUGIN_LEVELS", levels);
  }
  ~Environment() {
    set("DEVMESH_TEST_PLUGIN_DOMAIN", nullptr);
    set("DEVMESH_TEST_PLUGIN_LEVELS", nullptr);
  }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  static void set(const char* name, const char* value) {
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
};

// The plugin's last_error().
std::string error() { return table().v3.v2.v1.last_error(); }

}  // namespace topo

// The plugin the placement's tests use: stated and present; its answers,
// against what its comment promises (computed here from the rank); the
// buffer-size rule of the interface; and the core loads it.
BOOST_AUTO_TEST_CASE(topology_plugin_answers_from_the_environment) {
  const devmesh_backend_v4_t& t = topo::table();
  BOOST_TEST((t.v3.capabilities & DEVMESH_BACKEND_CAP_TOPOLOGY) != 0u);
  BOOST_TEST_REQUIRE(t.topology != nullptr);
  const int rank = world_rank();
  auto expect_text = [](const topo::Answer& a, const std::string& want) {
    BOOST_TEST(a.rc == DEVMESH_SUCCESS, topo::error());
    BOOST_TEST(a.text == want);
    BOOST_TEST(a.written == want.size());
    BOOST_TEST(a.guard_kept);
  };
  {
    const topo::Environment e(nullptr, nullptr);
    expect_text(topo::ask(0, 64), "");
  }
  {
    const topo::Environment e("", "");
    expect_text(topo::ask(0, 64), "");
  }
  {
    const topo::Environment e("nvl0", nullptr);
    expect_text(topo::ask(0, 64), "domain=nvl0");
    expect_text(topo::ask(0, 12), "domain=nvl0");  // just fits with its NUL
    const topo::Answer small = topo::ask(0, 11);
    BOOST_TEST(small.rc == DEVMESH_ERR_INVALID_ARGUMENT);
    BOOST_TEST(small.written == 11u);
    BOOST_TEST(small.text == std::string(11, 'x'));  // untouched
    BOOST_TEST(topo::error().find("the levels take 12 bytes, the buffer has 11") != std::string::npos,
               topo::error());
  }
  {
    const topo::Environment e("a,bb,,d%l", nullptr);
    const std::string items[] = {"a", "bb", "", "d7"};
    const std::string& item = items[rank % 4];
    expect_text(topo::ask(7, 64), item.empty() ? "" : "domain=" + item);
  }
  {
    const topo::Environment e("ignored", "domain=x%l;switch=s1");
    expect_text(topo::ask(3, 64), "domain=x3;switch=s1");
  }
  {
    const topo::Environment e(nullptr, "!8");
    const topo::Answer a = topo::ask(0, 64);
    BOOST_TEST(a.rc == DEVMESH_ERR_BACKEND);
    BOOST_TEST(a.written == 0u);
    BOOST_TEST(topo::error() ==
               "topology failed on rank " + std::to_string(rank) + ", as the environment asks");
  }
  BOOST_TEST(topo::ask(-1, 64).rc == DEVMESH_ERR_INVALID_ARGUMENT);
  // The core accepts it, and it serves a mesh as the example does.
  const topo::Environment e("nvl0", nullptr);
  Mesh m = world_on("topology");
  BOOST_TEST(m.communicator("all").backend() == "topology");
  check_alltoallv(m, "all", 6, false);
}

// An operation the plugin's table lacks: UNSUPPORTED on every rank before
// anything is sent or written, naming the operation; a plugin built for an
// older version says which.
BOOST_AUTO_TEST_CASE(older_and_smaller_tables_answer_unsupported) {
  auto refused = [](Communicator& c, const std::string& op, const std::string& message) {
    BOOST_TEST_CONTEXT(c.backend() << " " << op) {
      const std::size_t n = static_cast<std::size_t>(c.size());
      Counts ones(n, 1), displs(n);
      std::iota(displs.begin(), displs.end(), std::size_t{0});
      std::vector<std::int32_t> send(n, 5), recv(n, untouched);
      const std::vector<std::pair<std::string, std::function<void()>>> ops = {
          {"alltoallv", [&] { c.alltoallv(send.data(), ones, displs, recv.data(), ones, displs, DataType::int32); }},
          {"ialltoallv",
           [&] { (void)c.ialltoallv(send.data(), ones, displs, recv.data(), ones, displs, DataType::int32); }},
          {"allgatherv", [&] { c.allgatherv(send.data(), 1, recv.data(), ones, displs, DataType::int32); }},
          {"gather", [&] { c.gather(send.data(), recv.data(), 1, DataType::int32, 0); }},
          {"iallreduce", [&] { (void)c.iallreduce(send.data(), recv.data(), 1, DataType::int32, ReduceOp::sum); }},
          {"ibarrier", [&] { (void)c.ibarrier(); }},
      };
      const auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& o) { return o.first == op; });
      BOOST_TEST_REQUIRE((it != ops.end()));
      std::string what;
      const Status s = status_of(it->second, &what);
      BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::unsupported), what);
      BOOST_TEST(what == message);
      BOOST_TEST(same_everywhere(static_cast<int>(s)));
      BOOST_TEST(std::count(recv.begin(), recv.end(), untouched) == static_cast<std::ptrdiff_t>(n));
      // The communicator is not revoked by a refusal: what the plugin has
      // still works.
      c.barrier();
    }
  };
  for (const std::string v : {"3", "2"}) {
    const std::string b = "example-v" + v;
    Mesh m = world_on(b);
    for (const std::string op : {"alltoallv", "ialltoallv", "iallreduce"})
      refused(m.communicator("all"), op,
              op + " is not supported by backend '" + b + "': it was built for ABI v" + v +
                  " of the plugin interface, which has no " + op);
  }
  // Version 4 without DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES: the
  // started forms, even of the member it has, and the members it leaves out.
  Mesh m = world_on("example-v4");
  for (const std::string op : {"ialltoallv", "iallreduce", "ibarrier", "allgatherv", "gather"})
    refused(m.communicator("all"), op, op + " is not supported by backend 'example-v4'");
}
