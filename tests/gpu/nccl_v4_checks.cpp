// Version 4 of the plugin interface on the NCCL backend, on GPUs (part of
// test_nccl_gpu: `test_nccl_gpu --v4`, at 1 rank, and at 2 ranks where the
// machine has two GPUs). Every collective is checked element by element,
// gaps included, against a host-side reference computed on every rank:
//   alltoallv, allgatherv, reduce_scatterv, gather, gatherv, scatter,
//   scatterv, reduce: uneven counts with zeros, segments in reverse order
//   with gaps (which must stay untouched), every root, in place, each
//   blocking (returns once enqueued: the stream is synchronised before
//   reading) and started (the Request's wait, or test polled, and nothing
//   else: the buffers are read at once on a stream the reads do not wait
//   for);
//   the started forms of version 1's collectives (alltoall in place too)
//   against the same references; four operations ended by one wait_all;
//   batch as a ring exchange (to the next rank, from the previous);
//   alltoallv's cost through devmesh against grouped ncclSend/ncclRecv on
//   the same communicator, buffers and stream.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

using Clock = std::chrono::steady_clock;
using Counts = std::vector<std::size_t>;
int v4_failures = 0;
constexpr float gap = -7.0f;  // what the reference expects wherever no block lands

// An exact float naming (source rank, destination rank, element).
float code(int from, int to, std::size_t k) { return static_cast<float>(from * 1000000 + to * 10000 + k); }

// n floats on the device holding h (the copy finished before any stream
// uses them).
struct Dev {
  explicit Dev(const std::vector<float>& h) : n(h.size()) {
    cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(float));
    cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaDeviceSynchronize();
  }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<float> host() const {
    std::vector<float> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost);
    return h;
  }
  std::size_t n;
  float* p = nullptr;
};

// How a collective is made and ended.
struct Form {
  const char* name;
  bool started;  // the i-form, ended by its Request
  bool poll;     // ended by test() polled, else wait()
  bool in_place;
};
constexpr Form forms[] = {{"blocking", false, false, false},
                          {"started+wait", true, false, false},
                          {"started+test", true, true, false},
                          {"blocking in place", false, false, true},
                          {"started in place", true, false, true}};

// Ends what `form` started: the Request, or the stream for a blocking form.
void finish(const Form& form, Request r, cudaStream_t s) {
  if (!form.started) {
    cudaStreamSynchronize(s);
    return;
  }
  if (form.poll) {
    const auto t0 = Clock::now();
    while (!r.test() && Clock::now() - t0 < std::chrono::seconds(30)) {
    }
  } else {
    r.wait();
  }
}

bool expect(const std::string& what, const std::vector<float>& got, const std::vector<float>& want,
            std::size_t upto = ~std::size_t{0}) {
  const std::size_t n = std::min({got.size(), want.size(), upto});
  for (std::size_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      std::printf("FAIL v4 %s: element %zu is %.1f, expected %.1f\n", what.c_str(), i, got[i], want[i]);
      ++v4_failures;
      return false;
    }
  return true;
}

// Displacements for counts in reverse rank order, 2 elements apart, from 1;
// *total is the buffer's length (one more gap at the end).
Counts reversed_with_gaps(const Counts& c, std::size_t* total) {
  Counts d(c.size());
  std::size_t at = 1;
  for (std::size_t r = c.size(); r-- > 0;) {
    d[r] = at;
    at += c[r] + 2;
  }
  *total = at + 1;
  return d;
}

// Uneven counts with zeros: member i to member j in pattern p (large: 3000x).
std::size_t pair_count(int i, int j, int p) {
  const std::size_t c = static_cast<std::size_t>(i * 3 + j * 5 + p) % 4;
  return p == 3 ? c * 3000 : c;
}
std::size_t own_count(int i, int p) { return pair_count(i, i + 1, p); }
// Symmetric counts (member i to j == j to i), which an in-place alltoallv needs.
std::size_t sym_count(int i, int j, int p) { return pair_count(i + j, 0, p); }

