// The C API (devmesh.h) under mpiexec at several rank counts: every
// function, every error path (exact status, outputs untouched, a message
// naming the problem, the same status on every rank, no communicator leak),
// and a property test of random meshes and op chains against a brute-force
// reference written from SEMANTICS.md.
#define BOOST_TEST_MODULE capi
#include "mpi_test.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "comm_counter.hpp"
#include "reference.hpp"
#include "devmesh/devmesh.h"

namespace {

// A value no call writes: outputs are pre-filled with it.
devmesh_t const sentinel = reinterpret_cast<devmesh_t>(std::uintptr_t{0x5e17});
constexpr int int_sentinel = -12345;

// Owns a handle for the test's lifetime.
struct Owned {
  devmesh_t h = nullptr;
  Owned() = default;
  explicit Owned(devmesh_t x) : h(x) {}
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { devmesh_destroy(&h); }
  operator devmesh_t() const { return h; }
  devmesh_t* out() { return &h; }
};

// C strings for a list of names (kept alive by the vector of std::string).
struct Names {
  std::vector<std::string> s;
  std::vector<const char*> p;
  Names(std::initializer_list<std::string> l) : s(l) { fill(); }
  explicit Names(std::vector<std::string> v) : s(std::move(v)) { fill(); }
  void fill() {
    p.clear();
    for (const auto& x : s) p.push_back(x.c_str());
  }
  const char* const* data() const { return p.data(); }
  int size() const { return static_cast<int>(p.size()); }
};

// devmesh_create_ex over a rank list (config nranks, ranks), with a C or a
// Fortran handle for the parent.
int create_listed(MPI_Comm parent, int ndim, const int shape[], int nranks, const int ranks[],
                  const char* const names[], devmesh_t* m) {
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.nranks = nranks;
  cfg.ranks = ranks;
  return devmesh_create_ex(parent, ndim, shape, names, &cfg, m);
}

// Checks a failed call: the exact status and a message that names it.
void expect_error(int got, int want, const std::string& needle) {
  BOOST_TEST(got == want, "status " << got << " (" << devmesh_status_string(got) << "), expected " << want
                                    << "; last error: " << devmesh_last_error());
  const std::string msg = devmesh_last_error();
  BOOST_TEST(msg.find(needle) != std::string::npos, "last error '" << msg << "' lacks '" << needle << "'");
}

// The same, for collective calls: the status must agree on every rank.
void expect_error_everywhere(int got, int want, const std::string& needle) {
  expect_error(got, want, needle);
  BOOST_TEST(same_everywhere(got));
}

int size_of(devmesh_t m, const char* dim) {
  int n = int_sentinel;
  BOOST_REQUIRE_EQUAL(devmesh_size(m, dim, &n), DEVMESH_SUCCESS);
  return n;
}

std::vector<int> group_of(devmesh_t m, const char* dim) {
  std::vector<int> g(static_cast<std::size_t>(size_of(m, dim)), int_sentinel);
  BOOST_REQUIRE_EQUAL(devmesh_group_ranks(m, dim, static_cast<int>(g.size()), g.data()), DEVMESH_SUCCESS);
  return g;
}

// ---- the brute-force reference (SEMANTICS.md sections 1-3) ------------------
// Groups, local ranks, overlap and splits of tests/support/reference.hpp, on
// each dim's modes.

using RModes = ref::Modes;

struct RDim {
  std::string name;
  RModes modes;
};

std::vector<RDim> ref_root(const std::vector<int>& shape, const std::vector<std::string>& names) {
  std::vector<RDim> dims(shape.size());
  long stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    dims[i] = {names[i], {{shape[i], stride}}};
    stride *= shape[i];
  }
  return dims;
}

std::string join(const std::vector<RDim>& dims) {
  std::string s;
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? "_" : "") + dims[i].name;
  return s;
}

}  // namespace

// ---- version, strings ------------------------------------------------------

BOOST_AUTO_TEST_CASE(version_and_status_strings) {
  int a = -1, b = -1, c = -1;
  BOOST_TEST(devmesh_version(&a, &b, &c) == DEVMESH_SUCCESS);
  BOOST_TEST(a == DEVMESH_VERSION_MAJOR);
  BOOST_TEST(b == DEVMESH_VERSION_MINOR);
  BOOST_TEST(c == DEVMESH_VERSION_PATCH);
  BOOST_TEST(devmesh_version(nullptr, nullptr, nullptr) == DEVMESH_SUCCESS);
  std::vector<std::string> seen;
  for (int s = DEVMESH_SUCCESS; s <= DEVMESH_ERR_TIMEOUT; ++s) {
    const char* text = devmesh_status_string(s);
    BOOST_REQUIRE(text != nullptr);
    BOOST_TEST(std::strlen(text) > 0);
    BOOST_TEST(std::count(seen.begin(), seen.end(), text) == 0);
    seen.emplace_back(text);
  }
  BOOST_TEST(devmesh_status_string(DEVMESH_ERR_TIMEOUT + 1) == std::string("unknown status"));
  BOOST_TEST(devmesh_status_string(-1) == std::string("unknown status"));
  BOOST_TEST(devmesh_last_error() != nullptr);
}

// ---- success paths --------------------------------------------------------------

