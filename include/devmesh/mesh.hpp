// devmesh::Mesh: a view of a root mesh over MPI, with its communicators.
//
// A Mesh is a cheap handle: a View (see view.hpp) plus a shared pointer to
// the root's runtime state, which owns every communicator the root made.
// Copies, slices, flattens and queries create no communicator; comm(dim)
// creates the one communicator of dim's layout the first time any view of
// the root asks for it, and every later view with that layout reuses it.
// Handles may be destroyed in any order; the last one frees the root's
// communicators (never the parent).
//
// Creation makes no communicator, with every MPI: it only checks, in one
// MPI_Allreduce over the parent, that every rank passed the same
// arguments. A dim's communicator is made over just the caller's group,
// errors returned: with MPICH 4 and later by MPI_Comm_create_from_group
// (no parent involved); with an MPI without that function (Open MPI 4.1),
// and with Open MPI 5 (whose MPI_Comm_create_from_group is far slower:
// docs/BENCHMARKS.md, "Open MPI 5.0.11 (PyPI wheel)"), by
// MPI_Comm_create_group over the parent. Either way the
// parent may be freed while the mesh lives: devmesh tracks it through an
// attribute, and where communicators come from the parent, its
// MPI_Comm_free (collective over the parent) first makes the "root
// communicator" of all root members from it, from which later
// communicators are made (one more communicator then, counted in
// comm_count()). Otherwise the root communicator is made when an
// operation over all members first needs it: record_hosts(), NCCL's split
// initialisation, and create_comms() and the root view's cart_comm() once
// the parent is gone. While the program keeps the parent and its ranks are
// exactly the root's members, create_comms() runs its check and its split
// path over the parent, and the root view's cart_comm() is MPI_Cart_create
// over it when root index x is parent rank x: no communicator of all
// members is made just for them. Those calls, and where communicators come
// from the parent each comm(dim), are then calls on the parent too: make
// the collective ones in the same order relative to the program's own
// collectives on the parent on every rank, and not while another thread
// runs one on it (as for any collective); MPI_Comm_create_group over the
// parent involves only the caller's group.
//
// Collectiveness, the thing to know to avoid a deadlock (a collective call
// waits without a deadline for every rank of its group, as MPI does; only
// the NCCL backend's set-up is bounded by its timeout option, see
// docs/ERRORS.md "Waits: which are bounded"; tests/docs/check_collectiveness.py
// checks this summary against the per-function notes of devmesh.h):
//   create            collective over the parent communicator
//   adopt             collective over the parent communicator
//   create_from_group collective over the group's members
//   slice/flatten/unflatten/root, every query      not collective
//   comm(dim), communicator(dim), all_groups_with_comm(dim)
//                     collective over the caller's group along dim the
//                     first time that layout is asked for on the root, not
//                     collective afterwards. Members of a group must ask
//                     for layouts in the same order (as for any MPI
//                     collective); or call create_comms() first.
//   create_comms()    collective over all members of the root: creates the
//                     communicators of every dim of this view at once (over
//                     the parent while it lives, see above)
//   cart_comm()       collective over the caller's group of the flattened
//                     view the first time (all members of the root for the
//                     root view)
//   neighbors()       not collective
//   agree(), shrink() collective over the surviving members of the root (a
//                     mesh made with fault_tolerance)
//   revoke(), is_revoked(), failed_ranks(), root_index(), shrunk_index()
//                     not collective
//   repair(), release_spares()
//                     collective over the surviving members of the root,
//                     its spares in standby and (repair) the processes it
//                     spawns
//   standby(), join() collective with the members' next repair or release
//                     (a spare), with the repair that spawned it (join)
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20
#if DEVMESH_CXX20              // below C++20, export.hpp's #error is the only message

#include <mpi.h>

#include <atomic>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/backend.hpp"
#include "devmesh/mpi_check.h"  // one #error for an mpi.h of another MPI than devmesh's
#include "devmesh/status.hpp"
#include "devmesh/view.hpp"

