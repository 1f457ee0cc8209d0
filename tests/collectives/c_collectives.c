/* The C API's collectives over a (2, n/2) mesh (n odd: (1, n)) whose tp dim
 * runs on the backend named by argv[1] and whose dp dim on argv[2] (default
 * "mpi"), checked against MPI's own results on the dims' MPI communicators:
 * every function, in place, and every error (recvbuf untouched).
 *
 *   c_collectives TP_BACKEND [DP_BACKEND [TP_OPTIONS]]
 *
 * Prints "FAIL ..." lines and exits non-zero on any mismatch. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmesh/devmesh.h"

static int failures = 0;
static int world_rank = 0;

#define CHECK(cond, ...)                                             \
  do {                                                               \
    if (!(cond)) {                                                   \
      ++failures;                                                    \
      fprintf(stderr, "FAIL rank %d line %d: ", world_rank, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fprintf(stderr, " [%s]\n", devmesh_last_error());              \
    }                                                                \
  } while (0)

#define CALL(expr)                                                              \
  do {                                                                          \
    int rc_ = (expr);                                                           \
    CHECK(rc_ == DEVMESH_SUCCESS, "%s returned %d", #expr, rc_);                \
  } while (0)

static MPI_Comm comm_of(devmesh_t m, const char *dim) {
  MPI_Comm c = MPI_COMM_NULL;
  CALL(devmesh_comm(m, dim, &c));
  return c;
}

static void check_dim(devmesh_t m, const char *dim) {
  MPI_Comm c = comm_of(m, dim);
  int r = 0, n = 0;
  MPI_Comm_rank(c, &r);
  MPI_Comm_size(c, &n);
  enum { N = 37 };
  float fs[N], fr[N], fref[N];
  double ds[N], dr[N], dref[N];
  int32_t is[N], ir[N], iref[N];
  uint8_t us[N], ur[N], uref[N];
  for (int i = 0; i < N; ++i) {
    fs[i] = (float)((world_rank * 7 + i * 3) % 11) - 5.0f;
    ds[i] = (double)((world_rank * 5 + i) % 13) * 0.5;
    is[i] = (world_rank * 31 + i * 17) % 101 - 50;
    us[i] = (uint8_t)(((world_rank + i) % 3 == 0) ? 2 : 1);
  }
  /* allreduce: four types, four ops */
  CALL(devmesh_allreduce(m, dim, fs, fr, N, DEVMESH_FLOAT32, DEVMESH_SUM, NULL));
  MPI_Allreduce(fs, fref, N, MPI_FLOAT, MPI_SUM, c);
  CHECK(memcmp(fr, fref, sizeof fr) == 0, "%s allreduce float32 sum", dim);
  CALL(devmesh_allreduce(m, dim, ds, dr, N, DEVMESH_FLOAT64, DEVMESH_MIN, NULL));
  MPI_Allreduce(ds, dref, N, MPI_DOUBLE, MPI_MIN, c);
  CHECK(memcmp(dr, dref, sizeof dr) == 0, "%s allreduce float64 min", dim);
  CALL(devmesh_allreduce(m, dim, is, ir, N, DEVMESH_INT32, DEVMESH_MAX, NULL));
  MPI_Allreduce(is, iref, N, MPI_INT32_T, MPI_MAX, c);
  CHECK(memcmp(ir, iref, sizeof ir) == 0, "%s allreduce int32 max", dim);
  CALL(devmesh_allreduce(m, dim, us, ur, N, DEVMESH_UINT8, DEVMESH_PROD, NULL));
  MPI_Allreduce(us, uref, N, MPI_UINT8_T, MPI_PROD, c);
  CHECK(memcmp(ur, uref, sizeof ur) == 0, "%s allreduce uint8 prod", dim);
  /* in place */
  memcpy(fr, fs, sizeof fs);
  CALL(devmesh_allreduce(m, dim, fr, fr, N, DEVMESH_FLOAT32, DEVMESH_SUM, NULL));
  CHECK(memcmp(fr, fref, sizeof fr) == 0, "%s allreduce in place", dim);

  /* allgather, reduce_scatter, alltoall: n blocks */
  int32_t *all = malloc(sizeof(int32_t) * N * (size_t)n), *ref = malloc(sizeof(int32_t) * N * (size_t)n);
  int32_t *big = malloc(sizeof(int32_t) * N * (size_t)n), *bigref = malloc(sizeof(int32_t) * N * (size_t)n);
  CALL(devmesh_allgather(m, dim, is, all, N, DEVMESH_INT32, NULL));
  MPI_Allgather(is, N, MPI_INT32_T, ref, N, MPI_INT32_T, c);
  CHECK(memcmp(all, ref, sizeof(int32_t) * N * (size_t)n) == 0, "%s allgather", dim);
  memset(all, 0, sizeof(int32_t) * N * (size_t)n);
  memcpy(all + (size_t)r * N, is, sizeof is);
  CALL(devmesh_allgather(m, dim, all + (size_t)r * N, all, N, DEVMESH_INT32, NULL));
  CHECK(memcmp(all, ref, sizeof(int32_t) * N * (size_t)n) == 0, "%s allgather in place", dim);

  for (int i = 0; i < N * n; ++i) big[i] = (world_rank * 3 + i) % 17 - 8;
  CALL(devmesh_reduce_scatter(m, dim, big, ir, N, DEVMESH_INT32, DEVMESH_SUM, NULL));
  MPI_Reduce_scatter_block(big, iref, N, MPI_INT32_T, MPI_SUM, c);
  CHECK(memcmp(ir, iref, sizeof ir) == 0, "%s reduce_scatter", dim);
  CALL(devmesh_reduce_scatter(m, dim, big, big, N, DEVMESH_INT32, DEVMESH_SUM, NULL));
  CHECK(memcmp(big, iref, sizeof iref) == 0, "%s reduce_scatter in place", dim);

  for (int i = 0; i < N * n; ++i) big[i] = world_rank * 1000 + i;
  CALL(devmesh_alltoall(m, dim, big, all, N, DEVMESH_INT32, NULL));
  MPI_Alltoall(big, N, MPI_INT32_T, bigref, N, MPI_INT32_T, c);
  CHECK(memcmp(all, bigref, sizeof(int32_t) * N * (size_t)n) == 0, "%s alltoall", dim);

  /* broadcast from every root */
  for (int root = 0; root < n; ++root) {
    for (int i = 0; i < N; ++i) dr[i] = dref[i] = world_rank * 100.0 + i + root;
    CALL(devmesh_broadcast(m, dim, dr, N, DEVMESH_FLOAT64, root, NULL));
    MPI_Bcast(dref, N, MPI_DOUBLE, root, c);
    CHECK(memcmp(dr, dref, sizeof dr) == 0, "%s broadcast root %d", dim, root);
  }
  CALL(devmesh_barrier(m, dim, NULL));

  /* send/recv around the ring (even ranks send first) */
  if (n > 1) {
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    int32_t got[N];
    if (r % 2 == 0) {
      CALL(devmesh_send(m, dim, is, N, DEVMESH_INT32, next, NULL));
      CALL(devmesh_recv(m, dim, got, N, DEVMESH_INT32, prev, NULL));
    } else {
      CALL(devmesh_recv(m, dim, got, N, DEVMESH_INT32, prev, NULL));
      CALL(devmesh_send(m, dim, is, N, DEVMESH_INT32, next, NULL));
    }
    MPI_Sendrecv(is, N, MPI_INT32_T, next, 7, iref, N, MPI_INT32_T, prev, 7, c, MPI_STATUS_IGNORE);
    CHECK(memcmp(got, iref, sizeof got) == 0, "%s send/recv ring", dim);
  }
  free(all);
  free(ref);
  free(big);
  free(bigref);
}

