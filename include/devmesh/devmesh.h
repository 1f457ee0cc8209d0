/* devmesh C API: an N-D mesh of MPI ranks, like PyTorch's DeviceMesh.
 *
 * A thin C layer over devmesh::Mesh (include/devmesh/mesh.hpp); the meaning
 * of every operation is in SEMANTICS.md. C99 (and later) and C++ compatible;
 * the C++ API (mesh.hpp) needs C++20, this header does not.
 *
 * Conventions
 *   - Every function returns a status: DEVMESH_SUCCESS (0) or one of the
 *     DEVMESH_ERR_* codes below. devmesh_last_error() gives the detail of
 *     the calling thread's last failure.
 *   - A failing call never writes its output parameters (pre-filled values
 *     survive) and never leaves a half-built mesh behind.
 *   - A devmesh_t is an opaque handle to one *view* of a root mesh. Views
 *     share their root's communicators; destroy handles in any order with
 *     devmesh_destroy. The last handle of a root frees the root's
 *     communicators (never the parent). A NULL handle means "no mesh" (what
 *     ranks outside a rank list get); passing it to any function other than
 *     devmesh_destroy gives DEVMESH_ERR_INVALID_ARGUMENT. So does a handle
 *     that is no longer live (destroyed, a copy of a destroyed one, or a
 *     value devmesh never returned), to every function, devmesh_destroy
 *     included ("not a live devmesh handle"); devmesh checks a handle in a
 *     table of the live ones, never by reading memory through it.
 *   - Dim names are NUL-terminated, non-empty, at most 256 bytes.
 *   - Ranks are 0-based ranks of the parent communicator; local ranks and
 *     coordinates are 0-based.
 *   - Root indices are row-major over the root shape (last dim fastest).
 *   - Handles are not synchronised: one handle must not be used by two
 *     threads at once, but distinct handles (even of one root) may be.
 *   - Destroy handles before MPI_Finalize. A handle still alive then loses
 *     its communicators (MPI_Finalize releases them) and may only be
 *     destroyed.
 *
 * Collectiveness, the thing to know to avoid a deadlock (a collective call
 * waits without a deadline for every rank of its group, as MPI does; only
 * the NCCL backend's set-up is bounded, see docs/ERRORS.md "Waits"). Each
 * function's comment states it on a line of its own ("Collective over ..."
 * or "Not collective."); tests/docs/check_collectiveness.py keeps this
 * summary consistent with those lines:
 *   devmesh_create, devmesh_create_ex, devmesh_create_hosts,
 *   devmesh_create_from_comms  collective over the parent communicator
 *   devmesh_create_from_group  collective over the group's members
 *   devmesh_create_comms       collective over all members of the root
 *   devmesh_comm, devmesh_backend_comm, devmesh_all_groups_comm
 *                              collective over the caller's group along the
 *                              dim the first time any view of the root asks
 *                              for that dim layout; not collective afterwards
 *   devmesh_cart_comm*         collective over the caller's group of the
 *                              flattened view (all members of the root for a
 *                              root view), the first time only
 *   devmesh_allreduce, devmesh_allgather, devmesh_reduce_scatter,
 *   devmesh_broadcast, devmesh_alltoall, devmesh_barrier,
 *   devmesh_alltoallv, devmesh_allgatherv, devmesh_reduce_scatterv,
 *   devmesh_gather, devmesh_gatherv, devmesh_scatter, devmesh_scatterv,
 *   devmesh_reduce, devmesh_iallreduce, devmesh_iallgather,
 *   devmesh_ireduce_scatter, devmesh_ibroadcast, devmesh_ialltoall,
 *   devmesh_ibarrier, devmesh_ialltoallv, devmesh_iallgatherv,
 *   devmesh_ireduce_scatterv, devmesh_igather, devmesh_igatherv,
 *   devmesh_iscatter, devmesh_iscatterv, devmesh_ireduce
 *                              collective over the caller's group along dim
 *                              (the first call on a dim also creates its
 *                              communicator, as devmesh_comm)
 *   devmesh_agree, devmesh_shrink
 *                              collective over the surviving members of the
 *                              root (a fault-tolerant mesh)
 *   devmesh_repair, devmesh_repair_ex
 *                              collective over the surviving members of the
 *                              root, its spares in standby and the
 *                              processes the repair spawns
 *   devmesh_release_spares     collective over the surviving members of the
 *                              root and its spares in standby
 *   devmesh_standby            collective over the spares' pool (the
 *                              members of the mesh made over parent that
 *                              repair or release it)
 *   devmesh_join               collective over the repair that spawned the
 *                              process
 *   everything else            not collective (devmesh_send, devmesh_recv,
 *                              devmesh_isend, devmesh_irecv,
 *                              devmesh_sendrecv and devmesh_batch: between
 *                              the ranks named)
 *
 * Fortran: the module devmesh (lib/fortran, docs/FORTRAN.md) binds every
 * function here; it reaches the functions taking MPI handles through
 * MPI_Fint twins of its own (MPI_Fint is no part of this header).
 */
#ifndef DEVMESH_DEVMESH_H
#define DEVMESH_DEVMESH_H

#include <mpi.h>
#include <stddef.h>

#include "devmesh/mpi_check.h" /* one #error for an mpi.h of another MPI than devmesh's */

#if defined(__GNUC__) || defined(__clang__)
#define DEVMESH_C_API __attribute__((visibility("default")))
#else
#define DEVMESH_C_API
#endif

#define DEVMESH_VERSION_MAJOR 0
#define DEVMESH_VERSION_MINOR 3
#define DEVMESH_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque handle to a mesh view; NULL = no mesh. */
typedef struct devmesh_s *devmesh_t;

/* Status codes (the same values as devmesh::Status in status.hpp). */
enum devmesh_status {
  DEVMESH_SUCCESS = 0,
  DEVMESH_ERR_INVALID_ARGUMENT = 1, /* NULL/empty/negative input, bad rank list, ndim < 1 */
  DEVMESH_ERR_SHAPE_MISMATCH = 2,   /* products that must match do not; a split that does not fit */
  DEVMESH_ERR_UNKNOWN_DIM = 3,      /* a dim name the view does not have */
  DEVMESH_ERR_DUPLICATE_NAME = 4,   /* a name given twice or clashing with an existing one */
  DEVMESH_ERR_OVERLAP = 5,          /* two dims of one view cover the same root digits */
  DEVMESH_ERR_INCONSISTENT = 6,     /* ranks of one collective call passed different arguments */
  DEVMESH_ERR_NOT_MEMBER = 7,       /* the caller is not a member of the mesh */
  DEVMESH_ERR_BACKEND = 8,          /* the communication backend (MPI) failed */
  DEVMESH_ERR_UNSUPPORTED = 9,      /* the backend or build cannot do what was asked */
  DEVMESH_ERR_INTERNAL = 10,        /* a bug in devmesh, or out of memory */
  DEVMESH_ERR_PROC_FAILED = 11,     /* a member of the operation's group died */
  DEVMESH_ERR_REVOKED = 12,         /* the communicator was revoked (by a peer's failure or a deadline) */
  DEVMESH_ERR_TIMEOUT = 13          /* a deadline passed */
};

/* How devmesh_create_comms creates communicators (devmesh::CommPath). */
enum devmesh_comm_path {
  DEVMESH_COMM_PATH_AUTOMATIC = 0, /* as CREATE_GROUP (measured fastest) */
  /* over the caller's group: MPI_Comm_create_from_group (MPICH 4 and
   * later), else MPI_Comm_create_group over the parent, or over the root
   * communicator once the parent is freed (see devmesh_comm_count) */
  DEVMESH_COMM_PATH_CREATE_GROUP = 1,
  DEVMESH_COMM_PATH_SPLIT = 2,   /* MPI_Comm_split over all root members */
  DEVMESH_COMM_PATH_CART_SUB = 3 /* MPI_Cart_sub where the dim is a set of root dims */
};

/* ---- creating and destroying --------------------------------------------- */

