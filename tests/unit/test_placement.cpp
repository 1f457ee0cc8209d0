// place() and the level parsers (include/devmesh/topology.hpp), judged by a
// checker written from the rules alone (docs/TOPOLOGY.md "Placement"):
// groups are found by brute force from row-major coordinates, then
//   (a) every group of a placed dim lies in one instance of its level;
//   (b) in every group of every dim, for every level, the members in one
//       instance are consecutive in the group's order;
//   (t) the ranks used tile the levels: every used instance of a level
//       holds the same number of used instances of the level below (ranks
//       for hosts).
// For small worlds (up to 6 ranks) every injective map of root indices to
// ranks is tried: place() must succeed exactly when some map meets (a),
// (b) and (t).
#define BOOST_TEST_MODULE placement
#include <boost/test/unit_test.hpp>

#include "expect_error.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "devmesh/topology.hpp"

using namespace devmesh;

namespace {

using Ids = std::vector<index_t>;
using Names = std::vector<std::string>;

Ids coords(index_t x, const Ids& shape) {
  Ids c(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    c[d] = x % shape[d];
    x /= shape[d];
  }
  return c;
}

// The groups of dim d, each in local-rank order, as root indices.
std::vector<Ids> groups(const Ids& shape, std::size_t d) {
  const index_t w = std::accumulate(shape.begin(), shape.end(), index_t{1}, std::multiplies<>());
  std::map<Ids, Ids> by_rest;
  for (index_t x = 0; x < w; ++x) {
    Ids c = coords(x, shape);
    c[d] = -1;
    by_rest[c].push_back(x);  // x increases with coordinate d
  }
  std::vector<Ids> out;
  for (auto& [rest, g] : by_rest) out.push_back(g);
  return out;
}

// Every rule, for the map root index -> parent rank `ranks`; "" when all
// hold, else what broke.
std::string broken(const Levels& lv, const Ids& shape, const std::vector<int>& bound, const Ids& ranks) {
  const std::size_t levels = lv.names.size();
  for (std::size_t d = 0; d < shape.size(); ++d)
    for (const Ids& g : groups(shape, d))
      for (std::size_t l = 0; l < levels; ++l) {
        std::vector<index_t> seq;
        for (index_t x : g) seq.push_back(lv.of[l][static_cast<std::size_t>(ranks[static_cast<std::size_t>(x)])]);
        if (bound[d] == static_cast<int>(l) && std::set<index_t>(seq.begin(), seq.end()).size() != 1)
          return "dim " + std::to_string(d) + " leaves its level";
        std::set<index_t> done;
        for (std::size_t k = 0; k < seq.size(); ++k) {
          if (k > 0 && seq[k] == seq[k - 1]) continue;
          if (!done.insert(seq[k]).second) return "dim " + std::to_string(d) + " not consecutive in a level";
        }
      }
  // (t): used children per used instance, level by level, then the top.
  std::set<index_t> used(ranks.begin(), ranks.end());
  for (std::size_t l = 0; l < levels; ++l) {
    std::map<index_t, std::set<index_t>> kids;
    for (index_t r : used) kids[lv.of[l][static_cast<std::size_t>(r)]].insert(l ? lv.of[l - 1][static_cast<std::size_t>(r)] : r);
    std::set<std::size_t> counts;
    for (auto& [i, k] : kids) counts.insert(k.size());
    if (counts.size() > 1) return "level " + lv.names[l] + " not tiled";
  }
  return "";
}

// Whether any injective map meets every rule (small worlds only).
bool any_valid(const Levels& lv, const Ids& shape, const std::vector<int>& bound) {
  const index_t n = lv.ranks();
  const index_t w = std::accumulate(shape.begin(), shape.end(), index_t{1}, std::multiplies<>());
  Ids ranks;
  std::vector<char> taken(static_cast<std::size_t>(n));
  std::function<bool()> go = [&]() {
    if (static_cast<index_t>(ranks.size()) == w) return broken(lv, shape, bound, ranks).empty();
    for (index_t r = 0; r < n; ++r) {
      if (taken[static_cast<std::size_t>(r)]) continue;
      taken[static_cast<std::size_t>(r)] = 1;
      ranks.push_back(r);
      const bool ok = go();
      ranks.pop_back();
      taken[static_cast<std::size_t>(r)] = 0;
      if (ok) return true;
    }
    return false;
  };
  return go();
}

// Random nested levels: hosts of 1..max_host ranks, then each outer level
// groups consecutive instances of the one below in runs of random length.
Levels random_levels(std::mt19937& rng, index_t n, index_t max_host, int outer) {
  Names names{"host"};
  const Names outer_names{"domain", "switch", "switch2"};
  for (int k = 0; k < outer; ++k) names.push_back(outer_names[static_cast<std::size_t>(k)]);
  std::vector<std::vector<std::string>> ids(static_cast<std::size_t>(n));
  std::vector<index_t> inst(static_cast<std::size_t>(n));
  // Mostly hosts of one size, some smaller (a drained node, a short one).
  const index_t usual = std::uniform_int_distribution<index_t>(1, max_host)(rng);
  index_t r = 0, h = 0;
  while (r < n) {
    const bool odd = std::uniform_int_distribution<int>(0, 3)(rng) == 0;
    const index_t size = odd ? std::uniform_int_distribution<index_t>(1, usual)(rng) : usual;
    const index_t k = std::min(n - r, size);
    for (index_t i = 0; i < k; ++i) inst[static_cast<std::size_t>(r + i)] = h;
    r += k;
    ++h;
  }
  for (index_t q = 0; q < n; ++q) ids[static_cast<std::size_t>(q)].push_back("h" + std::to_string(inst[static_cast<std::size_t>(q)]));
  for (int k = 0; k < outer; ++k) {
    // Runs of 1..3 consecutive instances of the level below.
    std::map<index_t, index_t> group;
    index_t next = 0, left = 0;
    for (index_t q = 0; q < n; ++q) {
      const index_t below = inst[static_cast<std::size_t>(q)];
      if (!group.count(below)) {
        if (left == 0) {
          left = std::uniform_int_distribution<index_t>(1, 3)(rng);
          ++next;
        }
        group[below] = next - 1;
        --left;
      }
      inst[static_cast<std::size_t>(q)] = group[below];
      ids[static_cast<std::size_t>(q)].push_back(names[static_cast<std::size_t>(k + 1)][0] + std::to_string(group[below]));
    }
  }
  return make_levels(names, ids);
}

Ids random_shape(std::mt19937& rng, index_t w, std::size_t ndim) {
  Ids shape(ndim, 1);
  for (index_t p = 2; w > 1;) {
    if (w % p == 0) {
      shape[std::uniform_int_distribution<std::size_t>(0, ndim - 1)(rng)] *= p;
      w /= p;
    } else {
      ++p;
    }
  }
  return shape;
}

struct Case {
  Levels levels;
  Ids shape;
  Names names;
  Pairs placement;
  std::vector<int> bound;
};

Case random_case(std::mt19937& rng, index_t n, index_t max_host, int outer) {
  Case c;
  c.levels = random_levels(rng, n, max_host, outer);
  // Small worlds: any size; larger ones: a part of a host times a number
  // of hosts, the sizes jobs ask for.
  index_t w = std::uniform_int_distribution<index_t>(std::max<index_t>(1, n / 2), n)(rng);
  if (n > 6) {
    const index_t a = std::uniform_int_distribution<index_t>(1, max_host)(rng);
    w = a * std::uniform_int_distribution<index_t>(1, std::max<index_t>(1, n / a))(rng);
  }
  const std::size_t ndim = std::uniform_int_distribution<std::size_t>(1, 3)(rng);
  c.shape = random_shape(rng, w, ndim);
  for (std::size_t d = 0; d < ndim; ++d) c.names.push_back("d" + std::to_string(d));
  c.bound.assign(ndim, -1);
  for (std::size_t d = 0; d < ndim; ++d)
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      const auto l = std::uniform_int_distribution<std::size_t>(0, c.levels.names.size() - 1)(rng);
      c.bound[d] = static_cast<int>(l);
      c.placement.emplace_back(c.names[d], c.levels.names[l]);
    }
  return c;
}

