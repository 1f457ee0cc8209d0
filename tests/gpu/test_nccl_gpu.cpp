// NCCL backend checks on a real GPU (run by tests/gpu/run-gpu-checks.sh on a
// GPU machine; skipped with status 77 elsewhere). One GPU holds one rank
// per NCCL communicator, so meshes here are 1-rank, except the 2-rank run
// that checks the same-GPU error. (A member that never asks for its dim's
// communicator is not bounded by the plugin's `timeout`: the core's
// agreement after comm_prepare waits for it, as any MPI collective would;
// only a fault-tolerant mesh's deadline bounds that, docs/ERRORS.md.)
//
//   mpiexec -n 1 test_nccl_gpu          every collective, point to point (blocking, non-blocking,
//                                       sendrecv), each creation path, hybrid mesh, bandwidth,
//                                       the GPU's NVLink domain as the plugin reports it
//   mpiexec -n 1 test_nccl_gpu --cost   the cost of a call through devmesh against raw NCCL on the
//                                       same communicator, 8 B to 256 MiB (cost_per_call)
//   mpiexec -n 2 test_nccl_gpu --pair   same-GPU error on both ranks
//   mpiexec -n N test_nccl_gpu --v4     version 4 of the plugin interface (nccl_v4_checks.cpp), one GPU
//                                       per rank: v-collectives, rooted, started forms, wait_all, batch,
//                                       alltoallv's cost against grouped ncclSend/ncclRecv
//   mpiexec -ft -n 2 test_nccl_gpu --ft [BACKEND]
//                                       (an MPI with ULFM) a fault-tolerant mesh (dp=2, tp=1) with tp
//                                       on NCCL: rank 1 dies, rank 0's NCCL dim is revoked by the
//                                       mesh's watcher, rank 0 shrinks to (1, 1) and its NCCL dim works.
//                                       BACKEND (default nccl) localrevoke3: the same on the CPU with
//                                       that test plugin (host buffers; test fault-watcher).
#include <cuda_runtime.h>
#include <mpi.h>
#include <dlfcn.h>
#include <nccl.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "devmesh/devmesh.h"
#include "nccl/devmesh_nccl.h"
#include "devmesh/mesh.hpp"
#include "nccl/nccl_backend.hpp"

using namespace devmesh;
using Clock = std::chrono::steady_clock;

int nccl_v4_checks();  // nccl_v4_checks.cpp: its failed checks

namespace {

int failures = 0;
#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);             \
      ++failures;                                                             \
    }                                                                         \
  } while (0)

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Ends a group the caller opened around the communicator's calls. devmesh's
// NCCL communicators are non-blocking: ncclGroupEnd may return
// ncclInProgress and launch afterwards from NCCL's own thread, so the caller
// polls until the launch is done before synchronising or freeing anything.
void group_end(Communicator& c) {
  ncclComm_t comm = *static_cast<ncclComm_t*>(c.native_handle());
  ncclResult_t r = ncclGroupEnd();
  const auto t0 = Clock::now();
  while (r == ncclInProgress && seconds_since(t0) < 30)
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess) break;
  CHECK(r == ncclSuccess);
}

template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

// Two device buffers of n floats, a holding h and b zeros, and a stream.
struct Buffers {
  explicit Buffers(const std::vector<float>& h) : n(h.size()) {
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(b, 0, n * sizeof(float));
    cudaStreamCreate(&s);
  }
  ~Buffers() {
    cudaStreamDestroy(s);
    cudaFree(a);
    cudaFree(b);
  }
  std::size_t n;
  float *a = nullptr, *b = nullptr;
  cudaStream_t s = nullptr;
};

