// Careless and broken backend plugins (tests/plugins/faulty.c, built from
// the example plugin): for every variant, no signal, no hang (the test's
// timeout bounds it), the status the contract names on every member, and a
// message naming the plugin and the cause.
#define BOOST_TEST_MODULE faulty_plugins
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "comm_counter.hpp"
#include "devmesh/backend_plugin.h"
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"
#include "mpi_test.hpp"

using namespace devmesh;

namespace {

// A (dp, tp) mesh of the world with tp on `backend` and its options.
Mesh mesh_with(const std::string& backend, std::vector<std::string> options = {}) {
  MeshOptions o;
  o.dim_backends = {{"tp", backend}};
  for (std::string& kv : options) o.dim_options.push_back({"tp", std::move(kv)});
  return Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
}

// Runs f on every rank: its status, and its message in *what.
Status run(const std::function<void()>& f, std::string* what) { return status_of(f, what); }

void expect(Status got, Status want, const std::string& what, std::initializer_list<std::string> needles) {
  BOOST_TEST(static_cast<int>(got) == static_cast<int>(want), "status " << got << ": " << what);
  for (const std::string& n : needles) BOOST_TEST(what.find(n) != std::string::npos, "'" << n << "' not in: " << what);
}

// Mesh creation naming `backend` fails alike everywhere (the loader's
// verdict is agreed on at creation), through C++ and C.
void expect_refused(const std::string& backend, Status want, std::initializer_list<std::string> needles) {
  BOOST_TEST_CONTEXT("backend " << backend) {
    std::string what;
    const Status s = run([&] { mesh_with(backend); }, &what);
    expect(s, want, what, needles);
    BOOST_TEST(same_everywhere(static_cast<int>(s)));
    devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
    const std::string dims = "tp=" + backend;
    cfg.dim_backends = dims.c_str();
    int shape[2] = {0, 1};
    const char* names[2] = {"dp", "tp"};
    devmesh_t out = nullptr;
    const int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &out);
    BOOST_TEST(rc == static_cast<int>(want), devmesh_last_error());
    BOOST_TEST(out == nullptr);
    BOOST_TEST(same_everywhere(rc));
  }
}

// One allreduce on tp of a mesh with `backend` and fault options.
Status allreduce_with(const std::string& backend, std::vector<std::string> options, std::string* what,
                      Error* error = nullptr) {
  return run(
      [&] {
        Mesh m = mesh_with(backend, std::move(options));
        std::int32_t x = 1;
        try {
          m.communicator("tp").allreduce(&x, &x, 1, DataType::int32, ReduceOp::sum);
        } catch (const Error& e) {
          if (error) *error = e;
          throw;
        }
      },
      what);
}

int (*calls_of(const std::string& plugin))(const char*) {
  const std::string path = std::string(TEST_PLUGIN_DIR) + "/libdevmesh-backend-" + plugin + ".so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  BOOST_TEST_REQUIRE(h != nullptr, "not loaded: " << path);
  auto f = reinterpret_cast<int (*)(const char*)>(dlsym(h, "faulty_calls"));
  dlclose(h);
  BOOST_TEST_REQUIRE(f != nullptr);
  return f;
}

}  // namespace

BOOST_AUTO_TEST_CASE(request_members_all_or_none) {
  expect_refused("nowait3", Status::unsupported, {"nowait3", "without wait"});
  expect_refused("notest2", Status::unsupported, {"notest2", "without test"});
  expect_refused("notestwait2", Status::unsupported, {"notestwait2", "without test, wait"});
}

BOOST_AUTO_TEST_CASE(revoke_capabilities_need_a_revoke) {
  expect_refused("nullrevoke3", Status::unsupported,
                 {"nullrevoke3", "DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD but has no revoke"});
}

BOOST_AUTO_TEST_CASE(wrong_abi_and_wrong_mpi) {
  expect_refused("abi2as3", Status::unsupported, {"abi2as3", "ABI version is 2 but this devmesh accepts 3"});
  // OTHER_FAMILY: a family the core was not built with (tests/plugins/meson.build).
  expect_refused("familyother3", Status::unsupported,
                 {"familyother3", "compiled against " OTHER_FAMILY "'s mpi.h", DEVMESH_BACKEND_MPI});
#if HAVE_OTHER_MPI
  for (const char* b : {"othermpi3", "othermpi2"})
    expect_refused(b, Status::unsupported, {b, "loads the MPI library", "build the plugin with the MPI devmesh was built with"});
#endif
}

