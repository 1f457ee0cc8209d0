/* A minimal devmesh backend plugin, written as a user of an installed
 * devmesh would: only <devmesh/backend_plugin.h>, built as its own shared
 * object libdevmesh-backend-example.so, selected by name "example" and found
 * through DEVMESH_BACKEND_PATH (docs/BACKENDS.md walks through it).
 *
 * It runs the collectives over the group's MPI communicator, on its own
 * duplicate of it (so its traffic never mixes with the application's), for
 * the integer and floating types MPI reduces; float16/bfloat16 and the
 * operations it leaves out (alltoall, send, recv) are reported as
 * unsupported.
 *
 * Options: scale=N (an integer every rank must pass alike; allreduce
 * results are multiplied by it, so a test can see the option arrive) and
 * label=TEXT (a per-rank option, which may differ between ranks).
 *
 * The tests also build broken variants of this file to check how the core
 * reports them (EXAMPLE_NAME names each): -DEXAMPLE_ABI=99 (an ABI
 * version the core does not accept), -DEXAMPLE_INIT_FAILS (init() fails),
 * -DEXAMPLE_NO_TABLE (no exported table). */
#include <devmesh/backend_plugin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EXAMPLE_ABI
#define EXAMPLE_ABI DEVMESH_BACKEND_ABI_VERSION
#endif
#ifndef EXAMPLE_NAME
#define EXAMPLE_NAME "example"
#endif

static _Thread_local char last[256];

static int fail(int status, const char *what) {
  snprintf(last, sizeof last, "%s", what);
  return status;
}

static const char *last_error(void) { return last; }

struct instance {
  long scale;
};

struct comm {
  MPI_Comm comm; /* our duplicate of the group's communicator */
  long scale;
};

static int init(void) {
#ifdef EXAMPLE_INIT_FAILS
  return fail(DEVMESH_ERR_UNSUPPORTED, "backend 'example' was built to fail its initialisation");
#else
  return DEVMESH_SUCCESS;
#endif
}

static int open_instance(int n, const char *const keys[], const char *const values[], void **out) {
  long scale = 1;
  for (int i = 0; i < n; ++i) {
    if (strcmp(keys[i], "scale") == 0) {
      char *end = NULL;
      scale = strtol(values[i], &end, 10);
      if (!*values[i] || *end || scale < 1)
        return fail(DEVMESH_ERR_INVALID_ARGUMENT, "backend 'example': option scale needs a positive integer");
    } else if (strcmp(keys[i], "label") != 0) {
      snprintf(last, sizeof last, "no option '%s' (known: scale, label)", keys[i]);
      return DEVMESH_ERR_INVALID_ARGUMENT;
    }
  }
  struct instance *inst = malloc(sizeof *inst);
  if (!inst) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  inst->scale = scale;
  *out = inst;
  return DEVMESH_SUCCESS;
}

static void close_instance(void *inst) { free(inst); }

static int comm_create(void *inst, const devmesh_backend_group_t *group, void **out) {
  struct comm *c = malloc(sizeof *c);
  if (!c) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  if (MPI_Comm_dup(group->group, &c->comm) != MPI_SUCCESS) {
    free(c);
    return fail(DEVMESH_ERR_BACKEND, "MPI_Comm_dup failed");
  }
  c->scale = ((struct instance *)inst)->scale;
  *out = c;
  return DEVMESH_SUCCESS;
}

static void comm_destroy(void *comm) {
  struct comm *c = comm;
  MPI_Comm_free(&c->comm);
  free(c);
}

static int comm_native(void *comm, void **handle) {
  *handle = &((struct comm *)comm)->comm;
  return DEVMESH_SUCCESS;
}

static MPI_Datatype mpi_type(int t) {
  switch (t) {
    case DEVMESH_INT8: return MPI_INT8_T;
    case DEVMESH_UINT8: return MPI_UINT8_T;
    case DEVMESH_INT32: return MPI_INT32_T;
    case DEVMESH_UINT32: return MPI_UINT32_T;
    case DEVMESH_INT64: return MPI_INT64_T;
    case DEVMESH_UINT64: return MPI_UINT64_T;
    case DEVMESH_FLOAT32: return MPI_FLOAT;
    case DEVMESH_FLOAT64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
  }
}

