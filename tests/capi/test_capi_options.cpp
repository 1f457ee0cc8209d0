// The C API's options and hosts: devmesh_create_ex / devmesh_config_t
// (backend per mesh and per dim with their options, ABI growth, every bad
// config, rank lists and host-aware ordering), devmesh_backend_comm,
// devmesh_create_hosts and devmesh_dim_within_hosts with simulated hosts
// (DEVMESH_HOST_ID).
#define BOOST_TEST_MODULE capi_options
#include "mpi_test.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "comm_counter.hpp"
#include "devmesh/devmesh.h"

namespace {

devmesh_t const sentinel = reinterpret_cast<devmesh_t>(std::uintptr_t{0x5e17});

// A failing create: the status, the message, the same status on every
// rank, the output untouched, nothing leaked.
void expect_create_error(const devmesh_config_t* cfg, int want, const std::string& needle) {
  const long before = comm_counter::live();
  int shape[2] = {0, 1};
  const char* names[2] = {"dp", "tp"};
  devmesh_t out = sentinel;
  const int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, cfg, &out);
  BOOST_TEST(rc == want, "status " << rc << "; last error: " << devmesh_last_error());
  BOOST_TEST(std::string(devmesh_last_error()).find(needle) != std::string::npos, devmesh_last_error());
  BOOST_TEST(out == sentinel);
  BOOST_TEST(same_everywhere(rc));
  BOOST_TEST(comm_counter::live() == before);
}

// Simulates `hosts` hosts on this machine: block or cyclic placement.
void simulate_hosts(int hosts, bool cyclic) {
  const int n = world_size(), r = world_rank();
  const int host = cyclic ? r % hosts : r / (n / hosts);
  setenv("DEVMESH_HOST_ID", ("node" + std::to_string(host)).c_str(), 1);
}

}  // namespace

BOOST_AUTO_TEST_CASE(null_config_and_mpi_backend) {
  int shape[2] = {0, 1};
  const char* names[2] = {"dp", "tp"};
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, nullptr, &m) == DEVMESH_SUCCESS);
  devmesh_destroy(&m);
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "mpi";
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &m) == DEVMESH_SUCCESS);
  MPI_Comm dp;
  BOOST_TEST(devmesh_comm(m, "dp", &dp) == DEVMESH_SUCCESS);
  BOOST_TEST(static_cast<int>(members(dp).size()) == world_size());
  // The MPI backend's native handle is the dim's communicator itself.
  void* h = nullptr;
  BOOST_TEST(devmesh_backend_comm(m, "dp", "mpi", &h) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(*static_cast<MPI_Comm*>(h) == dp);
  void* untouched = &h;
  BOOST_TEST(devmesh_backend_comm(m, "dp", "nccl", &untouched) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("runs on backend 'mpi', not 'nccl'") != std::string::npos,
             devmesh_last_error());
  BOOST_TEST(untouched == &h);
  const char* name = nullptr;
  BOOST_TEST(devmesh_dim_backend(m, "tp", &name) == DEVMESH_SUCCESS);
  BOOST_TEST(std::string(name) == "mpi");
  devmesh_destroy(&m);
}

BOOST_AUTO_TEST_CASE(nccl_backend_is_unsupported_here) {
  // Without a GPU, or without the NCCL plugin in this build, "nccl" cannot
  // be used: which of the two is in the message.
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "nccl";
  int shape[1] = {0};
  const char* names[1] = {"x"};
  devmesh_t out = sentinel;
  const int rc = devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &out);
  BOOST_TEST((rc == DEVMESH_ERR_UNSUPPORTED || rc == DEVMESH_ERR_INVALID_ARGUMENT), devmesh_last_error());
  BOOST_TEST(std::string(devmesh_last_error()).find("nccl") != std::string::npos, devmesh_last_error());
  BOOST_TEST(out == sentinel);
  BOOST_TEST(same_everywhere(rc));
}

