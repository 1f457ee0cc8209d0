/* devmesh backend plugins: the C interface a communication library sits
 * behind to serve mesh dims (MPI is built in; NCCL, Gloo or a user's own
 * library come as plugins).
 *
 * A backend named X is the shared object libdevmesh-backend-X.so exporting
 *
 *     const devmesh_backend_v4_t devmesh_backend_v4 = { { { { ... v1 ... }, ... v2 ... }, ... v3 ... }, ... };
 *
 * (DEVMESH_BACKEND_EXPORT_V4 below declares it with the right visibility),
 * or, for a plugin written against an older version of the interface,
 * devmesh_backend_v3, devmesh_backend_v2 or devmesh_backend_v1
 * (DEVMESH_BACKEND_EXPORT_V3, _V2, _V1).
 * When a mesh names backend X (devmesh_config_t.backend, .dim_backends, or
 * MeshOptions in C++), the core looks for the file in
 *   1. every directory of the environment variable DEVMESH_BACKEND_PATH
 *      (colon-separated), in order;
 *   2. the install's plugin directory, <libdir>/devmesh/ (the directory
 *      "devmesh" beside the loaded libdevmesh.so);
 *   3. the dynamic loader's own search (LD_LIBRARY_PATH, rpath, ld.so.cache).
 * A backend linked into the application itself is registered in process with
 * devmesh_register_backend instead (it is then found before any search).
 * Names are [a-z0-9_-], at most 64 bytes. "mpi" is built in and reserved.
 *
 * Failures while loading, the same on every rank (mesh creation
 * cross-checks them, see devmesh.h):
 *   no file found anywhere                 -> DEVMESH_ERR_INVALID_ARGUMENT
 *   found but unusable: the loader's error (a missing dependency such as
 *   libnccl.so.2), none of the devmesh_backend_v4/v3/v2/v1 symbols, an ABI
 *   version this core does not accept, a name that differs from the file's,
 *   a missing mandatory function, isend/irecv/test/wait not all or none,
 *   a version 4 member without its capability bit or the reverse,
 *   another MPI than the core's (stated, or a second MPI library the plugin
 *   loads), or init() failing               -> DEVMESH_ERR_UNSUPPORTED
 * and devmesh_last_error() (or devmesh::Error::what) gives the reason.
 *
 * Life cycle, all calls from the core:
 *   init()          once per process, at the first mesh that names the
 *                   backend (after MPI_Init). A plugin that cannot run on
 *                   this machine (no GPU) fails here.
 *   open()          once per root mesh and option set: parses and validates
 *                   the backend's own options (key=value strings) before any
 *                   communicator exists. Not collective, no communication.
 *   comm_create()   collective over the members of group->group: upgrades
 *                   a dim's MPI group to the backend's communicator.
 *   collectives     collective over the communicator's group (send/recv,
 *                   isend/irecv and sendrecv: between the ranks named).
 *   test(), wait()  on a request of isend/irecv (and of version 4's
 *                   non-blocking members); each request is ended by
 *                   exactly one wait() or one test() that reports it done
 *                   or fails, before its communicator is destroyed.
 *   comm_destroy()  before the group's MPI communicator is freed.
 *   close()         after the instance's communicators are destroyed.
 *   finalize()      never called before MPI_Finalize; may be NULL. The core
 *                   does not unload plugins (dlclose) while the process runs.
 *
 * Errors: every int-returning function returns DEVMESH_SUCCESS or a
 * DEVMESH_ERR_* status (devmesh.h); the detail of the calling thread's last
 * failure is last_error(). Use DEVMESH_ERR_BACKEND for failures of the
 * library underneath, DEVMESH_ERR_UNSUPPORTED for an operation, data type or
 * reduction the backend lacks, DEVMESH_ERR_INVALID_ARGUMENT for bad input.
 * last_error() gives the reason alone ("cannot reduce float16 data"): the
 * core puts the backend's name and the operation in front, once
 * ("backend 'mpi', allreduce: cannot reduce float16 data"), and the C API
 * the function's name. Functions never throw, abort or exit.
 *
 * Threads: the core serialises calls on one root mesh; calls on different
 * root meshes may come from different threads at once.
 *
 * How the ABI grows (the rules that keep old plugins working):
 *   - Each struct is frozen once released: version N of the interface is a
 *     new struct devmesh_backend_vN_t, exported under the new symbol name
 *     devmesh_backend_vN, whose first member is the vN-1 struct and which
 *     adds members only after it (v2: non-blocking isend, irecv, test and
 *     wait, and sendrecv; 0.3.0).
 *   - A newer core looks for the newest symbol it knows first, then each
 *     older one, and serves an older plugin through what that version has:
 *     operations the plugin's version lacks fail with
 *     DEVMESH_ERR_UNSUPPORTED naming the operation and the backend.
 *   - An older core looks only for the symbols it knows, so a newer plugin
 *     that wants to serve it exports the older symbols too (as NCCL's net
 *     plugins export ncclNet_v7 beside ncclNet_v8).
 *   - abi_version must equal the N of the symbol it is exported under, and
 *     a core refuses (DEVMESH_ERR_UNSUPPORTED) a version it does not know.
 *   - Every function pointer other than those marked "mandatory" may be
 *     NULL: the operation then fails with DEVMESH_ERR_UNSUPPORTED.
 *   - The enum values of devmesh.h (statuses, data types, reductions) never
 *     change meaning. New data types or reductions come with a new ABI
 *     version, and a core never passes a plugin one newer than the
 *     plugin's version. A plugin answers a value outside the enums with
 *     DEVMESH_ERR_INVALID_ARGUMENT, and one it knows but lacks with
 *     DEVMESH_ERR_UNSUPPORTED.
 *   - devmesh_backend_group_t starts with its size; the core only ever
 *     appends members, and a plugin reads members beyond those it knows
 *     only if size says they are there.
 *
 * docs/BACKENDS.md walks through writing, building, installing and
 * selecting a backend, with examples/plugin/ (installed as
 * <prefix>/share/doc/devmesh/examples/plugin/) as its example.
 */
