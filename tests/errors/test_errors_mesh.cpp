// The bad-input matrix through the C++ Mesh API (docs/ERRORS.md), under
// mpiexec at 1, 2, 3 and 6 ranks. Every case checks the exact
// devmesh::Status, that every rank got the same one, that the message names
// the offending value, that a Mesh assigned from the failing call keeps its
// old value, that the mesh operated on is unchanged (dims, registered
// names, communicators) and that no communicator leaked.
#define BOOST_TEST_MODULE errors_mesh
#include "mpi_test.hpp"

#include <climits>
#include <functional>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

using Names = std::vector<std::string>;
using Ints = std::vector<int>;

// Runs f, which must throw Error(want) with a message containing every
// needle; returns the status it got (success when nothing was thrown).
Status expect_error(const std::function<void()>& f, Status want, std::initializer_list<std::string_view> needles) {
  try {
    f();
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(want),
               "status " << e.status() << " (" << e.what() << "), expected " << want);
    for (std::string_view n : needles)
      BOOST_TEST(std::string_view(e.what()).find(n) != std::string_view::npos,
                 "message '" << e.what() << "' lacks '" << n << "'");
    return e.status();
  } catch (const std::exception& e) {
    BOOST_ERROR("expected Error(" << want << "), got another exception: " << e.what());
    return Status::internal;
  }
  BOOST_ERROR("expected Error(" << want << "), got success");
  return Status::success;
}

// The same, plus: every rank got the same status.
void expect_error_everywhere(const std::function<void()>& f, Status want,
                             std::initializer_list<std::string_view> needles) {
  const Status s = expect_error(f, want, needles);
  BOOST_TEST(same_everywhere(static_cast<int>(s)), "ranks got different statuses");
}

// A failing Mesh::create: the exact status on every rank, the message, a
// Mesh assigned from the call keeps its old value, no communicator leaks.
void expect_create_error(const std::function<Mesh()>& create, Status want,
                         std::initializer_list<std::string_view> needles) {
  const long live = comm_counter::live();
  {
    const Mesh kept = Mesh::create(MPI_COMM_WORLD, {0}, {"kept"});
    Mesh out = kept;
    const long with_kept = comm_counter::live();
    expect_error_everywhere([&] { out = create(); }, want, needles);
    BOOST_TEST(out.is_member());
    BOOST_TEST(out.same_root(kept));
    BOOST_TEST((out.names() == Names{"kept"}));
    BOOST_TEST(out.comm_count() == comm_counter::at_creation);
    BOOST_TEST(comm_counter::live() == with_kept);
  }
  BOOST_TEST(comm_counter::live() == live);
}

// What a failing view operation or query must leave as it was.
struct Snapshot {
  std::string view, root;
  std::size_t registered;
  int comms;
  long live;
  explicit Snapshot(const Mesh& m)
      : view(m.view().to_string()),
        root(m.root().view().to_string()),
        registered(m.view().registered().size()),
        comms(m.comm_count()),
        live(comm_counter::live()) {}
  void check(const Mesh& m) const {
    BOOST_TEST(m.view().to_string() == view);
    BOOST_TEST(m.root().view().to_string() == root);
    BOOST_TEST(m.view().registered().size() == registered, "a failed call registered a name");
    BOOST_TEST(m.comm_count() == comms, "a failed call made a communicator");
    BOOST_TEST(comm_counter::live() == live);
  }
};

// A failing operation on m that would produce a new Mesh: the status on
// every rank, the message, `out` and m untouched.
void expect_op_error(const Mesh& m, const std::function<Mesh()>& op, Status want,
                     std::initializer_list<std::string_view> needles) {
  const Snapshot before(m);
  Mesh out = m;
  expect_error_everywhere([&] { out = op(); }, want, needles);
  BOOST_TEST(out.view().to_string() == before.view, "the output Mesh was overwritten");
  before.check(m);
}

