/* Careless but legal plugins, and broken ones, built from the example
 * plugin (examples/plugin) to check what the core makes of them
 * (test_faulty.cpp). Each build is its own libdevmesh-backend-<name>.so:
 *
 *   FAULTY_NAME      its name
 *   FAULTY_V3        exports a version 3 table (else version 2)
 *   FAULTY_V4        exports a version 4 table with the example's alltoallv
 *                    and its capability bit, broken as the next ones say:
 *   FAULTY_V4_CAPS=B   ...stating the bits B instead
 *   FAULTY_V4_STARTED  ...with the six non-blocking collectives too (stubs)
 *   FAULTY_V4_BATCH    ...with batch too (a stub)
 *   FAULTY_V4_TOPOLOGY ...with topology too (a stub)
 *   FAULTY_NO_P2P    without isend, irecv, test, wait and
 *                    DEVMESH_BACKEND_CAP_NONBLOCKING
 *   FAULTY_ABI=N     the abi_version its table claims (default: its symbol's)
 *   FAULTY_FAMILY=S  the MPI its v3 table states (default: the real one)
 *   FAULTY_NO_TEST, FAULTY_NO_WAIT: isend and irecv without test / wait
 *   FAULTY_LOCAL_REVOKE: revoke reaches this rank's operations only (no
 *                    notices to the other members, as NCCL's), from any
 *                    thread: REVOKE_ANY_THREAD, not REVOKE_SPREADS
 *   FAULTY_NO_REVOKE_CAPS: revoke, but neither capability
 *   FAULTY_NULL_REVOKE: REVOKE_SPREADS stated, revoke NULL (a broken table)
 *   FAULTY_BOUNDED_CREATE: comm_create's collective part waits for every
 *                    member at most the option timeout=SECONDS (a token
 *                    to and from each over group->group), so that a
 *                    member whose comm_create failed before it leaves the
 *                    others failing with TIMEOUT instead of waiting forever
 *
 * Faults chosen at run time by options (the same on every rank):
 *   fail=OP          comm_prepare, comm_connect, comm_connect_late and
 *                    comm_create_late (after the collective part), comm_create, allreduce, or reopen (every
 *                    open but this process's first: a later mesh's) fails...
 *   rank=R           ...on world rank R only (default: every rank)
 *   status=N         ...with status N (default DEVMESH_ERR_BACKEND; any int)
 *   message=TEXT     ...with this message; "huge": 50 MB of text
 *   mpi_code=N       ...and last_mpi_error() N
 *   null_comm=1      comm_connect / comm_create succeed with a NULL comm
 * faulty_calls("comm_prepare"|"comm_connect"|"comm_create") counts calls. */
/* Each build uses part of what it includes. */
#pragma GCC diagnostic ignored "-Wunused-function"
#define EXAMPLE_NO_EXPORT
#ifndef FAULTY_NAME
#define FAULTY_NAME "faulty"
#endif
#define EXAMPLE_NAME FAULTY_NAME
#include "../../examples/plugin/devmesh-backend-example.c"

struct faults {
  char op[32];
  int rank, status, mpi_code, null_comm, huge;
  char message[256];
};
static struct faults faults;
static char *huge_message;
static int prepare_calls, connect_calls, create_calls;
static int faulty_active; /* the last failure was injected */

__attribute__((visibility("default"))) int faulty_calls(const char *op) {
  if (strcmp(op, "comm_prepare") == 0) return prepare_calls;
  if (strcmp(op, "comm_connect") == 0) return connect_calls;
  return create_calls;
}

