// Communication overlapped with compute through non-blocking collectives,
// FSDP-style, on a (dp, fsdp) mesh:
//
// 1. A loop over layers whose parameters are sharded along fsdp: while
//    layer l computes, iallgather fetches layer l+1's parameters and
//    ireduce_scatter reduces layer l-1's gradients to their shards.
// 2. Gradient buckets over every rank: one 1 MiB iallreduce polled with
//    test() while the rank computes, then four buckets reduced in place
//    (send == recv), in flight together and finished by wait_all.
//
//   mpiexec -n 8 ./example_overlap [BACKEND]     (BACKEND of fsdp and world: mpi, gloo)
//
// At 8 ranks the mesh is (dp, fsdp) = (2, 4). Every number is a small
// whole number (exact in float and double), so each gathered parameter,
// each gradient shard and each reduced element is compared exactly with
// what every rank computes alone from the closed forms below; the program
// prints the first mismatches and exits non-zero on any.
#include <mpi.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"
#include "report.hpp"

namespace {

using devmesh::Communicator;
using devmesh::DataType;
using devmesh::ReduceOp;
using devmesh::Request;

constexpr int layers = 6;
constexpr std::size_t shard = 1000;  // parameters of a layer held by each fsdp rank

// Parameter i of layer l (i over the whole layer), and the gradient rank g
// computes for it from the layer's full parameters.
double param(int l, std::size_t i) { return static_cast<double>((l * 7 + static_cast<int>(i % 13)) % 29); }
double grad(double p, int l, int g) { return p * (g % 3 + 1) + l; }

struct Checker {
  int rank;
  int bad = 0;
  void expect(double got, double want, const char* what, std::size_t i) {
    if (got == want) return;
    if (bad < 5) std::fprintf(stderr, "rank %d: %s[%zu] = %g, expected %g\n", rank, what, i, got, want);
    ++bad;
  }
};

// Part 1. fsdp members in group order are the parent ranks `group`.
int layer_loop(Communicator& fsdp, const std::vector<int>& group, int world_rank) {
  const int n = fsdp.size(), me = fsdp.rank();
  const std::size_t full = shard * static_cast<std::size_t>(n);
  Checker check{world_rank};
  std::vector<double> own(shard * layers);  // this rank's shard of every layer
  for (int l = 0; l < layers; ++l)
    for (std::size_t i = 0; i < shard; ++i) own[l * shard + i] = param(l, me * shard + i);

  std::array<std::vector<double>, 2> params{std::vector<double>(full), std::vector<double>(full)};
  std::array<std::vector<double>, 2> grads{std::vector<double>(full), std::vector<double>(full)};
  std::vector<double> grad_shard(shard * layers, -1.0);
  Request fetch = fsdp.iallgather(own.data(), params[0].data(), shard, DataType::float64);
  Request reduce;
  for (int l = 0; l < layers; ++l) {
    fetch.wait();  // layer l's parameters are in params[l % 2]
    if (l + 1 < layers)
      fetch = fsdp.iallgather(own.data() + (l + 1) * shard, params[(l + 1) % 2].data(), shard, DataType::float64);
    const std::vector<double>& p = params[l % 2];
    for (std::size_t i = 0; i < full; ++i) check.expect(p[i], param(l, i), "gathered parameters", i);
    // Compute this layer's gradient while layer l-1's reduce_scatter runs;
    // grads[l % 2] was layer l-2's, whose reduce_scatter has ended.
    std::vector<double>& g = grads[l % 2];
    for (std::size_t i = 0; i < full; ++i) g[i] = grad(p[i], l, world_rank);
    reduce.wait();
    reduce = fsdp.ireduce_scatter(g.data(), grad_shard.data() + l * shard, shard, DataType::float64, ReduceOp::sum);
  }
  reduce.wait();
  // Every shard: the sum over the fsdp group of each member's gradient.
  for (int l = 0; l < layers; ++l)
    for (std::size_t i = 0; i < shard; ++i) {
      double want = 0;
      for (int g : group) want += grad(param(l, me * shard + i), l, g);
      check.expect(grad_shard[l * shard + i], want, "reduced gradient shard", l * shard + i);
    }
  return check.bad;
}

// Part 2. Over every rank (world), float32 buckets of value (rank + 1) * k.
int buckets(Communicator& world, int world_rank, int& polls) {
  Checker check{world_rank};
  const int p = world.size();
  const float ranks_sum = static_cast<float>(p * (p + 1) / 2);
  constexpr std::size_t mib = (std::size_t{1} << 20) / sizeof(float);
  std::vector<float> big(mib), big_sum(mib, -1.0f);
  for (std::size_t i = 0; i < mib; ++i) big[i] = static_cast<float>((world.rank() + 1) * (i % 5));
  Request r = world.iallreduce(big.data(), big_sum.data(), mib, DataType::float32, ReduceOp::sum);
  // Compute in slices, polling between them, until it is done.
  double work = 0;
  polls = 0;
  for (;;) {
    ++polls;
    if (r.test()) break;
    for (int k = 0; k < 20000; ++k) work += k % 7;
  }
  check.expect(r.pending() ? 1 : 0, 0, "1 MiB request pending after test", 0);
  for (std::size_t i = 0; i < mib; ++i) check.expect(big_sum[i], ranks_sum * static_cast<float>(i % 5), "1 MiB sum", i);

  // Four buckets of a quarter each, in place, in flight together.
  constexpr int n_buckets = 4;
  std::vector<float> bucket[n_buckets];
  std::vector<Request> inflight;
  for (int b = 0; b < n_buckets; ++b) {
    bucket[b].assign(mib / n_buckets, static_cast<float>((world.rank() + 1) * (b + 1)));
    inflight.push_back(
        world.iallreduce(bucket[b].data(), bucket[b].data(), bucket[b].size(), DataType::float32, ReduceOp::sum));
  }
  Request::wait_all(inflight);
  for (int b = 0; b < n_buckets; ++b) {
    check.expect(inflight[b].pending() ? 1 : 0, 0, "bucket request pending after wait_all", b);
    for (std::size_t i = 0; i < bucket[b].size(); ++i)
      check.expect(bucket[b][i], ranks_sum * static_cast<float>(b + 1), "in-place bucket", i);
  }
  return check.bad + (work < 0);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    const std::string backend = argc > 1 ? argv[1] : "mpi";
    int rank = 0, world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const int dp = world % 2 == 0 ? 2 : 1;
    devmesh::MeshOptions options;
    options.dim_backends = {{"fsdp", backend}};
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {dp, world / dp}, {"dp", "fsdp"}, options);
    const devmesh::Mesh all = mesh.flatten("world", devmesh::DimBackend{backend, {}});
    int failures = example::report(mesh, mesh.names(), MPI_COMM_WORLD, "overlap mesh (dp, fsdp):");

    const int loop_bad = layer_loop(mesh.communicator("fsdp"), mesh.group("fsdp"), rank);
    example::say(MPI_COMM_WORLD,
                 "%d layers of %zu parameters per fsdp rank, fsdp on %s: prefetch by iallgather "
                 "and gradients by ireduce_scatter during compute\n",
                 layers, shard, backend.c_str());
    int polls = 0;
    const int bucket_bad = buckets(all.communicator(), rank, polls);
    example::say(MPI_COMM_WORLD,
                 "1 MiB iallreduce over all %d ranks finished after %d polls of test() on rank "
                 "0; four in-place buckets finished by wait_all\n",
                 world, polls);
    failures += loop_bad + bucket_bad;
    int wrong[2] = {loop_bad, bucket_bad}, total[2] = {0, 0};
    MPI_Allreduce(wrong, total, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    example::say(MPI_COMM_WORLD, "layer loop: %s; buckets: %s\n", total[0] ? "MISMATCHES" : "every element right",
                 total[1] ? "MISMATCHES" : "every element right");
    status = example::finish(failures, MPI_COMM_WORLD);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