const std::string long_name(max_name_length + 1, 'q');
const std::string longest_name(max_name_length, 'n');

}  // namespace

// ---------------------------------------------------------------------------
// Mesh::create: each bad input, collective over MPI_COMM_WORLD.
BOOST_AUTO_TEST_SUITE(create)

BOOST_AUTO_TEST_CASE(null_parent) {
  expect_create_error([] { return Mesh::create(MPI_COMM_NULL, {1}, {"x"}); }, Status::invalid_argument,
                      {"MPI_COMM_NULL"});
  expect_create_error([] { return Mesh::create(MPI_COMM_NULL, {1}, {"x"}, Ints{0}); }, Status::invalid_argument,
                      {"MPI_COMM_NULL"});
}

BOOST_AUTO_TEST_CASE(ndim_zero) {
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {}, {}); }, Status::invalid_argument,
                      {"ndim is 0"});
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {}, {}, Ints{0}); }, Status::invalid_argument,
                      {"ndim is 0"});
}

BOOST_AUTO_TEST_CASE(names_count_differs_from_ndim) {
  const int n = world_size();
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n}, {"a", "b"}); }, Status::invalid_argument,
                      {"1 dims", "2 names"});
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n, 1}, {"a"}); }, Status::invalid_argument,
                      {"2 dims", "1 names"});
}

BOOST_AUTO_TEST_CASE(negative_size) {
  const int n = world_size();
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n, -3}, {"a", "b"}); }, Status::invalid_argument,
                      {"-3", "'b'", "negative"});
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {0, -1}, {"a", "b"}); }, Status::invalid_argument,
                      {"-1", "negative"});
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {-1}, {"a"}, Ints{0}); }, Status::invalid_argument,
                      {"-1", "negative"});
}

BOOST_AUTO_TEST_CASE(zero_size_that_cannot_be_inferred) {
  const int n = world_size();
  // A 0 is chosen as MPI_Dims_create does; the fixed sizes must divide the world.
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {0, n + 1}, {"a", "b"}); },
                      Status::shape_mismatch, {std::to_string(n + 1), "does not divide"});
  // With a rank list, zeros are chosen from its length.
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {0, 2}, {"a", "b"}, Ints{0}); },
                      Status::shape_mismatch, {"2", "does not divide 1"});
}

BOOST_AUTO_TEST_CASE(shape_world_mismatch) {
  const int n = world_size();
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n + 1}, {"a"}); }, Status::shape_mismatch,
                      {"multiplies to " + std::to_string(n + 1), "parent has " + std::to_string(n)});
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n, 2}, {"a", "b"}); }, Status::shape_mismatch,
                      {"multiplies to " + std::to_string(2 * n)});
  if (n > 1)
    expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n - 1}, {"a"}); }, Status::shape_mismatch,
                        {"multiplies to " + std::to_string(n - 1)});
  // A product past 63 bits is a mismatch too, not an overflow.
  expect_create_error(
      [] { return Mesh::create(MPI_COMM_WORLD, {65536, 65536, 65536, 65536}, {"a", "b", "c", "d"}); },
      Status::shape_mismatch, {"overflows"});
}

BOOST_AUTO_TEST_CASE(empty_name) {
  const int n = world_size();
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n, 1}, {"a", ""}); }, Status::invalid_argument,
                      {"dim 1", "empty"});
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n}, {""}, Ints{0}); }, Status::invalid_argument,
                      {"dim 0", "empty"});
}

BOOST_AUTO_TEST_CASE(duplicate_name) {
  const int n = world_size();
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n, 1, 1}, {"a", "b", "a"}); },
                      Status::duplicate_name, {"'a'", "twice"});
}

BOOST_AUTO_TEST_CASE(over_long_name) {
  const int n = world_size();
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {n, 1}, {"a", long_name}); },
                      Status::invalid_argument, {long_name.substr(0, 32), "longer than 256 bytes"});
  // Exactly max_name_length bytes is fine.
  BOOST_TEST((Mesh::create(MPI_COMM_WORLD, {n}, {longest_name}).names() == Names{longest_name}));
}