// Every collective of the backend interface on device buffers of a 1-rank
// communicator, with the values each must produce.
void check_collectives(Communicator& c) {
  CHECK(c.backend() == "nccl");
  CHECK(c.size() == 1 && c.rank() == 0);
  const std::size_t n = 1024;
  std::vector<float> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<float>(i);
  Buffers buf(h);
  float *a = buf.a, *b = buf.b;
  cudaStream_t s = buf.s;
  c.allreduce(a, b, n, DataType::float32, ReduceOp::sum, s);
  cudaStreamSynchronize(s);
  CHECK(to_host(b, n) == h);
  cudaMemset(b, 0, n * sizeof(float));
  c.allgather(a, b, n, DataType::float32, s);
  cudaStreamSynchronize(s);
  CHECK(to_host(b, n) == h);
  cudaMemset(b, 0, n * sizeof(float));
  c.reduce_scatter(a, b, n, DataType::float32, ReduceOp::max, s);
  cudaStreamSynchronize(s);
  CHECK(to_host(b, n) == h);
  c.broadcast(a, n, DataType::float32, 0, s);
  cudaStreamSynchronize(s);
  CHECK(to_host(a, n) == h);
  cudaMemset(b, 0, n * sizeof(float));
  c.alltoall(a, b, n, DataType::float32, s);
  cudaStreamSynchronize(s);
  CHECK(to_host(b, n) == h);
  c.barrier(s);
  // send/recv to itself in one group
  // (a rank may not send to itself without a group; exercise the interface
  // on the communicator's own stream with a matched pair)
  ncclGroupStart();
  c.send(a, n, DataType::float32, 0);
  c.recv(b, n, DataType::float32, 0);
  group_end(c);
  cudaDeviceSynchronize();
  CHECK(to_host(b, n) == h);
}

// Point to point of plugin interface v2 on a 1-rank communicator: a rank
// sends to itself, which NCCL allows only inside one group (sendrecv is
// one; isend/irecv are put in one by hand). MPI_PROC_NULL peers never reach
// NCCL; a peer outside the group is refused.
void check_point_to_point(Communicator& c) {
  const std::size_t n = 4096;
  std::vector<float> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<float>(3 * i + 1);
  Buffers buf(h);
  float *a = buf.a, *b = buf.b;
  cudaStream_t s = buf.s;

  c.sendrecv(a, n, DataType::float32, 0, b, n, DataType::float32, 0, s);
  cudaStreamSynchronize(s);
  CHECK(to_host(b, n) == h);

  // Both sides MPI_PROC_NULL: nothing moves, b keeps its zeros.
  cudaMemset(b, 0, n * sizeof(float));
  c.sendrecv(a, n, DataType::float32, MPI_PROC_NULL, b, n, DataType::float32, MPI_PROC_NULL, s);
  cudaStreamSynchronize(s);
  CHECK(to_host(b, n) == std::vector<float>(n, 0.0f));
  Request none = c.isend(a, n, DataType::float32, MPI_PROC_NULL, s);
  CHECK(!none.pending());

  ncclGroupStart();
  Request sent = c.isend(a, n, DataType::float32, 0, s);
  Request got = c.irecv(b, n, DataType::float32, 0, s);
  group_end(c);
  CHECK(sent.pending() && got.pending());
  sent.wait();
  int polls = 0;
  while (!got.test() && polls < 1000000) ++polls;
  CHECK(!got.pending());
  cudaStreamSynchronize(s);
  CHECK(to_host(b, n) == h);

  bool refused = false;
  try {
    c.isend(a, n, DataType::float32, 1, s);
  } catch (const Error& e) {
    refused = e.status() == Status::invalid_argument;
  }
  CHECK(refused);
  std::printf("RESULT point to point ok (sendrecv, isend/irecv with wait and test, MPI_PROC_NULL, bad peer)\n");
}

void nvlink_domain();

