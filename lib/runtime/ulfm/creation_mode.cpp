// The ULFM creation modes (fault_tolerance, see mesh.hpp): the root
// communicator and every dim's communicator made at creation, on every
// member or on none; a failure during creation fails it on every member
// alike. Over the program's parent, and over a shrink's survivors.
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "../creation_steps.hpp"
#include "../mesh_state.hpp"
#include "../mpi_check.hpp"
#include "../mpi_features.hpp"

namespace devmesh::detail {
namespace {

std::vector<index_t> widen(const std::vector<int>& v) { return {v.begin(), v.end()}; }

// What fault_tolerance needs (see mesh.hpp): ULFM running, a parent that
// returns errors, backends that can revoke.
void check_fault_tolerance(const Creation& c) {
  const CreationRequest& r = c.request;
  const double deadline = r.options.deadline;
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
                "watcher revokes it from a thread of its own");
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

// An MPI failure of a fault-tolerant creation, as the program must see it
// (failure_meaning): a death among the parent's processes tells the program
// to shrink (again), whatever class MPI gave the error.
Error as_death(const Creation& c, const Error& e) {
  return failure_meaning(e, c.parent, nullptr, std::chrono::milliseconds(0));
}

// The new root's communicator over the parent (MPI_Comm_create), made on
// every member or on none, and no member goes on (and may revoke it)
// before every member has made it, since a revoke that reaches a rank
// still making a communicator may crash it (docs/RELIABILITY.md, "Faults
// on two real hosts"). So:
// * over a parent of devmesh's own (a shrink's survivors), the survivors
//   agree first, so that every survivor has finished making the parent
//   (MPIX_Comm_shrink) before any can revoke it;
// * a survivor whose MPI_Comm_create fails revokes that parent, so that
//   those waiting in theirs fail too, since ULFM may fail it on one
//   survivor alone (same section). devmesh does not revoke
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
  const bool survivors = c.request.fresh_parent;
  int made = 1;
  if (survivors) check_mpi(mpi::comm_agree(c.parent, &made), "MPIX_Comm_agree");
  // Spares: the pool, a copy of the parent, made on every parent rank.
  const bool pool = c.request.options.spares > 0 && !survivors;
  const int pool_rc = pool ? MPI_Comm_dup(c.parent, &c.pool) : MPI_SUCCESS;
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create(c.parent, group, &comm);
  std::optional<Error> failed;
  try {
    check_mpi(pool_rc, "MPI_Comm_dup");
    check_mpi(rc, "MPI_Comm_create");
  } catch (const Error& e) {
    failed = as_death(c, e);
  }
  if (failed && survivors) mpi::comm_revoke(c.parent);
  made = failed ? 0 : 1;
  const int agreed = mpi::comm_agree(c.parent, &made);
  if (!failed && agreed == MPI_SUCCESS && made) {
    if (c.pool != MPI_COMM_NULL) return_errors(c.pool);
    return comm;
  }
  if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  if (c.pool != MPI_COMM_NULL) MPI_Comm_free(&c.pool);
  if (failed) {
    // Over the program's parent, the others learn this member's failure.
    if (!survivors && agreed == MPI_SUCCESS)
      cross_check(c.parent, call_of(c.request.kind), {}, failed->status(), failed->what());
    throw *failed;
  }
  check_mpi(agreed, "MPIX_Comm_agree");
  if (survivors)
    throw Error(Status::revoked,
                "mesh creation: making the new root's communicator failed on another survivor, "
                "which revoked the survivors' communicator");
  cross_check(c.parent, call_of(c.request.kind), {}, Status::success, {});
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
// agreement carries whether every member of a creation without a
// cross-check passed its own checks (check_same_by_construction): when one
// did not, every member fails with the status and message of the lowest
// that failed. A root communicator that
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
    // another class than REVOKED (docs/ERRORS.md).
    failed = failure_meaning(e, c.parent, state.fault(), std::chrono::milliseconds(0));
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
    cross_check(root, call_of(c.request.kind), {}, c.deferred ? c.deferred->status() : Status::success,
                c.deferred ? c.deferred->what() : std::string());
    throw Error(Status::backend, "mesh creation: the members' agreement failed without a failed member");
  }
}

// The cross-check's stand-in for a request whose arguments are the same on
// every member by construction (a shrink's): what fails alike on every
// member (the request's own error, the names, the layout) throws now; what
// may fail on this member alone waits for the end of build (make_ft_dims).
void check_same_by_construction(Creation& c) {
  const CreationRequest& r = c.request;
  if (r.kind != CreationKind::ranks || r.options.host_aware)
    throw Error(Status::invalid_argument, "internal: a survivors' creation is a rank list");
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
  c.seq = next_root_seq();
  Hash h;
  for (const Field& f : fields_of(c)) h.add(static_cast<std::int64_t>(f.digest));
  c.digest = h.h;
}

class UlfmMode : public CreationMode {
 public:
  void check(const Creation& c) const override { check_fault_tolerance(c); }
  MPI_Comm root_comm(const Creation& c, MPI_Group members) const override { return create_root_comm(c, members); }
  void finish(const Creation& c, MeshState& state) const override { make_ft_dims(c, state, c.parent_is_root); }
};

// Over a shrink's survivors: no cross-check of the arguments.
class UlfmSurvivorsMode final : public UlfmMode {
 public:
  void cross_check(Creation& c) const override { check_same_by_construction(c); }
};

}  // namespace

const CreationMode& ulfm_mode() {
  static const UlfmMode mode;
  return mode;
}

const CreationMode& ulfm_survivors_mode() {
  static const UlfmSurvivorsMode mode;
  return mode;
}

}  // namespace devmesh::detail