struct Ctx {
  Communicator& c;
  cudaStream_t s;
  int me, n;
};

void check_alltoallv(const Ctx& x, int p, const Form& f) {
  Counts sc(x.n), rc(x.n);
  for (int r = 0; r < x.n; ++r) {
    sc[r] = f.in_place ? sym_count(x.me, r, p) : pair_count(x.me, r, p);
    rc[r] = f.in_place ? sym_count(r, x.me, p) : pair_count(r, x.me, p);
  }
  std::size_t slen = 0, rlen = 0;
  const Counts sd = reversed_with_gaps(sc, &slen);
  Counts rd = reversed_with_gaps(rc, &rlen);
  for (auto& d : rd) d += 3;  // the receive side laid out differently
  rlen += 3;
  std::vector<float> hs(slen, -3.0f), hr(rlen, gap), want(rlen, gap);
  for (int r = 0; r < x.n; ++r) {
    for (std::size_t k = 0; k < sc[r]; ++k) hs[sd[r] + k] = code(x.me, r, k);
    for (std::size_t k = 0; k < rc[r]; ++k) {
      want[rd[r] + k] = code(r, x.me, k);
      if (f.in_place) hr[rd[r] + k] = code(x.me, r, k);
    }
  }
  Dev send(hs), recv(hr);
  const void* from = f.in_place ? recv.p : send.p;
  const Counts none;
  const Counts& scs = f.in_place ? none : sc;
  const Counts& sds = f.in_place ? none : sd;
  Request q;
  if (f.started)
    q = x.c.ialltoallv(from, scs, sds, recv.p, rc, rd, DataType::float32, x.s);
  else
    x.c.alltoallv(from, scs, sds, recv.p, rc, rd, DataType::float32, x.s);
  finish(f, std::move(q), x.s);
  expect("alltoallv pattern " + std::to_string(p) + " " + f.name, recv.host(), want);
}

void check_allgatherv(const Ctx& x, int p, const Form& f) {
  Counts rc(x.n);
  for (int r = 0; r < x.n; ++r) rc[r] = own_count(r, p);
  std::size_t rlen = 0;
  const Counts rd = reversed_with_gaps(rc, &rlen);
  std::vector<float> hs(rc[x.me] + 1, -3.0f), hr(rlen, gap), want(rlen, gap);
  for (std::size_t k = 0; k < rc[x.me]; ++k) hs[k] = code(x.me, 0, k);
  for (int r = 0; r < x.n; ++r)
    for (std::size_t k = 0; k < rc[r]; ++k) want[rd[r] + k] = code(r, 0, k);
  if (f.in_place)
    for (std::size_t k = 0; k < rc[x.me]; ++k) hr[rd[x.me] + k] = code(x.me, 0, k);
  Dev send(hs), recv(hr);
  const float* from = f.in_place ? recv.p + rd[x.me] : send.p;
  Request q;
  if (f.started)
    q = x.c.iallgatherv(from, rc[x.me], recv.p, rc, rd, DataType::float32, x.s);
  else
    x.c.allgatherv(from, rc[x.me], recv.p, rc, rd, DataType::float32, x.s);
  finish(f, std::move(q), x.s);
  expect("allgatherv pattern " + std::to_string(p) + " " + f.name, recv.host(), want);
}

// Member q's input element j, and the sum over members of element j.
float rs_in(int q, std::size_t j) { return static_cast<float>((q + 1) * static_cast<int>(j % 97 + 1)); }
float rs_sum(int n, std::size_t j) {
  float s = 0;
  for (int q = 0; q < n; ++q) s += rs_in(q, j);
  return s;
}