void single_rank() {
  struct Path {
    const char* name;
    std::vector<std::string> options;  // the plugin's key=value options (docs/NCCL.md)
    bool eager;
  } paths[] = {
      {"unique_id (lazy comm)", {"init=unique_id"}, false},
      {"unique_id (create_comms)", {"init=unique_id"}, true},
      {"split", {"init=split", "split_share=0"}, true},
      {"split splitShare=1", {"init=split", "split_share=1"}, true},
      {"InitRankScalable", {"init=unique_id", "scalable_from=1"}, false},
  };
  for (const Path& p : paths) {
    MeshOptions o;
    o.backend = "nccl";
    o.backend_options = p.options;
    const auto t0 = Clock::now();
    Mesh m = Mesh::create(MPI_COMM_WORLD, {1, 1, 1}, {"dp", "cp", "tp"}, o);
    if (p.eager) m.create_comms();
    for (const char* d : {"dp", "cp", "tp"}) m.communicator(d);
    std::printf("RESULT creation \"%s\" %.3f ms (mesh + 3 dims, 1 distinct layout)\n", p.name,
                1e3 * seconds_since(t0));
    check_collectives(m.communicator("tp"));
  }
  // Hybrid: dp on MPI, tp on NCCL.
  MeshOptions o;
  o.dim_backends = {{"tp", "nccl"}};
  Mesh h = Mesh::create(MPI_COMM_WORLD, {1, 1}, {"dp", "tp"}, o);
  CHECK(h.communicator("dp").backend() == "mpi");
  check_collectives(h.communicator("tp"));
  check_point_to_point(h.communicator("tp"));
  int one = 1, sum = 0;
  h.communicator("dp").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
  CHECK(sum == 1);
  std::printf("RESULT hybrid mesh ok\n");

  // Bandwidth: allreduce through the backend vs raw ncclAllReduce on the
  // same communicator, alternating.
  Communicator& c = h.communicator("tp");
  ncclComm_t raw = *static_cast<ncclComm_t*>(c.native_handle());
  cudaStream_t s;
  cudaStreamCreate(&s);
  for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{1} << 24, std::size_t{1} << 28}) {
    const std::size_t n = bytes / sizeof(float);
    float *a = nullptr, *b = nullptr;
    cudaMalloc(&a, bytes);
    cudaMalloc(&b, bytes);
    double t_dev = 1e30, t_raw = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const int iters = 20;
      cudaStreamSynchronize(s);
      auto t0 = Clock::now();
      for (int i = 0; i < iters; ++i) c.allreduce(a, b, n, DataType::float32, ReduceOp::sum, s);
      cudaStreamSynchronize(s);
      t_dev = std::min(t_dev, seconds_since(t0) / iters);
      t0 = Clock::now();
      for (int i = 0; i < iters; ++i) ncclAllReduce(a, b, n, ncclFloat32, ncclSum, raw, s);
      cudaStreamSynchronize(s);
      t_raw = std::min(t_raw, seconds_since(t0) / iters);
    }
    std::printf("RESULT allreduce %zu B: devmesh %.2f GB/s, raw NCCL %.2f GB/s, ratio %.3f\n", bytes,
                bytes / t_dev / 1e9, bytes / t_raw / 1e9, t_dev / t_raw);
    cudaFree(a);
    cudaFree(b);
  }
  cudaStreamDestroy(s);
  nvlink_domain();
}

// The GPU's NVLink domain as the plugin reports it (NVML's fabric info): a
// GPU without a multi-node fabric is in none, which is no error.
void nvlink_domain() {
  void* plugin = dlopen("libdevmesh-backend-nccl.so", RTLD_NOW | RTLD_NOLOAD);
  CHECK(plugin != nullptr);  // loaded by the meshes above
  if (!plugin) return;
  const auto query = reinterpret_cast<decltype(&devmesh_nccl_nvlink_domain)>(
      dlsym(plugin, "devmesh_nccl_nvlink_domain"));
  CHECK(query != nullptr);
  if (query) {
    char id[64] = "", why[512] = "";
    const int rc = query(0, id, sizeof id, why, sizeof why);
    CHECK(rc == DEVMESH_SUCCESS);
    if (*id)
      std::printf("RESULT nvlink domain of GPU 0: %s\n", id);
    else
      std::printf("RESULT nvlink domain of GPU 0: none (%s)\n", why);
    // A device CUDA does not know is an argument error, not a domain.
    CHECK(query(1 << 20, id, sizeof id, why, sizeof why) == DEVMESH_ERR_INVALID_ARGUMENT);
  }
  dlclose(plugin);
}

// ---- the cost of a call ----------------------------------------------------

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Seconds per call of k calls of f on stream s: until the last call
// returned (host) and until the stream finished them (wall).
struct Timing {
  double host, wall;
};
template <class F>
Timing timed(F&& f, int k, cudaStream_t s) {
  cudaStreamSynchronize(s);
  const auto t0 = Clock::now();
  for (int i = 0; i < k; ++i) f();
  const double host = seconds_since(t0);
  cudaStreamSynchronize(s);
  return {host / k, seconds_since(t0) / k};
}