/* Creates a root mesh of shape[0] x ... x shape[ndim-1] over all ranks of
 * parent; root index x is parent rank x.
 * Collective over parent.
 *   shape   ndim sizes; a 0 is chosen as MPI_Dims_create does.
 *   names   ndim unique, non-empty dim names.
 *   mesh    out: the root view.
 * Errors: NULL pointer, ndim < 1, a negative size, an empty name ->
 * INVALID_ARGUMENT; a repeated name -> DUPLICATE_NAME; a product that
 * differs from the size of parent, or zeros that cannot be inferred ->
 * SHAPE_MISMATCH; ranks that passed different arguments (shape, names, or
 * one rank's invalid input) -> INCONSISTENT on every rank. */
DEVMESH_C_API int devmesh_create(MPI_Comm parent, int ndim, const int shape[], const char *const names[],
                                 devmesh_t *mesh);

/* Rank lists and host-aware ordering are options of devmesh_create_ex
 * (devmesh_config_t's nranks, ranks and host_aware). */

/* ---- options: backends per mesh and per dim ------------------------------ */

#define DEVMESH_VERSION_CODE (DEVMESH_VERSION_MAJOR * 10000 + DEVMESH_VERSION_MINOR * 100 + DEVMESH_VERSION_PATCH)
#define DEVMESH_CONFIG_MAGIC 0x64766d63u

/* Data types and reductions of the backend collectives (the same values as
 * devmesh::DataType and devmesh::ReduceOp in backend.hpp). */
enum devmesh_datatype {
  DEVMESH_INT8 = 0,
  DEVMESH_UINT8 = 1,
  DEVMESH_INT32 = 2,
  DEVMESH_UINT32 = 3,
  DEVMESH_INT64 = 4,
  DEVMESH_UINT64 = 5,
  DEVMESH_FLOAT16 = 6,
  DEVMESH_BFLOAT16 = 7,
  DEVMESH_FLOAT32 = 8,
  DEVMESH_FLOAT64 = 9
};
enum devmesh_reduce_op { DEVMESH_SUM = 0, DEVMESH_PROD = 1, DEVMESH_MIN = 2, DEVMESH_MAX = 3 };

/* "Not set": the library's default applies (as NCCL_CONFIG_UNDEF_INT). */
#define DEVMESH_CONFIG_UNSET (-2147483647 - 1)

/* Mesh options. Initialise with DEVMESH_CONFIG_INITIALIZER, then set fields:
 *   devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
 *   cfg.dim_backends = "tp=nccl";  cfg.dim_options = "tp:timeout=30";
 * Every field starts "unset" (NULL or DEVMESH_CONFIG_UNSET), so defaults
 * are the library's, not compiled into the caller. Extensible without
 * breaking the ABI (as ncclConfig_t): new fields are only ever added at the
 * end, and the library reads the first `size` bytes only, so a caller
 * compiled against an older header gets defaults for the fields it does not
 * know. Every rank must pass the same values (but for options a backend
 * declares per rank, such as NCCL's device); ranks that do not get
 * DEVMESH_ERR_INCONSISTENT, naming the field and the lowest differing rank.
 *
 * Backends: "mpi" is built in; any other name X is the plugin
 * libdevmesh-backend-X.so (devmesh/backend_plugin.h says where it is
 * looked for). Options are the backend's own "key=value" pairs, checked by
 * the backend at creation (docs/BACKENDS.md lists each backend's keys). */
typedef struct devmesh_config_s {
  size_t size;          /* sizeof(devmesh_config_t) in the caller's header */
  unsigned int magic;   /* DEVMESH_CONFIG_MAGIC */
  unsigned int version; /* DEVMESH_VERSION_CODE of the caller's header */
  const char *backend;  /* backend of every dim without an override; NULL: "mpi" */
  /* Per-dim backends of the mesh's dims, by name:
   * "dim=backend[,dim=backend...]", e.g. "tp=nccl"; NULL: none. A name that
   * is no dim of the mesh -> UNKNOWN_DIM naming it. A dim made later by
   * flatten or unflatten gets its backend there (devmesh_flatten_ex,
   * devmesh_unflatten_ex), not from this field. */
  const char *dim_backends;
  /* Options of the default backend: "key=value[,key=value...]"; NULL: none. */
  const char *backend_options;
  /* Options of per-dim backends: "dim:key=value[,key=value...][;dim:...]",
   * e.g. "tp:timeout=30,device=0"; NULL: none. Dims of the mesh, as
   * dim_backends. */
  const char *dim_options;
  /* An explicit rank list: root index x is parent rank ranks[x]; nranks
   * distinct parent ranks, and zeros in shape are chosen so that the
   * product is nranks. Parent ranks not listed get *mesh = NULL (and
   * DEVMESH_SUCCESS); they call devmesh_create_ex too, with the same list.
   * nranks DEVMESH_CONFIG_UNSET (and ranks NULL): all parent ranks. The
   * list is read during the call only. */
  int nranks;
  const int *ranks;
  /* 1: order all parent ranks by host, so that the innermost dims stay
   * within hosts whatever the launcher's placement (block or cyclic): root
   * index x is the parent rank with local rank x % L on host x / L (L
   * ranks per host; hosts as devmesh_create_hosts discovers them, numbered
   * by lowest parent rank). Hosts are discovered after the cross-check of
   * the arguments. 0 or unset: parent rank order. Not with a rank list. */
  int host_aware;
  /* The error handler of the communicators devmesh_comm and
   * devmesh_cart_comm return: a devmesh_comm_errors; unset:
   * DEVMESH_COMM_ERRORS_INHERIT. */
  int comm_errors;
  /* 1: the mesh outlives a member's death (devmesh::MeshOptions::
   * fault_tolerance; see devmesh_revoke, devmesh_shrink): creation makes
   * what revoke and shrink need, its communicators return errors, and a
   * failure any operation sees revokes the whole mesh. Needs an MPI with
   * ULFM running with it on (Open MPI 5: mpirun --with-ft ulfm) and a
   * parent that returns errors (MPI_ERRORS_RETURN); with an nccl dim,
   * NCCL 2.28 or later and MPI_THREAD_MULTIPLE (a watcher thread spreads
   * NCCL's local revoke). SIGPIPE left at its default is then ignored (a
   * write to a dead peer's socket must fail, not end the survivor). 0 or
   * unset: off. */
  int fault_tolerance;
  /* Seconds any one wait of a fault-tolerant mesh may take
   * (devmesh::MeshOptions::deadline): the rank past it revokes the mesh and
   * gets DEVMESH_ERR_TIMEOUT, the others DEVMESH_ERR_REVOKED. Needs
   * fault_tolerance and MPI_THREAD_MULTIPLE. 0: none. */
  double deadline;
  /* Hot spares (devmesh::MeshOptions::spares, docs/SEMANTICS.md "Repair"),
   * with fault_tolerance: the parent's last `spares` ranks do not join the
   * mesh (prod(shape) = parent size - spares, root index = parent rank),
   * or with a placement the ranks it leaves over (exactly `spares`);
   * their devmesh_create_ex gives *mesh = NULL (and DEVMESH_SUCCESS), and
   * devmesh_standby(parent) keeps them until a repair takes them or the
   * members release them (devmesh_release_spares). Negative, with a rank
   * list or host_aware, without fault_tolerance, or the whole parent ->
   * INVALID_ARGUMENT. Unset or 0: none. */
  int spares;
  /* Placement (devmesh::MeshOptions::placement, docs/TOPOLOGY.md): dims to
   * keep within a level, "dim=level[,dim=level...]", e.g.
   * "tp=host,ep=domain,dp_shard=switch". Levels: "host", then those outside
   * it (DEVMESH_TOPOLOGY, else Slurm's SLURM_TOPOLOGY_ADDR and a backend's
   * NVLink domain). Parent ranks are placed before any communicator:
   * every group of such a dim lies within one instance of its level, and
   * in every group of every dim the members in one instance of any level
   * are consecutive. prod(shape) may be below the parent's size: the ranks
   * left over get *mesh = NULL (and DEVMESH_SUCCESS), or are the spares,
   * whose number must then be theirs. A malformed string, an unknown
   * level, with host_aware or a rank list -> INVALID_ARGUMENT; a name that
   * is no dim -> UNKNOWN_DIM; a request no tiling of the levels meets ->
   * SHAPE_MISMATCH naming the dim, the level and the sizes; on every rank
   * alike. NULL: none. */
  const char *placement;
} devmesh_config_t;

/* The error handler of the communicators devmesh_comm and devmesh_cart_comm
 * return (devmesh::CommErrors). */