BOOST_AUTO_TEST_CASE(rank_list_empty) {
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {0}, {"a"}, Ints{}); }, Status::invalid_argument,
                      {"rank list is empty"});
}

BOOST_AUTO_TEST_CASE(rank_list_duplicate_rank) {
  const int n = world_size();
  // With one rank the list is also longer than the parent: the repeat is what is reported.
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {2}, {"a"}, Ints{0, 0}); },
                      Status::invalid_argument, {"rank 0", "twice"});
  if (n >= 3)
    expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {3}, {"a"}, Ints{2, 1, 2}); },
                        Status::invalid_argument, {"rank 2", "twice"});
}

BOOST_AUTO_TEST_CASE(rank_list_out_of_range) {
  const int n = world_size();
  expect_create_error([n] { return Mesh::create(MPI_COMM_WORLD, {1}, {"a"}, Ints{n}); }, Status::invalid_argument,
                      {"rank " + std::to_string(n), "out of range [0, " + std::to_string(n) + ")"});
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {1}, {"a"}, Ints{-1}); }, Status::invalid_argument,
                      {"rank -1", "out of range"});
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {1}, {"a"}, Ints{INT_MAX}); },
                      Status::invalid_argument, {std::to_string(INT_MAX), "out of range"});
}

BOOST_AUTO_TEST_CASE(rank_list_length_mismatch) {
  expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {2}, {"a"}, Ints{0}); }, Status::shape_mismatch,
                      {"multiplies to 2", "rank list has 1"});
  const int n = world_size();
  if (n >= 2)
    expect_create_error([] { return Mesh::create(MPI_COMM_WORLD, {1}, {"a"}, Ints{0, 1}); },
                        Status::shape_mismatch, {"multiplies to 1", "rank list has 2"});
}

BOOST_AUTO_TEST_CASE(unknown_backend_names) {
  const int n = world_size();
  for (const std::string bad : {"nosuch", "", "MPI", "mpi ", "../lib/x"}) {
    BOOST_TEST_CONTEXT("backend '" << bad << "'") {
      MeshOptions o;
      o.backend = bad;
      expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {n}, {"a"}, o); }, Status::invalid_argument,
                          {"unknown backend '" + bad + "'", "\"mpi\" is built in"});
      MeshOptions d;
      d.dim_backends = {{"a", bad}};
      expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {n}, {"a"}, d); }, Status::invalid_argument,
                          {"unknown backend '" + bad + "'"});
      expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {n}, {"a"}, Ints{0}, d); },
                          Status::invalid_argument, {"unknown backend '" + bad + "'"});
    }
  }
}

