/* An HSDP training loop that loses a rank and finishes without it, in C
 * (the C++ example_elastic.cpp explains the loop).
 *
 *   mpirun --with-ft ulfm -n 8 example_c_elastic [STEPS] [VICTIM] [DEATH_STEP]
 *
 * A (replicate=4, shard=2) mesh made with fault_tolerance; at DEATH_STEP
 * rank VICTIM dies. The survivors' collectives return
 * DEVMESH_ERR_PROC_FAILED or DEVMESH_ERR_REVOKED; they shrink the mesh
 * along replicate, agree on the earliest step a survivor failed and redo
 * it (a rank that had completed it goes back). Each rank that finishes
 * checks its parameters against the closed form and prints one line; the
 * dead rank's partner becomes a spare. */
#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmesh/devmesh.h"

#define PARAMS 1024

/* One step: the shard's gradient sum, averaged over the replicas. */
static int step(devmesh_t mesh, int s, double w[]) {
  static double grad[PARAMS], sum[PARAMS];
  int coord[2], replicas = 0, rc;
  if ((rc = devmesh_coordinate(mesh, 2, coord)) != DEVMESH_SUCCESS) return rc;
  for (int i = 0; i < PARAMS; ++i) grad[i] = (s + 1) * (coord[1] + 1);
  rc = devmesh_allreduce(mesh, "shard", grad, sum, PARAMS, DEVMESH_FLOAT64, DEVMESH_SUM, NULL);
  if (rc == DEVMESH_SUCCESS)
    rc = devmesh_allreduce(mesh, "replicate", sum, grad, PARAMS, DEVMESH_FLOAT64, DEVMESH_SUM, NULL);
  if (rc == DEVMESH_SUCCESS) rc = devmesh_size(mesh, "replicate", &replicas);
  if (rc != DEVMESH_SUCCESS) return rc;
  for (int i = 0; i < PARAMS; ++i) w[i] -= 0.01 * grad[i] / replicas;
  return DEVMESH_SUCCESS;
}

static int fail(int rank, const char *what, int rc) {
  fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, what, devmesh_status_string(rc), devmesh_last_error());
  MPI_Finalize();
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int steps = argc > 1 ? atoi(argv[1]) : 10;
  const int victim = argc > 2 ? atoi(argv[2]) : 5;
  const int death = argc > 3 ? atoi(argv[3]) : steps / 2;

  devmesh_config_t config = DEVMESH_CONFIG_INITIALIZER;
  config.fault_tolerance = 1;
  const int shape[] = {4, 2};
  const char *names[] = {"replicate", "shard"};
  devmesh_t mesh = NULL;
  int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &config, &mesh);
  if (rc != DEVMESH_SUCCESS) return fail(rank, "devmesh_create_ex", rc);

  /* w: the parameters; last: w before the last step this rank completed. */
  static double w[PARAMS], last[PARAMS], before[PARAMS];
  for (int i = 0; i < PARAMS; ++i) w[i] = last[i] = 1.0;
  int shrinks = 0;
  for (int s = 0; s < steps;) {
    if (s == death && rank == victim) raise(SIGKILL);
    memcpy(before, w, sizeof w);
    rc = step(mesh, s, w); /* w changes only once both allreduces succeeded */
    if (rc == DEVMESH_SUCCESS) {
      memcpy(last, before, sizeof w);
      ++s;
      continue;
    }
    if (rc != DEVMESH_ERR_PROC_FAILED && rc != DEVMESH_ERR_REVOKED) return fail(rank, "a step", rc);
    /* Every survivor gets here: shrink along replicate. */
    devmesh_t smaller = NULL;
    if ((rc = devmesh_shrink(mesh, "replicate", &smaller)) != DEVMESH_SUCCESS) return fail(rank, "devmesh_shrink", rc);
    int failed[8], nfailed = 0;
    if ((rc = devmesh_failed_ranks(mesh, 8, failed, &nfailed)) != DEVMESH_SUCCESS)
      return fail(rank, "devmesh_failed_ranks", rc);
    devmesh_destroy(&mesh); /* revoked, still destroyed cleanly */
    if (!smaller) {
      printf("rank %d: spare after the shrink (failed root indices:", rank);
      for (int i = 0; i < nfailed; ++i) printf(" %d", failed[i]);
      printf(")\n");
      MPI_Finalize();
      return 0;
    }
    /* A collective can complete on some members and fail on others, so
     * survivors may be a step apart: the earliest step a survivor failed
     * (a minimum along both dims is one over the mesh) is redone by all,
     * and a rank that completed it goes back to its parameters before it. */
    int along = s, first = s;
    rc = devmesh_allreduce(smaller, "replicate", &s, &along, 1, DEVMESH_INT32, DEVMESH_MIN, NULL);
    if (rc == DEVMESH_SUCCESS)
      rc = devmesh_allreduce(smaller, "shard", &along, &first, 1, DEVMESH_INT32, DEVMESH_MIN, NULL);
    if (rc != DEVMESH_SUCCESS) return fail(rank, "agreeing on the step", rc);
    if (first < s) {
      memcpy(w, last, sizeof w);
      s = first;
    }
    mesh = smaller;
    ++shrinks;
  }
  double want = 1.0;
  for (int s = 0; s < steps; ++s) want -= 0.01 * 3 * (s + 1);
  int ok = 1;
  for (int i = 0; i < PARAMS; ++i) ok = ok && fabs(w[i] - want) < 1e-9;
  int replicas = 0, shards = 0;
  devmesh_size(mesh, "replicate", &replicas);
  devmesh_size(mesh, "shard", &shards);
  printf("rank %d: finished %d steps on a (%d, %d) mesh after %d shrink(s), parameters %s\n", rank, steps, replicas,
         shards, shrinks, ok ? "correct" : "WRONG");
  devmesh_destroy(&mesh);
  MPI_Finalize();
  return ok ? 0 : 1;
}