enum devmesh_comm_errors {
  DEVMESH_COMM_ERRORS_INHERIT = 0, /* the parent's, as MPI_Comm_split gives (default) */
  DEVMESH_COMM_ERRORS_RETURN = 1   /* MPI_ERRORS_RETURN */
};

#define DEVMESH_CONFIG_INITIALIZER                                                                         \
  {                                                                                                        \
    sizeof(devmesh_config_t), DEVMESH_CONFIG_MAGIC, DEVMESH_VERSION_CODE, NULL, NULL, NULL, NULL,          \
        DEVMESH_CONFIG_UNSET, NULL, DEVMESH_CONFIG_UNSET, DEVMESH_CONFIG_UNSET, DEVMESH_CONFIG_UNSET, 0.0, \
        DEVMESH_CONFIG_UNSET, NULL                                                                         \
  }

/* devmesh_create with options (config NULL: the defaults): backends, a
 * rank list (nranks, ranks), host-aware ordering (host_aware).
 * Collective over parent (every parent rank calls it, listed or not, with
 * the same arguments).
 * Errors: as devmesh_create; config not made from DEVMESH_CONFIG_INITIALIZER
 * (wrong magic or size), a malformed dim_backends, backend_options or
 * dim_options string, a bad comm_errors, host_aware other than 0 or 1 ->
 * INVALID_ARGUMENT; nranks set and < 1, nranks set with ranks NULL, ranks
 * set with nranks unset, a negative, out-of-range or repeated rank, a rank
 * list with host_aware 1 -> INVALID_ARGUMENT; a dim_backends or
 * dim_options entry naming no dim of the mesh -> UNKNOWN_DIM naming every
 * such entry; prod(shape) != nranks ->
 * SHAPE_MISMATCH; with host_aware, hosts with different numbers of ranks
 * -> SHAPE_MISMATCH (the message lists the counts) and DEVMESH_HOST_ID set
 * on some ranks only -> INCONSISTENT; ranks that passed different rank
 * lists or host_aware values -> INCONSISTENT naming them; a backend
 * name (default or per dim) that is no backend -> INVALID_ARGUMENT; a
 * backend found but unusable here (the plugin cannot be loaded, has the
 * wrong ABI, or cannot run on this machine, e.g. "nccl" without a GPU) ->
 * UNSUPPORTED; an option its backend does not take -> INVALID_ARGUMENT;
 * devmesh_last_error() says which and why. Every backend named is loaded
 * and its options checked here, before any communicator exists, and the
 * outcome is cross-checked: one rank's failure is every rank's. */
DEVMESH_C_API int devmesh_create_ex(MPI_Comm parent, int ndim, const int shape[], const char *const names[],
                                    const devmesh_config_t *config, devmesh_t *mesh);

/* ---- adopted communicators and MPI Sessions ------------------------------ */

/* A mesh whose dims are communicators the program already has
 * (devmesh::Mesh::adopt; docs/SEMANTICS.md "Adopted communicators").
 * Collective over parent, any communicator containing every member.
 * comms[i] is the caller's communicator of dim names[i]; a parent rank that
 * is not a member passes MPI_COMM_NULL for every dim and gets *mesh = NULL.
 * The caller's coordinate is its rank in each comm; devmesh_comm of a root
 * dim returns the very communicator given, which devmesh never frees,
 * renames or re-handles (the program keeps it alive while the mesh lives).
 * config: backends and comm_errors as devmesh_create_ex; a rank list or
 * host_aware -> INVALID_ARGUMENT. Errors, on every rank alike, *mesh
 * untouched: NULL arrays, ndim < 1, some but not all comms MPI_COMM_NULL,
 * comms that do not form the mesh (sizes that differ or do not multiply to
 * the members, two ranks with one coordinate, a comm whose members are not
 * the group the coordinates give) -> INVALID_ARGUMENT; different ndim or
 * names between ranks -> INCONSISTENT. */
DEVMESH_C_API int devmesh_create_from_comms(MPI_Comm parent, int ndim, const MPI_Comm comms[],
                                            const char *const names[], const devmesh_config_t *config, devmesh_t *mesh);

/* MPI Sessions: a mesh over the members of group (e.g. from
 * MPI_Group_from_session_pset) without a parent communicator
 * (devmesh::Mesh::create_from_group).
 * Collective over the group's members, who all pass the same tag and
 * arguments (only members call). MPI_Init is
 * not needed; destroy the mesh before MPI_Session_finalize. config as
 * devmesh_create_ex; a rank list -> INVALID_ARGUMENT. Errors as
 * devmesh_create_ex, plus: an MPI older than 4 -> UNSUPPORTED (nothing
 * made); group MPI_GROUP_NULL, tag NULL, or a caller outside the group ->
 * INVALID_ARGUMENT on that rank only (the others may wait for it, as for
 * any MPI collective called by some members only). */
DEVMESH_C_API int devmesh_create_from_group(MPI_Group group, const char *tag, int ndim, const int shape[],
                                            const char *const names[], const devmesh_config_t *config, devmesh_t *mesh);

/* ---- hosts (see docs/TOPOLOGY.md) ------------------------------------------- */

/* The 2-D (host, local) mesh of parent: hosts from
 * MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), or from the environment
 * variable DEVMESH_HOST_ID when every rank sets it; hosts ordered by their
 * lowest parent rank, ranks within a host by parent rank. host_dim and
 * local_dim name the dims (NULL: "host" and "local").
 * Collective over parent.
 * Errors: hosts with different numbers of ranks -> SHAPE_MISMATCH (the
 * message lists the counts); DEVMESH_HOST_ID set on some ranks only ->
 * INCONSISTENT; equal or empty dim names -> DUPLICATE_NAME/INVALID_ARGUMENT. */
DEVMESH_C_API int devmesh_create_hosts(MPI_Comm parent, const char *host_dim, const char *local_dim, devmesh_t *mesh);

/* *within = 1 when every group of dim stays within one host, else 0. Needs
 * a mesh made by devmesh_create_hosts or by devmesh_create_ex with
 * host_aware 1 (else INVALID_ARGUMENT). dim NULL as in devmesh_local_rank
 * (the only dim of a 1-D view; INVALID_ARGUMENT otherwise).
 * Not collective. */
DEVMESH_C_API int devmesh_dim_within_hosts(devmesh_t m, const char *dim, int *within);

/* *within = 1 when every group of dim stays within one instance of level
 * ("host", or a level outside it recorded by a placement or by
 * devmesh_create_ex with placement), else 0. Needs a mesh with host info
 * (as devmesh_dim_within_hosts; a placed mesh has it). An unknown level
 * -> INVALID_ARGUMENT naming those there are; dim NULL as in
 * devmesh_local_rank.
 * Not collective. */
DEVMESH_C_API int devmesh_dim_within(devmesh_t m, const char *dim, const char *level, int *within);

/* Releases a handle and sets *mesh = NULL. mesh == NULL and *mesh == NULL
 * are accepted (no-op, DEVMESH_SUCCESS); a handle no longer live gives
 * INVALID_ARGUMENT, *mesh untouched. Communicators obtained from the
 * handle stay valid while another handle of the same root lives.
 * Not collective (the last handle of a root frees its communicators with
 * MPI_Comm_free, which MPI implements locally). */
DEVMESH_C_API int devmesh_destroy(devmesh_t *mesh);

/* ---- views (not collective; they create no communicator) ----------------- */

/* The view with exactly the n dims named in dims, in the order given
 * (transposed order allowed). From a root view (devmesh_create or
 * devmesh_root), names registered by devmesh_flatten may be sliced too.
 * Not collective.
 * Errors: NULL pointer, n < 1 -> INVALID_ARGUMENT; an unknown name ->
 * UNKNOWN_DIM; a name twice -> DUPLICATE_NAME; dims covering the same
 * ranks -> OVERLAP. */
DEVMESH_C_API int devmesh_slice(devmesh_t m, int n, const char *const dims[], devmesh_t *out);

/* A 1-D view whose dim concatenates all modes of m's dims. name NULL: the
 * dim names joined with '_'. The name is registered on the root and may be
 * sliced from the root later.
 * Not collective.
 * Errors: an empty name -> INVALID_ARGUMENT; the name of a root dim (unless
 * m is that 1-D root dim) or a name registered with a different layout ->
 * DUPLICATE_NAME (the same layout returns that dim again). */