static int world_rank(void) {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static int injected(const char *op) {
  return strcmp(faults.op, op) == 0 && (faults.rank < 0 || faults.rank == world_rank());
}

static int inject(void) {
  faulty_active = 1;
  snprintf(last, sizeof last, "%s", faults.message[0] ? faults.message : "injected failure");
  return faults.status;
}

static const char *faulty_last_error(void) {
  return faulty_active && faults.huge ? huge_message : last_error();
}

static int faulty_last_mpi_error(void) { return faulty_active ? faults.mpi_code : last_mpi_error(); }

static int faulty_open(int n, const char *const keys[], const char *const values[], void **out) {
  memset(&faults, 0, sizeof faults);
  faults.rank = -1;
  faults.status = DEVMESH_ERR_BACKEND;
  const char *rest_keys[16], *rest_values[16];
  int m = 0;
  for (int i = 0; i < n; ++i) {
    if (strcmp(keys[i], "fail") == 0) snprintf(faults.op, sizeof faults.op, "%s", values[i]);
    else if (strcmp(keys[i], "rank") == 0) faults.rank = atoi(values[i]);
    else if (strcmp(keys[i], "status") == 0) faults.status = atoi(values[i]);
    else if (strcmp(keys[i], "mpi_code") == 0) faults.mpi_code = atoi(values[i]);
    else if (strcmp(keys[i], "null_comm") == 0) faults.null_comm = atoi(values[i]);
    else if (strcmp(keys[i], "message") == 0 && strcmp(values[i], "huge") == 0) faults.huge = 1;
    else if (strcmp(keys[i], "message") == 0) snprintf(faults.message, sizeof faults.message, "%s", values[i]);
    else if (m < 16) {
      rest_keys[m] = keys[i];
      rest_values[m++] = values[i];
    }
  }
  if (faults.huge && !huge_message) {
    const size_t size = 50u << 20;
    huge_message = malloc(size + 1);
    if (!huge_message) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
    memset(huge_message, 'x', size);
    huge_message[size] = '\0';
  }
  faulty_active = 0;
  static int opens;
  if (opens++ > 0 && injected("reopen")) return inject();
  return open_instance(m, rest_keys, rest_values, out);
}

static int faulty_prepare(void *inst, const devmesh_backend_group_t *group, void **prepared) {
  ++prepare_calls;
  if (injected("comm_prepare")) return inject();
  return comm_prepare(inst, group, prepared);
}

static int faulty_connect(void *prepared, void **out) {
  ++connect_calls;
  if (injected("comm_connect")) {
    comm_abandon(prepared);
    return inject();
  }
  const int rc = comm_connect(prepared, out);
  if (rc == DEVMESH_SUCCESS && injected("comm_connect_late")) {
    comm_destroy(*out);
    *out = NULL;
    return inject();
  }
  if (rc == DEVMESH_SUCCESS && faults.null_comm) {
    comm_destroy(*out);
    *out = NULL;
  }
  return rc;
}

#ifdef FAULTY_BOUNDED_CREATE
enum { TAG_TOKEN = 3 };

/* Ends the requests still pending after a wait gave up: the receives are
 * cancelled, the sends (of a static token) left to complete on their own. */
static void drop_pending(int n, MPI_Request reqs[]) {
  for (int i = 0; i < n; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    if (i % 2 == 0) {
      MPI_Cancel(&reqs[i]);
      MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    } else {
      MPI_Request_free(&reqs[i]);
    }
  }
}

/* A token to and from every other member of the group, waited for at most
 * the instance's timeout (0: unbounded). */
static int exchange_tokens(void *inst, const devmesh_backend_group_t *group) {
  static int token = 1;
  int rank = 0, size = 0, n = 0, done = 0;
  MPI_Comm_rank(group->group, &rank);
  MPI_Comm_size(group->group, &size);
  MPI_Request *reqs = malloc(2 * (size_t)size * sizeof *reqs);
  MPI_Status *statuses = malloc(2 * (size_t)size * sizeof *statuses);
  int *in = malloc((size_t)size * sizeof *in);
  if (!reqs || !statuses || !in) {
    free(reqs);
    free(statuses);
    free(in);
    return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  }
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    MPI_Irecv(&in[r], 1, MPI_INT, r, TAG_TOKEN, group->group, &reqs[n++]);
    MPI_Isend(&token, 1, MPI_INT, r, TAG_TOKEN, group->group, &reqs[n++]);
  }
  const double timeout = ((struct instance *)inst)->timeout, start = MPI_Wtime();
  while (MPI_Testall(n, reqs, &done, statuses) == MPI_SUCCESS && !done &&
         (timeout == 0 || MPI_Wtime() - start <= timeout))
    sched_yield();
  if (!done) drop_pending(n, reqs);
  free(reqs);
  free(statuses);
  free(in);
  if (!done) return fail(DEVMESH_ERR_TIMEOUT, "not every member of the group joined within timeout=%g s", timeout);
  return DEVMESH_SUCCESS;
}
#endif

static int faulty_create(void *inst, const devmesh_backend_group_t *group, void **out) {
  ++create_calls;
  if (injected("comm_create")) return inject();
#ifdef FAULTY_BOUNDED_CREATE
  const int joined = exchange_tokens(inst, group);
  if (joined != DEVMESH_SUCCESS) return joined;
#endif
  const int rc = comm_create(inst, group, out);
  if (rc == DEVMESH_SUCCESS && injected("comm_create_late")) {
    comm_destroy(*out);
    return inject();
  }
  if (rc == DEVMESH_SUCCESS && faults.null_comm) {
    comm_destroy(*out);
    *out = NULL;
  }
  return rc;
}

static int faulty_allreduce(void *comm, const void *send, void *recv, size_t count, int t, int op, void *stream) {
  if (injected("allreduce")) return inject();
  faulty_active = 0;
  return allreduce(comm, send, recv, count, t, op, stream);
}

