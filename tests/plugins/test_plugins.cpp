// Finding and loading backend plugins: every way a plugin can be missing or
// unusable gives its status on every rank, through C++ and C, with the
// reason in the message and the output handle untouched; a backend linked
// into the program registers in process.
#define BOOST_TEST_MODULE plugins
#include "mpi_test.hpp"

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "comm_counter.hpp"
#include "devmesh/backend_plugin.h"
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

devmesh_t const sentinel = reinterpret_cast<devmesh_t>(std::uintptr_t{0x5e17});

// The C++ and the C creation with `backend` as the default backend, or as
// tp's: the status and a piece of the message on every rank, nothing made.
void expect_failure(const std::string& backend, Status want, const std::string& needle) {
  const long before = comm_counter::live();
  for (const bool per_dim : {false, true}) {
    BOOST_TEST_CONTEXT("backend " << backend << (per_dim ? " for tp" : " by default")) {
      MeshOptions o;
      if (per_dim)
        o.dim_backends = {{"tp", backend}};
      else
        o.backend = backend;
      Status got = Status::success;
      std::string what;
      try {
        Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
      } catch (const Error& e) {
        got = e.status();
        what = e.what();
      }
      BOOST_TEST(static_cast<int>(got) == static_cast<int>(want), what);
      BOOST_TEST(what.find(needle) != std::string::npos, what);
      BOOST_TEST(same_everywhere(static_cast<int>(got)));

      devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
      const std::string dims = "tp=" + backend;
      if (per_dim)
        cfg.dim_backends = dims.c_str();
      else
        cfg.backend = backend.c_str();
      int shape[2] = {0, 1};
      const char* names[2] = {"dp", "tp"};
      devmesh_t out = sentinel;
      const int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &out);
      BOOST_TEST(rc == static_cast<int>(want), devmesh_last_error());
      BOOST_TEST(std::string(devmesh_last_error()).find(needle) != std::string::npos, devmesh_last_error());
      BOOST_TEST(out == sentinel);
      BOOST_TEST(same_everywhere(rc));
    }
  }
  BOOST_TEST(comm_counter::live() == before);
}

}  // namespace

BOOST_AUTO_TEST_CASE(no_such_plugin) {
  expect_failure("nosuch", Status::invalid_argument, "no libdevmesh-backend-nosuch.so in ");
  expect_failure("nosuch", Status::invalid_argument, "tests/plugins");  // where it looked
}

BOOST_AUTO_TEST_CASE(empty_shared_object) {
  expect_failure("empty", Status::unsupported, "exports none of devmesh_backend_v4, devmesh_backend_v3, devmesh_backend_v2, devmesh_backend_v1");
}

BOOST_AUTO_TEST_CASE(missing_dependency) {
  expect_failure("missingdep", Status::unsupported, "libdevmesh_test_absent.so");
}

BOOST_AUTO_TEST_CASE(too_new_abi) {
  expect_failure("abi99", Status::unsupported, "ABI version is 99 but this devmesh accepts 1");
}

BOOST_AUTO_TEST_CASE(failing_initialisation) {
  expect_failure("initfails", Status::unsupported, "built to fail its initialisation");
}

BOOST_AUTO_TEST_CASE(name_differs_from_the_file) {
  expect_failure("misnamed", Status::unsupported, "it calls itself 'example'");
}

