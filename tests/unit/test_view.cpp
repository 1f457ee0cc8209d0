// Views (include/devmesh/view.hpp): every creation error, the worked
// examples of SEMANTICS.md section 4, a brute-force reference for random
// chains of operations, rank lists, dims_create, and 64-bit root sizes.
#define BOOST_TEST_MODULE view
#include <boost/test/unit_test.hpp>

#include "expect_error.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "devmesh/view.hpp"
#include "reference.hpp"

using namespace devmesh;

// BOOST_TEST only when the check fails: the hot loops run millions of them.
#define CHECK(...)                               \
  do {                                           \
    if (!(__VA_ARGS__)) BOOST_TEST(__VA_ARGS__); \
  } while (0)

namespace {

using Groups = std::vector<std::vector<index_t>>;
using Names = std::vector<std::string>;
using Sizes = std::vector<index_t>;

View make(Sizes shape, Names names, index_t world = 0, Sizes ranks = {}) {
  return View::create(RootSpec{std::move(shape), std::move(names), world, std::move(ranks)});
}

Groups groups(const View& v, std::string_view dim) { return v.all_groups(v.dim_index(dim)); }

// Runs f, which must throw Error(status) with a message containing every
// string of `mentions`.

}  // namespace

// ---------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(create_errors)

BOOST_AUTO_TEST_CASE(every_bad_input) {
  expect_error([] { make({}, {}); }, Status::invalid_argument, {"ndim is 0"});
  expect_error([] { make({2, 2}, {"a"}); }, Status::invalid_argument, {"2 dims", "1 names"});
  expect_error([] { make({2}, {"a", "b"}); }, Status::invalid_argument, {"1 dims", "2 names"});
  expect_error([] { make({2, 2}, {"a", ""}); }, Status::invalid_argument, {"dim 1", "empty"});
  const std::string long_name(max_name_length + 1, 'q');
  expect_error([&] { make({2}, {long_name}); }, Status::invalid_argument,
               {long_name.substr(0, 32), std::to_string(max_name_length)});
  expect_error([] { make({2, -3}, {"a", "b"}); }, Status::invalid_argument, {"-3", "'b'"});
  expect_error([] { make({2, 2, 2}, {"a", "b", "a"}); }, Status::duplicate_name, {"'a'"});
  expect_error([] { make({2, 3}, {"a", "b"}, 8); }, Status::shape_mismatch, {"6", "8"});
  expect_error([] { make({2, 2}, {"a", "b"}, 0, {0, 1, 2}); }, Status::shape_mismatch, {"4", "3 ranks"});
  expect_error([] { make({2, 2}, {"a", "b"}, 8, {0, 1, 2, 3, 4}); }, Status::shape_mismatch, {"4", "5 ranks"});
  expect_error([] { make({2, 2}, {"a", "b"}, 0, {0, 1, 1, 2}); }, Status::invalid_argument, {"rank 1", "twice"});
  expect_error([] { make({2, 2}, {"a", "b"}, 0, {0, -1, 2, 3}); }, Status::invalid_argument, {"rank -1"});
  expect_error([] { make({2, 2}, {"a", "b"}, 4, {0, 1, 2, 4}); }, Status::invalid_argument, {"rank 4", "[0, 4)"});
  expect_error([] { make({0, 2}, {"a", "b"}); }, Status::invalid_argument, {"size of 0"});
  expect_error([] { make({0, 3}, {"a", "b"}, 8); }, Status::shape_mismatch, {"3", "8"});
  expect_error([] { make({2}, {"a"}, -2); }, Status::invalid_argument, {"-2"});
  const index_t big = index_t{1} << 32;
  expect_error([&] { make({big, big}, {"a", "b"}); }, Status::shape_mismatch, {"overflow"});
}

