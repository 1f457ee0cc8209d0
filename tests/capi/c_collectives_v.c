/* The C API's variable-size, rooted and started collectives and
 * devmesh_batch on MPI dims, each against MPI's own call (MPI_Alltoallv,
 * MPI_Allgatherv, ...) on devmesh_comm's communicator of the same dim:
 * uneven, empty and gapped blocks (gaps untouched), in place, roots, the
 * i-forms (a 1 MiB devmesh_iallreduce polled with devmesh_test, four in
 * flight ended by devmesh_waitall, each request NULL once ended), and bad
 * input (overrun and overflowing counts, NULL arrays, mismatched local
 * counts, bad batch entries) refused with INVALID_ARGUMENT, nothing
 * written. Runs on a 1-D mesh of the world and, where the world is even,
 * along both dims of (n/2, 2). Prints "FAIL ..." lines and exits non-zero
 * on any mismatch. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"
#include "devmesh/devmesh.h"

enum { MAXG = 64, CAP = 4096 };

/* One dim's group: its mesh, name, MPI communicator, size and rank. */
typedef struct {
  devmesh_t m;
  const char *dim;
  MPI_Comm comm;
  int n, k;
} group_t;

static int32_t a[CAP], b[CAP], ref[CAP];

static void fill(int32_t *x, int v) {
  for (int i = 0; i < CAP; ++i) x[i] = v;
}

static int same(const int32_t *x, const int32_t *y, const char *what) {
  for (int i = 0; i < CAP; ++i)
    if (x[i] != y[i]) {
      CHECK(0, "%s: element %d is %d, MPI gives %d", what, i, (int)x[i], (int)y[i]);
      return 0;
    }
  return 1;
}

/* Per-rank counts with zeros, and displacements in reverse rank order with
 * a gap of one element before each block. */
static void layout(const group_t *g, int salt, size_t counts[], size_t displs[], int ic[], int id[]) {
  size_t at = 0;
  for (int r = g->n - 1; r >= 0; --r) {
    counts[r] = (size_t)((r + salt) % 3);
    displs[r] = at + 1;
    at += counts[r] + 1;
  }
  for (int r = 0; r < g->n; ++r) {
    ic[r] = (int)counts[r];
    id[r] = (int)displs[r];
  }
}

static void source(int32_t *x, int k) {
  for (int i = 0; i < CAP; ++i) x[i] = 1000 * k + i;
}

/* The i-form's request, ended with devmesh_wait; NULL afterwards. */
static void end(int rc, devmesh_request_t *r, const char *what) {
  CHECK(rc == DEVMESH_SUCCESS, "%s: start status %d", what, rc);
  CHECK(devmesh_wait(r) == DEVMESH_SUCCESS && *r == DEVMESH_REQUEST_NULL, "%s: wait", what);
}

static void alltoallv(const group_t *g, int started) {
  size_t sc[MAXG], sd[MAXG], rc[MAXG], rd[MAXG];
  int isc[MAXG], isd[MAXG], irc[MAXG], ird[MAXG];
  for (int r = 0; r < g->n; ++r) sc[r] = (size_t)((g->k + r) % 3);
  layout(g, g->k, rc, rd, irc, ird);  /* recvcounts[r] = (r + k) % 3 = r's sendcounts[k] */
  size_t at = 0;
  for (int r = 0; r < g->n; ++r) {
    sd[r] = at + 2;
    at += sc[r] + 2;
    isc[r] = (int)sc[r];
    isd[r] = (int)sd[r];
  }
  source(a, g->k);
  fill(b, -1);
  fill(ref, -1);
  MPI_Alltoallv(a, isc, isd, MPI_INT32_T, ref, irc, ird, MPI_INT32_T, g->comm);
  if (started) {
    devmesh_request_t r = DEVMESH_REQUEST_NULL;
    end(devmesh_ialltoallv(g->m, g->dim, a, sc, sd, b, rc, rd, DEVMESH_INT32, NULL, &r), &r, "ialltoallv");
  } else {
    CHECK(devmesh_alltoallv(g->m, g->dim, a, sc, sd, b, rc, rd, DEVMESH_INT32, NULL) == DEVMESH_SUCCESS, "alltoallv");
  }
  same(b, ref, started ? "ialltoallv" : "alltoallv");
  /* In place: send == recv, the send arrays NULL. */
  source(b, g->k);
  memcpy(ref, b, sizeof ref);
  MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT32_T, ref, irc, ird, MPI_INT32_T, g->comm);
  CHECK(devmesh_alltoallv(g->m, g->dim, b, NULL, NULL, b, rc, rd, DEVMESH_INT32, NULL) == DEVMESH_SUCCESS,
        "alltoallv in place");
  same(b, ref, "alltoallv in place");
}