namespace devmesh {

// How create_comms() creates communicators.
//
// automatic is create_group at every size: the fastest path at every
// measured size, and the one that makes the fewest communicators
// (docs/BENCHMARKS.md, "Creation paths and the default"). On paper it
// stays ahead at any size: split (and
// cart_sub, which MPI implements with it) allgathers a table of all P ranks
// and settles a context id over all P for every dim; create_group works
// over the caller's group only (MPICH: O(log g) rounds, O(g) memory).
enum class CommPath : int {
  automatic = 0,     // create_group (see above)
  create_group = 1,  // a communicator over just the caller's group
                     // (MPI_Comm_create_from_group, or MPI_Comm_create_group
                     // over the parent: see the top of this file)
  split = 2,         // MPI_Comm_split over all root members (create_comms only)
  cart_sub = 3,      // MPI_Cart_sub where the dim is a set of root dims in
                     // root order (of size > 1), else create_group
                     // (create_comms only)
};

// The error handler of the communicators a mesh hands out (comm(),
// cart_comm()).
enum class CommErrors : int {
  // The parent's error handler, as MPI_Comm_split and friends give: with
  // MPI_COMM_WORLD's default (MPI_ERRORS_ARE_FATAL) a program's MPI_Send to
  // a bad rank aborts on a mesh communicator as it does on the parent. It
  // is taken at creation (the parent may be freed later) and also governs
  // the calls devmesh itself makes on those communicators after handing
  // them out (backend collectives, NCCL set-up, MPI_Cart_sub of
  // cart_comm()); creating them runs under MPI_ERRORS_RETURN.
  inherit = 0,
  // MPI_ERRORS_RETURN: every MPI call on them returns its error code.
  return_codes = 1,
};

// Options of a mesh: which backend each dim runs on, and the backends' own
// options. Every rank must pass the same (but for options a backend
// declares per rank, such as NCCL's device).
struct MeshOptions {
  // Backend of every dim without an override: "mpi" (built in) or the name
  // X of a plugin libdevmesh-backend-X.so (see devmesh/backend_plugin.h).
  std::string backend = "mpi";
  // Options of that backend, each "key=value" (docs/BACKENDS.md lists them).
  std::vector<std::string> backend_options;
  // Per-dim backend overrides of the mesh's own dims, by name (like
  // PyTorch's backend_override), e.g. {{"tp", "nccl"}}. A name that is no
  // dim of the mesh fails creation with unknown_dim naming it, on every
  // rank. A dim made later by flatten or unflatten gets its backend there
  // (their DimBackend argument), not from these names.
  std::vector<std::pair<std::string, std::string>> dim_backends;
  // Options of a dim's backend, {dim, "key=value"}, e.g. {{"tp", "timeout=30"}}
  // (dims of the mesh, as dim_backends). A dim with options of its own does
  // not take backend_options.
  std::vector<std::pair<std::string, std::string>> dim_options;
  // The error handler of the communicators the mesh hands out.
  CommErrors comm_errors = CommErrors::inherit;
  // Order the parent's ranks by host (see create_host_aware in hosts.hpp):
  // root index x is the parent rank with local rank x % L on host x / L, so
  // that trailing dims stay within hosts whatever the launcher's placement.
  // Host discovery runs after the creation's cross-check, so ranks that
  // differ in it get inconsistent like any other argument. Not with a
  // rank list (invalid_argument).
  bool host_aware = false;
  // Let the mesh outlive a member's death (docs/ERRORS.md "Failures"):
  // creation makes the root communicator, every dim's communicator is made
  // from it, and the communicators it hands out report errors as return
  // codes (MPI_ERRORS_RETURN, whatever comm_errors says: a fatal handler
  // would end the job at the first failure). A failure (PROC_FAILED,
  // REVOKED) seen by any operation of the mesh revokes the whole mesh on
  // every member; then Mesh::agree, failed_ranks and shrink carry on with
  // the survivors. Needs an MPI with ULFM running with it on (Open MPI 5
  // under `mpirun --with-ft ulfm`), and backends whose revoke reaches the
  // other members (DEVMESH_BACKEND_CAP_REVOKE_SPREADS: MPI, Gloo) or may run
  // beside an operation (REVOKE_ANY_THREAD: NCCL 2.28 and later; then with
  // MPI_THREAD_MULTIPLE, for a watcher thread that probes the root
  // communicator every 50 ms and revokes this rank's communicators of such
  // a backend once a peer revoked the mesh or a member failed): otherwise
  // creation fails with unsupported, saying why, on every rank. Off:
  // revoke, agree, failed_ranks and shrink answer unsupported. Where the
  // program left SIGPIPE at its default, such a mesh sets it to be
  // ignored: a write to a dead peer's socket must fail, not end the
  // survivor (docs/RELIABILITY.md). Creation makes the communicators on
  // every member or on none: where making one fails on one member alone
  // (ULFM reports a death to some members only, and MPI may fail a call
  // on one rank), creation fails on every member, that member with its own
  // error, the others with revoked (the root communicator over the
  // program's parent: with that member's error). Only a member whose
  // MPI_Comm_create of the root communicator over the program's parent
  // fails before it communicates leaves the others waiting in theirs:
  // devmesh does not revoke the program's communicator. A rank that gets
  // proc_failed from create revokes it (MPIX_Comm_revoke) before it
  // shrinks, as ULFM programs do.
  bool fault_tolerance = false;
  // Seconds any one wait of the mesh may take (0: no deadline), with
  // fault_tolerance: a rank whose operation (a collective, point to point,
  // making a communicator) still waits past it revokes the mesh and gets
  // Error(timeout), the other members Error(revoked), within the deadline
  // plus a fifth of a second (the mesh's watcher thread checks; it revokes from
  // that thread, so MPI must run with MPI_THREAD_MULTIPLE). Backends that
  // bound their own waits (DEVMESH_BACKEND_CAP_DEADLINE: Gloo) are given it
  // too. Waits it does not bound: docs/ERRORS.md "Waits". Without
  // fault_tolerance, or negative: invalid_argument.
  double deadline = 0;
  // Hot spares (docs/SEMANTICS.md "Repair"), with fault_tolerance: the
  // parent's last `spares` ranks do not join the mesh (prod(shape) = parent
  // size - spares, root index = parent rank), or with a placement the
  // ranks it leaves over (exactly `spares` of them); their create() gives
  // the null mesh, and Mesh::standby(parent) keeps them until a repair
  // takes them or the members release them. Not with a rank list or
  // host_aware, not without fault_tolerance, not the whole parent:
  // invalid_argument.
  int spares = 0;
  // Placement (docs/TOPOLOGY.md "Placement"): dims to keep within a level,
  // {dim, level}, e.g. {{"tp", "host"}, {"ep", "domain"}}. Levels: "host"
  // (as discover_hosts finds hosts), then those outside it that every rank
  // finds alike: DEVMESH_TOPOLOGY when set, else Slurm's
  // SLURM_TOPOLOGY_ADDR levels and a backend's NVLink domain (hosts.hpp).
  // The parent's ranks are placed before any communicator exists: every
  // group of such a dim lies within one instance of its level, and in every
  // group of every dim the members in one instance of any level are
  // consecutive in local-rank order. prod(shape) may be below the parent's
  // size: the ranks the placement leaves over get the null mesh, or are the
  // spares, whose number must then be theirs. Costs one allgather of the
  // level strings beyond host discovery. Not with host_aware, a rank list
  // or adopted communicators (invalid_argument); a dim or level that does
  // not exist, or a request no tiling of the levels meets, fails with the
  // same error on every rank (unknown_dim, invalid_argument,
  // shape_mismatch naming the dim, the level and the sizes).
  std::vector<std::pair<std::string, std::string>> placement;
};

// What Mesh::repair starts for the places no spare fills: MPI_Comm_spawn of
// `command` with `argv` (NULL-terminated there) and `info` (hosts, a GPU per
// newcomer: the MPI's spawn info keys), one process per empty place; each
// calls Mesh::join() after MPI_Init.
struct Spawn {
  std::string command;
  std::vector<std::string> argv;
  MPI_Info info = MPI_INFO_NULL;
};

// The backend of a dim that flatten or unflatten makes, with that
// backend's own "key=value" options: the dim made runs on it, and so does
// every later view of that dim (a flattened name sliced from the root, the
// same flatten or unflatten again). An empty name: the mesh's default
// backend (MeshOptions::backend and backend_options), what a dim made
// without one gets.
struct DimBackend {
  std::string name;
  std::vector<std::string> options;
};

namespace detail {
class MeshState;
struct MeshAccess;  // lib/runtime/mesh_state.hpp
struct Resolved;    // lib/runtime/mesh_state.hpp
}  // namespace detail

// The caller's neighbours along a dim (Mesh::neighbors): local ranks in the
// dim's communicator and parent ranks, MPI_PROC_NULL at an open edge.
struct Neighbors {
  int prev = MPI_PROC_NULL, next = MPI_PROC_NULL;
  int parent_prev = MPI_PROC_NULL, parent_next = MPI_PROC_NULL;
};

// all_groups_with_comm: every group of a dim plus the caller's own.
struct Groups {
  std::vector<std::vector<int>> ranks;  // as all_groups()
  std::size_t own = 0;                  // ranks[own] is the caller's group
  MPI_Comm comm = MPI_COMM_NULL;        // comm(dim), ranks[own] in rank order
};

class DEVMESH_API Mesh {
 public:
  // The null mesh: what non-members of a rank list get (like MPI_COMM_NULL).
  Mesh() = default;

