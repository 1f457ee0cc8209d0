/* An example devmesh backend plugin, built against an installed devmesh
 * only (its Makefile uses pkg-config), as libdevmesh-backend-example.so,
 * and selected by the name "example" (a mesh's backend or one dim's).
 *
 * It runs every operation over MPI, on its own duplicates of each group's
 * communicator, with MPI's non-blocking calls and its own wait loop, so
 * that a wait can be cut short: by a revoke (its own, or one another member
 * sent it), or by the option timeout=SECONDS. That is what version 3 of the
 * plugin interface asks of a backend on failure, shown on the simplest
 * library there is; replace the MPI calls with your library's.
 *
 * It exports the version 4 table, which a devmesh of this release uses,
 * and the version 3 and 2 tables beside it, for a devmesh that knows only
 * those (compile with -DEXAMPLE_NO_V4 to export versions 3 and 2 alone,
 * with -DEXAMPLE_V2_ONLY to export the version 2 table alone).
 *
 * Version 4 adds members one at a time, each stated by its capability bit:
 * the example implements one, alltoallv (blocking, over MPI_Ialltoallv and
 * its wait loop), to show the pattern; the members it leaves NULL answer
 * DEVMESH_ERR_UNSUPPORTED naming the operation (docs/BACKENDS.md,
 * "Version 4").
 *
 * Why version 3: as a version 2 plugin, a comm_create that fails on one
 * member before its MPI_Comm_dup leaves the other members in that
 * MPI_Comm_dup forever (and the failing one in the core's agreement), and
 * a collective that fails on one member leaves the others waiting until
 * timeout=, forever without it. Version 3's local comm_prepare lets the
 * core tell every member before anyone connects, and its revoke wakes the
 * others (docs/BACKENDS.md, "What older plugins get").
 *
 * Options (key=value, the same on every rank): timeout=SECONDS (0, the
 * default: waits are not bounded). */
#include <devmesh/backend_plugin.h>

#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EXAMPLE_NAME
#define EXAMPLE_NAME "example"
#endif

enum { TAG_DATA = 1, TAG_REVOKE = 2 };

/* ---- errors: the reason for last_error(), the MPI code behind it --------- */

static const devmesh_backend_host_t *host; /* v3: the core's services */
static _Thread_local char last[1024];
static _Thread_local int last_code;

static int fail(int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last, sizeof last, fmt, ap);
  va_end(ap);
  last_code = 0;
  return status;
}

/* An MPI call's failure: the core's text for the code where it gave us its
 * services (safe on every MPI), else the code alone. */
static int mpi_fail(int code, const char *call) {
  char text[512] = "";
  if (host) host->mpi_error(code, text, sizeof text, NULL);
  fail(DEVMESH_ERR_BACKEND, "%s failed: %s", call, host ? text : "(MPI error code)");
  last_code = code;
  return DEVMESH_ERR_BACKEND;
}

static const char *last_error(void) { return last; }
static int last_mpi_error(void) { return last_code; }

#if defined(EXAMPLE_V2_ONLY) && !defined(EXAMPLE_NO_V4)
#define EXAMPLE_NO_V4 /* version 4 builds on version 3 */
#endif

#ifndef EXAMPLE_V2_ONLY
/* One line of the core's log (DEVMESH_LOG), when the level is wanted. */
static void say(int level, const char *message) {
  if (host && level <= host->log_level) host->log(EXAMPLE_NAME, level, message);
}
#endif

/* ---- instances and communicators ---------------------------------------- */

struct instance {
  double timeout; /* seconds, 0: none */
};

struct comm {
  MPI_Comm data;    /* collectives and point to point */
  MPI_Comm control; /* revoke notices */
  int rank, size;
  double timeout;
  int abandoned;      /* a wait gave up on pending requests (see comm_destroy) */
  int revoked;        /* 1 once revoked here or by a notice */
  int revoked_by;     /* the rank whose notice came first, or -1: this one */
  int revoked_status; /* the status the notice carried (why it was revoked) */
  int notices_sent;
};

struct request {
  struct comm *comm;
  MPI_Request mpi;
};

