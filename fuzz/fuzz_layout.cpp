// fuzz_layout: the layout algebra (include/devmesh/layout.hpp) against brute
// force on small layouts.
//
// Input bytes choose a root size W and, per layout, a random factorisation
// of W into digits cut into contiguous runs (one mode per run, as every
// mesh view's modes are). Layouts from different factorisations of one W
// nest, coincide, overlap or cross each other's digits; the odd raw mode
// (any size and stride) and size-1 mode add junk. Then every operation is
// checked against tests/support/reference.hpp, which treats a layout as a
// table of offsets and never calls the function it checks:
//   coalesce      same function, no size-1 modes, no mergeable neighbours
//   complement    succeeds exactly when the layout's image tiles [0, total)
//                 by translates; the complement enumerates those translates,
//                 increasing; group_base/local_index agree with the tiling
//   composition   a o b as a function, for injective b inside a's domain
//   split         succeeds exactly when the row-major parts add up to the
//                 layout and each part is a layout; the parts are those
//   disjoint      true exactly when all modes together are injective and
//                 tile [0, their largest reach)
//   row_major     the row-major function of a small shape
// Failures must be devmesh::Error with the documented status.
// DEVMESH_FUZZ_TRACE=1 prints what an input decodes to (fuzz_layout INPUT).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "devmesh/layout.hpp"
#include "devmesh/status.hpp"
#include "expect.hpp"
#include "reference.hpp"

