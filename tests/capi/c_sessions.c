/* devmesh_create_from_group(_f) under the MPI Sessions model, without
 * MPI_Init: groups against a brute force (row-major) over the group's
 * ranks, communicators against MPI (MPI_Allreduce); with an MPI without
 * MPI_Comm_create_from_group (DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP, from
 * the build), DEVMESH_ERR_UNSUPPORTED on every rank and the output
 * untouched. */
#include <mpi.h>
#include <stdio.h>

#include "c_check.h"
#include "devmesh/devmesh.h"

static int n = 1;

#if DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP
/* A (n/b, b) mesh; its tp and dp groups and communicators. */
static void check_2d(MPI_Group group, int b) {
  const int a = n / b;
  const char *names[] = {"dp", "tp"};
  const int shape[] = {a, b};
  devmesh_t m = NULL;
  int rc = devmesh_create_from_group(group, "c-sessions", 2, shape, names, NULL, &m);
  CHECK(rc == DEVMESH_SUCCESS && m, "create_from_group returned %d", rc);
  if (!m) return;
  int ranks[16], count = -1;
  devmesh_comm_count(m, &count);
  CHECK(count == 1, "comm_count %d", count);
  devmesh_group_ranks(m, "dp", 16, ranks);
  for (int k = 0; k < a; ++k) CHECK(ranks[k] == k * b + me % b, "dp[%d] = %d", k, ranks[k]);
  devmesh_group_ranks(m, "tp", 16, ranks);
  for (int k = 0; k < b; ++k) CHECK(ranks[k] == (me / b) * b + k, "tp[%d] = %d", k, ranks[k]);
  MPI_Comm c = MPI_COMM_NULL;
  devmesh_comm(m, "dp", &c);
  int sum = -1, want = 0;
  for (int k = 0; k < a; ++k) want += k * b + me % b;
  CHECK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS && sum == want, "dp sum %d", sum);
  devmesh_destroy(&m);
}
#endif

int main(void) {
#if DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP
  MPI_Session session;
  MPI_Group group;
  if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) return 2;
  if (MPI_Group_from_session_pset(session, "mpi://WORLD", &group) != MPI_SUCCESS) return 2;
  MPI_Group_rank(group, &me);
  MPI_Group_size(group, &n);
  check_2d(group, n);
  check_2d(group, n % 2 == 0 ? 2 : n);
  /* An error: the same status everywhere, the output untouched. */
  devmesh_t sentinel = (devmesh_t)&failures, out = sentinel;
  const char *names[] = {"x"};
  const int bad[] = {n + 1};
  int rc = devmesh_create_from_group(group, "c-sessions-bad", 1, bad, names, NULL, &out);
  CHECK(rc == DEVMESH_ERR_SHAPE_MISMATCH && out == sentinel, "bad shape: %d", rc);
  MPI_Comm own;
  MPI_Comm_create_from_group(group, "c-sessions-own", MPI_INFO_NULL, MPI_ERRORS_RETURN, &own);
  int lo = 0, hi = 0, worst = 0;
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, own);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, own);
  CHECK(lo == hi, "statuses differ between ranks");
  /* A problem only the C layer sees, on rank 0 only (names NULL): every
   * rank fails alike instead of waiting. */
  const int fits[] = {n};
  rc = devmesh_create_from_group(group, "c-sessions-c", 1, fits, me == 0 ? NULL : names, NULL, &out);
  CHECK(rc == (n > 1 ? DEVMESH_ERR_INCONSISTENT : DEVMESH_ERR_INVALID_ARGUMENT) && out == sentinel,
        "names NULL on rank 0: %d", rc);
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, own);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, own);
  CHECK(lo == hi, "statuses differ between ranks (names NULL on rank 0)");
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, own);
  MPI_Comm_free(&own);
  MPI_Group_free(&group);
  MPI_Session_finalize(&session);
  return worst == 0 ? 0 : 1;
#else
  MPI_Init(NULL, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Group group;
  MPI_Comm_group(MPI_COMM_WORLD, &group);
  devmesh_t sentinel = (devmesh_t)&failures, out = sentinel;
  const char *names[] = {"x"};
  const int shape[] = {n};
  int rc = devmesh_create_from_group(group, "c-sessions", 1, shape, names, NULL, &out);
  CHECK(rc == DEVMESH_ERR_UNSUPPORTED && out == sentinel, "status %d", rc);
  MPI_Group_free(&group);
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
#endif
}