#ifndef DEVMESH_BACKEND_PLUGIN_H
#define DEVMESH_BACKEND_PLUGIN_H

#include <mpi.h>
#include <stddef.h>

/* A plugin compiled against another MPI than the core's is refused at load
 * (mpi_family, below), with a message; it needs no link-time reference to
 * libdevmesh (devmesh/mpi_check.h), which it does not link: a core that
 * was itself loaded with RTLD_LOCAL could not satisfy one. */
#ifndef DEVMESH_MPI_CHECK_NO_LINK_REFERENCE
#define DEVMESH_MPI_CHECK_NO_LINK_REFERENCE
#endif
#include "devmesh/devmesh.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The abi_version of a devmesh_backend_v1_t (it stays 1, so that a version
 * 1 plugin still compiles unchanged against this header). */
#define DEVMESH_BACKEND_ABI_VERSION 1
/* The abi_version of a devmesh_backend_v2_t (in its v1 member). */
#define DEVMESH_BACKEND_ABI_VERSION_2 2
#define DEVMESH_BACKEND_SYMBOL_V1 "devmesh_backend_v1"
#define DEVMESH_BACKEND_SYMBOL_V2 "devmesh_backend_v2"

/* What comm_create gets to build a group's communicator from. */
typedef struct devmesh_backend_group_s {
  size_t size;          /* sizeof(devmesh_backend_group_t) in the core's header */
  MPI_Comm group;       /* the group's MPI communicator, owned by the mesh; its
                           rank k is the group's local rank k. Valid until
                           comm_destroy returns. */
  MPI_Comm root;        /* all members of the root mesh when all_root_members,
                           else MPI_COMM_NULL (and for a backend stating
                           DEVMESH_BACKEND_CAP_LOCAL_CREATE, which makes
                           nothing over it); owned by the mesh */
  int all_root_members; /* 1 when every member of the root creates this
                           layout in the same call (devmesh_create_comms),
                           so that root-collective paths (a split) may be
                           used; color and key then name the group (its
                           smallest root index) and the caller's rank in it */
  int color;
  int key;
  int host_local_rank; /* the caller's rank among the root's members on its
                          host (for picking a device); given to plugins
                          that ask for it (v3: DEVMESH_BACKEND_CAP_HOST_
                          LOCAL_RANK; v1 and v2: always), else -1 */
  double deadline;     /* seconds any one wait of this communicator may
                          take (0: none given); see DEVMESH_BACKEND_CAP_
                          DEADLINE. Appended in version 3: read it only
                          when size covers it. */
} devmesh_backend_group_t;

