// The NCCL backend where no GPU is usable (CI): selection per mesh and per
// dim, the unsupported path, device selection as a pure function, no GPU
// call at all for MPI-only meshes, and what the plugin's table states.
#define BOOST_TEST_MODULE nccl_cpu
#include "mpi_test.hpp"

#include <string>
#include <vector>

#include "devmesh/mesh.hpp"
#include "nccl/nccl_backend.hpp"
#ifdef DEVMESH_TEST_GPU_COUNTER
#include "gpu_call_counter.hpp"
#endif
#ifdef DEVMESH_NCCL_PLUGIN
#include <dlfcn.h>
#include <nccl.h>

#include "devmesh/backend_plugin.h"
#endif

using namespace devmesh;

namespace {

bool gpu_usable() {
  MeshOptions o;
  o.backend = "nccl";
  return status_of([&] { Mesh::create(MPI_COMM_SELF, {1}, {"x"}, o); }) == Status::success;
}

}  // namespace

BOOST_AUTO_TEST_CASE(device_selection_is_a_pure_function) {
  using detail::select_device;
  BOOST_TEST(select_device(-1, -1, 0, 4) == 0);
  BOOST_TEST(select_device(-1, -1, 5, 4) == 1);   // node-local rank modulo devices
  BOOST_TEST(select_device(-1, -1, 7, 8) == 7);
  BOOST_TEST(select_device(-1, 2, 5, 4) == 2);    // the caller's own choice wins
  BOOST_TEST(select_device(3, 2, 5, 4) == 3);     // an explicit request wins
  BOOST_TEST(status_of([] { select_device(4, -1, 0, 4); }) == Status::invalid_argument);
  BOOST_TEST(status_of([] { select_device(-5, -1, 0, 4); }) == Status::invalid_argument);
  std::string msg;
  BOOST_TEST(status_of([] { select_device(-1, -1, 0, 0); }, &msg) == Status::unsupported);
  BOOST_TEST(msg.find("CUDA device") != std::string::npos);
  // Every local rank of a host with 8 GPUs gets a different one.
  for (int r = 0; r < 8; ++r) BOOST_TEST(select_device(-1, -1, r, 8) == r);
}

// NVML's fabric answers, each against the domain (or none) it names.
BOOST_AUTO_TEST_CASE(nvlink_domain_is_a_pure_function) {
  using namespace detail;
  unsigned char uuid[16] = {};
  // No fabric: the query unsupported, or the state says so (an H100 or H200
  // in a host of its own).
  BOOST_TEST(nvlink_domain_of(nvml_not_supported, 0, 0, uuid, 0).id.empty());
  const NvlinkDomain none = nvlink_domain_of(nvml_success, fabric_not_supported, 0, uuid, 7);
  BOOST_TEST(none.id.empty());
  BOOST_TEST(none.why.find("no NVLink fabric") != std::string::npos);
  // Registration not done, or failed: no domain, and the reason says which.
  BOOST_TEST(nvlink_domain_of(nvml_success, fabric_in_progress, 0, uuid, 1).why.find("in progress") !=
             std::string::npos);
  BOOST_TEST(nvlink_domain_of(nvml_success, fabric_not_started, 0, uuid, 1).why.find("not started") !=
             std::string::npos);
  for (int i = 0; i < 16; ++i) uuid[i] = static_cast<unsigned char>(0x10 * (i % 16) + i);
  BOOST_TEST(nvlink_domain_of(nvml_success, fabric_completed, 999, uuid, 1).id.empty());
  // Complete: the UUID's 16 bytes as hex, then the clique.
  BOOST_TEST(nvlink_domain_of(nvml_success, fabric_completed, 0, uuid, 3).id ==
             "00112233445566778899aabbccddeeff.3");
  // One UUID, two cliques: two domains.
  BOOST_TEST(nvlink_domain_of(nvml_success, fabric_completed, 0, uuid, 4).id !=
             nvlink_domain_of(nvml_success, fabric_completed, 0, uuid, 3).id);
  unsigned char zero[16] = {};
  BOOST_TEST(nvlink_domain_of(nvml_success, fabric_completed, 0, zero, 3).id.empty());
  // Any other NVML error is one.
  BOOST_TEST(status_of([&] { nvlink_domain_of(2, 0, 0, uuid, 0); }) == Status::backend);
}

BOOST_AUTO_TEST_CASE(unknown_backend_names_are_invalid) {
  MeshOptions o;
  o.backend = "nosuch";
  std::string msg;
  BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }, &msg) == Status::invalid_argument);
  BOOST_TEST(msg.find("nosuch") != std::string::npos);
  MeshOptions p;
  p.dim_backends = {{"x", ""}};
  BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, p); }) == Status::invalid_argument);
}