  // Collective over parent. shape entries of 0 are chosen as
  // MPI_Dims_create does; the product must equal the parent's size. Every
  // rank must pass the same arguments: ranks whose arguments differ all get
  // Error(inconsistent) instead of a hang. Other errors as View::create.
  static Mesh create(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names,
                     const MeshOptions& options = {});
  // As above over an explicit list of parent ranks (root index x is parent
  // rank ranks[x]); parent ranks not listed get the null mesh.
  static Mesh create(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names, std::vector<int> ranks,
                     const MeshOptions& options = {});

  // Adopts communicators the program already has (like PyTorch's
  // DeviceMesh.from_group). Collective over parent, any communicator that
  // contains every member (typically the one the program split comms from).
  // comms[i] is the caller's communicator of dim names[i]; a parent rank
  // that is not a member passes MPI_COMM_NULL for every dim and gets the
  // null mesh. The caller's coordinate is its rank in each comm, the shape
  // the comms' sizes, root index = row-major of the coordinate. devmesh
  // checks that the comms form that mesh (docs/SEMANTICS.md "Adopted
  // communicators"); otherwise every rank gets the same error
  // (invalid_argument; inconsistent for different names/counts). comm(dim)
  // of a root dim then returns the very communicator the program gave:
  // devmesh never frees, renames or re-handles it, and does not count it in
  // comm_count(); the program keeps it alive while the mesh lives. Slices,
  // flattens and other backends work as for Mesh::create. options.host_aware
  // does not apply (invalid_argument).
  static Mesh adopt(MPI_Comm parent, std::vector<MPI_Comm> comms, std::vector<std::string> names,
                    const MeshOptions& options = {});
  // A 1-D mesh over comm (its own parent). Collective over comm.
  static Mesh adopt(MPI_Comm comm, std::string_view name, const MeshOptions& options = {});
  // MPI Sessions: a mesh over the members of group (e.g. from
  // MPI_Group_from_session_pset), with no parent communicator. Collective
  // over the group's members, who all pass the same tag (as
  // MPI_Comm_create_from_group needs) and arguments; only members call. The
  // root communicator is MPI_Comm_create_from_group(group, tag), errors
  // returned (owned by the mesh, counted in comm_count(), also the parent
  // whose error handler comm_errors=inherit takes); creation then proceeds as
  // create() over it. MPI_Init is not needed; destroy the mesh before
  // MPI_Session_finalize. With an MPI without MPI_Comm_create_from_group:
  // Error(unsupported), nothing created.
  static Mesh create_from_group(MPI_Group group, std::string_view tag, std::vector<int> shape,
                                std::vector<std::string> names, const MeshOptions& options = {});