DEVMESH_C_API int devmesh_flatten(devmesh_t m, const char *name, devmesh_t *out);

/* Replaces dim by n dims of the given sizes, split row-major (first new dim
 * most significant). One size may be -1: size(dim) / product(other sizes).
 * Not collective.
 * Errors: NULL pointer, n < 1, a size < 1 other than -1 (0 is not inferred
 * here), an empty name -> INVALID_ARGUMENT; more than one -1, or other
 * sizes whose product does not divide size(dim) -> SHAPE_MISMATCH;
 * unknown dim -> UNKNOWN_DIM; new names repeated or clashing with another
 * dim of m, a registered name or a root dim -> DUPLICATE_NAME; product
 * differs from size(dim), or a split that cuts a mode into non-dividing
 * pieces -> SHAPE_MISMATCH. */
DEVMESH_C_API int devmesh_unflatten(devmesh_t m, const char *dim, int n, const int sizes[], const char *const names[],
                                    devmesh_t *out);

/* devmesh_flatten and devmesh_unflatten whose new dims run on a backend of
 * their own (config NULL: none, as devmesh_flatten and devmesh_unflatten).
 * The config's backend fields apply to the dims the call makes, as
 * devmesh_create_ex applies them to a mesh's dims: `backend` (with
 * backend_options) to every new dim, dim_backends and dim_options by the
 * new dims' names; a new dim without a backend runs on the mesh's default.
 * The new dim keeps its backend in every later view of it (a flattened name
 * sliced from the root, the same flatten or unflatten again):
 *   cfg.backend = "nccl";  devmesh_flatten_ex(dp_cp_view, "dp_cp", &cfg, &flat);
 * The backend is loaded and its options checked here, on the calling rank;
 * every member of the new dim's groups must give it the same backend
 * before its communicator is made.
 * Not collective.
 * Errors: as devmesh_flatten and devmesh_unflatten, plus: a config not
 * made from DEVMESH_CONFIG_INITIALIZER, a malformed field, nranks, ranks,
 * host_aware or comm_errors set, backend_options without backend ->
 * INVALID_ARGUMENT; dim_backends or dim_options naming a dim the call does
 * not make -> UNKNOWN_DIM; an unknown backend or option ->
 * INVALID_ARGUMENT, a backend that cannot run here -> UNSUPPORTED (as
 * devmesh_create_ex); a dim made before (same name, same layout) or a root
 * dim given another backend than it has -> DUPLICATE_NAME (a dim keeps the
 * backend it was first made with). */
DEVMESH_C_API int devmesh_flatten_ex(devmesh_t m, const char *name, const devmesh_config_t *config, devmesh_t *out);
/* devmesh_unflatten with backends for the new dims, as devmesh_flatten_ex.
 * Not collective. */
DEVMESH_C_API int devmesh_unflatten_ex(devmesh_t m, const char *dim, int n, const int sizes[],
                                       const char *const names[], const devmesh_config_t *config, devmesh_t *out);

/* The dims of meshes[0], then of meshes[1], ..., in that order: a view of
 * one root made of dims taken from several views (PyTorch's _concatenate),
 * e.g. a flattened dp_cp with the root's tp. n == 1 gives that view again.
 * Not collective.
 * Errors: NULL pointer, n < 1, meshes of different roots ->
 * INVALID_ARGUMENT; a name in two meshes -> DUPLICATE_NAME; dims covering
 * the same ranks -> OVERLAP. */
DEVMESH_C_API int devmesh_concatenate(int n, const devmesh_t meshes[], devmesh_t *out);

/* The root view of m's root mesh.
 * Not collective. */
DEVMESH_C_API int devmesh_root(devmesh_t m, devmesh_t *out);

/* ---- queries (not collective) --------------------------------------------- */

/* Number of dims of the view.
 * Not collective. */
DEVMESH_C_API int devmesh_ndim(devmesh_t m, int *ndim);

/* Size of dim, or of the whole view (product of its dim sizes) when dim is
 * NULL.
 * Not collective.
 * Errors: unknown dim -> UNKNOWN_DIM. */
DEVMESH_C_API int devmesh_size(devmesh_t m, const char *dim, int *size);

/* Output arrays: the caller says how many ints its array holds (maxdims,
 * maxranks, as MPI_Cart_get's maxdims); when that is fewer than the result
 * needs, the call fails with INVALID_ARGUMENT naming both counts and writes
 * nothing. Entries past the result are left untouched. */

/* The view's ndim sizes, in dim order, into shape[0..maxdims).
 * Not collective. */
DEVMESH_C_API int devmesh_shape(devmesh_t m, int maxdims, int shape[]);

/* Name of dim number index (0-based). The string is borrowed: it lives as
 * long as the handle m.
 * Not collective.
 * Errors: index out of [0, ndim) -> INVALID_ARGUMENT. */
DEVMESH_C_API int devmesh_dim_name(devmesh_t m, int index, const char **name);

/* The caller's local rank along dim (its rank in devmesh_comm(m, dim)).
 * dim NULL: the only dim of a 1-D view (INVALID_ARGUMENT otherwise).
 * Not collective. */
DEVMESH_C_API int devmesh_local_rank(devmesh_t m, const char *dim, int *rank);

/* The caller's coordinate: its local rank along each of the ndim dims
 * (maxdims >= ndim).
 * Not collective. */
DEVMESH_C_API int devmesh_coordinate(devmesh_t m, int maxdims, int coord[]);

/* The size(dim) parent ranks of the caller's group along dim, in local-rank
 * order (maxranks >= size(dim)). dim NULL as in devmesh_local_rank.
 * Not collective. */
DEVMESH_C_API int devmesh_group_ranks(devmesh_t m, const char *dim, int maxranks, int ranks[]);

/* Every group of dim, each in local-rank order, groups ordered by their
 * smallest root index: W / size(dim) groups of size(dim) parent ranks,
 * W ints in all (maxranks >= W), where W = devmesh_root_size(m). O(W).
 * Not collective. */
DEVMESH_C_API int devmesh_all_groups(devmesh_t m, const char *dim, int maxranks, int ranks[]);

/* W: the number of ranks of m's root mesh.
 * Not collective. */
DEVMESH_C_API int devmesh_root_size(devmesh_t m, int *size);

/* The caller's rank in the parent communicator.
 * Not collective. */
DEVMESH_C_API int devmesh_parent_rank(devmesh_t m, int *rank);

/* Communicators m's root has created so far (for checking that views
 * reuse communicators): one per distinct layout asked for, plus the root's
 * own communicator once an operation over all root members needed it
 * (devmesh_create_comms and the root's devmesh_cart_comm, where they could
 * not run over the parent: see devmesh_create_comms) or, where devmesh
 * makes communicators over the parent (an MPI without
 * MPI_Comm_create_from_group, and Open MPI), once the program freed the
 * parent (its MPI_Comm_free makes it first, see devmesh/mesh.hpp);
 * devmesh_create makes none.
 * Not collective. */
DEVMESH_C_API int devmesh_comm_count(devmesh_t m, int *count);

/* --- failures (a mesh made with config->fault_tolerance = 1; any other
 * mesh: UNSUPPORTED) -------------------------------------------------------
 * An operation of a fault-tolerant mesh whose group lost a member fails
 * with DEVMESH_ERR_PROC_FAILED and revokes the mesh; every other operation
 * of the mesh and of every view of its root, on every member, then fails
 * with DEVMESH_ERR_REVOKED. The survivors carry on with devmesh_shrink
 * (docs/ERRORS.md "Failures"). */

/* Revokes m's root: every operation of it, waiting or later, fails
 * promptly with DEVMESH_ERR_REVOKED on every member. Local and idempotent;
 * callable while another thread waits in an operation of the same mesh
 * (MPI_THREAD_MULTIPLE). devmesh_destroy of a revoked mesh works; its
 * communicators are left to MPI_Finalize (devmesh::Mesh::revoke).
 * Not collective. */
DEVMESH_C_API int devmesh_revoke(devmesh_t m);

/* *revoked = 1 when m's root is revoked (here, by a peer or by a failure),
 * else 0.
 * Not collective. */
DEVMESH_C_API int devmesh_is_revoked(devmesh_t m, int *revoked);