/* One backend, version 1 of the interface. */
typedef struct devmesh_backend_v1_s {
  unsigned int abi_version; /* DEVMESH_BACKEND_ABI_VERSION (1); mandatory */
  const char *name;         /* the backend's name, e.g. "nccl"; mandatory */
  /* NULL-terminated keys of options that may differ between ranks (e.g. a
   * device number); every other option must be the same on every rank and
   * is part of the creation's cross-check. NULL: none. */
  const char *const *per_rank_keys;

  /* Once per process before any other call but last_error. May be NULL. */
  int (*init)(void);
  /* May be NULL; see the life cycle above. */
  void (*finalize)(void);
  /* The calling thread's last failure, "" if none; never NULL. Mandatory. */
  const char *(*last_error)(void);

  /* Parses n options (keys[i]=values[i]) into a new instance for one root
   * mesh; unknown keys and bad values fail with INVALID_ARGUMENT naming
   * them. Not collective. Mandatory. */
  int (*open)(int n, const char *const keys[], const char *const values[], void **instance);
  /* Mandatory. */
  void (*close)(void *instance);

  /* Collective over group->group. *comm is written only on success.
   * Mandatory. */
  int (*comm_create)(void *instance, const devmesh_backend_group_t *group, void **comm);
  /* Mandatory. Not collective (may wait for the backend's own work). */
  void (*comm_destroy)(void *comm);
  /* The address of the library's own handle (MPI_Comm *, ncclComm_t *,
   * ...), valid while comm lives. */
  int (*comm_native)(void *comm, void **handle);

  /* The collectives. count is in elements, buffers are contiguous, datatype
   * a devmesh_datatype, op a devmesh_reduce_op, stream the backend's stream
   * (cudaStream_t for NCCL) or NULL for the communicator's own; backends
   * without streams ignore it. In place, as MPI_IN_PLACE allows: send ==
   * recv for allreduce, alltoall and reduce_scatter (reduce_scatter reads
   * size*count elements from the buffer and writes its result at the
   * start); for allgather send == recv + rank*count elements. */
  /* recv[i] = op over ranks of send[i], i < count. */
  int (*allreduce)(void *comm, const void *send, void *recv, size_t count, int datatype, int op, void *stream);
  /* recv[r*count + i] = send[i] of rank r. */
  int (*allgather)(void *comm, const void *send, void *recv, size_t count, int datatype, void *stream);
  /* recv[i] = op over ranks of send[rank*count + i], i < count. */
  int (*reduce_scatter)(void *comm, const void *send, void *recv, size_t count, int datatype, int op, void *stream);
  int (*broadcast)(void *comm, void *buffer, size_t count, int datatype, int root, void *stream);
  /* recv[r*count + i] = send[rank*count + i] of rank r. */
  int (*alltoall)(void *comm, const void *send, void *recv, size_t count, int datatype, void *stream);
  int (*barrier)(void *comm, void *stream);
  /* Point to point with a group rank: blocking for host backends,
   * stream-ordered for NCCL. */
  int (*send)(void *comm, const void *buffer, size_t count, int datatype, int peer, void *stream);
  int (*recv)(void *comm, void *buffer, size_t count, int datatype, int peer, void *stream);

  /* The MPI error code behind the calling thread's last failure, 0 when it
   * was not an MPI call's (devmesh::Error::mpi_code). May be NULL. */
  int (*last_mpi_error)(void);
} devmesh_backend_v1_t;

/* One backend, version 2 of the interface: version 1 (first, so that a
 * pointer to the v2 table is a pointer to its v1 member) with
 * v1.abi_version = DEVMESH_BACKEND_ABI_VERSION_2 (2), then non-blocking
 * point to point and sendrecv. Every member added here may be NULL (the
 * operation is then UNSUPPORTED).
 *
 * Peers are group ranks in [0, size). The core never passes MPI_PROC_NULL
 * (it completes an operation with that peer itself, as MPI does), nor a
 * peer outside the group.
 *
 * Requests: isend and irecv start the transfer and write *request, an
 * opaque handle of the plugin's, only on success; they may write NULL when
 * the transfer has completed already. Until the request ends, the caller
 * does not touch the buffer (irecv) or change it (isend). A request ends
 * with exactly one wait(), or with the test() that sets *done = 1; both
 * free it, also when they fail (the status then says why, the buffer's
 * contents undefined). test() with *done = 0 leaves it pending. Requests
 * end before their communicator's comm_destroy. For stream backends
 * (NCCL) isend/irecv enqueue on stream and the request completes when the
 * stream has run the transfer (test/wait ask the stream, as
 * cudaEventQuery/cudaEventSynchronize). Not collective: between the two
 * ranks. Messages between two ranks in one communicator, blocking or not,
 * are matched in the order they were started. */
typedef struct devmesh_backend_v2_s {
  devmesh_backend_v1_t v1;
  int (*isend)(void *comm, const void *buffer, size_t count, int datatype, int peer, void *stream, void **request);
  int (*irecv)(void *comm, void *buffer, size_t count, int datatype, int peer, void *stream, void **request);
  int (*test)(void *request, int *done);
  int (*wait)(void *request);
  /* Sends sendcount elements to dest and receives recvcount elements from
   * source at once (MPI_Sendrecv): returns when both are done (host
   * backends) or enqueued on stream (NCCL). dest or source may be the
   * caller itself. Both are group ranks: when one side is MPI_PROC_NULL
   * the core calls send or recv instead. */
  int (*sendrecv)(void *comm, const void *sendbuf, size_t sendcount, int sendtype, int dest, void *recvbuf,
                  size_t recvcount, int recvtype, int source, void *stream);
} devmesh_backend_v2_t;