BOOST_AUTO_TEST_CASE(per_dim_plugin_with_options) {
  // tp runs on the example plugin (tests/install/backend), whose scale
  // option multiplies allreduce results: the option reached the backend.
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.dim_backends = "tp=example";
  cfg.dim_options = "tp:scale=3,label=rank";
  int shape[2] = {0, 1};
  const char* names[2] = {"dp", "tp"};
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &m) == DEVMESH_SUCCESS, devmesh_last_error());
  const char* name = nullptr;
  BOOST_TEST(devmesh_dim_backend(m, "tp", &name) == DEVMESH_SUCCESS);
  BOOST_TEST(std::string(name) == "example");
  BOOST_TEST(devmesh_dim_backend(m, "dp", &name) == DEVMESH_SUCCESS);
  BOOST_TEST(std::string(name) == "mpi");
  // The example backend works on its own duplicate of tp's MPI group.
  MPI_Comm tp;
  BOOST_TEST(devmesh_comm(m, "tp", &tp) == DEVMESH_SUCCESS);
  void* h = nullptr;
  BOOST_TEST(devmesh_backend_comm(m, "tp", "example", &h) == DEVMESH_SUCCESS, devmesh_last_error());
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(*static_cast<MPI_Comm*>(h), tp, &cmp);
  BOOST_TEST(cmp == MPI_CONGRUENT);
  devmesh_destroy(&m);
}

BOOST_AUTO_TEST_CASE(bad_configs) {
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.magic = 0;
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "DEVMESH_CONFIG_INITIALIZER");
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.size = 3;
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "size");
  for (const char* bad : {"tp", "=nccl", "tp=", "tp=nccl,", "tp=nccl,,dp=mpi"}) {
    cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.dim_backends = bad;
    expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "dim");
  }
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "nosuch";
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "unknown backend 'nosuch'");
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.dim_backends = "tp=ucc";
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "unknown backend 'ucc'");
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "../x";
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "a backend name is 1 to 64");
  // Options: malformed, unknown to the backend, refused by the backend.
  const std::pair<const char*, const char*> bad_options[] = {
      {"scale", "'scale' is not of the form key=value"},
      {"=3", "'=3' is not of the form key=value"},
      {"scale=1,,label=x", "backend_options has an empty entry"},
      {"scale=1,scale=2", "'scale' is given twice"},
      {"scale=-1", "scale needs a positive integer"},
  };
  for (const auto& [bad, why] : bad_options) {
    cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.backend = "example";
    cfg.backend_options = bad;
    expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, why);
  }
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "example";
  cfg.backend_options = "colour=red";
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "no option 'colour'");
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend_options = "anything=1";  // "mpi" takes none
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "backend 'mpi', options: takes no options (got");
  for (const char* bad : {"tp", "tp:", ":scale=1", "tp:scale=1;;dp:x=1"}) {
    cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.dim_backends = "tp=example";
    cfg.dim_options = bad;
    expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "dim_options");
  }
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.comm_errors = 7;
  expect_create_error(&cfg, DEVMESH_ERR_INVALID_ARGUMENT, "comm_errors");
  // One rank's config differs: INCONSISTENT on every rank, naming what.
  if (world_size() > 1) {
    cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.dim_backends = world_rank() == 0 ? "dp=mpi" : nullptr;
    expect_create_error(&cfg, DEVMESH_ERR_INCONSISTENT, "different backends on rank 0 and rank 1");
    cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.backend = "example";
    cfg.backend_options = world_rank() == world_size() - 1 ? "scale=2" : "scale=1";
    expect_create_error(&cfg, DEVMESH_ERR_INCONSISTENT,
                        "different backend options on rank 0 and rank " + std::to_string(world_size() - 1));
    cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.magic = world_rank() == 0 ? 1u : DEVMESH_CONFIG_MAGIC;
    expect_create_error(&cfg, DEVMESH_ERR_INCONSISTENT, "different arguments (as checked by the interface called) on rank 0 and rank 1");
  }
}

