/* Collectives on a mixed mesh from C: a (2, n/2) mesh (dp, tp) whose tp dim
 * runs on Gloo (TCP) and dp on MPI. A float array is summed over tp with
 * devmesh_allreduce, then over dp: the result is the sum over all ranks,
 * checked against MPI_Allreduce over the world.
 *
 *   mpiexec -n 8 example_c_collectives [TP_BACKEND]     (default gloo;
 *   the plugin is found through DEVMESH_BACKEND_PATH or <libdir>/devmesh) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "devmesh/devmesh.h"

#define N 1000

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char backends[64];
  snprintf(backends, sizeof backends, "tp=%s", argc > 1 ? argv[1] : "gloo");

  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.dim_backends = backends;            /* dp stays on MPI */
  if (argc <= 1 || strcmp(argv[1], "gloo") == 0)
    cfg.dim_options = "tp:timeout=60";    /* a Gloo option: seconds to wait for a peer */
  const int shape[2] = {size % 2 == 0 ? 2 : 1, size % 2 == 0 ? size / 2 : size};
  const char *names[2] = {"dp", "tp"};
  devmesh_t mesh = NULL;
  int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &mesh);
  if (rc != DEVMESH_SUCCESS) {
    fprintf(stderr, "rank %d: devmesh_create_ex: %s\n", rank, devmesh_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  static float x[N], tp_sum[N], total[N], expect[N];
  for (int i = 0; i < N; ++i) x[i] = (float)(rank + 1) * 0.5f + (float)(i % 7);
  int bad = 0;
  rc = devmesh_allreduce(mesh, "tp", x, tp_sum, N, DEVMESH_FLOAT32, DEVMESH_SUM, NULL);
  if (rc == DEVMESH_SUCCESS)
    rc = devmesh_allreduce(mesh, "dp", tp_sum, total, N, DEVMESH_FLOAT32, DEVMESH_SUM, NULL);
  if (rc != DEVMESH_SUCCESS) {
    fprintf(stderr, "rank %d: %s\n", rank, devmesh_last_error());
    bad = 1;
  } else {
    MPI_Allreduce(x, expect, N, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; ++i) bad += total[i] != expect[i];
  }
  int any = 0;
  MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("(%d,%d) mesh, %s, dp=mpi: sum over tp then dp of %d floats %s (x[0] total %g)\n", shape[0],
           shape[1], backends, N, any ? "WRONG" : "matches MPI_Allreduce", (double)total[0]);
  devmesh_destroy(&mesh);
  MPI_Finalize();
  return any ? 1 : 0;
}
