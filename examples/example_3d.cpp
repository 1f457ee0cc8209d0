// 3-D mesh (replicate, shard, tp) on 8 ranks: HSDP with tensor parallelism.
// mesh[{"replicate","shard"}] and mesh["tp"] are views that reuse the
// root's communicators; flattening (replicate, shard) gives the data-
// parallel group a gradient all-reduce runs over.
//
//   mpiexec -n 8 ./example_3d
#include <mpi.h>

#include <cstdio>

#include "devmesh/mesh.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int failures = 0;
  try {
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {2, 2, 0}, {"replicate", "shard", "tp"});
    failures += example::report(mesh, mesh.names(), MPI_COMM_WORLD, "mesh (replicate, shard, tp):");

    devmesh::Mesh dp = mesh[{"replicate", "shard"}];   // 2-D sub-mesh, no new communicator
    devmesh::Mesh tp = mesh["tp"];
    const bool reused = dp.comm("shard") == mesh.comm("shard") && tp.comm() == mesh.comm("tp");
    devmesh::Mesh dp_flat = dp.flatten();              // "replicate_shard", one new communicator
    failures += example::report(dp_flat, {"replicate_shard"}, MPI_COMM_WORLD, "flattened data parallel:");

    // A real collective on the data-parallel group through the backend.
    double grad = mesh.parent_rank(), sum = 0;
    dp_flat.communicator().allreduce(&grad, &sum, 1, devmesh::DataType::float64, devmesh::ReduceOp::sum);
    double expect = 0;
    for (int r : dp_flat.group("replicate_shard")) expect += r;
    failures += sum != expect;

    int rank = mesh.parent_rank();
    const auto c = mesh.coordinate();
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("sub-meshes reuse the parent's communicators: %s\n", reused ? "yes" : "NO");
      std::printf("rank 0 sits at (replicate, shard, tp) = (%d, %d, %d)\n", c[0], c[1], c[2]);
      std::printf("communicators created: %d (3 dims + 1 flattened)\n", mesh.comm_count());
      std::printf("%s\n", total == 0 && reused ? "all groups verified" : "VERIFICATION FAILED");
    }
    failures = total + !reused;
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
    failures = 1;
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
