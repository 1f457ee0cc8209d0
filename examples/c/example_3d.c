/* 3-D mesh (replicate, shard, tp) = (2, 2, 2) on 8 ranks, from C: HSDP with
 * tensor parallelism. The (replicate, shard) sub-mesh flattened is the data
 * parallel group a gradient all-reduce runs over.
 *
 *   mpiexec -n 8 ./example_c_3d */
#include <mpi.h>
#include <stdio.h>

#include "devmesh/devmesh.h"
#include "report.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int shape[] = {2, 2, 2};
  const char *const names[] = {"replicate", "shard", "tp"};
  devmesh_t mesh = NULL;
  CHECK(devmesh_create(MPI_COMM_WORLD, 3, shape, names, &mesh));
  int failures = report(mesh, MPI_COMM_WORLD, "mesh (replicate, shard, tp) = (2, 2, 2):");

  /* mesh[("replicate", "shard")] flattened: the data-parallel group. */
  const char *const dp_dims[] = {"replicate", "shard"};
  devmesh_t dp = NULL, dp_flat = NULL;
  CHECK(devmesh_slice(mesh, 2, dp_dims, &dp));
  CHECK(devmesh_flatten(dp, NULL, &dp_flat)); /* named "replicate_shard" */
  failures += report(dp_flat, MPI_COMM_WORLD, "flattened data parallel:");

  /* A gradient all-reduce over the data-parallel communicator. */
  MPI_Comm dp_comm = MPI_COMM_NULL;
  int rank = 0, group[4], n = 0;
  CHECK(devmesh_comm(dp_flat, NULL, &dp_comm));
  CHECK(devmesh_size(dp_flat, NULL, &n));
  CHECK(devmesh_group_ranks(dp_flat, NULL, 4, group));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double grad = rank, sum = 0, expect = 0;
  MPI_Allreduce(&grad, &sum, 1, MPI_DOUBLE, MPI_SUM, dp_comm);
  for (int i = 0; i < n; ++i) expect += group[i];
  int bad = sum != expect, total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  failures += total;

  int coord[3] = {0, 0, 0}, count = 0;
  CHECK(devmesh_coordinate(mesh, 3, coord));
  CHECK(devmesh_comm_count(mesh, &count));
  if (rank == 0) {
    printf("gradient all-reduce over replicate_shard: %s\n", total ? "WRONG" : "correct");
    printf("rank 0 sits at (replicate, shard, tp) = (%d, %d, %d)\n", coord[0], coord[1], coord[2]);
    printf("communicators created: %d (3 dims + 1 flattened)\n", count);
    printf("%s\n", failures == 0 ? "all groups verified" : "VERIFICATION FAILED");
  }
  /* Handles may go in any order; the last one frees the communicators. */
  CHECK(devmesh_destroy(&mesh));
  CHECK(devmesh_destroy(&dp));
  CHECK(devmesh_destroy(&dp_flat));
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
