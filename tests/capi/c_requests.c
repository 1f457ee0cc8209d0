/* Requests at the C boundary: a devmesh_request_t is a token checked in a
 * table of pending requests. A stale copy of a request waited already, a
 * request ended twice and values devmesh never returned give
 * DEVMESH_ERR_INVALID_ARGUMENT ("request already ended") from devmesh_wait,
 * devmesh_test and devmesh_waitall, never a crash, and leave *request as
 * it was; devmesh_waitall still ends the good entries. A NULL request
 * pointer to any call that starts an operation is refused before any
 * communication. Prints "FAIL ..." lines and exits non-zero on any
 * mismatch. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "c_check.h"
#include "devmesh/devmesh.h"

/* `rc` is INVALID_ARGUMENT whose message contains `text`. */
static void refused(int rc, const char *text, const char *what) {
  CHECK(rc == DEVMESH_ERR_INVALID_ARGUMENT, "%s: status %d", what, rc);
  CHECK(strstr(devmesh_last_error(), text) != NULL, "%s: message lacks '%s'", what, text);
}

/* Every call that starts an operation refuses a NULL request pointer. */
static void null_request_refused(devmesh_t m) {
  int32_t a[4] = {1, 2, 3, 4}, b[4] = {-1, -1, -1, -1};
  size_t c[64] = {0}, d[64] = {0};
  devmesh_p2p_t op = {1, 0, a, 1, DEVMESH_INT32};
  const char *r = "request is NULL";
  refused(devmesh_isend(m, NULL, a, 1, DEVMESH_INT32, 0, NULL, NULL), r, "isend");
  refused(devmesh_irecv(m, NULL, b, 1, DEVMESH_INT32, 0, NULL, NULL), r, "irecv");
  refused(devmesh_iallreduce(m, NULL, a, b, 1, DEVMESH_INT32, DEVMESH_SUM, NULL, NULL), r, "iallreduce");
  refused(devmesh_iallgather(m, NULL, a, b, 1, DEVMESH_INT32, NULL, NULL), r, "iallgather");
  refused(devmesh_ireduce_scatter(m, NULL, a, b, 1, DEVMESH_INT32, DEVMESH_SUM, NULL, NULL), r, "ireduce_scatter");
  refused(devmesh_ibroadcast(m, NULL, b, 1, DEVMESH_INT32, 0, NULL, NULL), r, "ibroadcast");
  refused(devmesh_ialltoall(m, NULL, a, b, 1, DEVMESH_INT32, NULL, NULL), r, "ialltoall");
  refused(devmesh_ibarrier(m, NULL, NULL, NULL), r, "ibarrier");
  refused(devmesh_ialltoallv(m, NULL, a, c, d, b, c, d, DEVMESH_INT32, NULL, NULL), r, "ialltoallv");
  refused(devmesh_iallgatherv(m, NULL, a, 0, b, c, d, DEVMESH_INT32, NULL, NULL), r, "iallgatherv");
  refused(devmesh_ireduce_scatterv(m, NULL, a, b, c, DEVMESH_INT32, DEVMESH_SUM, NULL, NULL), r, "ireduce_scatterv");
  refused(devmesh_igather(m, NULL, a, b, 1, DEVMESH_INT32, 0, NULL, NULL), r, "igather");
  refused(devmesh_igatherv(m, NULL, a, 0, b, c, d, DEVMESH_INT32, 0, NULL, NULL), r, "igatherv");
  refused(devmesh_iscatter(m, NULL, a, b, 1, DEVMESH_INT32, 0, NULL, NULL), r, "iscatter");
  refused(devmesh_iscatterv(m, NULL, a, c, d, b, 0, DEVMESH_INT32, 0, NULL, NULL), r, "iscatterv");
  refused(devmesh_ireduce(m, NULL, a, b, 1, DEVMESH_INT32, DEVMESH_SUM, 0, NULL, NULL), r, "ireduce");
  refused(devmesh_batch(m, NULL, &op, 1, NULL, NULL), r, "batch");
  CHECK(b[0] == -1 && b[1] == -1, "a refused call wrote recvbuf");
}

/* A message to oneself, through an irecv and an isend: *rr and *rs. */
static void self_message(devmesh_t m, int32_t *in, int32_t *out, devmesh_request_t *rr, devmesh_request_t *rs) {
  CHECK(devmesh_irecv(m, NULL, in, 1, DEVMESH_INT32, me, NULL, rr) == DEVMESH_SUCCESS, "irecv");
  CHECK(devmesh_isend(m, NULL, out, 1, DEVMESH_INT32, me, NULL, rs) == DEVMESH_SUCCESS, "isend");
}

