// Per-rank bookkeeping: what one rank pays to know its place in a mesh.
//
//   ./bench_bookkeeping [max_log2_world_for_baseline=24]
//
// 1. devmesh's model: median ns per query (coordinate, local_rank, the group
//    of a size-8 dim, slice, flatten, unflatten) on views of 2^10 .. 2^40
//    ranks. Each is O(ndim) arithmetic (plus the group it returns), so the
//    cost should not grow with the world.
// 2. The baseline, in the same process: every group of every dim
//    materialised the way PyTorch's DeviceMesh does it on every rank (a
//    world-sized rank tensor, swapdims(-1, dim).reshape(-1, n), each row
//    turned into a rank list, the caller's found among them), for 2^10 ..
//    2^24 ranks. C++ vectors instead of tensors and Python lists, so this is
//    a lower bound on the real cost. Its time and its peak heap are reported
//    next to devmesh's "group of every dim" for the same rank (the (W/64)
//    dim's group alone has W/64 members, so that column grows too).
//
// No MPI: single process, one core. Times are this thread's CPU time (the
// machine may be shared); heap is the peak of live operator-new bytes.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <new>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <malloc.h>

#include "devmesh/view.hpp"

// Heap accounting: live and peak bytes (malloc's usable sizes) of every
// operator new in the process.
namespace {
std::atomic<std::size_t> heap_live{0}, heap_peak{0};
}  // namespace

void* operator new(std::size_t n) {
  void* p = std::malloc(n ? n : 1);
  if (!p) throw std::bad_alloc();
  const std::size_t now = heap_live += malloc_usable_size(p);
  for (std::size_t peak = heap_peak; now > peak && !heap_peak.compare_exchange_weak(peak, now);) {
  }
  return p;
}
void operator delete(void* p) noexcept {
  if (!p) return;
  heap_live -= malloc_usable_size(p);
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

namespace {

using devmesh::index_t;
using devmesh::View;

// This thread's CPU time in ns: the machine may be shared, and time spent
// waiting for a core is not the query's cost.
double cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

std::size_t reset_peak() {
  heap_peak.store(heap_live.load());
  return heap_live.load();
}

// Keeps results alive so that the compiler cannot drop the work.
volatile index_t sink = 0;

template <class T>
double median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]);
}

// Median over `batches` of the mean ns per call of op(i), i = 0..batch-1.
template <class Op>
double ns_per_op(Op&& op, int batch = 2000, int batches = 31) {
  std::vector<double> samples;
  for (int b = 0; b < batches; ++b) {
    const double t0 = cpu_ns();
    for (int i = 0; i < batch; ++i) op(i);
    samples.push_back((cpu_ns() - t0) / batch);
  }
  return median(samples);
}

std::string pow2(index_t w) {
  int k = 0;
  while ((index_t{1} << k) < w) ++k;
  return "2^" + std::to_string(k);
}

std::string shape_text(const std::vector<index_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + ")";
}

struct Case {
  std::vector<index_t> shape;
  std::vector<std::string> names;  // the last is the size-8 "tp"; the first is split by unflatten
};

void queries() {
  const index_t k10 = 1024;
  const std::vector<Case> cases = {
      {{16, 8, 8}, {"dp", "cp", "tp"}},
      {{index_t{1} << 14, 8, 8}, {"dp", "cp", "tp"}},
      {{index_t{1} << 24, 8, 8}, {"dp", "cp", "tp"}},
      {{index_t{1} << 34, 8, 8}, {"dp", "cp", "tp"}},
      {{k10, k10, index_t{1} << 17, 8}, {"pp", "dp", "cp", "tp"}},
  };
  std::printf("devmesh model: median ns per query, one rank's view (no MPI)\n");
  std::printf("%-6s %-22s %10s %10s %10s %10s %10s %10s %12s\n", "world", "shape", "coordinate", "local_rank",
              "group(tp)", "slice", "flatten", "unflatten", "heap/group");
  for (const Case& c : cases) {
    const View v = View::create({c.shape, c.names, 0, {}});
    const std::size_t tp = c.shape.size() - 1;
    const index_t w = v.root_size();
    std::mt19937_64 rng(42);
    std::vector<index_t> xs(4096);
    for (index_t& x : xs) x = static_cast<index_t>(rng() % static_cast<std::uint64_t>(w));
    auto x_of = [&](int i) { return xs[static_cast<std::size_t>(i) & 4095]; };

    const double coord = ns_per_op([&](int i) { sink = sink + v.coordinate(x_of(i))[0]; });
    const double local = ns_per_op([&](int i) { sink = sink + v.local_rank(tp, x_of(i)); });
    const double group = ns_per_op([&](int i) { sink = sink + v.group(tp, x_of(i))[7]; });
    const std::vector<std::string> pick{c.names.back(), c.names.front()};  // transposed
    const double slice = ns_per_op([&](int) { sink = sink + static_cast<index_t>(v.slice(pick).ndim()); });
    const View two = v.slice(std::vector<std::string>{c.names[0], c.names[1]});
    const double flatten =
        ns_per_op([&](int) { sink = sink + static_cast<index_t>(two.flatten("flat").ndim()); });
    const std::vector<index_t> sizes{2, c.shape[0] / 2};
    const std::vector<std::string> parts{"outer", "inner"};
    const double unflatten =
        ns_per_op([&](int) { sink = sink + static_cast<index_t>(v.unflatten(c.names[0], sizes, parts).ndim()); });
    const std::size_t before = reset_peak();
    sink = sink + v.group(tp, xs[0])[0];
    const std::size_t heap = heap_peak - before;
    std::printf("%-6s %-22s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %10zu B\n", pow2(w).c_str(),
                shape_text(c.shape).c_str(), coord, local, group, slice, flatten, unflatten, heap);
  }
}