BOOST_AUTO_TEST_CASE(nccl_mesh_is_unsupported_without_gpu) {
  if (gpu_usable()) return;  // covered by tests/gpu on a GPU machine
  MeshOptions o;
  o.backend = "nccl";
  std::string msg;
  const Status s = status_of([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &msg);
#ifdef DEVMESH_HAVE_NCCL
  BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::unsupported), msg);
  BOOST_TEST(msg.find("needs a CUDA device") != std::string::npos, msg);
#else
  // A build without the plugin: "nccl" is a backend nowhere to be found.
  BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::invalid_argument), msg);
  BOOST_TEST(msg.find("libdevmesh-backend-nccl.so") != std::string::npos, msg);
#endif
}

BOOST_AUTO_TEST_CASE(per_dim_override_is_checked_at_creation) {
  // Every backend a mesh names is loaded at creation: without a GPU a
  // per-dim "nccl" fails there, on every rank, before any communicator.
  MeshOptions o;
  o.dim_backends = {{"tp", "nccl"}};
  if (!gpu_usable()) {
    std::string msg;
    BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &msg) != Status::success);
    BOOST_TEST(msg.find("nccl") != std::string::npos, msg);
    return;
  }
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
  BOOST_TEST(m.backend("dp") == "mpi");
  BOOST_TEST(m.backend("tp") == "nccl");
  // A view naming the dim differently picks the default backend.
  BOOST_TEST(m["tp"].flatten("t2").backend() == "mpi");
}

BOOST_AUTO_TEST_CASE(nccl_options_are_checked_by_the_plugin) {
  if (!gpu_usable()) return;  // the plugin cannot be opened without a GPU
  MeshOptions o;
  o.backend = "nccl";
  for (const char* bad : {"init=fast", "timeout=0", "scalable_from=0", "device=-3", "colour=red"}) {
    o.backend_options = {bad};
    BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }) == Status::invalid_argument, bad);
  }
}

#ifdef DEVMESH_TEST_GPU_COUNTER
BOOST_AUTO_TEST_CASE(mpi_only_meshes_make_no_gpu_call) {
  const long before = gpu_call_counter::count();
  {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
    m.create_comms();
    for (const std::string d : {"a", "b"}) {
      Communicator& c = m.communicator(d);
      double x = 1, y = 0;
      c.allreduce(&x, &y, 1, DataType::float64, ReduceOp::sum);
    }
    m.flatten().communicator().barrier();
  }
  BOOST_TEST(gpu_call_counter::count() == before);
  // The counter does see the NCCL plugin probing for a device (once per
  // process, when "nccl" is first named: gpu_usable() did).
  BOOST_TEST(gpu_call_counter::count() > 0);
}
#endif

