/* devmesh C API: an N-D mesh of MPI ranks, like PyTorch's DeviceMesh.
 *
 * A thin C layer over devmesh::Mesh (include/devmesh/mesh.hpp); the meaning
 * of every operation is in SEMANTICS.md. C11 and C++ compatible.
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
 *     devmesh_destroy gives DEVMESH_ERR_INVALID_ARGUMENT.
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
 * Collectiveness, the thing to know to avoid a deadlock:
 *   devmesh_create*            collective over the parent communicator
 *   devmesh_comm*              collective over the caller's group along the
 *                              dim the first time any view of the root asks
 *                              for that dim layout; not collective afterwards
 *   devmesh_create_comms,      collective over all members of the root
 *   devmesh_cart_comm          (cart_comm: the first time only)
 *   everything else            not collective
 */
#ifndef DEVMESH_DEVMESH_H
#define DEVMESH_DEVMESH_H

#include <mpi.h>
#include <stddef.h>

#if defined(__GNUC__) || defined(__clang__)
#define DEVMESH_C_API __attribute__((visibility("default")))
#else
#define DEVMESH_C_API
#endif

#define DEVMESH_VERSION_MAJOR 0
#define DEVMESH_VERSION_MINOR 1
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
  DEVMESH_ERR_SHAPE_MISMATCH = 2,   /* products that must agree do not; a split that does not fit */
  DEVMESH_ERR_UNKNOWN_DIM = 3,      /* a dim name the view does not have */
  DEVMESH_ERR_DUPLICATE_NAME = 4,   /* a name given twice or clashing with an existing one */
  DEVMESH_ERR_OVERLAP = 5,          /* two dims of one view cover the same root digits */
  DEVMESH_ERR_INCONSISTENT = 6,     /* ranks of one collective call passed different arguments */
  DEVMESH_ERR_NOT_MEMBER = 7,       /* the caller is not a member of the mesh */
  DEVMESH_ERR_BACKEND = 8,          /* the communication backend (MPI) failed */
  DEVMESH_ERR_UNSUPPORTED = 9,      /* the backend or build cannot do what was asked */
  DEVMESH_ERR_INTERNAL = 10         /* a bug in devmesh, or out of memory */
};

