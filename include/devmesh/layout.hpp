// Layout algebra over a mesh's root index space, in the style of CuTe.
//
// A Mode (size, stride) walks `size` root indices `stride` apart. A Layout
// is an ordered list of modes, most significant first, and maps a local
// index k (mixed radix over the mode sizes) to a root offset:
//
//     (2,4):(1,2)   k = 0..7  ->  0 2 4 6 1 3 5 7
//
// Everything here is pure integer arithmetic on value types: no MPI, no
// allocation proportional to the root size. Root indices are 64-bit.
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20
#if DEVMESH_CXX20              // below C++20, export.hpp's #error is the only message

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

namespace devmesh {

using index_t = std::int64_t;

struct Mode {
  index_t size = 1;
  index_t stride = 1;
  friend bool operator==(const Mode&, const Mode&) = default;
};

struct Layout {
  std::vector<Mode> modes;  // most significant first
  friend bool operator==(const Layout&, const Layout&) = default;
};

// Product of the mode sizes (1 for no modes).
DEVMESH_API index_t size(const Layout& layout) noexcept;

// Row-major layout of a shape: the last dim varies fastest.
//   row_major((2,3,4)) = (2,3,4):(12,4,1)
// Throws Error(invalid_argument) for a size < 1, (shape_mismatch) when the
// product overflows 63 bits.
DEVMESH_API Layout row_major(std::span<const index_t> shape);

// Coordinate of root index x along a mode: (x / stride) % size.
//   mode 4:2, x = 13  ->  (13 / 2) % 4 = 2
constexpr index_t coordinate(const Mode& m, index_t x) noexcept { return (x / m.stride) % m.size; }

// Local index of root index x: the mixed-radix number of its coordinates
// along the layout's modes, first mode most significant.
//   (2,4):(1,2), x = 5  ->  coords (1, 2)  ->  1*4 + 2 = 6
DEVMESH_API index_t local_index(const Layout& layout, index_t x) noexcept;

// Root offset of local index k (the layout as a function, CuTe's layout(k)).
//   (2,4):(1,2), k = 6  ->  digits (1, 2)  ->  1*1 + 2*2 = 5
DEVMESH_API index_t offset(const Layout& layout, index_t k) noexcept;

// Smallest root index of x's group: x minus its own offset in the layout.
//   (2):(4), x = 6  ->  6 - 1*4 = 2        group of 6 is {2, 6}
DEVMESH_API index_t group_base(const Layout& layout, index_t x) noexcept;

// Drops size-1 modes and merges neighbours (s0:t0)(s1:t1) with t0 == s1*t1
// into (s0*s1 : t1). The result is the same function k -> offset.
//   (2,1,3,4):(12,7,4,1)  ->  (24):(1)        (2,2):(1,2) stays
DEVMESH_API Layout coalesce(const Layout& layout);

// Modes of [0, total) not covered by `layout`, most significant first, so
// that enumerating the complement in order yields the group bases in
// increasing order.
//   complement((2):(2), 8) = (2,2):(4,1)       complement((2,2):(1,4), 8) = (2):(2)
// Pre: modes are disjoint and each stride divides the next larger one's
// reach. Throws Error(overlap) if two modes cover the same digits and
// Error(shape_mismatch) if a mode does not fit the digit structure of total.
DEVMESH_API Layout complement(const Layout& layout, index_t total);

// a o b: the layout k -> offset(a, offset(b, k)) as modes over a's codomain.
// b's strides index into a's local index space.
//   a = (2,4):(4,1) (a 2x4 row-major block), b = (4,2):(1,4) (its transpose)
//   a o b = (4,2):(1,4)
// Throws Error(shape_mismatch) when a mode of b cuts a mode of a into pieces
// that do not divide it, or reaches past size(a).
DEVMESH_API Layout composition(const Layout& a, const Layout& b);

// Splits a dim's layout row-major into sizes.size() dims, first most
// significant: part i = composition(dim, (sizes[i]) : (prod sizes[i+1..])).
//   split((8):(1), (2,4))           = (2):(4), (4):(1)
//   split((2,4):(4,1), (4,2))       = (4):(2), (2):(1)    (coalesced first)
//   split((2,2):(4,1), (4))         = (2,2):(4,1)       (non-contiguous kept)
// Throws Error(shape_mismatch) when the product differs from size(dim) or a
// mode would be cut into non-dividing pieces ((4,3):(1,4) into (6,2) fails).
DEVMESH_API std::vector<Layout> split(const Layout& dim, std::span<const index_t> sizes);

// True when no two layouts (nor two modes of one layout) cover the same root
// digits: sorted by stride, each mode's stride is a multiple of the reach
// (size * stride) of the one below it. Size-1 modes cover nothing.
//   {(2):(4), (2):(1)} -> true      {(4):(2), (2):(4)} -> false
//   {(3):(1), (2):(4)} -> false     (no numbering has both as digits)
DEVMESH_API bool disjoint(std::span<const Layout> layouts);

// Whether every group of `layout` lies within one block of `block`
// consecutive root indices (hosts of `block` ranks each, root indices
// host-major). A mode (s:t) moves an index by multiples of t inside its
// block of s*t, which stays in one block of `block` exactly when s*t divides
// it; when it does not, some block of s*t has a boundary strictly inside it
// and the group through the index just below that boundary crosses it. So
// the test is exact, O(modes).
//   block 4: (2):(1) -> true, (2):(2) -> true, (2):(4) -> false, (2,2):(4,1) -> false
DEVMESH_API bool within_blocks(const Layout& layout, index_t block) noexcept;

// "(2,2):(4,1)"; a single mode prints as "2:4"; no modes as "1:0".
DEVMESH_API std::string to_string(const Layout& layout);
DEVMESH_API std::ostream& operator<<(std::ostream& os, const Layout& layout);

}  // namespace devmesh

#endif  // DEVMESH_CXX20