BOOST_AUTO_TEST_CASE(found_on_some_ranks_only) {
  // Rank 0 cannot see the plugin directory: every rank fails with rank 0's
  // status, rank 0 with the reason, the others naming rank 0. "spare" is
  // loaded nowhere else in this program (a loaded plugin stays loaded).
  if (world_size() < 2) return;
  const std::string saved = std::getenv("DEVMESH_BACKEND_PATH");
  if (world_rank() == 0) setenv("DEVMESH_BACKEND_PATH", "/nonexistent", 1);
  MeshOptions o;
  o.dim_backends = {{"x", "spare"}};
  o.dim_options = {{"x", "scale=2"}};
  Status got = Status::success;
  std::string what;
  try {
    Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o);
  } catch (const Error& e) {
    got = e.status();
    what = e.what();
  }
  setenv("DEVMESH_BACKEND_PATH", saved.c_str(), 1);
  BOOST_TEST(static_cast<int>(got) == static_cast<int>(Status::invalid_argument), what);
  BOOST_TEST(what.find("unknown backend 'spare'") != std::string::npos, what);
  if (world_rank() != 0) BOOST_TEST(what.find("(on rank 0)") != std::string::npos, what);
  // Different names on different ranks are a disagreement, not a failure.
  MeshOptions p;
  p.backend = world_rank() == 0 ? "nosuch2" : "example";
  try {
    Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, p);
    BOOST_FAIL("no error");
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::inconsistent));
    BOOST_TEST(std::string(e.what()).find("different backends on rank 0 and rank 1") != std::string::npos,
               e.what());
  }
}