/* How devmesh_create_comms creates communicators (devmesh::CommPath). */
enum devmesh_comm_path {
  DEVMESH_COMM_PATH_AUTOMATIC = 0,    /* MPI_Comm_create_group (measured fastest) */
  DEVMESH_COMM_PATH_CREATE_GROUP = 1, /* MPI_Comm_create_group over the caller's group */
  DEVMESH_COMM_PATH_SPLIT = 2,        /* MPI_Comm_split over all root members */
  DEVMESH_COMM_PATH_CART_SUB = 3      /* MPI_Cart_sub where the dim is a set of root dims */
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
DEVMESH_C_API int devmesh_create(MPI_Comm parent, int ndim, const int shape[],
                                 const char *const names[], devmesh_t *mesh);

/* As devmesh_create over an explicit list of parent ranks: root index x is
 * parent rank ranks[x]. ranks holds prod(shape) distinct parent ranks, so
 * shape must not contain zeros here. Parent ranks not listed get
 * *mesh = NULL and DEVMESH_SUCCESS.
 * Collective over parent (every parent rank calls it, listed or not, with
 * the same arguments).
 * Errors: as devmesh_create; a 0 in shape, a negative, out-of-range or
 * repeated rank -> INVALID_ARGUMENT; prod(shape) larger than the size of
 * parent -> SHAPE_MISMATCH. */
DEVMESH_C_API int devmesh_create_from_ranks(MPI_Comm parent, int ndim, const int shape[],
                                            const int ranks[], const char *const names[],
                                            devmesh_t *mesh);

/* As devmesh_create_from_ranks with the list's length given: ranks holds
 * nranks distinct parent ranks, and zeros in shape are chosen (as
 * MPI_Dims_create does) so that the product is nranks.
 * Collective over parent.
 * Errors: as devmesh_create_from_ranks; prod(shape) != nranks ->
 * SHAPE_MISMATCH; nranks < 1 -> INVALID_ARGUMENT. */
DEVMESH_C_API int devmesh_create_from_rank_list(MPI_Comm parent, int ndim, const int shape[],
                                                int nranks, const int ranks[],
                                                const char *const names[], devmesh_t *mesh);

/* Fortran-handle variants: parent is an MPI_Fint (converted with
 * MPI_Comm_f2c). Same semantics and collectiveness as above. */
DEVMESH_C_API int devmesh_create_f(MPI_Fint parent, int ndim, const int shape[],
                                   const char *const names[], devmesh_t *mesh);
DEVMESH_C_API int devmesh_create_from_ranks_f(MPI_Fint parent, int ndim, const int shape[],
                                              const int ranks[], const char *const names[],
                                              devmesh_t *mesh);
DEVMESH_C_API int devmesh_create_from_rank_list_f(MPI_Fint parent, int ndim, const int shape[],
                                                  int nranks, const int ranks[],
                                                  const char *const names[], devmesh_t *mesh);

/* ---- options: backends per mesh and per dim ------------------------------ */

#define DEVMESH_VERSION_CODE \
  (DEVMESH_VERSION_MAJOR * 10000 + DEVMESH_VERSION_MINOR * 100 + DEVMESH_VERSION_PATCH)
#define DEVMESH_CONFIG_MAGIC 0x64766d63u

/* How the NCCL backend creates a group's communicator (devmesh::NcclInit). */
enum devmesh_nccl_init {
  DEVMESH_NCCL_INIT_UNIQUE_ID = 0, /* unique id over the dim's MPI group (default) */
  DEVMESH_NCCL_INIT_SPLIT = 1      /* ncclCommSplit of a root NCCL communicator
                                      (devmesh_create_comms only) */
};

/* Mesh options. Initialise with DEVMESH_CONFIG_INITIALIZER, then set fields:
 *   devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
 *   cfg.backend = "nccl";  cfg.dim_backends = "dp=mpi";
 * Extensible without breaking the ABI (as ncclConfig_t): new fields are
 * only ever added at the end, and the library reads the first `size` bytes
 * only, so a caller compiled against an older header gets defaults for the
 * fields it does not know. Every rank must pass the same values. */
typedef struct devmesh_config_s {
  size_t size;          /* sizeof(devmesh_config_t) in the caller's header */
  unsigned int magic;   /* DEVMESH_CONFIG_MAGIC */
  unsigned int version; /* DEVMESH_VERSION_CODE of the caller's header */
  const char *backend;  /* backend of every dim: "mpi" (NULL means "mpi") or "nccl" */
  /* Per-dim overrides, by the name of the dim in the view that asks:
   * "dim=backend[,dim=backend...]", e.g. "tp=nccl"; NULL: none. */
  const char *dim_backends;
  int device;              /* CUDA device; -1: the caller's current one, else
                              the node-local rank modulo the visible devices */
  int nccl_init;           /* a devmesh_nccl_init */
  int nccl_split_share;    /* ncclConfig_t.splitShare for DEVMESH_NCCL_INIT_SPLIT */
  int nccl_scalable_from;  /* group size from which ncclCommInitRankScalable is used */
  double init_timeout_seconds; /* deadline of one communicator creation */
} devmesh_config_t;

#define DEVMESH_CONFIG_INITIALIZER                                                  \
  {                                                                                 \
    sizeof(devmesh_config_t), DEVMESH_CONFIG_MAGIC, DEVMESH_VERSION_CODE, NULL, NULL, \
        -1, DEVMESH_NCCL_INIT_UNIQUE_ID, 0, 1024, 120.0                             \
  }

/* devmesh_create with options (config NULL: the defaults).
 * Collective over parent.
 * Errors: as devmesh_create; config not made from DEVMESH_CONFIG_INITIALIZER
 * (wrong magic or size), an unknown backend name, a malformed dim_backends
 * string, a bad nccl_init, nccl_scalable_from < 1 or a timeout <= 0 ->
 * INVALID_ARGUMENT; a default backend this build or machine cannot run ->
 * UNSUPPORTED, with devmesh_last_error() saying which ("built without NCCL"
 * or "no CUDA device"). A per-dim override that cannot run fails with
 * UNSUPPORTED only when that dim's backend communicator is asked for
 * (devmesh_nccl_comm); the mesh's other dims keep working. */
DEVMESH_C_API int devmesh_create_ex(MPI_Comm parent, int ndim, const int shape[],
                                    const char *const names[], const devmesh_config_t *config,
                                    devmesh_t *mesh);

/* devmesh_create_from_rank_list with options. Collective over parent. */
DEVMESH_C_API int devmesh_create_from_rank_list_ex(MPI_Comm parent, int ndim, const int shape[],
                                                   int nranks, const int ranks[],
                                                   const char *const names[],
                                                   const devmesh_config_t *config,
                                                   devmesh_t *mesh);

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
DEVMESH_C_API int devmesh_create_hosts(MPI_Comm parent, const char *host_dim,
                                       const char *local_dim, devmesh_t *mesh);

/* devmesh_create with the rank order built from the hosts, so that the
 * innermost dims stay within hosts whatever the launcher's placement
 * (block or cyclic). Collective over parent. Errors: as devmesh_create and
 * devmesh_create_hosts. */
DEVMESH_C_API int devmesh_create_host_aware(MPI_Comm parent, int ndim, const int shape[],
                                            const char *const names[], devmesh_t *mesh);

/* *within = 1 when every group of dim stays within one host, else 0. Needs
 * a mesh made by devmesh_create_hosts or devmesh_create_host_aware (else
 * INVALID_ARGUMENT). Not collective. */
DEVMESH_C_API int devmesh_dim_within_hosts(devmesh_t m, const char *dim, int *within);

/* Releases a handle and sets *mesh = NULL. mesh == NULL and *mesh == NULL
 * are accepted (no-op, DEVMESH_SUCCESS). Communicators obtained from the
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
 * sliced from the root later. Not collective.
 * Errors: an empty name -> INVALID_ARGUMENT; the name of a root dim (unless
 * m is that 1-D root dim) or a name registered with a different layout ->
 * DUPLICATE_NAME (the same layout returns that dim again). */
DEVMESH_C_API int devmesh_flatten(devmesh_t m, const char *name, devmesh_t *out);

/* Replaces dim by n dims of the given sizes, split row-major (first new dim
 * most significant). Not collective.
 * Errors: NULL pointer, n < 1, a size < 1 (0 is not inferred here), an
 * empty name -> INVALID_ARGUMENT; unknown dim -> UNKNOWN_DIM; new names
 * repeated or clashing with another dim of m, a registered name or a root
 * dim -> DUPLICATE_NAME; product differs from size(dim), or a split that
 * cuts a mode into non-dividing pieces -> SHAPE_MISMATCH. */
DEVMESH_C_API int devmesh_unflatten(devmesh_t m, const char *dim, int n, const int sizes[],
                                    const char *const names[], devmesh_t *out);

/* The root view of m's root mesh. Not collective. */
DEVMESH_C_API int devmesh_root(devmesh_t m, devmesh_t *out);

/* ---- queries (not collective) --------------------------------------------- */

/* Number of dims of the view. */
DEVMESH_C_API int devmesh_ndim(devmesh_t m, int *ndim);

/* Size of dim, or of the whole view (product of its dim sizes) when dim is
 * NULL. Errors: unknown dim -> UNKNOWN_DIM. */
DEVMESH_C_API int devmesh_size(devmesh_t m, const char *dim, int *size);

/* The view's ndim sizes, in dim order. */
DEVMESH_C_API int devmesh_shape(devmesh_t m, int shape[]);

/* Name of dim number index (0-based). The string is borrowed: it lives as
 * long as the handle m. Errors: index out of [0, ndim) -> INVALID_ARGUMENT. */
DEVMESH_C_API int devmesh_dim_name(devmesh_t m, int index, const char **name);

/* The caller's local rank along dim (its rank in devmesh_comm(m, dim)).
 * dim NULL: the only dim of a 1-D view (INVALID_ARGUMENT otherwise). */
DEVMESH_C_API int devmesh_local_rank(devmesh_t m, const char *dim, int *rank);

/* The caller's coordinate: its local rank along each of the ndim dims. */
DEVMESH_C_API int devmesh_coordinate(devmesh_t m, int coord[]);

/* The size(dim) parent ranks of the caller's group along dim, in local-rank
 * order. dim NULL as in devmesh_local_rank. */
DEVMESH_C_API int devmesh_group_ranks(devmesh_t m, const char *dim, int ranks[]);

/* Every group of dim, each in local-rank order, groups ordered by their
 * smallest root index: W / size(dim) groups of size(dim) parent ranks,
 * W ints in all, where W = devmesh_root_size(m). O(W). Not collective. */
DEVMESH_C_API int devmesh_all_groups(devmesh_t m, const char *dim, int ranks[]);

/* W: the number of ranks of m's root mesh. */
DEVMESH_C_API int devmesh_root_size(devmesh_t m, int *size);

/* The caller's rank in the parent communicator. */
DEVMESH_C_API int devmesh_parent_rank(devmesh_t m, int *rank);

/* Communicators m's root has created so far (for checking that views
 * reuse communicators): one per distinct layout asked for, plus the root's
 * own communicator once an operation over all root members needed it
 * (devmesh_create_comms, devmesh_cart_comm); devmesh_create makes none
 * (with an MPI older than 4: the root communicator, made at creation). */
DEVMESH_C_API int devmesh_comm_count(devmesh_t m, int *count);

/* ---- communicators --------------------------------------------------------- */

/* The caller's communicator along dim, owned by the library (do not free
 * it): its rank k is local rank k. One communicator exists per distinct dim
 * layout of a root; every view with that layout gets the same one.
 * dim NULL as in devmesh_local_rank.
 * Collective over the caller's group along dim the first time any view of
 * the root asks for this layout; not collective afterwards. Members of a
 * group must ask for layouts in the same order, or call
 * devmesh_create_comms first.
 * Errors: unknown dim -> UNKNOWN_DIM; MPI failure -> BACKEND. */
DEVMESH_C_API int devmesh_comm(devmesh_t m, const char *dim, MPI_Comm *comm);

/* devmesh_comm returning a Fortran handle (MPI_Comm_c2f). */
DEVMESH_C_API int devmesh_comm_f(devmesh_t m, const char *dim, MPI_Fint *comm);

/* Creates the communicators of every dim of m at once, by path (a
 * devmesh_comm_path). Collective over all members of the root.
 * Errors: members that passed different paths or views -> INCONSISTENT on
 * every member; an unknown path (on every member) -> INVALID_ARGUMENT; a
 * mesh released by MPI_Finalize -> INVALID_ARGUMENT; MPI failure -> BACKEND. */
DEVMESH_C_API int devmesh_create_comms(devmesh_t m, int path);

/* The root as an MPI Cartesian communicator (MPI_Cart_create, no
 * reordering, non-periodic): its rank x is root index x. Owned by the
 * library. Collective over all members of the root the first time. */
DEVMESH_C_API int devmesh_cart_comm(devmesh_t m, MPI_Comm *comm);
DEVMESH_C_API int devmesh_cart_comm_f(devmesh_t m, MPI_Fint *comm);

/* ---- errors and version (not collective) ---------------------------------- */

/* A static description of a status, e.g. "unknown dim"; never NULL. */
DEVMESH_C_API const char *devmesh_status_string(int status);

/* The detailed message of the calling thread's last failed devmesh call,
 * naming the function and the problem; "" if none failed yet. Valid until
 * the thread's next failing devmesh call. */
DEVMESH_C_API const char *devmesh_last_error(void);

/* The library's version (of the shared object, which may differ from the
 * DEVMESH_VERSION_* macros the caller was compiled with). NULL pointers
 * are skipped. */
DEVMESH_C_API int devmesh_version(int *major, int *minor, int *patch);

#ifdef __cplusplus
}
#endif

#endif /* DEVMESH_DEVMESH_H */