BOOST_AUTO_TEST_CASE(create_and_query) {
  const int n = world_size(), me = world_rank();
  const long before = comm_counter::live();
  {
    const int shape[] = {0, 0};
    Names names{"dp", "tp"};
    Owned m;
    BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, names.data(), m.out()), DEVMESH_SUCCESS);
    BOOST_REQUIRE(m.h != nullptr);
    int dims[2] = {0, 0};
    MPI_Dims_create(n, 2, dims);  // the reference for inferred sizes

    int ndim = 0;
    BOOST_TEST(devmesh_ndim(m, &ndim) == DEVMESH_SUCCESS);
    BOOST_TEST(ndim == 2);
    const char* name = nullptr;
    BOOST_TEST(devmesh_dim_name(m, 0, &name) == DEVMESH_SUCCESS);
    BOOST_TEST(name == std::string("dp"));
    BOOST_TEST(devmesh_dim_name(m, 1, &name) == DEVMESH_SUCCESS);
    BOOST_TEST(name == std::string("tp"));
    int shape_out[2] = {0, 0};
    BOOST_TEST(devmesh_shape(m, 2, shape_out) == DEVMESH_SUCCESS);
    BOOST_TEST(shape_out[0] == dims[0]);
    BOOST_TEST(shape_out[1] == dims[1]);
    BOOST_TEST(size_of(m, "dp") == dims[0]);
    BOOST_TEST(size_of(m, "tp") == dims[1]);
    BOOST_TEST(size_of(m, nullptr) == n);
    int w = 0, pr = -1;
    BOOST_TEST(devmesh_root_size(m, &w) == DEVMESH_SUCCESS);
    BOOST_TEST(w == n);
    BOOST_TEST(devmesh_parent_rank(m, &pr) == DEVMESH_SUCCESS);
    BOOST_TEST(pr == me);

    int coord[2] = {-1, -1};
    BOOST_TEST(devmesh_coordinate(m, 2, coord) == DEVMESH_SUCCESS);
    BOOST_TEST(coord[0] == me / dims[1]);
    BOOST_TEST(coord[1] == me % dims[1]);
    int lr = -1;
    BOOST_TEST(devmesh_local_rank(m, "dp", &lr) == DEVMESH_SUCCESS);
    BOOST_TEST(lr == coord[0]);
    BOOST_TEST(devmesh_local_rank(m, "tp", &lr) == DEVMESH_SUCCESS);
    BOOST_TEST(lr == coord[1]);

    std::vector<int> tp(static_cast<std::size_t>(dims[1])), dp(static_cast<std::size_t>(dims[0]));
    for (int k = 0; k < dims[1]; ++k) tp[static_cast<std::size_t>(k)] = coord[0] * dims[1] + k;
    for (int k = 0; k < dims[0]; ++k) dp[static_cast<std::size_t>(k)] = k * dims[1] + coord[1];
    BOOST_TEST(group_of(m, "tp") == tp);
    BOOST_TEST(group_of(m, "dp") == dp);

    MPI_Comm ctp = MPI_COMM_NULL, cdp = MPI_COMM_NULL;
    BOOST_TEST(devmesh_comm(m, "tp", &ctp) == DEVMESH_SUCCESS);
    BOOST_TEST(devmesh_comm(m, "dp", &cdp) == DEVMESH_SUCCESS);
    BOOST_TEST(members(ctp) == tp);
    BOOST_TEST(members(cdp) == dp);
    int r = -1;
    MPI_Comm_rank(ctp, &r);
    BOOST_TEST(r == coord[1]);
    std::vector<int> got(tp.size());
    MPI_Allgather(&me, 1, MPI_INT, got.data(), 1, MPI_INT, ctp);
    BOOST_TEST(got == tp);

    // all_groups: every group of tp, in order of their smallest rank.
    std::vector<int> all(static_cast<std::size_t>(n), int_sentinel);
    BOOST_TEST(devmesh_all_groups(m, "tp", n, all.data()) == DEVMESH_SUCCESS);
    std::vector<int> expect(static_cast<std::size_t>(n));
    std::iota(expect.begin(), expect.end(), 0);
    BOOST_TEST(all == expect);
    BOOST_TEST(devmesh_all_groups(m, "dp", n, all.data()) == DEVMESH_SUCCESS);
    for (int g = 0; g < dims[1]; ++g)
      for (int k = 0; k < dims[0]; ++k)
        BOOST_TEST(all[static_cast<std::size_t>(g * dims[0] + k)] == k * dims[1] + g);

    // The Cartesian communicator's coordinates are the mesh coordinates.
    MPI_Comm cart = MPI_COMM_NULL;
    BOOST_TEST(devmesh_cart_comm(m, &cart) == DEVMESH_SUCCESS);
    int cr = -1, cc[2] = {-1, -1};
    MPI_Comm_rank(cart, &cr);
    MPI_Cart_coords(cart, cr, 2, cc);
    BOOST_TEST(cc[0] == coord[0]);
    BOOST_TEST(cc[1] == coord[1]);
    int count = 0;
    BOOST_TEST(devmesh_comm_count(m, &count) == DEVMESH_SUCCESS);
    // tp, dp, cart (over MPI_COMM_WORLD: no root communicator); at n = 1
    // tp and dp are the same trivial layout
    BOOST_TEST(count == comm_counter::at_creation + (n == 1 ? 2 : 3));
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(views_share_communicators) {
  const int n = world_size();
  const long before = comm_counter::live();
  {
    const int shape[] = {0, 0, 0};
    Names names{"dp", "cp", "tp"};
    Owned m;
    BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 3, shape, names.data(), m.out()), DEVMESH_SUCCESS);
    MPI_Comm tp = MPI_COMM_NULL, again = MPI_COMM_NULL;
    BOOST_TEST(devmesh_comm(m, "tp", &tp) == DEVMESH_SUCCESS);
    int count = 0;
    devmesh_comm_count(m, &count);
    BOOST_TEST(count == comm_counter::at_creation + 1);

    Names sub{"tp", "dp"};
    Owned s;
    BOOST_REQUIRE_EQUAL(devmesh_slice(m, 2, sub.data(), s.out()), DEVMESH_SUCCESS);
    const char* first = nullptr;
    devmesh_dim_name(s, 0, &first);
    BOOST_TEST(first == std::string("tp"));  // transposed order kept
    BOOST_TEST(devmesh_comm(s, "tp", &again) == DEVMESH_SUCCESS);
    BOOST_TEST(again == tp);

    // A flatten registered on the root can be sliced from it later, and
    // flattening again with the same name gives the same communicator.
    Names dpcp{"dp", "cp"};
    Owned d, f, f2, root, back;
    BOOST_REQUIRE_EQUAL(devmesh_slice(m, 2, dpcp.data(), d.out()), DEVMESH_SUCCESS);
    BOOST_REQUIRE_EQUAL(devmesh_flatten(d, nullptr, f.out()), DEVMESH_SUCCESS);
    const char* fname = nullptr;
    devmesh_dim_name(f, 0, &fname);
    BOOST_TEST(fname == std::string("dp_cp"));
    MPI_Comm cf = MPI_COMM_NULL, cf2 = MPI_COMM_NULL, cb = MPI_COMM_NULL;
    BOOST_TEST(devmesh_comm(f, nullptr, &cf) == DEVMESH_SUCCESS);
    BOOST_REQUIRE_EQUAL(devmesh_flatten(d, "dp_cp", f2.out()), DEVMESH_SUCCESS);
    BOOST_TEST(devmesh_comm(f2, "dp_cp", &cf2) == DEVMESH_SUCCESS);
    BOOST_TEST(cf2 == cf);
    BOOST_REQUIRE_EQUAL(devmesh_root(f, root.out()), DEVMESH_SUCCESS);
    Names reg{"dp_cp"};
    BOOST_REQUIRE_EQUAL(devmesh_slice(root, 1, reg.data(), back.out()), DEVMESH_SUCCESS);
    BOOST_TEST(devmesh_comm(back, nullptr, &cb) == DEVMESH_SUCCESS);
    BOOST_TEST(cb == cf);

    // Unflatten back to dp x cp: same layouts, same communicators.
    int sizes[] = {size_of(m, "dp"), size_of(m, "cp")};
    Names xy{"x", "y"};
    Owned u;
    BOOST_REQUIRE_EQUAL(devmesh_unflatten(f, "dp_cp", 2, sizes, xy.data(), u.out()), DEVMESH_SUCCESS);
    MPI_Comm cx = MPI_COMM_NULL, cdp = MPI_COMM_NULL;
    BOOST_TEST(devmesh_comm(u, "x", &cx) == DEVMESH_SUCCESS);
    BOOST_TEST(devmesh_comm(m, "dp", &cdp) == DEVMESH_SUCCESS);
    BOOST_TEST(cx == cdp);
    BOOST_TEST(group_of(u, "y") == group_of(m, "cp"));

    // Handles go in any order: the root first, the slice's comm stays usable.
    devmesh_destroy(&m.h);
    BOOST_TEST(m.h == nullptr);
    int me = world_rank(), sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, again);
    const auto g = group_of(s, "tp");
    BOOST_TEST(sum == std::accumulate(g.begin(), g.end(), 0));
    (void)n;
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(concatenate_views) {
  const int me = world_rank();
  const int shape[] = {0, 0, 0};
  Names names{"dp", "cp", "tp"};
  Owned m, other;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 3, shape, names.data(), m.out()), DEVMESH_SUCCESS);
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 3, shape, names.data(), other.out()), DEVMESH_SUCCESS);
  const int ntp = size_of(m, "tp");
  Names dpcp{"dp", "cp"}, tp{"tp"}, dp{"dp"};
  Owned d, f, t, dv, c;
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 2, dpcp.data(), d.out()), DEVMESH_SUCCESS);
  BOOST_REQUIRE_EQUAL(devmesh_flatten(d, nullptr, f.out()), DEVMESH_SUCCESS);
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, tp.data(), t.out()), DEVMESH_SUCCESS);
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, dp.data(), dv.out()), DEVMESH_SUCCESS);
  const devmesh_t parts[] = {t, f};
  BOOST_REQUIRE_EQUAL(devmesh_concatenate(2, parts, c.out()), DEVMESH_SUCCESS);

  // (tp, dp_cp): dp_cp groups are the ranks of one tp coordinate, by rank.
  int nd = 0;
  devmesh_ndim(c, &nd);
  BOOST_TEST(nd == 2);
  const char *n0 = nullptr, *n1 = nullptr;
  devmesh_dim_name(c, 0, &n0);
  devmesh_dim_name(c, 1, &n1);
  BOOST_TEST(n0 == std::string("tp"));
  BOOST_TEST(n1 == std::string("dp_cp"));
  std::vector<int> want_dpcp, want_tp;
  for (int r = 0; r < world_size(); ++r) {
    if (r % ntp == me % ntp) want_dpcp.push_back(r);
    if (r / ntp == me / ntp) want_tp.push_back(r);
  }
  BOOST_TEST(group_of(c, "dp_cp") == want_dpcp);
  BOOST_TEST(group_of(c, "tp") == want_tp);
  int coord[2] = {int_sentinel, int_sentinel};
  BOOST_REQUIRE_EQUAL(devmesh_coordinate(c, 2, coord), DEVMESH_SUCCESS);
  BOOST_TEST(coord[0] == me % ntp);
  BOOST_TEST(coord[1] == me / ntp);
  // Same layouts, same communicators.
  MPI_Comm cc = MPI_COMM_NULL, cf = MPI_COMM_NULL;
  BOOST_TEST(devmesh_comm(c, "dp_cp", &cc) == DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_comm(f, nullptr, &cf) == DEVMESH_SUCCESS);
  BOOST_TEST(cc == cf);

  // Errors, and the output left alone.
  devmesh_t out = sentinel;
  const devmesh_t twice[] = {f, f}, overlapping[] = {f, dv}, roots[] = {t, other}, with_null[] = {t, nullptr};
  expect_error(devmesh_concatenate(0, parts, &out), DEVMESH_ERR_INVALID_ARGUMENT, "at least one mesh");
  expect_error(devmesh_concatenate(2, nullptr, &out), DEVMESH_ERR_INVALID_ARGUMENT, "meshes is NULL");
  expect_error(devmesh_concatenate(2, with_null, &out), DEVMESH_ERR_INVALID_ARGUMENT, "meshes[1] is NULL");
  expect_error(devmesh_concatenate(2, parts, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "output handle");
  expect_error(devmesh_concatenate(2, twice, &out), DEVMESH_ERR_DUPLICATE_NAME, "dp_cp");
  expect_error(devmesh_concatenate(2, roots, &out), DEVMESH_ERR_INVALID_ARGUMENT, "same root");
  if (size_of(m, "dp") > 1)
    expect_error(devmesh_concatenate(2, overlapping, &out), DEVMESH_ERR_OVERLAP, "cover the same ranks");
  BOOST_TEST(out == sentinel);
}

