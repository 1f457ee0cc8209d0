// Brute-force references shared by the fuzz targets.
//
// Everything here works on a layout *as a function* (a table: element k is
// the root offset of local index k) and on sets of root indices, never by
// calling the devmesh function it is used to check. Sizes are small (the
// targets keep root sizes to a few thousand), so quadratic is fine.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "devmesh/layout.hpp"
#include "devmesh/status.hpp"

namespace fuzzref {

using devmesh::index_t;
using devmesh::Layout;
using Table = std::vector<index_t>;

// A disagreement with the reference: print it and abort, which libFuzzer
// records as a crash (and saves the input).
[[noreturn]] inline void mismatch(const std::string& what) {
  std::fprintf(stderr, "\n*** reference mismatch: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

#define FUZZ_EXPECT(cond, ...)                                                 \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::ostringstream fuzz_expect_os;                                       \
      fuzz_expect_os << #cond << " [" << __FILE__ << ":" << __LINE__ << "] "   \
                     << __VA_ARGS__;                                           \
      ::fuzzref::mismatch(fuzz_expect_os.str());                               \
    }                                                                          \
  } while (0)

// The five statuses the pure model may report (the others belong to MPI,
// backends and the C layer).
inline bool model_status(devmesh::Status s) {
  using devmesh::Status;
  return s == Status::invalid_argument || s == Status::shape_mismatch || s == Status::unknown_dim ||
         s == Status::duplicate_name || s == Status::overlap;
}

inline std::string str(const Table& t) {
  std::string out = "[";
  for (std::size_t i = 0; i < t.size(); ++i) out += (i ? "," : "") + std::to_string(t[i]);
  return out + "]";
}

// The layout as a function, by an odometer over its modes (first mode most
// significant): offset(k) = sum of digit_j * stride_j.
inline Table enumerate(const Layout& l) {
  std::vector<index_t> digits(l.modes.size(), 0);
  Table out;
  for (;;) {
    index_t off = 0;
    for (std::size_t j = 0; j < digits.size(); ++j) off += digits[j] * l.modes[j].stride;
    out.push_back(off);
    std::size_t j = digits.size();
    while (j > 0 && ++digits[j - 1] == l.modes[j - 1].size) digits[--j] = 0;
    if (j == 0) return out;
  }
}

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
    if (representable(rest)) return true;
  }
  return false;
}

// Splitting the function t row-major into parts of the given sizes (their
// product is t.size()): part i is k -> t[k * P_i], P_i the product of the
// sizes after i. A split is possible when the parts add up to t
// (t[sum k_i P_i] == sum t[k_i P_i]) and every part is itself a layout.
inline std::vector<Table> split_parts(const Table& t, const std::vector<index_t>& sizes) {
  std::vector<Table> parts(sizes.size());
  index_t stride = static_cast<index_t>(t.size());
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    stride /= sizes[i];
    for (index_t k = 0; k < sizes[i]; ++k) parts[i].push_back(t[static_cast<std::size_t>(k * stride)]);
  }
  return parts;
}

inline bool splittable(const Table& t, const std::vector<index_t>& sizes) {
  const std::vector<Table> parts = split_parts(t, sizes);
  if (concat(parts) != t) return false;
  return std::all_of(parts.begin(), parts.end(), [](const Table& p) { return representable(p); });
}

}  // namespace fuzzref