/* ---- version 3 ------------------------------------------------------------
 *
 * Version 3 makes the contract two-way: the core hands the plugin its
 * services (a logger, MPI error text, the cross-rank check, the identity of
 * its MPI), the plugin states what it needs and can do (capability bits,
 * the reductions it has, the MPI it was compiled against), communicators
 * are made in a local step the core cross-checks before the collective one,
 * and a communicator can be revoked. Its failure statuses
 * (DEVMESH_ERR_PROC_FAILED, DEVMESH_ERR_REVOKED, DEVMESH_ERR_TIMEOUT) and
 * the group's deadline are part of it.
 *
 * The fault-tolerant mesh (devmesh::MeshOptions::fault_tolerance,
 * deadline) drives them: a failure the plugin reports revokes the whole
 * mesh, a revoke of the mesh calls revoke() on every communicator of it
 * (from the mesh's deadline or watcher thread only with
 * DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD), a backend whose revoke does not
 * spread (no DEVMESH_BACKEND_CAP_REVOKE_SPREADS) is revoked on every member
 * by the mesh's watcher, which needs REVOKE_ANY_THREAD (a backend with
 * neither cannot serve such a mesh), and group->deadline carries the
 * mesh's deadline. The layout is final. */
#define DEVMESH_BACKEND_ABI_VERSION_3 3
#define DEVMESH_BACKEND_SYMBOL_V3 "devmesh_backend_v3"

/* Log levels of the host's log(): DEVMESH_LOG=warn|info|debug in the
 * environment sets the level (warn when unset); a line is written when its
 * level is at most the user's. */
#define DEVMESH_LOG_WARN 1
#define DEVMESH_LOG_INFO 2
#define DEVMESH_LOG_DEBUG 3

/* What the core gives a version 3 plugin's init_host. Versioned by its
 * size: the core only appends members, and a plugin reads one beyond those
 * it knows only if size says it is there. Every function is thread-safe
 * and never NULL. */
typedef struct devmesh_backend_host_s {
  size_t size;   /* sizeof(devmesh_backend_host_t) in the core's header */
  int log_level; /* the user's level (DEVMESH_LOG_*): skip building lines above it */
  /* One line to standard error when level <= log_level, prefixed with the
   * rank in MPI_COMM_WORLD and the backend's name:
   *   "devmesh[3] backend 'gloo' info: connected 4 ranks in 2.1 ms".
   * message has no newline; it is cut at 4 KiB. */
  void (*log)(const char *backend, int level, const char *message);
  /* MPI's text for an MPI error code, written to text (len bytes, NUL-
   * terminated, cut to fit) through a buffer large enough for an MPI that
   * writes past MPI_MAX_ERROR_STRING (docs/RELIABILITY.md, "Faults on two
   * real hosts"): "<MPI's string> (MPI error class N)". *cls (may be NULL) gets the class, or 0
   * when MPI does not know code; returns 1 when it knows code, else 0 (the
   * text then says "unknown MPI error code N"). */
  int (*mpi_error)(int code, char *text, size_t len, int *cls);
  /* Collective over comm (every member calls it): the worst status over
   * the members (the largest value), and its message. A member whose own
   * status is the worst keeps its message; every other member gets, in
   * message (len bytes, NUL-terminated), "rank R: <R's message>" of the
   * lowest rank R that failed with it. Returns that worst status, or
   * DEVMESH_ERR_BACKEND with MPI's error text when the check's own MPI
   * call fails. One MPI_Allreduce when every member succeeds. The core's
   * cross-check of a status, not MPIX_Comm_agree: the name is kept for the
   * ABI. */
  int (*agree)(MPI_Comm comm, int status, char *message, size_t len);
  /* The MPI library the core runs on: the first line of
   * MPI_Get_library_version, e.g. "MPICH Version: 4.0.2". */
  const char *mpi_library;
  /* The MPI the core was compiled against, as DEVMESH_BACKEND_MPI below
   * says it ("MPICH", "Open MPI", "MPI ABI"). */
  const char *mpi_family;
  /* 1 when comm is revoked (ULFM's MPIX_Comm_is_revoked, where the core's
   * MPI has it), else 0. Appended in 0.4.0. */
  int (*comm_revoked)(MPI_Comm comm);
  /* Says that comm, a group's communicator the core handed the plugin
   * (group->group), has a request that will never complete (a wait cut by
   * a revoke; MPI cannot cancel a collective): the mesh then releases it
   * without MPI_Comm_free. Appended in 0.4.0. */
  void (*leave_unfreed)(MPI_Comm comm);
} devmesh_backend_host_t;

/* Capability bits (devmesh_backend_v3_t.capabilities). The core asks these
 * instead of guessing from a backend's name. */
/* Reads group->host_local_rank: the core discovers hosts at creation (two
 * collectives over the parent) only for meshes with such a backend. */
#define DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK (1ull << 0)
/* The stream argument is a device stream (cudaStream_t for NCCL). */
#define DEVMESH_BACKEND_CAP_STREAMS (1ull << 1)
/* Has isend, irecv, test and wait (the core checks the table has them). */
#define DEVMESH_BACKEND_CAP_NONBLOCKING (1ull << 2)
/* revoke(): the members' pending and later operations on the communicator
 * fail too, not only the caller's (ULFM's MPIX_Comm_revoke does; NCCL's
 * ncclCommRevoke is local). States a revoke: a table without one is
 * refused. */