// One rank's bad input (each kind of the matrix) makes every rank fail with
// inconsistent, nobody hangs, nothing leaks.
BOOST_AUTO_TEST_CASE(one_rank_alone_is_inconsistent_everywhere) {
  const int n = world_size();
  if (n < 2) return;
  const bool odd = world_rank() == n - 1;
  const std::string name = odd ? long_name : "a";
  expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {n}, {name}); }, Status::inconsistent,
                      {"different arguments"});
  expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {odd ? -1 : n}, {"a"}); }, Status::inconsistent,
                      {"different arguments"});
  expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {n}, odd ? Names{"a", "b"} : Names{"a"}); },
                      Status::inconsistent, {"different arguments"});
  MeshOptions o;
  o.backend = odd ? "gloo" : "mpi";
  expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {n}, {"a"}, o); }, Status::inconsistent,
                      {"different arguments"});
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  if (odd) all[0] = 1;  // a repeated rank on one rank only
  expect_create_error([&] { return Mesh::create(MPI_COMM_WORLD, {n}, {"a"}, all); }, Status::inconsistent,
                      {"different arguments"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// slice, flatten, unflatten: not collective, but every rank makes the same
// call here, so the status must agree everywhere.
BOOST_AUTO_TEST_SUITE(views)

BOOST_AUTO_TEST_CASE(slice_unknown_repeated_empty) {
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"a", "b", "c"});
  expect_op_error(m, [&] { return m.slice({"a", "zz"}); }, Status::unknown_dim, {"'zz'", "can slice a, b, c"});
  expect_op_error(m, [&] { return m["zz"]; }, Status::unknown_dim, {"'zz'"});
  expect_op_error(m, [&] { return m[{"c", "zz"}]; }, Status::unknown_dim, {"'zz'"});
  expect_op_error(m, [&] { return m[""]; }, Status::unknown_dim, {"unknown dim ''"});
  expect_op_error(m, [&] { return m.slice({"b", "b"}); }, Status::duplicate_name, {"'b'", "sliced twice"});
  expect_op_error(m, [&] { return m[{"a", "c", "a"}]; }, Status::duplicate_name, {"'a'", "sliced twice"});
  expect_op_error(m, [&] { return m.slice({}); }, Status::invalid_argument, {"at least one dim"});
  // A dim sliced away is unknown to the slice.
  const Mesh ab = m[{"a", "b"}];
  expect_op_error(ab, [&] { return ab["c"]; }, Status::unknown_dim, {"'c'", "can slice a, b"});
  // Registered names slice only from a root view.
  const Mesh bc = m[{"b", "c"}].flatten("bc");
  expect_op_error(ab, [&] { return ab["bc"]; }, Status::unknown_dim, {"'bc'"});
  BOOST_TEST((m.root()["bc"].names() == Names{"bc"}));
}

BOOST_AUTO_TEST_CASE(slice_overlapping_dims) {
  const int n = world_size();
  if (n < 2) return;  // with one rank every dim is trivial and nothing overlaps
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  const Mesh f = m[{"a", "b"}].flatten("f");
  const Mesh root = f.root();
  expect_op_error(root, [&] { return root[{"f", "a"}]; }, Status::overlap, {"f, a", "cover the same ranks"});
  expect_op_error(root, [&] { return root.slice({"b", "a", "f"}); }, Status::overlap, {"b, a, f"});
}

BOOST_AUTO_TEST_CASE(flatten_name_clashes) {
  const int n = world_size();
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"a", "b", "c"});
  // Root dims' names for other layouts (at one rank every layout is the
  // same, and a name reused for the same layout is that dim again).
  if (n >= 2) {
    const std::string other = m.size("a") != n ? "a" : "c";  // a dim of size other than n
    expect_op_error(m, [&] { return m.flatten(other); }, Status::duplicate_name,
                    {"'" + other + "'", "dim of the root mesh"});
    expect_op_error(m, [&] { return m[{"a", "b"}].flatten("c"); }, Status::duplicate_name, {"'c'"});
    expect_op_error(m, [&] { return m["a"].flatten("b"); }, Status::duplicate_name, {"'b'"});
  }
  expect_op_error(m, [&] { return m.flatten(""); }, Status::invalid_argument, {"flatten name is empty"});
  expect_op_error(m, [&] { return m.flatten(long_name); }, Status::invalid_argument,
                  {long_name.substr(0, 32), "longer than 256 bytes"});
  // A root dim into its own name, and a registered name with the same
  // layout, are not clashes.
  BOOST_TEST((m["b"].flatten("b").names() == Names{"b"}));
  const Mesh g = m[{"a", "b"}].flatten("g");
  BOOST_TEST((m[{"a", "b"}].flatten("g").view().to_string() == g.view().to_string()));
  if (n >= 2) {  // a: size n; c: size 1, another layout
    expect_op_error(m, [&] { return m["c"].flatten("g"); }, Status::duplicate_name,
                    {"'g'", "already registered"});
  }
  // The default name is checked like any other: two 256-byte names joined
  // by '_' are too long.
  const Mesh big = Mesh::create(MPI_COMM_WORLD, {n, 1}, {longest_name, std::string(max_name_length, 'm')});
  expect_op_error(big, [&] { return big.flatten(); }, Status::invalid_argument,
                  {longest_name.substr(0, 32), "longer than 256 bytes"});
  // The default name clashes like any other.
  const Mesh bc = m[{"b", "c"}].flatten();
  BOOST_TEST((bc.names() == Names{"b_c"}));
  if (n >= 2)
    expect_op_error(m, [&] { return m["a"].flatten("b_c"); }, Status::duplicate_name, {"'b_c'"});
}