static void stale_copies(devmesh_t m) {
  int32_t in = -1, out = 100 + me;
  devmesh_request_t rr = DEVMESH_REQUEST_NULL, rs = DEVMESH_REQUEST_NULL;
  self_message(m, &in, &out, &rr, &rs);
  devmesh_request_t copy = rr;
  CHECK(devmesh_wait(&rs) == DEVMESH_SUCCESS && rs == DEVMESH_REQUEST_NULL, "wait isend");
  CHECK(devmesh_wait(&rr) == DEVMESH_SUCCESS && rr == DEVMESH_REQUEST_NULL, "wait irecv");
  CHECK(in == 100 + me, "received %d", (int)in);
  const devmesh_request_t kept = copy;
  refused(devmesh_wait(&copy), "request already ended", "wait of a stale copy");
  CHECK(copy == kept, "a refused wait changed *request");
  int done = -5;
  refused(devmesh_test(&copy, &done), "request already ended", "test of a stale copy");
  CHECK(copy == kept && done == -5, "a refused test wrote its outputs");

  /* A slot used again: the new request works, the stale copy still fails. */
  self_message(m, &in, &out, &rr, &rs);
  refused(devmesh_wait(&copy), "request already ended", "stale copy beside a new request");
  for (int spins = 0; rr != DEVMESH_REQUEST_NULL && spins < 100000000; ++spins) {
    CHECK(devmesh_test(&rr, &done) == DEVMESH_SUCCESS, "test");
    CHECK(done == (rr == DEVMESH_REQUEST_NULL), "done %d but request %s", done, rr ? "pending" : "NULL");
  }
  CHECK(rr == DEVMESH_REQUEST_NULL, "the receive never completed");
  CHECK(devmesh_wait(&rs) == DEVMESH_SUCCESS && rs == DEVMESH_REQUEST_NULL, "wait isend");
  done = -5;
  CHECK(devmesh_test(&rr, &done) == DEVMESH_SUCCESS && done == 1, "test of the null request");
}

static void made_up_requests(void) {
  int local = 0;
  devmesh_request_t made_up[4] = {(devmesh_request_t)(uintptr_t)1, (devmesh_request_t)(uintptr_t)0x12345678u,
                                  (devmesh_request_t)(void *)&local, (devmesh_request_t)(uintptr_t)UINTPTR_MAX};
  for (int i = 0; i < 4; ++i) {
    devmesh_request_t r = made_up[i];
    int done = -5;
    refused(devmesh_wait(&r), "request already ended", "wait of a made-up request");
    refused(devmesh_test(&r, &done), "request already ended", "test of a made-up request");
    CHECK(r == made_up[i] && done == -5, "a refused call wrote its outputs");
  }
  CHECK(local == 0, "the program's memory was written");
  refused(devmesh_wait(NULL), "request is NULL", "wait(NULL)");
  int done = 0;
  refused(devmesh_test(NULL, &done), "request is NULL", "test(NULL, done)");
}

/* waitall over [good, made-up, NULL, stale, good]: the good ones end and
 * deliver, the bad ones stay as they were, the first failure names its
 * index. */
static void waitall_with_bad_entries(devmesh_t m) {
  int32_t in[2] = {-1, -1}, out[2] = {10 + me, 20 + me};
  devmesh_request_t a, b, c, d;
  self_message(m, &in[0], &out[0], &a, &b);
  devmesh_request_t stale = b;
  CHECK(devmesh_wait(&b) == DEVMESH_SUCCESS, "wait");
  self_message(m, &in[1], &out[1], &c, &d);
  devmesh_request_t made_up = (devmesh_request_t)(uintptr_t)0x7777;
  devmesh_request_t list[6] = {a, made_up, DEVMESH_REQUEST_NULL, stale, c, d};
  refused(devmesh_waitall(6, list), "requests[1]", "waitall with bad entries");
  CHECK(strstr(devmesh_last_error(), "request already ended") != NULL, "waitall message");
  CHECK(list[0] == DEVMESH_REQUEST_NULL && list[4] == DEVMESH_REQUEST_NULL && list[5] == DEVMESH_REQUEST_NULL,
        "the good entries did not end");
  CHECK(list[1] == made_up && list[2] == DEVMESH_REQUEST_NULL && list[3] == stale, "a bad entry was changed");
  CHECK(in[0] == 10 + me && in[1] == 20 + me, "received %d %d", (int)in[0], (int)in[1]);
  refused(devmesh_waitall(-1, list), "negative", "waitall(-1)");
  refused(devmesh_waitall(2, NULL), "requests is NULL", "waitall(2, NULL)");
  CHECK(devmesh_waitall(0, NULL) == DEVMESH_SUCCESS, "waitall(0, NULL)");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int shape[1] = {n};
  const char *names[1] = {"x"};
  devmesh_t m = NULL;
  CHECK(devmesh_create(MPI_COMM_WORLD, 1, shape, names, &m) == DEVMESH_SUCCESS, "create");

  null_request_refused(m);
  stale_copies(m);
  made_up_requests();
  waitall_with_bad_entries(m);
  CHECK(devmesh_destroy(&m) == DEVMESH_SUCCESS, "destroy");

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("%s: %d failures\n", all ? "FAIL" : "OK", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