BOOST_AUTO_TEST_CASE(edge_cases_that_work) {
  const View one = make({1}, {"x"});
  BOOST_TEST(one.root_size() == 1);
  BOOST_TEST((groups(one, "x") == Groups{{0}}));
  const View sized = make({1, 7, 1}, {"a", "b", "c"}, 7);
  BOOST_TEST((groups(sized, "a") == Groups{{0}, {1}, {2}, {3}, {4}, {5}, {6}}));
  BOOST_TEST((groups(sized, "b") == Groups{{0, 1, 2, 3, 4, 5, 6}}));
  const std::string longest(max_name_length, 'n');
  BOOST_TEST(make({2}, {longest}).dims()[0].name == longest);
  // Zeros are filled from the world, or from the rank list's length.
  BOOST_TEST((make({0, 0}, {"a", "b"}, 12).shape() == Sizes{4, 3}));
  BOOST_TEST((make({0, 2}, {"a", "b"}, 0, {5, 4, 3, 2, 1, 0}).shape() == Sizes{3, 2}));
  // The world is the parent's size; without it, the mesh size or max rank + 1.
  BOOST_TEST(make({2, 2}, {"a", "b"}).world() == 4);
  BOOST_TEST(make({2}, {"a"}, 0, {9, 4}).world() == 10);
  BOOST_TEST(make({2}, {"a"}, 12, {9, 4}).world() == 12);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// SEMANTICS.md section 4, expected groups copied from the text.
BOOST_AUTO_TEST_SUITE(worked_examples)

BOOST_AUTO_TEST_CASE(dp_tp_2x4) {
  const View v = make({2, 4}, {"dp", "tp"}, 8);
  BOOST_TEST((groups(v, "tp") == Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  BOOST_TEST((groups(v, "dp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

BOOST_AUTO_TEST_CASE(replicate_shard_tp) {
  const View v = make({2, 2, 2}, {"replicate", "shard", "tp"}, 8);
  BOOST_TEST(v.to_string() == "replicate=2:4 shard=2:2 tp=2:1");
  BOOST_TEST((groups(v, "tp") == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  BOOST_TEST((groups(v, "shard") == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  BOOST_TEST((groups(v, "replicate") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

BOOST_AUTO_TEST_CASE(dp_cp_tp_flatten_and_slice) {
  const View v = make({2, 2, 2}, {"dp", "cp", "tp"}, 8);
  const View dp_cp = v.slice(Names{"dp", "cp"}).flatten();
  BOOST_TEST((dp_cp.names() == Names{"dp_cp"}));
  BOOST_TEST((groups(dp_cp, "dp_cp") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  const View dp_tp = v.slice(Names{"dp", "tp"}).flatten();
  BOOST_TEST((groups(dp_tp, "dp_tp") == Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  BOOST_TEST(to_string(dp_tp.dims()[0].layout) == "(2,2):(4,1)");
  const View t = v.slice(Names{"tp", "dp"});
  BOOST_TEST((t.names() == Names{"tp", "dp"}));
  BOOST_TEST(t.ndim() == 2u);
  BOOST_TEST((groups(t, "tp") == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  BOOST_TEST((groups(t, "dp") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // Flattened names are registered on the root and slice from it later.
  const View back = dp_tp.root().slice(Names{"dp_cp", "tp"});
  BOOST_TEST((groups(back, "dp_cp") == Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  BOOST_TEST((v.registered().size() == 2u));
  // Same name, same layout: the same mesh; different layout: an error.
  BOOST_TEST(v.slice(Names{"dp", "cp"}).flatten("dp_cp").dims()[0].layout == dp_cp.dims()[0].layout);
  expect_error([&] { v.slice(Names{"cp", "tp"}).flatten("dp_cp"); }, Status::duplicate_name, {"'dp_cp'"});
  expect_error([&] { v.slice(Names{"cp", "tp"}).flatten("dp"); }, Status::duplicate_name, {"'dp'"});
  BOOST_TEST((v.slice(Names{"tp"}).flatten("tp").names() == Names{"tp"}));  // a root dim into its own name
  // All of a view's dims in its own order give back that view: from the
  // root, registered names stay sliceable (PyTorch: [1,3,5,7] at rank 7).
  const View all = dp_tp.root().slice(Names{"dp", "cp", "tp"});
  BOOST_TEST(all.is_root());
  BOOST_TEST((all.slice(Names{"dp_cp"}).group(0, 7) == std::vector<index_t>{1, 3, 5, 7}));
  // ... but another order is a new view, as before.
  expect_error([&] { v.slice(Names{"cp", "dp", "tp"}).slice(Names{"dp_cp"}); }, Status::unknown_dim, {"'dp_cp'"});
  // A flattened 1-D view flattened again into its own name is that view.
  BOOST_TEST((dp_cp.flatten("dp_cp").names() == Names{"dp_cp"}));
  BOOST_TEST(dp_cp.flatten("dp_cp").dims()[0].layout == dp_cp.dims()[0].layout);
}

BOOST_AUTO_TEST_CASE(unflatten_dp) {
  const View v = make({4, 2}, {"dp", "tp"}, 8).unflatten("dp", Sizes{2, 2}, Names{"dp_shard", "dp_rep"});
  BOOST_TEST((v.names() == Names{"dp_shard", "dp_rep", "tp"}));
  BOOST_TEST((groups(v, "dp_shard") == Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  BOOST_TEST((groups(v, "dp_rep") == Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  BOOST_TEST((groups(v, "tp") == Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

BOOST_AUTO_TEST_CASE(transposed_modes) {
  // (2,4):(1,2) in W=8: a (4,2) root (a=4:2, b=2:1) sliced (b, a), flattened.
  const View v = make({4, 2}, {"a", "b"}, 8).slice(Names{"b", "a"}).flatten("t");
  BOOST_TEST(to_string(v.dims()[0].layout) == "(2,4):(1,2)");
  BOOST_TEST((groups(v, "t") == Groups{{0, 2, 4, 6, 1, 3, 5, 7}}));
}

BOOST_AUTO_TEST_CASE(root_returns_the_root_view) {
  const View v = make({2, 3}, {"a", "b"});
  const View r = v.slice(Names{"b"}).unflatten("b", Sizes{3}, Names{"c"}).root();
  BOOST_TEST(r.is_root());
  BOOST_TEST(r.to_string() == v.to_string());
  BOOST_TEST(r.root_id() == v.root_id());
  BOOST_TEST(v.slice(Names{"a", "b"}).is_root());    // all dims, own order: the view itself
  BOOST_TEST(!v.slice(Names{"b", "a"}).is_root());   // transposed: a new view
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(operation_errors)

BOOST_AUTO_TEST_CASE(slice) {
  const View v = make({2, 2, 2}, {"dp", "cp", "tp"});
  expect_error([&] { v.slice(Names{"dp", "zz"}); }, Status::unknown_dim, {"'zz'"});
  expect_error([&] { v.slice(Names{"dp", "dp"}); }, Status::duplicate_name, {"'dp'"});
  expect_error([&] { v.slice(Names{}); }, Status::invalid_argument, {"at least one"});
  // Registered names slice only from a root view; overlapping dims never.
  const View flat = v.slice(Names{"dp", "cp"}).flatten();
  expect_error([&] { v.slice(Names{"tp"}).slice(Names{"dp_cp"}); }, Status::unknown_dim, {"'dp_cp'"});
  expect_error([&] { v.slice(Names{"dp_cp", "cp"}); }, Status::overlap, {"dp_cp", "cp"});
  expect_error([&] { v.unflatten("dp", Sizes{2}, Names{"x"}).slice(Names{"x", "tp", "zz"}); }, Status::unknown_dim,
               {"'zz'"});
}

BOOST_AUTO_TEST_CASE(flatten) {
  const View v = make({2, 2, 2}, {"dp", "cp", "tp"});
  expect_error([&] { v.flatten(""); }, Status::invalid_argument, {"empty"});
  expect_error([&] { v.flatten(std::string(max_name_length + 1, 'f')); }, Status::invalid_argument, {"fffff"});
  expect_error([&] { v.slice(Names{"dp", "cp"}).flatten("tp"); }, Status::duplicate_name, {"'tp'"});
  expect_error([&] { v.slice(Names{"dp"}).flatten("cp"); }, Status::duplicate_name, {"'cp'"});
  v.slice(Names{"dp", "tp"}).flatten("x");
  expect_error([&] { v.slice(Names{"cp", "tp"}).flatten("x"); }, Status::duplicate_name, {"'x'", "(2,2):(4,1)"});
}

// SEMANTICS.md section 6: neighbours along a flattened, non-contiguous dim.
BOOST_AUTO_TEST_CASE(shift_along_a_flattened_dim) {
  const View v = make({2, 2, 2}, {"dp", "cp", "tp"}).slice(Names{"dp", "tp"}).flatten("dt");
  // Groups [0,1,4,5] [2,3,6,7]: brute force by position in the group.
  const std::vector<std::vector<index_t>> groups = {{0, 1, 4, 5}, {2, 3, 6, 7}};
  for (const auto& g : groups)
    for (index_t k = 0; k < 4; ++k)
      for (index_t d = -9; d <= 9; ++d)
        for (bool periodic : {false, true}) {
          const index_t j = periodic ? ((k + d) % 4 + 4) % 4 : k + d;
          const bool inside = j >= 0 && j < 4;
          // Value and presence apart: gcc 12 takes an optional's comparison
          // for a read of an uninitialised value (-Wmaybe-uninitialized).
          const std::optional<index_t> got = v.shift(0, g[static_cast<std::size_t>(k)], d, periodic);
          BOOST_TEST((got.has_value() == inside && (!inside || *got == g[static_cast<std::size_t>(j)])),
                     "x " << g[static_cast<std::size_t>(k)] << " d " << d << " periodic " << periodic);
        }
  // Huge distances neither overflow nor wrap wrongly.
  const index_t big = std::numeric_limits<index_t>::max();
  BOOST_TEST(!v.shift(0, 1, big, false).has_value());
  BOOST_TEST(!v.shift(0, 1, -big, false).has_value());
  BOOST_TEST((v.shift(0, 1, big, true) == std::optional<index_t>(groups[0][static_cast<std::size_t>((1 + big % 4) % 4)])));
}

BOOST_AUTO_TEST_CASE(unflatten) {
  const View v = make({4, 3, 2}, {"dp", "cp", "tp"});
  expect_error([&] { v.unflatten("zz", Sizes{4}, Names{"a"}); }, Status::unknown_dim, {"'zz'"});
  expect_error([&] { v.unflatten("dp", Sizes{}, Names{}); }, Status::invalid_argument, {"'dp'", "at least one"});
  expect_error([&] { v.unflatten("dp", Sizes{2, 2}, Names{"a"}); }, Status::invalid_argument, {"2 sizes", "1 names"});
  expect_error([&] { v.unflatten("dp", Sizes{4, 0}, Names{"a", "b"}); }, Status::invalid_argument, {"0"});
  expect_error([&] { v.unflatten("dp", Sizes{-2, -2}, Names{"a", "b"}); }, Status::invalid_argument, {"-2"});
  expect_error([&] { v.unflatten("dp", Sizes{-1, -1}, Names{"a", "b"}); }, Status::shape_mismatch, {"more than one"});
  expect_error([&] { v.unflatten("dp", Sizes{-1, 0, -1}, Names{"a", "b", "c"}); }, Status::invalid_argument, {"0"});
  expect_error([&] { v.unflatten("dp", Sizes{3, -1}, Names{"a", "b"}); }, Status::shape_mismatch, {"3", "4"});
  BOOST_TEST((v.unflatten("dp", Sizes{-1, 2}, Names{"a", "b"}).shape() == v.unflatten("dp", Sizes{2, 2}, Names{"a", "b"}).shape()));
  expect_error([&] { v.unflatten("dp", Sizes{2, 2}, Names{"a", ""}); }, Status::invalid_argument, {"empty"});
  expect_error([&] { v.unflatten("dp", Sizes{2, 2}, Names{"a", "a"}); }, Status::duplicate_name, {"'a'"});
  expect_error([&] { v.unflatten("dp", Sizes{2, 2}, Names{"a", "cp"}); }, Status::duplicate_name, {"'cp'"});
  expect_error([&] { v.slice(Names{"dp"}).unflatten("dp", Sizes{2, 2}, Names{"a", "tp"}); }, Status::duplicate_name,
               {"'tp'"});
  v.slice(Names{"cp", "tp"}).flatten("reg");
  expect_error([&] { v.unflatten("dp", Sizes{2, 2}, Names{"reg", "b"}); }, Status::duplicate_name, {"'reg'"});
  expect_error([&] { v.unflatten("dp", Sizes{3, 2}, Names{"a", "b"}); }, Status::shape_mismatch, {"6", "4"});
  // (4,3):(1,4): a 3x4 root transposed; 6x2 cuts its size-3 mode.
  const View t = make({3, 4}, {"a", "b"}).slice(Names{"b", "a"}).flatten("t");
  expect_error([&] { t.unflatten("t", Sizes{6, 2}, Names{"u", "v"}); }, Status::shape_mismatch, {"(4,3):(1,4)"});
  BOOST_TEST((t.unflatten("t", Sizes{2, 6}, Names{"u", "v"}).shape() == Sizes{2, 6}));
  // Unflattening a dim into its own name is allowed.
  BOOST_TEST((v.unflatten("dp", Sizes{2, 2}, Names{"dp", "x"}).names() == Names{"dp", "x", "cp", "tp"}));
}

// A name reused for the very layout it names is that dim again, as in
// PyTorch; for another layout it stays a clash (the cases above).
BOOST_AUTO_TEST_CASE(names_reused_for_the_same_layout) {
  // devmesh-plan --shape 2 --names gpu --ranks 1,0 --flatten n0 --unflatten n0:2:n0
  const View gpu = make({2}, {"gpu"}, 2, {1, 0});
  const View n0 = gpu.flatten("n0").unflatten("n0", Sizes{2}, Names{"n0"});
  BOOST_TEST((n0.names() == Names{"n0"}));
  BOOST_TEST((groups(n0, "n0") == groups(gpu, "gpu")));
  // devmesh-plan --shape 3 --names pp --ranks 1,0,2 --flatten n2 --unflatten n2:3:pp
  const View pp = make({3}, {"pp"}, 3, {1, 0, 2});
  const View back = pp.flatten("n2").unflatten("n2", Sizes{3}, Names{"pp"});
  BOOST_TEST((back.names() == Names{"pp"}));
  BOOST_TEST(back.dims()[0].layout == pp.dims()[0].layout);
  BOOST_TEST((back.group(0, 0) == pp.group(0, 0)));
  // Root dims back from their flattened pair, registered names from a
  // split: the same groups.
  const View v = make({4, 3, 2}, {"dp", "cp", "tp"});
  const View ct = v.slice(Names{"cp", "tp"}).flatten("ct");
  const View cp_tp = ct.unflatten("ct", Sizes{3, 2}, Names{"cp", "tp"});
  BOOST_TEST((groups(cp_tp, "cp") == groups(v, "cp")));
  BOOST_TEST((groups(cp_tp, "tp") == groups(v, "tp")));
  v.slice(Names{"dp", "cp"}).flatten("dc");
  const View dc = v.slice(Names{"dp", "cp", "tp"}).flatten("all").unflatten("all", Sizes{12, 2}, Names{"dc", "t2"});
  BOOST_TEST((groups(dc, "dc") == groups(v.root().slice(Names{"dc"}), "dc")));
  // A flattened view whose layout coalesces to a root dim's: that dim.
  const View a = make({2, 1}, {"a", "b"});
  const View a_again = a.flatten("a");
  BOOST_TEST((a_again.names() == Names{"a"}));
  BOOST_TEST(a_again.dims()[0].layout == a.dims()[0].layout);
  // A different layout under an existing name stays an error, naming both.
  expect_error([&] { ct.unflatten("ct", Sizes{2, 3}, Names{"tp", "cp"}); }, Status::duplicate_name,
               {"'tp'", "dim of the root mesh", "2:1, not 2:3"});
  expect_error([&] { v.unflatten("dp", Sizes{2, 2}, Names{"dc", "x"}); }, Status::duplicate_name,
               {"'dc'", "registered flattened name", "(4,3):(6,2), not 2:12"});
  expect_error([&] { v.slice(Names{"dp", "tp"}).flatten("cp"); }, Status::duplicate_name,
               {"'cp'", "dim of the root mesh", "3:2, not (4,2):(6,1)"});
}

BOOST_AUTO_TEST_CASE(queries) {
  const View v = make({2, 2}, {"a", "b"});
  expect_error([&] { v.dim("zz"); }, Status::unknown_dim, {"'zz'", "a, b"});
  expect_error([&] { v.size("zz"); }, Status::unknown_dim, {"'zz'"});
  BOOST_CHECK_THROW(v.all_groups(2), std::out_of_range);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// A brute-force reference for random chains of operations.
//
// The reference keeps each dim as the explicit list of root offsets of its
// local ranks from the group's smallest member (offs[k], the dim's table in
// tests/support/reference.hpp), never as modes. Groups are found by tiling
// [0, W) greedily with translates of offs; a split is valid exactly when the
// dim's offsets decompose additively over the new digits; overlap is a
// non-trivial intersection of offset sets.
namespace {

struct RefDim {
  std::string name;
  std::vector<index_t> offs;
};

struct RefRoot {
  index_t w = 1;
  std::vector<RefDim> dims;
  std::vector<RefDim> registry;
};

struct RefView {
  std::vector<RefDim> dims;
  bool is_root = true;
};

const RefDim* find(const std::vector<RefDim>& dims, const std::string& name) {
  for (const RefDim& d : dims)
    if (d.name == name) return &d;
  return nullptr;
}

// Offsets of dims combined row-major (first dim most significant).
std::vector<index_t> combine(const std::vector<RefDim>& dims) {
  std::vector<ref::Table> tables;
  for (const RefDim& d : dims) tables.push_back(d.offs);
  return ref::concat(tables);
}

bool bad_name(const std::string& n) { return n.empty() || n.size() > max_name_length; }

struct Outcome {
  Status status = Status::success;
  RefView view;
};

Outcome fail(Status s) { return {s, {}}; }

Outcome ref_slice(const RefRoot& root, const RefView& v, const Names& names) {
  if (names.empty()) return fail(Status::invalid_argument);
  RefView out{{}, false};
  for (const std::string& n : names) {
    if (find(out.dims, n)) return fail(Status::duplicate_name);
    const RefDim* d = find(v.dims, n);
    if (!d && v.is_root) d = find(root.registry, n);
    if (!d) return fail(Status::unknown_dim);
    out.dims.push_back(*d);
  }
  // Every dim of the view in its own order: that same view (a root stays a
  // root, so its registered names stay sliceable), as in PyTorch.
  if (names.size() == v.dims.size()) {
    bool same = true;
    for (std::size_t i = 0; i < names.size(); ++i) same = same && names[i] == v.dims[i].name;
    if (same) return {Status::success, v};
  }
  for (std::size_t i = 0; i < out.dims.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      for (index_t o : out.dims[i].offs)
        if (o != 0 && std::count(out.dims[j].offs.begin(), out.dims[j].offs.end(), o))
          return fail(Status::overlap);
  return {Status::success, out};
}

Outcome ref_flatten(RefRoot& root, const RefView& v, std::optional<std::string> name) {
  std::string n;
  if (name) {
    n = *name;
  } else {
    for (std::size_t i = 0; i < v.dims.size(); ++i) n += (i ? "_" : "") + v.dims[i].name;
  }
  if (bad_name(n)) return fail(Status::invalid_argument);
  RefDim flat{n, combine(v.dims)};
  // A name for the layout it already names is that dim again.
  if (const RefDim* r = find(root.dims, n)) {
    if (r->offs != flat.offs) return fail(Status::duplicate_name);
    if (v.dims.size() == 1 && v.dims[0].name == n) return {Status::success, v};
    return {Status::success, {{*r}, false}};
  }
  if (const RefDim* r = find(root.registry, n)) {
    if (r->offs != flat.offs) return fail(Status::duplicate_name);
    return {Status::success, {{*r}, false}};
  }
  root.registry.push_back(flat);
  return {Status::success, {{flat}, false}};
}

Outcome ref_unflatten(const RefRoot& root, const RefView& v, const std::string& dim, const Sizes& given_sizes,
                      const Names& names) {
  Sizes sizes = given_sizes;
  std::size_t at = 0;
  while (at < v.dims.size() && v.dims[at].name != dim) ++at;
  if (at == v.dims.size()) return fail(Status::unknown_dim);
  if (sizes.empty() || sizes.size() != names.size()) return fail(Status::invalid_argument);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (bad_name(names[i])) return fail(Status::invalid_argument);
    if (std::count(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), names[i]))
      return fail(Status::duplicate_name);
    for (std::size_t j = 0; j < v.dims.size(); ++j)
      if (j != at && v.dims[j].name == names[i]) return fail(Status::duplicate_name);
  }
  for (index_t s : sizes)
    if (s < 1 && s != -1) return fail(Status::invalid_argument);
  const std::vector<index_t>& f = v.dims[at].offs;
  const index_t n = static_cast<index_t>(f.size());
  // -1: the dim size over the product of the others, if that divides.
  if (std::count(sizes.begin(), sizes.end(), -1) > 1) return fail(Status::shape_mismatch);
  if (auto it = std::find(sizes.begin(), sizes.end(), -1); it != sizes.end()) {
    index_t others = 1;
    for (index_t s : sizes)
      if (s != -1) others *= s;
    if (n % others != 0) return fail(Status::shape_mismatch);
    *it = n / others;
  }
  std::vector<index_t> suffix(sizes.size() + 1, 1);
  for (std::size_t i = sizes.size(); i-- > 0;) suffix[i] = suffix[i + 1] * sizes[i];
  if (suffix[0] != n) return fail(Status::shape_mismatch);
  if (!ref::adds_up(f, sizes)) return fail(Status::shape_mismatch);
  RefView out{{}, false};
  out.dims.assign(v.dims.begin(), v.dims.begin() + static_cast<std::ptrdiff_t>(at));
  const std::vector<ref::Table> parts = ref::split_parts(f, sizes);
  // A root or registered name is fine for the very groups it names.
  for (std::size_t i = 0; i < names.size(); ++i) {
    const RefDim* r = find(root.dims, names[i]);
    if (r && names[i] != dim && r->offs != parts[i]) return fail(Status::duplicate_name);
    r = find(root.registry, names[i]);
    if (r && r->offs != parts[i]) return fail(Status::duplicate_name);
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) out.dims.push_back(RefDim{names[i], parts[i]});
  out.dims.insert(out.dims.end(), v.dims.begin() + static_cast<std::ptrdiff_t>(at) + 1, v.dims.end());
  return {Status::success, out};
}

// Concatenation: the dims of each view in turn; duplicate names and
// overlapping offsets fail as for a slice.
Outcome ref_concatenate(const std::vector<RefView>& views) {
  if (views.size() == 1) return {Status::success, views[0]};
  RefView out{{}, false};
  for (const RefView& v : views)
    for (const RefDim& d : v.dims) {
      if (find(out.dims, d.name)) return fail(Status::duplicate_name);
      out.dims.push_back(d);
    }
  for (std::size_t i = 0; i < out.dims.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      for (index_t o : out.dims[i].offs)
        if (o != 0 && std::count(out.dims[j].offs.begin(), out.dims[j].offs.end(), o))
          return fail(Status::overlap);
  return {Status::success, out};
}

// One dim's groups by brute force: the smallest root index not yet placed
// starts a new group, whose members are it plus each offset.
ref::Partition ref_groups(const RefDim& d, index_t w) {
  std::optional<ref::Partition> g = ref::partition(d.offs, w);
  BOOST_TEST_REQUIRE(g.has_value(), "the offsets " << ref::str(d.offs) << " do not tile [0, " << w << ")");
  return std::move(*g);
}

// Compares every query of `v` with the reference, for every root index.
void compare(const View& v, const RefView& ref, index_t w, const std::vector<index_t>& parent) {
  BOOST_TEST_REQUIRE(v.ndim() == ref.dims.size());
  BOOST_TEST(v.is_root() == ref.is_root);
  std::vector<std::vector<index_t>> coords(static_cast<std::size_t>(w));
  for (std::size_t d = 0; d < v.ndim(); ++d) {
    const RefDim& rd = ref.dims[d];
    BOOST_TEST(v.dims()[d].name == rd.name);
    BOOST_TEST(v.dims()[d].size() == static_cast<index_t>(rd.offs.size()));
    const auto g = ref_groups(rd, w);
    Groups expected;
    for (const auto& m : g.members) {
      expected.emplace_back();
      for (index_t x : m) expected.back().push_back(parent[static_cast<std::size_t>(x)]);
    }
    BOOST_TEST((v.all_groups(d) == expected));
    // Per-rank group() costs O(group); check it everywhere when that is cheap.
    const index_t step = w * static_cast<index_t>(rd.offs.size()) <= 200000 ? 1 : 17;
    for (index_t x = 0; x < w; ++x) {
      CHECK(v.local_rank(d, x) == g.local[static_cast<std::size_t>(x)]);
      coords[static_cast<std::size_t>(x)].push_back(g.local[static_cast<std::size_t>(x)]);
      if (x % step == 0) {
        const auto& m = g.members[static_cast<std::size_t>(g.group_of[static_cast<std::size_t>(x)])];
        CHECK(v.group_indices(d, x) == m);
        CHECK(v.group(d, x) == expected[static_cast<std::size_t>(g.group_of[static_cast<std::size_t>(x)])]);
      }
    }
  }
  for (index_t x = 0; x < w; ++x) CHECK(v.coordinate(x) == coords[static_cast<std::size_t>(x)]);
  for (index_t x = 0; x < w; ++x) {
    CHECK(v.parent_rank(x) == parent[static_cast<std::size_t>(x)]);
    CHECK((v.root_index(parent[static_cast<std::size_t>(x)]) == std::optional<index_t>(x)));
  }
}

index_t pick(std::mt19937& rng, index_t lo, index_t hi) {
  return std::uniform_int_distribution<index_t>(lo, hi)(rng);
}

template <class T>
const T& any_of(std::mt19937& rng, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(pick(rng, 0, static_cast<index_t>(v.size()) - 1))];
}

// Random factors of n in random order, sometimes with a 1 or a wrong product.
Sizes random_sizes(std::mt19937& rng, index_t n) {
  Sizes out;
  while (n > 1 && out.size() < 3) {
    std::vector<index_t> divs;
    for (index_t d = 2; d <= n; ++d)
      if (n % d == 0) divs.push_back(d);
    const index_t f = out.size() == 2 ? n : any_of(rng, divs);
    out.push_back(f);
    n /= f;
  }
  if (out.empty() || pick(rng, 0, 5) == 0) out.insert(out.begin() + pick(rng, 0, static_cast<index_t>(out.size())), 1);
  std::shuffle(out.begin(), out.end(), rng);
  if (pick(rng, 0, 12) == 0) out.back() += 1;
  // A size left to be inferred, now and then two (refused).
  if (pick(rng, 0, 4) == 0) out[static_cast<std::size_t>(pick(rng, 0, static_cast<index_t>(out.size()) - 1))] = -1;
  if (pick(rng, 0, 20) == 0) out.push_back(-1);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(reference)

BOOST_AUTO_TEST_CASE(random_chains) {
  std::mt19937 rng(11);
  const Names root_pool{"dp", "cp", "tp", "pp", "ep", "sp"};
  std::map<std::string, int> outcomes;
  for (int c = 0; c < 500; ++c) {
    // A root of 1 to 4 dims, sizes 1 to 7, W up to 2048; sometimes a rank list.
    Sizes shape;
    index_t w = 1;
    for (int n = static_cast<int>(pick(rng, 1, 4)); n > 0; --n) {
      const index_t s = pick(rng, 1, 7);
      if (w * s > 2048) break;
      shape.push_back(s);
      w *= s;
    }
    Names names = root_pool;
    std::shuffle(names.begin(), names.end(), rng);
    names.resize(shape.size());
    RootSpec spec{shape, names, w, {}};
    std::vector<index_t> parent(static_cast<std::size_t>(w));
    std::iota(parent.begin(), parent.end(), 0);
    if (pick(rng, 0, 2) == 0) {
      spec.world = w + pick(rng, 0, 5);
      std::vector<index_t> all(static_cast<std::size_t>(spec.world));
      std::iota(all.begin(), all.end(), 0);
      std::shuffle(all.begin(), all.end(), rng);
      parent.assign(all.begin(), all.begin() + w);
      spec.ranks = parent;
    }
    View v = View::create(spec);
    RefRoot root;
    root.w = w;
    index_t stride = w;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      stride /= shape[i];
      RefDim d{names[i], {}};
      for (index_t k = 0; k < shape[i]; ++k) d.offs.push_back(k * stride);
      root.dims.push_back(std::move(d));
    }
    RefView ref{root.dims, true};
    std::ostringstream chain;
    chain << "root " << v.to_string() << (spec.ranks.empty() ? "" : " (rank list)");
    BOOST_TEST_CONTEXT(chain.str()) { compare(v, ref, w, parent); }

    Names name_pool = root_pool;
    name_pool.insert(name_pool.end(), {"n0", "n1", "n2", "zz", ""});
    // Views this chain reached, to concatenate with; a view of another
    // root built alike must be refused.
    std::vector<std::pair<View, RefView>> reached{{v, ref}};
    const View other_root = View::create(spec);
    for (int step = static_cast<int>(pick(rng, 1, 6)); step > 0; --step) {
      Outcome expected;
      View next = v;
      Status got = Status::success;
      const Names current = v.names();
      try {
        const index_t op = pick(rng, 0, 10);
        switch (op) {
          case 0:
          case 1:
          case 2: {  // slice: a random subset in random order, sometimes a stray name;
                     // case 2 slices root dims and registered names from the root
            const bool from_root = op == 2 && !root.registry.empty();
            if (from_root) {
              chain << " | root";
              v = v.root();
              ref = {root.dims, true};
            }
            Names pick_names = v.names();
            for (const RefDim& r : root.registry)
              if (pick(rng, 0, 1) == 0) pick_names.push_back(r.name);
            std::shuffle(pick_names.begin(), pick_names.end(), rng);
            pick_names.resize(static_cast<std::size_t>(pick(rng, 1, static_cast<index_t>(pick_names.size()))));
            if (pick(rng, 0, 8) == 0) pick_names.push_back(any_of(rng, name_pool));
            chain << " | slice";
            for (const auto& n : pick_names) chain << ' ' << n;
            expected = ref_slice(root, ref, pick_names);
            next = v.slice(pick_names);
            break;
          }
          case 3:
          case 4: {  // flatten, default or a pool name
            std::optional<std::string> name;
            if (pick(rng, 0, 1)) name = any_of(rng, name_pool);
            chain << " | flatten " << (name ? *name : "-");
            expected = ref_flatten(root, ref, name);
            next = v.flatten(name);
            break;
          }
          case 5:
          case 6:
          case 7:
          case 8: {  // unflatten a random dim into random factors
            const std::string dim = pick(rng, 0, 10) == 0 ? "zz" : any_of(rng, current);
            const index_t n = dim == "zz" ? 4 : v.size(dim);
            const Sizes sizes = random_sizes(rng, n);
            Names new_names;
            for (std::size_t i = 0; i < sizes.size(); ++i)
              new_names.push_back(pick(rng, 0, 6) == 0 ? any_of(rng, name_pool) : "u" + std::to_string(i));
            if (pick(rng, 0, 15) == 0) new_names.pop_back();
            chain << " | unflatten " << dim << " into";
            for (std::size_t i = 0; i < sizes.size(); ++i)
              chain << ' ' << (i < new_names.size() ? new_names[i] : "?") << '=' << sizes[i];
            expected = ref_unflatten(root, ref, dim, sizes, new_names);
            next = v.unflatten(dim, sizes, new_names);
            break;
          }
          case 9: {  // concatenate with views reached before, in random order
            std::vector<View> parts{v};
            std::vector<RefView> ref_parts{ref};
            for (index_t n = pick(rng, 0, 2); n > 0; --n) {
              const auto& [pv, pr] = any_of(rng, reached);
              parts.push_back(pv);
              ref_parts.push_back(pr);
            }
            std::vector<std::size_t> order(parts.size());
            std::iota(order.begin(), order.end(), std::size_t{0});
            std::shuffle(order.begin(), order.end(), rng);
            std::vector<View> shuffled;
            std::vector<RefView> ref_shuffled;
            chain << " | concatenate";
            for (std::size_t i : order) {
              shuffled.push_back(parts[i]);
              ref_shuffled.push_back(ref_parts[i]);
              chain << " [" << parts[i].to_string() << "]";
            }
            expected = ref_concatenate(ref_shuffled);
            if (pick(rng, 0, 10) == 0) {
              shuffled.push_back(other_root);
              chain << " [another root]";
              expected = fail(Status::invalid_argument);
            }
            next = View::concatenate(shuffled);
            break;
          }
          default:
            chain << " | root";
            expected = {Status::success, {root.dims, true}};
            next = v.root();
        }
      } catch (const Error& e) {
        got = e.status();
      }
      ++outcomes[std::string(status_name(got))];
      BOOST_TEST_CONTEXT(chain.str()) {
        BOOST_TEST(got == expected.status);
        if (got != Status::success || expected.status != Status::success) continue;  // view unchanged
        v = next;
        ref = expected.view;
        reached.emplace_back(v, ref);
        compare(v, ref, w, parent);
        BOOST_TEST(v.root_id() == next.root().root_id());
      }
    }
  }
  for (const auto& [status, n] : outcomes) BOOST_TEST_MESSAGE(status << ": " << n);
  for (const char* s : {"success", "invalid_argument", "shape_mismatch", "unknown_dim", "duplicate_name", "overlap"})
    BOOST_TEST(outcomes[s] > 0, "no random step ended in " << s);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
BOOST_AUTO_TEST_SUITE(rank_lists)

BOOST_AUTO_TEST_CASE(explicit_ranks) {
  // Root index x is parent rank ranks[x]; unlisted parent ranks are not members.
  const View v = make({2, 3}, {"a", "b"}, 10, {9, 7, 5, 3, 1, 0});
  BOOST_TEST(v.has_rank_list());
  BOOST_TEST(v.world() == 10);
  BOOST_TEST((groups(v, "b") == Groups{{9, 7, 5}, {3, 1, 0}}));
  BOOST_TEST((groups(v, "a") == Groups{{9, 3}, {7, 1}, {5, 0}}));
  for (index_t x = 0; x < 6; ++x) BOOST_TEST((v.root_index(v.parent_rank(x)) == std::optional<index_t>(x)));
  for (index_t r : {2, 4, 6, 8, 10, -1}) BOOST_TEST(!v.root_index(r).has_value());
  BOOST_TEST((v.group(1, *v.root_index(1)) == Sizes{3, 1, 0}));
  BOOST_TEST(v.local_rank(1, *v.root_index(1)) == 1);
  BOOST_TEST((v.coordinate(*v.root_index(1)) == Sizes{1, 1}));
  // Without a list the root index is the parent rank, and only [0, W) are members.
  const View id = make({2, 3}, {"a", "b"});
  BOOST_TEST(!id.has_rank_list());
  BOOST_TEST((id.root_index(5) == std::optional<index_t>(5)));
  BOOST_TEST(!id.root_index(6).has_value());
  BOOST_TEST(!id.root_index(-1).has_value());
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// Expected values are MPI_Dims_create's (checked against MPICH 4.0).
BOOST_AUTO_TEST_SUITE(dims_create_fn)

BOOST_AUTO_TEST_CASE(fills_zeros_like_mpi) {
  BOOST_TEST((dims_create(12, {0, 0}) == Sizes{4, 3}));
  BOOST_TEST((dims_create(12, {0, 3, 0}) == Sizes{2, 3, 2}));
  BOOST_TEST((dims_create(7, {0, 0}) == Sizes{7, 1}));
  BOOST_TEST((dims_create(1, {0, 0, 0}) == Sizes{1, 1, 1}));
  BOOST_TEST((dims_create(16, {0, 0, 0}) == Sizes{4, 2, 2}));
  BOOST_TEST((dims_create(8, {0, 0, 0}) == Sizes{2, 2, 2}));
  BOOST_TEST((dims_create(30, {0, 0, 0}) == Sizes{5, 3, 2}));
  BOOST_TEST((dims_create(24, {0, 0, 0}) == Sizes{4, 3, 2}));
  BOOST_TEST((dims_create(64, {0, 0, 0}) == Sizes{4, 4, 4}));
  BOOST_TEST((dims_create(12, {0, 0, 0, 0}) == Sizes{3, 2, 2, 1}));
  BOOST_TEST((dims_create(13, {0, 0, 0}) == Sizes{13, 1, 1}));
  BOOST_TEST((dims_create(16, {0, 4}) == Sizes{4, 4}));
  BOOST_TEST((dims_create(12, {2, 0}) == Sizes{2, 6}));
  BOOST_TEST((dims_create(6, {2, 3}) == Sizes{2, 3}));  // nothing to fill
  BOOST_TEST((dims_create(12, {2, 3}) == Sizes{2, 3}));  // MPI only asks that 2*3 divide 12
  BOOST_TEST((dims_create(index_t{1} << 40, {0, 0}) == Sizes{index_t{1} << 20, index_t{1} << 20}));
}

BOOST_AUTO_TEST_CASE(errors) {
  expect_error([] { dims_create(0, {0, 0}); }, Status::invalid_argument, {"0"});
  expect_error([] { dims_create(-4, {0}); }, Status::invalid_argument, {"-4"});
  expect_error([] { dims_create(12, {0, -1}); }, Status::invalid_argument, {"-1"});
  expect_error([] { dims_create(12, {5, 0}); }, Status::shape_mismatch, {"5", "12"});
  expect_error([] { dims_create(12, {2, 5}); }, Status::shape_mismatch, {"10", "12"});
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------
// A 2^40-rank view: every query is O(ndim) arithmetic on 64-bit indices.
BOOST_AUTO_TEST_SUITE(huge)

BOOST_AUTO_TEST_CASE(two_to_the_forty) {
  const index_t k = 1024, w = index_t{1} << 40;
  const View v = make({k, k, k, k}, {"a", "b", "c", "d"});
  BOOST_TEST(v.root_size() == w);
  BOOST_TEST(v.world() == w);
  const index_t x = w - 1 - 123456789;  // digits (1023, 1023 - 117, 1023 - 755, 1023 - 277)
  BOOST_TEST((v.coordinate(x) == Sizes{1023, 906, 268, 746}));
  BOOST_TEST(v.local_rank(0, x) == 1023);
  const Sizes ga = v.group(0, x);
  BOOST_TEST_REQUIRE(ga.size() == 1024u);
  const index_t base_a = x - 1023 * (index_t{1} << 30);
  for (index_t i = 0; i < k; ++i) CHECK(ga[static_cast<std::size_t>(i)] == base_a + i * (index_t{1} << 30));
  BOOST_TEST((v.root_index(x) == std::optional<index_t>(x)));
  BOOST_TEST(!v.root_index(w).has_value());

  // Transposed slice, flatten of two dims 2^30 apart, unflatten of it.
  const View s = v.slice(Names{"d", "a"});
  BOOST_TEST((s.coordinate(x) == Sizes{746, 1023}));
  const View f = s.flatten("da");
  BOOST_TEST(to_string(f.dims()[0].layout) == "(1024,1024):(1,1073741824)");
  BOOST_TEST(f.local_rank(0, x) == 746 * k + 1023);
  const View u = f.unflatten("da", Sizes{32, 32 * k}, Names{"hi", "lo"});
  BOOST_TEST(to_string(u.dims()[0].layout) == "32:32");
  BOOST_TEST(to_string(u.dims()[1].layout) == "(32,1024):(1,1073741824)");
  BOOST_TEST((u.coordinate(x) == Sizes{746 / 32, (746 % 32) * k + 1023}));
  const Sizes gh = u.group(0, x);
  BOOST_TEST_REQUIRE(gh.size() == 32u);
  for (index_t i = 0; i < 32; ++i) CHECK(gh[static_cast<std::size_t>(i)] == x - 746 + 746 % 32 + i * 32);
  BOOST_TEST(u.group(1, x).size() == static_cast<std::size_t>(32 * k));
  BOOST_TEST(u.group(1, x).back() == x - 746 % 32 - 1023 * (index_t{1} << 30) + 31 + 1023 * (index_t{1} << 30));
}

BOOST_AUTO_TEST_SUITE_END()