// The cost of a call through devmesh against raw NCCL on the very same
// NCCL communicator, buffers and stream, at one rank per communicator:
// allreduce, allgather, reduce_scatter, broadcast and alltoall from 8 B to
// 256 MiB. Five ways to make each call, in rounds whose order rotates:
//   raw          the NCCL call on the dim's ncclComm_t (alltoall: ncclAlltoAll
//                from NCCL 2.28, before it the grouped send/recv; as the plugin)
//   raw+query    the same and ncclCommGetAsyncError, as the plugin asks after each
//   held         Communicator& c, looked up once: c.allreduce(...)
//   devmesh      mesh.communicator("tp").allreduce(...), looked up per call
//   C API        devmesh_allreduce(m, "tp", ...), a mesh of the C API (its own
//                NCCL communicator on the same GPU, buffers and stream)
// Each is the median over rounds of the time per call of a batch; the
// difference is the median over rounds of devmesh's batch minus raw's in
// the same round (paired), and the ratio from 1 MiB is raw's median plus
// that difference over raw's median. Below 1 MiB the difference must be at
// most 1 us; from 1 MiB, at most max(1 us, 3% of raw).
void cost_per_call() {
  MeshOptions o;
  o.backend = "nccl";
  Mesh mesh = Mesh::create(MPI_COMM_WORLD, {1, 1}, {"dp", "tp"}, o);
  Communicator& held = mesh.communicator("tp");
  ncclComm_t raw = *static_cast<ncclComm_t*>(held.native_handle());
  devmesh_t cm = nullptr;
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = "nccl";
  const int shape[2] = {1, 1};
  const char* names[2] = {"dp", "tp"};
  CHECK(devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &cm) == DEVMESH_SUCCESS);
  ncclComm_t c_comm = nullptr;
  CHECK(devmesh_nccl_comm(cm, "tp", &c_comm) == DEVMESH_SUCCESS && c_comm != nullptr);
  const std::size_t most = std::size_t{1} << 28;
  char *a = nullptr, *b = nullptr;
  cudaMalloc(&a, most);
  cudaMalloc(&b, most);
  cudaMemset(a, 1, most);
  cudaStream_t s;
  cudaStreamCreate(&s);
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = 8; bytes <= (std::size_t{1} << 19); bytes *= 4) sizes.push_back(bytes);
  sizes.push_back(std::size_t{1} << 19);
  for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{1} << 24, std::size_t{1} << 28}) sizes.push_back(bytes);
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const char* ops[] = {"allreduce", "allgather", "reduce_scatter", "broadcast", "alltoall"};
  int over = 0, call_errors = 0;
  for (const char* op : ops) {
    const std::string name = op;
    for (const std::size_t bytes : sizes) {
      const std::size_t n = bytes / sizeof(float);
      const float* send = reinterpret_cast<const float*>(a);
      float* recv = reinterpret_cast<float*>(b);
      // A non-blocking communicator may answer ncclInProgress: polled to
      // the end before the next call, as NCCL asks of every caller.
      auto raw_call = [&] {
        ncclResult_t r;
        if (name == "allreduce") r = ncclAllReduce(send, recv, n, ncclFloat32, ncclSum, raw, s);
        else if (name == "allgather") r = ncclAllGather(send, recv, n, ncclFloat32, raw, s);
        else if (name == "reduce_scatter") r = ncclReduceScatter(send, recv, n, ncclFloat32, ncclSum, raw, s);
        else if (name == "broadcast") r = ncclBroadcast(recv, recv, n, ncclFloat32, 0, raw, s);
        else {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
          r = ncclAlltoAll(send, recv, n, ncclFloat32, raw, s);
#else
          ncclGroupStart();
          ncclSend(send, n, ncclFloat32, 0, raw, s);
          ncclRecv(recv, n, ncclFloat32, 0, raw, s);
          r = ncclGroupEnd();
#endif
        }
        while (r == ncclInProgress)
          if (ncclCommGetAsyncError(raw, &r) != ncclSuccess) break;
        if (r != ncclSuccess) ++call_errors;
      };
      auto query_call = [&] {
        raw_call();
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(raw, &async);
      };
      auto on = [&](Communicator& c) {
        if (name == "allreduce") c.allreduce(send, recv, n, DataType::float32, ReduceOp::sum, s);
        else if (name == "allgather") c.allgather(send, recv, n, DataType::float32, s);
        else if (name == "reduce_scatter") c.reduce_scatter(send, recv, n, DataType::float32, ReduceOp::sum, s);
        else if (name == "broadcast") c.broadcast(recv, n, DataType::float32, 0, s);
        else c.alltoall(send, recv, n, DataType::float32, s);
      };
      auto held_call = [&] { on(held); };
      auto devmesh_call = [&] { on(mesh.communicator("tp")); };
      auto c_call = [&] {
        int rc;
        if (name == "allreduce") rc = devmesh_allreduce(cm, "tp", send, recv, n, DEVMESH_FLOAT32, DEVMESH_SUM, s);
        else if (name == "allgather") rc = devmesh_allgather(cm, "tp", send, recv, n, DEVMESH_FLOAT32, s);
        else if (name == "reduce_scatter")
          rc = devmesh_reduce_scatter(cm, "tp", send, recv, n, DEVMESH_FLOAT32, DEVMESH_SUM, s);
        else if (name == "broadcast") rc = devmesh_broadcast(cm, "tp", recv, n, DEVMESH_FLOAT32, 0, s);
        else rc = devmesh_alltoall(cm, "tp", send, recv, n, DEVMESH_FLOAT32, s);
        if (rc != DEVMESH_SUCCESS) ++call_errors;
      };
      const bool large = bytes >= (std::size_t{1} << 20);
      const int ways = 5;
      int k = 100, rounds = 30;
      std::vector<double> wall[ways], host[ways], diff;
      auto one = [&](int w) {
        switch (w) {
          case 0: return timed(raw_call, k, s);
          case 1: return timed(query_call, k, s);
          case 2: return timed(held_call, k, s);
          case 3: return timed(devmesh_call, k, s);
          default: return timed(c_call, k, s);
        }
      };
      for (int w = ways - 1; w >= 0; --w) one(w);  // warm up each way, devmesh's first
      // A call of 20 us or more (alltoall's grouped send/recv, the largest
      // sizes) varies by microseconds from batch to batch: many rounds of
      // short batches, about 2.5 s a size, bring the paired median's noise
      // under the bound it is judged by.
      const double per_call = timed(raw_call, 10, s).wall;
      if (per_call >= 20e-6) {
        k = 10;
        rounds = std::clamp(static_cast<int>(2.5 / (ways * k * per_call)), 30, 1000);
      }
      for (int r = 0; r < rounds; ++r) {
        Timing t[ways];
        for (int i = 0; i < ways; ++i) {
          const int w = (r + i) % ways;
          t[w] = one(w);
        }
        for (int w = 0; w < ways; ++w) {
          wall[w].push_back(1e6 * t[w].wall);
          host[w].push_back(1e6 * t[w].host);
        }
        diff.push_back(1e6 * (t[3].wall - t[0].wall));
      }
      const double dev = median(wall[3]), rawt = median(wall[0]), d = median(diff);
      std::printf("RESULT cost %s %zu B: devmesh %.2f us, raw NCCL %.2f us", op, bytes, dev, rawt);
      if (large) std::printf(", ratio %.3f", (rawt + d) / rawt);
      std::printf(" (difference %+.2f us; held Communicator %.2f us, raw + async-error query %.2f us, C API %.2f us;"
                  " host per call: devmesh %.2f us, raw %.2f us; %d rounds of %d calls)\n",
                  d, median(wall[2]), median(wall[1]), median(wall[4]), median(host[3]), median(host[0]), rounds, k);
      const bool ok = d <= (large ? std::max(1.0, 0.03 * rawt) : 1.0);
      if (!ok) {
        std::printf("FAIL cost %s %zu B: devmesh over its bound (%s)\n", op, bytes,
                    large ? "max(1 us, 3%)" : "1 us");
        ++over;
      }
    }
  }
  cudaError_t e = cudaGetLastError();
  CHECK(e == cudaSuccess);
  CHECK(call_errors == 0);
  failures += over;
  std::printf("RESULT cost: %zu rows, %d over their bound\n", sizeof ops / sizeof *ops * sizes.size(), over);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
  CHECK(devmesh_destroy(&cm) == DEVMESH_SUCCESS);
}