BOOST_AUTO_TEST_CASE(invalid_statuses_become_backend) {
  for (const std::string plugin : {"faulty3", "faulty2"})
    for (const int status : {42, -1}) {
      BOOST_TEST_CONTEXT(plugin << " status " << status) {
        std::string what;
        const Status s = allreduce_with(plugin, {"fail=allreduce", "status=" + std::to_string(status)}, &what);
        expect(s, Status::backend, what,
               {"plugin '" + plugin + "' returned invalid status " + std::to_string(status) + " from allreduce"});
        BOOST_TEST(same_everywhere(static_cast<int>(s)));
      }
    }
}

BOOST_AUTO_TEST_CASE(success_with_a_null_communicator_is_refused) {
  for (const std::string plugin : {"faulty3", "faulty2"}) {
    std::string what;
    const Status s = allreduce_with(plugin, {"null_comm=1"}, &what);
    expect(s, Status::backend, what, {"plugin '" + plugin + "' returned success from", "NULL communicator"});
    BOOST_TEST(same_everywhere(static_cast<int>(s)));
  }
}

BOOST_AUTO_TEST_CASE(messages_are_capped_prefixed_once_and_codes_checked) {
  for (const std::string plugin : {"faulty3", "faulty2"}) {
    BOOST_TEST_CONTEXT(plugin) {
      std::string what;
      Status s = allreduce_with(plugin, {"fail=allreduce", "message=huge"}, &what);
      expect(s, Status::backend, what, {"backend '" + plugin + "', allreduce: ", "[cut at 4 KiB]"});
      BOOST_TEST(what.size() < 4096 + 200);
      // The plugin names itself: the core does not say it twice.
      s = allreduce_with(plugin, {"fail=allreduce", "message=backend '" + plugin + "': boom"}, &what);
      BOOST_TEST(what == "backend '" + plugin + "', allreduce: boom");
      // A code MPI does not know is dropped; a real one is kept with its class.
      Error e(Status::success, "");
      s = allreduce_with(plugin, {"fail=allreduce", "mpi_code=-7"}, &what, &e);
      BOOST_TEST(e.mpi_code() == 0);
      BOOST_TEST(e.mpi_class() == 0);
      s = allreduce_with(plugin, {"fail=allreduce", "mpi_code=" + std::to_string(MPI_ERR_TRUNCATE)}, &what, &e);
      BOOST_TEST(e.mpi_class() == MPI_ERR_TRUNCATE);
      BOOST_TEST(same_everywhere(static_cast<int>(s)));
    }
  }
}

// A local step that fails on one member: every member gets its status, the
// others with a message naming that rank; the failure is reported again,
// never retried.
BOOST_AUTO_TEST_CASE(v3_local_step_failing_on_one_rank) {
  const int n = world_size(), me = world_rank();
  const int bad = n - 1;
  for (const std::string step : {"comm_prepare", "comm_connect"}) {
    BOOST_TEST_CONTEXT(step) {
      const long before = comm_counter::live();
      {
        Mesh m = mesh_with("faulty3", {"fail=" + step, "rank=" + std::to_string(bad),
                                       "status=" + std::to_string(DEVMESH_ERR_UNSUPPORTED), "message=no device here"});
        auto calls = calls_of("faulty3");
        std::string what;
        const std::int32_t x = 1;
        std::int32_t y = 0;
        auto call = [&] { m.communicator("tp").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum); };
        Status s = run(call, &what);
        // tp's group: the world's ranks alike (a (n, 1) mesh has groups of
        // one, whose only member fails alone).
        const bool mine = me == bad;
        BOOST_TEST(static_cast<int>(s) == static_cast<int>(mine ? Status::unsupported : Status::success), what);
        if (mine) BOOST_TEST(what.find("no device here") != std::string::npos, what);
        const int made = calls(step.c_str());
        const std::string first = what;
        s = run(call, &what);
        BOOST_TEST(what == first);
        BOOST_TEST(calls(step.c_str()) == made, "the failed step was tried again");
      }
      BOOST_TEST(comm_counter::live() == before);
    }
  }
  // Over a group of several members: the same status on all of them (a
  // member whose comm_connect failed after its collective part has no
  // reductions to state: its failure, not a difference in them, is what
  // every member gets).
  if (n < 2) return;
  for (const std::string step : {"comm_prepare", "comm_connect_late"}) {
    BOOST_TEST_CONTEXT(step << " over a group") {
      const long before = comm_counter::live();
      {
        MeshOptions o;
        o.dim_backends = {{"all", "faulty3"}};
        o.dim_options = {{"all", "fail=" + step}, {"all", "rank=" + std::to_string(bad)}};
        Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
        std::string what;
        const std::int32_t x = 1;
        std::int32_t y = 0;
        const Status s =
            run([&] { m.communicator("all").allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum); }, &what);
        expect(s, Status::backend, what, {"faulty3"});
        if (me != bad) BOOST_TEST(what.find("(on rank " + std::to_string(bad) + ")") != std::string::npos, what);
        BOOST_TEST(same_everywhere(static_cast<int>(s)));
      }
      BOOST_TEST(comm_counter::live() == before);
    }
  }
}

