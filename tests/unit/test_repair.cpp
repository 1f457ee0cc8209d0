// repair() (include/devmesh/view.hpp): the worked example of SEMANTICS.md
// "Repair", every error with its status, and a brute-force reference over
// every failed set of root sizes 1..8 with 0..3 spares (and random larger
// cases): walking the root indices in order, each dead one is handed to the
// next unused spare, else to the next spawned rank, and every other index
// stays with its survivor.
#define BOOST_TEST_MODULE repair
#include <boost/test/unit_test.hpp>

#include "expect_error.hpp"

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "devmesh/view.hpp"

using namespace devmesh;

namespace {

using Sizes = std::vector<index_t>;


// Who holds each root index after the repair: a survivor (its own index),
// spare k or spawned rank j.
struct Holder {
  enum Kind { survivor, spare, spawned } kind;
  index_t which;
};

// The reference: a walk over the root indices, not the model's slicing of
// the failed list. Fills `holders` and returns what repair() must give.
Repaired reference(index_t root_size, const std::set<index_t>& dead, index_t spares, std::vector<Holder>& holders) {
  holders.clear();
  index_t next_spare = 0, next_spawn = 0;
  for (index_t x = 0; x < root_size; ++x) {
    if (!dead.count(x))
      holders.push_back({Holder::survivor, x});
    else if (next_spare < spares)
      holders.push_back({Holder::spare, next_spare++});
    else
      holders.push_back({Holder::spawned, next_spawn++});
  }
  Repaired r;
  r.failed.assign(dead.begin(), dead.end());
  r.by_spare.resize(static_cast<std::size_t>(next_spare));
  r.by_spawn.resize(static_cast<std::size_t>(next_spawn));
  for (index_t x = 0; x < root_size; ++x) {
    const Holder& h = holders[static_cast<std::size_t>(x)];
    if (h.kind == Holder::spare) r.by_spare[static_cast<std::size_t>(h.which)] = x;
    if (h.kind == Holder::spawned) r.by_spawn[static_cast<std::size_t>(h.which)] = x;
  }
  r.spares_left = spares - next_spare;
  return r;
}

// repair(root_size, failed, spares) against the reference; `failed` may be
// unordered and hold repeats.
void compare(index_t root_size, const Sizes& failed, index_t spares) {
  const std::set<index_t> dead(failed.begin(), failed.end());
  std::vector<Holder> holders;
  const Repaired want = reference(root_size, dead, spares, holders);
  const Repaired got = repair(root_size, failed, spares);
  BOOST_TEST(got.failed == want.failed, "W=" << root_size << " spares=" << spares << ": failed");
  BOOST_TEST(got.by_spare == want.by_spare, "W=" << root_size << " spares=" << spares << " |F|=" << dead.size()
                                                 << ": by_spare");
  BOOST_TEST(got.by_spawn == want.by_spawn, "W=" << root_size << " spares=" << spares << " |F|=" << dead.size()
                                                 << ": by_spawn");
  BOOST_TEST(got.spares_left == want.spares_left, "W=" << root_size << " spares=" << spares << ": spares_left");
  // Every index is held by exactly one rank: its survivor or one filler.
  std::vector<int> holds(static_cast<std::size_t>(root_size));
  for (index_t x = 0; x < root_size; ++x)
    if (!dead.count(x)) ++holds[static_cast<std::size_t>(x)];
  for (const index_t x : got.by_spare) ++holds[static_cast<std::size_t>(x)];
  for (const index_t x : got.by_spawn) ++holds[static_cast<std::size_t>(x)];
  BOOST_TEST(std::all_of(holds.begin(), holds.end(), [](int n) { return n == 1; }),
             "W=" << root_size << " spares=" << spares << ": an index held by none or by two");
}

}  // namespace

BOOST_AUTO_TEST_SUITE(repair_model)