// dim_backends and dim_options name dims of the mesh: a typo, or a dim that
// only a later flatten would make, is UNKNOWN_DIM on every rank, naming
// every such entry, instead of being ignored.
BOOST_AUTO_TEST_CASE(per_dim_names_must_be_dims_of_the_mesh) {
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.dim_backends = "dp=mpi,Tp=example";
  expect_create_error(&cfg, DEVMESH_ERR_UNKNOWN_DIM, "dim_backends 'Tp' names no dim of the mesh (its dims: dp, tp)");
  cfg.dim_backends = "dp_tp=example,all=mpi";
  expect_create_error(&cfg, DEVMESH_ERR_UNKNOWN_DIM, "dim_backends 'dp_tp', dim_backends 'all' name no dim");
  cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.dim_backends = "tp=example";
  cfg.dim_options = "tp:scale=2;zz:scale=3";
  expect_create_error(&cfg, DEVMESH_ERR_UNKNOWN_DIM, "dim_options 'zz' names no dim");
}

namespace {
std::string backend_of(devmesh_t m, const char* dim) {
  const char* name = nullptr;
  if (devmesh_dim_backend(m, dim, &name) != DEVMESH_SUCCESS) return std::string("? ") + devmesh_last_error();
  return name;
}
int allreduce_one(devmesh_t m, const char* dim) {
  int one = 1, sum = -1;
  const int rc = devmesh_allreduce(m, dim, &one, &sum, 1, DEVMESH_INT32, DEVMESH_SUM, nullptr);
  BOOST_TEST(rc == DEVMESH_SUCCESS, devmesh_last_error());
  return sum;
}
}  // namespace