BOOST_AUTO_TEST_CASE(rank_lists_and_non_members) {
  const int n = world_size(), me = world_rank();
  const long before = comm_counter::live();
  {
    // Every rank but the last, in reverse order.
    const int w = n > 1 ? n - 1 : 1;
    std::vector<int> ranks;
    for (int r = w - 1; r >= 0; --r) ranks.push_back(r);
    const int shape[] = {w};
    Names names{"x"};
    devmesh_t m = sentinel;
    BOOST_REQUIRE_EQUAL(create_listed(MPI_COMM_WORLD, 1, shape, w, ranks.data(), names.data(), &m), DEVMESH_SUCCESS);
    Owned own(m == sentinel ? nullptr : m);
    if (me >= w) {
      BOOST_TEST(m == nullptr);  // a non-member gets NULL, and success
    } else {
      BOOST_REQUIRE(m != nullptr && m != sentinel);
      int lr = -1;
      BOOST_TEST(devmesh_local_rank(m, "x", &lr) == DEVMESH_SUCCESS);
      BOOST_TEST(lr == w - 1 - me);
      BOOST_TEST(group_of(m, "x") == ranks);
      MPI_Comm c = MPI_COMM_NULL;
      BOOST_TEST(devmesh_comm(m, "x", &c) == DEVMESH_SUCCESS);
      BOOST_TEST(members(c) == ranks);
    }

    // Zeros are inferred from the list's length.
    const int zero[] = {0, 1};
    Names two{"a", "b"};
    devmesh_t z = sentinel;
    BOOST_REQUIRE_EQUAL(create_listed(MPI_COMM_WORLD, 2, zero, w, ranks.data(), two.data(), &z), DEVMESH_SUCCESS);
    Owned own_z(z == sentinel ? nullptr : z);
    if (me < w) {
      BOOST_TEST(size_of(z, "a") == w);
      BOOST_TEST(group_of(z, "a") == ranks);
    } else {
      BOOST_TEST(z == nullptr);
    }
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(create_comms_paths) {
  const long before = comm_counter::live();
  for (int path : {DEVMESH_COMM_PATH_AUTOMATIC, DEVMESH_COMM_PATH_CREATE_GROUP, DEVMESH_COMM_PATH_SPLIT,
                   DEVMESH_COMM_PATH_CART_SUB}) {
    const int shape[] = {0, 0, 0};
    Names names{"a", "b", "c"};
    Owned m;
    BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 3, shape, names.data(), m.out()), DEVMESH_SUCCESS);
    BOOST_TEST(devmesh_create_comms(m, path) == DEVMESH_SUCCESS);
    for (const char* d : {"a", "b", "c"}) {
      MPI_Comm c = MPI_COMM_NULL;
      BOOST_TEST(devmesh_comm(m, d, &c) == DEVMESH_SUCCESS);
      BOOST_TEST(members(c) == group_of(m, d));
    }
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(destroy_is_null_safe) {
  BOOST_TEST(devmesh_destroy(nullptr) == DEVMESH_SUCCESS);
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_destroy(&m) == DEVMESH_SUCCESS);
  BOOST_TEST(m == nullptr);
  const int shape[] = {0};
  Names names{"x"};
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 1, shape, names.data(), &m), DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_destroy(&m) == DEVMESH_SUCCESS);
  BOOST_TEST(m == nullptr);
}

BOOST_AUTO_TEST_CASE(dim_name_is_borrowed_from_the_handle) {
  const int shape[] = {0, 0};
  Names names{"first_dim", "second_dim"};
  Owned m;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, names.data(), m.out()), DEVMESH_SUCCESS);
  const char* a = nullptr;
  devmesh_dim_name(m, 1, &a);
  names.s[1] = "overwritten";  // the caller's strings are copied
  Owned s;
  Names one{"first_dim"};
  devmesh_slice(m, 1, one.data(), s.out());
  const char* b = nullptr;
  devmesh_dim_name(m, 1, &b);
  BOOST_TEST(a == b);  // stable pointer for the handle's lifetime
  BOOST_TEST(a == std::string("second_dim"));
}

