// The creation driver (creation.hpp): local checks -> agreement -> host
// discovery -> build, the same sequence of collective calls on every rank
// whatever its arguments, so that a rank that fails does not leave the
// others waiting.
#include "creation.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>

#include "adoption.hpp"
#include "agreement.hpp"
#include "devmesh/hosts.hpp"
#include "finalize.hpp"
#include "hosts.hpp"
#include "mesh_state.hpp"
#include "mpi_check.hpp"
#include "mpi_features.hpp"

namespace devmesh::detail {
namespace {

std::vector<index_t> widen(const std::vector<int>& v) { return {v.begin(), v.end()}; }

// Roots made by this process so far: the agreement takes the largest count
// over the parent, which keeps the roots' creation tags apart.
std::atomic<std::uint64_t> roots_made{0};

// A creation under way on this rank.
struct Creation {
  explicit Creation(CreationRequest r) : request(std::move(r)) {}
  CreationRequest request;
  MPI_Comm parent = MPI_COMM_NULL;
  // The communicator made from request.group (kind group), freed unless it
  // becomes the root communicator.
  MPI_Comm group_comm = MPI_COMM_NULL;
  int world = 0, me = 0;
  std::optional<View> view;
  std::vector<int> order;  // the rank list of the root, when it has one
  std::optional<HostInfo> hosts;
  Adopting adopting;
  std::vector<std::pair<BackendSpec, std::unique_ptr<BackendInstance>>> backends;
  std::uint64_t seq = 0, digest = 0;
  // backends_named(request.options), made once.
  std::optional<std::vector<BackendSpec>> named;
  // request.agreed: what failed on this rank alone, reported at the end.
  std::optional<Error> deferred;

