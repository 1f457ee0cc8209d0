#include "devmesh/layout.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "devmesh/status.hpp"

namespace devmesh {

index_t size(const Layout& layout) noexcept {
  index_t n = 1;
  for (const Mode& m : layout.modes) n *= m.size;
  return n;
}

Layout row_major(std::span<const index_t> shape) {
  Layout out;
  out.modes.resize(shape.size());
  index_t stride = 1;
  for (std::size_t i = shape.size(); i-- > 0;) {
    if (shape[i] < 1)
      throw Error(Status::invalid_argument,
                  "size " + std::to_string(shape[i]) + " of dim " + std::to_string(i) + " must be at least 1");
    out.modes[i] = {shape[i], stride};
    if (i > 0 && __builtin_mul_overflow(stride, shape[i], &stride))
      throw Error(Status::shape_mismatch, "mesh size overflows 63 bits");
  }
  index_t total = 0;
  if (!shape.empty() && __builtin_mul_overflow(out.modes[0].stride, shape[0], &total))
    throw Error(Status::shape_mismatch, "mesh size overflows 63 bits");
  return out;
}

index_t local_index(const Layout& layout, index_t x) noexcept {
  index_t k = 0;
  for (const Mode& m : layout.modes) k = k * m.size + coordinate(m, x);
  return k;
}

index_t offset(const Layout& layout, index_t k) noexcept {
  index_t off = 0;
  for (std::size_t i = layout.modes.size(); i-- > 0;) {
    const Mode& m = layout.modes[i];
    off += (k % m.size) * m.stride;
    k /= m.size;
  }
  return off;
}

index_t group_base(const Layout& layout, index_t x) noexcept {
  index_t base = x;
  for (const Mode& m : layout.modes) base -= coordinate(m, x) * m.stride;
  return base;
}

Layout coalesce(const Layout& layout) {
  Layout out;
  for (const Mode& m : layout.modes) {
    if (m.size == 1) continue;
    if (!out.modes.empty() && out.modes.back().stride == m.size * m.stride) {
      out.modes.back() = {out.modes.back().size * m.size, m.stride};
    } else {
      out.modes.push_back(m);
    }
  }
  return out;
}

namespace {

// Non-trivial modes sorted by increasing stride.
std::vector<Mode> by_stride(const Layout& layout) {
  std::vector<Mode> modes;
  for (const Mode& m : layout.modes)
    if (m.size > 1) modes.push_back(m);
  std::sort(modes.begin(), modes.end(), [](const Mode& a, const Mode& b) { return a.stride < b.stride; });
  return modes;
}

}  // namespace

Layout complement(const Layout& layout, index_t total) {
  Layout out;         // collected least significant first, reversed at the end
  index_t reach = 1;  // every digit below `reach` is accounted for
  for (const Mode& m : by_stride(layout)) {
    if (m.stride < reach) throw Error(Status::overlap, "modes of " + to_string(layout) + " overlap");
    if (m.stride % reach != 0)
      throw Error(Status::shape_mismatch, "mode " + std::to_string(m.size) + ":" + std::to_string(m.stride) +
                                              " does not align with the digits below it");
    if (m.stride > reach) out.modes.push_back({m.stride / reach, reach});
    reach = m.size * m.stride;
  }
  if (reach > total || total % reach != 0)
    throw Error(Status::shape_mismatch, to_string(layout) + " does not fit in " + std::to_string(total) + " indices");
  if (total > reach) out.modes.push_back({total / reach, reach});
  std::reverse(out.modes.begin(), out.modes.end());
  return out;
}

namespace {

// Appends to `taken` (least significant first) the modes of `a` that one
// mode (s:d) of b selects: skip d local indices of a, then take s.
// `a_lsf` holds a's non-trivial modes, least significant first.
void compose_mode(const std::vector<Mode>& a_lsf, const Layout& a, Mode b, std::vector<Mode>& taken) {
  auto fail = [&](const char* why) {
    throw Error(Status::shape_mismatch, "cannot take " + std::to_string(b.size) + ":" + std::to_string(b.stride) +
                                            " of " + to_string(a) + ": " + why);
  };
  index_t d = b.stride;
  index_t s = b.size;
  for (Mode m : a_lsf) {
    if (s == 1) break;
    if (d > 1) {
      if (d % m.size == 0) {
        d /= m.size;
        continue;
      }
      if (m.size % d != 0) fail("the stride cuts a mode into non-dividing pieces");
      m = {m.size / d, m.stride * d};
      d = 1;
    }
    if (s % m.size == 0) {
      taken.push_back(m);
      s /= m.size;
    } else if (m.size % s == 0) {
      taken.push_back({s, m.stride});
      s = 1;
    } else {
      fail("the size cuts a mode into non-dividing pieces");
    }
  }
  if (s != 1) fail("it reaches past the layout's size");
}

}  // namespace

Layout composition(const Layout& a, const Layout& b) {
  // Coalescing first keeps (5,2):(2,1) splittable into (2,5) like (10):(1).
  const Layout ac = coalesce(a);
  const std::vector<Mode> a_lsf(ac.modes.rbegin(), ac.modes.rend());
  Layout out;
  for (const Mode& bm : b.modes) {
    std::vector<Mode> taken;
    compose_mode(a_lsf, a, bm, taken);
    out.modes.insert(out.modes.end(), taken.rbegin(), taken.rend());
  }
  return out;
}

std::vector<Layout> split(const Layout& dim, std::span<const index_t> sizes) {
  index_t product = 1;
  for (index_t s : sizes) {
    if (s < 1) throw Error(Status::invalid_argument, "split size " + std::to_string(s) + " must be at least 1");
    if (__builtin_mul_overflow(product, s, &product))
      throw Error(Status::shape_mismatch, "split sizes overflow 63 bits");
  }
  if (product != size(dim))
    throw Error(Status::shape_mismatch, "split sizes multiply to " + std::to_string(product) + ", not the dim size " +
                                            std::to_string(size(dim)));
  std::vector<Layout> parts(sizes.size());
  index_t stride = product;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    stride /= sizes[i];
    parts[i] = composition(dim, Layout{{{sizes[i], stride}}});
  }
  return parts;
}