static int open_instance(int n, const char *const keys[], const char *const values[], void **out) {
  double timeout = 0;
  for (int i = 0; i < n; ++i) {
    if (strcmp(keys[i], "timeout") == 0) {
      char *end = NULL;
      timeout = strtod(values[i], &end);
      if (!*values[i] || *end || timeout < 0)
        return fail(DEVMESH_ERR_INVALID_ARGUMENT, "option timeout=%s: expected seconds >= 0", values[i]);
    } else {
      return fail(DEVMESH_ERR_INVALID_ARGUMENT, "no option '%s' (known: timeout)", keys[i]);
    }
  }
  struct instance *inst = malloc(sizeof *inst);
  if (!inst) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  inst->timeout = timeout;
  *out = inst;
  return DEVMESH_SUCCESS;
}

static void close_instance(void *inst) { free(inst); }

/* Step 1, local: everything that can fail without talking to anyone. */
static int comm_prepare(void *inst, const devmesh_backend_group_t *group, void **prepared) {
  struct comm *c = calloc(1, sizeof *c);
  if (!c) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  c->data = group->group; /* the group's communicator until connected */
  c->control = MPI_COMM_NULL;
  c->timeout = ((struct instance *)inst)->timeout;
  if (group->size >= offsetof(devmesh_backend_group_t, deadline) + sizeof group->deadline && group->deadline > 0 &&
      (c->timeout == 0 || group->deadline < c->timeout))
    c->timeout = group->deadline;
  c->revoked_by = -1;
  *prepared = c;
  return DEVMESH_SUCCESS;
}

#ifndef EXAMPLE_V2_ONLY
static void comm_abandon(void *prepared) { free(prepared); }
#endif

/* Step 2, collective: our own duplicates of the group's communicator. */
static int comm_connect(void *prepared, void **out) {
  struct comm *c = prepared;
  MPI_Comm group = c->data;
  int rc = MPI_Comm_dup(group, &c->data);
  if (rc == MPI_SUCCESS) {
    rc = MPI_Comm_dup(group, &c->control);
    if (rc != MPI_SUCCESS) MPI_Comm_free(&c->data);
  }
  if (rc != MPI_SUCCESS) {
    free(c);
    return mpi_fail(rc, "MPI_Comm_dup");
  }
  MPI_Comm_set_errhandler(c->data, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(c->control, MPI_ERRORS_RETURN);
  MPI_Comm_rank(c->data, &c->rank);
  MPI_Comm_size(c->data, &c->size);
  *out = c;
  return DEVMESH_SUCCESS;
}

/* Version 2's one-step creation: both steps at once. */
static int comm_create(void *inst, const devmesh_backend_group_t *group, void **out) {
  void *prepared = NULL;
  int rc = comm_prepare(inst, group, &prepared);
  return rc != DEVMESH_SUCCESS ? rc : comm_connect(prepared, out);
}

static void comm_destroy(void *comm) {
  struct comm *c = comm;
  /* Revoke notices nobody received are dropped with the communicator. A
   * communicator with an abandoned collective is left to MPI, not freed:
   * Open MPI 5.0.11 crashed progressing such a collective (in a later MPI
   * call) once its communicator was freed. */
  if (!c->abandoned) MPI_Comm_free(&c->data);
  MPI_Comm_free(&c->control);
  free(c);
}

static int comm_native(void *comm, void **handle) {
  *handle = &((struct comm *)comm)->data;
  return DEVMESH_SUCCESS;
}

/* ---- revoke: local, idempotent, spread to the other members ------------- */

#ifndef EXAMPLE_V2_ONLY
/* The notice carries the status: every member then reports the failure the
 * revoking rank saw. A rank revoked by a notice does not send its own. */
static int revoke(void *comm, int status) {
  static int statuses[64]; /* one buffer per status value, never freed */
  struct comm *c = comm;
  c->revoked = 1;
  if (c->notices_sent || c->revoked_by >= 0) return DEVMESH_SUCCESS;
  c->notices_sent = 1;
  if (status <= 0 || status >= 64) status = DEVMESH_ERR_REVOKED;
  statuses[status] = status;
  for (int r = 0; r < c->size; ++r) {
    if (r == c->rank) continue;
    MPI_Request req;
    if (MPI_Isend(&statuses[status], 1, MPI_INT, r, TAG_REVOKE, c->control, &req) == MPI_SUCCESS)
      MPI_Request_free(&req);
  }
  say(DEVMESH_LOG_INFO, "communicator revoked; notices sent to the other members");
  return DEVMESH_SUCCESS;
}
#endif

/* Whether the communicator is revoked, here or by another member's notice. */
static int is_revoked(struct comm *c) {
  if (c->revoked) return 1;
  int flag = 0;
  MPI_Status st;
  if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_REVOKE, c->control, &flag, &st) == MPI_SUCCESS && flag) {
    int status = DEVMESH_ERR_REVOKED;
    MPI_Recv(&status, 1, MPI_INT, st.MPI_SOURCE, TAG_REVOKE, c->control, MPI_STATUS_IGNORE);
    c->revoked = 1;
    c->revoked_by = st.MPI_SOURCE;
    c->revoked_status = status;
  }
  return c->revoked;
}