void pair() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Both ranks on GPU 0: a clear error on both, not a hang.
  MeshOptions o;
  o.backend = "nccl";
  o.backend_options = {"device=0", "timeout=5"};
  Mesh m = Mesh::create(MPI_COMM_WORLD, {2}, {"tp"}, o);
  try {
    m.communicator("tp");
    CHECK(!"no error for two ranks on one GPU");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK(std::strstr(e.what(), "both use GPU") != nullptr);
    std::printf("RESULT rank %d same-GPU error: %s\n", rank, e.what());
  }
  std::printf("RESULT rank %d pair checks done, finalizing\n", rank);
}

// A fault-tolerant mesh whose tp dim runs on a backend with a local
// revoke (NCCL; each rank's tp group is itself alone, as one GPU allows):
// when rank 1 dies, rank 0 learns of it through the mesh's watcher, which
// revokes rank 0's NCCL communicator from its own thread; the next
// operation fails with revoked, and the shrunk mesh's NCCL dim works.
// Ends with _exit: a job with a dead rank may stay in MPI_Finalize (ULFM).
[[noreturn]] void fault_tolerant(const char* backend) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const bool gpu = std::strcmp(backend, "nccl") == 0;
  MeshOptions o;
  o.fault_tolerance = true;
  o.dim_backends = {{"tp", backend}};
  if (gpu) o.dim_options = {{"tp", "device=0"}};
  const std::size_t n = 256;
  std::vector<float> h(n, 1.0f), host_b(n, 0.0f);
  std::unique_ptr<Buffers> dev = gpu ? std::make_unique<Buffers>(h) : nullptr;
  const float* a = gpu ? dev->a : h.data();
  float* b = gpu ? dev->b : host_b.data();
  void* stream = gpu ? static_cast<void*>(dev->s) : nullptr;
  auto tp_allreduce = [&](const Mesh& m) {
    m.communicator("tp").allreduce(a, b, n, DataType::float32, ReduceOp::sum, stream);
    if (gpu) cudaStreamSynchronize(dev->s);
    const std::vector<float> got = gpu ? to_host(b, n) : host_b;
    CHECK(got == h);
  };
  try {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {2, 1}, {"dp", "tp"}, o);
    tp_allreduce(m);
    int one = 1, sum = 0;
    m.communicator("dp").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
    CHECK(sum == 2);
    std::printf("RESULT ft rank %d: fault-tolerant mesh (dp=2 on MPI, tp=1 on %s) made, collectives ok\n", rank,
                backend);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) raise(SIGKILL);
    // Rank 0: its own tp communicator never waits for rank 1; only the
    // watcher's revoke can stop it.
    const auto t0 = Clock::now();
    Status s = Status::success;
    std::string msg;
    while (s == Status::success && seconds_since(t0) < 20) {
      try {
        tp_allreduce(m);
      } catch (const Error& e) {
        s = e.status();
        msg = e.what();
      }
    }
    std::printf("RESULT ft rank 0: tp (%s) failed %.0f ms after rank 1 was killed, status %d: %s\n", backend,
                1e3 * seconds_since(t0), static_cast<int>(s), msg.c_str());
    CHECK(s == Status::revoked);
    const Mesh shrunk = m.shrink("dp");
    CHECK(shrunk.is_member() && shrunk.size() == 1);
    tp_allreduce(shrunk);
    std::printf("RESULT ft rank 0: shrunk to (%lld, %lld), tp on %s works\n",
                static_cast<long long>(shrunk.shape()[0]), static_cast<long long>(shrunk.shape()[1]),
                std::string(shrunk.communicator("tp").backend()).c_str());
  } catch (const Error& e) {
    std::printf("FAIL ft rank %d: devmesh error: %s\n", rank, e.what());
    ++failures;
  }
  dev.reset();
  std::printf("%s\n", failures ? "GPU CHECKS FAILED" : "GPU CHECKS PASSED");
  std::fflush(stdout);
  _exit(failures ? 1 : 0);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // every line reaches the log, even if a rank is killed
  const bool ft = argc > 1 && std::strcmp(argv[1], "--ft") == 0;
  if (ft) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (argc > 2 && std::strcmp(argv[2], "nccl") != 0) fault_tolerant(argv[2]);
  } else {
    MPI_Init(&argc, &argv);
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    std::printf("no CUDA device: skipped\n");
    MPI_Finalize();
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int version = 0, driver = 0, runtime = 0;
  ncclGetVersion(&version);
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("RESULT device %s, CUDA driver %d.%d, CUDA runtime %d.%d, NCCL %d.%d.%d\n", prop.name, driver / 1000,
              driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10, version / 10000, version % 10000 / 100,
              version % 100);
  try {
    if (ft)
      fault_tolerant("nccl");
    else if (argc > 1 && std::strcmp(argv[1], "--pair") == 0)
      pair();
    else if (argc > 1 && std::strcmp(argv[1], "--cost") == 0)
      cost_per_call();
    else if (argc > 1 && std::strcmp(argv[1], "--v4") == 0)
      failures += nccl_v4_checks();
    else
      single_rank();
  } catch (const Error& e) {
    std::printf("FAIL devmesh error: %s\n", e.what());
    ++failures;
  }
  MPI_Finalize();
  std::printf("%s\n", failures ? "GPU CHECKS FAILED" : "GPU CHECKS PASSED");
  return failures ? 1 : 0;
}
