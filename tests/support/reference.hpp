// The brute-force reference of the tests and fuzzers: groups, coordinates,
// local ranks and the layout algebra's results, computed straight from
// SEMANTICS.md section 2 (the definitions, by trying every root index) and
// never by calling the devmesh function they check (lib/model). Only the
// plain value types of devmesh/layout.hpp (Mode, Layout, index_t) are used.
//
// Two views of a dim, one per kind of check:
//   modes  (size, stride) pairs, most significant first: coordinate,
//          local_index, group_base and group follow the definitions;
//   tables the dim as a function, element k the root offset of local index
//          k (enumerate): groups are the translates of the table that tile
//          [0, W), found greedily (partition); splits and sub-meshes are
//          decided on tables alone.
// Sizes are small (a few thousand root indices), so quadratic is fine.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "devmesh/layout.hpp"

namespace ref {

using devmesh::index_t;
using devmesh::Layout;
using devmesh::Mode;
using Modes = std::vector<Mode>;
using Table = std::vector<index_t>;

inline std::string str(const Table& t) {
  std::string out = "[";
  for (std::size_t i = 0; i < t.size(); ++i) out += (i ? "," : "") + std::to_string(t[i]);
  return out + "]";
}

// ---- SEMANTICS.md section 2 on modes -------------------------------------------

// Product of the mode sizes (1 for no modes).
inline index_t size(const Modes& m) {
  index_t n = 1;
  for (const Mode& x : m) n *= x.size;
  return n;
}

// The coordinate of root index x along mode (s, t): (x / t) % s.
inline index_t coordinate(const Mode& m, index_t x) { return (x / m.stride) % m.size; }

// A dim's local index for x: the mixed-radix number of its modes'
// coordinates, first mode most significant.
inline index_t local_index(const Modes& m, index_t x) {
  index_t k = 0;
  for (const Mode& mode : m) k = k * mode.size + ref::coordinate(mode, x);
  return k;
}

// x with its digits along the modes cleared: the base of x's group, equal
// for every member of one group.
inline index_t group_base(const Modes& m, index_t x) {
  index_t base = x;
  for (const Mode& mode : m) base -= ref::coordinate(mode, x) * mode.stride;
  return base;
}

// The group of x in a root of w indices, found by trying every root index:
// every y with x's base, placed at its local index (its local rank).
inline Table group(const Modes& m, index_t x, index_t w) {
  Table g(static_cast<std::size_t>(ref::size(m)), -1);
  const index_t base = ref::group_base(m, x);
  for (index_t y = 0; y < w; ++y)
    if (ref::group_base(m, y) == base) g[static_cast<std::size_t>(ref::local_index(m, y))] = y;
  return g;
}

// The dim as a function, by an odometer over its modes (first mode most
// significant): element k is the root offset of local index k.
inline Table enumerate(const Modes& m) {
  std::vector<index_t> digits(m.size(), 0);
  Table out;
  for (;;) {
    index_t off = 0;
    for (std::size_t j = 0; j < digits.size(); ++j) off += digits[j] * m[j].stride;
    out.push_back(off);
    std::size_t j = digits.size();
    while (j > 0 && ++digits[j - 1] == m[j - 1].size) digits[--j] = 0;
    if (j == 0) return out;
  }
}
inline Table enumerate(const Layout& l) { return ref::enumerate(l.modes); }

// Same function k -> offset: what decides whether two dims have the same
// groups and share a communicator.
inline bool same_function(const Modes& a, const Modes& b) { return ref::enumerate(a) == ref::enumerate(b); }

// ---- tables ---------------------------------------------------------------------

// Tables side by side as one function, first most significant:
// k = (k_0, ..., k_{m-1}) mixed radix -> t_0[k_0] + ... + t_{m-1}[k_{m-1}].
// (Concatenating layouts' modes is exactly this.)
inline Table concat(const std::vector<Table>& tables) {
  Table out{0};
  for (const Table& t : tables) {
    Table next;
    next.reserve(out.size() * t.size());
    for (index_t hi : out)
      for (index_t lo : t) next.push_back(hi + lo);
    out = std::move(next);
  }
  return out;
}

inline bool injective(Table t) {
  std::sort(t.begin(), t.end());
  return std::adjacent_find(t.begin(), t.end()) == t.end();
}

// Dims overlap when their modes together map two local indices to one root
// offset (SEMANTICS.md: no two modes of a view cover the same root digits).
inline bool overlap(const std::vector<Modes>& dims) {
  Modes all;
  for (const Modes& d : dims) all.insert(all.end(), d.begin(), d.end());
  return !ref::injective(ref::enumerate(all));
}

// The translates b + image(t) that cover [0, total) exactly once, bases
// increasing, or nullopt when none do. t[0] == 0 is the image's smallest
// element, so the smallest index not yet covered must itself be a base:
// the greedy choice is forced and the tiling, when one exists, unique.
inline std::optional<Table> tile(const Table& t, index_t total) {
  if (t.empty() || t[0] != 0 || total < 1) return std::nullopt;
  for (index_t v : t)
    if (v < 0 || v >= total) return std::nullopt;
  std::vector<char> covered(static_cast<std::size_t>(total), 0);
  Table bases;
  for (index_t u = 0; u < total; ++u) {
    if (covered[static_cast<std::size_t>(u)]) continue;
    for (index_t v : t) {
      const index_t x = u + v;
      if (x >= total || covered[static_cast<std::size_t>(x)]) return std::nullopt;
      covered[static_cast<std::size_t>(x)] = 1;
    }
    bases.push_back(u);
  }
  return bases;
}

// A dim's groups over a root of w indices from its table: the tiling's
// translates, each in local-rank order, numbered by increasing base.
struct Partition {
  Table local;                 // root index -> local rank
  Table group_of;              // root index -> group number
  std::vector<Table> members;  // root indices, by group number
};

inline std::optional<Partition> partition(const Table& t, index_t w) {
  const std::optional<Table> bases = ref::tile(t, w);
  if (!bases) return std::nullopt;
  Partition p{Table(static_cast<std::size_t>(w), -1), Table(static_cast<std::size_t>(w), -1), {}};
  for (index_t b : *bases) {
    Table m;
    for (std::size_t k = 0; k < t.size(); ++k) {
      const index_t y = b + t[k];
      p.local[static_cast<std::size_t>(y)] = static_cast<index_t>(k);
      p.group_of[static_cast<std::size_t>(y)] = static_cast<index_t>(p.members.size());
      m.push_back(y);
    }
    p.members.push_back(std::move(m));
  }
  return p;
}

// Whether some layout (modes with any strides) computes t. The least
// significant mode (q : s) makes t[k] = (k % q) * s + t[(k / q) * q]; try
// every q that divides the size, then the rest recursively.
inline bool representable(const Table& t) {
  const index_t n = static_cast<index_t>(t.size());
  if (n == 0) return false;
  if (n == 1) return t[0] == 0;
  for (index_t q = 2; q <= n; ++q) {
    if (n % q != 0) continue;
    const index_t s = t[1];
    bool fits = true;
    for (index_t k = 0; k < n && fits; ++k)
      fits = t[static_cast<std::size_t>(k)] == (k % q) * s + t[static_cast<std::size_t>((k / q) * q)];
    if (!fits) continue;
    Table rest;
    for (index_t j = 0; j < n / q; ++j) rest.push_back(t[static_cast<std::size_t>(j * q)]);
    if (ref::representable(rest)) return true;
  }
  return false;
}

// Splitting the function t row-major into parts of the given sizes (their
// product is t.size()): part i is k -> t[k * P_i], P_i the product of the
// sizes after i.
inline std::vector<Table> split_parts(const Table& t, const std::vector<index_t>& sizes) {
  std::vector<Table> parts(sizes.size());
  index_t stride = static_cast<index_t>(t.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    stride /= sizes[i];
    for (index_t k = 0; k < sizes[i]; ++k) parts[i].push_back(t[static_cast<std::size_t>(k * stride)]);
  }
  return parts;
}

// The parts add up to t: t[sum k_i P_i] == sum t[k_i P_i].
inline bool adds_up(const Table& t, const std::vector<index_t>& sizes) {
  return ref::concat(ref::split_parts(t, sizes)) == t;
}

// A split is possible when the parts add up to t and every part is itself a
// layout.
inline bool splittable(const Table& t, const std::vector<index_t>& sizes) {
  const std::vector<Table> parts = ref::split_parts(t, sizes);
  if (ref::concat(parts) != t) return false;
  return std::all_of(parts.begin(), parts.end(), [](const Table& p) { return ref::representable(p); });
}

// ---- the same split on modes ---------------------------------------------------

// Size-1 modes dropped and neighbours that continue each other merged: the
// same function with the fewest modes.
inline Modes coalesce(const Modes& m) {
  Modes out;
  for (const Mode& x : m)
    if (x.size > 1) out.push_back(x);
  for (bool merged = true; merged;) {
    merged = false;
    for (std::size_t i = 0; i + 1 < out.size(); ++i)
      if (out[i].stride == out[i + 1].size * out[i + 1].stride) {
        out[i] = {out[i].size * out[i + 1].size, out[i + 1].stride};
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        merged = true;
        break;
      }
  }
  return out;
}

// Row-major split of a dim into sizes (first new dim most significant): the
// last new dim takes the least significant digits. nullopt when a size
// would cut a mode into non-dividing pieces.
inline std::optional<std::vector<Modes>> split(const Modes& dim, const std::vector<index_t>& sizes) {
  Modes m = ref::coalesce(dim);
  Modes lsf(m.rbegin(), m.rend());
  std::size_t pos = 0;
  std::vector<Modes> parts(sizes.size());
  for (std::size_t i = sizes.size(); i-- > 0;) {
    index_t need = sizes[i];
    Modes taken;
    while (need > 1) {
      if (pos == lsf.size()) return std::nullopt;
      Mode& cur = lsf[pos];
      if (cur.size <= need) {
        if (need % cur.size != 0) return std::nullopt;
        taken.push_back(cur);
        need /= cur.size;
        ++pos;
      } else {
        if (cur.size % need != 0) return std::nullopt;
        taken.push_back({need, cur.stride});
        cur = {cur.size / need, cur.stride * need};
        need = 1;
      }
    }
    parts[i] = Modes(taken.rbegin(), taken.rend());
  }
  return parts;
}

}  // namespace ref