void check_reduce_scatterv(const Ctx& x, int p, const Form& f) {
  Counts rc(x.n);
  std::size_t total = 0, at = 0;
  for (int r = 0; r < x.n; ++r) {
    rc[r] = own_count(r, p);
    if (r < x.me) at += rc[r];
    total += rc[r];
  }
  std::vector<float> hs(total), hr(f.in_place ? total + 2 : rc[x.me] + 2, gap);
  for (std::size_t j = 0; j < total; ++j) hs[j] = rs_in(x.me, j);
  if (f.in_place) std::copy(hs.begin(), hs.end(), hr.begin());
  std::vector<float> want = hr;
  for (std::size_t i = 0; i < rc[x.me]; ++i) want[i] = rs_sum(x.n, at + i);
  Dev send(hs), recv(hr);
  const float* from = f.in_place ? recv.p : send.p;
  Request q;
  if (f.started)
    q = x.c.ireduce_scatterv(from, recv.p, rc, DataType::float32, ReduceOp::sum, x.s);
  else
    x.c.reduce_scatterv(from, recv.p, rc, DataType::float32, ReduceOp::sum, x.s);
  finish(f, std::move(q), x.s);
  // In place, what follows the result is the input's rest (not checked);
  // otherwise the gap after it stays.
  expect("reduce_scatterv pattern " + std::to_string(p) + " " + f.name, recv.host(), want,
         f.in_place ? rc[x.me] : ~std::size_t{0});
}

// gather (equal: counts all `count`, packed) or gatherv (pattern p).
void check_gather(const Ctx& x, int p, int root, bool v, const Form& f) {
  const std::size_t count = 3;
  Counts rc(x.n), rd(x.n);
  std::size_t rlen = 0;
  for (int r = 0; r < x.n; ++r) rc[r] = v ? own_count(r, p) : count;
  if (v) {
    rd = reversed_with_gaps(rc, &rlen);
  } else {
    for (int r = 0; r < x.n; ++r) rd[r] = r * count;
    rlen = x.n * count + 2;
  }
  const bool at_root = x.me == root, in_place = f.in_place && at_root;
  std::vector<float> hs(rc[x.me] + 1, -3.0f), hr(rlen, gap), want(rlen, gap);
  for (std::size_t k = 0; k < rc[x.me]; ++k) hs[k] = code(x.me, root, k);
  for (int r = 0; r < x.n; ++r)
    for (std::size_t k = 0; k < rc[r]; ++k) want[rd[r] + k] = code(r, root, k);
  if (in_place)
    for (std::size_t k = 0; k < rc[x.me]; ++k) hr[rd[x.me] + k] = code(x.me, root, k);
  Dev send(hs), recv(hr);
  const float* from = in_place ? recv.p + rd[x.me] : send.p;
  float* to = at_root ? recv.p : nullptr;  // recv NULL off the root
  const Counts none;
  Request q;
  if (v && f.started)
    q = x.c.igatherv(from, rc[x.me], to, at_root ? rc : none, at_root ? rd : none, DataType::float32, root, x.s);
  else if (v)
    x.c.gatherv(from, rc[x.me], to, at_root ? rc : none, at_root ? rd : none, DataType::float32, root, x.s);
  else if (f.started)
    q = x.c.igather(from, to, count, DataType::float32, root, x.s);
  else
    x.c.gather(from, to, count, DataType::float32, root, x.s);
  finish(f, std::move(q), x.s);
  const std::string what = std::string(v ? "gatherv" : "gather") + " pattern " + std::to_string(p) + " root " +
                           std::to_string(root) + " " + f.name;
  expect(what, recv.host(), at_root ? want : hr);  // off the root recv is untouched
}

