// The bad-input matrix through the C API (docs/ERRORS.md), under mpiexec
// at 1, 2, 3 and 6 ranks: the cases that tests/capi does not check. NULL
// handles (never made, destroyed, non-member: every function), over-long
// names outside devmesh_create, every unflatten name clash, negative and
// overflowing sizes, empty names in a slice, an unknown create_comms path
// on one member only. Each case: the exact status, the same on every rank,
// a message naming the offending value, outputs untouched, no communicator
// leaked.
#define BOOST_TEST_MODULE errors_capi
#include "mpi_test.hpp"

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "comm_counter.hpp"
#include "devmesh/devmesh.h"


namespace {

// Values no call writes: outputs are pre-filled with them.
devmesh_t const sentinel = reinterpret_cast<devmesh_t>(std::uintptr_t{0x5e17});
constexpr int int_sentinel = -12345;

// The exact status and a message naming the problem.
void expect_error(int got, int want, const std::string& needle) {
  BOOST_TEST(got == want, "status " << got << " (" << devmesh_status_string(got) << "), expected " << want
                                    << "; last error: " << devmesh_last_error());
  const std::string msg = devmesh_last_error();
  BOOST_TEST(msg.find(needle) != std::string::npos, "last error '" << msg << "' lacks '" << needle << "'");
}

// The same, where every rank made the call: the status agrees everywhere.
void expect_error_everywhere(int got, int want, const std::string& needle) {
  expect_error(got, want, needle);
  BOOST_TEST(same_everywhere(got), "ranks got different statuses");
}

struct Names {
  std::vector<std::string> s;
  std::vector<const char*> p;
  Names(std::initializer_list<std::string> l) : s(l) {
    for (const auto& x : s) p.push_back(x.c_str());
  }
  const char* const* data() const { return p.data(); }
};

const std::string long_name(257, 'q');
const std::string longest_name(256, 'n');

// A root mesh (a, b, c) = (world, 1, 1).
devmesh_t make_abc() {
  const int shape[] = {world_size(), 1, 1};
  Names abc{"a", "b", "c"};
  devmesh_t m = nullptr;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 3, shape, abc.data(), &m), DEVMESH_SUCCESS);
  return m;
}

int comm_count(devmesh_t m) {
  int c = int_sentinel;
  BOOST_REQUIRE_EQUAL(devmesh_comm_count(m, &c), DEVMESH_SUCCESS);
  return c;
}