BOOST_AUTO_TEST_CASE(unflatten_mismatches) {
  const int n = world_size();
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {n, 1, 1}, {"a", "b", "c"});
  expect_op_error(m, [&] { return m.unflatten("zz", {n}, {"x"}); }, Status::unknown_dim, {"'zz'"});
  expect_op_error(m, [&] { return m.unflatten("", {n}, {"x"}); }, Status::unknown_dim, {"unknown dim ''"});
  expect_op_error(m, [&] { return m.unflatten("a", {n + 1}, {"x"}); }, Status::shape_mismatch,
                  {"multiply to " + std::to_string(n + 1), "dim size " + std::to_string(n)});
  expect_op_error(m, [&] { return m.unflatten("a", {n, 2}, {"x", "y"}); }, Status::shape_mismatch,
                  {"multiply to " + std::to_string(2 * n)});
  expect_op_error(m, [&] { return m.unflatten("a", {65536, 65536, 65536, 65536}, {"w", "x", "y", "z"}); },
                  Status::shape_mismatch, {"overflow"});
  expect_op_error(m, [&] { return m.unflatten("a", {n, 1}, {"x"}); }, Status::invalid_argument,
                  {"2 sizes", "1 names"});
  expect_op_error(m, [&] { return m.unflatten("a", {n}, {"x", "y"}); }, Status::invalid_argument,
                  {"1 sizes", "2 names"});
  expect_op_error(m, [&] { return m.unflatten("a", {}, {}); }, Status::invalid_argument,
                  {"'a'", "at least one size"});
  // Zero and negative sizes other than one -1 (inferred): refused.
  expect_op_error(m, [&] { return m.unflatten("a", {0, n}, {"x", "y"}); }, Status::invalid_argument,
                  {"size 0", "at least 1"});
  expect_op_error(m, [&] { return m.unflatten("a", {n, 0}, {"x", "y"}); }, Status::invalid_argument,
                  {"size 0", "at least 1"});
  expect_op_error(m, [&] { return m.unflatten("a", {-2, n}, {"x", "y"}); }, Status::invalid_argument,
                  {"size -2", "at least 1"});
  expect_op_error(m, [&] { return m.unflatten("a", {-1, -1}, {"x", "y"}); }, Status::shape_mismatch,
                  {"more than one size -1"});
}

BOOST_AUTO_TEST_CASE(unflatten_name_clashes) {
  const int n = world_size();
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {n, 1, 1}, {"a", "b", "c"});
  const Mesh reg = m[{"b", "c"}].flatten("reg");
  expect_op_error(m, [&] { return m.unflatten("a", {n, 1}, {"x", ""}); }, Status::invalid_argument,
                  {"unflatten name is empty"});
  expect_op_error(m, [&] { return m.unflatten("a", {n, 1}, {"x", long_name}); }, Status::invalid_argument,
                  {long_name.substr(0, 32), "longer than 256 bytes"});
  expect_op_error(m, [&] { return m.unflatten("a", {n, 1}, {"x", "x"}); }, Status::duplicate_name,
                  {"'x'", "given twice"});
  expect_op_error(m, [&] { return m.unflatten("a", {n, 1}, {"x", "b"}); }, Status::duplicate_name,
                  {"'b'", "already a dim of this view"});
  // Names for another layout than their own (c and reg have size 1; at one
  // rank every layout is the same, and a name is then that dim again).
  const Mesh a = m["a"];
  if (n > 1) {
    expect_op_error(a, [&] { return a.unflatten("a", {n, 1}, {"c", "x"}); }, Status::duplicate_name,
                    {"'c'", "dim of the root mesh"});
    expect_op_error(m, [&] { return m.unflatten("a", {n, 1}, {"reg", "y"}); }, Status::duplicate_name,
                    {"'reg'", "registered"});
  }
  // A dim into its own name, with other new names, is fine.
  BOOST_TEST((m.unflatten("a", {n, 1}, {"a", "x"}).names() == Names{"a", "x", "b", "c"}));
}