// A flattened or unflattened dim gets its backend where it is made
// (devmesh_flatten_ex, devmesh_unflatten_ex) and keeps it in every later
// view of it. The example plugin's scale option multiplies allreduce
// results, which shows which backend and options ran.
BOOST_AUTO_TEST_CASE(flattened_and_unflattened_dims_get_their_backend_where_made) {
  const int n = world_size();
  int shape[2] = {0, 1};
  const char* names[2] = {"dp", "tp"};
  devmesh_t m = nullptr, flat = nullptr, again = nullptr, plain = nullptr, split = nullptr;
  BOOST_TEST_REQUIRE(devmesh_create(MPI_COMM_WORLD, 2, shape, names, &m) == DEVMESH_SUCCESS);
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "example";
  cfg.backend_options = "scale=3";
  BOOST_TEST_REQUIRE(devmesh_flatten_ex(m, "all", &cfg, &flat) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(backend_of(flat, nullptr) == "example");
  BOOST_TEST(allreduce_one(flat, nullptr) == 3 * n);
  // Sliced from the root later, and flattened again without a config: the
  // same dim, the same backend.
  const char* all[1] = {"all"};
  BOOST_TEST(devmesh_slice(m, 1, all, &again) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(backend_of(again, "all") == "example");
  BOOST_TEST(devmesh_flatten(m, "all", &plain) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(backend_of(plain, "all") == "example");
  BOOST_TEST(allreduce_one(plain, "all") == 3 * n);
  devmesh_destroy(&plain);
  // The same layout under the default name, made without a backend: the
  // mesh's default.
  BOOST_TEST(devmesh_flatten(m, nullptr, &plain) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(backend_of(plain, "dp_tp") == "mpi");
  BOOST_TEST(allreduce_one(plain, "dp_tp") == n);
  devmesh_destroy(&plain);
  // A dim keeps the backend it was first made with; a root dim the mesh's.
  devmesh_t out = sentinel;
  devmesh_config_t other = DEVMESH_CONFIG_INITIALIZER;
  other.backend = "example";
  BOOST_TEST(devmesh_flatten_ex(m, "all", &other, &out) == DEVMESH_ERR_DUPLICATE_NAME);
  BOOST_TEST(std::string(devmesh_last_error()).find("dim 'all' (" ) != std::string::npos, devmesh_last_error());
  BOOST_TEST(std::string(devmesh_last_error()).find("runs on backend 'example' with scale=3 already") !=
                 std::string::npos, devmesh_last_error());
  BOOST_TEST(out == sentinel);
  const char* tp[1] = {"tp"};
  devmesh_t tpv = nullptr;
  BOOST_TEST(devmesh_slice(m, 1, tp, &tpv) == DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_flatten_ex(tpv, "tp", &other, &out) == DEVMESH_ERR_DUPLICATE_NAME, devmesh_last_error());
  BOOST_TEST(std::string(devmesh_last_error()).find("runs on backend 'mpi' already") != std::string::npos,
             devmesh_last_error());
  BOOST_TEST(out == sentinel);
  devmesh_destroy(&tpv);
  // Per-dim fields name the dims the call makes: the default name here.
  devmesh_config_t named = DEVMESH_CONFIG_INITIALIZER;
  named.dim_backends = "dp_tp=example";
  const char* dp[1] = {"dp"};
  devmesh_t dpv = nullptr, dpf = nullptr;
  BOOST_TEST(devmesh_slice(m, 1, dp, &dpv) == DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_flatten_ex(dpv, nullptr, &named, &dpf) == DEVMESH_ERR_UNKNOWN_DIM);
  BOOST_TEST(std::string(devmesh_last_error()).find("dim_backends 'dp_tp': not a dim this call makes (it makes: dp)") !=
                 std::string::npos, devmesh_last_error());
  // Config fields that are the mesh's, and bad backends.
  devmesh_config_t bad = DEVMESH_CONFIG_INITIALIZER;
  bad.comm_errors = DEVMESH_COMM_ERRORS_RETURN;
  BOOST_TEST(devmesh_flatten_ex(m, "x1", &bad, &out) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("only the config's backend fields") != std::string::npos,
             devmesh_last_error());
  bad = DEVMESH_CONFIG_INITIALIZER;
  bad.backend = "nosuch";
  BOOST_TEST(devmesh_flatten_ex(m, "x2", &bad, &out) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("unknown backend 'nosuch'") != std::string::npos,
             devmesh_last_error());
  bad = DEVMESH_CONFIG_INITIALIZER;
  bad.backend_options = "scale=2";
  BOOST_TEST(devmesh_flatten_ex(m, "x3", &bad, &out) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(out == sentinel);
  devmesh_destroy(&dpv);
  // unflatten_ex: rest on the example plugin with its own options, one on
  // the mesh's default.
  devmesh_config_t parts = DEVMESH_CONFIG_INITIALIZER;
  parts.dim_backends = "rest=example";
  parts.dim_options = "rest:scale=2";
  int sizes[2] = {1, -1};
  const char* new_names[2] = {"one", "rest"};
  BOOST_TEST_REQUIRE(devmesh_unflatten_ex(flat, "all", 2, sizes, new_names, &parts, &split) == DEVMESH_SUCCESS,
                     devmesh_last_error());
  BOOST_TEST(backend_of(split, "one") == "mpi");
  BOOST_TEST(backend_of(split, "rest") == "example");
  BOOST_TEST(allreduce_one(split, "rest") == 2 * n);
  BOOST_TEST(allreduce_one(split, "one") == 1);
  parts.dim_backends = "zz=example";
  parts.dim_options = nullptr;
  BOOST_TEST(devmesh_unflatten_ex(flat, "all", 2, sizes, new_names, &parts, &out) == DEVMESH_ERR_UNKNOWN_DIM);
  BOOST_TEST(std::string(devmesh_last_error()).find("dim_backends 'zz': not a dim this call makes (it makes: one, rest)") !=
                 std::string::npos, devmesh_last_error());
  BOOST_TEST(out == sentinel);
  for (devmesh_t* h : {&split, &again, &flat, &m}) devmesh_destroy(h);
}

// A backend given to a dim after a view used the dim's default backend
// (devmesh_flatten_ex of the same name and layout) answers that view's
// next call too, as the later views'.
BOOST_AUTO_TEST_CASE(a_backend_chosen_later_answers_an_earlier_view) {
  const int n = world_size();
  int shape[2] = {0, 1};
  const char* names[2] = {"dp", "tp"};
  devmesh_t m = nullptr, early = nullptr, late = nullptr;
  BOOST_TEST_REQUIRE(devmesh_create(MPI_COMM_WORLD, 2, shape, names, &m) == DEVMESH_SUCCESS);
  BOOST_TEST_REQUIRE(devmesh_flatten(m, "later", &early) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(allreduce_one(early, "later") == n);
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "example";
  cfg.backend_options = "scale=3";
  BOOST_TEST_REQUIRE(devmesh_flatten_ex(m, "later", &cfg, &late) == DEVMESH_SUCCESS, devmesh_last_error());
  BOOST_TEST(allreduce_one(late, "later") == 3 * n);
  BOOST_TEST(backend_of(early, "later") == "example");
  BOOST_TEST(allreduce_one(early, "later") == 3 * n);
  for (devmesh_t* h : {&late, &early, &m}) devmesh_destroy(h);
}

// One rank alone passes shape = NULL: every rank gets INCONSISTENT naming
// only what differs (not the dim names, which are the same), and that rank
// also learns its own reason.
BOOST_AUTO_TEST_CASE(one_null_shape_names_only_what_differs) {
  if (world_size() < 2) return;
  const long before = comm_counter::live();
  int shape[2] = {0, 1};
  const char* names[2] = {"dp", "tp"};
  devmesh_t out = sentinel;
  const bool bad = world_rank() == 0;
  const int rc = devmesh_create(MPI_COMM_WORLD, 2, bad ? nullptr : shape, names, &out);
  const std::string message = devmesh_last_error();
  BOOST_TEST(rc == DEVMESH_ERR_INCONSISTENT, message);
  BOOST_TEST(same_everywhere(rc));
  BOOST_TEST(out == sentinel);
  BOOST_TEST(message.find("different shapes on rank 0 and rank 1") != std::string::npos, message);
  BOOST_TEST(message.find("dim names") == std::string::npos, message);
  BOOST_TEST((message.find("on this rank: shape is NULL") != std::string::npos) == bad, message);
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(per_rank_options_may_differ) {
  // The example backend declares `label` per rank (as NCCL's device).
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "example";
  const std::string label = "label=r" + std::to_string(world_rank());
  cfg.backend_options = label.c_str();
  int shape[1] = {0};
  const char* names[1] = {"x"};
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &m) == DEVMESH_SUCCESS, devmesh_last_error());
  devmesh_destroy(&m);
}

BOOST_AUTO_TEST_CASE(config_from_an_older_header_gets_defaults) {
  // A caller whose config ends after `backend` (an older, shorter struct).
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.size = offsetof(devmesh_config_t, backend) + sizeof(const char*);
  cfg.backend = "mpi";
  cfg.dim_backends = "not read=at all";  // beyond the caller's size
  cfg.comm_errors = -7;                  // likewise
  int shape[1] = {0};
  const char* names[1] = {"x"};
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &m) == DEVMESH_SUCCESS,
             devmesh_last_error());
  devmesh_destroy(&m);
}

BOOST_AUTO_TEST_CASE(rank_list_with_options) {
  const int n = world_size();
  std::vector<int> ranks;
  for (int r = n - 1; r >= 0; --r) ranks.push_back(r);
  // A rank list takes backend options like any other creation.
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.nranks = n;
  cfg.ranks = ranks.data();
  cfg.backend = "example";
  int shape[1] = {0};
  const char* names[1] = {"x"};
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &m) == DEVMESH_SUCCESS, devmesh_last_error());
  int lr = -1;
  BOOST_TEST(devmesh_local_rank(m, "x", &lr) == DEVMESH_SUCCESS);
  BOOST_TEST(lr == n - 1 - world_rank());
  const char* backend = nullptr;
  BOOST_TEST(devmesh_dim_backend(m, "x", &backend) == DEVMESH_SUCCESS);
  BOOST_TEST(std::string(backend ? backend : "") == "example");
  devmesh_destroy(&m);
}

BOOST_AUTO_TEST_CASE(host_mesh_with_simulated_hosts) {
  const int n = world_size();
  const int hosts = n % 2 == 0 ? 2 : 1;
  for (bool cyclic : {false, true}) {
    simulate_hosts(hosts, cyclic);
    devmesh_t m = nullptr;
    BOOST_TEST(devmesh_create_hosts(MPI_COMM_WORLD, nullptr, "gpu", &m) == DEVMESH_SUCCESS, devmesh_last_error());
    int h = 0, g = 0;
    devmesh_size(m, "host", &h);
    devmesh_size(m, "gpu", &g);
    BOOST_TEST(h == hosts);
    BOOST_TEST(g == n / hosts);
    // Every member of the caller's gpu group is on the caller's host.
    MPI_Comm gpu;
    BOOST_TEST(devmesh_comm(m, "gpu", &gpu) == DEVMESH_SUCCESS);
    const int me = world_rank();
    for (int r : members(gpu)) {
      const int host_r = cyclic ? r % hosts : r / (n / hosts);
      const int host_me = cyclic ? me % hosts : me / (n / hosts);
      BOOST_TEST(host_r == host_me);
    }
    int within = -1;
    BOOST_TEST(devmesh_dim_within_hosts(m, "gpu", &within) == DEVMESH_SUCCESS);
    BOOST_TEST(within == 1);
    BOOST_TEST(devmesh_dim_within_hosts(m, "host", &within) == DEVMESH_SUCCESS);
    BOOST_TEST(within == (hosts == 1 ? 1 : 0));
    // A second host mesh gives the same groups.
    devmesh_t mf = nullptr;
    BOOST_TEST(devmesh_create_hosts(MPI_COMM_WORLD, nullptr, "gpu", &mf) == DEVMESH_SUCCESS,
               devmesh_last_error());
    for (const char* dim : {"host", "gpu"}) {
      std::vector<int> c(n, -1), f(n, -2);
      BOOST_TEST(devmesh_all_groups(m, dim, n, c.data()) == DEVMESH_SUCCESS);
      BOOST_TEST(devmesh_all_groups(mf, dim, n, f.data()) == DEVMESH_SUCCESS);
      BOOST_TEST(c == f, dim);
    }
    devmesh_destroy(&mf);
    devmesh_destroy(&m);

    // Host-aware ordering: tp (inner) stays within hosts under cyclic placement.
    int shape[2] = {hosts, n / hosts};
    const char* names[2] = {"dp", "tp"};
    devmesh_config_t aware = DEVMESH_CONFIG_INITIALIZER;
    aware.host_aware = 1;
    BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &aware, &m) == DEVMESH_SUCCESS,
               devmesh_last_error());
    MPI_Comm tp;
    devmesh_comm(m, "tp", &tp);
    for (int r : members(tp)) {
      const int host_r = cyclic ? r % hosts : r / (n / hosts);
      const int host_me = cyclic ? me % hosts : me / (n / hosts);
      BOOST_TEST(host_r == host_me);
    }
    BOOST_TEST(devmesh_dim_within_hosts(m, "tp", &within) == DEVMESH_SUCCESS);
    BOOST_TEST(within == 1);
    // A NULL dim is the only dim of a 1-D view; on the 2-D mesh it is
    // refused (not taken for dim 0), the output untouched.
    within = -1;
    BOOST_TEST(devmesh_dim_within_hosts(m, nullptr, &within) == DEVMESH_ERR_INVALID_ARGUMENT);
    BOOST_TEST(std::string(devmesh_last_error()).find("a dim name is needed") != std::string::npos,
               devmesh_last_error());
    BOOST_TEST(within == -1);
    const char* tp_only[1] = {"tp"};
    devmesh_t tp_view = nullptr;
    BOOST_TEST(devmesh_slice(m, 1, tp_only, &tp_view) == DEVMESH_SUCCESS);
    BOOST_TEST(devmesh_dim_within_hosts(tp_view, nullptr, &within) == DEVMESH_SUCCESS);
    BOOST_TEST(within == 1);
    devmesh_destroy(&tp_view);
    devmesh_destroy(&m);
  }
  unsetenv("DEVMESH_HOST_ID");
}