// Every function that takes a handle, on `m` (NULL: destroyed or never
// made): INVALID_ARGUMENT naming the NULL handle, every output untouched.
// None of these calls is collective (a NULL handle fails before any MPI
// call), so a single rank may run them.
void expect_null_handle(devmesh_t m) {
  const int want = DEVMESH_ERR_INVALID_ARGUMENT;
  const std::string needle = "handle is NULL";
  devmesh_t out = sentinel;
  int v = int_sentinel, arr[2] = {int_sentinel, int_sentinel};
  const char* name = "untouched";
  MPI_Comm c = MPI_COMM_SELF;
  Names a{"a"};
  const int sizes[] = {1};
  expect_error(devmesh_slice(m, 1, a.data(), &out), want, needle);
  expect_error(devmesh_flatten(m, "f", &out), want, needle);
  expect_error(devmesh_flatten(m, nullptr, &out), want, needle);  // the handle is checked first
  expect_error(devmesh_unflatten(m, "a", 1, sizes, a.data(), &out), want, needle);
  expect_error(devmesh_flatten_ex(m, "f", nullptr, &out), want, needle);
  expect_error(devmesh_unflatten_ex(m, "a", 1, sizes, a.data(), nullptr, &out), want, needle);
  expect_error(devmesh_root(m, &out), want, needle);
  BOOST_TEST(out == sentinel);
  expect_error(devmesh_ndim(m, &v), want, needle);
  expect_error(devmesh_size(m, "a", &v), want, needle);
  expect_error(devmesh_size(m, nullptr, &v), want, needle);
  expect_error(devmesh_local_rank(m, "a", &v), want, needle);
  expect_error(devmesh_local_rank(m, nullptr, &v), want, needle);
  expect_error(devmesh_root_size(m, &v), want, needle);
  expect_error(devmesh_parent_rank(m, &v), want, needle);
  expect_error(devmesh_comm_count(m, &v), want, needle);
  expect_error(devmesh_dim_within_hosts(m, "a", &v), want, needle);
  BOOST_TEST(v == int_sentinel);
  expect_error(devmesh_shape(m, 2, arr), want, needle);
  expect_error(devmesh_coordinate(m, 2, arr), want, needle);
  expect_error(devmesh_group_ranks(m, "a", 2, arr), want, needle);
  expect_error(devmesh_all_groups(m, "a", 2, arr), want, needle);
  BOOST_TEST(arr[0] == int_sentinel);
  BOOST_TEST(arr[1] == int_sentinel);
  expect_error(devmesh_dim_name(m, 0, &name), want, needle);
  BOOST_TEST(name == std::string("untouched"));
  expect_error(devmesh_comm(m, "a", &c), want, needle);
  expect_error(devmesh_cart_comm(m, &c), want, needle);
  BOOST_TEST(c == MPI_COMM_SELF);
  expect_error(devmesh_create_comms(m, DEVMESH_COMM_PATH_AUTOMATIC), want, needle);
  void* nh = reinterpret_cast<void*>(std::uintptr_t{0x77});
  expect_error(devmesh_backend_comm(m, "a", nullptr, &nh), want, needle);
  BOOST_TEST(nh == reinterpret_cast<void*>(std::uintptr_t{0x77}));
  const char* bn = "untouched";
  expect_error(devmesh_dim_backend(m, "a", &bn), want, needle);
  BOOST_TEST(std::string(bn) == "untouched");
  const int periodic[] = {1, 0};
  expect_error(devmesh_cart_comm_periodic(m, 2, periodic, &c), want, needle);
  BOOST_TEST(c == MPI_COMM_SELF);
  int prev = int_sentinel, next = int_sentinel, pprev = int_sentinel, pnext = int_sentinel;
  expect_error(devmesh_neighbors(m, "a", 1, 1, &prev, &next, &pprev, &pnext), want, needle);
  BOOST_TEST((prev == int_sentinel && next == int_sentinel && pprev == int_sentinel && pnext == int_sentinel));
  int own = int_sentinel;
  expect_error(devmesh_all_groups_comm(m, "a", 2, arr, &own, &c), want, needle);
  BOOST_TEST((arr[0] == int_sentinel && arr[1] == int_sentinel && own == int_sentinel));
  BOOST_TEST(c == MPI_COMM_SELF);
}

}  // namespace

// ---- NULL, destroyed and non-member handles -------------------------------------

// A handle never made: every function, on every rank. The neighbours of a
// NULL handle fail alike everywhere, also with the periodic outputs NULL.
BOOST_AUTO_TEST_CASE(null_handle) {
  expect_null_handle(nullptr);
  int prev = int_sentinel, next = int_sentinel;
  expect_error_everywhere(devmesh_neighbors(nullptr, "a", 0, 1, &prev, &next, nullptr, nullptr),
                          DEVMESH_ERR_INVALID_ARGUMENT, "handle is NULL");
  BOOST_TEST(prev == int_sentinel);
  BOOST_TEST(next == int_sentinel);
}

// devmesh_destroy nulls the caller's handle: every later use of that
// variable is INVALID_ARGUMENT, and destroying it again is a no-op.
BOOST_AUTO_TEST_CASE(destroyed_handle) {
  const long before = comm_counter::live();
  devmesh_t m = make_abc();
  devmesh_t view = nullptr;
  Names a{"a"};
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, a.data(), &view), DEVMESH_SUCCESS);
  MPI_Comm c = MPI_COMM_NULL;
  BOOST_REQUIRE_EQUAL(devmesh_comm(view, nullptr, &c), DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_destroy(&m) == DEVMESH_SUCCESS);
  BOOST_TEST(m == nullptr);
  expect_null_handle(m);
  BOOST_TEST(devmesh_destroy(&m) == DEVMESH_SUCCESS);  // twice: a no-op
  BOOST_TEST(m == nullptr);
  // The other handle of the root lives on, and so does its communicator.
  int size = 0;
  BOOST_TEST(MPI_Comm_size(c, &size) == MPI_SUCCESS);
  BOOST_TEST(size == world_size());
  BOOST_TEST(devmesh_destroy(&view) == DEVMESH_SUCCESS);
  expect_null_handle(view);
  BOOST_TEST(comm_counter::live() == before);
}