// scatter (equal) or scatterv (pattern p).
void check_scatter(const Ctx& x, int p, int root, bool v, const Form& f) {
  const std::size_t count = 3;
  Counts sc(x.n), sd(x.n);
  std::size_t slen = 0;
  for (int r = 0; r < x.n; ++r) sc[r] = v ? own_count(r, p) : count;
  if (v) {
    sd = reversed_with_gaps(sc, &slen);
  } else {
    for (int r = 0; r < x.n; ++r) sd[r] = r * count;
    slen = x.n * count + 2;
  }
  const bool at_root = x.me == root, in_place = f.in_place && at_root;
  std::vector<float> hs(slen, gap), hr(sc[x.me] + 2, gap), want(sc[x.me] + 2, gap);
  for (int r = 0; r < x.n; ++r)
    for (std::size_t k = 0; k < sc[r]; ++k) hs[sd[r] + k] = code(root, r, k);
  for (std::size_t k = 0; k < sc[x.me]; ++k) want[k] = code(root, x.me, k);
  Dev send(hs), recv(hr);
  const float* from = at_root ? send.p : nullptr;  // send NULL off the root
  float* to = in_place ? send.p + sd[x.me] : recv.p;
  const Counts none;
  Request q;
  if (v && f.started)
    q = x.c.iscatterv(from, at_root ? sc : none, at_root ? sd : none, to, sc[x.me], DataType::float32, root, x.s);
  else if (v)
    x.c.scatterv(from, at_root ? sc : none, at_root ? sd : none, to, sc[x.me], DataType::float32, root, x.s);
  else if (f.started)
    q = x.c.iscatter(from, to, count, DataType::float32, root, x.s);
  else
    x.c.scatter(from, to, count, DataType::float32, root, x.s);
  finish(f, std::move(q), x.s);
  const std::string what = std::string(v ? "scatterv" : "scatter") + " pattern " + std::to_string(p) + " root " +
                           std::to_string(root) + " " + f.name;
  if (in_place)
    expect(what + " (root's send unchanged)", send.host(), hs);
  else
    expect(what, recv.host(), want);
}

void check_reduce(const Ctx& x, int root, const Form& f) {
  const std::size_t count = 5;
  const bool at_root = x.me == root, in_place = f.in_place && at_root;
  std::vector<float> hs(count), hr(count + 2, gap);
  for (std::size_t k = 0; k < count; ++k) hs[k] = rs_in(x.me, k);
  std::vector<float> want = hr;
  for (std::size_t k = 0; k < count; ++k) want[k] = rs_sum(x.n, k);
  if (in_place) std::copy(hs.begin(), hs.end(), hr.begin());
  Dev send(hs), recv(hr);
  const float* from = in_place ? recv.p : send.p;
  float* to = at_root ? recv.p : nullptr;
  Request q;
  if (f.started)
    q = x.c.ireduce(from, to, count, DataType::float32, ReduceOp::sum, root, x.s);
  else
    x.c.reduce(from, to, count, DataType::float32, ReduceOp::sum, root, x.s);
  finish(f, std::move(q), x.s);
  expect("reduce root " + std::to_string(root) + " " + f.name, recv.host(), at_root ? want : hr);
}

// The started forms of version 1's collectives against the same references
// as the blocking forms (run first, on the same inputs).
void check_started_v1(const Ctx& x) {
  const std::size_t count = 6;
  std::vector<float> hs(count * x.n), want_ar(count), want_ag(count * x.n), want_a2a(count * x.n);
  for (std::size_t j = 0; j < hs.size(); ++j) hs[j] = rs_in(x.me, j);
  for (std::size_t k = 0; k < count; ++k) want_ar[k] = rs_sum(x.n, k);
  for (int r = 0; r < x.n; ++r)
    for (std::size_t k = 0; k < count; ++k) {
      want_ag[r * count + k] = rs_in(r, k);
      want_a2a[r * count + k] = rs_in(r, x.me * count + k);
    }
  std::vector<float> want_rs(count);
  for (std::size_t k = 0; k < count; ++k) want_rs[k] = rs_sum(x.n, x.me * count + k);
  for (const Form& f : forms) {
    if (f.in_place) continue;
    const std::string how = f.name;
    Dev send(hs), a(std::vector<float>(count * x.n, gap)), b(std::vector<float>(count * x.n, gap));
    Dev c(std::vector<float>(count, gap)), d(std::vector<float>(count * x.n, gap)), e(hs), g(hs);
    std::vector<Request> q;
    auto go = [&](Request r) { q.push_back(std::move(r)); };
    if (f.started) {
      go(x.c.iallreduce(send.p, a.p, count, DataType::float32, ReduceOp::sum, x.s));
      go(x.c.iallgather(send.p, b.p, count, DataType::float32, x.s));
      go(x.c.ireduce_scatter(send.p, c.p, count, DataType::float32, ReduceOp::sum, x.s));
      go(x.c.ialltoall(send.p, d.p, count, DataType::float32, x.s));
      go(x.c.ialltoall(e.p, e.p, count, DataType::float32, x.s));  // in place
      go(x.c.ibroadcast(g.p, count, DataType::float32, x.n - 1, x.s));
      go(x.c.ibarrier(x.s));
      for (Request& r : q) finish(f, std::move(r), x.s);
    } else {
      x.c.allreduce(send.p, a.p, count, DataType::float32, ReduceOp::sum, x.s);
      x.c.allgather(send.p, b.p, count, DataType::float32, x.s);
      x.c.reduce_scatter(send.p, c.p, count, DataType::float32, ReduceOp::sum, x.s);
      x.c.alltoall(send.p, d.p, count, DataType::float32, x.s);
      x.c.alltoall(e.p, e.p, count, DataType::float32, x.s);
      x.c.broadcast(g.p, count, DataType::float32, x.n - 1, x.s);
      x.c.barrier(x.s);
      cudaStreamSynchronize(x.s);
    }
    std::vector<float> want_bc(count);
    for (std::size_t k = 0; k < count; ++k) want_bc[k] = rs_in(x.n - 1, k);
    expect("allreduce " + how, a.host(), want_ar, count);
    expect("allgather " + how, b.host(), want_ag);
    expect("reduce_scatter " + how, c.host(), want_rs);
    expect("alltoall " + how, d.host(), want_a2a);
    expect("alltoall in place " + how, e.host(), want_a2a);
    expect("broadcast " + how, g.host(), want_bc, count);
  }
}