/* The root indices this rank knows to have failed, ascending: *nfailed of
 * them written to ranks (maxranks too small -> INVALID_ARGUMENT, nothing
 * written). After devmesh_shrink every survivor's list holds the agreed
 * set (and deaths this rank has noticed since).
 * Not collective. */
DEVMESH_C_API int devmesh_failed_ranks(devmesh_t m, int maxranks, int ranks[], int *nfailed);

/* *flag becomes the AND of every surviving member's *flag (nonzero: 1),
 * the same on every survivor (MPIX_Comm_agree over the root's survivors).
 * Collective over the surviving members of m's root. */
DEVMESH_C_API int devmesh_agree(devmesh_t m, int *flag);

/* A new root mesh over the survivors of m's root: they agree on the failed
 * set, then every slice along dim holding a failed rank is dropped
 * (HSDP replicate=4 x shard=2, one failed rank, dim "replicate" ->
 * replicate=3 x shard=2, same names, groups in root order); dim NULL: a
 * 1-D mesh of every survivor (named as devmesh_flatten names m's root
 * dims). Live ranks in a dropped slice get *survivors = NULL and
 * DEVMESH_SUCCESS (spares). The new mesh's parent is the survivors'
 * communicator, which it owns; its options are m's. m stays valid
 * (revoked) until destroyed.
 * Collective over the surviving members of m's root: run it after
 * DEVMESH_ERR_PROC_FAILED or DEVMESH_ERR_REVOKED.
 * Errors: m not fault-tolerant -> UNSUPPORTED; dim no dim of m's root ->
 * UNKNOWN_DIM; no slice or no survivor left -> INVALID_ARGUMENT, the same
 * on every survivor; the new mesh's communicators not made on one survivor
 * (a death among the survivors, an MPI error there) -> that survivor's
 * error there, REVOKED or PROC_FAILED on every other: shrink again;
 * *survivors untouched on error. */
DEVMESH_C_API int devmesh_shrink(devmesh_t m, const char *dim, devmesh_t *survivors);

/* ---- repair (docs/SEMANTICS.md "Repair"; devmesh_config_t.spares) -------- */

/* The whole mesh again after a failure: a new root mesh with m's root
 * shape, names and options (backends, deadline, fault_tolerance,
 * comm_errors), in which every survivor keeps its root index and the
 * failed indices are filled by m's root's spares in standby first (the
 * lowest parent rank takes the lowest failed index), then, when command is
 * not NULL, by MPI_Comm_spawn(command, argv): one process per index still
 * empty, each calling devmesh_join after MPI_Init. argv is NULL-terminated
 * as MPI_Comm_spawn's (NULL: none); command NULL: spares only. The new
 * mesh's parent is a new communicator, which it owns; devmesh_failed_ranks
 * of it gives the indices this repair filled. Flattened names are not
 * carried over. Spares no index needs stay in standby for the new mesh
 * (devmesh_release_spares(*repaired) releases them). m stays valid
 * (revoked) until destroyed.
 * Collective over the surviving members of m's root, its spares in standby
 * and the processes the repair spawns: run it after DEVMESH_ERR_PROC_FAILED
 * or DEVMESH_ERR_REVOKED (it revokes m first).
 * Errors: m not fault-tolerant -> UNSUPPORTED; m repaired already, not
 * enough spares with command NULL -> INVALID_ARGUMENT; a spawn that fails
 * -> BACKEND; these the same on every survivor, the spares still in
 * standby (devmesh_shrink is left); a death during the repair ->
 * PROC_FAILED or REVOKED on every survivor: repair again; repaired NULL ->
 * INVALID_ARGUMENT; *repaired untouched on error. */
DEVMESH_C_API int devmesh_repair(devmesh_t m, const char *command, char *argv[], devmesh_t *repaired);

/* devmesh_repair with the MPI_Comm_spawn info of the spawn (where to start
 * the new processes: the MPI's spawn info keys, e.g. hosts); MPI_INFO_NULL:
 * none. The info is read during the call only.
 * Collective over the surviving members of m's root, its spares in standby
 * and the processes the repair spawns, as devmesh_repair.
 * Errors as devmesh_repair. */
DEVMESH_C_API int devmesh_repair_ex(devmesh_t m, const char *command, char *argv[], MPI_Info info, devmesh_t *repaired);

/* Ends the standby of m's root's spares: each devmesh_standby returns with
 * *mesh = NULL. Nothing to do (no communication) where the root has none.
 * Collective over the surviving members of m's root and its spares in
 * standby.
 * Errors: m not fault-tolerant -> UNSUPPORTED; m repaired already (its
 * spares serve the repaired mesh: release them there) -> INVALID_ARGUMENT;
 * a death during it -> PROC_FAILED or REVOKED. */
DEVMESH_C_API int devmesh_release_spares(devmesh_t m);

/* A spare of the last fault-tolerant mesh with spares made over parent on
 * this process (its devmesh_create_ex gave *mesh = NULL) waits until a
 * repair takes it (*mesh is then the repaired mesh, in which it holds a
 * failed root index) or the members release it (*mesh = NULL). Not bounded:
 * it waits for the members. A spare can do its own work (load a model, a
 * checkpoint) before it calls this.
 * Collective over the spares' pool: the surviving members of the mesh made
 * over parent, who repair it or release its spares, and its other spares.
 * Errors: an MPI without ULFM, or not running with it -> UNSUPPORTED; a
 * process that is no such spare -> INVALID_ARGUMENT; mesh NULL ->
 * INVALID_ARGUMENT; *mesh untouched on error. */
DEVMESH_C_API int devmesh_standby(MPI_Comm parent, devmesh_t *mesh);

/* Called by a process a repair spawned, after MPI_Init/MPI_Init_thread:
 * *mesh is the repaired mesh, in which it holds a failed root index.
 * Collective over the repair that spawned this process (its survivors,
 * spares and the other spawned processes).
 * Errors: an MPI without ULFM, or not running with it -> UNSUPPORTED; a
 * process no repair started, or one that joined already ->
 * INVALID_ARGUMENT; mesh NULL -> INVALID_ARGUMENT; *mesh untouched on
 * error. */
DEVMESH_C_API int devmesh_join(devmesh_t *mesh);

/* The caller's root index in m's root.
 * Not collective. */
DEVMESH_C_API int devmesh_root_index(devmesh_t m, int *index);

/* On a mesh made by devmesh_shrink: the new root index of old root index
 * old_index, or -1 when it was dropped (failed, or a spare). A mesh not
 * made by devmesh_shrink, or an index outside the old root ->
 * INVALID_ARGUMENT.
 * Not collective. */
DEVMESH_C_API int devmesh_shrunk_index(devmesh_t m, int old_index, int *new_index);

/* ---- communicators --------------------------------------------------------- */

/* The caller's communicator along dim, owned by the library (do not free
 * it: a later devmesh_comm of that layout fails with INVALID_ARGUMENT saying
 * so): its rank k is local rank k. One communicator exists per distinct dim
 * layout of a root; every view with that layout gets the same one. It is
 * named "devmesh:<dim>" (MPI_Comm_get_name) and has the parent's error
 * handler (config comm_errors: DEVMESH_COMM_ERRORS_RETURN for
 * MPI_ERRORS_RETURN).
 * dim NULL as in devmesh_local_rank.
 * Collective over the caller's group along dim the first time any view of
 * the root asks for this layout; not collective afterwards. Members of a
 * group must ask for layouts in the same order, or call
 * devmesh_create_comms first.
 * Errors: unknown dim -> UNKNOWN_DIM; MPI failure -> BACKEND. */
DEVMESH_C_API int devmesh_comm(devmesh_t m, const char *dim, MPI_Comm *comm);

/* The caller's communicator along dim in the dim's backend: *handle is the
 * address of the backend's own handle (MPI_Comm * for "mpi", ncclComm_t *
 * for "nccl"; see the backend's documentation), owned by the library.
 * backend: the backend the caller expects (NULL: any). dim NULL as in
 * devmesh_local_rank.
 * Collective over the caller's group along dim the first time any view of
 * the root asks for this layout (as devmesh_comm); not collective afterwards.
 * Errors: unknown dim -> UNKNOWN_DIM; the dim on another backend than
 * `backend` -> INVALID_ARGUMENT; the backend failing -> BACKEND (or its
 * own status); a backend without native handles -> UNSUPPORTED. */
