// The layout algebra (include/devmesh/layout.hpp) checked over every index.
//
// Each operation's contract is compared with a brute-force reference on
// hand-picked edge cases and on a few hundred random cases. Random layouts
// are "digit aligned": a random root size W is a mixed-radix number (random
// radices), and each mode covers a contiguous run of its digits, which is
// what every layout of a mesh view looks like. Brute force means an odometer
// enumeration of the layout and bitmaps/sets over [0, W); the reference never
// calls the function it checks (tests/support/reference.hpp).
#define BOOST_TEST_MODULE layout
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "devmesh/layout.hpp"
#include "devmesh/status.hpp"
#include "reference.hpp"

using namespace devmesh;


// BOOST_TEST only when the check fails: the hot loops run millions of them.
#define CHECK(...)                          \
  do {                                      \
    if (!(__VA_ARGS__)) BOOST_TEST(__VA_ARGS__); \
  } while (0)

namespace {

constexpr int cases = 300;

Layout L(std::vector<Mode> modes) { return Layout{std::move(modes)}; }

index_t pick(std::mt19937& rng, index_t lo, index_t hi) {
  return std::uniform_int_distribution<index_t>(lo, hi)(rng);
}

// The layout as a function (tests/support/reference.hpp): element k is the
// root offset of local index k.
using ref::enumerate;

// A random root size as mixed-radix digits, least significant first. Mixes
// small composites, primes, size 1 (no digits) and worlds of a few thousand.
std::vector<index_t> random_radices(std::mt19937& rng) {
  static const index_t primes[] = {2, 3, 5, 7, 11, 13, 101, 997, 1009, 4093};
  switch (pick(rng, 0, 9)) {
    case 0: return {};                                  // W = 1
    case 1: return {primes[pick(rng, 0, 9)]};           // a prime world
    default: break;
  }
  std::vector<index_t> r;
  index_t w = 1;
  for (int n = static_cast<int>(pick(rng, 1, 6)); n > 0; --n) {
    const index_t d = pick(rng, 2, 7);
    if (w * d > 4096) break;
    r.push_back(d);
    w *= d;
  }
  return r;
}

index_t product(const std::vector<index_t>& v) {
  return std::accumulate(v.begin(), v.end(), index_t{1}, std::multiplies<>());
}

// Cuts the digits into contiguous runs; each run is one mode (size = product
// of its radices, stride = product of the radices below it). Increasing stride.
std::vector<Mode> random_runs(std::mt19937& rng, const std::vector<index_t>& radices) {
  std::vector<Mode> runs;
  index_t stride = 1;
  for (std::size_t i = 0; i < radices.size();) {
    const std::size_t len = static_cast<std::size_t>(pick(rng, 1, static_cast<index_t>(radices.size() - i)));
    index_t size = 1;
    for (std::size_t j = i; j < i + len; ++j) size *= radices[j];
    runs.push_back({size, stride});
    stride *= size;
    i += len;
  }
  return runs;
}

// A random subset of `runs` in random order, with the odd size-1 mode (any
// stride: it covers nothing).
Layout random_layout(std::mt19937& rng, const std::vector<Mode>& runs, double keep = 0.6) {
  Layout l;
  for (const Mode& m : runs)
    if (std::bernoulli_distribution(keep)(rng)) l.modes.push_back(m);
  std::shuffle(l.modes.begin(), l.modes.end(), rng);
  if (pick(rng, 0, 3) == 0)
    l.modes.insert(l.modes.begin() + pick(rng, 0, static_cast<index_t>(l.modes.size())), Mode{1, pick(rng, 1, 50)});
  return l;
}

// Random factors of n (> 1 each, product n), in the order found.
std::vector<index_t> random_factors(std::mt19937& rng, index_t n) {
  std::vector<index_t> out;
  while (n > 1) {
    std::vector<index_t> divs;
    for (index_t d = 2; d <= n; ++d)
      if (n % d == 0) divs.push_back(d);
    const index_t f = divs[static_cast<std::size_t>(pick(rng, 0, static_cast<index_t>(divs.size() - 1)))];
    out.push_back(f);
    n /= f;
  }
  return out;
}

// Local digits of a layout's local index space, least significant first:
// each mode's size refined into random factors. Runs of these digits are
// exactly what composition and split must accept.
std::vector<index_t> refined_local_radices(std::mt19937& rng, const Layout& l) {
  std::vector<index_t> out;
  for (std::size_t j = l.modes.size(); j-- > 0;)
    for (index_t f : random_factors(rng, l.modes[j].size)) out.push_back(f);
  return out;
}

template <class F>
Status status_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.status();
  }
  return Status::success;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(basics)