#ifdef DEVMESH_NCCL_PLUGIN
namespace {

void* nccl_plugin() {
  void* h = dlopen(DEVMESH_NCCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
  BOOST_TEST_REQUIRE(h != nullptr, (h ? "" : dlerror()));
  return h;
}

// The built plugin's version 4 table, loaded as the core loads it (no GPU
// needed): the newest symbol, which a core knowing version 4 takes first.
const devmesh_backend_v4_t& nccl_table_v4() {
  const auto* t = static_cast<const devmesh_backend_v4_t*>(dlsym(nccl_plugin(), DEVMESH_BACKEND_SYMBOL_V4));
  BOOST_TEST_REQUIRE(t != nullptr);
  BOOST_TEST_REQUIRE(t->v3.v2.v1.abi_version == DEVMESH_BACKEND_ABI_VERSION_4);
  return *t;
}

// Its version 3 table, for cores that know no newer one.
const devmesh_backend_v3_t& nccl_table_v3() {
  const auto* t = static_cast<const devmesh_backend_v3_t*>(dlsym(nccl_plugin(), DEVMESH_BACKEND_SYMBOL_V3));
  BOOST_TEST_REQUIRE(t != nullptr);
  BOOST_TEST_REQUIRE(t->v2.v1.abi_version == DEVMESH_BACKEND_ABI_VERSION_3);
  return *t;
}

const devmesh_backend_v3_t& nccl_table() { return nccl_table_v4().v3; }

// Version 4's members, each with its capability bit.
struct V4Member {
  const char* name;
  unsigned long long bit;
  bool present;
};
std::vector<V4Member> v4_members(const devmesh_backend_v4_t& t) {
  const unsigned long long nbc = DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES;
  return {{"alltoallv", DEVMESH_BACKEND_CAP_ALLTOALLV, t.alltoallv != nullptr},
          {"allgatherv", DEVMESH_BACKEND_CAP_ALLGATHERV, t.allgatherv != nullptr},
          {"reduce_scatterv", DEVMESH_BACKEND_CAP_REDUCE_SCATTERV, t.reduce_scatterv != nullptr},
          {"gather", DEVMESH_BACKEND_CAP_GATHER, t.gather != nullptr},
          {"gatherv", DEVMESH_BACKEND_CAP_GATHERV, t.gatherv != nullptr},
          {"scatter", DEVMESH_BACKEND_CAP_SCATTER, t.scatter != nullptr},
          {"scatterv", DEVMESH_BACKEND_CAP_SCATTERV, t.scatterv != nullptr},
          {"reduce", DEVMESH_BACKEND_CAP_REDUCE, t.reduce != nullptr},
          {"iallreduce", nbc, t.iallreduce != nullptr},
          {"iallgather", nbc, t.iallgather != nullptr},
          {"ireduce_scatter", nbc, t.ireduce_scatter != nullptr},
          {"ibroadcast", nbc, t.ibroadcast != nullptr},
          {"ialltoall", nbc, t.ialltoall != nullptr},
          {"ibarrier", nbc, t.ibarrier != nullptr},
          {"batch", DEVMESH_BACKEND_CAP_BATCH, t.batch != nullptr},
          {"topology", DEVMESH_BACKEND_CAP_TOPOLOGY, t.topology != nullptr}};
}

}  // namespace

// Version 4: every member there, the eleven capability bits stated (and the
// requests' test and wait with them); the version 3 table beside it is
// the same plugin, without version 4's bits.
BOOST_AUTO_TEST_CASE(nccl_plugin_states_every_version_4_member) {
  const devmesh_backend_v4_t& t = nccl_table_v4();
  const unsigned long long caps = t.v3.capabilities;
  for (const V4Member& m : v4_members(t)) {
    BOOST_TEST(m.present, m.name << " is missing");
    BOOST_TEST((caps & m.bit) != 0u, m.name << "'s capability bit is not stated");
  }
  unsigned long long bits = 0;
  for (int b = 7; b <= 17; ++b) bits |= 1ull << b;
  BOOST_TEST((caps & bits) == bits);
  BOOST_TEST((caps & DEVMESH_BACKEND_CAP_NONBLOCKING) != 0u);
  BOOST_TEST((caps & DEVMESH_BACKEND_CAP_STREAMS) != 0u);
  BOOST_TEST(t.v3.v2.test != nullptr);
  BOOST_TEST(t.v3.v2.wait != nullptr);
  const devmesh_backend_v3_t& old = nccl_table_v3();
  BOOST_TEST((old.capabilities & bits) == 0u);
  BOOST_TEST((old.capabilities | bits) == caps);
  BOOST_TEST(std::string(old.v2.v1.name) == std::string(t.v3.v2.v1.name));
  BOOST_TEST((old.v2.v1.alltoall == t.v3.v2.v1.alltoall && old.v2.wait == t.v3.v2.wait &&
              old.comm_prepare == t.v3.comm_prepare && old.revoke == t.v3.revoke));
}

// Every NCCL communicator can be revoked (what a failed operation and a
// fault-tolerant mesh need); the revoke is local to the rank, and may run
// beside an operation on another thread where it is ncclCommRevoke (NCCL
// >= 2.28, this test compiled against the same nccl.h as the plugin).
BOOST_AUTO_TEST_CASE(nccl_plugin_states_a_local_revoke) {
  const devmesh_backend_v3_t& t = nccl_table();
  BOOST_TEST(t.revoke != nullptr);
  BOOST_TEST((t.capabilities & DEVMESH_BACKEND_CAP_REVOKE_SPREADS) == 0u);
  const bool any_thread = (t.capabilities & DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD) != 0;
  BOOST_TEST(any_thread == (NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)));
}