namespace {

using devmesh::Error;
using devmesh::index_t;
using devmesh::Layout;
using devmesh::Mode;
using devmesh::Status;
using ref::Table;

constexpr index_t max_root = 2048;

std::vector<index_t> divisors_above_one(index_t n) {
  std::vector<index_t> out;
  for (index_t d = 2; d <= n; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

index_t product(const std::vector<index_t>& v) {
  return std::accumulate(v.begin(), v.end(), index_t{1}, std::multiplies<>());
}

// A root size: a product of a few small radices, at most max_root.
index_t root_size(FuzzedDataProvider& in) {
  static const index_t radices[] = {2, 3, 4, 5, 6, 2, 3, 7};
  index_t w = 1;
  for (int n = in.ConsumeIntegralInRange(0, 5); n > 0; --n) {
    const index_t d = radices[in.ConsumeIntegralInRange<std::size_t>(0, 7)];
    if (w * d > max_root) break;
    w *= d;
  }
  return w;
}

// A random factorisation of n into digits (least significant first), cut
// into contiguous runs: one mode per run, increasing stride.
std::vector<Mode> runs(FuzzedDataProvider& in, index_t n) {
  std::vector<index_t> digits;
  while (n > 1) {
    const std::vector<index_t> divs = divisors_above_one(n);
    const index_t d = divs[in.ConsumeIntegralInRange<std::size_t>(0, divs.size() - 1)];
    digits.push_back(d);
    n /= d;
  }
  std::vector<Mode> out;
  index_t stride = 1;
  for (std::size_t i = 0; i < digits.size();) {
    index_t size = digits[i++];
    while (i < digits.size() && in.ConsumeBool()) size *= digits[i++];
    out.push_back({size, stride});
    stride *= size;
  }
  return out;
}

// Some runs of a factorisation of w, shuffled, with the odd junk mode.
Layout layout(FuzzedDataProvider& in, index_t w) {
  Layout l;
  for (const Mode& m : runs(in, w))
    if (in.ConsumeBool()) l.modes.push_back(m);
  for (std::size_t i = l.modes.size(); i > 1; --i)
    std::swap(l.modes[i - 1], l.modes[in.ConsumeIntegralInRange<std::size_t>(0, i - 1)]);
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0:  // a raw mode: any size and stride
      l.modes.insert(l.modes.begin() + in.ConsumeIntegralInRange<std::ptrdiff_t>(0, l.modes.size()),
                     Mode{in.ConsumeIntegralInRange<index_t>(1, 8), in.ConsumeIntegralInRange<index_t>(1, 2 * w)});
      break;
    case 1:  // a size-1 mode (covers nothing), any stride
      l.modes.insert(l.modes.begin() + in.ConsumeIntegralInRange<std::ptrdiff_t>(0, l.modes.size()),
                     Mode{1, in.ConsumeIntegralInRange<index_t>(1, 64)});
      break;
    default: break;
  }
  return l;
}

// Sizes for split: usually a factorisation of n into `count` parts (1s
// allowed), sometimes raw numbers (wrong products, zeros, negatives).
std::vector<index_t> split_sizes(FuzzedDataProvider& in, index_t n) {
  const int count = in.ConsumeIntegralInRange(0, 4);
  std::vector<index_t> sizes;
  if (in.ConsumeIntegralInRange(0, 5) == 0) {
    for (int i = 0; i < count; ++i) sizes.push_back(in.ConsumeIntegralInRange<index_t>(-1, 8));
    return sizes;
  }
  for (int i = 0; i + 1 < count; ++i) {
    std::vector<index_t> divs = divisors_above_one(n);
    divs.push_back(1);
    const index_t d = divs[in.ConsumeIntegralInRange<std::size_t>(0, divs.size() - 1)];
    sizes.push_back(d);
    n /= d;
  }
  if (count > 0) sizes.push_back(n);
  return sizes;
}

// Past this many indices the brute force is skipped (the call still runs).
constexpr index_t max_enumerated = index_t{1} << 15;

// The reference's notion of disjoint: all non-trivial modes together are
// injective and their image tiles [0, R), R the largest reach. nullopt when
// too large to enumerate.
std::optional<bool> reference_disjoint(const std::vector<Layout>& ls) {
  Layout all;
  index_t reach = 1, count = 1;
  for (const Layout& l : ls)
    for (const Mode& m : l.modes)
      if (m.size > 1) {
        all.modes.push_back(m);
        reach = std::max(reach, m.size * m.stride);
        count *= m.size;
        if (count > max_enumerated) return std::nullopt;
      }
  const Table t = ref::enumerate(all);
  return ref::injective(t) && ref::tile(t, reach).has_value();
}

void check_coalesce(const Layout& a) {
  const Layout c = devmesh::coalesce(a);
  FUZZ_EXPECT(ref::enumerate(c) == ref::enumerate(a), "coalesce(" << a << ") = " << c);
  for (std::size_t i = 0; i < c.modes.size(); ++i) {
    FUZZ_EXPECT(c.modes[i].size > 1, "coalesce(" << a << ") = " << c << " keeps a size-1 mode");
    if (i > 0)
      FUZZ_EXPECT(c.modes[i - 1].stride != c.modes[i].size * c.modes[i].stride,
                  "coalesce(" << a << ") = " << c << " left neighbours to merge");
  }
}

void check_complement(const Layout& a, index_t total) {
  const Table image = ref::enumerate(a);
  const std::optional<Table> bases =
      ref::injective(image) ? ref::tile(image, total) : std::nullopt;
  Layout c;
  try {
    c = devmesh::complement(a, total);
  } catch (const Error& e) {
    FUZZ_EXPECT(!bases, "complement(" << a << ", " << total << ") threw '" << e.what()
                                      << "' but the translates " << ref::str(*bases) << " tile it");
    FUZZ_EXPECT(e.status() == Status::overlap || e.status() == Status::shape_mismatch,
                "complement threw status " << e.status());
    return;
  }
  FUZZ_EXPECT(bases, "complement(" << a << ", " << total << ") = " << c << " but no tiling exists");
  FUZZ_EXPECT(ref::enumerate(c) == *bases,
              "complement(" << a << ", " << total << ") = " << c << ", expected bases " << ref::str(*bases));
  // Each root index's group base and local index, from the tiling.
  std::vector<index_t> base_of(static_cast<std::size_t>(total)), local_of(static_cast<std::size_t>(total));
  for (index_t b : *bases)
    for (std::size_t k = 0; k < image.size(); ++k) {
      base_of[static_cast<std::size_t>(b + image[k])] = b;
      local_of[static_cast<std::size_t>(b + image[k])] = static_cast<index_t>(k);
    }
  for (index_t x = 0; x < total; ++x) {
    FUZZ_EXPECT(devmesh::group_base(a, x) == base_of[static_cast<std::size_t>(x)],
                "group_base(" << a << ", " << x << ")");
    FUZZ_EXPECT(devmesh::local_index(a, x) == local_of[static_cast<std::size_t>(x)],
                "local_index(" << a << ", " << x << ")");
  }
  for (std::size_t k = 0; k < image.size(); ++k)
    FUZZ_EXPECT(devmesh::offset(a, static_cast<index_t>(k)) == image[k], "offset(" << a << ", " << k << ")");
}

void check_composition(const Layout& a, const Layout& b) {
  const Table ta = ref::enumerate(a), tb = ref::enumerate(b);
  Layout r;
  try {
    r = devmesh::composition(a, b);
  } catch (const Error& e) {
    FUZZ_EXPECT(e.status() == Status::shape_mismatch, "composition threw status " << e.status());
    return;
  }
  FUZZ_EXPECT(devmesh::size(r) == devmesh::size(b), a << " o " << b << " = " << r);
  const bool inside = std::all_of(tb.begin(), tb.end(),
                                  [&](index_t k) { return k < static_cast<index_t>(ta.size()); });
  // Composition distributes over b's modes, which is a o b as a function
  // only when b's modes do not add up onto one another: for injective b.
  // And only modes are checked against size(a), not their sum: past it the
  // result continues a's top mode, a function the table does not define.
  // (The library only composes with single modes, in split.)
  if (!ref::injective(tb) || !inside) return;
  const Table tr = ref::enumerate(r);
  for (std::size_t k = 0; k < tb.size(); ++k)
    FUZZ_EXPECT(tr[k] == ta[static_cast<std::size_t>(tb[k])],
                a << " o " << b << " = " << r << " differs at k=" << k);
}

void check_split(const Layout& a, const std::vector<index_t>& sizes) {
  const Table t = ref::enumerate(a);
  const bool positive = std::all_of(sizes.begin(), sizes.end(), [](index_t s) { return s >= 1; });
  const bool fits = positive && product(sizes) == static_cast<index_t>(t.size());
  std::ostringstream what;
  what << "split(" << a << ", " << ref::str(sizes) << ")";
  std::vector<Layout> parts;
  try {
    parts = devmesh::split(a, sizes);
  } catch (const Error& e) {
    if (!positive) {
      FUZZ_EXPECT(e.status() == Status::invalid_argument, what.str() << " threw " << e.status());
    } else {
      FUZZ_EXPECT(e.status() == Status::shape_mismatch, what.str() << " threw " << e.status());
      // Every split of a digit-aligned layout that the brute force can do,
      // the library must do too.
      if (fits && reference_disjoint({a}) == true)
        FUZZ_EXPECT(!ref::splittable(t, sizes), what.str() << " threw '" << e.what()
                                                               << "' but the brute force splits it");
    }
    return;
  }
  FUZZ_EXPECT(fits, what.str() << " succeeded");
  FUZZ_EXPECT(ref::splittable(t, sizes), what.str() << " succeeded but the parts do not add up");
  const std::vector<Table> expected = ref::split_parts(t, sizes);
  FUZZ_EXPECT(parts.size() == sizes.size(), what.str());
  for (std::size_t i = 0; i < parts.size(); ++i)
    FUZZ_EXPECT(ref::enumerate(parts[i]) == expected[i],
                what.str() << " part " << i << " = " << parts[i] << ", expected " << ref::str(expected[i]));
  if (reference_disjoint({a}) == true) FUZZ_EXPECT(devmesh::disjoint(parts), what.str() << ": parts not disjoint");
}

void check_disjoint(const std::vector<Layout>& ls) {
  std::ostringstream what;
  for (const Layout& l : ls) what << l << ' ';
  const bool got = devmesh::disjoint(ls);
  if (const std::optional<bool> want = reference_disjoint(ls))
    FUZZ_EXPECT(got == *want, "disjoint{" << what.str() << "}");
}

void check_row_major(FuzzedDataProvider& in) {
  std::vector<index_t> shape;
  for (int n = in.ConsumeIntegralInRange(0, 4); n > 0; --n) shape.push_back(in.ConsumeIntegralInRange<index_t>(-1, 6));
  Layout l;
  try {
    l = devmesh::row_major(shape);
  } catch (const Error& e) {
    FUZZ_EXPECT(e.status() == Status::invalid_argument, "row_major threw " << e.status());
    FUZZ_EXPECT(std::any_of(shape.begin(), shape.end(), [](index_t s) { return s < 1; }),
                "row_major(" << ref::str(shape) << ") threw");
    return;
  }
  const Table t = ref::enumerate(l);
  Table want(static_cast<std::size_t>(product(shape)));
  std::iota(want.begin(), want.end(), index_t{0});
  FUZZ_EXPECT(t == want, "row_major(" << ref::str(shape) << ") = " << l);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const index_t w = root_size(in);
  const Layout a = layout(in, w), b = layout(in, w), c = layout(in, w);
  (void)devmesh::to_string(a);

  check_coalesce(a);
  index_t total = w;
  switch (in.ConsumeIntegralInRange(0, 7)) {
    case 0: total = w * in.ConsumeIntegralInRange<index_t>(2, 3); break;
    case 1: total = in.ConsumeIntegralInRange<index_t>(-1, 2 * w); break;
    default: break;
  }
  check_complement(a, total);
  check_disjoint({a});
  check_disjoint({a, b});
  check_disjoint({a, b, c});
  // b' over a's local index space: a factorisation of size(a), or junk.
  const Layout b2 = layout(in, devmesh::size(a));
  const std::vector<index_t> sizes = split_sizes(in, devmesh::size(a));
  // DEVMESH_FUZZ_TRACE=1: what an input (a crash, a seed) decodes to.
  static const bool trace = std::getenv("DEVMESH_FUZZ_TRACE") != nullptr;
  if (trace)
    std::fprintf(stderr, "W=%lld a=%s b=%s c=%s total=%lld compose with %s, split into %s\n",
                 static_cast<long long>(w), devmesh::to_string(a).c_str(), devmesh::to_string(b).c_str(),
                 devmesh::to_string(c).c_str(), static_cast<long long>(total), devmesh::to_string(b2).c_str(),
                 ref::str(sizes).c_str());
  check_composition(a, b2);
  check_split(a, sizes);
  check_row_major(in);
  return 0;
}