  bool is_member() const noexcept { return state_ != nullptr; }
  explicit operator bool() const noexcept { return is_member(); }

  // --- views (not collective; a null mesh throws Error(not_member)) -------
  Mesh slice(const std::vector<std::string>& dims) const;
  Mesh operator[](std::string_view dim) const { return slice({std::string(dim)}); }
  Mesh operator[](std::initializer_list<std::string_view> dims) const;
  Mesh flatten(std::optional<std::string> name = std::nullopt) const;
  Mesh unflatten(std::string_view dim, const std::vector<int>& sizes, const std::vector<std::string>& names) const;
  // flatten and unflatten whose new dims run on the backends given (one per
  // new name for unflatten). The backend is found, loaded and opened with
  // its options here, on the calling rank (errors as at creation:
  // invalid_argument for an unknown backend or option, unsupported for one
  // that cannot run here). A dim keeps the backend it was first made with:
  // making the same dim (same name, same layout) with another backend, or
  // giving a root dim another backend than the mesh's options gave it ->
  // duplicate_name. Every member of the new dim's groups must give it the
  // same backend before the dim's communicator is made.
  Mesh flatten(std::optional<std::string> name, const DimBackend& backend) const;
  Mesh unflatten(std::string_view dim, const std::vector<int>& sizes, const std::vector<std::string>& names,
                 const std::vector<DimBackend>& backends) const;
  Mesh root() const;
  // The dims of every mesh in turn (View::concatenate), e.g.
  // Mesh::concatenate({mesh["dp", "cp"].flatten("dp_cp"), mesh["tp"]}).
  // Not collective. Null meshes throw Error(not_member); meshes of
  // different roots (even with equal shapes) Error(invalid_argument).
  static Mesh concatenate(const std::vector<Mesh>& meshes);

