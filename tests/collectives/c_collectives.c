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

/* Errors: local, so the same on every rank; no communication, recvbuf
 * untouched. */
static void check_errors(devmesh_t m, const char *tp_backend) {
  float s[4] = {1, 2, 3, 4}, out[4] = {7, 7, 7, 7};
  const float seven[4] = {7, 7, 7, 7};
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
      {"recv peer -1", devmesh_recv(m, "tp", out, 4, DEVMESH_FLOAT32, -1, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"recv bad type", devmesh_recv(m, "tp", out, 4, -1, 0, NULL), DEVMESH_ERR_INVALID_ARGUMENT},
      {"recv unknown dim", devmesh_recv(m, "xx", out, 4, DEVMESH_FLOAT32, 0, NULL), DEVMESH_ERR_UNKNOWN_DIM},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    CHECK(cases[i].rc == cases[i].want, "%s: got %d, want %d", cases[i].what, cases[i].rc, cases[i].want);
    CHECK(memcmp(out, seven, sizeof out) == 0, "%s: recvbuf written", cases[i].what);
  }
  /* A reduction the backend lacks: MPI cannot reduce float16. */
  if (strcmp(tp_backend, "mpi") == 0) {
    uint16_t h[2] = {0x3c00, 0x3c00}, hr[2] = {5, 5};
    int rc = devmesh_allreduce(m, "tp", h, hr, 2, DEVMESH_FLOAT16, DEVMESH_SUM, NULL);
    CHECK(rc == DEVMESH_ERR_UNSUPPORTED, "mpi float16 sum: got %d", rc);
    CHECK(strstr(devmesh_last_error(), "mpi") != NULL, "the message names the backend");
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