/* Non-blocking point to point and sendrecv along dim (on backend),
 * against MPI_Sendrecv of the same data on the dim's MPI communicator. */
static void check_p2p(devmesh_t m, const char *dim, const char *backend) {
  MPI_Comm c = comm_of(m, dim);
  int r = 0, n = 0;
  MPI_Comm_rank(c, &r);
  MPI_Comm_size(c, &n);
  enum { N = 29, K = 24 };
  double out[N], in[N], back[N], ref[N], backref[N];
  for (int i = 0; i < N; ++i) out[i] = world_rank * 1000.0 + i * 0.5;
  const int next = (r + 1) % n, prev = (r + n - 1) % n;
  MPI_Sendrecv(out, N, MPI_DOUBLE, next, 9, ref, N, MPI_DOUBLE, prev, 9, c, MPI_STATUS_IGNORE);
  MPI_Sendrecv(out, N, MPI_DOUBLE, prev, 9, backref, N, MPI_DOUBLE, next, 9, c, MPI_STATUS_IGNORE);
  const int self_ok = n > 1 || strcmp(backend, "gloo") != 0; /* Gloo: no pair to itself */
  if (self_ok) {
    /* both directions at once: waitall for one, test then wait for the other */
    devmesh_request_t q[4] = {DEVMESH_REQUEST_NULL, DEVMESH_REQUEST_NULL, DEVMESH_REQUEST_NULL,
                              DEVMESH_REQUEST_NULL};
    memset(in, 0, sizeof in);
    memset(back, 0, sizeof back);
    CALL(devmesh_irecv(m, dim, in, N, DEVMESH_FLOAT64, prev, NULL, &q[0]));
    CALL(devmesh_irecv(m, dim, back, N, DEVMESH_FLOAT64, next, NULL, &q[1]));
    CALL(devmesh_isend(m, dim, out, N, DEVMESH_FLOAT64, next, NULL, &q[2]));
    CALL(devmesh_isend(m, dim, out, N, DEVMESH_FLOAT64, prev, NULL, &q[3]));
    int done = 0;
    while (!done) CALL(devmesh_test(&q[1], &done));
    CHECK(q[1] == DEVMESH_REQUEST_NULL, "%s test done leaves the request NULL", dim);
    CALL(devmesh_wait(&q[0]));
    CHECK(q[0] == DEVMESH_REQUEST_NULL, "%s wait leaves the request NULL", dim);
    CALL(devmesh_waitall(4, q));
    for (int i = 0; i < 4; ++i) CHECK(q[i] == DEVMESH_REQUEST_NULL, "%s waitall request %d", dim, i);
    CHECK(memcmp(in, ref, sizeof in) == 0, "%s isend/irecv ring forward", dim);
    CHECK(memcmp(back, backref, sizeof back) == 0, "%s isend/irecv ring backward", dim);

    /* many outstanding, matched in order */
    int32_t many_out[K], many_in[K];
    devmesh_request_t mq[2 * K];
    for (int i = 0; i < K; ++i) {
      many_out[i] = world_rank * 100 + i;
      many_in[i] = -1;
    }
    for (int i = 0; i < K; ++i) CALL(devmesh_irecv(m, dim, &many_in[i], 1, DEVMESH_INT32, prev, NULL, &mq[i]));
    for (int i = 0; i < K; ++i) CALL(devmesh_isend(m, dim, &many_out[i], 1, DEVMESH_INT32, next, NULL, &mq[K + i]));
    CALL(devmesh_waitall(2 * K, mq));
    int prev_world = 0;
    MPI_Sendrecv(&world_rank, 1, MPI_INT, next, 10, &prev_world, 1, MPI_INT, prev, 10, c, MPI_STATUS_IGNORE);
    int wrong = 0;
    for (int i = 0; i < K; ++i) wrong += many_in[i] != prev_world * 100 + i;
    CHECK(wrong == 0, "%s %d outstanding: %d wrong", dim, K, wrong);
  } else {
    devmesh_request_t q = DEVMESH_REQUEST_NULL;
    const int rc = devmesh_isend(m, dim, out, N, DEVMESH_FLOAT64, next, NULL, &q);
    CHECK(rc == DEVMESH_ERR_UNSUPPORTED && q == DEVMESH_REQUEST_NULL, "%s gloo isend to itself: %d", dim, rc);
  }

  /* sendrecv, both shifts */
  memset(in, 0, sizeof in);
  memset(back, 0, sizeof back);
  CALL(devmesh_sendrecv(m, dim, out, N, DEVMESH_FLOAT64, next, in, N, DEVMESH_FLOAT64, prev, NULL));
  CALL(devmesh_sendrecv(m, dim, out, N, DEVMESH_FLOAT64, prev, back, N, DEVMESH_FLOAT64, next, NULL));
  CHECK(memcmp(in, ref, sizeof in) == 0, "%s sendrecv forward", dim);
  CHECK(memcmp(back, backref, sizeof back) == 0, "%s sendrecv backward", dim);

  /* an open chain: MPI_PROC_NULL beyond the ends does nothing */
  const int up = r + 1 < n ? r + 1 : MPI_PROC_NULL, down = r > 0 ? r - 1 : MPI_PROC_NULL;
  for (int i = 0; i < N; ++i) in[i] = back[i] = -3;
  devmesh_request_t q[2];
  CALL(devmesh_irecv(m, dim, in, N, DEVMESH_FLOAT64, down, NULL, &q[0]));
  CALL(devmesh_isend(m, dim, out, N, DEVMESH_FLOAT64, up, NULL, &q[1]));
  CHECK((q[0] == DEVMESH_REQUEST_NULL) == (down == MPI_PROC_NULL), "%s irecv from MPI_PROC_NULL", dim);
  CHECK((q[1] == DEVMESH_REQUEST_NULL) == (up == MPI_PROC_NULL), "%s isend to MPI_PROC_NULL", dim);
  CALL(devmesh_waitall(2, q));
  CALL(devmesh_sendrecv(m, dim, out, N, DEVMESH_FLOAT64, up, back, N, DEVMESH_FLOAT64, down, NULL));
  if (down == MPI_PROC_NULL) {
    int touched = 0;
    for (int i = 0; i < N; ++i) touched += in[i] != -3 || back[i] != -3;
    CHECK(touched == 0, "%s the chain's first rank received something", dim);
  } else {
    CHECK(memcmp(in, ref, sizeof in) == 0, "%s chain irecv", dim);
    CHECK(memcmp(back, ref, sizeof back) == 0, "%s chain sendrecv", dim);
  }
  /* blocking ones along the chain: the first rank only sends, the last only
   * receives, with MPI_PROC_NULL for the missing side */
  for (int i = 0; i < N; ++i) in[i] = -3;
  if (r % 2 == 0) {
    CALL(devmesh_send(m, dim, out, N, DEVMESH_FLOAT64, up, NULL));
    CALL(devmesh_recv(m, dim, in, N, DEVMESH_FLOAT64, down, NULL));
  } else {
    CALL(devmesh_recv(m, dim, in, N, DEVMESH_FLOAT64, down, NULL));
    CALL(devmesh_send(m, dim, out, N, DEVMESH_FLOAT64, up, NULL));
  }
  if (down == MPI_PROC_NULL) {
    int touched = 0;
    for (int i = 0; i < N; ++i) touched += in[i] != -3;
    CHECK(touched == 0, "%s blocking recv from MPI_PROC_NULL wrote the buffer", dim);
  } else {
    CHECK(memcmp(in, ref, sizeof in) == 0, "%s chain blocking send/recv", dim);
  }
  CALL(devmesh_barrier(m, dim, NULL));
}