// SEMANTICS.md "Repair": (4,2) over parent ranks 0-7, spares 8 and 9,
// F = {5}: spare 0 (parent rank 8) takes index 5, spare 1 stays.
BOOST_AUTO_TEST_CASE(worked_example) {
  const Repaired r = repair(8, Sizes{5}, 2);
  BOOST_TEST((r.failed == Sizes{5}));
  BOOST_TEST((r.by_spare == Sizes{5}));
  BOOST_TEST(r.by_spawn.empty());
  BOOST_TEST(r.spares_left == 1);
  // Three deaths, two spares: the lowest two indices go to the spares in
  // order, the third to spawned rank 0.
  const Repaired three = repair(8, Sizes{6, 1, 4}, 2);
  BOOST_TEST((three.failed == Sizes{1, 4, 6}));
  BOOST_TEST((three.by_spare == Sizes{1, 4}));
  BOOST_TEST((three.by_spawn == Sizes{6}));
  BOOST_TEST(three.spares_left == 0);
  // Nothing failed: nothing filled, every spare left.
  const Repaired none = repair(8, Sizes{}, 3);
  BOOST_TEST((none.failed.empty() && none.by_spare.empty() && none.by_spawn.empty() && none.spares_left == 3));
}

BOOST_AUTO_TEST_CASE(every_error) {
  expect_error([] { repair(8, Sizes{8}, 0); }, Status::invalid_argument, {"failed rank 8", "[0, 8)"});
  expect_error([] { repair(8, Sizes{3, -1}, 2); }, Status::invalid_argument, {"failed rank -1", "[0, 8)"});
  expect_error([] { repair(1, Sizes{1}, 2); }, Status::invalid_argument, {"failed rank 1", "[0, 1)"});
  expect_error([] { repair(8, Sizes{}, -1); }, Status::invalid_argument, {"-1 spares"});
  expect_error([] { repair(8, Sizes{5}, -3); }, Status::invalid_argument, {"-3 spares"});
  expect_error([] { repair(4, Sizes{3, 0, 2, 1}, 4); }, Status::invalid_argument,
               {"no rank is left to repair from", "all 4 ranks"});
  expect_error([] { repair(4, Sizes{3, 0, 2, 1, 2}, 0); }, Status::invalid_argument, {"all 4 ranks"});
  expect_error([] { repair(1, Sizes{0}, 1); }, Status::invalid_argument, {"no rank is left to repair from"});
}

// Every failed subset of root sizes 1..8 (all but the full set, which is
// an error) with 0..3 spares, the failed list shuffled and with a repeat.
BOOST_AUTO_TEST_CASE(brute_force) {
  std::mt19937 rng(20261128);
  std::size_t cases = 0;
  for (index_t w = 1; w <= 8; ++w) {
    for (std::uint32_t mask = 0; mask < (1u << w); ++mask) {
      Sizes failed;
      for (index_t x = 0; x < w; ++x)
        if (mask & (1u << x)) failed.push_back(x);
      std::shuffle(failed.begin(), failed.end(), rng);
      if (!failed.empty()) failed.push_back(failed.back());  // a repeat
      for (index_t spares = 0; spares <= 3; ++spares) {
        if (mask == (1u << w) - 1) {
          expect_error([&] { repair(w, failed, spares); }, Status::invalid_argument, {"no rank is left"});
        } else {
          compare(w, failed, spares);
        }
        ++cases;
      }
    }
  }
  BOOST_TEST_MESSAGE(cases << " repairs compared");
  BOOST_TEST(cases == 4u * (2u + 4u + 8u + 16u + 32u + 64u + 128u + 256u));
}

// Larger roots: random failed sets of every density, spares 0..20.
BOOST_AUTO_TEST_CASE(random_large) {
  std::mt19937 rng(44);
  for (int round = 0; round < 300; ++round) {
    const index_t w = std::uniform_int_distribution<index_t>(9, 1000)(rng);
    const index_t spares = std::uniform_int_distribution<index_t>(0, 20)(rng);
    const index_t k = std::uniform_int_distribution<index_t>(0, std::min<index_t>(w - 1, round % 2 ? 30 : w - 1))(rng);
    Sizes all(static_cast<std::size_t>(w));
    for (index_t x = 0; x < w; ++x) all[static_cast<std::size_t>(x)] = x;
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(static_cast<std::size_t>(k));
    compare(w, all, spares);
  }
}

BOOST_AUTO_TEST_SUITE_END()