DEVMESH_C_API int devmesh_backend_comm(devmesh_t m, const char *dim, const char *backend, void **handle);

/* The name of dim's backend, e.g. "mpi" (static storage).
 * Not collective. */
DEVMESH_C_API int devmesh_dim_backend(devmesh_t m, const char *dim, const char **backend);

/* Creates the communicators of every dim of m at once, by path (a
 * devmesh_comm_path). Its check of path and view (one allreduce over all
 * members) and the split path run over the parent communicator while the
 * program has not freed it and its ranks are exactly the root's members
 * (so they are collectives on the parent too: order them with the
 * program's own collectives on it, and not concurrently with one from
 * another thread); otherwise over the root communicator, made for them.
 * The root view's devmesh_cart_comm is made over the parent the same way
 * when root index x is parent rank x. The automatic path makes what
 * devmesh_comm on every dim makes; the check is what it costs beyond that
 * (one allreduce), the price of an error instead of a hang when members'
 * arguments differ.
 * Collective over all members of the root.
 * Errors: members that passed different paths or views -> INCONSISTENT on
 * every member; an unknown path (on every member) -> INVALID_ARGUMENT; a
 * mesh released by MPI_Finalize -> INVALID_ARGUMENT; MPI failure -> BACKEND. */
DEVMESH_C_API int devmesh_create_comms(devmesh_t m, int path);

/* m as an MPI Cartesian communicator, non-periodic (see
 * devmesh_cart_comm_periodic): on a root view its rank x is root index x.
 * Owned by the library, named "devmesh:cart" for a root view, error
 * handler as devmesh_comm's.
 * Collective over the caller's group of the flattened view (all members of
 * the root for a root view) the first time; not collective afterwards. */
DEVMESH_C_API int devmesh_cart_comm(devmesh_t m, MPI_Comm *comm);

/* ---- Cartesian views, neighbours, groups with their communicator ---------- */

/* m as an MPI Cartesian communicator (Mesh::cart_comm): over the caller's
 * group of the flattened view, dims in m's order (a transposed slice gives
 * a transposed grid), rank the row-major number of the caller's
 * coordinate, no reordering; dim i periodic when periodic[i] is nonzero
 * (ndims 0: none, periodic may be NULL). Owned by the library, one per
 * (layout, periods) of the root, named "devmesh:cart" (root view,
 * non-periodic) or "devmesh:cart:<dims>", error handler as devmesh_comm's.
 * devmesh_cart_comm(m, c) is devmesh_cart_comm_periodic(m, 0, NULL, c) (on a
 * root view, the root's grid; on any other view, that view's grid).
 * Collective over the caller's group of the flattened view the first time;
 * not collective afterwards.
 * Errors: ndims neither 0 nor ndim(m), NULL pointers -> INVALID_ARGUMENT;
 * MPI failure -> BACKEND. */
DEVMESH_C_API int devmesh_cart_comm_periodic(devmesh_t m, int ndims, const int periodic[], MPI_Comm *comm);

/* The caller's neighbours along dim (dim NULL as in devmesh_local_rank):
 * local ranks k - distance (prev) and k + distance (next) in dim's group,
 * k the caller's local rank, wrapped modulo size(dim) when periodic is
 * nonzero, else MPI_PROC_NULL outside the group, exactly as MPI_Cart_shift
 * (any distance, negative too); parent_prev/parent_next are the same
 * members as parent ranks (MPI_PROC_NULL alike). Any output pointer may be
 * NULL.
 * Not collective (makes no communicator).
 * Errors: unknown dim -> UNKNOWN_DIM. */
DEVMESH_C_API int devmesh_neighbors(devmesh_t m, const char *dim, int periodic, int distance, int *prev, int *next,
                                    int *parent_prev, int *parent_next);

/* devmesh_all_groups, plus which group is the caller's (*own: ranks[own *
 * size(dim)] starts it; own may be NULL) and that group's communicator
 * devmesh_comm(m, dim).
 * Collective over the caller's group along dim the first time any view of
 * the root asks for this layout (as devmesh_comm); not collective afterwards.
 * Errors as devmesh_all_groups and devmesh_comm; a short array is reported
 * before any communicator is made. */
DEVMESH_C_API int devmesh_all_groups_comm(devmesh_t m, const char *dim, int maxranks, int ranks[], int *own,
                                          MPI_Comm *comm);

/* ---- collectives over a dim, in the dim's backend --------------------------- */

/* The collectives of the dim's backend (MPI, Gloo, NCCL or a plugin), over
 * the caller's group along dim: local rank k is rank k of the group.
 * dim NULL as in devmesh_local_rank. Counts are elements of datatype (a
 * devmesh_datatype); op is a devmesh_reduce_op; buffers are contiguous (on
 * the device for NCCL); stream is the backend's stream (cudaStream_t for
 * NCCL) or NULL for the communicator's own, ignored by host backends.
 * Collective over the caller's group along dim (send/recv: between the two
 * ranks); the first call on a dim also creates its communicator, as
 * devmesh_comm does. Every member must pass the same count, datatype, op
 * and root: an argument wrong on one rank only is refused there while the
 * others wait in the collective, as with MPI (Gloo's timeout ends that
 * wait with BACKEND).
 * In place, as MPI_IN_PLACE allows: sendbuf == recvbuf for allreduce,
 * alltoall and reduce_scatter (which reads size(dim) * count elements from
 * the buffer and leaves its result at the start); for allgather sendbuf ==
 * recvbuf + rank * count elements.
 * Errors (checked before any communication; recvbuf then untouched): a NULL
 * mesh, a NULL buffer with count > 0, an unknown datatype or op, a root or
 * peer outside the group, a byte count that overflows size_t ->
 * INVALID_ARGUMENT; unknown dim -> UNKNOWN_DIM; a data type, reduction or
 * operation the backend lacks (e.g. MPI reducing float16, or more than
 * 2^31-1 elements through MPI) -> UNSUPPORTED, naming it and the backend;
 * the backend failing (a dead peer, a timeout) -> BACKEND, the contents of
 * recvbuf then undefined (a mesh made with fault_tolerance: a member of the
 * group died -> PROC_FAILED, the mesh revoked -> REVOKED). */

/* recvbuf[i] = op over the group of sendbuf[i], i < count.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_allreduce(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                    int datatype, int op, void *stream);
/* recvbuf[r*count + i] = sendbuf[i] of local rank r (recvbuf holds
 * size(dim) * count elements).
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_allgather(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                    int datatype, void *stream);
/* recvbuf[i] = op over the group of sendbuf[rank*count + i], i < count
 * (sendbuf holds size(dim) * count elements).
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_reduce_scatter(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf,
                                         size_t count, int datatype, int op, void *stream);
/* buffer of every member = buffer of local rank root.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_broadcast(devmesh_t mesh, const char *dim, void *buffer, size_t count, int datatype, int root,
                                    void *stream);
/* recvbuf[r*count + i] = sendbuf[rank*count + i] of local rank r.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_alltoall(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                   int datatype, void *stream);
/* Returns when every member of the group has entered it.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_barrier(devmesh_t mesh, const char *dim, void *stream);
/* Point to point with local rank peer of the group: blocking for host
 * backends (as MPI_Send/MPI_Recv; a send may wait for its receive, so
 * order pairs as with MPI), stream-ordered for NCCL. Messages between two
 * ranks arrive in order. peer MPI_PROC_NULL: nothing happens (the buffer
 * is untouched), on every backend, as in MPI.
 * Not collective: between the two ranks only (the first use of the dim
 * still creates its communicator collectively). */
DEVMESH_C_API int devmesh_send(devmesh_t mesh, const char *dim, const void *buffer, size_t count, int datatype,
                               int peer, void *stream);
/* Receives count elements from local rank peer, as devmesh_send sends them.
 * Not collective: between the two ranks only (as devmesh_send). */
DEVMESH_C_API int devmesh_recv(devmesh_t mesh, const char *dim, void *buffer, size_t count, int datatype, int peer,
                               void *stream);

/* ---- non-blocking point to point and sendrecv over a dim ------------------ */

