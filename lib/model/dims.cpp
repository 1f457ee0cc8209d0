// MPI_Dims_create's factorisation, without MPI.

#include "devmesh/view.hpp"

namespace devmesh {
namespace {

// Divisors of n in increasing order, by trial division up to sqrt(n).
std::vector<index_t> divisors(index_t n) {
  std::vector<index_t> low, high;
  for (index_t d = 1; d <= n / d; ++d) {
    if (n % d != 0) continue;
    low.push_back(d);
    if (d != n / d) high.push_back(n / d);
  }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

// The factorisation MPICH's MPI_Dims_create picks: among all ways to write
// n as k factors in non-increasing order, the smallest spread (largest
// minus smallest factor), ties going to the larger smallest factor, then to
// the lexicographically smallest, under every MPI (docs/SEMANTICS.md,
// "1. Root mesh"). `divs` holds the divisors of n, increasing.
struct Search {
  const std::vector<index_t>& divs;
  std::vector<index_t> cur, best;
  bool better(const std::vector<index_t>& a, const std::vector<index_t>& b) const {
    const index_t sa = a.front() - a.back(), sb = b.front() - b.back();
    if (sa != sb) return sa < sb;
    if (a.back() != b.back()) return a.back() > b.back();
    return a < b;
  }
  // Appends factors of n, each at most cap, k of them.
  void run(index_t n, std::size_t k, index_t cap) {
    if (k == 1) {
      if (n > cap) return;
      cur.push_back(n);
      if (best.empty() || better(cur, best)) best = cur;
      cur.pop_back();
      return;
    }
    for (auto it = divs.rbegin(); it != divs.rend(); ++it) {
      const index_t f = *it;
      if (f > cap || f > n || n % f != 0) continue;
      // The remaining k-1 factors are at most f: f^k must reach n.
      index_t p = 1;
      bool reaches = false;
      for (std::size_t i = 0; i < k && !reaches; ++i) reaches = __builtin_mul_overflow(p, f, &p) || p >= n;
      if (!reaches) break;  // smaller f cannot reach n either
      cur.push_back(f);
      run(n / f, k - 1, f);
      cur.pop_back();
    }
  }
};

std::vector<index_t> balanced(index_t n, std::size_t k, const std::vector<index_t>& divs) {
  Search s{divs, {}, {}};
  s.run(n, k, n);
  return s.best;
}

}  // namespace

std::vector<index_t> dims_create(index_t nnodes, std::vector<index_t> dims) {
  if (nnodes < 1) throw Error(Status::invalid_argument, "cannot choose dims for " + std::to_string(nnodes) + " ranks");
  index_t fixed = 1;
  std::size_t free = 0;
  for (index_t d : dims) {
    if (d < 0) throw Error(Status::invalid_argument, "dim size " + std::to_string(d) + " is negative");
    if (d == 0) {
      ++free;
    } else if (__builtin_mul_overflow(fixed, d, &fixed)) {
      throw Error(Status::shape_mismatch, "mesh size overflows 63 bits");
    }
  }
  if (nnodes % fixed != 0)
    throw Error(Status::shape_mismatch, "the given dim sizes multiply to " + std::to_string(fixed) +
                                            ", which does not divide " + std::to_string(nnodes));
  if (free == 0) return dims;
  std::vector<index_t> chosen = balanced(nnodes / fixed, free, divisors(nnodes / fixed));
  std::size_t next = 0;
  for (index_t& d : dims)
    if (d == 0) d = chosen[next++];
  return dims;
}

}  // namespace devmesh
