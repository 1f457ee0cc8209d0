/* A C program built against an installed devmesh (pkg-config or CMake):
 * a (2, n/2) mesh; every rank checks its tp group with an allgather. */
#include <devmesh/devmesh.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int shape[] = {2, 0};
  const char *const names[] = {"dp", "tp"};
  devmesh_t mesh = NULL;
  if (devmesh_create(MPI_COMM_WORLD, 2, shape, names, &mesh) != DEVMESH_SUCCESS) {
    fprintf(stderr, "devmesh_create: %s\n", devmesh_last_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int n = 0, group[64], got[64];
  MPI_Comm tp = MPI_COMM_NULL;
  devmesh_size(mesh, "tp", &n);
  devmesh_group_ranks(mesh, "tp", 64, group);
  devmesh_comm(mesh, "tp", &tp);
  MPI_Allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, tp);
  int bad = memcmp(group, got, sizeof(int) * (size_t)n) != 0, total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int major = 0, minor = 0, patch = 0;
  devmesh_version(&major, &minor, &patch);
  if (rank == 0)
    printf("c consumer: devmesh %d.%d.%d, tp group of rank 0 has %d ranks: %s\n", major, minor, patch, n,
           total == 0 ? "ok" : "WRONG");
  devmesh_destroy(&mesh);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