/* A pending operation started by devmesh_isend, devmesh_irecv,
 * devmesh_batch or a devmesh_i* collective (MPI_Request's counterpart).
 * DEVMESH_REQUEST_NULL is a request that is already complete. Like a
 * devmesh_t it is a token checked in a table of the pending ones, never
 * an address: a request ended already (a stale copy of one that was
 * waited), or a value devmesh never returned, gives INVALID_ARGUMENT
 * ("request already ended") to devmesh_wait, devmesh_test and
 * devmesh_waitall, without reading memory through it. */
typedef struct devmesh_request_s *devmesh_request_t;
#define DEVMESH_REQUEST_NULL ((devmesh_request_t)0)

/* Start sending (receiving) count elements to (from) local rank peer of
 * the caller's group along dim, as MPI_Isend/MPI_Irecv; *request is
 * written only on success. Until the request ends (devmesh_wait, or
 * devmesh_test reporting done), do not change the buffer of an isend nor
 * touch that of an irecv. NCCL: enqueued on stream, the request completes
 * when the stream has run the transfer. peer MPI_PROC_NULL: nothing
 * happens and *request = DEVMESH_REQUEST_NULL, on every backend, as in MPI.
 * Messages between two ranks, blocking or not, match in the order they
 * were started. A request must end
 * before the mesh's communicators go (devmesh_destroy of the root's last
 * handle).
 * Errors (checked before any communication; *request untouched): a NULL
 * mesh or request pointer, a NULL buffer with count > 0, an unknown
 * datatype, a peer outside the group other than MPI_PROC_NULL ->
 * INVALID_ARGUMENT; unknown dim -> UNKNOWN_DIM; a backend built for ABI
 * version 1 of the plugin interface -> UNSUPPORTED, naming it.
 * Not collective: between the two ranks (the first use of the dim still
 * creates its communicator collectively). */
DEVMESH_C_API int devmesh_isend(devmesh_t mesh, const char *dim, const void *buffer, size_t count, int datatype,
                                int peer, void *stream, devmesh_request_t *request);
/* Starts receiving, as devmesh_isend starts sending (same rules and errors).
 * Not collective: between the two ranks (as devmesh_isend). */
DEVMESH_C_API int devmesh_irecv(devmesh_t mesh, const char *dim, void *buffer, size_t count, int datatype, int peer,
                                void *stream, devmesh_request_t *request);
/* Blocks until *request is done, then sets *request = DEVMESH_REQUEST_NULL
 * (also when the transfer failed: BACKEND, the buffer then undefined).
 * *request DEVMESH_REQUEST_NULL: returns at once.
 * Not collective.
 * Errors: request NULL -> INVALID_ARGUMENT; *request ended already (or
 * never made by devmesh) -> INVALID_ARGUMENT "request already ended",
 * *request untouched; the operation's failure as its call's (BACKEND,
 * PROC_FAILED, REVOKED, TIMEOUT). */
DEVMESH_C_API int devmesh_wait(devmesh_request_t *request);
/* *done = 1 and *request = DEVMESH_REQUEST_NULL when *request is done (or
 * was DEVMESH_REQUEST_NULL), else *done = 0 and *request stays pending;
 * never blocks. A failed transfer: BACKEND, *request NULL.
 * Not collective.
 * Errors: request or done NULL -> INVALID_ARGUMENT; *request ended
 * already -> INVALID_ARGUMENT "request already ended", as devmesh_wait. */
DEVMESH_C_API int devmesh_test(devmesh_request_t *request, int *done);
/* devmesh_wait on requests[0..n-1] in turn; every request ends (and is set
 * to DEVMESH_REQUEST_NULL) even when one fails, whose status is returned
 * (the first failure's).
 * Not collective.
 * An entry ended already (or never made by devmesh) is left as it is and
 * reported as devmesh_wait reports it, naming its index; the others still
 * end.
 * Errors: n < 0, or requests NULL with n > 0 -> INVALID_ARGUMENT. */
DEVMESH_C_API int devmesh_waitall(int n, devmesh_request_t requests[]);
/* Sends sendcount elements of sendtype to local rank dest and receives
 * recvcount elements of recvtype from local rank source at once
 * (MPI_Sendrecv), so that a ring shift cannot deadlock; returns when both
 * are done (NCCL: enqueued as one group on stream). dest or source may be
 * MPI_PROC_NULL (that side does nothing).
 * Not collective: between the ranks named.
 * Errors as devmesh_isend (dest and source checked alike, both
 * buffers), and recvbuf untouched. */
DEVMESH_C_API int devmesh_sendrecv(devmesh_t mesh, const char *dim, const void *sendbuf, size_t sendcount, int sendtype,
                                   int dest, void *recvbuf, size_t recvcount, int recvtype, int source, void *stream);

/* ---- variable-size and rooted collectives over a dim ------------------------ */

/* As the collectives above (dim, datatype, op, stream, the first call
 * creating the dim's communicator, errors), with per-rank blocks: count
 * and displacement arrays hold size(dim) entries, elements of datatype
 * (displacements are 0-based element offsets into the buffer, as MPI's);
 * blocks may come in any order, with gaps the call leaves untouched. An
 * array the call does not read may be NULL: the send arrays of an in-place
 * devmesh_alltoallv, and root-only arguments (marked "at root") on the
 * other ranks. Roots are local ranks of the group; every member passes the
 * same root. The arrays are read during the call only (an i-form's may be
 * reused as soon as it returns).
 * In place, as MPI_IN_PLACE allows: alltoallv sendbuf == recvbuf (the send
 * arrays ignored; block r is recvcounts[r] at rdispls[r]); allgatherv
 * sendbuf == recvbuf + rdispls[rank]; gather at the root sendbuf ==
 * recvbuf + root * count, gatherv sendbuf == recvbuf + rdispls[root];
 * scatter at the root recvbuf == sendbuf + root * count, scatterv recvbuf
 * == sendbuf + sdispls[root]; reduce at the root sendbuf == recvbuf;
 * reduce_scatterv sendbuf == recvbuf (the result at the start).
 * Whether counts agree across ranks (sendcounts[j] on rank i ==
 * recvcounts[i] on rank j) is not checked, as that needs communication: the
 * backend reports what it sees (MPI: a truncation, BACKEND where the
 * parent's error handler returns errors; MPI's default handler aborts, as
 * for the program's own calls on the dim's communicator). A count or
 * displacement the backend cannot pass on (MPI without large-count calls:
 * over 2^31-1) is refused on the rank that has it alone (UNSUPPORTED): its
 * peers wait, as for any collective a member does not enter (bounded by
 * the mesh's deadline).
 * Errors (checked before any communication; recvbuf then untouched): a
 * NULL count or displacement array that is read, a NULL buffer with a
 * block of count > 0, a displacement plus count past PTRDIFF_MAX
 * elements or a byte size that overflows size_t (an empty block's
 * displacement is not read), a local count that disagrees with another (alltoallv
 * sendcounts[rank] != recvcounts[rank], allgatherv recvcounts[rank] !=
 * sendcount, gatherv at the root recvcounts[root] != sendcount, scatterv
 * at the root sendcounts[root] != recvcount), a root outside the group,
 * a C array shorter than size(dim) (not detectable: undefined), an unknown
 * datatype or op -> INVALID_ARGUMENT naming it (and the rank of a bad
 * entry); a backend without the operation -> UNSUPPORTED naming it; the
 * backend failing -> BACKEND (PROC_FAILED, REVOKED, TIMEOUT on a
 * fault-tolerant mesh), recvbuf then undefined. */

