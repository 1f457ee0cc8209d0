/* 2-D mesh (replicate, shard) = (2, 4) on 8 ranks, from C: hybrid sharded
 * data parallelism. Parameters are sharded over the 4 ranks of a "shard"
 * group and replicated over the 2 ranks of a "replicate" group.
 *
 *   mpiexec -n 8 ./example_c_2d */
#include <mpi.h>
#include <stdio.h>

#include "devmesh/devmesh.h"
#include "report.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const int shape[] = {2, 4};
  const char *const names[] = {"replicate", "shard"};
  devmesh_t mesh = NULL;
  CHECK(devmesh_create(MPI_COMM_WORLD, 2, shape, names, &mesh));
  int failures = report(mesh, MPI_COMM_WORLD, "mesh (replicate, shard) = (2, 4):");

  /* A 1-D view of the shard dim reuses the root's communicator. */
  const char *const shard_only[] = {"shard"};
  devmesh_t shard = NULL;
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
  CHECK(devmesh_slice(mesh, 1, shard_only, &shard));
  CHECK(devmesh_comm(shard, NULL, &a));
  CHECK(devmesh_comm(mesh, "shard", &b));

  int rank = 0, coord[2] = {0, 0}, count = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK(devmesh_coordinate(mesh, 2, coord));
  CHECK(devmesh_comm_count(mesh, &count));
  if (rank == 0) {
    printf("mesh[\"shard\"] reuses the root's shard communicator: %s\n", a == b ? "yes" : "NO");
    printf("rank 0 sits at (replicate, shard) = (%d, %d)\n", coord[0], coord[1]);
    printf("communicators created: %d (one per dim)\n", count);
    printf("%s\n", failures == 0 && a == b ? "all groups verified" : "VERIFICATION FAILED");
  }
  CHECK(devmesh_destroy(&shard));
  CHECK(devmesh_destroy(&mesh));
  MPI_Finalize();
  return failures == 0 && a == b ? 0 : 1;
}