// The example plugin exports only a version 1 table: it still loads and
// serves what it has, and the operations version 2 added fail with
// UNSUPPORTED naming it and the ABI version, through C++ and C alike (even
// with an MPI_PROC_NULL peer, so the answer does not depend on the rank).
BOOST_AUTO_TEST_CASE(version_1_plugin_lacks_nonblocking) {
  MeshOptions o;
  o.dim_backends = {{"tp", "example"}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
  Communicator& tp = m.communicator("tp");
  BOOST_TEST(tp.backend() == "example");
  tp.barrier();
  int32_t x = 3, y = 4;
  auto unsupported = [](const std::function<void()>& f, const char* op) {
    std::string what;
    const Status s = status_of(f, &what);
    BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::unsupported), op);
    BOOST_TEST(what.find(op) != std::string::npos, what);
    BOOST_TEST(what.find("'example'") != std::string::npos, what);
    BOOST_TEST(what.find("ABI v1") != std::string::npos, what);
  };
  for (int peer : {0, int{MPI_PROC_NULL}}) {
    unsupported([&] { (void)tp.isend(&x, 1, DataType::int32, peer); }, "isend");
    unsupported([&] { (void)tp.irecv(&y, 1, DataType::int32, peer); }, "irecv");
    unsupported([&] { tp.sendrecv(&x, 1, DataType::int32, peer, &y, 1, DataType::int32, peer); }, "sendrecv");
  }
  BOOST_TEST(y == 4);
  // The whole message, as it was before version 4 of the interface.
  std::string what;
  (void)status_of([&] { (void)tp.isend(&x, 1, DataType::int32, 0); }, &what);
  BOOST_TEST(what == "isend is not supported by backend 'example': it was built for ABI v1 of the plugin interface, "
                     "which has no isend");

  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.dim_backends = "tp=example";
  const int shape[2] = {1, world_size()};
  const char* names[2] = {"dp", "tp"};
  devmesh_t c = nullptr;
  BOOST_TEST_REQUIRE(devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &c) == DEVMESH_SUCCESS,
                     devmesh_last_error());
  static int sentinel;
  const auto untouched = reinterpret_cast<devmesh_request_t>(&sentinel);
  devmesh_request_t req = untouched;
  BOOST_TEST(devmesh_isend(c, "tp", &x, 1, DEVMESH_INT32, 0, nullptr, &req) == DEVMESH_ERR_UNSUPPORTED);
  const std::string message = devmesh_last_error();
  BOOST_TEST(message.find("devmesh_isend") != std::string::npos, message);
  BOOST_TEST(message.find("'example'") != std::string::npos, message);
  BOOST_TEST(message.find("ABI v1") != std::string::npos, message);
  BOOST_TEST(devmesh_irecv(c, "tp", &y, 1, DEVMESH_INT32, MPI_PROC_NULL, nullptr, &req) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(devmesh_sendrecv(c, "tp", &x, 1, DEVMESH_INT32, 0, &y, 1, DEVMESH_INT32, 0, nullptr) ==
             DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST((req == untouched));
  BOOST_TEST(y == 4);
  devmesh_destroy(&c);
}

// A backend linked into this program: only the mandatory functions and a
// barrier, over the group's MPI communicator.
namespace inproc {
thread_local const char* last = "";
const char* last_error() { return last; }
int open(int n, const char* const*, const char* const*, void** inst) {
  if (n) {
    last = "takes no options";
    return DEVMESH_ERR_INVALID_ARGUMENT;
  }
  *inst = nullptr;
  return DEVMESH_SUCCESS;
}
void close(void*) {}
int comm_create(void*, const devmesh_backend_group_t* g, void** comm) {
  *comm = new MPI_Comm(g->group);
  return DEVMESH_SUCCESS;
}
void comm_destroy(void* comm) { delete static_cast<MPI_Comm*>(comm); }
int barrier(void* comm, void*) {
  return MPI_Barrier(*static_cast<MPI_Comm*>(comm)) == MPI_SUCCESS ? DEVMESH_SUCCESS : DEVMESH_ERR_BACKEND;
}
const devmesh_backend_v1_t table = {
    DEVMESH_BACKEND_ABI_VERSION, "inproc", nullptr, nullptr, nullptr, last_error, open, close, comm_create,
    comm_destroy, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, barrier, nullptr, nullptr, nullptr,
};
}  // namespace inproc

BOOST_AUTO_TEST_CASE(registered_in_process) {
  BOOST_TEST(devmesh_register_backend(&inproc::table) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(devmesh_register_backend(&inproc::table) == DEVMESH_SUCCESS);  // the same table again
  devmesh_backend_v1_t other = inproc::table;
  BOOST_TEST(devmesh_register_backend(&other) == DEVMESH_ERR_DUPLICATE_NAME);
  other.name = "mpi";
  BOOST_TEST(devmesh_register_backend(&other) == DEVMESH_ERR_INVALID_ARGUMENT);
  other = inproc::table;
  other.comm_create = nullptr;
  BOOST_TEST(devmesh_register_backend(&other) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("comm_create") != std::string::npos, devmesh_last_error());
  BOOST_TEST(devmesh_register_backend(nullptr) == DEVMESH_ERR_INVALID_ARGUMENT);

  MeshOptions o;
  o.dim_backends = {{"tp", "inproc"}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
  Communicator& tp = m.communicator("tp");
  BOOST_TEST(tp.backend() == "inproc");
  tp.barrier();
  // What the table leaves out is unsupported, naming the operation.
  int x = 1, y = 0;
  try {
    tp.allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
    BOOST_FAIL("no error");
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::unsupported));
    BOOST_TEST(std::string(e.what()) == "allreduce is not supported by backend 'inproc'");
  }
  BOOST_TEST(tp.native_handle() == nullptr);
}

// A version 2 table is registered through its v1 member; what it leaves
// out is unsupported, naming the operation. An unknown version is refused.
namespace inproc2 {
const devmesh_backend_v2_t table = {
    {DEVMESH_BACKEND_ABI_VERSION_2, "inproc2", nullptr, nullptr, nullptr, inproc::last_error, inproc::open,
     inproc::close, inproc::comm_create, inproc::comm_destroy, nullptr, nullptr, nullptr, nullptr, nullptr,
     nullptr, inproc::barrier, nullptr, nullptr, nullptr},
    nullptr, nullptr, nullptr, nullptr, nullptr,
};
}  // namespace inproc2

BOOST_AUTO_TEST_CASE(registered_version_2) {
  devmesh_backend_v1_t future = inproc2::table.v1;
  future.abi_version = 99;
  future.name = "inproc99";
  BOOST_TEST(devmesh_register_backend(&future) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("ABI version is 99") != std::string::npos, devmesh_last_error());
  BOOST_TEST(devmesh_register_backend(&inproc2::table.v1) == DEVMESH_SUCCESS, devmesh_last_error());
  MeshOptions o;
  o.dim_backends = {{"tp", "inproc2"}};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
  Communicator& tp = m.communicator("tp");
  tp.barrier();
  int x = 1;
  std::string what;
  BOOST_TEST(static_cast<int>(status_of([&] { (void)tp.isend(&x, 1, DataType::int32, 0); }, &what)) ==
             static_cast<int>(Status::unsupported));
  BOOST_TEST(what == "isend is not supported by backend 'inproc2'");
}