static MPI_Op mpi_op(int op) {
  switch (op) {
    case DEVMESH_SUM: return MPI_SUM;
    case DEVMESH_PROD: return MPI_PROD;
    case DEVMESH_MIN: return MPI_MIN;
    case DEVMESH_MAX: return MPI_MAX;
    default: return MPI_OP_NULL;
  }
}

static int check(int rc, const char *call) {
  if (rc == MPI_SUCCESS) return DEVMESH_SUCCESS;
  snprintf(last, sizeof last, "backend 'example': %s failed (MPI error %d)", call, rc);
  return DEVMESH_ERR_BACKEND;
}

/* Multiplies n elements of type t by k (the scale option). */
static void scale(void *buf, size_t n, int t, long k) {
  for (size_t i = 0; k != 1 && i < n; ++i) switch (t) {
      case DEVMESH_INT32: ((int *)buf)[i] *= (int)k; break;
      case DEVMESH_INT64: ((long long *)buf)[i] *= k; break;
      case DEVMESH_FLOAT32: ((float *)buf)[i] *= (float)k; break;
      case DEVMESH_FLOAT64: ((double *)buf)[i] *= (double)k; break;
      default: break;
    }
}

static int allreduce(void *comm, const void *send, void *recv, size_t count, int t, int op, void *stream) {
  struct comm *c = comm;
  (void)stream;
  if (mpi_type(t) == MPI_DATATYPE_NULL || mpi_op(op) == MPI_OP_NULL)
    return fail(DEVMESH_ERR_UNSUPPORTED, "this data type or reduction is not supported");
  if (count > 2147483647u) return fail(DEVMESH_ERR_UNSUPPORTED, "backend 'example': count too large");
  int rc = check(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mpi_type(t), mpi_op(op), c->comm),
                 "MPI_Allreduce");
  if (rc == DEVMESH_SUCCESS) scale(recv, count, t, c->scale);
  return rc;
}

static int allgather(void *comm, const void *send, void *recv, size_t count, int t, void *stream) {
  struct comm *c = comm;
  (void)stream;
  if (mpi_type(t) == MPI_DATATYPE_NULL)
    return fail(DEVMESH_ERR_UNSUPPORTED, "this data type is not supported");
  return check(MPI_Allgather(send, (int)count, mpi_type(t), recv, (int)count, mpi_type(t), c->comm), "MPI_Allgather");
}

static int reduce_scatter(void *comm, const void *send, void *recv, size_t count, int t, int op, void *stream) {
  struct comm *c = comm;
  (void)stream;
  if (mpi_type(t) == MPI_DATATYPE_NULL || mpi_op(op) == MPI_OP_NULL)
    return fail(DEVMESH_ERR_UNSUPPORTED, "this data type is not supported");
  return check(MPI_Reduce_scatter_block(send == recv ? MPI_IN_PLACE : send, recv, (int)count, mpi_type(t), mpi_op(op),
                                        c->comm),
               "MPI_Reduce_scatter_block");
}

static int broadcast(void *comm, void *buffer, size_t count, int t, int root, void *stream) {
  struct comm *c = comm;
  (void)stream;
  if (mpi_type(t) == MPI_DATATYPE_NULL)
    return fail(DEVMESH_ERR_UNSUPPORTED, "this data type is not supported");
  return check(MPI_Bcast(buffer, (int)count, mpi_type(t), root, c->comm), "MPI_Bcast");
}

static int barrier(void *comm, void *stream) {
  (void)stream;
  return check(MPI_Barrier(((struct comm *)comm)->comm), "MPI_Barrier");
}

static const char *const per_rank_keys[] = {"label", NULL};

#ifndef EXAMPLE_NO_TABLE
DEVMESH_BACKEND_EXPORT_V1 = {
    EXAMPLE_ABI,   EXAMPLE_NAME, per_rank_keys, init,      NULL,           last_error,
    open_instance, close_instance, comm_create, comm_destroy, comm_native, allreduce,
    allgather,     reduce_scatter, broadcast,   NULL /* alltoall */,      barrier,
    NULL /* send */, NULL /* recv */, NULL /* last_mpi_error */,
};
#else
int devmesh_backend_example_has_no_table;
#endif