BOOST_AUTO_TEST_CASE(size_and_to_string) {
  BOOST_TEST(size(Layout{}) == 1);
  BOOST_TEST(size(L({{2, 4}, {3, 1}})) == 6);
  BOOST_TEST(size(L({{1, 0}})) == 1);
  BOOST_TEST(to_string(L({{2, 4}, {2, 1}})) == "(2,2):(4,1)");
  BOOST_TEST(to_string(L({{2, 4}})) == "2:4");
  BOOST_TEST(to_string(Layout{}) == "1:0");
  BOOST_TEST(to_string(L({{1, 1}})) == "1:1");
  BOOST_TEST(to_string(L({{2, 1}, {3, 2}, {4, 6}})) == "(2,3,4):(1,2,6)");
  BOOST_TEST(to_string(L({{1024, index_t{1} << 40}})) == "1024:1099511627776");
  std::ostringstream os;
  os << L({{2, 4}, {2, 1}}) << ' ' << Layout{};
  BOOST_TEST(os.str() == "(2,2):(4,1) 1:0");
}

BOOST_AUTO_TEST_CASE(row_major_matches_odometer) {
  std::mt19937 rng(1);
  for (int c = 0; c < cases; ++c) {
    std::vector<index_t> shape;
    for (int n = static_cast<int>(pick(rng, 1, 4)); n > 0; --n) shape.push_back(pick(rng, 1, 9));
    const Layout l = row_major(shape);
    BOOST_TEST_REQUIRE(l.modes.size() == shape.size());
    CHECK(size(l) == product(shape));
    // Root index x is the x-th step of an odometer over the shape.
    std::vector<index_t> digits(shape.size(), 0);
    for (index_t x = 0; x < product(shape); ++x) {
      for (std::size_t i = 0; i < shape.size(); ++i) CHECK(coordinate(l.modes[i], x) == digits[i]);
      for (std::size_t i = shape.size(); i-- > 0 && ++digits[i] == shape[i];) digits[i] = 0;
    }
  }
  CHECK(row_major(std::vector<index_t>{2, 3, 4}) == L({{2, 12}, {3, 4}, {4, 1}}));
  CHECK(row_major(std::vector<index_t>{1}) == L({{1, 1}}));
  CHECK(row_major(std::vector<index_t>{1024, 1024, 1024, 1024}).modes[0].stride == index_t{1} << 30);
}