// A parent rank outside the rank list gets NULL and SUCCESS; using that
// NULL is INVALID_ARGUMENT (C has no separate "not a member" handle).
BOOST_AUTO_TEST_CASE(non_member_handle) {
  const int n = world_size(), me = world_rank();
  if (n < 2) return;
  const long before = comm_counter::live();
  std::vector<int> ranks(static_cast<std::size_t>(n - 1));
  std::iota(ranks.begin(), ranks.end(), 1);  // every rank but 0
  const int shape[] = {n - 1};
  Names x{"x"};
  devmesh_t m = sentinel;
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.nranks = n - 1;
  cfg.ranks = ranks.data();
  const int rc = devmesh_create_ex(MPI_COMM_WORLD, 1, shape, x.data(), &cfg, &m);
  BOOST_TEST(rc == DEVMESH_SUCCESS, devmesh_last_error());
  if (me == 0) {
    BOOST_TEST(m == nullptr);
    expect_null_handle(m);  // only rank 0 runs these
  } else {
    BOOST_TEST((m != nullptr && m != sentinel));
  }
  if (m != sentinel) BOOST_TEST(devmesh_destroy(&m) == DEVMESH_SUCCESS);
  BOOST_TEST(comm_counter::live() == before);
}

// ---- creation ------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(create_gaps) {
  const int n = world_size();
  const long before = comm_counter::live();
  devmesh_t m = sentinel;
  Names abcd{"a", "b", "c", "d"};
  const int huge[] = {65536, 65536, 65536, 65536};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 4, huge, abcd.data(), &m), DEVMESH_ERR_SHAPE_MISMATCH,
                          "overflows");
  BOOST_TEST(m == sentinel);
  // Names: 257 bytes fail, 256 bytes work.
  const int one[] = {n};
  Names too_long{long_name};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, one, too_long.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "longer than 256 bytes");
  BOOST_TEST(m == sentinel);
  Names longest{longest_name};
  devmesh_t ok = nullptr;
  BOOST_TEST(devmesh_create(MPI_COMM_WORLD, 1, one, longest.data(), &ok) == DEVMESH_SUCCESS);
  const char* name = nullptr;
  BOOST_TEST(devmesh_dim_name(ok, 0, &name) == DEVMESH_SUCCESS);
  BOOST_TEST(name == longest_name);
  devmesh_destroy(&ok);
  // The config's rank list: a negative length, NULL ranks, a repeated
  // rank, a negative rank.
  Names a{"a"};
  const int zero[] = {0};
  const int r0[] = {0, 0};
  const auto listed = [&](int nranks, const int* ranks) {
    devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
    cfg.nranks = nranks;
    cfg.ranks = ranks;
    return devmesh_create_ex(MPI_COMM_WORLD, 1, zero, a.data(), &cfg, &m);
  };
  expect_error_everywhere(listed(-1, r0), DEVMESH_ERR_INVALID_ARGUMENT, "nranks is -1");
  expect_error_everywhere(listed(1, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "ranks is NULL");
  expect_error_everywhere(listed(2, r0), DEVMESH_ERR_INVALID_ARGUMENT, "rank 0 appears twice");
  const int neg[] = {-1};
  expect_error_everywhere(listed(1, neg), DEVMESH_ERR_INVALID_ARGUMENT, "rank -1");
  BOOST_TEST(m == sentinel);
  BOOST_TEST(comm_counter::live() == before);
}