BOOST_AUTO_TEST_CASE(host_errors) {
  const long before = comm_counter::live();
  devmesh_t out = sentinel;
  // Equal dim names: DUPLICATE_NAME everywhere.
  BOOST_TEST(devmesh_create_hosts(MPI_COMM_WORLD, "a", "a", &out) == DEVMESH_ERR_DUPLICATE_NAME);
  BOOST_TEST(out == sentinel);
  // A NULL output pointer on every rank: INVALID_ARGUMENT everywhere.
  BOOST_TEST(devmesh_create_hosts(MPI_COMM_WORLD, nullptr, nullptr, nullptr) == DEVMESH_ERR_INVALID_ARGUMENT);
  if (world_size() > 1) {
    // On one rank only: INCONSISTENT everywhere, nobody hangs.
    const int rc = devmesh_create_hosts(MPI_COMM_WORLD, nullptr, nullptr, world_rank() == 0 ? nullptr : &out);
    BOOST_TEST(rc == DEVMESH_ERR_INCONSISTENT);
    BOOST_TEST(out == sentinel);
    int shape[1] = {0};
    const char* names[1] = {"x"};
    devmesh_config_t aware = DEVMESH_CONFIG_INITIALIZER;
    aware.host_aware = 1;
    const int rc2 = devmesh_create_ex(MPI_COMM_WORLD, 1, world_rank() == 0 ? nullptr : shape, names, &aware, &out);
    BOOST_TEST(rc2 == DEVMESH_ERR_INCONSISTENT);
    BOOST_TEST(out == sentinel);
    // host_aware on some ranks only: the others would not discover hosts,
    // so it is agreed on first and refused everywhere.
    devmesh_config_t some = DEVMESH_CONFIG_INITIALIZER;
    some.host_aware = world_rank() == world_size() - 1 ? 1 : 0;
    BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &some, &out) == DEVMESH_ERR_INCONSISTENT);
    BOOST_TEST(std::string(devmesh_last_error()).find("host_aware") != std::string::npos, devmesh_last_error());
    BOOST_TEST(out == sentinel);
    // Uneven simulated hosts (rank 0 alone on its host) when n >= 3.
    if (world_size() >= 3) {
      setenv("DEVMESH_HOST_ID", world_rank() == 0 ? "lonely" : "crowded", 1);
      BOOST_TEST(devmesh_create_hosts(MPI_COMM_WORLD, nullptr, nullptr, &out) == DEVMESH_ERR_SHAPE_MISMATCH);
      BOOST_TEST(out == sentinel);
      BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &aware, &out) == DEVMESH_ERR_SHAPE_MISMATCH);
      BOOST_TEST(std::string(devmesh_last_error()).find("host 0: 1") != std::string::npos, devmesh_last_error());
      BOOST_TEST(out == sentinel);
      unsetenv("DEVMESH_HOST_ID");
    }
  }
  {
    // host_aware with a rank list, or neither 0 nor 1: INVALID_ARGUMENT
    // everywhere.
    int shape[1] = {1};
    const char* names[1] = {"x"};
    const int first[1] = {0};
    devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.host_aware = 1;
    cfg.nranks = 1;
    cfg.ranks = first;
    BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &out) == DEVMESH_ERR_INVALID_ARGUMENT);
    BOOST_TEST(std::string(devmesh_last_error()).find("rank list") != std::string::npos, devmesh_last_error());
    BOOST_TEST(out == sentinel);
    devmesh_config_t two = DEVMESH_CONFIG_INITIALIZER;
    two.host_aware = 2;
    shape[0] = 0;
    BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &two, &out) == DEVMESH_ERR_INVALID_ARGUMENT);
    BOOST_TEST(std::string(devmesh_last_error()).find("host_aware 2") != std::string::npos, devmesh_last_error());
    BOOST_TEST(out == sentinel);
  }
  // dim_within_hosts needs host info.
  int shape[1] = {0};
  const char* names[1] = {"x"};
  devmesh_t m = nullptr;
  devmesh_create(MPI_COMM_WORLD, 1, shape, names, &m);
  int within = 42;
  BOOST_TEST(devmesh_dim_within_hosts(m, "x", &within) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(within == 42);
  devmesh_destroy(&m);
  BOOST_TEST(comm_counter::live() == before);
}