static void allgatherv_and_reduce_scatterv(const group_t *g, int started) {
  size_t rc[MAXG], rd[MAXG];
  int irc[MAXG], ird[MAXG];
  layout(g, 1, rc, rd, irc, ird);
  source(a, g->k);
  fill(b, -1);
  fill(ref, -1);
  /* Brute force: MPICH 4.0's MPI_Allgatherv ignores the displacement on a
   * group of one. */
  for (int q = 0; q < g->n; ++q)
    for (int i = 0; i < irc[q]; ++i) ref[ird[q] + i] = 1000 * q + i;
  devmesh_request_t r = DEVMESH_REQUEST_NULL;
  if (started)
    end(devmesh_iallgatherv(g->m, g->dim, a, rc[g->k], b, rc, rd, DEVMESH_INT32, NULL, &r), &r, "iallgatherv");
  else
    CHECK(devmesh_allgatherv(g->m, g->dim, a, rc[g->k], b, rc, rd, DEVMESH_INT32, NULL) == DEVMESH_SUCCESS,
          "allgatherv");
  same(b, ref, "allgatherv");
  /* reduce_scatterv: blocks packed, counts with zeros. */
  fill(b, -1);
  fill(ref, -1);
  MPI_Reduce_scatter(a, ref, irc, MPI_INT32_T, MPI_SUM, g->comm);
  if (started)
    end(devmesh_ireduce_scatterv(g->m, g->dim, a, b, rc, DEVMESH_INT32, DEVMESH_SUM, NULL, &r), &r,
        "ireduce_scatterv");
  else
    CHECK(devmesh_reduce_scatterv(g->m, g->dim, a, b, rc, DEVMESH_INT32, DEVMESH_SUM, NULL) == DEVMESH_SUCCESS,
          "reduce_scatterv");
  same(b, ref, "reduce_scatterv");
}

static void rooted(const group_t *g, int started) {
  const int root = g->n - 1;
  size_t c[MAXG], d[MAXG];
  int ic[MAXG], id[MAXG];
  layout(g, 2, c, d, ic, id);
  devmesh_request_t r = DEVMESH_REQUEST_NULL;
  /* gatherv */
  source(a, g->k);
  fill(b, -1);
  fill(ref, -1);
  MPI_Gatherv(a, ic[g->k], MPI_INT32_T, ref, ic, id, MPI_INT32_T, root, g->comm);
  const size_t *rc = g->k == root ? c : NULL, *rd = g->k == root ? d : NULL;  /* root-only arrays */
  if (started)
    end(devmesh_igatherv(g->m, g->dim, a, c[g->k], b, rc, rd, DEVMESH_INT32, root, NULL, &r), &r, "igatherv");
  else
    CHECK(devmesh_gatherv(g->m, g->dim, a, c[g->k], b, rc, rd, DEVMESH_INT32, root, NULL) == DEVMESH_SUCCESS,
          "gatherv");
  same(b, ref, "gatherv");
  /* scatterv */
  fill(b, -1);
  fill(ref, -1);
  MPI_Scatterv(a, ic, id, MPI_INT32_T, ref, ic[g->k], MPI_INT32_T, root, g->comm);
  if (started)
    end(devmesh_iscatterv(g->m, g->dim, a, rc, rd, b, c[g->k], DEVMESH_INT32, root, NULL, &r), &r, "iscatterv");
  else
    CHECK(devmesh_scatterv(g->m, g->dim, a, rc, rd, b, c[g->k], DEVMESH_INT32, root, NULL) == DEVMESH_SUCCESS,
          "scatterv");
  same(b, ref, "scatterv");
  /* gather, scatter, reduce of 3 elements */
  fill(b, -1);
  fill(ref, -1);
  MPI_Gather(a, 3, MPI_INT32_T, ref, 3, MPI_INT32_T, root, g->comm);
  if (started)
    end(devmesh_igather(g->m, g->dim, a, b, 3, DEVMESH_INT32, root, NULL, &r), &r, "igather");
  else
    CHECK(devmesh_gather(g->m, g->dim, a, b, 3, DEVMESH_INT32, root, NULL) == DEVMESH_SUCCESS, "gather");
  same(b, ref, "gather");
  fill(b, -1);
  fill(ref, -1);
  MPI_Scatter(a, 3, MPI_INT32_T, ref, 3, MPI_INT32_T, root, g->comm);
  if (started)
    end(devmesh_iscatter(g->m, g->dim, a, b, 3, DEVMESH_INT32, root, NULL, &r), &r, "iscatter");
  else
    CHECK(devmesh_scatter(g->m, g->dim, a, b, 3, DEVMESH_INT32, root, NULL) == DEVMESH_SUCCESS, "scatter");
  same(b, ref, "scatter");
  fill(b, -1);
  fill(ref, -1);
  MPI_Reduce(a, ref, 5, MPI_INT32_T, MPI_MAX, root, g->comm);
  if (started)
    end(devmesh_ireduce(g->m, g->dim, a, b, 5, DEVMESH_INT32, DEVMESH_MAX, root, NULL, &r), &r, "ireduce");
  else
    CHECK(devmesh_reduce(g->m, g->dim, a, b, 5, DEVMESH_INT32, DEVMESH_MAX, root, NULL) == DEVMESH_SUCCESS,
          "reduce");
  same(b, ref, "reduce");
}