/* What a revoked communicator's operations answer: the failure behind the
 * revoke, naming the rank it came from. */
static int revoked_error(struct comm *c, const char *what) {
  if (c->revoked_by >= 0)
    return fail(c->revoked_status, "%s: the operation failed on rank %d of the group (status %d there), which revoked "
                "the communicator", what, c->revoked_by, c->revoked_status);
  return fail(DEVMESH_ERR_REVOKED, "%s: the communicator was revoked", what);
}

/* Waits for n (1 or 2) requests, unless the communicator is revoked or the timeout
 * passes first. Requests left pending then are abandoned with the
 * communicator (MPI cannot cancel a collective), which is then never freed
 * (comm_destroy). */
static int wait_all(struct comm *c, int n, MPI_Request reqs[], const char *what) {
  const double start = MPI_Wtime();
  MPI_Status statuses[2];
  for (;;) {
    int done = 0;
    int rc = MPI_Testall(n, reqs, &done, statuses);
    if (rc == MPI_SUCCESS && done) return DEVMESH_SUCCESS;
    int err = DEVMESH_SUCCESS;
    if (rc != MPI_SUCCESS)
      err = mpi_fail(rc, what);
    else if (is_revoked(c))
      err = revoked_error(c, what);
    else if (c->timeout > 0 && MPI_Wtime() - start > c->timeout)
      err = fail(DEVMESH_ERR_TIMEOUT, "%s: no completion within timeout=%g s", what, c->timeout);
    if (err != DEVMESH_SUCCESS) {
      c->abandoned = 1; /* requests left pending */
      return err;
    }
    sched_yield();
  }
}

/* Starts one operation (rc of the MPI call that started it) and waits. */
static int finish(struct comm *c, int rc, MPI_Request *req, const char *what) {
  if (rc != MPI_SUCCESS) return mpi_fail(rc, what);
  return wait_all(c, 1, req, what);
}

/* ---- data types ----------------------------------------------------------- */

static MPI_Datatype mpi_type(int t) {
  switch (t) {
    case DEVMESH_INT8: return MPI_INT8_T;
    case DEVMESH_UINT8: return MPI_UINT8_T;
    case DEVMESH_INT32: return MPI_INT32_T;
    case DEVMESH_UINT32: return MPI_UINT32_T;
    case DEVMESH_INT64: return MPI_INT64_T;
    case DEVMESH_UINT64: return MPI_UINT64_T;
    case DEVMESH_FLOAT16:
    case DEVMESH_BFLOAT16: return MPI_UINT16_T; /* moved, never reduced */
    case DEVMESH_FLOAT32: return MPI_FLOAT;
    default: return MPI_DOUBLE;
  }
}

static MPI_Op mpi_op(int op) {
  switch (op) {
    case DEVMESH_SUM: return MPI_SUM;
    case DEVMESH_PROD: return MPI_PROD;
    case DEVMESH_MIN: return MPI_MIN;
    default: return MPI_MAX;
  }
}

static size_t type_size(int t) {
  switch (t) {
    case DEVMESH_INT8:
    case DEVMESH_UINT8: return 1;
    case DEVMESH_FLOAT16:
    case DEVMESH_BFLOAT16: return 2;
    case DEVMESH_INT32:
    case DEVMESH_UINT32:
    case DEVMESH_FLOAT32: return 4;
    default: return 8;
  }
}

