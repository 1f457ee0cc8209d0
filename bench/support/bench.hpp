// Shared by the MPI benchmarks: timing samples, their summary, and the one
// output format bench/report.py reads.
//
// Every figure is the time of the slowest rank: each rank times itself and
// the samples are MPI_MAX-reduced over the world, so a method is charged
// for the rank that finished last (what a training job waits for).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace bench {

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// The slowest rank's value of a per-rank time.
inline double slowest(double t) {
  double out = 0;
  MPI_Allreduce(&t, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

// Linear-interpolated quantile q in [0,1] of a sorted sample.
inline double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

struct Summary {
  double median, q1, q3, min, max;
  std::size_t n;
};

inline Summary summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {quantile(v, 0.5), quantile(v, 0.25), quantile(v, 0.75),
          v.empty() ? 0 : v.front(), v.empty() ? 0 : v.back(), v.size()};
}

// One tab-separated record, printed by rank 0:
//   <kind> <key=value>... median q1 q3 min max n   (times in microseconds)
inline void print_row(const std::string& head, const std::vector<double>& seconds) {
  if (world_rank() != 0) return;
  std::vector<double> us;
  for (double s : seconds) us.push_back(s * 1e6);
  const Summary s = summarize(us);
  std::printf("%s\tmedian=%.3f\tq1=%.3f\tq3=%.3f\tmin=%.3f\tmax=%.3f\tn=%zu\n", head.c_str(), s.median,
              s.q1, s.q3, s.min, s.max, s.n);
  std::fflush(stdout);
}

}  // namespace bench