// PyTorch DeviceMesh._init_process_groups, per rank: for each dim,
// mesh.swapdims(-1, dim).reshape(-1, mesh.size(dim)), each row .tolist(),
// keep the row holding the caller's rank.
std::vector<std::vector<std::int64_t>> materialise(const std::vector<index_t>& shape, std::int64_t me) {
  const std::size_t nd = shape.size();
  std::int64_t w = 1;
  for (index_t s : shape) w *= s;
  std::vector<std::int64_t> mesh(static_cast<std::size_t>(w));  // torch.arange(w).view(shape)
  std::iota(mesh.begin(), mesh.end(), 0);
  std::vector<std::int64_t> stride(nd, 1);
  for (std::size_t i = nd - 1; i-- > 0;) stride[i] = stride[i + 1] * shape[i + 1];

  std::vector<std::vector<std::int64_t>> mine;
  for (std::size_t dim = 0; dim < nd; ++dim) {
    // swapdims(-1, dim) then reshape: a contiguous copy in the swapped order.
    std::vector<index_t> sw = shape;
    std::swap(sw[dim], sw[nd - 1]);
    std::vector<std::int64_t> sst = stride;
    std::swap(sst[dim], sst[nd - 1]);
    std::vector<std::int64_t> swapped(static_cast<std::size_t>(w));
    std::vector<index_t> idx(nd, 0);
    for (std::int64_t out = 0; out < w; ++out) {
      std::int64_t in = 0;
      for (std::size_t i = 0; i < nd; ++i) in += idx[i] * sst[i];
      swapped[static_cast<std::size_t>(out)] = mesh[static_cast<std::size_t>(in)];
      for (std::size_t i = nd; i-- > 0 && ++idx[i] == sw[i];) idx[i] = 0;
    }
    // reshape(-1, n) and .tolist() of every row.
    const std::int64_t n = shape[dim];
    std::vector<std::vector<std::int64_t>> rows;
    rows.reserve(static_cast<std::size_t>(w / n));
    for (std::int64_t r = 0; r < w / n; ++r)
      rows.emplace_back(swapped.begin() + r * n, swapped.begin() + (r + 1) * n);
    for (const auto& row : rows)
      if (std::find(row.begin(), row.end(), me) != row.end()) mine.push_back(row);
  }
  return mine;
}

void baseline(int max_log2) {
  std::printf("\nevery group of every dim, per rank: PyTorch-style materialisation vs devmesh group()\n");
  std::printf("%-6s %-16s %14s %14s %14s %14s\n", "world", "shape", "baseline ms", "baseline heap",
              "devmesh ns", "devmesh heap");
  for (int k = 10; k <= max_log2; k += 2) {
    const index_t w = index_t{1} << k;
    const std::vector<index_t> shape{w / 64, 8, 8};
    const std::int64_t me = w / 3;

    // Baseline: repeat while cheap, report the median run and its peak heap.
    std::vector<double> ms;
    std::size_t heap = 0;
    std::size_t groups_found = 0;
    const double start = cpu_ns();
    do {
      const std::size_t before = reset_peak();
      const double t0 = cpu_ns();
      const auto mine = materialise(shape, me);
      ms.push_back((cpu_ns() - t0) / 1e6);
      groups_found = mine.size();
      heap = std::max(heap, heap_peak - before);
    } while (ms.size() < 5 && cpu_ns() - start < 1e9);

    // devmesh: the same rank's group along every dim.
    const View v = View::create({shape, {"dp", "cp", "tp"}, 0, {}});
    const double ns = ns_per_op(
        [&](int) {
          for (std::size_t d = 0; d < 3; ++d) sink = sink + v.group(d, me).back();
        },
        200, 15);
    const std::size_t before = reset_peak();
    for (std::size_t d = 0; d < 3; ++d) sink = sink + v.group(d, me).back();
    const std::size_t dheap = heap_peak - before;
    if (groups_found != 3) std::printf("baseline found %zu groups, expected 3\n", groups_found);
    std::printf("%-6s %-16s %14.3f %12.1f MB %14.0f %11zu B\n", pow2(w).c_str(), shape_text(shape).c_str(),
                median(ms), static_cast<double>(heap) / 1e6, ns, dheap);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int max_log2 = argc > 1 ? std::atoi(argv[1]) : 24;
  queries();
  baseline(std::clamp(max_log2, 10, 30));
  return 0;
}
