/* Shared by the C examples: check every call, verify a dim's communicator
 * with a real collective, print one readable line per dim from rank 0. */
#ifndef DEVMESH_EXAMPLE_REPORT_H
#define DEVMESH_EXAMPLE_REPORT_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmesh/devmesh.h"

/* A failed devmesh call prints its detail and ends the job. */
#define CHECK(call)                                                              \
  do {                                                                           \
    int status_ = (call);                                                        \
    if (status_ != DEVMESH_SUCCESS) {                                            \
      fprintf(stderr, "%s failed: %s: %s\n", #call, devmesh_status_string(status_), \
              devmesh_last_error());                                             \
      MPI_Abort(MPI_COMM_WORLD, 1);                                              \
    }                                                                            \
  } while (0)

/* Every member allgathers its parent rank over dim's communicator; the
 * result must be the group devmesh reports. Returns the number of ranks of
 * parent whose check failed (the same on every rank). */
static int verify_dim(devmesh_t mesh, const char *dim, MPI_Comm parent) {
  int n = 0, me = 0, bad = 0, total = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK(devmesh_size(mesh, dim, &n));
  CHECK(devmesh_comm(mesh, dim, &comm));
  int *expect = malloc(sizeof(int) * (size_t)n);
  int *got = malloc(sizeof(int) * (size_t)n);
  if (!expect || !got) MPI_Abort(MPI_COMM_WORLD, 2);
  CHECK(devmesh_group_ranks(mesh, dim, n, expect));
  MPI_Comm_rank(parent, &me);
  MPI_Allgather(&me, 1, MPI_INT, got, 1, MPI_INT, comm);
  bad = memcmp(expect, got, sizeof(int) * (size_t)n) != 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, parent);
  free(expect);
  free(got);
  return total;
}

/* Verifies each of the view's dims and prints, from rank 0 of parent,
 * "  name  size  groups  verified". Returns the number of failed checks. */
static int report(devmesh_t mesh, MPI_Comm parent, const char *title) {
  int rank = 0, ndim = 0, w = 0, failures = 0;
  MPI_Comm_rank(parent, &rank);
  CHECK(devmesh_ndim(mesh, &ndim));
  CHECK(devmesh_root_size(mesh, &w));
  int *all = malloc(sizeof(int) * (size_t)w);
  if (!all) MPI_Abort(MPI_COMM_WORLD, 2);
  if (rank == 0) printf("%s\n", title);
  for (int d = 0; d < ndim; ++d) {
    const char *name = NULL;
    int n = 0;
    CHECK(devmesh_dim_name(mesh, d, &name));
    CHECK(devmesh_size(mesh, name, &n));
    const int bad = verify_dim(mesh, name, parent);
    failures += bad;
    CHECK(devmesh_all_groups(mesh, name, w, all));
    if (rank == 0) {
      printf("  %-16s size %-3d groups ", name, n);
      for (int i = 0; i < w; ++i) printf("%s%d%s", i % n == 0 ? "[" : ",", all[i], i % n == n - 1 ? "] " : "");
      printf("%s\n", bad ? "FAILED" : "verified by allgather");
    }
  }
  free(all);
  return failures;
}

#endif