bool disjoint(std::span<const Layout> layouts) {
  std::vector<Mode> modes;
  for (const Layout& l : layouts)
    for (const Mode& m : l.modes)
      if (m.size > 1) modes.push_back(m);
  std::sort(modes.begin(), modes.end(), [](const Mode& a, const Mode& b) { return a.stride < b.stride; });
  // Each mode must start at a multiple of where the one below it ends, not
  // merely above it: 3:1 and 2:4 share no index but are no digits of one
  // numbering, and their groups would not partition the root.
  for (std::size_t i = 1; i < modes.size(); ++i)
    if (modes[i].stride % (modes[i - 1].size * modes[i - 1].stride) != 0) return false;
  return true;
}

std::string to_string(const Layout& layout) {
  if (layout.modes.empty()) return "1:0";
  std::ostringstream os;
  if (layout.modes.size() == 1) {
    os << layout.modes[0].size << ':' << layout.modes[0].stride;
    return os.str();
  }
  os << '(';
  for (std::size_t i = 0; i < layout.modes.size(); ++i) os << (i ? "," : "") << layout.modes[i].size;
  os << "):(";
  for (std::size_t i = 0; i < layout.modes.size(); ++i) os << (i ? "," : "") << layout.modes[i].stride;
  os << ')';
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Layout& layout) { return os << to_string(layout); }

bool within_blocks(const Layout& layout, index_t block) noexcept {
  for (const Mode& m : layout.modes)
    if (m.size > 1 && (block <= 0 || block % (m.size * m.stride) != 0)) return false;
  return true;
}

}  // namespace devmesh