/* The i-forms of the fixed-size collectives against MPI's blocking calls. */
static void started_fixed(const group_t *g) {
  devmesh_request_t r = DEVMESH_REQUEST_NULL;
  const int per = CAP / MAXG;
  source(a, g->k);
  fill(b, -1);
  fill(ref, -1);
  MPI_Allreduce(a, ref, 7, MPI_INT32_T, MPI_SUM, g->comm);
  end(devmesh_iallreduce(g->m, g->dim, a, b, 7, DEVMESH_INT32, DEVMESH_SUM, NULL, &r), &r, "iallreduce");
  same(b, ref, "iallreduce");
  fill(b, -1);
  fill(ref, -1);
  MPI_Allgather(a, 2, MPI_INT32_T, ref, 2, MPI_INT32_T, g->comm);
  end(devmesh_iallgather(g->m, g->dim, a, b, 2, DEVMESH_INT32, NULL, &r), &r, "iallgather");
  same(b, ref, "iallgather");
  fill(b, -1);
  fill(ref, -1);
  MPI_Reduce_scatter_block(a, ref, 3, MPI_INT32_T, MPI_SUM, g->comm);
  end(devmesh_ireduce_scatter(g->m, g->dim, a, b, 3, DEVMESH_INT32, DEVMESH_SUM, NULL, &r), &r, "ireduce_scatter");
  same(b, ref, "ireduce_scatter");
  fill(b, -1);
  fill(ref, -1);
  MPI_Alltoall(a, per, MPI_INT32_T, ref, per, MPI_INT32_T, g->comm);
  end(devmesh_ialltoall(g->m, g->dim, a, b, (size_t)per, DEVMESH_INT32, NULL, &r), &r, "ialltoall");
  same(b, ref, "ialltoall");
  source(b, g->k);
  source(ref, g->k);
  MPI_Bcast(ref, 9, MPI_INT32_T, 0, g->comm);
  end(devmesh_ibroadcast(g->m, g->dim, b, 9, DEVMESH_INT32, 0, NULL, &r), &r, "ibroadcast");
  same(b, ref, "ibroadcast");
  end(devmesh_ibarrier(g->m, g->dim, NULL, &r), &r, "ibarrier");
}

/* A 1 MiB iallreduce polled with devmesh_test; four in flight ended by
 * devmesh_waitall, one of them in place. */