// Four started operations ended by one wait_all.
void check_wait_all(const Ctx& x) {
  const std::size_t count = 1000;
  std::vector<float> hs(count * x.n), want_ar(count), want_a2a(count * x.n);
  for (std::size_t j = 0; j < hs.size(); ++j) hs[j] = rs_in(x.me, j);
  for (std::size_t k = 0; k < count; ++k) want_ar[k] = rs_sum(x.n, k);
  for (int r = 0; r < x.n; ++r)
    for (std::size_t k = 0; k < count; ++k) want_a2a[r * count + k] = rs_in(r, x.me * count + k);
  Dev send(hs), a(std::vector<float>(count, gap)), b(std::vector<float>(count * x.n, gap));
  Dev d(std::vector<float>(count, gap)), e(std::vector<float>(count * x.n, gap));
  const Counts cs(x.n, count);
  Counts ds(x.n);
  for (int r = 0; r < x.n; ++r) ds[r] = r * count;
  std::vector<Request> q;
  q.push_back(x.c.iallreduce(send.p, a.p, count, DataType::float32, ReduceOp::sum, x.s));
  q.push_back(x.c.ialltoallv(send.p, cs, ds, b.p, cs, ds, DataType::float32, x.s));
  q.push_back(x.c.ireduce(send.p, x.me == 0 ? d.p : nullptr, count, DataType::float32, ReduceOp::sum, 0, x.s));
  q.push_back(x.c.ialltoall(send.p, e.p, count, DataType::float32, x.s));
  Request::wait_all(q);
  bool ended = true;
  for (const Request& r : q) ended = ended && !r.pending();
  if (!ended) {
    std::printf("FAIL v4 wait_all left a request pending\n");
    ++v4_failures;
  }
  expect("wait_all: iallreduce", a.host(), want_ar);
  expect("wait_all: ialltoallv", b.host(), want_a2a);
  expect("wait_all: ireduce", d.host(), x.me == 0 ? want_ar : std::vector<float>(count, gap));
  expect("wait_all: ialltoall", e.host(), want_a2a);
}