  ~Creation() {
    if (group_comm != MPI_COMM_NULL && mpi_alive()) MPI_Comm_free(&group_comm);
    if (request.owns_parent && mpi_alive()) mpi::free_comm(request.parent);
  }
  bool has_rank_list() const { return !order.empty(); }
};

const char* call_of(CreationKind kind) { return kind == CreationKind::comms ? "mesh adoption" : "mesh creation"; }

// The parent every collective call of the creation runs over. Kind group:
// a communicator made from the group first (collective over its members).
// Problems here cannot be shared with the other ranks (there is nothing to
// share them over): they throw on this rank alone.
void open_parent(Creation& c) {
  CreationRequest& r = c.request;
  if (r.kind == CreationKind::group) {
    if (!mpi::has_comm_from_group) mpi::comm_from_session_group(r.group, r.tag);  // throws unsupported
    if (r.group == MPI_GROUP_NULL) throw Error(Status::invalid_argument, "the group is MPI_GROUP_NULL");
    int me = MPI_UNDEFINED;
    DEVMESH_MPI(MPI_Group_rank(r.group, &me));
    if (me == MPI_UNDEFINED)
      throw Error(Status::invalid_argument, "the caller is not a member of the group (only members call)");
    c.group_comm = mpi::comm_from_session_group(r.group, r.tag);
    c.parent = c.group_comm;
  } else {
    c.parent = r.parent;
  }
  // Under the Sessions model (no MPI_Init) the parent is a communicator
  // made from a session's group: see check_parent_usable.
  check_parent_usable(c.parent);
  DEVMESH_MPI(MPI_Comm_size(c.parent, &c.world));
  DEVMESH_MPI(MPI_Comm_rank(c.parent, &c.me));
}

// Every backend the options name (backends_named), computed once. Options
// that name the default backends (most meshes') share one list, made once:
// creation allocates as little as it can (docs/BENCHMARKS.md, the gap to
// the floor).
const std::vector<BackendSpec>& named_backends(Creation& c) {
  if (const std::vector<BackendSpec>* shared = default_backends_named(c.request.options)) return *shared;
  if (!c.named) c.named = backends_named(c.request.options);
  return *c.named;
}

// Opens (and so checks) every backend the options name.
void load_backends(Creation& c) {
  const MeshOptions& options = c.request.options;
  if (options.comm_errors != CommErrors::inherit && options.comm_errors != CommErrors::return_codes)
    throw Error(Status::invalid_argument,
                "comm_errors " + std::to_string(static_cast<int>(options.comm_errors)) + " is not a CommErrors");
  for (const BackendSpec& b : named_backends(c)) {
    // A backend that opens without options unchecked (the built-in one)
    // has nothing to check: its instance is made when a dim first needs it.
    if (b.options.empty() && load_backend(b.name).opens_without_check) continue;
    auto instance = std::make_unique<BackendInstance>(b);
    c.backends.emplace_back(b, std::move(instance));
  }
}

// Per-dim backends and options name dims of the mesh: a name that is none
// (a typo, or a dim that only a later flatten or unflatten would make)
// fails instead of being silently ignored.
void check_dim_names(const CreationRequest& r) {
  std::vector<std::string> unknown;
  const auto note = [&](const std::string& dim, const char* field) {
    if (std::find(r.names.begin(), r.names.end(), dim) != r.names.end()) return;
    const std::string item = std::string(field) + " '" + dim + "'";
    if (std::find(unknown.begin(), unknown.end(), item) == unknown.end()) unknown.push_back(item);
  };
  for (const auto& [dim, backend] : r.options.dim_backends) note(dim, "dim_backends");
  for (const auto& [dim, option] : r.options.dim_options) note(dim, "dim_options");
  if (unknown.empty()) return;
  std::string named, dims;
  for (std::size_t i = 0; i < unknown.size(); ++i) named += (i ? ", " : "") + unknown[i];
  for (std::size_t i = 0; i < r.names.size(); ++i) dims += (i ? ", " : "") + r.names[i];
  throw Error(Status::unknown_dim, named + (unknown.size() == 1 ? " names no dim" : " name no dim") +
                                       " of the mesh (its dims: " + dims +
                                       "); a dim made by flatten or unflatten gets its backend there");
}

// What fault_tolerance needs here (see mesh.hpp): ULFM running, a parent
// that returns errors, backends that can revoke.
void check_fault_tolerance(const Creation& c) {
  const CreationRequest& r = c.request;
  const double deadline = r.options.deadline;
  if (!(deadline >= 0) || deadline > 1e9)
    throw Error(Status::invalid_argument,
                "deadline " + std::to_string(deadline) + " is not a number of seconds from 0 (none) to 1e9");
  if (deadline > 0 && !r.options.fault_tolerance)
    throw Error(Status::invalid_argument, "a deadline needs fault_tolerance (a wait past it revokes the mesh)");
  if (!r.options.fault_tolerance) return;
  if (r.kind == CreationKind::comms)
    throw Error(Status::invalid_argument,
                "fault_tolerance does not apply to adopted communicators (devmesh would "
                "revoke the program's own communicators)");
  if (const std::string why = mpi::ulfm_unavailable(); !why.empty())
    throw Error(Status::unsupported, "fault_tolerance: " + why);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  DEVMESH_MPI(MPI_Comm_get_errhandler(c.parent, &handler));
  const bool fatal = handler == MPI_ERRORS_ARE_FATAL;
  MPI_Errhandler_free(&handler);
  if (fatal)
    throw Error(Status::invalid_argument,
                "fault_tolerance: the parent communicator's error handler is MPI_ERRORS_ARE_FATAL, which ends the "
                "job at the first failure; give it MPI_ERRORS_RETURN (MPI_Comm_set_errhandler) first");
  int thread_level = MPI_THREAD_SINGLE;
  DEVMESH_MPI(MPI_Query_thread(&thread_level));
  if (deadline > 0 && thread_level < MPI_THREAD_MULTIPLE)
    throw Error(Status::invalid_argument,
                "a deadline needs MPI_THREAD_MULTIPLE (MPI_Init_thread): the mesh's "
                "watchdog revokes it from a thread of its own");
  // A backend's revoke reaches the other members itself (REVOKE_SPREADS),
  // or the mesh's watcher makes it reach them: on every member it sees the
  // root communicator revoked and revokes that member's backend
  // communicators from its own thread (REVOKE_ANY_THREAD; Fault::add).
  for (const auto& [spec, instance] : c.backends) {
    if (!instance) continue;
    const std::uint64_t caps = instance->table().capabilities;
    if (caps & DEVMESH_BACKEND_CAP_REVOKE_SPREADS) continue;
    if (!(caps & DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD))
      throw Error(Status::unsupported,
                  "fault_tolerance: backend '" + spec.name +
                      "' cannot revoke its communicators for the mesh (it states neither "
                      "DEVMESH_BACKEND_CAP_REVOKE_SPREADS nor DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD)");
    if (thread_level < MPI_THREAD_MULTIPLE)
      throw Error(Status::invalid_argument, "fault_tolerance with backend '" + spec.name +
                                                "', whose revoke stays on the calling rank, needs MPI_THREAD_MULTIPLE "
                                                "(MPI_Init_thread): the mesh's watcher spreads it from a thread of "
                                                "its own");
  }
}

// Everything this rank can check before the agreement.
void check_locally(Creation& c) {
  const CreationRequest& r = c.request;
  if (r.error) throw *r.error;
  const bool host_aware = r.options.host_aware;
  switch (r.kind) {
    case CreationKind::ranks:
      if (r.ranks.empty()) throw Error(Status::invalid_argument, "the rank list is empty");
      if (host_aware)
        throw Error(Status::invalid_argument,
                    "host_aware orders all of the parent's ranks by host; it does not take a rank list");
      break;
    case CreationKind::comms:
      if (host_aware)
        throw Error(Status::invalid_argument,
                    "host_aware does not apply to adopted communicators: their ranks give the order");
      break;
    default:
      break;
  }
  check_dim_names(r);
  load_backends(c);
  check_fault_tolerance(c);
  switch (r.kind) {
    case CreationKind::comms:
      c.adopting = read_comms(c.parent, r.comms, r.names);
      break;
    case CreationKind::hosts:
      // The names now; the shape once the hosts are known.
      View::create(RootSpec{{1, c.world}, r.names, c.world, {}});
      break;
    default:
      c.view = View::create(RootSpec{widen(r.shape), r.names, c.world, widen(r.ranks)});
      if (r.kind == CreationKind::ranks) c.order = r.ranks;
  }
}

// The arguments every rank must pass alike, for the agreement: the same
// fields for every kind.
std::array<Field, 9> fields_of(Creation& c) {
  const CreationRequest& r = c.request;
  Hash kind, checked, sh, nm, rk, nc, ha, be, op;
  kind.add(static_cast<std::int64_t>(r.kind));
  checked.add(static_cast<std::int64_t>(r.error ? r.error->status() : Status::success));
  for (int s : r.shape) sh.add(s);
  for (const std::string& n : r.names) nm.add(n);
  rk.add(static_cast<std::int64_t>(r.ranks.size()));
  for (int x : r.ranks) rk.add(x);
  nc.add(static_cast<std::int64_t>(r.comms.size()));
  ha.add(r.options.host_aware ? 1 : 0);
  ha.add(r.options.fault_tolerance ? 1 : 0);
  ha.add(static_cast<std::int64_t>(r.options.deadline * 1e6));
  be.add(r.options.backend);
  for (const auto& [dim, backend] : r.options.dim_backends) {
    be.add(dim);
    be.add(backend);
  }
  // Every backend named, with its options as each backend parsed them,
  // without those it takes per rank (NCCL's device); where a backend did
  // not load, its options as given (see agreed_options).
  for (const BackendSpec& spec : named_backends(c)) {
    const PluginTable* table = nullptr;
    for (const auto& [loaded, instance] : c.backends)
      if (instance && loaded.key() == spec.key()) table = &instance->table();
    op.add(agreed_options(spec, table));
  }
  return {{{"ways of creating the mesh", kind.h},
           {"arguments (as checked by the interface called)", checked.h},
           {"shapes", sh.h},
           {"dim names", nm.h},
           {"rank lists", rk.h},
           {"numbers of communicators", nc.h},
           {"host_aware, fault_tolerance and deadline settings", ha.h},
           {"backends", be.h},
           {"backend options", op.h}}};
}

// Every rank makes this one collective call whatever its arguments, so
// that ranks that disagree get an error instead of a hang. It is the only
// communication of creation for MPI-only meshes: no communicator is made
// until one is asked for (where MPI makes communicators from groups).
void agree_on_arguments(Creation& c) {
  Status local = Status::success;
  std::string message;
  try {
    check_locally(c);
  } catch (const Error& e) {
    local = e.status();
    message = e.what();
  }
  const std::array<Field, 9> fields = fields_of(c);
  c.seq = agree(c.parent, call_of(c.request.kind), fields, local, message, roots_made.load());
  roots_made = c.seq + 1;
  Hash h;
  for (const Field& f : fields) h.add(static_cast<std::int64_t>(f.digest));
  c.digest = h.h;
}

// The agreement's stand-in for a request whose arguments are the same on
// every member by construction (request.agreed): what fails alike on
// every member (the request's own error, the names, the layout) throws
// now; what may fail on this member alone waits for the end of build.
void check_agreed(Creation& c) {
  const CreationRequest& r = c.request;
  if (r.kind != CreationKind::ranks || !r.options.fault_tolerance || r.options.host_aware)
    throw Error(Status::invalid_argument, "internal: an agreed creation is a fault-tolerant rank list");
  if (r.error) throw *r.error;
  check_dim_names(r);
  c.view = View::create(RootSpec{widen(r.shape), r.names, c.world, widen(r.ranks)});
  c.order = r.ranks;
  try {
    load_backends(c);
    check_fault_tolerance(c);
  } catch (const Error& e) {
    c.deferred = e;
  }
  c.seq = roots_made++;
  Hash h;
  for (const Field& f : fields_of(c)) h.add(static_cast<std::int64_t>(f.digest));
  c.digest = h.h;
}

// Host discovery comes after the agreement, so that every rank makes it
// only once all agreed to. Its errors (uneven hosts, DEVMESH_HOST_ID on
// some ranks only) come from tables every rank holds alike, so they are
// the same on every rank.
void order_by_host(Creation& c) {
  const CreationRequest& r = c.request;
  const bool host_mesh = r.kind == CreationKind::hosts;
  const std::vector<int> host_of = host_table(c.parent);
  c.hosts = host_info_of(host_of, c.me);
  c.order = host_major(host_of, *c.hosts, host_mesh ? "a host mesh" : "a host-aware mesh");
  const std::vector<index_t> shape =
      host_mesh ? std::vector<index_t>{c.hosts->hosts, c.hosts->local_size} : c.view->root_shape();
  c.view = View::create(RootSpec{shape, r.names, c.world, widen(c.order)});
}

// The adopted communicators' layout: one allgather of what each rank holds,
// from which every rank derives the same layout or the same error.
void adopt_layout(Creation& c) {
  const int n = static_cast<int>(c.request.comms.size());
  const std::vector<int> mine = adoption_record(c.adopting, c.request.comms.size());
  std::vector<int> table(mine.size() * static_cast<std::size_t>(c.world));
  DEVMESH_MPI(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT, table.data(),
                            static_cast<int>(mine.size()), MPI_INT, c.parent));
  Status local = Status::success;
  std::string message;
  try {
    auto [shape, ranks] = adopted_layout(table, c.world, n);
    c.order = std::move(ranks);
    c.view = View::create(RootSpec{widen(shape), c.request.names, c.world, widen(c.order)});
    check_adopted_groups(*c.view, c.adopting, c.me, c.request.names);
  } catch (const Error& e) {
    local = e.status();
    message = e.what();
  }
  agree(c.parent, "mesh adoption", {}, local, message);
  Hash h;
  for (int x : table) h.add(x);
  c.digest = h.h;
}

// An MPI failure of a fault-tolerant creation, as the program must see it:
// while MPI knows a process of the parent to have failed, that death
// (PROC_FAILED), whatever class MPI gave the error. Open MPI 5.0.11
// answered MPI_ERR_OTHER to an MPI_Comm_create over survivors one of whom
// had died unnoticed before a shrink (tests/multihost/host_dies.cpp): the
// program must learn to shrink again.
Error as_death(const Creation& c, const Error& e) {
  if (!c.request.options.fault_tolerance || e.status() != Status::backend) return e;
  MPI_Group failed = MPI_GROUP_NULL;
  int n = 0;
  if (mpi::comm_get_failed(c.parent, &failed) != MPI_SUCCESS) return e;
  MPI_Group_size(failed, &n);
  MPI_Group_free(&failed);
  if (n == 0) return e;
  return Error(Status::proc_failed, std::string(e.what()) + " (a process of the parent has failed)", e.mpi_code(),
               e.mpi_class());
}

// The new root's communicator over the parent (MPI_Comm_create). In a
// fault-tolerant creation it is made on every member or on none, and no
// member goes on (and may revoke it) before every member has made it: Open
// MPI 5.0.11 crashed a rank still making a communicator when another's
// revoke of it reached that rank (SIGSEGV in ompi_comm_revoke_local). So:
// * over a parent of devmesh's own (a shrink's survivors), the survivors
//   agree first, so that every survivor has finished making the parent
//   (MPIX_Comm_shrink) before any can revoke it;
// * a survivor whose MPI_Comm_create fails revokes that parent, so that
//   those waiting in theirs fail too: Open MPI 5.0.11 failed it on one
//   survivor of a death it had not noticed, and the others waited for that
//   one for ever (tests/multihost/host_dies.cpp). devmesh does not revoke
//   the program's communicators (mesh.hpp): over the program's parent, a
//   member whose call fails before any communication leaves the others
//   waiting in theirs, as a failed MPI collective does;
// * the members agree on whether every one made it. One that did, where
//   another did not, frees it and fails instead of going on to make the
//   dims' communicators with a member that left: over a shrink's survivors
//   with REVOKED, over the program's parent with the failed member's status
//   and message, shared over that parent.
// tests/fault/create_fails.cpp fails it on one member, before and after
// that member's MPI_Comm_create. A death among the members fails an
// agreement on every member alike (PROC_FAILED).
MPI_Comm create_root_comm(const Creation& c, MPI_Group group) {
  const bool ft = c.request.options.fault_tolerance;
  const bool survivors = ft && c.request.owns_parent;
  int made = 1;
  if (survivors) check_mpi(mpi::comm_agree(c.parent, &made), "MPIX_Comm_agree");
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create(c.parent, group, &comm);
  std::optional<Error> failed;
  try {
    check_mpi(rc, "MPI_Comm_create");
  } catch (const Error& e) {
    failed = as_death(c, e);
  }
  if (!ft) {
    if (failed) throw *failed;
    return comm;
  }
  if (failed && survivors) mpi::comm_revoke(c.parent);
  made = failed ? 0 : 1;
  const int agreed = mpi::comm_agree(c.parent, &made);
  if (!failed && agreed == MPI_SUCCESS && made) return comm;
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  if (failed) {
    // Over the program's parent, the others learn this member's failure.
    if (!survivors && agreed == MPI_SUCCESS)
      agree(c.parent, call_of(c.request.kind), {}, failed->status(), failed->what());
    throw *failed;
  }
  check_mpi(agreed, "MPIX_Comm_agree");
  if (survivors)
    throw Error(Status::revoked,
                "mesh creation: making the new root's communicator failed on another survivor, "
                "which revoked the survivors' communicator");
  agree(c.parent, call_of(c.request.kind), {}, Status::success, {});
  throw Error(Status::internal, "mesh creation: the members disagree on whether the root communicator was made");
}

// The dims' communicators of a fault-tolerant mesh, made at creation over
// the root communicator (MeshState::make_comm), on every member or on none.
// A member where one fails revokes the mesh, so that the others fail in the
// creation they wait in instead of waiting for it (the root communicator
// is made on every member by then: create_root_comm); then every member,
// whatever happened to it, joins one agreement over the root
// communicator (MPIX_Comm_agree, which a revoke does not end): no member
// leaves creation (and may revoke) before every member has made every
// communicator, a death during creation fails it on every survivor
// alike, and a member that failed here is known to all. The same
// agreement carries whether every member of an agreed creation passed its
// own checks (check_agreed): when one did not, every member fails with the
// status and message of the lowest that failed. A root communicator that
// is a shrink's survivors' as MPIX_Comm_shrink made it (shrunk_root) may
// still be in the making on another survivor: they agree over it first,
// as create_root_comm does before making one over it.
void make_ft_dims(const Creation& c, MeshState& state, bool shrunk_root) {
  const MPI_Comm root = state.fault()->root();
  if (shrunk_root) {
    int ready = 1;
    check_mpi(mpi::comm_agree(root, &ready), "MPIX_Comm_agree");
  }
  std::optional<Error> failed;
  try {
    for (const Dim& d : c.view->dims()) state.comm(d.layout, d.name);
  } catch (const Error& e) {
    // A peer's revoke can end the creation this member waits in with
    // another class than REVOKED (Open MPI 5.0.11 gave MPI_ERR_OTHER).
    if (e.status() == Status::backend && mpi::comm_is_revoked(root))
      failed = Error(Status::revoked, std::string(e.what()) + " (another member revoked the mesh)", e.mpi_code(),
                     e.mpi_class());
    else
      failed = as_death(c, e);
    state.fault()->revoke(Status::revoked, std::string("mesh creation failed on this member: ") + failed->what());
  }
  constexpr int dims_made = 1, checks_passed = 2;
  int flags = (failed ? 0 : dims_made) | (c.deferred ? 0 : checks_passed);
  const int agreed = mpi::comm_agree(root, &flags);
  if (failed) throw *failed;
  check_mpi(agreed, "MPIX_Comm_agree");
  if (!(flags & dims_made))
    throw Error(Status::revoked,
                "mesh creation: making a dim's communicator failed on another member, which "
                "revoked the mesh");
  if (!(flags & checks_passed)) {
    agree(root, call_of(c.request.kind), {}, c.deferred ? c.deferred->status() : Status::success,
          c.deferred ? c.deferred->what() : std::string());
    throw Error(Status::backend, "mesh creation: the members' agreement failed without a failed member");
  }
}

// Builds the root's state once every rank agreed. Collective over the
// parent: host discovery for plugin backends unless known already, and,
// for a host-aware mesh from a group where dims' communicators do not come
// from their groups, the root communicator.
Mesh build(Creation& c) {
  const CreationRequest& r = c.request;
  // Backends that pick a device by the rank's position on its host say so
  // (DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK); only then are hosts discovered
  // (DEVMESH_HOST_ID honoured, see hosts.hpp). Others are given -1.
  const bool by_host = std::any_of(c.backends.begin(), c.backends.end(), [](const auto& b) {
    return (b.second->table().capabilities & DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK) != 0;
  });
  const int host_rank = !by_host ? -1 : c.hosts ? c.hosts->local_rank : discover_hosts(c.parent).local_rank;
  // The members in root-index order, as a group (no communicator yet).
  MPI_Group parent_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Comm_group(c.parent, &parent_group));
  if (!c.has_rank_list()) {
    group = parent_group;
  } else {
    const int rc = MPI_Group_incl(parent_group, static_cast<int>(c.order.size()), c.order.data(), &group);
    MPI_Group_free(&parent_group);
    check_mpi(rc, "MPI_Group_incl");
  }
  // A mesh from a group over a parent devmesh made from that group
  // (host_aware), where dims' communicators do not come straight from their
  // groups: they come from the root communicator, made here, as that parent
  // is freed at the end of creation (non-members get MPI_COMM_NULL); and a
  // fault-tolerant mesh, whose dims are made from it (MeshState::make_comm).
  // Every other kind makes none: dims come from their groups, or from the
  // program's parent while it lives (see MeshState::watch_parent).
  const bool group_is_root = c.group_comm != MPI_COMM_NULL && !r.options.host_aware;
  // A parent of devmesh's own that holds exactly the root in root order.
  const bool parent_is_root = r.owns_parent && c.view->root_size() == c.world &&
                              (!c.has_rank_list() || std::is_sorted(c.order.begin(), c.order.end()));
  MPI_Comm root_comm = MPI_COMM_NULL;
  if (((!mpi::dims_from_group && r.kind == CreationKind::group) || r.options.fault_tolerance) && !group_is_root &&
      !parent_is_root) {
    try {
      root_comm = create_root_comm(c, group);
      return_errors(root_comm);
    } catch (...) {
      MPI_Group_free(&group);
      if (root_comm != MPI_COMM_NULL) MPI_Comm_free(&root_comm);
      throw;
    }
  }
  const std::optional<index_t> index = c.view->root_index(c.me);
  if (!index) {
    MPI_Group_free(&group);
    return Mesh();
  }
  std::shared_ptr<MeshState> state;
  try {
    watch_finalize();
    // The options move to the state; their flags (copied by the move) stay
    // readable in the request.
    state = std::make_shared<MeshState>(*c.view, group, static_cast<int>(*index), c.me, host_rank, c.seq, c.digest,
                                        std::move(c.request.options));
  } catch (...) {
    if (!state) MPI_Group_free(&group);
    if (root_comm != MPI_COMM_NULL) MPI_Comm_free(&root_comm);
    throw;
  }
  // The state frees what it takes from here on, also if what follows throws.
  if (root_comm != MPI_COMM_NULL) state->take_root_comm(root_comm);
  // The program's parent, watched while it lives (not a parent devmesh
  // made from a group: that is the root's own or is freed below; nor for a
  // fault-tolerant mesh, which has its root communicator from now on).
  if (r.kind != CreationKind::group && !r.options.fault_tolerance)
    state->watch_parent(c.parent, c.view->root_size() == c.world);
  if (group_is_root) state->take_root_comm(std::exchange(c.group_comm, MPI_COMM_NULL));
  if (r.owns_parent) {
    MPI_Comm parent = std::exchange(c.request.parent, MPI_COMM_NULL);
    if (parent_is_root)
      state->take_root_comm(parent);
    else
      state->take_parent(parent);
  }
  state->inherit_errhandler(c.parent);
  for (auto& [spec, instance] : c.backends) state->add_backend(spec, std::move(instance));
  if (r.kind == CreationKind::comms) {
    const View& root = *c.view;
    for (std::size_t d = 0; d < root.ndim(); ++d)
      state->insert_program_comm(root.dims()[d].layout, r.comms[d], root.dims()[d].name);
  }
  // A fault-tolerant mesh makes its dims' communicators now, on every
  // member or on none (make_ft_dims).
  if (r.options.fault_tolerance) make_ft_dims(c, *state, parent_is_root);
  if (c.hosts) {
    // Host-major over uniform hosts.
    auto hosts = std::make_shared<RootHosts>();
    hosts->caller = *c.hosts;
    hosts->local_size = c.hosts->local_size;
    state->set_hosts(std::move(hosts));
  }
  return MeshAccess::make(std::move(*c.view), std::move(state));
}

}  // namespace

Mesh create(CreationRequest request) {
  Creation c(std::move(request));
  open_parent(c);
  if (c.request.agreed)
    check_agreed(c);
  else
    agree_on_arguments(c);
  const CreationRequest& r = c.request;
  if (r.kind == CreationKind::hosts || r.options.host_aware) order_by_host(c);
  if (r.kind == CreationKind::comms) adopt_layout(c);
  return build(c);
}

}  // namespace devmesh::detail
