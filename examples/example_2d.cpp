// 2-D mesh (replicate, shard) on 8 ranks: the (2,4) mesh of FSDP-style
// hybrid sharding, and its two groups. Three lines of devmesh replace the
// hand-written MPI_Comm_split arithmetic below.
//
//   mpiexec -n 8 ./example_2d
//
// What this replaces: the seed tutorial's code for the same two groups.
//
//   int world_rank = 0, world_size = 0;
//   MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
//   MPI_Comm_size(MPI_COMM_WORLD, &world_size);
//   const int n_replicate = 2;
//   if (world_size % n_replicate != 0) {
//     if (world_rank == 0) fprintf(stderr, "world size must be a multiple of 2\n");
//     MPI_Abort(MPI_COMM_WORLD, 1);             // the other ranks hang without it
//   }
//   const int n_shard = world_size / n_replicate;
//   // Row-major placement: the last dim (shard) varies fastest, so ranks
//   // 0..n_shard-1 are replica 0, the next n_shard ranks replica 1, ...
//   const int replicate_coord = world_rank / n_shard;
//   const int shard_coord = world_rank % n_shard;
//
//   // The shard group: same replica, all shard positions, ordered by shard
//   // position (the key decides the rank order in the new communicator).
//   MPI_Comm shard_comm = MPI_COMM_NULL;
//   int rc = MPI_Comm_split(MPI_COMM_WORLD, /*color=*/replicate_coord,
//                           /*key=*/shard_coord, &shard_comm);
//   if (rc != MPI_SUCCESS) { /* MPI_Error_string, MPI_Abort ... */ }
//
//   // The replicate group: same shard position, one rank per replica.
//   MPI_Comm replicate_comm = MPI_COMM_NULL;
//   rc = MPI_Comm_split(MPI_COMM_WORLD, /*color=*/shard_coord,
//                       /*key=*/replicate_coord, &replicate_comm);
//   if (rc != MPI_SUCCESS) { /* ... */ }
//
//   // The groups as world ranks, to log them or to hand them to NCCL:
//   std::vector<int> shard_group(n_shard), replicate_group(n_replicate);
//   for (int k = 0; k < n_shard; ++k) shard_group[k] = replicate_coord * n_shard + k;
//   for (int k = 0; k < n_replicate; ++k) replicate_group[k] = k * n_shard + shard_coord;
//
//   // Every rank must run both splits in the same order with consistent
//   // n_replicate, or the job hangs; the colours of a third dim, a
//   // flattened group or a transposed order are more of the same, and
//   // each MPI_Comm_split is a collective over the whole world.
//   ...
//   MPI_Comm_free(&replicate_comm);
//   MPI_Comm_free(&shard_comm);
//
// With devmesh: one create (which also checks that every rank passed the
// same shape and names), then ask for the dims. Only the caller's groups
// are created, each over just its own members.
#include <mpi.h>

#include <cstdio>

#include "devmesh/mesh.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {2, 0}, {"replicate", "shard"});
    int failures = example::report(mesh, mesh.names(), MPI_COMM_WORLD, "mesh (replicate, shard):");

    // The coordinate and local ranks are what the hand-written code computed.
    const auto c = mesh.coordinate();
    const int shard_size = mesh.size("shard");
    failures += example::check(c[0] == mesh.parent_rank() / shard_size && c[1] == mesh.parent_rank() % shard_size);
    failures += example::check(mesh.local_rank("shard") == c[1] && mesh.local_rank("replicate") == c[0]);

    // A parameter sharded over "shard", replicated over "replicate": each
    // rank owns one shard; an allgather over the shard group rebuilds the
    // whole parameter, an allreduce over replicate averages the replicas.
    const double mine = 10.0 * c[1] + 1.0;
    std::vector<double> full(static_cast<std::size_t>(shard_size));
    mesh.communicator("shard").allgather(&mine, full.data(), 1, devmesh::DataType::float64);
    for (int k = 0; k < shard_size; ++k) failures += example::check(full[static_cast<std::size_t>(k)] == 10.0 * k + 1.0);
    double sum = 0;
    mesh.communicator("replicate").allreduce(&mine, &sum, 1, devmesh::DataType::float64, devmesh::ReduceOp::sum);
    failures += example::check(sum == mesh.size("replicate") * mine);

    example::say(MPI_COMM_WORLD, "rank 0 sits at (replicate, shard) = (%d, %d)\n", c[0], c[1]);
    example::say(MPI_COMM_WORLD, "allgather over shard rebuilt the parameter, allreduce over replicate summed %d replicas\n",
                 mesh.size("replicate"));
    example::say(MPI_COMM_WORLD, "communicators created: %d (one per dim)\n", mesh.comm_count());
    failures += example::check(mesh.comm_count() == 2);
    status = example::finish(failures, MPI_COMM_WORLD);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