// place() on c, checked by the rules; returns whether it placed.
bool check_case(const Case& c) {
  try {
    const Placed p = place(c.levels, c.shape, c.names, c.placement);
    BOOST_TEST(p.shape == c.shape);
    const index_t w = std::accumulate(c.shape.begin(), c.shape.end(), index_t{1}, std::multiplies<>());
    BOOST_REQUIRE(static_cast<index_t>(p.parent_ranks.size()) == w);
    std::set<index_t> seen(p.parent_ranks.begin(), p.parent_ranks.end());
    BOOST_TEST(static_cast<index_t>(seen.size()) == w, "parent ranks repeat");
    Ids rest;
    for (index_t r = 0; r < c.levels.ranks(); ++r)
      if (!seen.count(r)) rest.push_back(r);
    BOOST_TEST(p.leftovers == rest);
    const std::string why = broken(c.levels, c.shape, c.bound, p.parent_ranks);
    BOOST_TEST(why.empty(), why);
    return true;
  } catch (const Error& e) {
    BOOST_TEST(e.status() == Status::shape_mismatch, e.what());
    return false;
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(parsers) {
  const Pairs p = parse_pairs(" domain=A; switch = s1 ;", ';', "DEVMESH_TOPOLOGY");
  BOOST_TEST((p == Pairs{{"domain", "A"}, {"switch", "s1"}}));
  BOOST_TEST((parse_pairs("host=n17 domain=nvl2", ' ', "line") == Pairs{{"host", "n17"}, {"domain", "nvl2"}}));
  expect_error([] { parse_pairs("domain", ';', "DEVMESH_TOPOLOGY"); }, Status::invalid_argument,
               {"DEVMESH_TOPOLOGY", "'domain'"});
  expect_error([] { parse_pairs("a=", ',', "placement"); }, Status::invalid_argument, {"placement", "'a='"});
  BOOST_TEST((slurm_levels("s0.s4.node17", "switch.switch.node") == Pairs{{"switch", "s4"}, {"switch2", "s0"}}));
  BOOST_TEST((slurm_levels("block3.node17", "block.node") == Pairs{{"block", "block3"}}));
  expect_error([] { slurm_levels("s0.node1", "switch.switch.node"); }, Status::invalid_argument,
               {"s0.node1", "switch.switch.node"});
}

BOOST_AUTO_TEST_CASE(levels_nest_by_path) {
  // Host "a" in two domains is two hosts.
  const Levels lv = make_levels({"host", "domain"}, {{"a", "x"}, {"a", "x"}, {"a", "y"}, {"b", "y"}});
  BOOST_TEST((lv.of[0] == Ids{0, 0, 1, 2}));
  BOOST_TEST((lv.of[1] == Ids{0, 0, 1, 1}));
  BOOST_TEST((lv.sizes(0) == Ids{2, 1, 1}));
  expect_error([] { make_levels({"host", "domain"}, {{"a", "x"}, {"b"}}); }, Status::inconsistent, {"rank 1"});
  expect_error([] { make_levels({"host", "host"}, {{"a", "x"}}); }, Status::duplicate_name, {"'host'"});
  const Levels b = block_levels(10, 4, 2, 0);
  BOOST_TEST((b.sizes(0) == Ids{4, 4, 2}));
  BOOST_TEST((b.sizes(1) == Ids{8, 2}));
}

BOOST_AUTO_TEST_CASE(worked_examples) {
  // 8 ranks, hosts of 2: dp within hosts, tp across them.
  const Levels hosts = block_levels(8, 2, 0, 0);
  BOOST_TEST((place(hosts, {2, 4}, {"dp", "tp"}, {{"dp", "host"}}).parent_ranks == Ids{0, 2, 4, 6, 1, 3, 5, 7}));
  // Without a placement, uniform hosts: host-major, as host_aware.
  BOOST_TEST((place(hosts, {4, 2}, {"dp", "tp"}, {}).parent_ranks == Ids{0, 1, 2, 3, 4, 5, 6, 7}));
  // Uneven hosts 4,4,3,4: tp=host uses the three full hosts.
  const Levels uneven = make_levels({"host"}, {{"a"}, {"a"}, {"a"}, {"a"}, {"b"}, {"b"}, {"b"}, {"b"},
                                               {"c"}, {"c"}, {"c"}, {"d"}, {"d"}, {"d"}, {"d"}});
  const Placed p = place(uneven, {3, 4}, {"dp", "tp"}, {{"tp", "host"}});
  BOOST_TEST((p.parent_ranks == Ids{0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 14}));
  BOOST_TEST((p.leftovers == Ids{8, 9, 10}));
  // Zeros are filled over all ranks.
  BOOST_TEST((place(hosts, {0, 2}, {"dp", "tp"}, {}).shape == Ids{4, 2}));
}

BOOST_AUTO_TEST_CASE(errors_name_dim_level_and_sizes) {
  const Levels lv = block_levels(8, 4, 0, 0);
  expect_error([&] { place(lv, {2, 4}, {"dp", "tp"}, {{"pp", "host"}}); }, Status::unknown_dim, {"'pp=host'", "dp, tp"});
  expect_error([&] { place(lv, {2, 4}, {"dp", "tp"}, {{"tp", "rack"}}); }, Status::invalid_argument, {"'rack'", "host"});
  expect_error([&] { place(lv, {2, 4}, {"dp", "tp"}, {{"tp", "host"}, {"tp", "host"}}); }, Status::invalid_argument,
               {"'tp' twice"});
  expect_error([&] { place(lv, {1, 8}, {"dp", "tp"}, {{"tp", "host"}}); }, Status::shape_mismatch,
               {"'tp'", "size 8", "'host'", "largest holds 4", "per host: 4, 4"});
  expect_error([&] { place(lv, {3, 3}, {"dp", "tp"}, {}); }, Status::shape_mismatch, {"9 ranks", "8"});
  // 6 ranks on hosts 3, 3 with tp 2 inside a host: 3 is not a multiple of 2.
  const Levels threes = block_levels(6, 3, 0, 0);
  expect_error([&] { place(threes, {3, 2}, {"dp", "tp"}, {{"tp", "host"}}); }, Status::shape_mismatch,
               {"'tp'", "within one host", "(3, 2)", "per host: 3, 3"});
  // Uneven hosts 3, 5 cannot hold 8 ranks in equal parts.
  const Levels odd = make_levels({"host"}, {{"a"}, {"a"}, {"a"}, {"b"}, {"b"}, {"b"}, {"b"}, {"b"}});
  expect_error([&] { place(odd, {8}, {"x"}, {}); }, Status::shape_mismatch, {"cannot be tiled", "per host: 3, 5"});
}

BOOST_AUTO_TEST_CASE(exhaustive_small_worlds) {
  std::mt19937 rng(46);
  int placed = 0, refused = 0;
  for (int i = 0; i < 400; ++i) {
    const Case c = random_case(rng, std::uniform_int_distribution<index_t>(1, 6)(rng), 4, i % 3);
    const bool ok = check_case(c);
    BOOST_TEST(ok == any_valid(c.levels, c.shape, c.bound), "case " << i << ": place " << (ok ? "placed" : "refused"));
    (ok ? placed : refused)++;
  }
  BOOST_TEST_MESSAGE(placed << " placed, " << refused << " refused");
  BOOST_TEST(placed > 100);
  BOOST_TEST(refused > 20);
}

BOOST_AUTO_TEST_CASE(random_larger_worlds) {
  std::mt19937 rng(4646);
  int placed = 0;
  for (int i = 0; i < 600; ++i) placed += check_case(random_case(rng, std::uniform_int_distribution<index_t>(8, 96)(rng), 12, i % 4));
  BOOST_TEST_MESSAGE(placed << " of 600 placed");
  BOOST_TEST(placed > 150);
}