/* Block r of sendbuf (sendcounts[r] elements at sdispls[r]) goes to local
 * rank r, landing there at recvbuf + rdispls[rank] (recvcounts[rank]
 * elements): MPI_Alltoallv. In place: sendbuf == recvbuf (sendcounts and
 * sdispls then ignored, and may be NULL).
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_alltoallv(devmesh_t mesh, const char *dim, const void *sendbuf, const size_t sendcounts[],
                                    const size_t sdispls[], void *recvbuf, const size_t recvcounts[],
                                    const size_t rdispls[], int datatype, void *stream);
/* sendbuf (sendcount elements) of local rank r lands at recvbuf +
 * rdispls[r] of every member (recvcounts[r] elements): MPI_Allgatherv;
 * recvcounts[rank] must equal sendcount. In place: sendbuf == recvbuf +
 * rdispls[rank].
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_allgatherv(devmesh_t mesh, const char *dim, const void *sendbuf, size_t sendcount,
                                     void *recvbuf, const size_t recvcounts[], const size_t rdispls[], int datatype,
                                     void *stream);
/* MPI_Reduce_scatter: sendbuf holds the blocks packed (block r has
 * recvcounts[r] elements, no displacements); recvbuf (recvcounts[rank]
 * elements) = op over the group of block rank. In place: sendbuf ==
 * recvbuf, the result at the start.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_reduce_scatterv(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf,
                                          const size_t recvcounts[], int datatype, int op, void *stream);
/* At root: recvbuf[r*count + i] = sendbuf[i] of local rank r (recvbuf at
 * root only, may be NULL elsewhere). In place at the root: sendbuf ==
 * recvbuf + root * count.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_gather(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                 int datatype, int root, void *stream);
/* At root: sendbuf (sendcount elements) of local rank r lands at recvbuf +
 * rdispls[r] (recvcounts[r] elements; recvbuf, recvcounts and rdispls at
 * root). In place at the root: sendbuf == recvbuf + rdispls[root].
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_gatherv(devmesh_t mesh, const char *dim, const void *sendbuf, size_t sendcount, void *recvbuf,
                                  const size_t recvcounts[], const size_t rdispls[], int datatype, int root,
                                  void *stream);
/* recvbuf[i] = sendbuf[rank*count + i] of root, i < count (sendbuf at root
 * only). In place at the root: recvbuf == sendbuf + root * count.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_scatter(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                  int datatype, int root, void *stream);
/* recvbuf (recvcount elements) = root's block rank: sendcounts[rank]
 * elements at sendbuf + sdispls[rank] (sendbuf, sendcounts and sdispls at
 * root). In place at the root: recvbuf == sendbuf + sdispls[root].
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_scatterv(devmesh_t mesh, const char *dim, const void *sendbuf, const size_t sendcounts[],
                                   const size_t sdispls[], void *recvbuf, size_t recvcount, int datatype, int root,
                                   void *stream);
/* At root: recvbuf[i] = op over the group of sendbuf[i], i < count
 * (recvbuf at root only, may be NULL elsewhere). In place at the root:
 * sendbuf == recvbuf.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_reduce(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                 int datatype, int op, int root, void *stream);

/* ---- started (non-blocking) collectives over a dim ------------------------ */

/* devmesh_i<name> starts devmesh_<name>: the blocking call's arguments,
 * then request; *request is written only on success (DEVMESH_REQUEST_NULL
 * when the operation is already complete). The request ends with
 * devmesh_wait, devmesh_test reporting done or devmesh_waitall, which
 * report the operation's failures; results equal the blocking call's.
 * Until then the buffers are the operation's (do not change sendbuf nor
 * touch recvbuf); count and displacement arrays may be reused as soon as
 * the call returns. Every member starts the same collectives on a dim in
 * the same order, blocking ones included. NCCL: enqueued on stream, the
 * request completing when the stream has run it. A request must end before
 * the mesh's communicators go (devmesh_destroy of the root's last handle).
 * Errors: those of the blocking call, checked before any communication
 * (*request then untouched); request NULL -> INVALID_ARGUMENT; a backend
 * without started collectives -> UNSUPPORTED naming the call. */

/* Starts devmesh_allreduce.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_iallreduce(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                     int datatype, int op, void *stream, devmesh_request_t *request);
/* Starts devmesh_allgather.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_iallgather(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                     int datatype, void *stream, devmesh_request_t *request);
/* Starts devmesh_reduce_scatter.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_ireduce_scatter(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf,
                                          size_t count, int datatype, int op, void *stream, devmesh_request_t *request);
/* Starts devmesh_broadcast.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_ibroadcast(devmesh_t mesh, const char *dim, void *buffer, size_t count, int datatype,
                                     int root, void *stream, devmesh_request_t *request);
/* Starts devmesh_alltoall.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_ialltoall(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                    int datatype, void *stream, devmesh_request_t *request);
/* Starts devmesh_barrier: the request completes when every member of the
 * group has started it.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_ibarrier(devmesh_t mesh, const char *dim, void *stream, devmesh_request_t *request);
/* Starts devmesh_alltoallv.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_ialltoallv(devmesh_t mesh, const char *dim, const void *sendbuf, const size_t sendcounts[],
                                     const size_t sdispls[], void *recvbuf, const size_t recvcounts[],
                                     const size_t rdispls[], int datatype, void *stream, devmesh_request_t *request);
/* Starts devmesh_allgatherv.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_iallgatherv(devmesh_t mesh, const char *dim, const void *sendbuf, size_t sendcount,
                                      void *recvbuf, const size_t recvcounts[], const size_t rdispls[], int datatype,
                                      void *stream, devmesh_request_t *request);
/* Starts devmesh_reduce_scatterv.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_ireduce_scatterv(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf,
                                           const size_t recvcounts[], int datatype, int op, void *stream,
                                           devmesh_request_t *request);
/* Starts devmesh_gather.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_igather(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                  int datatype, int root, void *stream, devmesh_request_t *request);
/* Starts devmesh_gatherv.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_igatherv(devmesh_t mesh, const char *dim, const void *sendbuf, size_t sendcount,
                                   void *recvbuf, const size_t recvcounts[], const size_t rdispls[], int datatype,
                                   int root, void *stream, devmesh_request_t *request);
/* Starts devmesh_scatter.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_iscatter(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                   int datatype, int root, void *stream, devmesh_request_t *request);
/* Starts devmesh_scatterv.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_iscatterv(devmesh_t mesh, const char *dim, const void *sendbuf, const size_t sendcounts[],
                                    const size_t sdispls[], void *recvbuf, size_t recvcount, int datatype, int root,
                                    void *stream, devmesh_request_t *request);
/* Starts devmesh_reduce.
 * Collective over the caller's group along dim. */
DEVMESH_C_API int devmesh_ireduce(devmesh_t mesh, const char *dim, const void *sendbuf, void *recvbuf, size_t count,
                                  int datatype, int op, int root, void *stream, devmesh_request_t *request);

/* ---- batched point to point over a dim -------------------------------------- */

/* One send or receive of devmesh_batch. */
typedef struct devmesh_p2p_s {
  int send;     /* nonzero: send buffer to peer; 0: receive buffer from peer */
  int peer;     /* a local rank of the group, or MPI_PROC_NULL (the entry does nothing) */
  void *buffer; /* read (send) or written (receive) */
  size_t count; /* elements of datatype */
  int datatype; /* a devmesh_datatype */
} devmesh_p2p_t;

/* Starts the n sends and receives of ops together (NCCL: one group on
 * stream; a pipeline stage's exchange with its neighbours), ended by one
 * request as devmesh_isend's; *request is written only on success. Entries
 * with one peer match in order, as isend/irecv's. ops is read during the
 * call only; the buffers are the operation's until the request ends.
 * Not collective: between the ranks named (the first use of the dim still
 * creates its communicator collectively).
 * Errors (checked before anything starts; *request untouched): a NULL mesh
 * or request pointer, n < 0, ops NULL with n > 0, an entry with a NULL
 * buffer and count > 0, an unknown datatype or a peer outside the group
 * other than MPI_PROC_NULL -> INVALID_ARGUMENT naming the entry's index;
 * unknown dim -> UNKNOWN_DIM; a backend without it -> UNSUPPORTED. */
DEVMESH_C_API int devmesh_batch(devmesh_t mesh, const char *dim, const devmesh_p2p_t ops[], int n, void *stream,
                                devmesh_request_t *request);

/* ---- errors and version (not collective) ---------------------------------- */

/* A static description of a status, e.g. "unknown dim"; never NULL.
 * Not collective. */
DEVMESH_C_API const char *devmesh_status_string(int status);

/* The detailed message of the calling thread's last failed devmesh call,
 * naming the function and the problem; "" if none failed yet. Valid until
 * the thread's next failing devmesh call.
 * Not collective. */
DEVMESH_C_API const char *devmesh_last_error(void);

/* The library's version (of the shared object, which may differ from the
 * DEVMESH_VERSION_* macros the caller was compiled with). NULL pointers
 * are skipped.
 * Not collective. */
DEVMESH_C_API int devmesh_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif /* DEVMESH_DEVMESH_H */