  // --- queries (not collective) --------------------------------------------
  const View& view() const;
  int ndim() const;
  std::vector<std::string> names() const;
  std::vector<int> shape() const;
  int size() const;  // ranks in this view
  int size(std::string_view dim) const;
  std::vector<int> coordinate() const;  // the caller's local index per dim
  int local_rank(std::string_view dim) const;
  std::vector<int> group(std::string_view dim) const;  // parent ranks, local-rank order
  std::vector<std::vector<int>> all_groups(std::string_view dim) const;
  // all_groups(dim), which of them is the caller's, and its communicator
  // comm(dim). Collective as comm(dim) is (over the caller's group along
  // dim the first time that layout is asked for). O(W) like all_groups.
  Groups all_groups_with_comm(std::string_view dim = {}) const;
  int parent_rank() const;  // the caller's rank in the parent
  // Whether the handle's root is the same as other's.
  bool same_root(const Mesh& other) const noexcept;

  // --- communicators ---------------------------------------------------------
  // The caller's MPI communicator along dim (the only dim when omitted on a
  // 1-D view), owned by the library; its rank k is local rank k. See the
  // collectiveness note above. It is named "devmesh:<dim>" (MPI_Comm_get_name;
  // the name of the dim that first asked for the layout) and has the error
  // handler options.comm_errors says. Do not MPI_Comm_free it: a later
  // comm() of that layout then throws Error(invalid_argument) saying so.
  // (A layout of an adopted dim, see adopt(): the program's communicator
  // itself, unnamed, untracked, its error handler left alone.)
  MPI_Comm comm(std::string_view dim = {}) const;
  // The dim's communicator in its backend (options.backend, the dim's
  // override, or the backend flatten/unflatten gave the dim), for the
  // collectives of backend.hpp.
  Communicator& communicator(std::string_view dim = {}) const;
  // The name of dim's backend ("mpi", "nccl", ...). Not collective; the
  // string lives as long as the process.
  std::string_view backend(std::string_view dim = {}) const;
  // Creates the communicators of every dim of this view. Collective over all
  // members of the root. Checks first, in one allreduce over all members,
  // that every member passed the same path and view; that check and the
  // split path run over the parent while the program keeps it and its
  // ranks are exactly the root's members (see the top of this file),
  // otherwise over the root communicator, made for them. The automatic
  // path makes what comm(dim) on every dim makes; the check is what it
  // costs beyond that (one allreduce: 1.1-1.4x of the per-dim calls for a
  // (2,2,2) mesh at 8 ranks, docs/BENCHMARKS.md), the price of an error
  // instead of a hang when members' arguments differ.
  void create_comms(CommPath path = CommPath::automatic) const;
  // This view as an MPI Cartesian communicator (MPI_Cart_create, no
  // reordering) over the caller's group of the flattened view (the members
  // sharing the caller's coordinates on the root dims outside the view):
  // dims are the view's shape in the view's order (a transposed slice gives
  // a transposed grid), its rank is the row-major number of the caller's
  // coordinate(), and dim i is periodic when periodic[i] is true (empty:
  // none). On the root view, rank x is root index x. One communicator per
  // (layout, periods) on the root, made the first time: collective over
  // the caller's group of the flattened view then (the flattened layout's
  // communicator is made too unless it is the root in root order), not
  // collective afterwards. Named "devmesh:cart" (the root view,
  // non-periodic) or "devmesh:cart:<dims>"; error handler and ownership as
  // for comm(). A periodic list of the wrong length -> invalid_argument.
  MPI_Comm cart_comm(std::vector<bool> periodic = {}) const;
  // The caller's neighbours at `distance` along dim, as MPI_Cart_shift(dim,
  // distance) gives them on cart_comm() of the 1-D slice of dim: prev is
  // local rank k - distance and next k + distance in dim's group (k the
  // caller's local rank), wrapped modulo size(dim) when periodic, else
  // MPI_PROC_NULL outside [0, size(dim)); any distance, negative too, as
  // MPI accepts. Also as parent ranks (MPI_PROC_NULL alike). Not
  // collective: O(ndim) arithmetic, no communicator is made.
  Neighbors neighbors(std::string_view dim, bool periodic = false, int distance = 1) const;
  // --- failures (a mesh made with MeshOptions::fault_tolerance; others
  // throw Error(unsupported)) ---------------------------------------------
  // Revokes the mesh: every operation of it and of every view of its root,
  // on every member, waiting in one or calling one, fails promptly with
  // Error(revoked). Not collective, idempotent, and callable while another
  // thread waits in an operation of the same mesh (the one exception to
  // one thread per mesh; MPI_THREAD_MULTIPLE then). A revoked mesh's
  // communicators are not freed when it is destroyed but left to
  // MPI_Finalize: a revoke still on its way must not reach a communicator
  // made since in its place (docs/RELIABILITY.md "Faults").
  void revoke() const;
  // Whether the mesh is revoked (by this rank, a peer, or a failure). Not
  // collective.
  bool is_revoked() const;
  // The root indices this rank knows to have failed, ascending. Not
  // collective. After shrink(), every survivor's list holds the agreed set
  // (and deaths this rank has noticed since).
  std::vector<int> failed_ranks() const;
  // The AND of every surviving member's flag (MPIX_Comm_agree over the
  // root's survivors), the same on every survivor, for programs whose ranks
  // saw different errors. Collective over the surviving members of the root.
  bool agree(bool flag) const;
  // A new root mesh over the survivors (docs/SEMANTICS.md "Shrink"): they
  // agree on one failed set, then every slice along dim that holds a failed
  // rank is dropped: HSDP (replicate=4, shard=2) with one failed rank,
  // shrink("replicate") is (replicate=3, shard=2), same names, groups in
  // root order. No dim: a 1-D mesh of every survivor, named as flatten()
  // names the root's dims. Live ranks in a dropped slice get the null mesh
  // (spares). Collective over the surviving members of the root; run it
  // after an Error(proc_failed) or Error(revoked). Its parent is the
  // survivors' communicator (owned by the new mesh); its options are this
  // mesh's. No slice left, or no survivor: Error(invalid_argument), the same
  // on every survivor. Where the new mesh's communicators cannot be made on
  // one survivor (a death among the survivors, an MPI error there), the
  // shrink fails on every survivor (that survivor's error there, revoked or
  // proc_failed elsewhere): shrink again. This mesh stays valid (revoked)
  // until destroyed.
  Mesh shrink(std::optional<std::string_view> dim = std::nullopt) const;
  // The whole mesh again after a failure (docs/SEMANTICS.md "Repair"): a
  // new root mesh with this root's shape, names and options, in which every
  // survivor keeps its root index and the failed indices are filled by
  // spares in standby (the lowest parent rank takes the lowest failed
  // index), then by processes spawned from `spawn` (Mesh::join), one per
  // index still empty. Its failed_ranks() are the indices this repair
  // filled. Flattened names are not carried over: register them again, as
  // after creation. Collective over the surviving members of the root, the
  // spares in standby and the spawned processes; run it after an
  // Error(proc_failed) or Error(revoked) (it revokes this mesh first). Not
  // enough spares and no spawn: Error(invalid_argument), a spawn that
  // fails: Error(backend), the same on every survivor, the spares still in
  // standby (shrink() is left). A death during the repair: proc_failed or
  // revoked on every survivor; repair again. Spares no index needs stay in
  // standby for the new mesh. This mesh stays valid (revoked) until
  // destroyed. Without fault_tolerance: unsupported.
  Mesh repair(std::optional<Spawn> spawn = std::nullopt) const;
  // Ends the standby of this root's spares (they get the null mesh).
  // Collective over the surviving members of the root and its spares in
  // standby; nothing to do (no communication) where the root has none.
  void release_spares() const;
  // A spare of the last fault-tolerant mesh with spares made over `parent`
  // on this process waits until a repair takes it (the repaired mesh, in
  // which it holds a failed index) or the members release it (the null
  // mesh). Not bounded: it waits for the members. A process that is no
  // such spare: invalid_argument; an MPI without ULFM: unsupported.
  static Mesh standby(MPI_Comm parent);
  // Called by a process a repair spawned, after MPI_Init: the repaired
  // mesh, in which it holds a failed index. A process no repair started:
  // invalid_argument; an MPI without ULFM: unsupported.
  static Mesh join();
  // The caller's root index (row-major number of its root coordinate).
  int root_index() const;
  // On a mesh made by shrink(): the new root index of old root index
  // `old_index`, or -1 when it was dropped (failed, or a spare);
  // invalid_argument for an index outside the old root or a mesh not made
  // by shrink().
  int shrunk_index(int old_index) const;

  // Communicators the root has created so far, for checking reuse: one per
  // distinct layout asked for, plus the root communicator once made (see
  // above). create() makes none.
  int comm_count() const;

 private:
  friend struct detail::MeshAccess;
  Mesh(View view, std::shared_ptr<detail::MeshState> state);
  const detail::MeshState& state() const;
  std::size_t dim_of(std::string_view dim) const;

  std::optional<View> view_;
  std::shared_ptr<detail::MeshState> state_;
  // communicator(dim)'s last answer per dim of the view (null: none yet),
  // shared by copies; given again while the state says it still holds.
  std::shared_ptr<std::atomic<const detail::Resolved*>[]> resolved_;
};

}  // namespace devmesh

#endif  // DEVMESH_CXX20