#define DEVMESH_BACKEND_CAP_REVOKE_SPREADS (1ull << 3)
/* revoke() may be called from another thread while a call on the same
 * communicator is blocked (where the MPI thread level allows threads).
 * States a revoke, as above. Without REVOKE_SPREADS, it is what lets the
 * backend serve a fault-tolerant mesh (the mesh's watcher revokes it). */
#define DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD (1ull << 4)
/* Honours group->deadline: a wait longer than it fails with
 * DEVMESH_ERR_TIMEOUT. */
#define DEVMESH_BACKEND_CAP_DEADLINE (1ull << 5)
/* comm_prepare and comm_connect never communicate (the communicator is a
 * wrapper of the group's MPI communicator): the core needs no cross-check
 * around them, gives them no root communicator, and makes such a
 * communicator when it is first used, also in devmesh_create_comms. */
#define DEVMESH_BACKEND_CAP_LOCAL_CREATE (1ull << 6)

/* The MPI whose mpi.h this file was compiled with, for
 * devmesh_backend_v3_t.mpi_family ("MPICH", "Open MPI", "MPI ABI"; the
 * detection is devmesh/mpi_check.h's): MPI handles (MPI_Comm) differ
 * between MPICH, Open MPI and the MPI 5 standard ABI, so a plugin compiled
 * against one cannot use the group communicators of a core built with
 * another. */
#define DEVMESH_BACKEND_MPI DEVMESH_MPI_INCLUDED_NAME

/* One backend, version 3: version 2 first (v2.v1.abi_version =
 * DEVMESH_BACKEND_ABI_VERSION_3), then the members below.
 *
 * Mandatory in version 3, beyond version 1's: mpi_family, comm_prepare,
 * comm_connect, comm_abandon. v1's init and comm_create are not called
 * (leave them NULL); init_host replaces init.
 *
 * Making a communicator (replaces comm_create):
 *   comm_prepare  local, no communication, may fail (no device, no memory,
 *                 an option that does not fit this group). The core then
 *                 cross-checks the members' results over group->group:
 *   comm_abandon  frees a prepared communicator when another member's
 *                 comm_prepare failed (nothing was communicated);
 *   comm_connect  collective over the group: consumes the prepared
 *                 communicator (also when it fails) and writes *comm. The
 *                 core cross-checks the members' results again: a member whose
 *                 comm_connect succeeded while another's failed destroys its
 *                 communicator. Every member gets the same status, with a
 *                 message naming the failing rank, and later calls for the
 *                 same communicator report that failure again (no retry).
 *   A comm_connect that fails on one member must not leave the others
 *   waiting forever: bound its waits (group->deadline, or the backend's own
 *   timeout).
 *
 * Failure of an operation: when a collective or point-to-point call fails
 * on one member, the core calls revoke(comm, status) on that communicator
 * (once), with the status the call failed with, and answers every later
 * call on it with DEVMESH_ERR_REVOKED without calling the plugin. revoke()
 * must make the plugin's pending and later operations on the communicator
 * fail promptly on this rank, and on the other members too where the
 * library can spread it (DEVMESH_BACKEND_CAP_REVOKE_SPREADS): their
 * operations then fail with that status (DEVMESH_ERR_REVOKED where the
 * revoke carries none, or was asked for by the program) and a message
 * naming the rank it came from, so that every member of the group reports
 * the same failure instead of waiting forever. It is local, idempotent,
 * returns promptly, and may be called while another thread is blocked in a
 * call on the same communicator if DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD is
 * set (the one exception to the serialisation rule above). A failure the
 * plugin sees from a dead member is DEVMESH_ERR_PROC_FAILED, a wait past
 * the deadline DEVMESH_ERR_TIMEOUT.
 *
 * Statuses and messages: a status outside the enum becomes
 * DEVMESH_ERR_BACKEND ("plugin 'x' returned invalid status 42 from
 * allreduce"); success with a NULL communicator is refused; messages are cut
 * at 4 KiB; a last_mpi_error() code that MPI does not know is dropped.
 *
 * Arguments: the core checks every argument before a call reaches the
 * plugin (data types and reductions of the enums, buffers not NULL when
 * count > 0, byte sizes that fit in size_t, roots and peers inside the
 * group, reductions that reduce_supported accepts), for C, C++ and Fortran
 * callers alike: a plugin need not check them again. */