// A split that cuts a mode into non-dividing pieces needs two different
// primes: a (2,3) root, transposed and flattened to (3,2):(1,3), split (2,3).
BOOST_AUTO_TEST_CASE(unflatten_that_does_not_fit) {
  const int n = world_size();
  if (n < 6) return;
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {2, 3}, {"p", "q"}, Ints{0, 1, 2, 3, 4, 5});
  if (!m) return;
  const Mesh t = m[{"q", "p"}].flatten("t");
  expect_error([&] { (void)t.unflatten("t", {2, 3}, {"x", "y"}); }, Status::shape_mismatch,
               {"(3,2):(1,3)", "non-dividing"});
  BOOST_TEST((t.unflatten("t", {3, 2}, {"x", "y"}).shape() == Ints{3, 2}));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// Queries and communicators on a member: unknown dims, a missing dim name.
BOOST_AUTO_TEST_SUITE(queries)

BOOST_AUTO_TEST_CASE(unknown_dim) {
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  const Snapshot before(m);
  const std::initializer_list<std::string_view> zz = {"unknown dim 'zz'", "this view has a, b"};
  expect_error_everywhere([&] { (void)m.size("zz"); }, Status::unknown_dim, zz);
  expect_error_everywhere([&] { (void)m.local_rank("zz"); }, Status::unknown_dim, zz);
  expect_error_everywhere([&] { (void)m.group("zz"); }, Status::unknown_dim, zz);
  expect_error_everywhere([&] { (void)m.all_groups("zz"); }, Status::unknown_dim, zz);
  expect_error_everywhere([&] { (void)m.comm("zz"); }, Status::unknown_dim, zz);
  expect_error_everywhere([&] { (void)m.communicator("zz"); }, Status::unknown_dim, zz);
  expect_error_everywhere([&] { (void)m.view().dim("zz"); }, Status::unknown_dim, zz);
  before.check(m);
}