// v2: a comm_create that fails on one member after its collective part:
// the core's agreement gives every member the status.
BOOST_AUTO_TEST_CASE(v2_create_failing_late_on_one_rank) {
  const int n = world_size(), me = world_rank();
  if (n < 2) return;
  MeshOptions o;
  o.dim_backends = {{"all", "faulty2"}};
  o.dim_options = {{"all", "fail=comm_create_late"}, {"all", "rank=1"}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
  std::string what;
  const Status s = run([&] { m.communicator("all").barrier(); }, &what);
  expect(s, Status::backend, what, {"faulty2"});
  if (me != 1) BOOST_TEST(what.find("(on rank 1)") != std::string::npos, what);
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
}

// v2: a comm_create that fails on one member before its collective part
// (docs/BACKENDS.md, "What older plugins get"). That member waits in the
// core's agreement, which runs on a communicator of its own; the others
// wait in the plugin's collective until its timeout (onefails2 bounds it
// by timeout=). Then each member reports its own failure: the failing one
// its reason, the others TIMEOUT; no job ends and none waits forever.
BOOST_AUTO_TEST_CASE(v2_create_failing_early_on_one_rank) {
  const int n = world_size(), me = world_rank();
  if (n < 2) return;
  const int bad = n - 1;
  MeshOptions o;
  o.dim_backends = {{"all", "onefails2"}};
  o.dim_options = {{"all", "fail=comm_create"}, {"all", "rank=" + std::to_string(bad)}, {"all", "timeout=1"}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
  std::string what;
  const Status s = run([&] { m.communicator("all").barrier(); }, &what);
  if (me == bad)
    expect(s, Status::backend, what, {"backend 'onefails2', comm_create: injected failure"});
  else
    expect(s, Status::timeout, what, {"backend 'onefails2', comm_create", "not every member of the group joined"});
  // Reported again, never retried.
  std::string again;
  BOOST_TEST(static_cast<int>(run([&] { m.communicator("all").barrier(); }, &again)) == static_cast<int>(s));
  BOOST_TEST(again == what);
}

// The same, with nothing bounding the others' wait: run by check_waits.sh
// only (disabled here: it never returns). Every member says it entered the
// creation; none may come back, and no MPI error may end the job.
BOOST_AUTO_TEST_CASE(v2_create_failing_early_unbounded, *boost::unit_test::disabled()) {
  MeshOptions o;
  o.dim_backends = {{"all", "faulty2"}};
  o.dim_options = {{"all", "fail=comm_create"}, {"all", "rank=" + std::to_string(world_size() - 1)}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
  std::printf("rank %d: creating\n", world_rank());
  std::fflush(stdout);
  std::string what;
  const Status s = run([&] { m.communicator("all"); }, &what);
  std::printf("rank %d: returned %d\n", world_rank(), static_cast<int>(s));
  std::fflush(stdout);
}

// v2: a collective that fails on one member. No revoke: the failing member
// reports its failure at once, the others wait in the plugin's collective
// until its own timeout (TIMEOUT; forever without one).
BOOST_AUTO_TEST_CASE(v2_collective_failing_on_one_rank) {
  const int n = world_size(), me = world_rank();
  if (n < 2) return;
  const int bad = n / 2;
  MeshOptions o;
  o.dim_backends = {{"all", "faulty2"}};
  o.dim_options = {
      {"all", "fail=allreduce"}, {"all", "rank=" + std::to_string(bad)}, {"all", "message=boom"}, {"all", "timeout=1"}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
  std::int32_t x = 1;
  std::string what;
  const Status s = run([&] { m.communicator("all").allreduce(&x, &x, 1, DataType::int32, ReduceOp::sum); }, &what);
  if (me == bad)
    expect(s, Status::backend, what, {"backend 'faulty2', allreduce: boom"});
  else
    expect(s, Status::timeout, what, {"backend 'faulty2', allreduce", "within timeout=1"});
}

// v3: a collective failing on one member: the core revokes the
// communicator there with the failure's status, the plugin spreads it, and
// every other member's call fails promptly with the same status naming the
// rank, instead of waiting forever. Later calls fail with REVOKED
// everywhere, without reaching the plugin.
BOOST_AUTO_TEST_CASE(v3_collective_failing_on_one_rank) {
  const int n = world_size(), me = world_rank();
  if (n < 2) return;
  const int bad = n / 2;
  MeshOptions o;
  o.dim_backends = {{"all", "faulty3"}};
  o.dim_options = {{"all", "fail=allreduce"}, {"all", "rank=" + std::to_string(bad)}, {"all", "message=boom"}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
  Communicator& c = m.communicator("all");
  std::int32_t x = 1;
  std::string what;
  Status s = run([&] { c.allreduce(&x, &x, 1, DataType::int32, ReduceOp::sum); }, &what);
  if (me == bad)
    expect(s, Status::backend, what, {"backend 'faulty3', allreduce: boom"});
  else
    expect(s, Status::backend, what,
           {"backend 'faulty3'", "failed on rank " + std::to_string(bad) + " of the group", "revoked"});
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
  s = run([&] { c.barrier(); }, &what);
  expect(s, Status::revoked, what, {"backend 'faulty3', barrier", "revoked after an earlier failure"});
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
}

// Each optional member of a v3 table left NULL on its own: the operation
// is UNSUPPORTED, naming it and the backend; every other one works.
BOOST_AUTO_TEST_CASE(each_optional_member_null) {
  const std::string path = std::string(TEST_PLUGIN_DIR) + "/libdevmesh-backend-example-v3.so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  BOOST_TEST_REQUIRE(h != nullptr, dlerror());
  const auto* base = static_cast<const devmesh_backend_v3_t*>(dlsym(h, DEVMESH_BACKEND_SYMBOL_V3));
  BOOST_TEST_REQUIRE(base != nullptr);
  struct Variant {
    const char* name;
    void (*null)(devmesh_backend_v3_t&);
  };
  const Variant variants[] = {
      {"allreduce", [](devmesh_backend_v3_t& t) { t.v2.v1.allreduce = nullptr; }},
      {"allgather", [](devmesh_backend_v3_t& t) { t.v2.v1.allgather = nullptr; }},
      {"reduce_scatter", [](devmesh_backend_v3_t& t) { t.v2.v1.reduce_scatter = nullptr; }},
      {"broadcast", [](devmesh_backend_v3_t& t) { t.v2.v1.broadcast = nullptr; }},
      {"alltoall", [](devmesh_backend_v3_t& t) { t.v2.v1.alltoall = nullptr; }},
      {"barrier", [](devmesh_backend_v3_t& t) { t.v2.v1.barrier = nullptr; }},
      {"send", [](devmesh_backend_v3_t& t) { t.v2.v1.send = nullptr; }},
      {"recv", [](devmesh_backend_v3_t& t) { t.v2.v1.recv = nullptr; }},
      {"sendrecv", [](devmesh_backend_v3_t& t) { t.v2.sendrecv = nullptr; }},
      {"isend", [](devmesh_backend_v3_t& t) {
         t.v2.isend = nullptr, t.v2.irecv = nullptr, t.v2.test = nullptr, t.v2.wait = nullptr;
         t.capabilities &= ~DEVMESH_BACKEND_CAP_NONBLOCKING;
       }},
      {"comm_native", [](devmesh_backend_v3_t& t) { t.v2.v1.comm_native = nullptr; }},
      {"last_mpi_error", [](devmesh_backend_v3_t& t) { t.v2.v1.last_mpi_error = nullptr; }},
      {"init_host", [](devmesh_backend_v3_t& t) { t.init_host = nullptr; }},
      {"reduce_supported", [](devmesh_backend_v3_t& t) { t.reduce_supported = nullptr; }},
      {"revoke", [](devmesh_backend_v3_t& t) {
         t.revoke = nullptr;  // and what it would state of one (revoke_capabilities_need_a_revoke)
         t.capabilities &= ~(DEVMESH_BACKEND_CAP_REVOKE_SPREADS | DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD);
       }},
  };
  static std::deque<devmesh_backend_v3_t> tables;  // registered tables outlive their meshes
  static std::deque<std::string> names;
  const int me = world_rank();
  for (const Variant& v : variants) {
    BOOST_TEST_CONTEXT("NULL " << v.name) {
      devmesh_backend_v3_t& t = tables.emplace_back(*base);
      v.null(t);
      t.v2.v1.name = names.emplace_back(std::string("null-") + v.name).c_str();
      // Registration takes a table's v1 member; its version says the rest follows.
      BOOST_TEST_REQUIRE(devmesh_register_backend(&t.v2.v1) == DEVMESH_SUCCESS, devmesh_last_error());
      Mesh m = mesh_with(t.v2.v1.name);
      Communicator& c = m.communicator("tp");
      const int peer = 0, from = 0;
      std::vector<std::int32_t> a(static_cast<std::size_t>(c.size()), me), b(a.size());
      const std::vector<std::pair<std::string, std::function<void()>>> ops = {
          {"allreduce", [&] { c.allreduce(a.data(), b.data(), 1, DataType::int32, ReduceOp::sum); }},
          {"allgather", [&] { c.allgather(a.data(), b.data(), 1, DataType::int32); }},
          {"reduce_scatter", [&] { c.reduce_scatter(a.data(), b.data(), 1, DataType::int32, ReduceOp::max); }},
          {"broadcast", [&] { c.broadcast(b.data(), 1, DataType::int32, 0); }},
          {"alltoall", [&] { c.alltoall(a.data(), b.data(), 1, DataType::int32); }},
          {"barrier", [&] { c.barrier(); }},
          {"sendrecv", [&] { c.sendrecv(a.data(), 1, DataType::int32, peer, b.data(), 1, DataType::int32, from); }},
          {"isend", [&] {
             Request r = c.irecv(b.data(), 1, DataType::int32, from);
             Request s = c.isend(a.data(), 1, DataType::int32, peer);
             r.wait();
             s.wait();
           }},
          // tp has one member (a (world, 1) mesh): messages to itself.
          // A refused half is completed by its non-blocking twin, so that
          // no message or request is left behind.
          {"send", [&] {
             Request r = c.irecv(b.data(), 1, DataType::int32, 0);
             try {
               c.send(a.data(), 1, DataType::int32, 0);
             } catch (...) {
               c.isend(a.data(), 1, DataType::int32, 0).wait();
               throw;
             }
             r.wait();
           }},
          {"recv", [&] {
             Request s = c.isend(a.data(), 1, DataType::int32, 0);
             try {
               c.recv(b.data(), 1, DataType::int32, 0);
             } catch (...) {
               c.irecv(b.data(), 1, DataType::int32, 0).wait();
               throw;
             }
             s.wait();
           }},
      };
      BOOST_TEST_REQUIRE(c.size() == 1);
      for (const auto& [op, f] : ops) {
        // The non-blocking exchanges need isend and irecv.
        if (std::string(v.name) == "isend" && (op == "send" || op == "recv")) continue;
        std::string what;
        const Status s = run(f, &what);
        const bool lacking = op == v.name;
        BOOST_TEST(static_cast<int>(s) == static_cast<int>(lacking ? Status::unsupported : Status::success),
                   op << ": " << what);
        // (the non-blocking exchange starts with irecv)
        const std::string named = op == "isend" ? "irecv" : op;
        if (lacking)
          BOOST_TEST(what.find(named + " is not supported by backend 'null-" + op + "'") != std::string::npos, what);
        BOOST_TEST(same_everywhere(static_cast<int>(s)));
      }
      if (std::string(v.name) == "comm_native") BOOST_TEST(c.native_handle() == nullptr);
    }
  }
  // Half of the non-blocking members is refused at registration, naming
  // what is missing.
  devmesh_backend_v3_t& t = tables.emplace_back(*base);
  t.v2.wait = nullptr;
  t.v2.v1.name = "null-wait";
  BOOST_TEST(devmesh_register_backend(&t.v2.v1) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("without wait") != std::string::npos, devmesh_last_error());
}

// Host discovery (two collectives over the parent, and a split) runs only
// for a mesh with a backend whose capabilities ask for the host-local rank:
// counted over MPI_COMM_WORLD by the PMPI layer, creation with a version 3
// backend that does not ask (the example, Gloo) costs what an MPI-only mesh
// does; a version 2 backend, which cannot say, still gets the discovery.
BOOST_AUTO_TEST_CASE(host_discovery_only_when_asked) {
  auto creation_collectives = [](const std::string& backend) {
    MeshOptions o;
    o.dim_backends = {{"tp", backend}};
    const long before = comm_counter::world_collectives();
    Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
    return comm_counter::world_collectives() - before;
  };
  const long mpi = creation_collectives("mpi");
  BOOST_TEST(mpi > 0);  // the creation agreement itself
  BOOST_TEST(creation_collectives("example-v3") == mpi);
  BOOST_TEST(creation_collectives("example-v2") > mpi);
#if HAVE_GLOO
  BOOST_TEST(creation_collectives("gloo") == mpi);
#endif
}
