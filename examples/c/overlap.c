/* Started collectives from C: a 1 MiB devmesh_iallreduce over every rank
 * polled with devmesh_test while the rank computes, then four gradient
 * buckets reduced in place (sendbuf == recvbuf), in flight together and
 * finished by devmesh_waitall, then a devmesh_ialltoallv with uneven counts
 * (some zero) whose result must equal the blocking devmesh_alltoallv's.
 * Every request must read DEVMESH_REQUEST_NULL once it has ended, and every
 * element is checked against its closed form.
 *
 *   mpiexec -n 8 example_c_overlap [BACKEND]     (of the flattened dim: mpi, the default, or gloo) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmesh/devmesh.h"
#include "report.h"

#define MIB_FLOATS (1 << 18) /* 1 MiB of float */
#define BUCKETS 4

static int polled_sum(devmesh_t all, int rank, int size, int *polls) {
  float *x = malloc(sizeof(float) * MIB_FLOATS), *sum = malloc(sizeof(float) * MIB_FLOATS);
  if (!x || !sum) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int i = 0; i < MIB_FLOATS; ++i) x[i] = (float)((rank + 1) * (i % 5));
  devmesh_request_t r = DEVMESH_REQUEST_NULL;
  CHECK(devmesh_iallreduce(all, "world", x, sum, MIB_FLOATS, DEVMESH_FLOAT32, DEVMESH_SUM, NULL, &r));
  double work = 0;
  int done = 0, bad = 0;
  for (*polls = 0; !done; ++*polls) {
    CHECK(devmesh_test(&r, &done));
    for (int k = 0; k < 20000; ++k) work += k % 7; /* compute between polls */
  }
  bad += r != DEVMESH_REQUEST_NULL;
  const float ranks = (float)(size * (size + 1) / 2);
  for (int i = 0; i < MIB_FLOATS; ++i) bad += sum[i] != ranks * (float)(i % 5);
  free(x);
  free(sum);
  return bad + (work < 0);
}

static int in_place_buckets(devmesh_t all, int rank, int size) {
  const int n = MIB_FLOATS / BUCKETS;
  float *b = malloc(sizeof(float) * MIB_FLOATS);
  if (!b) MPI_Abort(MPI_COMM_WORLD, 2);
  devmesh_request_t r[BUCKETS];
  for (int k = 0; k < BUCKETS; ++k) {
    for (int i = 0; i < n; ++i) b[k * n + i] = (float)((rank + 1) * (k + 1));
    CHECK(devmesh_iallreduce(all, "world", b + k * n, b + k * n, (size_t)n, DEVMESH_FLOAT32, DEVMESH_SUM, NULL, &r[k]));
  }
  CHECK(devmesh_waitall(BUCKETS, r));
  int bad = 0;
  const float ranks = (float)(size * (size + 1) / 2);
  for (int k = 0; k < BUCKETS; ++k) {
    bad += r[k] != DEVMESH_REQUEST_NULL;
    for (int i = 0; i < n; ++i) bad += b[k * n + i] != ranks * (float)(k + 1);
  }
  free(b);
  return bad;
}

/* Rank s sends (s + d) % 3 numbers to rank d: 0, 1 or 2, packed. */
static int uneven_alltoallv(devmesh_t all, int rank, int size) {
  size_t *c = calloc(4 * (size_t)size, sizeof(size_t));
  double *send = malloc(sizeof(double) * 2 * (size_t)size + 1), *got = malloc(sizeof(double) * 2 * (size_t)size + 1),
         *started = malloc(sizeof(double) * 2 * (size_t)size + 1);
  if (!c || !send || !got || !started) MPI_Abort(MPI_COMM_WORLD, 2);
  size_t *sc = c, *sd = c + size, *rc = c + 2 * size, *rd = c + 3 * size, so = 0, ro = 0;
  for (int d = 0; d < size; ++d) {
    sc[d] = (size_t)((rank + d) % 3), sd[d] = so;
    for (size_t i = 0; i < sc[d]; ++i) send[so + i] = 100.0 * rank + 10.0 * d + (double)i;
    so += sc[d];
    rc[d] = (size_t)((d + rank) % 3), rd[d] = ro, ro += rc[d];
  }
  CHECK(devmesh_alltoallv(all, "world", send, sc, sd, got, rc, rd, DEVMESH_FLOAT64, NULL));
  devmesh_request_t r = DEVMESH_REQUEST_NULL;
  CHECK(devmesh_ialltoallv(all, "world", send, sc, sd, started, rc, rd, DEVMESH_FLOAT64, NULL, &r));
  CHECK(devmesh_wait(&r));
  int bad = r != DEVMESH_REQUEST_NULL;
  for (int s = 0; s < size; ++s)
    for (size_t i = 0; i < rc[s]; ++i) {
      const double want = 100.0 * s + 10.0 * rank + (double)i;
      bad += got[rd[s] + i] != want;
      bad += started[rd[s] + i] != want;
    }
  free(c);
  free(send);
  free(got);
  free(started);
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int shape[2] = {size % 2 == 0 ? 2 : 1, size % 2 == 0 ? size / 2 : size};
  const char *names[2] = {"dp", "tp"};
  devmesh_t mesh = NULL, all = NULL;
  CHECK(devmesh_create(MPI_COMM_WORLD, 2, shape, names, &mesh));
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.backend = argc > 1 ? argv[1] : "mpi";
  CHECK(devmesh_flatten_ex(mesh, "world", &cfg, &all));
  const int groups_bad = report(mesh, MPI_COMM_WORLD, "mesh (dp, tp):");

  int polls = 0;
  const int wrong[3] = {polled_sum(all, rank, size, &polls), in_place_buckets(all, rank, size),
                        uneven_alltoallv(all, rank, size)};
  int total[3] = {0, 0, 0};
  MPI_Allreduce(wrong, total, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("(%d,%d) mesh, flattened to world on %s:\n", shape[0], shape[1], cfg.backend);
    printf("  1 MiB devmesh_iallreduce polled with devmesh_test (%d polls on rank 0): %s\n", polls,
           total[0] ? "WRONG" : "every element right, request NULL");
    printf("  %d in-place buckets finished by devmesh_waitall: %s\n", BUCKETS,
           total[1] ? "WRONG" : "every element right, requests NULL");
    printf("  devmesh_ialltoallv with counts 0..2 against devmesh_alltoallv: %s\n",
           total[2] ? "WRONG" : "every element right, request NULL");
  }
  devmesh_destroy(&all);
  devmesh_destroy(&mesh);
  MPI_Finalize();
  return total[0] + total[1] + total[2] + groups_bad ? 1 : 0;
}