typedef struct devmesh_backend_v3_s {
  devmesh_backend_v2_t v2;
  /* DEVMESH_BACKEND_MPI as the plugin was compiled; NULL when the plugin
   * uses no MPI at all (not even group->group). A plugin compiled against
   * another MPI than the core's is refused at load (UNSUPPORTED, naming
   * both). Mandatory. */
  const char *mpi_family;
  /* DEVMESH_BACKEND_CAP_* bits. */
  unsigned long long capabilities;
  /* Once per process before any other call but last_error; host stays
   * valid until the process ends. May be NULL. */
  int (*init_host)(const devmesh_backend_host_t *host);
  /* 1 when allreduce and reduce_scatter can reduce datatype with op on the
   * instance's communicators, else 0. NULL: every reduction. The core asks
   * it for every pair when a communicator is made, cross-checks the answers
   * over the group, and fails a reduction outside them with UNSUPPORTED
   * before calling the plugin. */
  int (*reduce_supported)(void *instance, int datatype, int op);
  int (*comm_prepare)(void *instance, const devmesh_backend_group_t *group, void **prepared);
  int (*comm_connect)(void *prepared, void **comm);
  void (*comm_abandon)(void *prepared);
  /* status: why (the failed call's status; DEVMESH_ERR_REVOKED for a
   * revoke without a failure behind it). May be NULL (then a failed call
   * cannot wake the other members: they wait for the backend's own
   * timeout, if any). */
  int (*revoke)(void *comm, int status);
} devmesh_backend_v3_t;

/* ---- version 4 ------------------------------------------------------------
 *
 * Version 4 widens the data path: variable-size collectives (counts and
 * displacements per member, as MPI's v-collectives), rooted collectives,
 * non-blocking forms of every collective, and a batch of sends and
 * receives started together; it also asks a backend for the topology it
 * sees (an NVLink domain), to place a mesh. v3.v2.v1.abi_version =
 * DEVMESH_BACKEND_ABI_VERSION_4; every member added here may be NULL and
 * is stated by a capability bit (below), present if and only if stated.
 *
 * One non-blocking mechanism: every member added here but topology ends
 * with `void **request`. NULL asks for the blocking operation (host backends
 * return when it is done, stream backends when it is enqueued). Otherwise
 * the member starts the operation and writes *request only on success (it
 * may write NULL when the operation is complete already); the request is
 * ended by v2's test() or wait(), with the rules of an isend's request
 * (exactly one wait, or the test that reports it done or fails; both free
 * it; requests end before comm_destroy), and a revoke() makes a pending one
 * fail promptly. The core calls the i-members always with a non-NULL
 * request; it calls v1's members for the blocking forms of v1's
 * collectives.
 *
 * Arrays live only during the call: counts, displacements and ops[] are
 * the caller's, and a plugin that needs them after it returns (MPI needs
 * its count arrays until a non-blocking operation completes) copies them.
 * Buffers of a non-blocking operation are the caller's until it ends.
 *
 * Counts and displacements are in elements, size_t, one per group member
 * (rank order). Segments may come in any order with gaps (left untouched);
 * the core checks that each array's segments fit in size_t bytes and end
 * within PTRDIFF_MAX elements and that a buffer is not NULL where a
 * segment is not empty. So no count or displacement a plugin gets passes
 * PTRDIFF_MAX (an empty segment's displacement past it arrives as 0: it
 * is not read). Roots are group ranks.
 * Root-only arguments (gather's recv and recvcounts, scatter's send and
 * sendcounts) are NULL on other members when the caller gave NULL.
 *
 * In place, as MPI_IN_PLACE allows (the core passes the pointers as the
 * caller gave them; the plugin compares):
 *   alltoallv:       send == recv; sendcounts and sdispls are NULL then
 *                    (each block r is recvcounts[r] at rdispls[r]).
 *   allgatherv:      send == recv + rdispls[rank] elements.
 *   reduce_scatterv: send == recv (the packed input, sum of recvcounts
 *                    elements, read from recv; the result at its start).
 *   gather:          at the root, send == recv + root*count.
 *   gatherv:         at the root, send == recv + rdispls[root].
 *   scatter:         at the root, recv == send + root*count.
 *   scatterv:        at the root, recv == send + sdispls[root].
 *   reduce:          at the root, send == recv.
 * reduce_supported (version 3) also governs reduce, reduce_scatterv and
 * the i-forms of the reductions. */
#define DEVMESH_BACKEND_ABI_VERSION_4 4
#define DEVMESH_BACKEND_SYMBOL_V4 "devmesh_backend_v4"

/* The capability bit of each member version 4 adds, stated if and only if
 * the member is there (a table that states one without its member, or has
 * a member without its bit, is refused at load). */
#define DEVMESH_BACKEND_CAP_ALLTOALLV (1ull << 7)
#define DEVMESH_BACKEND_CAP_ALLGATHERV (1ull << 8)
#define DEVMESH_BACKEND_CAP_REDUCE_SCATTERV (1ull << 9)
#define DEVMESH_BACKEND_CAP_GATHER (1ull << 10)
#define DEVMESH_BACKEND_CAP_GATHERV (1ull << 11)
#define DEVMESH_BACKEND_CAP_SCATTER (1ull << 12)
#define DEVMESH_BACKEND_CAP_SCATTERV (1ull << 13)
#define DEVMESH_BACKEND_CAP_REDUCE (1ull << 14)
/* iallreduce, iallgather, ireduce_scatter, ibroadcast, ialltoall and
 * ibarrier, all six; and every other member of version 4 the table has
 * accepts a non-NULL request. Needs DEVMESH_BACKEND_CAP_NONBLOCKING (test
 * and wait end the requests). */
