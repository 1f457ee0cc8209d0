// shrink() (include/devmesh/view.hpp): the worked example of SEMANTICS.md
// "Shrink", every error with its status, and a brute-force reference over
// every shape of up to 4 dims of sizes 1..3, every dim, and many failed
// sets: a rank is kept iff no failed rank shares its coordinate along the
// dim, with coordinates decoded row-major here, not by the model.
#define BOOST_TEST_MODULE shrink
#include <boost/test/unit_test.hpp>

#include "expect_error.hpp"

#include <algorithm>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "devmesh/view.hpp"

using namespace devmesh;

namespace {

using Sizes = std::vector<index_t>;
using Names = std::vector<std::string>;
using Groups = std::vector<std::vector<index_t>>;

View make(Sizes shape, Names names, index_t world = 0, Sizes ranks = {}) {
  return View::create(RootSpec{std::move(shape), std::move(names), world, std::move(ranks)});
}


// Row-major coordinates of x in `shape`, last dim fastest.
Sizes coords(const Sizes& shape, index_t x) {
  Sizes c(shape.size());
  for (std::size_t i = shape.size(); i-- > 0;) {
    c[i] = x % shape[i];
    x /= shape[i];
  }
  return c;
}

index_t product(const Sizes& shape) {
  index_t w = 1;
  for (index_t n : shape) w *= n;
  return w;
}

// What shrink must give, by brute force; nullopt where it must fail (every
// slice, or every rank, gone).
std::optional<Shrunk> reference(const Sizes& shape, const Names& names, const Sizes& failed,
                                std::optional<std::size_t> dim) {
  const index_t w = product(shape);
  const std::set<index_t> dead(failed.begin(), failed.end());
  Shrunk r;
  if (!dim) {
    std::string joined;
    for (const std::string& n : names) joined += (joined.empty() ? "" : "_") + n;
    r.names = {joined};
    for (index_t x = 0; x < w; ++x)
      if (!dead.count(x)) r.kept.push_back(x);
    if (r.kept.empty()) return std::nullopt;
    r.shape = {static_cast<index_t>(r.kept.size())};
    return r;
  }
  std::set<index_t> gone;  // coordinates along dim holding a failed rank
  for (index_t f : dead) gone.insert(coords(shape, f)[*dim]);
  for (index_t x = 0; x < w; ++x) {
    const bool shares = std::any_of(dead.begin(), dead.end(), [&](index_t f) {
      return coords(shape, f)[*dim] == coords(shape, x)[*dim];
    });
    if (!shares)
      r.kept.push_back(x);
    else if (!dead.count(x))
      r.spares.push_back(x);
  }
  if (r.kept.empty()) return std::nullopt;
  r.shape = shape;
  r.shape[*dim] -= static_cast<index_t>(gone.size());
  r.names = names;
  return r;
}

void compare(const View& root, const Sizes& failed, std::optional<std::size_t> dim) {
  const Sizes shape = root.shape();
  const Names names = root.names();
  const std::optional<Shrunk> want = reference(shape, names, failed, dim);
  std::optional<std::string_view> name;
  if (dim) name = names[*dim];
  std::string what = "shape";
  for (index_t n : shape) what += " " + std::to_string(n);
  what += dim ? " dim " + names[*dim] : " no dim";
  what += " failed";
  for (index_t f : failed) what += " " + std::to_string(f);
  if (!want) {
    expect_error([&] { shrink(root, failed, name); }, Status::invalid_argument, {"left"});
    return;
  }
  const Shrunk got = shrink(root, failed, name);
  BOOST_TEST((got.shape == want->shape), what << ": shape");
  BOOST_TEST((got.names == want->names), what << ": names");
  BOOST_TEST((got.kept == want->kept), what << ": kept");
  BOOST_TEST((got.spares == want->spares), what << ": spares");
  BOOST_TEST(product(got.shape) == static_cast<index_t>(got.kept.size()), what << ": size");
  // New root index i sits where kept[i] sat: its coordinates are the old
  // ones with the shrunk dim renumbered over the surviving slices.
  if (dim && product(got.shape) == static_cast<index_t>(got.kept.size())) {
    std::set<index_t> live;
    for (index_t x : got.kept) live.insert(coords(shape, x)[*dim]);
    const std::vector<index_t> order(live.begin(), live.end());
    for (std::size_t i = 0; i < got.kept.size(); ++i) {
      Sizes c = coords(shape, got.kept[i]);
      c[*dim] = std::find(order.begin(), order.end(), c[*dim]) - order.begin();
      if (c != coords(got.shape, static_cast<index_t>(i))) {
        BOOST_ERROR(what << ": new root index " << i << " is not at old index " << got.kept[i]);
        break;
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(shrink_model)

// SEMANTICS.md "Shrink": HSDP (replicate=4, shard=2), rank 5 failed.
BOOST_AUTO_TEST_CASE(worked_example_hsdp) {
  const View root = make({4, 2}, {"replicate", "shard"});
  const Sizes failed{5};
  const Shrunk s = shrink(root, failed, "replicate");
  BOOST_TEST((s.shape == Sizes{3, 2}));
  BOOST_TEST((s.names == Names{"replicate", "shard"}));
  BOOST_TEST((s.kept == Sizes{0, 1, 2, 3, 6, 7}));
  BOOST_TEST((s.spares == Sizes{4}));
  // The new root as the runtime builds it (old root indices as its rank
  // list) has the groups the text gives, in old rank numbers.
  const View next = make(s.shape, s.names, 8, s.kept);
  BOOST_TEST((next.all_groups(next.dim_index("shard")) == Groups{{0, 1}, {2, 3}, {6, 7}}));
  BOOST_TEST((next.all_groups(next.dim_index("replicate")) == Groups{{0, 2, 6}, {1, 3, 7}}));
  // Along shard instead: shard slice 1 = {1,3,5,7} goes, 4 ranks stay.
  const Shrunk t = shrink(root, failed, "shard");
  BOOST_TEST((t.shape == Sizes{4, 1}));
  BOOST_TEST((t.kept == Sizes{0, 2, 4, 6}));
  BOOST_TEST((t.spares == Sizes{1, 3, 7}));
  // Without a dim: every survivor, one dim named as flatten() names it.
  const Shrunk all = shrink(root, failed, std::nullopt);
  BOOST_TEST((all.shape == Sizes{7}));
  BOOST_TEST((all.names == Names{root.flatten().names()}));
  BOOST_TEST((all.kept == Sizes{0, 1, 2, 3, 4, 6, 7}));
  BOOST_TEST(all.spares.empty());
}

BOOST_AUTO_TEST_CASE(no_failure_and_repeats) {
  const View root = make({2, 3}, {"a", "b"});
  const Shrunk same = shrink(root, Sizes{}, "b");
  BOOST_TEST((same.shape == Sizes{2, 3}));
  BOOST_TEST((same.kept == Sizes{0, 1, 2, 3, 4, 5}));
  BOOST_TEST(same.spares.empty());
  const Shrunk flat = shrink(root, Sizes{}, std::nullopt);
  BOOST_TEST((flat.shape == Sizes{6}));
  BOOST_TEST((flat.names == Names{"a_b"}));
  // Order and repeats of the failed list do not matter.
  BOOST_TEST((shrink(root, Sizes{4, 1, 4, 1}, "b").kept == shrink(root, Sizes{1, 4}, "b").kept));
  BOOST_TEST((shrink(root, Sizes{4, 1, 4, 1}, "b").kept == Sizes{0, 2, 3, 5}));
}

// Indices are root indices, whatever parent ranks a rank list gives them.
BOOST_AUTO_TEST_CASE(rank_list) {
  const View root = make({2, 2}, {"a", "b"}, 10, {9, 7, 5, 3});
  const Shrunk s = shrink(root, Sizes{1}, "a");
  BOOST_TEST((s.kept == Sizes{2, 3}));
  BOOST_TEST((s.spares == Sizes{0}));
}

// A 1-D root: the dim (or its empty name, as dim_or_only) drops exactly the
// failed ranks, like shrinking without a dim.
BOOST_AUTO_TEST_CASE(one_dim) {
  const View root = make({5}, {"x"});
  for (const std::optional<std::string_view> dim :
       {std::optional<std::string_view>("x"), std::optional<std::string_view>(""),
        std::optional<std::string_view>()}) {
    const Shrunk s = shrink(root, Sizes{3, 0}, dim);
    BOOST_TEST((s.shape == Sizes{3}));
    BOOST_TEST((s.names == Names{"x"}));
    BOOST_TEST((s.kept == Sizes{1, 2, 4}));
    BOOST_TEST(s.spares.empty());
  }
}

// Views that are the root in all but name are accepted.
BOOST_AUTO_TEST_CASE(root_like_views) {
  const View root = make({2, 2, 2}, {"dp", "cp", "tp"});
  const Sizes failed{6};
  const Sizes want{0, 1, 2, 3};
  BOOST_TEST((shrink(root.slice(Names{"dp", "cp", "tp"}), failed, "dp").kept == want));
  const View parts[] = {root.slice(Names{"dp"}), root.slice(Names{"cp", "tp"})};
  BOOST_TEST((shrink(View::concatenate(parts), failed, "dp").kept == want));
  BOOST_TEST((shrink(root.slice(Names{"tp"}).root(), failed, "dp").kept == want));
}

BOOST_AUTO_TEST_CASE(every_error) {
  const View root = make({4, 2}, {"replicate", "shard"});
  const Sizes five{5};
  // Not a root view: a transposed slice, a sub-view, a flatten, an unflatten.
  expect_error([&] { shrink(root.slice(Names{"shard", "replicate"}), five, "shard"); }, Status::invalid_argument,
               {"root view", "shard=2:1 replicate=4:2"});
  expect_error([&] { shrink(root.slice(Names{"replicate"}), five, "replicate"); }, Status::invalid_argument,
               {"root view"});
  expect_error([&] { shrink(root.flatten(), five, std::nullopt); }, Status::invalid_argument, {"root view"});
  expect_error([&] { shrink(root.unflatten("replicate", Sizes{2, 2}, Names{"r0", "r1"}), five, std::nullopt); },
               Status::invalid_argument, {"root view"});
  // Failed indices outside the root.
  expect_error([&] { shrink(root, Sizes{1, 8}, "replicate"); }, Status::invalid_argument, {"failed rank 8", "[0, 8)"});
  expect_error([&] { shrink(root, Sizes{-1}, std::nullopt); }, Status::invalid_argument, {"failed rank -1"});
  // Dims: unknown (the view's own lookup), empty on a root of several dims.
  expect_error([&] { shrink(root, five, "zz"); }, Status::unknown_dim, {"'zz'", "replicate, shard"});
  expect_error([&] { shrink(root, five, ""); }, Status::invalid_argument, {"dim name is needed"});
  // Nothing left.
  expect_error([&] { shrink(root, Sizes{7, 1, 3, 5, 3}, "replicate"); }, Status::invalid_argument,
               {"no slice of 'replicate' is left", "all 4 slices", "1, 3, 5, 7"});
  expect_error([&] { shrink(root, Sizes{0, 7}, "shard"); }, Status::invalid_argument,
               {"no slice of 'shard' is left", "all 2 slices", "0, 7"});
  expect_error([&] { shrink(make({1, 3}, {"a", "b"}), Sizes{2}, "a"); }, Status::invalid_argument,
               {"all 1 slice holds", "2"});
  Sizes everyone(8);
  for (index_t x = 0; x < 8; ++x) everyone[static_cast<std::size_t>(x)] = x;
  expect_error([&] { shrink(root, everyone, std::nullopt); }, Status::invalid_argument,
               {"no rank is left", "all 8 ranks"});
  // Many failed ranks: the message lists some and says how many.
  Sizes many(40);
  for (index_t x = 0; x < 40; ++x) many[static_cast<std::size_t>(x)] = 2 * x;
  expect_error([&] { shrink(make({40, 2}, {"r", "s"}), many, "r"); }, Status::invalid_argument,
               {"0, 2, 4", "(40 in all)"});
  // The joined name must be a valid name, as flatten() requires.
  const std::string half(max_name_length / 2, 'n');
  const View long_names = make({2, 2}, {half + "a", half + "b"});
  expect_error([&] { shrink(long_names, Sizes{}, std::nullopt); }, Status::invalid_argument,
               {"longer than " + std::to_string(max_name_length)});
  expect_error([&] { long_names.flatten(); }, Status::invalid_argument,
               {"longer than " + std::to_string(max_name_length)});
  // Along a dim the names stay as they are.
  BOOST_TEST((shrink(long_names, Sizes{3}, half + "a").shape == Sizes{1, 2}));
}

// Every shape of up to 4 dims with sizes 1..3, every dim and none, and
// failed sets: none, each rank, each pair (up to 27 ranks), every rank, and
// random sets of every size.
BOOST_AUTO_TEST_CASE(brute_force) {
  std::mt19937 rng(20260601);
  std::size_t cases = 0;
  for (std::size_t nd = 1; nd <= 4; ++nd) {
    Sizes shape(nd, 1);
    for (;;) {
      Names names;
      for (std::size_t i = 0; i < nd; ++i) names.push_back(std::string(1, static_cast<char>('a' + i)));
      const View root = make(shape, names);
      const index_t w = product(shape);
      std::vector<Sizes> sets{{}};
      for (index_t x = 0; x < w; ++x) sets.push_back({x});
      if (w <= 27)
        for (index_t x = 0; x < w; ++x)
          for (index_t y = x + 1; y < w; ++y) sets.push_back({y, x});
      Sizes all(static_cast<std::size_t>(w));
      for (index_t x = 0; x < w; ++x) all[static_cast<std::size_t>(x)] = x;
      sets.push_back(all);
      for (index_t k = 1; k <= w; ++k) {
        Sizes pick = all;
        std::shuffle(pick.begin(), pick.end(), rng);
        pick.resize(static_cast<std::size_t>(k));
        pick.push_back(pick.front());  // a repeat
        sets.push_back(pick);
      }
      for (const Sizes& failed : sets) {
        compare(root, failed, std::nullopt);
        for (std::size_t d = 0; d < nd; ++d) compare(root, failed, d);
        cases += nd + 1;
      }
      // Next shape: an odometer over sizes 1..3.
      std::size_t i = nd;
      while (i-- > 0 && shape[i] == 3) shape[i] = 1;
      if (i == static_cast<std::size_t>(-1)) break;
      ++shape[i];
    }
  }
  BOOST_TEST_MESSAGE(cases << " shrinks compared");
  BOOST_TEST(cases > 10000u);
}

BOOST_AUTO_TEST_SUITE_END()