namespace {

// Every version 4 member of a revoked communicator fails with the revoke's
// status before touching NCCL or CUDA (no buffer is read: NULL buffers
// with counts would crash a call that did), blocking or started, and
// writes no request.
void revoked_members_refuse(const devmesh_backend_v4_t& t, void* comm, int expected) {
  const devmesh_backend_v1_t& v1 = t.v3.v2.v1;
  const std::size_t counts[1] = {4}, displs[1] = {0};
  devmesh_backend_p2p_t op{1, 0, nullptr, 4, DEVMESH_FLOAT32};
  const int f = DEVMESH_FLOAT32, sum = DEVMESH_SUM;
  const int blocking[] = {
      t.alltoallv(comm, nullptr, counts, displs, nullptr, counts, displs, f, nullptr, nullptr),
      t.allgatherv(comm, nullptr, 4, nullptr, counts, displs, f, nullptr, nullptr),
      t.reduce_scatterv(comm, nullptr, nullptr, counts, f, sum, nullptr, nullptr),
      t.gather(comm, nullptr, nullptr, 4, f, 0, nullptr, nullptr),
      t.gatherv(comm, nullptr, 4, nullptr, counts, displs, f, 0, nullptr, nullptr),
      t.scatter(comm, nullptr, nullptr, 4, f, 0, nullptr, nullptr),
      t.scatterv(comm, nullptr, counts, displs, nullptr, 4, f, 0, nullptr, nullptr),
      t.reduce(comm, nullptr, nullptr, 4, f, sum, 0, nullptr, nullptr),
      t.batch(comm, &op, 1, nullptr, nullptr),
  };
  for (const int rc : blocking) BOOST_TEST(rc == expected, v1.last_error());
  void* made = reinterpret_cast<void*>(0x1);
  const int started[] = {
      t.iallreduce(comm, nullptr, nullptr, 4, f, sum, nullptr, &made),
      t.iallgather(comm, nullptr, nullptr, 4, f, nullptr, &made),
      t.ireduce_scatter(comm, nullptr, nullptr, 4, f, sum, nullptr, &made),
      t.ibroadcast(comm, nullptr, 4, f, 0, nullptr, &made),
      t.ialltoall(comm, nullptr, nullptr, 4, f, nullptr, &made),
      t.ibarrier(comm, nullptr, &made),
      t.alltoallv(comm, nullptr, counts, displs, nullptr, counts, displs, f, nullptr, &made),
      t.gatherv(comm, nullptr, 4, nullptr, counts, displs, f, 0, nullptr, &made),
      t.reduce(comm, nullptr, nullptr, 4, f, sum, 0, nullptr, &made),
      t.batch(comm, &op, 1, nullptr, &made),
  };
  for (const int rc : started) BOOST_TEST(rc == expected, v1.last_error());
  BOOST_TEST(made == reinterpret_cast<void*>(0x1));  // *request written only on success
  BOOST_TEST(std::string(v1.last_error()).find("revoked") != std::string::npos, v1.last_error());
}

}  // namespace

// On a GPU: revoke is idempotent and keeps the first status, which later
// operations fail with (REVOKED for a revoke without a failure behind it).
BOOST_AUTO_TEST_CASE(nccl_revoke_is_idempotent_and_keeps_its_status) {
  if (!gpu_usable()) return;  // no communicator without a GPU
  const devmesh_backend_v3_t& t = nccl_table();
  const devmesh_backend_v1_t& v1 = t.v2.v1;
  BOOST_TEST_REQUIRE(t.init_host(devmesh_backend_host()) == DEVMESH_SUCCESS, v1.last_error());
  void* instance = nullptr;
  BOOST_TEST_REQUIRE(v1.open(0, nullptr, nullptr, &instance) == DEVMESH_SUCCESS, v1.last_error());
  devmesh_backend_group_t g{};
  g.size = sizeof g;
  g.group = MPI_COMM_SELF;
  g.root = MPI_COMM_NULL;
  g.host_local_rank = 0;
  for (const int first : {DEVMESH_SUCCESS, DEVMESH_ERR_PROC_FAILED}) {
    BOOST_TEST_CONTEXT("first revoke with status " << first) {
      void* prepared = nullptr;
      void* comm = nullptr;
      BOOST_TEST_REQUIRE(t.comm_prepare(instance, &g, &prepared) == DEVMESH_SUCCESS, v1.last_error());
      BOOST_TEST_REQUIRE(t.comm_connect(prepared, &comm) == DEVMESH_SUCCESS, v1.last_error());
      BOOST_TEST(v1.barrier(comm, nullptr) == DEVMESH_SUCCESS, v1.last_error());
      BOOST_TEST(t.revoke(comm, first) == DEVMESH_SUCCESS, v1.last_error());
      BOOST_TEST(t.revoke(comm, DEVMESH_ERR_TIMEOUT) == DEVMESH_SUCCESS, v1.last_error());
      const int expected = first == DEVMESH_SUCCESS ? DEVMESH_ERR_REVOKED : first;
      for (int i = 0; i < 2; ++i) {
        BOOST_TEST(v1.barrier(comm, nullptr) == expected);
        BOOST_TEST(std::string(v1.last_error()).find("revoked") != std::string::npos, v1.last_error());
      }
      revoked_members_refuse(nccl_table_v4(), comm, expected);
      v1.comm_destroy(comm);
    }
  }
  v1.close(instance);
}
#endif