#define DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES (1ull << 15)
/* batch. Needs DEVMESH_BACKEND_CAP_NONBLOCKING. */
#define DEVMESH_BACKEND_CAP_BATCH (1ull << 16)
/* topology. Needs nothing else. */
#define DEVMESH_BACKEND_CAP_TOPOLOGY (1ull << 17)

/* One operation of batch(). */
typedef struct devmesh_backend_p2p_s {
  int send;     /* 1: send buffer to peer; 0: receive buffer from peer */
  int peer;     /* a group rank (the core drops MPI_PROC_NULL entries) */
  void *buffer; /* read (send) or written (receive) */
  size_t count; /* elements */
  int datatype;
} devmesh_backend_p2p_t;

/* One backend, version 4: version 3 first, then the members below. */
typedef struct devmesh_backend_v4_s {
  devmesh_backend_v3_t v3;
  /* Block r of send (sendcounts[r] elements at sdispls[r]) goes to rank r,
   * which receives it as block `rank` of recv (recvcounts[rank] at
   * rdispls[rank]). */
  int (*alltoallv)(void *comm, const void *send, const size_t sendcounts[], const size_t sdispls[], void *recv,
                   const size_t recvcounts[], const size_t rdispls[], int datatype, void *stream, void **request);
  /* send (sendcount elements) of rank r lands at recv + rdispls[r]
   * (recvcounts[r] == sendcount of r). */
  int (*allgatherv)(void *comm, const void *send, size_t sendcount, void *recv, const size_t recvcounts[],
                    const size_t rdispls[], int datatype, void *stream, void **request);
  /* MPI_Reduce_scatter: send is packed (block r, recvcounts[r] elements,
   * follows block r-1); rank r gets op over ranks of its block in recv. */
  int (*reduce_scatterv)(void *comm, const void *send, void *recv, const size_t recvcounts[], int datatype, int op,
                         void *stream, void **request);
  /* At root, recv[r*count + i] = send[i] of rank r. */
  int (*gather)(void *comm, const void *send, void *recv, size_t count, int datatype, int root, void *stream,
                void **request);
  /* At root, send of rank r (sendcount elements) lands at recv + rdispls[r]. */
  int (*gatherv)(void *comm, const void *send, size_t sendcount, void *recv, const size_t recvcounts[],
                 const size_t rdispls[], int datatype, int root, void *stream, void **request);
  /* recv[i] = send[rank*count + i] of root. */
  int (*scatter)(void *comm, const void *send, void *recv, size_t count, int datatype, int root, void *stream,
                 void **request);
  /* recv (recvcount elements) = block rank of root's send (sendcounts[rank]
   * at sdispls[rank]). */
  int (*scatterv)(void *comm, const void *send, const size_t sendcounts[], const size_t sdispls[], void *recv,
                  size_t recvcount, int datatype, int root, void *stream, void **request);
  /* At root, recv[i] = op over ranks of send[i]; recv unused elsewhere. */
  int (*reduce)(void *comm, const void *send, void *recv, size_t count, int datatype, int op, int root, void *stream,
                void **request);
  /* Version 1's collectives, started: v1's arguments, then request. */
  int (*iallreduce)(void *comm, const void *send, void *recv, size_t count, int datatype, int op, void *stream,
                    void **request);
  int (*iallgather)(void *comm, const void *send, void *recv, size_t count, int datatype, void *stream, void **request);
  int (*ireduce_scatter)(void *comm, const void *send, void *recv, size_t count, int datatype, int op, void *stream,
                         void **request);
  int (*ibroadcast)(void *comm, void *buffer, size_t count, int datatype, int root, void *stream, void **request);
  int (*ialltoall)(void *comm, const void *send, void *recv, size_t count, int datatype, void *stream, void **request);
  int (*ibarrier)(void *comm, void *stream, void **request);
  /* n sends and receives with members of the group, started together (one
   * group on NCCL), ended by one request (NULL: returns when all are done,
   * or enqueued). Not collective: between the ranks named. Operations with
   * one peer match in order, as isend/irecv's. n >= 1. */
  int (*batch)(void *comm, const devmesh_backend_p2p_t ops[], size_t n, void *stream, void **request);
  /* The levels of the machine outside the host that the backend sees
   * around the device the calling process uses on this instance: the
   * device comm_prepare picks for a group whose host_local_rank is
   * host_local_rank (>= 0, the process's rank among the mesh's processes
   * on its host), by the instance's options as comm_prepare does. Written
   * to buf (size bytes) as "level=name" pairs separated by ';', innermost
   * first, NUL-terminated, e.g. an NVLink domain:
   * "domain=<cluster UUID as 32 hex digits>.<clique id>"; *written = its
   * length without the NUL. No level is "host" (the core's own) or comes
   * twice, and no level or name is empty or holds ';', '=' or white space
   * (the core refuses such text: DEVMESH_ERR_BACKEND). A backend that sees
   * none (no fabric; the library that would tell is absent or does not
   * support it) writes "" and *written = 0: that is not a failure. buf
   * too small for the text and its NUL: DEVMESH_ERR_INVALID_ARGUMENT with
   * *written = the length needed (without the NUL, so >= size) and buf
   * untouched; the core then asks again, once, with a larger one. Other
   * failures: a status as every member's (a device option that does not
   * fit: DEVMESH_ERR_INVALID_ARGUMENT; the library underneath failing:
   * DEVMESH_ERR_BACKEND) with *written = 0. Not collective, no
   * communication; the core calls it after open(), before the instance
   * has any communicator (to place a mesh), and may call it again. */
  int (*topology)(void *instance, int host_local_rank, char *buf, size_t size, size_t *written);
} devmesh_backend_v4_t;