/* MPI reduces every type but the 16-bit floats. */
static int reduce_supported(void *inst, int t, int op) {
  (void)inst;
  (void)op;
  return t != DEVMESH_FLOAT16 && t != DEVMESH_BFLOAT16;
}

/* MPI counts are int. The core has checked everything else (types,
 * reductions, buffers, roots, peers): a plugin need not check again. */
#define COUNT(n)                                                                        \
  do {                                                                                  \
    if ((n) > (size_t)INT_MAX) return fail(DEVMESH_ERR_UNSUPPORTED, "at most 2^31-1 elements per call"); \
  } while (0)

/* ---- collectives ------------------------------------------------------------ */

static int allreduce(void *comm, const void *send, void *recv, size_t count, int t, int op, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, "allreduce");
  /* A version 2 core calls this for any pair: answer what we lack. */
  if (!reduce_supported(NULL, t, op)) return fail(DEVMESH_ERR_UNSUPPORTED, "cannot reduce 16-bit floats");
  return finish(c, MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mpi_type(t), mpi_op(op),
                                  c->data, &req),
                &req, "MPI_Iallreduce");
}

static int allgather(void *comm, const void *send, void *recv, size_t count, int t, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, "allgather");
  const int in_place = (const char *)send == (const char *)recv + (size_t)c->rank * count * type_size(t);
  return finish(c, MPI_Iallgather(in_place ? MPI_IN_PLACE : send, (int)count, mpi_type(t), recv, (int)count,
                                  mpi_type(t), c->data, &req),
                &req, "MPI_Iallgather");
}

static int reduce_scatter(void *comm, const void *send, void *recv, size_t count, int t, int op, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, "reduce_scatter");
  if (!reduce_supported(NULL, t, op)) return fail(DEVMESH_ERR_UNSUPPORTED, "cannot reduce 16-bit floats");
  return finish(c, MPI_Ireduce_scatter_block(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mpi_type(t),
                                             mpi_op(op), c->data, &req),
                &req, "MPI_Ireduce_scatter_block");
}

static int broadcast(void *comm, void *buffer, size_t count, int t, int root, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, "broadcast");
  return finish(c, MPI_Ibcast(buffer, (int)count, mpi_type(t), root, c->data, &req), &req, "MPI_Ibcast");
}

static int alltoall(void *comm, const void *send, void *recv, size_t count, int t, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, "alltoall");
  return finish(c, MPI_Ialltoall(send == recv ? MPI_IN_PLACE : send, (int)count, mpi_type(t), recv, (int)count,
                                 mpi_type(t), c->data, &req),
                &req, "MPI_Ialltoall");
}

static int barrier(void *comm, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  if (is_revoked(c)) return revoked_error(c, "barrier");
  return finish(c, MPI_Ibarrier(c->data, &req), &req, "MPI_Ibarrier");
}

#ifndef EXAMPLE_NO_V4
/* ---- version 4: alltoallv ------------------------------------------------------
 *
 * The pattern of every version 4 member: the core has checked the arguments
 * (types, every segment of every array inside size_t bytes, buffers not
 * NULL where a segment is not empty, sendcounts[rank] == recvcounts[rank]),
 * so what is left is the library's own limits (MPI's int counts) and the
 * call. The count and displacement arrays are the caller's only during the
 * call: a plugin that needs them later copies them (MPI reads its own int
 * copies below until the operation completes).
 *
 * request: NULL asks for the blocking operation, and it is always NULL
 * here. The example does not state DEVMESH_BACKEND_CAP_NONBLOCKING_
 * COLLECTIVES, and the core passes a request to a version 4 member only for
 * a plugin that does (ialltoallv on this plugin is UNSUPPORTED without
 * reaching it). A plugin that states it starts the operation, keeps the
 * int arrays in its request until test() or wait() ends it, and writes
 * *request only on success. */

/* The size_t counts or displacements of the n members as MPI's ints, into
 * out; which names the array for the message. */