BOOST_AUTO_TEST_CASE(dim_name_needed_on_a_multi_dim_view) {
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  const Snapshot before(m);
  const std::initializer_list<std::string_view> need = {"a dim name is needed", "2 dims"};
  expect_error_everywhere([&] { (void)m.size(""); }, Status::invalid_argument, need);
  expect_error_everywhere([&] { (void)m.local_rank(""); }, Status::invalid_argument, need);
  expect_error_everywhere([&] { (void)m.group(""); }, Status::invalid_argument, need);
  expect_error_everywhere([&] { (void)m.all_groups(""); }, Status::invalid_argument, need);
  expect_error_everywhere([&] { (void)m.comm(); }, Status::invalid_argument, need);
  expect_error_everywhere([&] { (void)m.communicator(); }, Status::invalid_argument, need);
  before.check(m);
  // A 1-D view needs none.
  BOOST_TEST(m["b"].local_rank("") == m.local_rank("b"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// The null mesh (default-constructed, moved-from, or what a non-member of
// a rank list gets): every operation and query throws not_member.
namespace {

void expect_not_member(const Mesh& m) {
  BOOST_TEST(!m.is_member());
  BOOST_TEST(!static_cast<bool>(m));
  BOOST_TEST(!m.same_root(m));
  const std::initializer_list<std::string_view> nm = {"not a member"};
  const Status want = Status::not_member;
  Mesh out;
  expect_error([&] { out = m.slice({"a"}); }, want, nm);
  expect_error([&] { out = m["a"]; }, want, nm);
  expect_error([&] { out = m[{"a", "b"}]; }, want, nm);
  expect_error([&] { out = m.flatten(); }, want, nm);
  expect_error([&] { out = m.flatten("f"); }, want, nm);
  expect_error([&] { out = m.unflatten("a", {1}, {"x"}); }, want, nm);
  expect_error([&] { out = m.root(); }, want, nm);
  BOOST_TEST(!out.is_member());
  expect_error([&] { (void)m.view(); }, want, nm);
  expect_error([&] { (void)m.ndim(); }, want, nm);
  expect_error([&] { (void)m.names(); }, want, nm);
  expect_error([&] { (void)m.shape(); }, want, nm);
  expect_error([&] { (void)m.size(); }, want, nm);
  expect_error([&] { (void)m.size("a"); }, want, nm);
  expect_error([&] { (void)m.coordinate(); }, want, nm);
  expect_error([&] { (void)m.local_rank("a"); }, want, nm);
  expect_error([&] { (void)m.group("a"); }, want, nm);
  expect_error([&] { (void)m.all_groups("a"); }, want, nm);
  expect_error([&] { (void)m.parent_rank(); }, want, nm);
  expect_error([&] { (void)m.comm("a"); }, want, nm);
  expect_error([&] { (void)m.comm(); }, want, nm);
  expect_error([&] { (void)m.communicator("a"); }, want, nm);
  expect_error([&] { m.create_comms(); }, want, nm);
  expect_error([&] { (void)m.cart_comm(); }, want, nm);
  expect_error([&] { (void)m.comm_count(); }, want, nm);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(null_mesh)

BOOST_AUTO_TEST_CASE(default_constructed_is_not_member) {
  const long live = comm_counter::live();
  expect_not_member(Mesh());
  BOOST_TEST(comm_counter::live() == live);
}

BOOST_AUTO_TEST_CASE(moved_from_is_not_member) {
  const long live = comm_counter::live();
  {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
    Mesh keep = std::move(m);
    expect_not_member(m);  // NOLINT(bugprone-use-after-move): the point of the test
    BOOST_TEST(keep.is_member());
    // Move assignment leaves the source null too.
    Mesh other;
    other = std::move(keep);
    expect_not_member(keep);  // NOLINT(bugprone-use-after-move)
    BOOST_TEST((other.names() == Names{"a", "b"}));
  }
  BOOST_TEST(comm_counter::live() == live);
}

BOOST_AUTO_TEST_CASE(non_member_of_a_rank_list) {
  const int n = world_size(), me = world_rank();
  if (n < 2) return;
  const long live = comm_counter::live();
  {
    // Every rank but the last: the last gets the null mesh.
    std::vector<int> ranks(static_cast<std::size_t>(n - 1));
    std::iota(ranks.begin(), ranks.end(), 0);
    const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 1}, {"a", "b"}, ranks);
    if (me == n - 1) {
      expect_not_member(m);
    } else {
      BOOST_TEST(m.is_member());
      BOOST_TEST(m.size() == n - 1);
    }
  }
  BOOST_TEST(comm_counter::live() == live);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// create_comms: collective over all members of the root, so a bad argument
// on some members only must fail everywhere, not leave the others waiting.
BOOST_AUTO_TEST_SUITE(create_comms)

BOOST_AUTO_TEST_CASE(unknown_path) {
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  const Snapshot before(m);
  for (int path : {-1, 4, 7})
    expect_error_everywhere([&] { m.create_comms(static_cast<CommPath>(path)); }, Status::invalid_argument,
                            {"path " + std::to_string(path)});
  before.check(m);
}

BOOST_AUTO_TEST_CASE(unknown_path_on_one_member_only) {
  const int n = world_size();
  if (n < 2) return;
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  const Snapshot before(m);
  const CommPath path = world_rank() == n - 1 ? static_cast<CommPath>(7) : CommPath::automatic;
  expect_error_everywhere([&] { m.create_comms(path); }, Status::inconsistent, {"different"});
  before.check(m);
  // The same call everywhere works afterwards.
  m.create_comms(CommPath::split);
  int size = 0;
  MPI_Comm_size(m.comm("a"), &size);
  BOOST_TEST(size == m.size("a"));
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// An MPI call that fails inside devmesh: Error(backend) keeps the code and
// class MPI returned, checked against MPI's own result for the same call.
BOOST_AUTO_TEST_SUITE(mpi_errors)

BOOST_AUTO_TEST_CASE(code_and_class_are_kept) {
  // Communicators that return errors (not the parent's fatal handler).
  MeshOptions o;
  o.comm_errors = CommErrors::return_codes;
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"a"}, o);
  Communicator& c = m.communicator("a");
  // A receive too small for the message this rank sent itself fails
  // locally (MPI_ERR_TRUNCATE), on every rank; this mesh's communicators
  // return errors (MPI_ERRORS_RETURN), so the same calls on a duplicate
  // that returns errors too give MPI's own result. (Bad ranks, counts or
  // buffers never reach MPI: the communicator's argument gate refuses them.)
  const int me = c.rank();
  std::int32_t two[2] = {7, 8}, one = 0;
  MPI_Comm reference = MPI_COMM_NULL;
  BOOST_REQUIRE(MPI_Comm_dup(m.comm("a"), &reference) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(reference, MPI_ERRORS_RETURN);
  MPI_Request sent = MPI_REQUEST_NULL;
  BOOST_REQUIRE(MPI_Isend(two, 2, MPI_INT32_T, me, 0, reference, &sent) == MPI_SUCCESS);
  const int want_code = MPI_Recv(&one, 1, MPI_INT32_T, me, 0, reference, MPI_STATUS_IGNORE);
  MPI_Wait(&sent, MPI_STATUS_IGNORE);
  MPI_Comm_free(&reference);
  BOOST_REQUIRE(want_code != MPI_SUCCESS);
  int want_class = -1;
  MPI_Error_class(want_code, &want_class);
  BOOST_TEST(want_class == MPI_ERR_TRUNCATE);

  auto truncated = [&] {
    Request r = c.isend(two, 2, DataType::int32, me);
    try {
      c.recv(&one, 1, DataType::int32, me);
    } catch (...) {
      r.wait();
      throw;
    }
  };
  const Status s = expect_error(truncated, Status::backend,
                                {"MPI_Recv failed", "MPI error class " + std::to_string(want_class)});
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
  try {
    truncated();
  } catch (const Error& e) {
    BOOST_TEST(e.mpi_class() == want_class);
    BOOST_TEST(e.mpi_code() != MPI_SUCCESS);
    int cls = -1;
    BOOST_TEST(MPI_Error_class(e.mpi_code(), &cls) == MPI_SUCCESS);
    BOOST_TEST(cls == want_class, "the kept code is of class " << cls);
  }
  // The communicator still works after the failed call.
  std::int32_t sum = 1;
  c.allreduce(&sum, &sum, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(sum == c.size());
}

BOOST_AUTO_TEST_CASE(other_errors_carry_no_mpi_code) {
  try {
    Mesh::create(MPI_COMM_WORLD, {world_size() + 1}, {"a"});
    BOOST_ERROR("a shape that does not fit the world was accepted");
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::shape_mismatch));
    BOOST_TEST(e.mpi_code() == MPI_SUCCESS);
    BOOST_TEST(e.mpi_class() == MPI_SUCCESS);
  }
  const Error plain(Status::internal, "x");
  BOOST_TEST(plain.mpi_code() == MPI_SUCCESS);
  BOOST_TEST(plain.mpi_class() == MPI_SUCCESS);
}

BOOST_AUTO_TEST_SUITE_END()