BOOST_AUTO_TEST_CASE(row_major_errors) {
  BOOST_TEST(status_of([] { row_major(std::vector<index_t>{2, 0}); }) == Status::invalid_argument);
  BOOST_TEST(status_of([] { row_major(std::vector<index_t>{-1}); }) == Status::invalid_argument);
  const index_t big = index_t{1} << 32;
  BOOST_TEST(status_of([&] { row_major(std::vector<index_t>{big, big}); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([&] { row_major(std::vector<index_t>{2, big, big}); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([&] { row_major(std::vector<index_t>{big / 2, big}); }) == Status::shape_mismatch);  // 2^63
  BOOST_TEST(status_of([&] { row_major(std::vector<index_t>{big / 4, big}); }) == Status::success);  // 2^62
}

BOOST_AUTO_TEST_CASE(coordinate_example) {
  BOOST_TEST(coordinate(Mode{4, 2}, 13) == 2);
  BOOST_TEST(local_index(L({{2, 1}, {4, 2}}), 5) == 6);
  BOOST_TEST(offset(L({{2, 1}, {4, 2}}), 6) == 5);
  BOOST_TEST(group_base(L({{2, 4}}), 6) == 2);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(inverse)

// offset is the odometer; local_index inverts it on the image; off the image
// x splits into its group's base plus an offset of the layout, and every
// group has size(layout) members.
BOOST_AUTO_TEST_CASE(offset_and_local_index_over_every_index) {
  std::mt19937 rng(2);
  for (int c = 0; c < cases; ++c) {
    const std::vector<index_t> radices = random_radices(rng);
    const index_t w = product(radices);
    const Layout l = random_layout(rng, random_runs(rng, radices));
    const std::vector<index_t> image = enumerate(l);
    BOOST_TEST_CONTEXT("layout " << l << " in W=" << w) {
      BOOST_TEST_REQUIRE(static_cast<index_t>(image.size()) == size(l));
      std::vector<index_t> k_of(static_cast<std::size_t>(w), -1);
      for (index_t k = 0; k < size(l); ++k) {
        CHECK(offset(l, k) == image[static_cast<std::size_t>(k)]);
        CHECK(local_index(l, image[static_cast<std::size_t>(k)]) == k);
        k_of[static_cast<std::size_t>(image[static_cast<std::size_t>(k)])] = k;
      }
      std::map<index_t, index_t> members;  // base -> count
      for (index_t x = 0; x < w; ++x) {
        const index_t base = group_base(l, x), k = local_index(l, x);
        CHECK(base >= 0);
        CHECK(base <= x);
        CHECK(k >= 0);
        CHECK(k < size(l));
        CHECK(base + image[static_cast<std::size_t>(k)] == x);
        CHECK((base == 0) == (k_of[static_cast<std::size_t>(x)] >= 0));  // x on the image
        if (base == 0) CHECK(k == k_of[static_cast<std::size_t>(x)]);
        ++members[base];
      }
      CHECK(static_cast<index_t>(members.size()) * size(l) == w);
      for (const auto& [base, n] : members) {
        CHECK(n == size(l));
        CHECK(group_base(l, base) == base);
      }
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(coalesce_op)

BOOST_AUTO_TEST_CASE(examples) {
  BOOST_TEST(coalesce(L({{2, 12}, {1, 7}, {3, 4}, {4, 1}})) == L({{24, 1}}));
  BOOST_TEST(coalesce(L({{2, 1}, {2, 2}})) == L({{2, 1}, {2, 2}}));
  BOOST_TEST(coalesce(L({{1, 5}, {1, 1}})) == Layout{});
  BOOST_TEST(coalesce(Layout{}) == Layout{});
  BOOST_TEST(coalesce(L({{2, 8}, {2, 4}, {3, 1}})) == L({{4, 4}, {3, 1}}));
}

// Same function k -> offset for every k, no size-1 modes left, no two
// neighbours left that could merge, and coalescing twice changes nothing.
BOOST_AUTO_TEST_CASE(preserves_the_function) {
  std::mt19937 rng(3);
  for (int c = 0; c < cases; ++c) {
    Layout l;
    for (int n = static_cast<int>(pick(rng, 0, 6)); n > 0; --n) {
      const index_t s = pick(rng, 1, 4);
      // Often a mode that continues its predecessor (mergeable), else random.
      if (!l.modes.empty() && pick(rng, 0, 1) == 0) {
        l.modes.back().stride = s * pick(rng, 1, 3);
        l.modes.push_back({s, l.modes.back().stride / s});
      } else {
        l.modes.push_back({s, pick(rng, 1, 30)});
      }
    }
    const Layout co = coalesce(l);
    BOOST_TEST_CONTEXT(l << " -> " << co) {
      BOOST_TEST(size(co) == size(l));
      const std::vector<index_t> before = enumerate(l), after = enumerate(co);
      BOOST_TEST(before == after);
      for (std::size_t j = 0; j < co.modes.size(); ++j) {
        BOOST_TEST(co.modes[j].size > 1);
        if (j > 0) BOOST_TEST(co.modes[j - 1].stride != co.modes[j].size * co.modes[j].stride);
      }
      BOOST_TEST(coalesce(co) == co);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(complement_op)

BOOST_AUTO_TEST_CASE(examples) {
  BOOST_TEST(complement(L({{2, 2}}), 8) == L({{2, 4}, {2, 1}}));
  BOOST_TEST(complement(L({{2, 1}, {2, 4}}), 8) == L({{2, 2}}));
  BOOST_TEST(complement(Layout{}, 6) == L({{6, 1}}));
  BOOST_TEST(complement(L({{6, 1}}), 6) == Layout{});
  BOOST_TEST(complement(Layout{}, 1) == Layout{});
  BOOST_TEST(complement(L({{1, 3}}), 1) == Layout{});
  BOOST_TEST(complement(L({{7, 1}}), 7) == Layout{});        // prime world
  BOOST_TEST(complement(L({{3, 4}}), 12) == L({{4, 1}}));    // (3,4) root, complement of a is b
}

BOOST_AUTO_TEST_CASE(errors) {
  // Two modes on the same digits.
  BOOST_TEST(status_of([] { complement(L({{2, 1}, {2, 1}}), 4); }) == Status::overlap);
  BOOST_TEST(status_of([] { complement(L({{4, 2}, {2, 4}}), 16); }) == Status::overlap);
  BOOST_TEST(status_of([] { complement(L({{8, 1}, {2, 2}}), 8); }) == Status::overlap);
  // Modes that do not fit the digit structure of the total.
  BOOST_TEST(status_of([] { complement(L({{3, 1}}), 8); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([] { complement(L({{2, 1}, {2, 3}}), 12); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([] { complement(L({{4, 4}}), 8); }) == Status::shape_mismatch);
}

// Layout plus complement tiles [0, W) exactly once; the complement
// enumerates the group bases, increasing.
BOOST_AUTO_TEST_CASE(tiles_the_root) {
  std::mt19937 rng(4);
  for (int c = 0; c < cases; ++c) {
    const std::vector<index_t> radices = random_radices(rng);
    const index_t w = product(radices);
    const Layout l = random_layout(rng, random_runs(rng, radices));
    BOOST_TEST_CONTEXT("complement of " << l << " in W=" << w) {
      const Layout comp = complement(l, w);
      CHECK(size(l) * size(comp) == w);
      const std::vector<index_t> bases = enumerate(comp), image = enumerate(l);
      std::vector<int> hits(static_cast<std::size_t>(w), 0);
      for (index_t b : bases)
        for (index_t o : image) {
          BOOST_TEST_REQUIRE(b + o < w);
          ++hits[static_cast<std::size_t>(b + o)];
        }
      CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
      CHECK(std::is_sorted(bases.begin(), bases.end()));
      CHECK((std::adjacent_find(bases.begin(), bases.end()) == bases.end()));
      // The bases are the smallest members of the groups, found by brute force.
      std::set<index_t> smallest;
      for (index_t x = 0; x < w; ++x) smallest.insert(group_base(l, x));
      CHECK((std::vector<index_t>(smallest.begin(), smallest.end()) == bases));
      const Layout both[] = {l, comp};
      CHECK(disjoint(both));
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(composition_op)

BOOST_AUTO_TEST_CASE(examples) {
  BOOST_TEST(composition(L({{2, 4}, {4, 1}}), L({{4, 1}, {2, 4}})) == L({{4, 1}, {2, 4}}));
  BOOST_TEST(composition(L({{8, 1}}), L({{2, 4}})) == L({{2, 4}}));
  BOOST_TEST(composition(L({{5, 2}, {2, 1}}), L({{2, 5}, {5, 1}})) == L({{2, 5}, {5, 1}}));  // coalesced first
  BOOST_TEST(composition(L({{4, 3}}), L({{1, 1}})) == Layout{});
  // A stride that cuts (4,3):(1,4)'s size-3 mode, a size reaching past a.
  BOOST_TEST(status_of([] { composition(L({{4, 1}, {3, 4}}), L({{2, 1}})); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([] { composition(L({{4, 1}, {3, 4}}), L({{2, 2}})); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([] { composition(L({{4, 1}}), L({{2, 4}})); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([] { composition(L({{4, 1}}), L({{8, 1}})); }) == Status::shape_mismatch);
}

// (a o b)(k) == a(b(k)) for every k: always when b is made of runs of a
// refinement of a's local digits, and whenever it succeeds for random b.
BOOST_AUTO_TEST_CASE(is_function_composition) {
  std::mt19937 rng(5);
  int random_ok = 0, random_refused = 0;
  for (int c = 0; c < 2 * cases; ++c) {
    const std::vector<index_t> radices = random_radices(rng);
    const Layout a = random_layout(rng, random_runs(rng, radices), 0.8);
    const std::vector<index_t> fa = enumerate(a);
    Layout b;
    const bool aligned = c % 2 == 0;
    if (aligned) {
      b = random_layout(rng, random_runs(rng, refined_local_radices(rng, a)));
    } else {
      for (int n = static_cast<int>(pick(rng, 1, 3)); n > 0; --n)
        b.modes.push_back({pick(rng, 1, 6), pick(rng, 1, std::max<index_t>(1, size(a) / 2))});
    }
    const std::vector<index_t> fb = enumerate(b);
    if (!aligned && *std::max_element(fb.begin(), fb.end()) >= size(a)) continue;  // b must stay in a's domain
    BOOST_TEST_CONTEXT(a << " o " << b) {
      Layout ab;
      const Status s = status_of([&] { ab = composition(a, b); });
      if (aligned) CHECK(s == Status::success);
      if (s != Status::success) {
        CHECK(s == Status::shape_mismatch);
        ++random_refused;
        continue;
      }
      if (!aligned) ++random_ok;
      const std::vector<index_t> fab = enumerate(ab);
      BOOST_TEST_REQUIRE(fab.size() == fb.size());
      for (std::size_t k = 0; k < fb.size(); ++k) CHECK(fab[k] == fa[static_cast<std::size_t>(fb[k])]);
    }
  }
  BOOST_TEST_MESSAGE("random b: " << random_ok << " composed, " << random_refused << " refused");
  BOOST_TEST(random_ok > 20);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(split_op)

BOOST_AUTO_TEST_CASE(examples) {
  const std::vector<index_t> s24{2, 4}, s42{4, 2}, s4{4}, s62{6, 2}, s32{3, 2}, s23{2, 3};
  BOOST_TEST((split(L({{8, 1}}), s24) == std::vector<Layout>{L({{2, 4}}), L({{4, 1}})}));
  // (2,4):(4,1) is coalesced to 8:1 first, so the first part comes out as
  // 4:2, the same function as (2,2):(4,2).
  BOOST_TEST((split(L({{2, 4}, {4, 1}}), s42) == std::vector<Layout>{L({{4, 2}}), L({{2, 1}})}));
  BOOST_TEST((split(L({{2, 4}, {2, 1}}), s4) == std::vector<Layout>{L({{2, 4}, {2, 1}})}));
  // Row-major with a size-1 part and a transposed dim.
  const std::vector<index_t> s141{1, 4, 1};
  BOOST_TEST((split(L({{2, 1}, {2, 2}}), s141) == std::vector<Layout>{Layout{}, L({{2, 1}, {2, 2}}), Layout{}}));
  BOOST_TEST((split(L({{2, 3}, {3, 1}}), s32) == std::vector<Layout>{L({{3, 2}}), L({{2, 1}})}));  // (2,3):(3,1) is 6:1
  // Errors: product, size < 1, a cut through a mode.
  BOOST_TEST(status_of([&] { split(L({{6, 1}}), s42); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([&] { split(L({{6, 1}}), std::vector<index_t>{6, 0}); }) == Status::invalid_argument);
  BOOST_TEST(status_of([&] { split(L({{6, 1}}), std::vector<index_t>{-6, -1}); }) == Status::invalid_argument);
  BOOST_TEST(status_of([&] { split(L({{4, 1}, {3, 4}}), s62); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([&] { split(L({{2, 1}, {3, 2}}), s32); }) == Status::shape_mismatch);
  BOOST_TEST(status_of([&] { split(L({{2, 1}, {3, 2}}), s23); }) == Status::success);
}

// For every root index: the parts' local indices, combined row-major, give
// the dim's local index; each part's group lies inside the dim's group; the
// parts are disjoint. Splits along refined digits must succeed; random
// factorisations either succeed or are refused exactly when the dim's
// function does not decompose over the split's digits.
BOOST_AUTO_TEST_CASE(parts_recombine) {
  std::mt19937 rng(6);
  int refused = 0;
  for (int c = 0; c < 2 * cases; ++c) {
    const std::vector<index_t> radices = random_radices(rng);
    const index_t w = product(radices);
    const Layout dim = random_layout(rng, random_runs(rng, radices), 0.8);
    const bool aligned = c % 2 == 0;
    std::vector<index_t> sizes;
    if (aligned) {
      for (const Mode& m : random_runs(rng, refined_local_radices(rng, dim))) sizes.insert(sizes.begin(), m.size);
    } else {
      sizes = random_factors(rng, size(dim));
    }
    if (sizes.empty() || pick(rng, 0, 4) == 0)
      sizes.insert(sizes.begin() + pick(rng, 0, static_cast<index_t>(sizes.size())), 1);
    std::vector<index_t> suffix(sizes.size() + 1, 1);  // suffix[i] = prod sizes[i..]
    for (std::size_t i = sizes.size(); i-- > 0;) suffix[i] = suffix[i + 1] * sizes[i];

    // Brute force: does the dim's function decompose over the split digits?
    const std::vector<index_t> f = enumerate(dim);
    bool decomposes = true;
    for (index_t k = 0; k < size(dim) && decomposes; ++k) {
      index_t sum = 0;
      for (std::size_t i = 0; i < sizes.size(); ++i)
        sum += f[static_cast<std::size_t>((k / suffix[i + 1]) % sizes[i] * suffix[i + 1])];
      decomposes = sum == f[static_cast<std::size_t>(k)];
    }

    std::ostringstream sizes_text;
    for (index_t s : sizes) sizes_text << s << ' ';
    BOOST_TEST_CONTEXT("split " << dim << " into " << sizes_text.str() << "in W=" << w) {
      std::vector<Layout> parts;
      const Status s = status_of([&] { parts = split(dim, sizes); });
      if (aligned) BOOST_TEST(s == Status::success);
      BOOST_TEST((s == Status::success) == decomposes);
      if (s != Status::success) {
        BOOST_TEST(s == Status::shape_mismatch);
        ++refused;
        continue;
      }
      BOOST_TEST_REQUIRE(parts.size() == sizes.size());
      for (std::size_t i = 0; i < parts.size(); ++i) CHECK(size(parts[i]) == sizes[i]);
      CHECK(disjoint(parts));
      std::vector<std::map<index_t, index_t>> dim_base_of(parts.size());  // part base -> dim base
      for (index_t x = 0; x < w; ++x) {
        index_t k = 0;
        for (std::size_t i = 0; i < parts.size(); ++i) {
          k = k * sizes[i] + local_index(parts[i], x);
          const auto [it, fresh] = dim_base_of[i].emplace(group_base(parts[i], x), group_base(dim, x));
          CHECK(it->second == group_base(dim, x));  // same part group -> same dim group
        }
        CHECK(k == local_index(dim, x));
      }
    }
  }
  BOOST_TEST_MESSAGE(refused << " random splits refused");
  BOOST_TEST(refused > 5);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(disjoint_op)

BOOST_AUTO_TEST_CASE(examples) {
  const std::vector<Layout> yes{L({{2, 4}}), L({{2, 1}})}, no{L({{4, 2}}), L({{2, 4}})};
  BOOST_TEST(disjoint(yes));
  BOOST_TEST(!disjoint(no));
  BOOST_TEST(disjoint(std::span<const Layout>{}));
  const std::vector<Layout> size_one{L({{1, 1}}), L({{1, 1}}), L({{4, 1}})};
  BOOST_TEST(disjoint(size_one));
  const std::vector<Layout> within{L({{2, 1}, {2, 1}})};
  BOOST_TEST(!disjoint(within));
  const std::vector<Layout> nested{L({{8, 1}}), L({{2, 2}})};
  BOOST_TEST(!disjoint(nested));
}

// Against brute force: each layout injective and the images pairwise meet
// only in 0. Modes come from two different cuts of the same digits, so they
// overlap partially, nest, or coincide.
BOOST_AUTO_TEST_CASE(matches_set_intersection) {
  std::mt19937 rng(7);
  int yes = 0, no = 0;
  for (int c = 0; c < cases; ++c) {
    const std::vector<index_t> radices = random_radices(rng);
    std::vector<Layout> layouts;
    for (int n = static_cast<int>(pick(rng, 1, 3)); n > 0; --n)
      layouts.push_back(random_layout(rng, random_runs(rng, radices), 0.4));
    if (pick(rng, 0, 5) == 0 && !layouts[0].modes.empty())  // a mode twice within one layout
      layouts[0].modes.push_back(layouts[0].modes[0]);
    bool expected = true;
    std::vector<std::set<index_t>> images;
    for (const Layout& l : layouts) {
      const std::vector<index_t> f = enumerate(l);
      images.emplace_back(f.begin(), f.end());
      expected = expected && images.back().size() == f.size();
    }
    for (std::size_t i = 0; i < images.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        for (index_t x : images[i]) expected = expected && (x == 0 || !images[j].count(x));
    std::ostringstream text;
    for (const Layout& l : layouts) text << l << ' ';
    BOOST_TEST_CONTEXT(text.str()) { BOOST_TEST(disjoint(layouts) == expected); }
    (expected ? yes : no)++;
  }
  BOOST_TEST(yes > 30);
  BOOST_TEST(no > 30);
}

BOOST_AUTO_TEST_SUITE_END()