// batch as a ring exchange: to the next rank, from the previous, three
// pairs (one of them empty), in one group.
void check_batch(const Ctx& x, const Form& f) {
  const int next = (x.me + 1) % x.n, prev = (x.me + x.n - 1) % x.n;
  const std::size_t small = 5, large = 3000;
  std::vector<float> ha(small), he(large);
  for (std::size_t k = 0; k < small; ++k) ha[k] = code(x.me, next, k);
  for (std::size_t k = 0; k < large; ++k) he[k] = code(x.me, next, k + 1);
  Dev a(ha), b(std::vector<float>(small + 1, gap)), empty_send(std::vector<float>(2, 1.0f)),
      empty_recv(std::vector<float>(2, gap)), e(he), g(std::vector<float>(large + 1, gap));
  const std::vector<Communicator::P2P> ops = {
      {true, next, a.p, small, DataType::float32},         {false, prev, b.p, small, DataType::float32},
      {true, next, empty_send.p, 0, DataType::float32},    {false, prev, empty_recv.p, 0, DataType::float32},
      {false, prev, g.p, large, DataType::float32},        {true, next, e.p, large, DataType::float32},
  };
  finish(f, x.c.batch(ops, x.s), x.s);
  std::vector<float> want_b(small + 1, gap), want_g(large + 1, gap);
  for (std::size_t k = 0; k < small; ++k) want_b[k] = code(prev, x.me, k);
  for (std::size_t k = 0; k < large; ++k) want_g[k] = code(prev, x.me, k + 1);
  const std::string how = std::string("batch ring ") + f.name;
  expect(how + " (small)", b.host(), want_b);
  expect(how + " (large)", g.host(), want_g);
  expect(how + " (empty)", empty_recv.host(), std::vector<float>(2, gap));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// alltoallv through devmesh against the grouped ncclSend/ncclRecv it makes,
// on the same NCCL communicator, buffers and stream: per peer 8 B to 1 MiB,
// in rounds of k calls alternating which goes first; the paired median
// difference per call. Reported, not judged (a measurement).
void alltoallv_cost(const Ctx& x) {
  ncclComm_t raw = *static_cast<ncclComm_t*>(x.c.native_handle());
  const std::size_t most = (std::size_t{1} << 20) / sizeof(float) * x.n;
  float *a = nullptr, *b = nullptr;
  cudaMalloc(&a, most * sizeof(float));
  cudaMalloc(&b, most * sizeof(float));
  int errors = 0;
  for (const std::size_t bytes : {8, 64, 512, 4096, 32768, 262144, 1048576}) {
    const std::size_t count = bytes / sizeof(float);
    const Counts cs(x.n, count);
    Counts ds(x.n);
    for (int r = 0; r < x.n; ++r) ds[r] = r * count;
    auto dev = [&] { x.c.alltoallv(a, cs, ds, b, cs, ds, DataType::float32, x.s); };
    auto grouped = [&] {
      ncclGroupStart();
      for (int r = 0; r < x.n; ++r) {
        ncclSend(a + ds[r], count, ncclFloat32, r, raw, x.s);
        ncclRecv(b + ds[r], count, ncclFloat32, r, raw, x.s);
      }
      ncclResult_t res = ncclGroupEnd();
      while (res == ncclInProgress)
        if (ncclCommGetAsyncError(raw, &res) != ncclSuccess) break;
      if (res != ncclSuccess) ++errors;
    };
    auto timed = [&](const std::function<void()>& call, int k) {
      cudaStreamSynchronize(x.s);
      const auto t0 = Clock::now();
      for (int i = 0; i < k; ++i) call();
      cudaStreamSynchronize(x.s);
      return 1e6 * std::chrono::duration<double>(Clock::now() - t0).count() / k;
    };
    timed(dev, 5);
    timed(grouped, 5);
    std::vector<double> td, tr, diff;
    for (int round = 0; round < 40; ++round) {
      double d = 0, r = 0;
      if (round % 2) {
        d = timed(dev, 10);
        r = timed(grouped, 10);
      } else {
        r = timed(grouped, 10);
        d = timed(dev, 10);
      }
      td.push_back(d);
      tr.push_back(r);
      diff.push_back(d - r);
    }
    std::printf("RESULT v4 cost alltoallv %zu B per peer at %d rank(s): devmesh %.2f us, grouped ncclSend/ncclRecv "
                "%.2f us, paired difference %+.2f us (ratio %.3f; 40 rounds of 10 calls)\n",
                bytes, x.n, median(td), median(tr), median(diff), (median(tr) + median(diff)) / median(tr));
  }
  if (errors || cudaGetLastError() != cudaSuccess) {
    std::printf("FAIL v4 cost: %d grouped calls failed\n", errors);
    ++v4_failures;
  }
  cudaFree(a);
  cudaFree(b);
}

// Runs one family of checks and reports it in one line.
void family(const char* name, int n, const std::string& what, const std::function<void()>& body) {
  const int before = v4_failures;
  const auto t0 = Clock::now();
  try {
    body();
  } catch (const Error& e) {
    std::printf("FAIL v4 %s: devmesh error: %s\n", name, e.what());
    ++v4_failures;
  }
  const double ms = 1e3 * std::chrono::duration<double>(Clock::now() - t0).count();
  if (v4_failures == before)
    std::printf("RESULT v4 %s at %d rank(s) ok: %s (%.0f ms)\n", name, n, what.c_str(), ms);
  else
    std::printf("FAIL v4 %s at %d rank(s): %d check(s) failed (%s)\n", name, n, v4_failures - before, what.c_str());
}

}  // namespace

