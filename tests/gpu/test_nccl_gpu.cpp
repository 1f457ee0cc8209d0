// NCCL backend checks on a real GPU (run by tests/gpu/run-gpu-checks.sh on a
// GPU machine; skipped with status 77 elsewhere). One GPU holds one rank
// per NCCL communicator, so meshes here are 1-rank, except the 2-rank runs
// that check the same-GPU error and the creation deadline.
//
//   mpiexec -n 1 test_nccl_gpu          every collective, each creation path, hybrid mesh, bandwidth
//   mpiexec -n 2 test_nccl_gpu --pair   same-GPU error, deadline on a missing member
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

using namespace devmesh;
using Clock = std::chrono::steady_clock;

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

template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

// Every collective of the backend interface on device buffers of a 1-rank
// communicator, with the values each must produce.
void check_collectives(Communicator& c) {
  CHECK(c.backend() == "nccl");
  CHECK(c.size() == 1 && c.rank() == 0);
  const std::size_t n = 1024;
  std::vector<float> h(n);
  for (std::size_t i = 0; i < n; ++i) h[i] = static_cast<float>(i);
  float *a = nullptr, *b = nullptr;
  cudaMalloc(&a, n * sizeof(float));
  cudaMalloc(&b, n * sizeof(float));
  cudaMemcpy(a, h.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaStream_t s;
  cudaStreamCreate(&s);
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
  ncclGroupEnd();
  cudaDeviceSynchronize();
  CHECK(to_host(b, n) == h);
  cudaStreamDestroy(s);
  cudaFree(a);
  cudaFree(b);
}

void single_rank() {
  struct Path {
    const char* name;
    NcclInit init;
    bool share;
    int scalable_from;
    bool eager;
  } paths[] = {
      {"unique_id (lazy comm)", NcclInit::unique_id, false, 1024, false},
      {"unique_id (create_comms)", NcclInit::unique_id, false, 1024, true},
      {"split", NcclInit::split, false, 1024, true},
      {"split splitShare=1", NcclInit::split, true, 1024, true},
      {"InitRankScalable", NcclInit::unique_id, false, 1, false},
  };
  for (const Path& p : paths) {
    MeshOptions o;
    o.backend = "nccl";
    o.backend_options.nccl_init = p.init;
    o.backend_options.nccl_split_share = p.share;
    o.backend_options.nccl_scalable_from = p.scalable_from;
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
}

void pair() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Both ranks on GPU 0: a clear error on both, not a hang.
  MeshOptions o;
  o.backend = "nccl";
  o.backend_options.device = 0;
  o.backend_options.init_timeout_seconds = 5;
  Mesh m = Mesh::create(MPI_COMM_WORLD, {2}, {"tp"}, o);
  try {
    m.communicator("tp");
    CHECK(!"no error for two ranks on one GPU");
  } catch (const Error& e) {
    CHECK(e.status() == Status::invalid_argument);
    CHECK(std::strstr(e.what(), "both use GPU") != nullptr);
    std::printf("RESULT rank %d same-GPU error: %s\n", rank, e.what());
  }
  // Deadline: only rank 0 asks for a 2-rank layout; it must give up in time.
  MeshOptions q = o;
  q.backend_options.init_timeout_seconds = 3;
  Mesh d = Mesh::create(MPI_COMM_WORLD, {2}, {"x"}, q);
  if (rank == 0) {
    const auto t0 = Clock::now();
    try {
      d.communicator("x");
      CHECK(!"no error for a missing member");
    } catch (const Error& e) {
      const double waited = seconds_since(t0);
      CHECK(e.status() == Status::backend);
      CHECK(waited < 10);
      std::printf("RESULT deadline: gave up after %.2f s: %s\n", waited, e.what());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    std::printf("no CUDA device: skipped\n");
    MPI_Finalize();
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  int version = 0;
  ncclGetVersion(&version);
  std::printf("RESULT device %s, NCCL %d\n", prop.name, version);
  try {
    if (argc > 1 && std::strcmp(argv[1], "--pair") == 0)
      pair();
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
