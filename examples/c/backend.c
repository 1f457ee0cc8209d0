/* Picks the backend of a (dp, tp) mesh from the command line:
 *   mpiexec -n 4 ./example_c_backend mpi      every dim on MPI
 *   mpiexec -n 4 ./example_c_backend nccl     every dim on NCCL (needs GPUs)
 *   mpiexec -n 4 ./example_c_backend hybrid   dp on MPI, tp on NCCL
 * Exits 0 on success, 3 when the backend is not supported here (the
 * message says why), 1 on any other failure. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "devmesh/devmesh.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *which = argc > 1 ? argv[1] : "mpi";

  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  if (strcmp(which, "hybrid") == 0) {
    cfg.dim_backends = "tp=nccl";
  } else {
    cfg.backend = which;
  }
  int shape[2] = {0, 1};
  const char *names[2] = {"dp", "tp"};
  devmesh_t mesh = NULL;
  int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &mesh);
  if (rc == DEVMESH_SUCCESS) {
    /* An MPI all-reduce over dp, whatever backend tp runs on. */
    MPI_Comm dp;
    rc = devmesh_comm(mesh, "dp", &dp);
    int one = 1, total = 0;
    if (rc == DEVMESH_SUCCESS) MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, dp);
    if (rc == DEVMESH_SUCCESS && total != size) rc = DEVMESH_ERR_INTERNAL;
  }
  if (rank == 0) {
    if (rc == DEVMESH_SUCCESS)
      printf("backend %s: mesh created, dp all-reduce over %d ranks verified\n", which, size);
    else
      printf("backend %s: %s: %s\n", which, devmesh_status_string(rc), devmesh_last_error());
  }
  devmesh_destroy(&mesh);
  MPI_Finalize();
  return rc == DEVMESH_SUCCESS ? 0 : rc == DEVMESH_ERR_UNSUPPORTED ? 3 : 1;
}