#if defined(__GNUC__) || defined(__clang__)
#define DEVMESH_BACKEND_VISIBLE __attribute__((visibility("default")))
#else
#define DEVMESH_BACKEND_VISIBLE
#endif

/* Declares a plugin's exported table:
 *   DEVMESH_BACKEND_EXPORT_V1 = { DEVMESH_BACKEND_ABI_VERSION, "mine", ... }; */
#ifdef __cplusplus
#define DEVMESH_BACKEND_EXPORT_V1 extern "C" DEVMESH_BACKEND_VISIBLE const devmesh_backend_v1_t devmesh_backend_v1
#else
#define DEVMESH_BACKEND_EXPORT_V1 DEVMESH_BACKEND_VISIBLE const devmesh_backend_v1_t devmesh_backend_v1
#endif
/*   DEVMESH_BACKEND_EXPORT_V2 = { { DEVMESH_BACKEND_ABI_VERSION_2, "mine", ... }, isend, ... }; */
#ifdef __cplusplus
#define DEVMESH_BACKEND_EXPORT_V2 extern "C" DEVMESH_BACKEND_VISIBLE const devmesh_backend_v2_t devmesh_backend_v2
#else
#define DEVMESH_BACKEND_EXPORT_V2 DEVMESH_BACKEND_VISIBLE const devmesh_backend_v2_t devmesh_backend_v2
#endif

/*   DEVMESH_BACKEND_EXPORT_V3 = { { { DEVMESH_BACKEND_ABI_VERSION_3, "mine", ... }, isend, ... },
 *                                 DEVMESH_BACKEND_MPI, caps, ... }; */
#ifdef __cplusplus
#define DEVMESH_BACKEND_EXPORT_V3 extern "C" DEVMESH_BACKEND_VISIBLE const devmesh_backend_v3_t devmesh_backend_v3
#else
#define DEVMESH_BACKEND_EXPORT_V3 DEVMESH_BACKEND_VISIBLE const devmesh_backend_v3_t devmesh_backend_v3
#endif

/*   DEVMESH_BACKEND_EXPORT_V4 = { { { { DEVMESH_BACKEND_ABI_VERSION_4, "mine", ... }, isend, ... },
 *                                   DEVMESH_BACKEND_MPI, caps, ... }, alltoallv, ... }; */
#ifdef __cplusplus
#define DEVMESH_BACKEND_EXPORT_V4 extern "C" DEVMESH_BACKEND_VISIBLE const devmesh_backend_v4_t devmesh_backend_v4
#else
#define DEVMESH_BACKEND_EXPORT_V4 DEVMESH_BACKEND_VISIBLE const devmesh_backend_v4_t devmesh_backend_v4
#endif

/* Registers a backend linked into the application, found by backend->name
 * before any file search. The table must outlive every mesh that uses it.
 * A version 2 table is registered through its first member (&table.v1):
 * its abi_version (2) tells the core that the v2 members follow.
 * Not collective; call it on every rank before creating meshes that name it.
 * Errors: NULL, a bad name, the name "mpi", a mandatory function missing or
 * an unknown abi_version -> INVALID_ARGUMENT; a different table already
 * registered or loaded under that name -> DUPLICATE_NAME. */
DEVMESH_C_API int devmesh_register_backend(const devmesh_backend_v1_t *backend);

/* The host services the core gives version 3 plugins (the table their
 * init_host receives), for programs that drive a plugin's table directly,
 * such as a plugin's own test harness.
 * Not collective. Valid until the process ends; its functions need MPI
 * initialised. Never NULL. */
DEVMESH_C_API const devmesh_backend_host_t *devmesh_backend_host(void);

#ifdef __cplusplus
}
#endif

#endif /* DEVMESH_BACKEND_PLUGIN_H */
