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

// True when f^k >= n.
bool power_reaches(index_t f, std::size_t k, index_t n) {
  index_t p = 1;
  for (std::size_t i = 0; i < k; ++i)
    if (__builtin_mul_overflow(p, f, &p) || p >= n) return true;
  return p >= n;
}

// The most balanced factorisation of n into k factors, largest first, whose
// largest factor is at most `cap`; empty when none exists. Balanced means
// the largest factor is as small as possible, then the next, and so on.
// `divs` holds the divisors of a multiple of n, increasing.
std::vector<index_t> balanced(index_t n, std::size_t k, index_t cap,
                              const std::vector<index_t>& divs) {
  if (k == 1) return n <= cap ? std::vector<index_t>{n} : std::vector<index_t>{};
  for (index_t f : divs) {
    if (f > cap || f > n) break;
    if (n % f != 0 || !power_reaches(f, k, n)) continue;
    std::vector<index_t> rest = balanced(n / f, k - 1, f, divs);
    if (rest.empty()) continue;
    rest.insert(rest.begin(), f);
    return rest;
  }
  return {};
}

}  // namespace

std::vector<index_t> dims_create(index_t nnodes, std::vector<index_t> dims) {
  if (nnodes < 1)
    throw Error(Status::invalid_argument,
                "cannot choose dims for " + std::to_string(nnodes) + " ranks");
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
  std::vector<index_t> chosen = balanced(nnodes / fixed, free, nnodes / fixed, divisors(nnodes / fixed));
  std::size_t next = 0;
  for (index_t& d : dims)
    if (d == 0) d = chosen[next++];
  return dims;
}

}  // namespace devmesh