// ---- error paths -----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(create_errors) {
  const int n = world_size(), me = world_rank();
  const long before = comm_counter::live();
  Names ab{"a", "b"};
  devmesh_t m = sentinel;
  auto untouched = [&] { BOOST_TEST(m == sentinel); };

  const int too_big[] = {n + 1};
  Names a{"a"};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, too_big, a.data(), &m), DEVMESH_ERR_SHAPE_MISMATCH,
                          "multiplies to");
  untouched();
  const int ok1[] = {n};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, nullptr, a.data(), &m), DEVMESH_ERR_INVALID_ARGUMENT,
                          "shape is NULL");
  untouched();
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, ok1, nullptr, &m), DEVMESH_ERR_INVALID_ARGUMENT,
                          "names is NULL");
  untouched();
  const char* with_null[] = {"a", nullptr};
  const int ok2[] = {n, 1};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 2, ok2, with_null, &m), DEVMESH_ERR_INVALID_ARGUMENT,
                          "names[1] is NULL");
  untouched();
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, ok1, a.data(), nullptr), DEVMESH_ERR_INVALID_ARGUMENT,
                          "output pointer is NULL");
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 0, ok1, a.data(), &m), DEVMESH_ERR_INVALID_ARGUMENT,
                          "ndim is 0");
  untouched();
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, -1, ok1, a.data(), &m), DEVMESH_ERR_INVALID_ARGUMENT,
                          "ndim is -1");
  untouched();
  const int negative[] = {-n, -1};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 2, negative, ab.data(), &m), DEVMESH_ERR_INVALID_ARGUMENT,
                          "negative");
  untouched();
  Names empty{"a", ""};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 2, ok2, empty.data(), &m), DEVMESH_ERR_INVALID_ARGUMENT,
                          "is empty");
  untouched();
  Names longname{std::vector<std::string>{std::string(300, 'x')}};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, ok1, longname.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "longer than");
  untouched();
  Names twice{"a", "a"};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 2, ok2, twice.data(), &m), DEVMESH_ERR_DUPLICATE_NAME,
                          "given twice");
  untouched();
  const int uninferable[] = {0, n + 1};
  expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 2, uninferable, ab.data(), &m),
                          DEVMESH_ERR_SHAPE_MISMATCH, "divide");
  untouched();
  expect_error(devmesh_create(MPI_COMM_NULL, 1, ok1, a.data(), &m), DEVMESH_ERR_INVALID_ARGUMENT, "MPI_COMM_NULL");
  untouched();

  if (n >= 2) {
    // Rank 0 names its dim differently: INCONSISTENT everywhere, not a hang.
    Names p{me == 0 ? "p" : "q"};
    expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, ok1, p.data(), &m), DEVMESH_ERR_INCONSISTENT,
                            "different arguments");
    untouched();
    // Rank 0 alone passes a bad shape.
    const int odd[] = {me == 0 ? n + 1 : n};
    expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, odd, a.data(), &m), DEVMESH_ERR_INCONSISTENT,
                            "different arguments");
    untouched();
    // Rank 0 alone passes NULL (a problem only the C layer sees).
    expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, me == 0 ? nullptr : ok1, a.data(), &m),
                            DEVMESH_ERR_INCONSISTENT, "different arguments");
    untouched();
    // The last rank alone has no output pointer.
    expect_error_everywhere(devmesh_create(MPI_COMM_WORLD, 1, ok1, a.data(), me == n - 1 ? nullptr : &m),
                            DEVMESH_ERR_INCONSISTENT, "different arguments");
    untouched();
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(rank_list_errors) {
  const int n = world_size(), me = world_rank();
  const long before = comm_counter::live();
  Names a{"a"};
  devmesh_t m = sentinel;
  auto untouched = [&] { BOOST_TEST(m == sentinel); };
  std::vector<int> all(static_cast<std::size_t>(n) + 1);
  std::iota(all.begin(), all.end(), 0);

  // A list longer than the parent names a rank the parent does not have.
  const int too_big[] = {n + 1};
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, too_big, n + 1, all.data(), a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "out of range");
  untouched();
  const int one[] = {1};
  const int out_of_range[] = {n};
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, one, 1, out_of_range, a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "out of range");
  untouched();
  const int negative_rank[] = {-1};
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, one, 1, negative_rank, a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "out of range");
  untouched();
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, one, 1, nullptr, a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "ranks is NULL");
  untouched();
  // A list without its length.
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, one, DEVMESH_CONFIG_UNSET, all.data(), a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "nranks is not");
  untouched();
  const int negative_size[] = {-2};
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, negative_size, 1, all.data(), a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "negative");
  untouched();
  // A product that differs from the length.
  const int two[] = {2};
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, two, 1, all.data(), a.data(), &m),
                          DEVMESH_ERR_SHAPE_MISMATCH, "rank list has 1");
  untouched();
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, one, 0, all.data(), a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "nranks is 0");
  untouched();
  expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, one, -3, all.data(), a.data(), &m),
                          DEVMESH_ERR_INVALID_ARGUMENT, "nranks is -3");
  untouched();
  if (n >= 2) {
    const int dup[] = {1, 1};
    const int s2[] = {2};
    expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, s2, 2, dup, a.data(), &m),
                            DEVMESH_ERR_INVALID_ARGUMENT, "appears twice");
    untouched();
    // Rank lists that differ between ranks.
    const int mine[] = {me == 0 ? 1 : 0};
    expect_error_everywhere(create_listed(MPI_COMM_WORLD, 1, one, 1, mine, a.data(), &m),
                            DEVMESH_ERR_INCONSISTENT, "different rank lists");
    untouched();
    // A list on some ranks only.
    expect_error_everywhere(me == 0 ? create_listed(MPI_COMM_WORLD, 1, one, 1, all.data(), a.data(), &m)
                                    : devmesh_create_ex(MPI_COMM_WORLD, 1, &n, a.data(), nullptr, &m),
                            DEVMESH_ERR_INCONSISTENT, "different rank lists");
    untouched();
    // One rank's config has a length but no list (a C-level problem), the
    // others' are fine.
    expect_error_everywhere(
        create_listed(MPI_COMM_WORLD, 1, one, 1, me == 0 ? nullptr : all.data(), a.data(), &m),
        DEVMESH_ERR_INCONSISTENT, "different arguments");
    untouched();
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(view_errors) {
  const int n = world_size();
  const long before = comm_counter::live();
  {
    const int shape[] = {0, 0};
    Names ab{"a", "b"};
    Owned m;
    BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, ab.data(), m.out()), DEVMESH_SUCCESS);
    devmesh_t out = sentinel;
    auto untouched = [&] { BOOST_TEST(out == sentinel); };

    // slice
    Names zz{"a", "zz"};
    expect_error_everywhere(devmesh_slice(m, 2, zz.data(), &out), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim 'zz'");
    untouched();
    Names aa{"a", "a"};
    expect_error_everywhere(devmesh_slice(m, 2, aa.data(), &out), DEVMESH_ERR_DUPLICATE_NAME, "sliced twice");
    untouched();
    expect_error(devmesh_slice(m, 0, ab.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT, "n is 0");
    untouched();
    expect_error(devmesh_slice(m, 1, nullptr, &out), DEVMESH_ERR_INVALID_ARGUMENT, "dims is NULL");
    untouched();
    const char* has_null[] = {"a", nullptr};
    expect_error(devmesh_slice(m, 2, has_null, &out), DEVMESH_ERR_INVALID_ARGUMENT, "dims[1] is NULL");
    untouched();
    expect_error(devmesh_slice(m, 1, ab.data(), nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "output handle pointer");

    // flatten
    // A root dim's name for another layout (a dim of size other than n;
    // at one rank every layout is the same, and the name is that dim).
    if (n > 1) {
      int size_a = 0;
      BOOST_REQUIRE_EQUAL(devmesh_size(m, "a", &size_a), DEVMESH_SUCCESS);
      expect_error_everywhere(devmesh_flatten(m, size_a != n ? "a" : "b", &out), DEVMESH_ERR_DUPLICATE_NAME,
                              "is a dim of the root");
      untouched();
    }
    expect_error(devmesh_flatten(m, "", &out), DEVMESH_ERR_INVALID_ARGUMENT, "is empty");
    untouched();
    expect_error(devmesh_flatten(m, nullptr, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "output handle pointer");
    {
      Names just_a{"a"}, just_b{"b"};
      Owned sa, sb, fa, same;
      BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, just_a.data(), sa.out()), DEVMESH_SUCCESS);
      BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, just_b.data(), sb.out()), DEVMESH_SUCCESS);
      BOOST_REQUIRE_EQUAL(devmesh_flatten(sa, "f", fa.out()), DEVMESH_SUCCESS);
      // The same name for the same layout: that dim again.
      BOOST_REQUIRE_EQUAL(devmesh_flatten(sa, "f", same.out()), DEVMESH_SUCCESS);
      BOOST_TEST(group_of(same, "f") == group_of(m, "a"));
      if (n >= 2) {  // at n = 1 every layout is the trivial one
        expect_error_everywhere(devmesh_flatten(sb, "f", &out), DEVMESH_ERR_DUPLICATE_NAME, "already registered");
        untouched();
        // The registered name overlaps the dim it was made from.
        Owned root;
        BOOST_REQUIRE_EQUAL(devmesh_root(sa, root.out()), DEVMESH_SUCCESS);
        Names fa_a{"f", "a"};
        expect_error_everywhere(devmesh_slice(root, 2, fa_a.data(), &out), DEVMESH_ERR_OVERLAP,
                                "cover the same ranks");
        untouched();
        // Only a root view can slice registered names.
        Names just_f{"f"};
        expect_error_everywhere(devmesh_slice(sb, 1, just_f.data(), &out), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim");
        untouched();
      }
    }

    // unflatten
    const int na = size_of(m, "a");
    int zero_sizes[] = {0, na};
    Names xy{"x", "y"};
    expect_error_everywhere(devmesh_unflatten(m, "a", 2, zero_sizes, xy.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT,
                            "must be at least 1");
    untouched();
    int wrong[] = {na + 1, 1};
    expect_error_everywhere(devmesh_unflatten(m, "a", 2, wrong, xy.data(), &out), DEVMESH_ERR_SHAPE_MISMATCH,
                            "multiply to");
    untouched();
    int fits[] = {na, 1};
    Names clash{"x", "b"};
    expect_error_everywhere(devmesh_unflatten(m, "a", 2, fits, clash.data(), &out), DEVMESH_ERR_DUPLICATE_NAME,
                            "already a dim of this view");
    untouched();
    Names rep{"x", "x"};
    expect_error_everywhere(devmesh_unflatten(m, "a", 2, fits, rep.data(), &out), DEVMESH_ERR_DUPLICATE_NAME,
                            "given twice");
    untouched();
    expect_error_everywhere(devmesh_unflatten(m, "nope", 2, fits, xy.data(), &out), DEVMESH_ERR_UNKNOWN_DIM,
                            "unknown dim 'nope'");
    untouched();
    expect_error(devmesh_unflatten(m, "a", 0, fits, xy.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT, "n is 0");
    untouched();
    expect_error(devmesh_unflatten(m, nullptr, 2, fits, xy.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT,
                 "dim is NULL");
    untouched();
    expect_error(devmesh_unflatten(m, "a", 2, nullptr, xy.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT,
                 "sizes is NULL");
    untouched();
    expect_error(devmesh_unflatten(m, "a", 2, fits, nullptr, &out), DEVMESH_ERR_INVALID_ARGUMENT, "names is NULL");
    untouched();
    Names empty_name{"x", ""};
    expect_error(devmesh_unflatten(m, "a", 2, fits, empty_name.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT,
                 "is empty");
    untouched();
    expect_error(devmesh_unflatten(m, "a", 2, fits, xy.data(), nullptr), DEVMESH_ERR_INVALID_ARGUMENT,
                 "output handle pointer");

    // root
    expect_error(devmesh_root(m, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "output handle pointer");
  }
  BOOST_TEST(comm_counter::live() == before);
}

// A split that cuts a mode into non-dividing pieces needs two different
// primes: 6 ranks as (2, 3), transposed and flattened to (3,2):(1,3), then
// unflattened as (2, 3).
BOOST_AUTO_TEST_CASE(unflatten_that_does_not_fit) {
  const int n = world_size();
  if (n < 6) return;
  const long before = comm_counter::live();
  {
    const int shape[] = {2, 3};
    const int ranks[] = {0, 1, 2, 3, 4, 5};
    Names pq{"p", "q"};
    devmesh_t m = nullptr;
    BOOST_REQUIRE_EQUAL(create_listed(MPI_COMM_WORLD, 2, shape, 6, ranks, pq.data(), &m), DEVMESH_SUCCESS);
    Owned own(m);
    if (m) {
      Names qp{"q", "p"};
      Owned t, f;
      BOOST_REQUIRE_EQUAL(devmesh_slice(m, 2, qp.data(), t.out()), DEVMESH_SUCCESS);
      BOOST_REQUIRE_EQUAL(devmesh_flatten(t, nullptr, f.out()), DEVMESH_SUCCESS);
      BOOST_TEST(group_of(f, "q_p") == (std::vector<int>{0, 3, 1, 4, 2, 5}));
      devmesh_t out = sentinel;
      int sizes[] = {2, 3};
      Names xy{"x", "y"};
      expect_error(devmesh_unflatten(f, "q_p", 2, sizes, xy.data(), &out), DEVMESH_ERR_SHAPE_MISMATCH,
                   "non-dividing");
      BOOST_TEST(out == sentinel);
      // The fitting split works: (3, 2) gives back q and p.
      int back[] = {3, 2};
      Owned u;
      BOOST_REQUIRE_EQUAL(devmesh_unflatten(f, "q_p", 2, back, xy.data(), u.out()), DEVMESH_SUCCESS);
      BOOST_TEST(group_of(u, "x") == group_of(m, "q"));
      BOOST_TEST(group_of(u, "y") == group_of(m, "p"));
    }
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(query_errors) {
  const long before = comm_counter::live();
  {
    const int shape[] = {0, 0};
    Names ab{"a", "b"};
    Owned m;
    BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, ab.data(), m.out()), DEVMESH_SUCCESS);
    int v = int_sentinel;
    expect_error(devmesh_size(m, "zz", &v), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim 'zz'");
    expect_error(devmesh_size(m, "", &v), DEVMESH_ERR_INVALID_ARGUMENT, "dim name is empty");
    expect_error(devmesh_size(m, "a", nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "size is NULL");
    expect_error(devmesh_local_rank(m, nullptr, &v), DEVMESH_ERR_INVALID_ARGUMENT, "a dim name is needed");
    expect_error(devmesh_local_rank(m, "zz", &v), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim");
    expect_error(devmesh_local_rank(m, "a", nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "rank is NULL");
    expect_error(devmesh_ndim(m, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "ndim is NULL");
    expect_error(devmesh_root_size(m, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "size is NULL");
    expect_error(devmesh_parent_rank(m, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "rank is NULL");
    expect_error(devmesh_comm_count(m, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "count is NULL");
    BOOST_TEST(v == int_sentinel);
    int arr[4] = {int_sentinel, int_sentinel, int_sentinel, int_sentinel};
    expect_error(devmesh_group_ranks(m, "zz", 4, arr), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim");
    expect_error(devmesh_group_ranks(m, nullptr, 4, arr), DEVMESH_ERR_INVALID_ARGUMENT, "a dim name is needed");
    expect_error(devmesh_group_ranks(m, "a", 4, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "ranks is NULL");
    expect_error(devmesh_all_groups(m, "zz", 4, arr), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim");
    expect_error(devmesh_all_groups(m, "a", 4, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "ranks is NULL");
    expect_error(devmesh_coordinate(m, 4, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "coord is NULL");
    expect_error(devmesh_shape(m, 4, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "shape is NULL");
    for (int x : arr) BOOST_TEST(x == int_sentinel);
    // A capacity below the result: nothing written, both counts named.
    const int na = size_of(m, "a"), w = world_size();
    const auto short_by_one = [](const char* cap, int need, const char* array) {
      return std::string(cap) + " is " + std::to_string(need - 1) + " but " + array + " needs " +
             std::to_string(need) + " entries";
    };
    expect_error(devmesh_shape(m, 1, arr), DEVMESH_ERR_INVALID_ARGUMENT, short_by_one("maxdims", 2, "shape"));
    expect_error(devmesh_coordinate(m, 1, arr), DEVMESH_ERR_INVALID_ARGUMENT, short_by_one("maxdims", 2, "coord"));
    expect_error(devmesh_coordinate(m, -1, arr), DEVMESH_ERR_INVALID_ARGUMENT, "maxdims is -1 but coord needs 2");
    expect_error(devmesh_group_ranks(m, "a", na - 1, arr), DEVMESH_ERR_INVALID_ARGUMENT,
                 short_by_one("maxranks", na, "ranks"));
    expect_error(devmesh_all_groups(m, "b", w - 1, arr), DEVMESH_ERR_INVALID_ARGUMENT,
                 short_by_one("maxranks", w, "ranks"));
    for (int x : arr) BOOST_TEST(x == int_sentinel);
    // Room to spare: the result, and the entries past it untouched.
    int dims[2] = {0, 0};
    MPI_Dims_create(w, 2, dims);
    BOOST_REQUIRE_EQUAL(devmesh_shape(m, 4, arr), DEVMESH_SUCCESS);
    BOOST_TEST(arr[0] == dims[0]);
    BOOST_TEST(arr[1] == dims[1]);
    BOOST_TEST(arr[2] == int_sentinel);
    BOOST_TEST(arr[3] == int_sentinel);
    const char* name = "untouched";
    expect_error(devmesh_dim_name(m, 2, &name), DEVMESH_ERR_INVALID_ARGUMENT, "out of range [0, 2)");
    expect_error(devmesh_dim_name(m, -1, &name), DEVMESH_ERR_INVALID_ARGUMENT, "out of range");
    expect_error(devmesh_dim_name(m, 0, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "name is NULL");
    BOOST_TEST(name == std::string("untouched"));

    MPI_Comm c = MPI_COMM_SELF;
    expect_error(devmesh_comm(m, "zz", &c), DEVMESH_ERR_UNKNOWN_DIM, "unknown dim");
    expect_error(devmesh_comm(m, nullptr, &c), DEVMESH_ERR_INVALID_ARGUMENT, "a dim name is needed");
    expect_error(devmesh_comm(m, "a", nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "comm is NULL");
    BOOST_TEST(c == MPI_COMM_SELF);
    expect_error(devmesh_cart_comm(m, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "comm is NULL");
    expect_error_everywhere(devmesh_create_comms(m, 4), DEVMESH_ERR_INVALID_ARGUMENT, "path 4");
    expect_error_everywhere(devmesh_create_comms(m, -1), DEVMESH_ERR_INVALID_ARGUMENT, "path -1");
    int count = 0;
    devmesh_comm_count(m, &count);
    BOOST_TEST(count == comm_counter::at_creation);  // no failed call made a communicator
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(last_error_is_per_thread) {
  int v = 0;
  expect_error(devmesh_size(nullptr, nullptr, &v), DEVMESH_ERR_INVALID_ARGUMENT, "devmesh_size");
  const std::string mine = devmesh_last_error();
  std::string theirs_before, theirs_after;
  std::thread t([&] {
    theirs_before = devmesh_last_error();
    devmesh_ndim(nullptr, &v);
    theirs_after = devmesh_last_error();
  });
  t.join();
  BOOST_TEST(theirs_before.empty());
  BOOST_TEST(theirs_after.find("devmesh_ndim") != std::string::npos);
  BOOST_TEST(devmesh_last_error() == mine);
  // A successful call leaves the last failure's message in place.
  BOOST_TEST(devmesh_version(nullptr, nullptr, nullptr) == DEVMESH_SUCCESS);
  BOOST_TEST(devmesh_last_error() == mine);
}

// ---- property test ---------------------------------------------------------------

namespace {

// One chain's state: the handle and what the reference says it is.
struct Chain {
  std::vector<int> ranks;  // root index -> parent rank
  long W = 0;
  std::vector<RDim> root;
  std::vector<RDim> registry;
  std::vector<RDim> dims;  // the current view
  bool is_root = true;
  std::vector<RModes> asked;  // layouts whose communicator was asked for
  long my_index = -1;
};

// Checks every query and communicator of the current view against the
// reference.
void verify_view(devmesh_t h, Chain& c, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    int ndim = -1;
    BOOST_REQUIRE_EQUAL(devmesh_ndim(h, &ndim), DEVMESH_SUCCESS);
    BOOST_REQUIRE_EQUAL(ndim, static_cast<int>(c.dims.size()));
    std::vector<int> coord(c.dims.size(), int_sentinel);
    BOOST_REQUIRE_EQUAL(devmesh_coordinate(h, static_cast<int>(coord.size()), coord.data()), DEVMESH_SUCCESS);
    long total = 1;
    for (std::size_t i = 0; i < c.dims.size(); ++i) {
      const RDim& d = c.dims[i];
      BOOST_TEST_CONTEXT("dim " << d.name) {
        const char* name = nullptr;
        BOOST_REQUIRE_EQUAL(devmesh_dim_name(h, static_cast<int>(i), &name), DEVMESH_SUCCESS);
        BOOST_TEST(name == d.name);
        BOOST_TEST(size_of(h, d.name.c_str()) == ref::size(d.modes));
        total *= ref::size(d.modes);
        std::vector<int> expect;
        for (long x : ref::group(d.modes, c.my_index, c.W)) expect.push_back(c.ranks[static_cast<std::size_t>(x)]);
        BOOST_TEST(group_of(h, d.name.c_str()) == expect);
        int lr = -1;
        BOOST_TEST(devmesh_local_rank(h, d.name.c_str(), &lr) == DEVMESH_SUCCESS);
        BOOST_TEST(lr == ref::local_index(d.modes, c.my_index));
        BOOST_TEST(coord[i] == ref::local_index(d.modes, c.my_index));
        MPI_Comm comm = MPI_COMM_NULL;
        BOOST_REQUIRE_EQUAL(devmesh_comm(h, d.name.c_str(), &comm), DEVMESH_SUCCESS);
        BOOST_TEST(members(comm) == expect);
        int r = -1;
        MPI_Comm_rank(comm, &r);
        BOOST_TEST(r == lr);
        if (std::none_of(c.asked.begin(), c.asked.end(), [&](const RModes& m) { return ref::same_function(m, d.modes); }))
          c.asked.push_back(d.modes);
      }
    }
    BOOST_TEST(size_of(h, nullptr) == total);
    // One communicator per distinct layout asked for; nothing else.
    int count = 0;
    devmesh_comm_count(h, &count);
    BOOST_TEST(count == comm_counter::at_creation + static_cast<int>(c.asked.size()));
  }
}

std::vector<long> random_factors(long n, int k, std::mt19937& rng) {
  // k ordered factors of n, each >= 1.
  std::vector<long> f(static_cast<std::size_t>(k), 1);
  for (long p = 2, m = n; m > 1;) {
    if (m % p == 0) {
      f[std::uniform_int_distribution<std::size_t>(0, f.size() - 1)(rng)] *= p;
      m /= p;
    } else {
      ++p;
    }
  }
  return f;
}

std::string describe(const std::vector<RDim>& dims) {
  std::ostringstream os;
  for (const auto& d : dims) {
    os << d.name << "=(";
    for (std::size_t i = 0; i < d.modes.size(); ++i) os << (i ? "," : "") << d.modes[i].size;
    os << "):(";
    for (std::size_t i = 0; i < d.modes.size(); ++i) os << (i ? "," : "") << d.modes[i].stride;
    os << ") ";
  }
  return os.str();
}

}  // namespace

BOOST_AUTO_TEST_CASE(random_op_chains_match_the_reference) {
  const int n = world_size(), me = world_rank();
  std::mt19937 rng(20240611u);  // the same on every rank: all ranks take the same chain
  int fresh = 0;
  int ops_checked = 0, errors_checked = 0;
  int by_status[DEVMESH_ERR_INTERNAL + 1] = {};
  for (int trial = 0; trial < 40; ++trial) {
    const long before = comm_counter::live();
    Chain c;
    // The root: W ranks (all, or a random subset in random order).
    const bool listed = trial % 3 != 0;
    c.W = listed && std::uniform_int_distribution<int>(0, 1)(rng) ? std::uniform_int_distribution<long>(1, n)(rng) : n;
    std::vector<int> perm(static_cast<std::size_t>(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    c.ranks.assign(perm.begin(), perm.begin() + c.W);
    if (!listed) std::iota(c.ranks.begin(), c.ranks.end(), 0);
    const int k = std::uniform_int_distribution<int>(1, 4)(rng);
    std::vector<long> f = random_factors(c.W, k, rng);
    std::vector<int> shape(f.begin(), f.end()), given = shape;
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      for (int& s : given)
        if (std::uniform_int_distribution<int>(0, 1)(rng)) s = 0;
      shape = given;
      MPI_Dims_create(static_cast<int>(c.W), k, shape.data());  // the reference for zeros
    }
    std::vector<std::string> rn;
    for (int i = 0; i < k; ++i) rn.push_back("r" + std::to_string(i));
    Names names(rn);
    c.root = ref_root(shape, rn);
    c.dims = c.root;
    const auto it = std::find(c.ranks.begin(), c.ranks.end(), me);
    c.my_index = it == c.ranks.end() ? -1 : it - c.ranks.begin();

    devmesh_t h = sentinel;
    int st = listed ? create_listed(MPI_COMM_WORLD, k, given.data(), static_cast<int>(c.W), c.ranks.data(),
                                    names.data(), &h)
                    : devmesh_create(MPI_COMM_WORLD, k, given.data(), names.data(), &h);
    BOOST_REQUIRE_EQUAL(st, DEVMESH_SUCCESS);
    std::deque<Owned> keep;  // every handle of the chain, freed at the end
    keep.emplace_back(h == sentinel ? nullptr : h);
    // Non-members (and members once a check failed) draw the same random
    // numbers and follow the reference without calling, so that every rank
    // stays on the same chain.
    bool active = c.my_index >= 0;
    if (!active) BOOST_TEST(h == nullptr);
    std::string trail = "trial " + std::to_string(trial) + " root " + describe(c.root);
    if (active) verify_view(h, c, trail);

    int forced = -1;  // a reversal is followed by a flatten, then an unflatten
    for (int step = 0; step < 10; ++step) {
      const bool was_forced = forced >= 0;
      int op = was_forced ? forced : std::uniform_int_distribution<int>(0, 12)(rng);
      if (op == 12) op = 11;
      forced = op == 11 ? 3 : (op == 3 && was_forced) ? 6 : -1;
      devmesh_t out = sentinel;
      int want = DEVMESH_SUCCESS;
      std::vector<RDim> next;
      bool next_is_root = false;
      std::string label;
      if (op < 3 || op == 11) {  // slice: a random subset in random order (or all reversed)
        std::vector<RDim> pick = c.dims;
        if (op == 11) {
          std::reverse(pick.begin(), pick.end());
        } else {
          std::shuffle(pick.begin(), pick.end(), rng);
          pick.resize(std::uniform_int_distribution<std::size_t>(1, pick.size())(rng));
        }
        if (c.is_root && !c.registry.empty() && std::uniform_int_distribution<int>(0, 2)(rng) != 0) {
          const RDim& r = c.registry[std::uniform_int_distribution<std::size_t>(0, c.registry.size() - 1)(rng)];
          pick.insert(pick.begin() + static_cast<std::ptrdiff_t>(
                                         std::uniform_int_distribution<std::size_t>(0, pick.size())(rng)),
                      r);
        }
        std::vector<std::string> sn;
        std::vector<RModes> layouts;
        for (const auto& d : pick) {
          sn.push_back(d.name);
          layouts.push_back(d.modes);
        }
        label = "slice " + describe(pick);
        if (ref::overlap(layouts)) want = DEVMESH_ERR_OVERLAP;
        next = pick;
        if (active) {
          Names s(sn);
          st = devmesh_slice(keep.back(), s.size(), s.data(), &out);
        }
      } else if (op < 6) {  // flatten: default name, a fresh one, or a registered one
        const int choice = std::uniform_int_distribution<int>(0, 2)(rng);
        std::optional<std::string> name;
        if (choice == 1) name = "f" + std::to_string(fresh++);
        if (choice == 2 && !c.registry.empty())
          name = c.registry[std::uniform_int_distribution<std::size_t>(0, c.registry.size() - 1)(rng)].name;
        const std::string fname = name ? *name : join(c.dims);
        RModes flat;
        for (const auto& d : c.dims) flat.insert(flat.end(), d.modes.begin(), d.modes.end());
        label = "flatten " + fname;
        const auto root_dim =
            std::find_if(c.root.begin(), c.root.end(), [&](const RDim& d) { return d.name == fname; });
        const auto reg =
            std::find_if(c.registry.begin(), c.registry.end(), [&](const RDim& d) { return d.name == fname; });
        if (root_dim != c.root.end()) {
          // Only a 1-D view of that very root dim may use its name: itself.
          if (c.dims.size() == 1 && c.dims[0].name == fname && c.dims[0].modes == root_dim->modes) {
            next = c.dims;
            next_is_root = c.is_root;
          } else {
            want = DEVMESH_ERR_DUPLICATE_NAME;
          }
        } else if (reg != c.registry.end()) {
          if (ref::same_function(reg->modes, flat))
            next = {*reg};
          else
            want = DEVMESH_ERR_DUPLICATE_NAME;
        } else {
          next = {{fname, flat}};
          c.registry.push_back(next[0]);
        }
        if (active) st = devmesh_flatten(keep.back(), name ? name->c_str() : nullptr, &out);
      } else if (op < 9) {  // unflatten a random dim into 1 to 3 random factors
        std::size_t at = std::uniform_int_distribution<std::size_t>(0, c.dims.size() - 1)(rng);
        if (was_forced || std::uniform_int_distribution<int>(0, 1)(rng))  // prefer a dim of several modes
          at = static_cast<std::size_t>(std::max_element(c.dims.begin(), c.dims.end(), [](const RDim& x, const RDim& y) {
                                          return x.modes.size() < y.modes.size();
                                        }) - c.dims.begin());
        const RDim d = c.dims[at];
        const int parts = std::uniform_int_distribution<int>(1, 3)(rng);
        std::vector<long> sizes = random_factors(ref::size(d.modes), parts, rng);
        if (d.modes.size() > 1 && (was_forced || std::uniform_int_distribution<int>(0, 2)(rng) == 0)) {
          // The dim's own mode sizes, reversed: (3,2):(1,3) into (2,3) cuts modes.
          sizes.clear();
          for (auto it = d.modes.rbegin(); it != d.modes.rend(); ++it) sizes.push_back(it->size);
        }
        const int parts_used = static_cast<int>(sizes.size());
        std::vector<std::string> un;
        for (int i = 0; i < parts_used; ++i) un.push_back("u" + std::to_string(fresh++));
        const bool clash = c.dims.size() > 1 && std::uniform_int_distribution<int>(0, 9)(rng) == 0;
        if (clash) un.back() = c.dims[(at + 1) % c.dims.size()].name;
        label = "unflatten " + d.name + " into";
        for (long s : sizes) label += " " + std::to_string(s);
        const auto split = ref::split(d.modes, sizes);
        if (clash) {
          want = DEVMESH_ERR_DUPLICATE_NAME;
        } else if (!split) {
          want = DEVMESH_ERR_SHAPE_MISMATCH;
        } else {
          next.assign(c.dims.begin(), c.dims.begin() + static_cast<std::ptrdiff_t>(at));
          for (std::size_t i = 0; i < un.size(); ++i) next.push_back({un[i], (*split)[i]});
          next.insert(next.end(), c.dims.begin() + static_cast<std::ptrdiff_t>(at) + 1, c.dims.end());
        }
        if (active) {
          std::vector<int> si(sizes.begin(), sizes.end());
          Names u(un);
          st = devmesh_unflatten(keep.back(), d.name.c_str(), parts_used, si.data(), u.data(), &out);
        }
      } else {  // root
        label = "root";
        next = c.root;
        next_is_root = true;
        if (active) st = devmesh_root(keep.back(), &out);
      }
      trail += " | " + label;
      // CAPI_TRACE=1 prints the chain of ops from rank 0, to replay a failure.
      if (std::getenv("CAPI_TRACE") && me == 0) std::printf("%s\n", label.c_str());
      if (active) {
        BOOST_TEST_CONTEXT(trail) {
          BOOST_TEST(st == want, "status " << st << ", expected " << want << ": " << devmesh_last_error());
          ++ops_checked;
          if (st != want) {
            if (st == DEVMESH_SUCCESS) keep.emplace_back(out);
            active = false;  // already reported; the handle no longer matches the reference
          } else if (want != DEVMESH_SUCCESS) {
            ++errors_checked;
            ++by_status[want];
            BOOST_TEST(out == sentinel);
            BOOST_TEST(std::string(devmesh_last_error()).size() > 0);
          } else {
            keep.emplace_back(out);
          }
        }
      }
      if (want != DEVMESH_SUCCESS) continue;
      c.dims = next;
      c.is_root = next_is_root;
      if (active) verify_view(keep.back(), c, trail + " -> " + describe(c.dims));
    }
    keep.clear();
    BOOST_TEST(comm_counter::live() == before);
  }
  // Every rank checked something unless it sat out every trial.
  BOOST_TEST_MESSAGE("rank " << me << ": " << ops_checked << " ops checked, " << errors_checked
                             << " expected errors (shape mismatch " << by_status[DEVMESH_ERR_SHAPE_MISMATCH]
                             << ", duplicate name " << by_status[DEVMESH_ERR_DUPLICATE_NAME] << ", overlap "
                             << by_status[DEVMESH_ERR_OVERLAP] << ")");
  int total_errors = 0;
  MPI_Allreduce(&errors_checked, &total_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (n >= 3) BOOST_TEST(total_errors > 0);  // the chains did reach error paths
}

// ---- Cartesian views, neighbours, groups with their communicator ----------
// Against a brute force of the (A, B) root grid: root index x = i*B + j is
// world rank x; a view dim is a root dim (0: a, 1: b).

namespace {

struct Grid {
  int A = 1, B = 1;
  int coord(int x, int d) const { return d == 0 ? x / B : x % B; }
  int extent(int d) const { return d == 0 ? A : B; }
  // The members of x's group over the view dims `dims` (others fixed),
  // ordered row-major by their coordinates on them.
  std::vector<int> group(int x, const std::vector<int>& dims) const {
    std::vector<std::pair<int, int>> keyed;
    for (int y = 0; y < A * B; ++y) {
      bool same = true;
      for (int d = 0; d < 2; ++d)
        if (std::find(dims.begin(), dims.end(), d) == dims.end() && coord(y, d) != coord(x, d)) same = false;
      if (!same) continue;
      int k = 0;
      for (int d : dims) k = k * extent(d) + coord(y, d);
      keyed.emplace_back(k, y);
    }
    std::sort(keyed.begin(), keyed.end());
    std::vector<int> out;
    for (const auto& [k, y] : keyed) out.push_back(y);
    return out;
  }
};

int wrap_or_null(int j, int n, bool periodic) {
  if (periodic) return ((j % n) + n) % n;
  return j < 0 || j >= n ? MPI_PROC_NULL : j;
}

}  // namespace

BOOST_AUTO_TEST_CASE(cart_comm_periodic_of_views) {
  int shape[2] = {0, 0};
  MPI_Dims_create(world_size(), 2, shape);
  const Grid g{shape[0], shape[1]};
  Names names{"a", "b"};
  Owned m;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, names.data(), m.out()), DEVMESH_SUCCESS);
  Names ba{"b", "a"}, just_b{"b"};
  Owned t, s;
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 2, ba.data(), t.out()), DEVMESH_SUCCESS);
  BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, just_b.data(), s.out()), DEVMESH_SUCCESS);
  const std::vector<std::pair<devmesh_t, std::vector<int>>> views = {{m, {0, 1}}, {t, {1, 0}}, {s, {1}}};
  const int me = world_rank();
  for (const auto& [h, dims] : views) {
    const int nd = static_cast<int>(dims.size());
    for (const std::vector<int>& periodic : {std::vector<int>(dims.size(), 0), std::vector<int>(dims.size(), 1),
                                              std::vector<int>{1, 0, 1}}) {
      BOOST_TEST_CONTEXT("view dims " << dims.size() << " first " << dims[0] << " periodic " << periodic[0]) {
        MPI_Comm cart = MPI_COMM_NULL;
        BOOST_REQUIRE_EQUAL(devmesh_cart_comm_periodic(h, nd, periodic.data(), &cart), DEVMESH_SUCCESS);
        MPI_Comm again = MPI_COMM_NULL;
        BOOST_TEST(devmesh_cart_comm_periodic(h, nd, periodic.data(), &again) == DEVMESH_SUCCESS);
        BOOST_TEST(again == cart);  // the same communicator again
        const std::vector<int> group = g.group(me, dims);
        BOOST_TEST(members(cart) == group);
        std::vector<int> cd(dims.size()), cp(dims.size()), cc(dims.size());
        MPI_Cart_get(cart, nd, cd.data(), cp.data(), cc.data());
        for (std::size_t i = 0; i < dims.size(); ++i) {
          BOOST_TEST(cd[i] == g.extent(dims[i]));
          BOOST_TEST(cp[i] == periodic[i]);
          BOOST_TEST(cc[i] == g.coord(me, dims[i]));
        }
        for (int r = 0; r < static_cast<int>(group.size()); ++r) {
          std::vector<int> rc(dims.size());
          MPI_Cart_coords(cart, r, nd, rc.data());
          for (std::size_t i = 0; i < dims.size(); ++i)
            BOOST_TEST(rc[i] == g.coord(group[static_cast<std::size_t>(r)], dims[i]));
        }
      }
    }
    // Non-periodic is devmesh_cart_comm of the view.
    MPI_Comm plain = MPI_COMM_NULL, none = MPI_COMM_NULL;
    BOOST_TEST(devmesh_cart_comm(h, &plain) == DEVMESH_SUCCESS);
    BOOST_TEST(devmesh_cart_comm_periodic(h, 0, nullptr, &none) == DEVMESH_SUCCESS);
    BOOST_TEST(plain == none);
    int ndims = -1;
    MPI_Cartdim_get(plain, &ndims);
    BOOST_TEST(ndims == nd);
  }
  // Errors, alike everywhere, output untouched, nothing made.
  int count = 0;
  BOOST_TEST(devmesh_comm_count(m, &count) == DEVMESH_SUCCESS);
  MPI_Comm out = MPI_COMM_SELF;
  int one[] = {1};
  expect_error_everywhere(devmesh_cart_comm_periodic(m, 1, one, &out), DEVMESH_ERR_INVALID_ARGUMENT,
                          "one periodic flag per dim");
  BOOST_TEST(out == MPI_COMM_SELF);
  expect_error_everywhere(devmesh_cart_comm_periodic(m, 2, nullptr, &out), DEVMESH_ERR_INVALID_ARGUMENT, "periodic");
  BOOST_TEST(out == MPI_COMM_SELF);
  expect_error_everywhere(devmesh_cart_comm_periodic(m, 0, nullptr, nullptr), DEVMESH_ERR_INVALID_ARGUMENT, "comm");
  expect_error_everywhere(devmesh_cart_comm_periodic(m, -1, one, &out), DEVMESH_ERR_INVALID_ARGUMENT, "ndims");
  BOOST_TEST(out == MPI_COMM_SELF);
  int after = 0;
  BOOST_TEST(devmesh_comm_count(m, &after) == DEVMESH_SUCCESS);
  BOOST_TEST(after == count);
}

BOOST_AUTO_TEST_CASE(neighbors_match_cart_shift_and_brute_force) {
  int shape[2] = {0, 0};
  MPI_Dims_create(world_size(), 2, shape);
  const Grid g{shape[0], shape[1]};
  Names names{"a", "b"};
  Owned m;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, names.data(), m.out()), DEVMESH_SUCCESS);
  const int me = world_rank();
  for (int d = 0; d < 2; ++d) {
    Names one{names.s[static_cast<std::size_t>(d)]};
    Owned line;
    BOOST_REQUIRE_EQUAL(devmesh_slice(m, 1, one.data(), line.out()), DEVMESH_SUCCESS);
    const int n = g.extent(d), k = g.coord(me, d);
    const std::vector<int> members_of_line = g.group(me, {d});
    for (int periodic : {0, 1}) {
      MPI_Comm cart = MPI_COMM_NULL;
      BOOST_REQUIRE_EQUAL(devmesh_cart_comm_periodic(line, 1, &periodic, &cart), DEVMESH_SUCCESS);
      for (int dist = -n - 2; dist <= n + 2; ++dist) {
        BOOST_TEST_CONTEXT("dim " << one.s[0] << " periodic " << periodic << " distance " << dist) {
          int prev = int_sentinel, next = int_sentinel, pprev = int_sentinel, pnext = int_sentinel;
          BOOST_REQUIRE_EQUAL(devmesh_neighbors(m, one.s[0].c_str(), periodic, dist, &prev, &next, &pprev, &pnext),
                              DEVMESH_SUCCESS);
          int src = -2, dst = -2;
          MPI_Cart_shift(cart, 0, dist, &src, &dst);
          BOOST_TEST(prev == src);
          BOOST_TEST(next == dst);
          const int lp = wrap_or_null(k - dist, n, periodic), ln = wrap_or_null(k + dist, n, periodic);
          BOOST_TEST(prev == lp);
          BOOST_TEST(next == ln);
          BOOST_TEST(pprev == (lp == MPI_PROC_NULL ? MPI_PROC_NULL : members_of_line[static_cast<std::size_t>(lp)]));
          BOOST_TEST(pnext == (ln == MPI_PROC_NULL ? MPI_PROC_NULL : members_of_line[static_cast<std::size_t>(ln)]));
          // NULL outputs are skipped.
          int only = int_sentinel;
          BOOST_TEST(devmesh_neighbors(m, one.s[0].c_str(), periodic, dist, nullptr, nullptr, nullptr, &only) ==
                     DEVMESH_SUCCESS);
          BOOST_TEST(only == pnext);
        }
      }
    }
  }
  int prev = int_sentinel, next = int_sentinel;
  expect_error_everywhere(devmesh_neighbors(m, "zz", 0, 1, &prev, &next, nullptr, nullptr), DEVMESH_ERR_UNKNOWN_DIM,
                          "'zz'");
  expect_error_everywhere(devmesh_neighbors(m, nullptr, 0, 1, &prev, &next, nullptr, nullptr),
                          DEVMESH_ERR_INVALID_ARGUMENT, "dim name is needed");
  BOOST_TEST(prev == int_sentinel);
  BOOST_TEST(next == int_sentinel);
}

BOOST_AUTO_TEST_CASE(all_groups_comm_brute_force) {
  int shape[2] = {0, 0};
  MPI_Dims_create(world_size(), 2, shape);
  const Grid g{shape[0], shape[1]};
  Names names{"a", "b"};
  Owned m;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, names.data(), m.out()), DEVMESH_SUCCESS);
  const int W = world_size(), me = world_rank();
  for (int d = 0; d < 2; ++d) {
    const char* dim = names.p[static_cast<std::size_t>(d)];
    // Brute force: groups in order of their smallest rank.
    std::vector<int> expect;
    for (int x = 0; x < W; ++x) {
      const std::vector<int> grp = g.group(x, {d});
      if (grp[0] == x) expect.insert(expect.end(), grp.begin(), grp.end());
    }
    const std::vector<int> mine = g.group(me, {d});
    const int n = g.extent(d);
    std::vector<int> ranks(static_cast<std::size_t>(W) + 1, int_sentinel);
    int own = int_sentinel;
    MPI_Comm c = MPI_COMM_NULL;
    BOOST_REQUIRE_EQUAL(devmesh_all_groups_comm(m, dim, W + 1, ranks.data(), &own, &c), DEVMESH_SUCCESS);
    BOOST_TEST(std::vector<int>(ranks.begin(), ranks.begin() + W) == expect);
    BOOST_TEST(ranks[static_cast<std::size_t>(W)] == int_sentinel);  // past the result: untouched
    BOOST_REQUIRE(own >= 0);
    BOOST_REQUIRE(own < W / n);
    BOOST_TEST(std::vector<int>(ranks.begin() + own * n, ranks.begin() + (own + 1) * n) == mine);
    BOOST_TEST(members(c) == mine);
    MPI_Comm direct = MPI_COMM_NULL;
    BOOST_TEST(devmesh_comm(m, dim, &direct) == DEVMESH_SUCCESS);
    BOOST_TEST(c == direct);
    MPI_Comm ac = MPI_COMM_NULL;
    std::vector<int> again(static_cast<std::size_t>(W), int_sentinel);
    BOOST_TEST(devmesh_all_groups_comm(m, dim, W, again.data(), nullptr, &ac) == DEVMESH_SUCCESS);
    BOOST_TEST(ac == c);
    BOOST_TEST(again == expect);
  }
  // Errors: same status everywhere, outputs untouched, nothing made.
  Owned fresh;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 2, shape, names.data(), fresh.out()), DEVMESH_SUCCESS);
  int made = -1;  // none with MPI 4; the root communicator with MPI 3
  BOOST_TEST(devmesh_comm_count(fresh, &made) == DEVMESH_SUCCESS);
  std::vector<int> ranks(static_cast<std::size_t>(W), int_sentinel);
  int own = int_sentinel;
  MPI_Comm c = MPI_COMM_SELF;
  expect_error_everywhere(devmesh_all_groups_comm(fresh, "a", W - 1, ranks.data(), &own, &c),
                          DEVMESH_ERR_INVALID_ARGUMENT, "maxranks");
  expect_error_everywhere(devmesh_all_groups_comm(fresh, "zz", W, ranks.data(), &own, &c), DEVMESH_ERR_UNKNOWN_DIM,
                          "'zz'");
  expect_error_everywhere(devmesh_all_groups_comm(fresh, "a", W, nullptr, &own, &c), DEVMESH_ERR_INVALID_ARGUMENT,
                          "ranks");
  expect_error_everywhere(devmesh_all_groups_comm(fresh, "a", W, ranks.data(), &own, nullptr),
                          DEVMESH_ERR_INVALID_ARGUMENT, "comm");
  BOOST_TEST(std::all_of(ranks.begin(), ranks.end(), [](int r) { return r == int_sentinel; }));
  BOOST_TEST(own == int_sentinel);
  BOOST_TEST(c == MPI_COMM_SELF);
  int count = -1;
  BOOST_TEST(devmesh_comm_count(fresh, &count) == DEVMESH_SUCCESS);
  BOOST_TEST(count == made);
}

BOOST_AUTO_TEST_CASE(unflatten_with_an_inferred_size) {
  const int W = world_size();
  int shape[1] = {W};
  Names names{"w"};
  Owned m;
  BOOST_REQUIRE_EQUAL(devmesh_create(MPI_COMM_WORLD, 1, shape, names.data(), m.out()), DEVMESH_SUCCESS);
  Names uv{"u", "v"};
  for (int f = 1; f <= W + 1; ++f) {
    int sizes[] = {-1, f};
    devmesh_t out = sentinel;
    const int st = devmesh_unflatten(m, "w", 2, sizes, uv.data(), &out);
    if (W % f != 0) {
      expect_error_everywhere(st, DEVMESH_ERR_SHAPE_MISMATCH, "does not divide");
      BOOST_TEST(out == sentinel);
      continue;
    }
    BOOST_REQUIRE_EQUAL(st, DEVMESH_SUCCESS);
    Owned u(out);
    BOOST_TEST(size_of(u, "u") == W / f);
    BOOST_TEST(size_of(u, "v") == f);
    // Brute force: v is a run of f consecutive ranks.
    std::vector<int> run(static_cast<std::size_t>(f));
    std::iota(run.begin(), run.end(), world_rank() / f * f);
    BOOST_TEST(group_of(u, "v") == run);
  }
  devmesh_t out = sentinel;
  int two[] = {-1, -1};
  expect_error_everywhere(devmesh_unflatten(m, "w", 2, two, uv.data(), &out), DEVMESH_ERR_SHAPE_MISMATCH,
                          "more than one");
  int neg[] = {-3, 1};
  expect_error_everywhere(devmesh_unflatten(m, "w", 2, neg, uv.data(), &out), DEVMESH_ERR_INVALID_ARGUMENT, "-3");
  BOOST_TEST(out == sentinel);
}