static void polling_and_waitall(const group_t *g) {
  const size_t n = (1u << 20) / sizeof(double);
  double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
  for (size_t i = 0; i < n; ++i) x[i] = (double)(g->k + 1) * (double)(i % 1000);
  devmesh_request_t r = DEVMESH_REQUEST_NULL;
  CHECK(devmesh_iallreduce(g->m, g->dim, x, y, n, DEVMESH_FLOAT64, DEVMESH_SUM, NULL, &r) == DEVMESH_SUCCESS,
        "1 MiB iallreduce");
  int done = 0;
  const double until = MPI_Wtime() + 60.0;
  while (!done && MPI_Wtime() < until) {
    CHECK(devmesh_test(&r, &done) == DEVMESH_SUCCESS, "test");
    CHECK(done == (r == DEVMESH_REQUEST_NULL), "done %d but the request is %s", done, r ? "pending" : "NULL");
  }
  CHECK(done && r == DEVMESH_REQUEST_NULL, "the 1 MiB iallreduce did not finish in 60 s of polling");
  const double ranks = (double)g->n * (g->n + 1) / 2.0;
  int bad = 0;
  for (size_t i = 0; i < n; ++i) bad += y[i] != ranks * (double)(i % 1000);
  CHECK(bad == 0, "1 MiB iallreduce: %d wrong elements", bad);

  int32_t in[4][8], out[4][8];
  devmesh_request_t four[4];
  for (int q = 0; q < 4; ++q)
    for (int i = 0; i < 8; ++i) in[q][i] = out[q][i] = (q + 1) * (g->k + 1) + i;
  for (int q = 0; q < 3; ++q)
    CHECK(devmesh_iallreduce(g->m, g->dim, in[q], out[q], 8, DEVMESH_INT32, DEVMESH_SUM, NULL, &four[q]) == 0, "start");
  CHECK(devmesh_iallreduce(g->m, g->dim, out[3], out[3], 8, DEVMESH_INT32, DEVMESH_SUM, NULL, &four[3]) == 0,
        "start in place");
  CHECK(devmesh_waitall(4, four) == DEVMESH_SUCCESS, "waitall");
  for (int q = 0; q < 4; ++q) {
    CHECK(four[q] == DEVMESH_REQUEST_NULL, "request %d not NULL after waitall", q);
    for (int i = 0; i < 8; ++i)
      CHECK(out[q][i] == (int32_t)((q + 1) * ranks + g->n * i), "waitall %d element %d: %d", q, i, (int)out[q][i]);
  }
  free(x);
  free(y);
}

/* A ring shift through devmesh_batch, with an MPI_PROC_NULL entry. */
static void batch(const group_t *g) {
  int32_t s[3] = {g->k, g->k + 1, g->k + 2}, rcv[3] = {-1, -1, -1}, none = -1;
  const int next = (g->k + 1) % g->n, prev = (g->k + g->n - 1) % g->n;
  devmesh_p2p_t ops[3] = {{0, prev, rcv, 3, DEVMESH_INT32}, {1, next, s, 3, DEVMESH_INT32},
                          {0, MPI_PROC_NULL, &none, 1, DEVMESH_INT32}};
  devmesh_request_t r = DEVMESH_REQUEST_NULL;
  end(devmesh_batch(g->m, g->dim, ops, 3, NULL, &r), &r, "batch");
  CHECK(rcv[0] == prev && rcv[1] == prev + 1 && rcv[2] == prev + 2 && none == -1, "batch received %d %d %d",
        (int)rcv[0], (int)rcv[1], (int)rcv[2]);
  CHECK(devmesh_batch(g->m, g->dim, NULL, 0, NULL, &r) == DEVMESH_SUCCESS && r == DEVMESH_REQUEST_NULL,
        "an empty batch");
}

static void refused(int rc, const char *text, const char *what) {
  CHECK(rc == DEVMESH_ERR_INVALID_ARGUMENT, "%s: status %d", what, rc);
  CHECK(strstr(devmesh_last_error(), text) != NULL, "%s: message lacks '%s'", what, text);
}

/* Bad input, the same on every member (so nobody waits): refused before
 * any communication, recvbuf and *request untouched. */