/* Errors: local, so the same on every rank; no communication, recvbuf
 * untouched. */
static void check_errors(devmesh_t m, const char *tp_backend) {
  float s[4] = {1, 2, 3, 4}, out[4] = {7, 7, 7, 7};
  const float seven[4] = {7, 7, 7, 7};
  /* a request that must stay as it was through every failing call */
  static int sentinel;
  const devmesh_request_t untouched = (devmesh_request_t)(void *)&sentinel;
  devmesh_request_t req = untouched;
  int done = 5;
  int n = 0;
  CALL(devmesh_size(m, "tp", &n));
  struct {
    const char *what;
    int rc, want;
  } cases[] = {
      {"allreduce NULL mesh", devmesh_allreduce(NULL, "tp", s, out, 4, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce unknown dim", devmesh_allreduce(m, "xx", s, out, 4, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_UNKNOWN_DIM},
      {"allreduce empty dim", devmesh_allreduce(m, "", s, out, 4, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce NULL dim on 2-D", devmesh_allreduce(m, NULL, s, out, 4, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce NULL send", devmesh_allreduce(m, "tp", NULL, out, 4, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce NULL recv", devmesh_allreduce(m, "tp", s, NULL, 4, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce type -1", devmesh_allreduce(m, "tp", s, out, 4, -1, DEVMESH_SUM, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce type 10", devmesh_allreduce(m, "tp", s, out, 4, 10, DEVMESH_SUM, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce op 4", devmesh_allreduce(m, "tp", s, out, 4, DEVMESH_FLOAT32, 4, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"allreduce overflow", devmesh_allreduce(m, "tp", s, out, SIZE_MAX / 2, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"allgather overflow", devmesh_allgather(m, "tp", s, out, SIZE_MAX / 4, DEVMESH_FLOAT64, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"allgather NULL recv", devmesh_allgather(m, "tp", s, NULL, 1, DEVMESH_FLOAT32, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"allgather unknown dim", devmesh_allgather(m, "xx", s, out, 1, DEVMESH_FLOAT32, NULL), DEVMESH_ERR_UNKNOWN_DIM},
      {"reduce_scatter bad op", devmesh_reduce_scatter(m, "tp", s, out, 1, DEVMESH_FLOAT32, -3, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"reduce_scatter NULL send", devmesh_reduce_scatter(m, "tp", NULL, out, 1, DEVMESH_FLOAT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"reduce_scatter overflow", devmesh_reduce_scatter(m, "tp", s, out, SIZE_MAX / 2, DEVMESH_INT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"reduce_scatter unknown dim", devmesh_reduce_scatter(m, "xx", s, out, 1, DEVMESH_INT32, DEVMESH_SUM, NULL),
       DEVMESH_ERR_UNKNOWN_DIM},
      {"broadcast root n", devmesh_broadcast(m, "tp", out, 4, DEVMESH_FLOAT32, n, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"broadcast root -1", devmesh_broadcast(m, "tp", out, 4, DEVMESH_FLOAT32, -1, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"broadcast NULL", devmesh_broadcast(m, "tp", NULL, 4, DEVMESH_FLOAT32, 0, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"broadcast bad type", devmesh_broadcast(m, "tp", out, 4, 42, 0, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"broadcast unknown dim", devmesh_broadcast(m, "xx", out, 4, DEVMESH_FLOAT32, 0, NULL), DEVMESH_ERR_UNKNOWN_DIM},
      {"alltoall NULL", devmesh_alltoall(m, "tp", NULL, out, 1, DEVMESH_FLOAT32, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"alltoall overflow", devmesh_alltoall(m, "tp", s, out, SIZE_MAX / 2, DEVMESH_FLOAT32, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"alltoall unknown dim", devmesh_alltoall(m, "xx", s, out, 1, DEVMESH_FLOAT32, NULL), DEVMESH_ERR_UNKNOWN_DIM},
      {"barrier NULL mesh", devmesh_barrier(NULL, "tp", NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"barrier unknown dim", devmesh_barrier(m, "xx", NULL), DEVMESH_ERR_UNKNOWN_DIM},
      {"send peer n", devmesh_send(m, "tp", s, 4, DEVMESH_FLOAT32, n, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"send NULL", devmesh_send(m, "tp", NULL, 4, DEVMESH_FLOAT32, 0, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"send unknown dim", devmesh_send(m, "xx", s, 4, DEVMESH_FLOAT32, 0, NULL), DEVMESH_ERR_UNKNOWN_DIM},
      {"recv peer -7", devmesh_recv(m, "tp", out, 4, DEVMESH_FLOAT32, -7, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"recv bad type", devmesh_recv(m, "tp", out, 4, -1, 0, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"recv unknown dim", devmesh_recv(m, "xx", out, 4, DEVMESH_FLOAT32, 0, NULL), DEVMESH_ERR_UNKNOWN_DIM},
      {"isend peer n", devmesh_isend(m, "tp", s, 4, DEVMESH_FLOAT32, n, NULL, &req), DEVMESH_ERR_INVALID_ARGUMENT},
      {"isend NULL request", devmesh_isend(m, "tp", s, 4, DEVMESH_FLOAT32, 0, NULL, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"isend NULL mesh", devmesh_isend(NULL, "tp", s, 4, DEVMESH_FLOAT32, 0, NULL, &req), DEVMESH_ERR_INVALID_ARGUMENT},
      {"isend unknown dim", devmesh_isend(m, "xx", s, 4, DEVMESH_FLOAT32, 0, NULL, &req), DEVMESH_ERR_UNKNOWN_DIM},
      {"irecv peer -7", devmesh_irecv(m, "tp", out, 4, DEVMESH_FLOAT32, -7, NULL, &req), DEVMESH_ERR_INVALID_ARGUMENT},
      {"irecv NULL buffer", devmesh_irecv(m, "tp", NULL, 4, DEVMESH_FLOAT32, 0, NULL, &req),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"irecv bad type", devmesh_irecv(m, "tp", out, 4, 11, 0, NULL, &req), DEVMESH_ERR_INVALID_ARGUMENT},
      {"irecv unknown dim", devmesh_irecv(m, "xx", out, 4, DEVMESH_FLOAT32, 0, NULL, &req), DEVMESH_ERR_UNKNOWN_DIM},
      {"wait NULL", devmesh_wait(NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"test NULL request", devmesh_test(NULL, &done), DEVMESH_ERR_INVALID_ARGUMENT},
      {"test NULL done", devmesh_test(&req, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"waitall n -1", devmesh_waitall(-1, &req), DEVMESH_ERR_INVALID_ARGUMENT},
      {"waitall NULL", devmesh_waitall(2, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"sendrecv dest n", devmesh_sendrecv(m, "tp", s, 4, DEVMESH_FLOAT32, n, out, 4, DEVMESH_FLOAT32, 0, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"sendrecv source -7", devmesh_sendrecv(m, "tp", s, 4, DEVMESH_FLOAT32, 0, out, 4, DEVMESH_FLOAT32, -7, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"sendrecv NULL recvbuf", devmesh_sendrecv(m, "tp", s, 4, DEVMESH_FLOAT32, 0, NULL, 4, DEVMESH_FLOAT32, 0, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"sendrecv bad recvtype", devmesh_sendrecv(m, "tp", s, 4, DEVMESH_FLOAT32, 0, out, 4, -2, 0, NULL),
       DEVMESH_ERR_INVALID_ARGUMENT},
      {"sendrecv unknown dim", devmesh_sendrecv(m, "xx", s, 4, DEVMESH_FLOAT32, 0, out, 4, DEVMESH_FLOAT32, 0, NULL),
       DEVMESH_ERR_UNKNOWN_DIM},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    CHECK(cases[i].rc == cases[i].want, "%s: got %d, want %d", cases[i].what, cases[i].rc, cases[i].want);
    CHECK(memcmp(out, seven, sizeof out) == 0, "%s: recvbuf written", cases[i].what);
  }
  CHECK(req == untouched && done == 5, "a failing call wrote its request or done");
  /* DEVMESH_REQUEST_NULL is complete */
  req = DEVMESH_REQUEST_NULL;
  CALL(devmesh_test(&req, &done));
  CHECK(done == 1, "test of DEVMESH_REQUEST_NULL: done %d", done);
  CALL(devmesh_wait(&req));
  CALL(devmesh_waitall(0, NULL));
  /* A reduction the backend lacks: MPI cannot reduce float16. */
  if (strcmp(tp_backend, "mpi") == 0) {
    uint16_t h[2] = {0x3c00, 0x3c00}, hr[2] = {5, 5};
    int rc = devmesh_allreduce(m, "tp", h, hr, 2, DEVMESH_FLOAT16, DEVMESH_SUM, NULL);
    CHECK(rc == DEVMESH_ERR_UNSUPPORTED, "mpi float16 sum: got %d", rc);
    /* each prefix once: the C function, then the backend and operation */
    CHECK(strcmp(devmesh_last_error(),
                 "devmesh_allreduce: backend 'mpi', allreduce: cannot reduce float16 data with sum") == 0,
          "mpi float16 sum: message '%s'", devmesh_last_error());
    CHECK(hr[0] == 5 && hr[1] == 5, "float16 recvbuf written");
  }
  /* Zero elements with NULL buffers: nothing to do, success. */
  CALL(devmesh_allreduce(m, "tp", NULL, NULL, 0, DEVMESH_FLOAT32, DEVMESH_SUM, NULL));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *tp = argc > 1 ? argv[1] : "mpi";
  const char *dp = argc > 2 ? argv[2] : "mpi";
  char backends[128];
  snprintf(backends, sizeof backends, "tp=%s,dp=%s", tp, dp);
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.dim_backends = backends;
  if (argc > 3) cfg.dim_options = argv[3];
  const int shape[2] = {size % 2 == 0 ? 2 : 1, size % 2 == 0 ? size / 2 : size};
  const char *names[2] = {"dp", "tp"};
  devmesh_t m = NULL;
  int rc = devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, &cfg, &m);
  CHECK(rc == DEVMESH_SUCCESS, "devmesh_create_ex(%s) returned %d", backends, rc);
  if (rc == DEVMESH_SUCCESS) {
    check_dim(m, "tp");
    check_dim(m, "dp");
    check_p2p(m, "tp", tp);
    check_p2p(m, "dp", dp);
    check_errors(m, tp);
    /* A 1-D view: NULL names its only dim. */
    devmesh_t t = NULL;
    const char *only[1] = {"tp"};
    CALL(devmesh_slice(m, 1, only, &t));
    float one = 1, sum = 0;
    int n = 0;
    CALL(devmesh_size(m, "tp", &n));
    CALL(devmesh_allreduce(t, NULL, &one, &sum, 1, DEVMESH_FLOAT32, DEVMESH_SUM, NULL));
    CHECK(sum == (float)n, "1-D view allreduce: %g, want %d", sum, n);
    devmesh_destroy(&t);
    devmesh_destroy(&m);
  }
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank == 0) printf("%s: %s\n", backends, worst ? "FAILED" : "ok");
  MPI_Finalize();
  return worst ? 1 : 0;
}