#ifdef FAULTY_NO_P2P
#define FAULTY_NO_TEST
#define FAULTY_NO_WAIT
#define FAULTY_ISEND NULL
#define FAULTY_IRECV NULL
#define FAULTY_NONBLOCKING 0
#else
#define FAULTY_ISEND isend
#define FAULTY_IRECV irecv
#define FAULTY_NONBLOCKING DEVMESH_BACKEND_CAP_NONBLOCKING
#endif
#ifndef FAULTY_NO_TEST
#define FAULTY_TEST request_test
#else
#define FAULTY_TEST NULL
#endif
#ifndef FAULTY_NO_WAIT
#define FAULTY_WAIT request_wait
#else
#define FAULTY_WAIT NULL
#endif

#define FAULTY_V2_MEMBERS(version, create)                                                                      \
  {                                                                                                              \
    {version, FAULTY_NAME, NULL, NULL, NULL, faulty_last_error, faulty_open, close_instance, create,            \
     comm_destroy, comm_native, faulty_allreduce, allgather, reduce_scatter, broadcast, alltoall, barrier,      \
     p2p_send, p2p_recv, faulty_last_mpi_error},                                                                 \
        FAULTY_ISEND, FAULTY_IRECV, FAULTY_TEST, FAULTY_WAIT, sendrecv,                                          \
  }

#if defined(FAULTY_LOCAL_REVOKE)
/* Stops this rank's operations on the communicator (wait_all polls the
 * flag); the other members learn of nothing from it. */
static int local_revoke(void *comm, int status) {
  (void)status;
  __atomic_store_n(&((struct comm *)comm)->revoked, 1, __ATOMIC_RELEASE);
  return DEVMESH_SUCCESS;
}
#define FAULTY_REVOKE local_revoke
#define FAULTY_REVOKE_CAPS DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD
#elif defined(FAULTY_NULL_REVOKE)
#define FAULTY_REVOKE NULL
#define FAULTY_REVOKE_CAPS DEVMESH_BACKEND_CAP_REVOKE_SPREADS
#elif defined(FAULTY_NO_REVOKE_CAPS)
#define FAULTY_REVOKE revoke
#define FAULTY_REVOKE_CAPS 0
#else
#define FAULTY_REVOKE revoke
#define FAULTY_REVOKE_CAPS DEVMESH_BACKEND_CAP_REVOKE_SPREADS
#endif

#define FAULTY_V3_MEMBERS(abi, caps)                                                                            \
  {                                                                                                              \
    FAULTY_V2_MEMBERS(abi, NULL), FAULTY_FAMILY, FAULTY_NONBLOCKING | (caps) | DEVMESH_BACKEND_CAP_DEADLINE,     \
        init_host, reduce_supported, faulty_prepare, faulty_connect, comm_abandon, FAULTY_REVOKE,               \
  }
#ifndef FAULTY_FAMILY
#define FAULTY_FAMILY DEVMESH_BACKEND_MPI
#endif

#if defined(FAULTY_V4)
/* Members never called: the loader refuses every table that has them. */
static int never(void) { return fail(DEVMESH_ERR_INTERNAL, "a refused table was called"); }
#define NEVER(member) ((__typeof__(((devmesh_backend_v4_t *)0)->member))(void (*)(void))never)
#ifndef FAULTY_V4_CAPS
#define FAULTY_V4_CAPS DEVMESH_BACKEND_CAP_ALLTOALLV
#endif
DEVMESH_BACKEND_EXPORT_V4 = {
    .v3 = FAULTY_V3_MEMBERS(DEVMESH_BACKEND_ABI_VERSION_4, FAULTY_REVOKE_CAPS | (FAULTY_V4_CAPS)),
    .alltoallv = alltoallv,
#ifdef FAULTY_V4_STARTED
    .iallreduce = NEVER(iallreduce),
    .iallgather = NEVER(iallgather),
    .ireduce_scatter = NEVER(ireduce_scatter),
    .ibroadcast = NEVER(ibroadcast),
    .ialltoall = NEVER(ialltoall),
    .ibarrier = NEVER(ibarrier),
#endif
#ifdef FAULTY_V4_BATCH
    .batch = NEVER(batch),
#endif
#ifdef FAULTY_V4_TOPOLOGY
    .topology = NEVER(topology),
#endif
};
#elif defined(FAULTY_V3)
#ifndef FAULTY_ABI
#define FAULTY_ABI DEVMESH_BACKEND_ABI_VERSION_3
#endif
DEVMESH_BACKEND_EXPORT_V3 = FAULTY_V3_MEMBERS(FAULTY_ABI, FAULTY_REVOKE_CAPS);
#else
#ifndef FAULTY_ABI
#define FAULTY_ABI DEVMESH_BACKEND_ABI_VERSION_2
#endif
DEVMESH_BACKEND_EXPORT_V2 = FAULTY_V2_MEMBERS(FAULTY_ABI, faulty_create);
#endif