// Every check of this file on a mesh of all ranks with its one dim on
// NCCL; returns the number of failed checks.
int nccl_v4_checks() {
  int me = 0, n = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MeshOptions o;
  o.backend = "nccl";
  Mesh m = Mesh::create(MPI_COMM_WORLD, {n}, {"x"}, o);
  Communicator& c = m.communicator("x");
  cudaStream_t s = nullptr;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);  // reads on the legacy stream do not wait for it
  const Ctx x{c, s, me, n};
  std::vector<int> roots = {0};
  if (n > 1) roots.push_back(n - 1);
  const std::string each = "4 count patterns (uneven, zeros, large), gaps, x 5 forms (blocking, started with "
                           "wait, with test, in place blocking and started)";
  family("alltoallv", n, each, [&] {
    for (int p = 0; p < 4; ++p)
      for (const Form& f : forms) check_alltoallv(x, p, f);
  });
  family("allgatherv", n, each, [&] {
    for (int p = 0; p < 4; ++p)
      for (const Form& f : forms) check_allgatherv(x, p, f);
  });
  family("reduce_scatterv", n, each, [&] {
    for (int p = 0; p < 4; ++p)
      for (const Form& f : forms) check_reduce_scatterv(x, p, f);
  });
  for (const bool v : {false, true}) {
    family(v ? "gatherv" : "gather", n, (v ? each : std::string("count 3 x 5 forms")) + ", roots 0 and last", [&] {
      for (const int root : roots)
        for (int p = 0; p < (v ? 4 : 1); ++p)
          for (const Form& f : forms) check_gather(x, p, root, v, f);
    });
    family(v ? "scatterv" : "scatter", n, (v ? each : std::string("count 3 x 5 forms")) + ", roots 0 and last", [&] {
      for (const int root : roots)
        for (int p = 0; p < (v ? 4 : 1); ++p)
          for (const Form& f : forms) check_scatter(x, p, root, v, f);
    });
  }
  family("reduce", n, "sum, 5 forms, roots 0 and last", [&] {
    for (const int root : roots)
      for (const Form& f : forms) check_reduce(x, root, f);
  });
  family("started forms of version 1", n,
         "iallreduce, iallgather, ireduce_scatter, ialltoall (in place too), ibroadcast, ibarrier = blocking", [&] {
           check_started_v1(x);
         });
  family("wait_all", n, "iallreduce, ialltoallv, ireduce, ialltoall ended by one wait_all", [&] { check_wait_all(x); });
  family("batch", n, "ring exchange, 3 pairs (one empty), blocking and started", [&] {
    for (const Form& f : forms)
      if (!f.in_place) check_batch(x, f);
  });
  family("alltoallv cost", n, "measured, not judged", [&] { alltoallv_cost(x); });
  cudaStreamDestroy(s);
  return v4_failures;
}