// ---- views ---------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(slice_empty_name) {
  const long before = comm_counter::live();
  devmesh_t m = make_abc();
  devmesh_t out = sentinel;
  Names empty{""};
  expect_error_everywhere(devmesh_slice(m, 1, empty.data(), &out), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim ''");
  Names with_long{"a", long_name};
  expect_error_everywhere(devmesh_slice(m, 2, with_long.data(), &out), DEVMESH_ERR_UNKNOWN_DIM,
                          "unknown dim 'qqqq");
  BOOST_TEST(out == sentinel);
  BOOST_TEST(comm_count(m) == comm_counter::at_creation);
  devmesh_destroy(&m);
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(flatten_over_long_name) {
  const long before = comm_counter::live();
  devmesh_t m = make_abc();
  devmesh_t out = sentinel;
  expect_error_everywhere(devmesh_flatten(m, long_name.c_str(), &out), DEVMESH_ERR_INVALID_ARGUMENT,
                          "longer than 256 bytes");
  BOOST_TEST(out == sentinel);
  // A failed flatten registers nothing: the name is free afterwards.
  devmesh_t root = nullptr, f = nullptr;
  BOOST_TEST(devmesh_flatten(m, longest_name.c_str(), &f) == DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_root(m, &root) == DEVMESH_SUCCESS);
  Names q{long_name};
  expect_error_everywhere(devmesh_slice(root, 1, q.data(), &out), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim");
  BOOST_TEST(out == sentinel);
  devmesh_destroy(&f);
  devmesh_destroy(&root);
  devmesh_destroy(&m);
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(unflatten_gaps) {
  const int n = world_size();
  const long before = comm_counter::live();
  devmesh_t m = make_abc();
  devmesh_t out = sentinel;
  Names xy{"x", "y"};
  // Negative sizes other than one -1 (inferred): refused.
  const int negative[] = {-2, n};
  expect_error_everywhere(devmesh_unflatten(m, "a", 2, negative, xy.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT,
                          "size -2 at position 0");
  const int two_inferred[] = {-1, -1};
  expect_error_everywhere(devmesh_unflatten(m, "a", 2, two_inferred, xy.data(), &out), DEVMESH_ERR_SHAPE_MISMATCH,
                          "more than one size -1");
  // A product past 63 bits is a mismatch.
  Names wxyz{"w", "x", "y", "z"};
  const int huge[] = {65536, 65536, 65536, 65536};
  expect_error_everywhere(devmesh_unflatten(m, "a", 4, huge, wxyz.data(), &out), DEVMESH_ERR_SHAPE_MISMATCH,
                          "overflow");
  const int fits[] = {n, 1};
  Names too_long{"x", long_name};
  expect_error_everywhere(devmesh_unflatten(m, "a", 2, fits, too_long.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT,
                          "longer than 256 bytes");
  // A root dim outside the view, for another layout than its own (c has
  // size 1, the part named c size n; at one rank they are the same layout,
  // and the name is then that dim again).
  devmesh_t a = nullptr;
  Names just_a{"a"};
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, just_a.data(), &a), DEVMESH_SUCCESS);
  Names root_dim{"c", "x"};
  if (n > 1)
    expect_error_everywhere(devmesh_unflatten(a, "a", 2, fits, root_dim.data(), &out), DEVMESH_ERR_DUPLICATE_NAME,
                            "'c' is a dim of the root mesh");
  // A registered flattened name, likewise (reg has size 1).
  devmesh_t bc = nullptr;
  Names b_c{"b", "c"};
  devmesh_t sbc = nullptr;
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 2, b_c.data(), &sbc), DEVMESH_SUCCESS);
  BOOST_REQUIRE_EQUAL(devmesh_flatten(sbc, "reg", &bc), DEVMESH_SUCCESS);
  Names reg{"reg", "y"};
  if (n > 1)
    expect_error_everywhere(devmesh_unflatten(m, "a", 2, fits, reg.data(), &out), DEVMESH_ERR_DUPLICATE_NAME,
                            "'reg' is a registered flattened name");
  // An empty dim name is an unknown dim here (NULL is the INVALID_ARGUMENT).
  expect_error_everywhere(devmesh_unflatten(m, "", 2, fits, xy.data(), &out), DEVMESH_ERR_UNKNOWN_DIM,
                          "unknown dim ''");
  BOOST_TEST(out == sentinel);
  BOOST_TEST(comm_count(m) == comm_counter::at_creation);
  devmesh_destroy(&bc);
  devmesh_destroy(&sbc);
  devmesh_destroy(&a);
  devmesh_destroy(&m);
  BOOST_TEST(comm_counter::live() == before);
}

// ---- create_comms ----------------------------------------------------------------

// Collective over all members of the root: an unknown path on one member
// only fails on every member (INCONSISTENT), nobody waits forever.
BOOST_AUTO_TEST_CASE(create_comms_unknown_path_on_one_member_only) {
  const int n = world_size();
  if (n < 2) return;
  const long before = comm_counter::live();
  devmesh_t m = make_abc();
  expect_error_everywhere(devmesh_create_comms(m, world_rank() == 0 ? 7 : DEVMESH_COMM_PATH_AUTOMATIC),
                          DEVMESH_ERR_INCONSISTENT, "different");
  BOOST_TEST(comm_count(m) == comm_counter::at_creation);
  expect_error_everywhere(devmesh_create_comms(m, 7), DEVMESH_ERR_INVALID_ARGUMENT, "path 7");
  BOOST_TEST(devmesh_create_comms(m, DEVMESH_COMM_PATH_SPLIT) == DEVMESH_SUCCESS);
  devmesh_destroy(&m);
  BOOST_TEST(comm_counter::live() == before);
}
