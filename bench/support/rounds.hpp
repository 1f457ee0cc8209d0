// Paired rounds of several methods, for the benchmarks that compare them
// side by side: every round times one batch of each method, in an order
// that rotates every round, so that drift in the machine's load falls on
// every method alike; the ratio of two methods' batches of one round is
// one paired sample.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "bench.hpp"

namespace bench {

struct Method {
  std::string name;
  std::function<void()> call;
};

struct Rounds {
  int iters = 1;                           // calls per batch
  std::vector<std::vector<double>> times;  // per method, the slowest rank's seconds per call, one per round
};

// Warms every method up, picks the calls per batch so that a batch of
// method `calibrate_on` lasts about batch_seconds (the best of three tries,
// the same count on every rank), then runs `batches` rounds.
inline Rounds run_rounds(const std::vector<Method>& methods, int batches, double batch_seconds, MPI_Comm sync,
                         std::size_t calibrate_on = 0, int max_iters = 1 << 20) {
  Rounds r;
  auto timed = [&](const Method& m) {
    MPI_Barrier(sync);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < r.iters; ++i) m.call();
    return slowest((MPI_Wtime() - t0) / r.iters);
  };
  for (const Method& m : methods) timed(m);
  auto per_call = [&] {
    double best = 1e30;
    for (int k = 0; k < 3; ++k) best = std::min(best, timed(methods[calibrate_on]));
    return best;
  };
  while (r.iters < max_iters && per_call() * r.iters < batch_seconds) r.iters *= 2;
  r.times.assign(methods.size(), {});
  const std::size_t n = methods.size();
  for (int b = 0; b < batches; ++b)
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t m = (static_cast<std::size_t>(b) + k) % n;
      r.times[m].push_back(timed(methods[m]));
    }
  return r;
}

// Round by round, a's time over b's (as "seconds" x 1e-6, so that
// print_row's microseconds are the ratios themselves).
inline std::vector<double> paired(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) out.push_back(a[i] / b[i] * 1e-6);
  return out;
}

// Round by round, a's time minus b's, in seconds.
inline std::vector<double> difference(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) out.push_back(a[i] - b[i]);
  return out;
}

}  // namespace bench