static void bad_input(const group_t *g) {
  size_t c[MAXG], d[MAXG];
  for (int r = 0; r < g->n; ++r) {
    c[r] = 1;
    d[r] = (size_t)r;
  }
  fill(b, -1);
  devmesh_request_t r = (devmesh_request_t)(uintptr_t)0x55;
  size_t big[MAXG];
  memcpy(big, d, sizeof big);
  big[0] = SIZE_MAX;  /* displacement + count overflows */
  refused(devmesh_alltoallv(g->m, g->dim, a, c, d, b, c, big, DEVMESH_INT32, NULL), "rdispls", "overflowing rdispls");
  big[0] = SIZE_MAX / 4;  /* the byte size overflows */
  refused(devmesh_ialltoallv(g->m, g->dim, a, c, big, b, c, d, DEVMESH_INT32, NULL, &r), "byte size of sendbuf",
          "overflowing bytes");
  refused(devmesh_alltoallv(g->m, g->dim, a, c, d, b, NULL, d, DEVMESH_INT32, NULL), "recvcounts",
          "NULL recvcounts");
  refused(devmesh_alltoallv(g->m, g->dim, a, NULL, d, b, c, d, DEVMESH_INT32, NULL), "sendcounts",
          "NULL sendcounts (not in place)");
  c[g->k] = 2;
  refused(devmesh_allgatherv(g->m, g->dim, a, 1, b, c, d, DEVMESH_INT32, NULL), "recvcounts[rank]",
          "allgatherv count mismatch");
  c[g->k] = 1;
  refused(devmesh_allgatherv(g->m, g->dim, NULL, 1, b, c, d, DEVMESH_INT32, NULL), "sendbuf", "NULL sendbuf");
  refused(devmesh_reduce_scatterv(g->m, g->dim, a, b, NULL, DEVMESH_INT32, DEVMESH_SUM, NULL), "recvcounts",
          "NULL reduce_scatterv counts");
  refused(devmesh_scatterv(g->m, g->dim, a, c, d, b, 1, DEVMESH_INT32, g->n, NULL), "root", "scatterv root");
  refused(devmesh_gather(g->m, g->dim, a, b, 1, DEVMESH_INT32, g->n, NULL), "root", "root outside the group");
  refused(devmesh_iscatter(g->m, g->dim, a, b, 1, DEVMESH_INT32, -1, NULL, &r), "root", "negative root");
  devmesh_p2p_t ops[2] = {{1, g->n, a, 1, DEVMESH_INT32}, {0, 0, NULL, 1, DEVMESH_INT32}};
  refused(devmesh_batch(g->m, g->dim, ops, 2, NULL, &r), "ops[0]", "batch peer outside the group");
  ops[0].peer = 0;
  refused(devmesh_batch(g->m, g->dim, ops, 2, NULL, &r), "ops[1]", "batch NULL buffer");
  refused(devmesh_batch(g->m, g->dim, ops, -1, NULL, &r), "negative", "batch n < 0");
  refused(devmesh_batch(g->m, g->dim, NULL, 1, NULL, &r), "ops is NULL", "batch ops NULL");
  int untouched = 1;
  for (int i = 0; i < CAP; ++i) untouched &= b[i] == -1;
  CHECK(untouched, "a refused call wrote recvbuf");
  CHECK(r == (devmesh_request_t)(uintptr_t)0x55, "a refused call wrote *request");
}

static void run(devmesh_t m, const char *dim) {
  group_t g = {m, dim, MPI_COMM_NULL, 1, 0};
  CHECK(devmesh_comm(m, dim, &g.comm) == DEVMESH_SUCCESS, "comm");
  MPI_Comm_size(g.comm, &g.n);
  MPI_Comm_rank(g.comm, &g.k);
  for (int started = 0; started < 2; ++started) {
    alltoallv(&g, started);
    allgatherv_and_reduce_scatterv(&g, started);
    rooted(&g, started);
  }
  started_fixed(&g);
  polling_and_waitall(&g);
  batch(&g);
  bad_input(&g);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n > MAXG) MPI_Abort(MPI_COMM_WORLD, 2);
  const int shape[1] = {n};
  const char *names[1] = {"x"};
  devmesh_t m = NULL;
  CHECK(devmesh_create(MPI_COMM_WORLD, 1, shape, names, &m) == DEVMESH_SUCCESS, "create");
  run(m, "x");
  CHECK(devmesh_destroy(&m) == DEVMESH_SUCCESS, "destroy");
  if (n % 2 == 0) {
    const int shape2[2] = {n / 2, 2};
    const char *names2[2] = {"a", "b"};
    CHECK(devmesh_create(MPI_COMM_WORLD, 2, shape2, names2, &m) == DEVMESH_SUCCESS, "create 2-D");
    run(m, "a");
    run(m, "b");
    CHECK(devmesh_destroy(&m) == DEVMESH_SUCCESS, "destroy 2-D");
  }

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("%s: %d failures\n", all ? "FAIL" : "OK", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