static int to_ints(const size_t *in, int n, int *out, const char *which) {
  for (int r = 0; r < n; ++r) {
    if (in[r] > (size_t)INT_MAX)
      return fail(DEVMESH_ERR_UNSUPPORTED, "MPI takes at most 2^31-1 elements in %s, got %zu (element %d)", which,
                  in[r], r);
    out[r] = (int)in[r];
  }
  return DEVMESH_SUCCESS;
}

/* Block r of send (sendcounts[r] elements at sdispls[r]) to rank r, block
 * `rank` of every rank into recv (recvcounts[r] at rdispls[r]); the gaps
 * between segments are left untouched, as MPI does. In place (send ==
 * recv), sendcounts and sdispls are NULL and MPI_IN_PLACE says so. */
static int alltoallv(void *comm, const void *send, const size_t sendcounts[], const size_t sdispls[], void *recv,
                     const size_t recvcounts[], const size_t rdispls[], int t, void *stream, void **request) {
  struct comm *c = comm;
  (void)stream;
  (void)request; /* NULL: see above */
  if (is_revoked(c)) return revoked_error(c, "alltoallv");
  const int n = c->size, in_place = send == recv;
  int *ints = malloc(4 * (size_t)n * sizeof *ints);
  if (!ints) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  int *scounts = ints, *sdispl = ints + n, *rcounts = ints + 2 * n, *rdispl = ints + 3 * n;
  int status = to_ints(recvcounts, n, rcounts, "recvcounts");
  if (status == DEVMESH_SUCCESS) status = to_ints(rdispls, n, rdispl, "rdispls");
  if (status == DEVMESH_SUCCESS && !in_place) status = to_ints(sendcounts, n, scounts, "sendcounts");
  if (status == DEVMESH_SUCCESS && !in_place) status = to_ints(sdispls, n, sdispl, "sdispls");
  if (status == DEVMESH_SUCCESS) {
    MPI_Request req;
    const int started = MPI_Ialltoallv(in_place ? MPI_IN_PLACE : send, scounts, sdispl, mpi_type(t), recv, rcounts,
                                       rdispl, mpi_type(t), c->data, &req);
    status = finish(c, started, &req, "MPI_Ialltoallv");
    /* A wait cut short (revoke, timeout) leaves the operation to MPI, which
     * may still read the arrays: they stay with the abandoned communicator. */
    if (started == MPI_SUCCESS && status != DEVMESH_SUCCESS) return status;
  }
  free(ints);
  return status;
}
#endif

/* ---- point to point ---------------------------------------------------------- */

static int p2p_send(void *comm, const void *buffer, size_t count, int t, int peer, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, "send");
  return finish(c, MPI_Isend(buffer, (int)count, mpi_type(t), peer, TAG_DATA, c->data, &req), &req, "MPI_Isend");
}

static int p2p_recv(void *comm, void *buffer, size_t count, int t, int peer, void *stream) {
  struct comm *c = comm;
  MPI_Request req;
  (void)stream;
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, "recv");
  return finish(c, MPI_Irecv(buffer, (int)count, mpi_type(t), peer, TAG_DATA, c->data, &req), &req, "MPI_Irecv");
}

static int start(struct comm *c, int is_send, void *buffer, size_t count, int t, int peer, void **out) {
  COUNT(count);
  if (is_revoked(c)) return revoked_error(c, is_send ? "isend" : "irecv");
  struct request *r = malloc(sizeof *r);
  if (!r) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  r->comm = c;
  const int rc = is_send ? MPI_Isend(buffer, (int)count, mpi_type(t), peer, TAG_DATA, c->data, &r->mpi)
                         : MPI_Irecv(buffer, (int)count, mpi_type(t), peer, TAG_DATA, c->data, &r->mpi);
  if (rc != MPI_SUCCESS) {
    free(r);
    return mpi_fail(rc, is_send ? "MPI_Isend" : "MPI_Irecv");
  }
  *out = r;
  return DEVMESH_SUCCESS;
}

static int isend(void *comm, const void *buffer, size_t count, int t, int peer, void *stream, void **request) {
  (void)stream;
  return start(comm, 1, (void *)buffer, count, t, peer, request);
}

static int irecv(void *comm, void *buffer, size_t count, int t, int peer, void *stream, void **request) {
  (void)stream;
  return start(comm, 0, buffer, count, t, peer, request);
}

/* A request ends here (freed) when it completes or fails. */
static int request_test(void *request, int *done) {
  struct request *r = request;
  int rc = MPI_Test(&r->mpi, done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    free(r);
    return mpi_fail(rc, "MPI_Test");
  }
  if (*done) {
    free(r);
    return DEVMESH_SUCCESS;
  }
  if (is_revoked(r->comm)) {
    const int status = revoked_error(r->comm, "test");
    free(r); /* its MPI request is abandoned with the communicator */
    return status;
  }
  return DEVMESH_SUCCESS;
}

static int request_wait(void *request) {
  struct request *r = request;
  const int status = wait_all(r->comm, 1, &r->mpi, "wait");
  free(r);
  return status;
}

static int sendrecv(void *comm, const void *sendbuf, size_t sendcount, int sendtype, int dest, void *recvbuf,
                    size_t recvcount, int recvtype, int source, void *stream) {
  struct comm *c = comm;
  MPI_Request reqs[2];
  (void)stream;
  COUNT(sendcount);
  COUNT(recvcount);
  if (is_revoked(c)) return revoked_error(c, "sendrecv");
  int rc = MPI_Irecv(recvbuf, (int)recvcount, mpi_type(recvtype), source, TAG_DATA, c->data, &reqs[0]);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Irecv");
  rc = MPI_Isend(sendbuf, (int)sendcount, mpi_type(sendtype), dest, TAG_DATA, c->data, &reqs[1]);
  if (rc != MPI_SUCCESS) return mpi_fail(rc, "MPI_Isend");
  return wait_all(c, 2, reqs, "sendrecv");
}

/* ---- set-up ------------------------------------------------------------------- */

#ifndef EXAMPLE_V2_ONLY
static int init_host(const devmesh_backend_host_t *h) {
  host = h;
  char line[256];
  snprintf(line, sizeof line, "running on %s", h->mpi_library);
  say(DEVMESH_LOG_DEBUG, line);
  return DEVMESH_SUCCESS;
}
#endif

#define EXAMPLE_V2_MEMBERS(version, create)                                                               \
  {                                                                                                        \
    {version, EXAMPLE_NAME, NULL, NULL, NULL, last_error, open_instance, close_instance, create,          \
     comm_destroy, comm_native, allreduce, allgather, reduce_scatter, broadcast, alltoall, barrier, p2p_send, \
     p2p_recv, last_mpi_error},                                                                                \
        isend, irecv, request_test, request_wait, sendrecv,                                                              \
  }

/* What version 3 adds and states; version 4's table starts with the same. */
#define EXAMPLE_CAPS \
  (DEVMESH_BACKEND_CAP_NONBLOCKING | DEVMESH_BACKEND_CAP_REVOKE_SPREADS | DEVMESH_BACKEND_CAP_DEADLINE)
#define EXAMPLE_V3_MEMBERS(version, caps)                                                            \
  {                                                                                                   \
    EXAMPLE_V2_MEMBERS(version, NULL), DEVMESH_BACKEND_MPI, caps, init_host, reduce_supported,        \
        comm_prepare, comm_connect, comm_abandon, revoke,                                              \
  }

#ifndef EXAMPLE_NO_EXPORT
#ifndef EXAMPLE_NO_V4
/* Version 4: the version 3 table with abi_version 4 and the capability bit
 * of each version 4 member it has, then those members, by name. Every
 * member left out is NULL; a bit stated without its member, or a member
 * without its bit, gets the table refused at load. */
DEVMESH_BACKEND_EXPORT_V4 = {
    .v3 = EXAMPLE_V3_MEMBERS(DEVMESH_BACKEND_ABI_VERSION_4, EXAMPLE_CAPS | DEVMESH_BACKEND_CAP_ALLTOALLV),
    .alltoallv = alltoallv,
};
#endif
#ifndef EXAMPLE_V2_ONLY
DEVMESH_BACKEND_EXPORT_V3 = EXAMPLE_V3_MEMBERS(DEVMESH_BACKEND_ABI_VERSION_3, EXAMPLE_CAPS);
#endif
DEVMESH_BACKEND_EXPORT_V2 = EXAMPLE_V2_MEMBERS(DEVMESH_BACKEND_ABI_VERSION_2, comm_create);
#endif
