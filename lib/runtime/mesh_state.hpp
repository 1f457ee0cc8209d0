// The runtime state shared by every view of one root mesh: the root's
// communicators (one per distinct dim layout, plus Cartesian views and the
// root communicator), its backend instances and its host info. Every public
// method takes the state's lock itself; the private ones take the lock held
// as proof.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "devmesh/hosts.hpp"
#include "devmesh/mesh.hpp"
#include "failure_policy.hpp"
#include "plugins.hpp"
#include "ulfm/pool.hpp"

namespace devmesh::detail {

// The hosts of a root's members, fixed once recorded (hosts.cpp).
struct RootHosts {
  HostInfo caller;  // the caller's host among the root's members
  // > 0: the root is host-major over uniform hosts, root index x is on host
  // x / local_size, and host_of is empty. 0: host_of[x] is x's host.
  index_t local_size = 0;
  std::vector<int> host_of;
  // The levels outside the host, innermost first, where recorded:
  // level_of[l][x] is root index x's instance of level_names[l].
  std::vector<std::string> level_names;
  std::vector<std::vector<index_t>> level_of;
  int host(index_t x) const noexcept {
    return local_size > 0 ? static_cast<int>(x / local_size) : host_of[static_cast<std::size_t>(x)];
  }
};

// A view's answer to communicator(dim), kept by the view (Mesh::resolved_)
// and given again while MeshState::current() holds for it.
struct Resolved {
  Communicator* comm = nullptr;
  std::uint64_t epoch = 0;  // the state's epoch when it was the answer
};

class MeshState : public std::enable_shared_from_this<MeshState> {
 public:
  // root_group: the members in root-index order (owned from now on); index:
  // the caller's root index; seq and digest: name this root in creation
  // tags, the same on every member and unique among the roots of the
  // process. host_local_rank: the caller's rank among the parent's ranks on
  // its host (what plugin backends pick a device by). Not collective.
  MeshState(const View& root, MPI_Group root_group, int index, int parent_rank, int host_local_rank, std::uint64_t seq,
            std::uint64_t digest, MeshOptions options);
  ~MeshState();
  MeshState(const MeshState&) = delete;
  MeshState& operator=(const MeshState&) = delete;

  // What never changes after creation (no lock needed).
  int index() const noexcept { return index_; }
  int parent_rank() const noexcept { return parent_rank_; }
  const MeshOptions& options() const noexcept { return options_; }

  // --- set up by the creation driver, before the mesh is handed out -------
  // Takes the error handler of the communicators handed out from parent
  // (options.comm_errors inherit; kept until release). Not collective.
  void inherit_errhandler(MPI_Comm parent);
  // Keeps a backend instance opened (and so checked) at creation.
  void add_backend(const BackendSpec& spec, std::unique_ptr<BackendInstance> instance);
  // The root communicator made at creation (owned from now on, named
  // devmesh:root): MPI 3's, or the one a mesh from a group is made over.
  void take_root_comm(MPI_Comm comm);
  // Keeps the parent devmesh made for this root (a shrink's survivors'
  // communicator, where the root is not all of it), freed at release.
  void take_parent(MPI_Comm parent);
  // Tracks the program's parent with an attribute (no communication; not
  // collective), so that devmesh uses it while the program keeps it:
  //  - where dims' communicators do not come straight from their groups
  //    (mpi::dims_from_group), they are made with MPI_Comm_create_group
  //    over it; when the program frees it, devmesh makes the root
  //    communicator from it first (keep_members), and from that on;
  //  - when its ranks are exactly the root's members (all_members), the
  //    calls over all root members (create_comms' check and split, the
  //    root view's Cartesian communicator) run over it instead of a root
  //    communicator made for them.
  // The state must be owned by a std::shared_ptr.
  void track_parent(MPI_Comm parent, bool all_members);
  // Enters a communicator of the program (Mesh::adopt) as the one of a
  // layout, not owned: never freed, renamed, tracked or given another error
  // handler. Not counted in comm_count().
  void insert_program_comm(const Layout& layout, MPI_Comm comm, std::string_view dim);

  // --- backends of dims ------------------------------------------------------
  // The backend a dim of a view of this root runs on: the one flatten or
  // unflatten gave it, else the options' rule for the root's dims (by name;
  // any other dim: the default backend).
  BackendSpec backend_of(const Dim& dim);
  // Opens the backends of specs (each loaded and its options checked, on
  // this rank) before the dims they are for are made. Not collective.
  void open_backends(const std::vector<BackendSpec>& specs);
  // Records the backend of each dim of a view of this root made by flatten
  // or unflatten (specs opened already; an empty name: none chosen). A dim
  // keeps the backend it was first made with: another one for a dim made
  // before, or for a root dim, throws duplicate_name and records none.
  void choose_backends(const View& view, const std::vector<std::pair<Dim, BackendSpec>>& chosen);

  // --- the mesh's communicators (see mesh.hpp for collectiveness) ----------
  // The MPI communicator of a layout over the caller's group, made the
  // first time; dim names it (the dim asking).
  MPI_Comm comm(const Layout& layout, std::string_view dim);
  // The communicator of a dim of a view of this root in the dim's backend
  // (backend_of), as a record that lives as long as the state.
  const Resolved& communicator(const Dim& dim);
  // Whether a record communicator(dim) gave is still what that call would
  // give (every change of answer, or failure, moves the epoch on, but a
  // revoke, which the fault state tells). Not collective; any thread; lock
  // free without fault_tolerance.
  bool current(const Resolved& r) const noexcept {
    return r.epoch == epoch_.load(std::memory_order_acquire) && !failure_->revoked();
  }
  // The communicators of every dim of a view at once, by one path.
  void create_comms(const View& view, CommPath path);
  // The Cartesian communicator of a view, one period flag per dim (empty:
  // none periodic).
  MPI_Comm cart(const View& view, std::vector<int> periods);
  // The communicator of all root members in root-index order, made on first
  // use (collective over all root members then).
  MPI_Comm root_comm();
  // Communicators made so far, the root's own included.
  int comm_count();

  // --- hosts ----------------------------------------------------------------
  // The recorded host info, or null.
  std::shared_ptr<const RootHosts> hosts();
  // Records host info unless some is recorded already.
  void set_hosts(std::shared_ptr<const RootHosts> hosts);

  // Frees every communicator (idempotent; no MPI call after MPI_Finalize).
  void release() noexcept;

  // --- fault tolerance (options.fault_tolerance; see mesh.hpp) -------------
  // The mesh's fault state, or null without fault_tolerance.
  Fault* fault() const noexcept { return failure_->fault(); }
  // Revokes the mesh (not collective; any thread). Unsupported without
  // fault_tolerance.
  void revoke();
  bool is_revoked();
  // The root indices this rank knows to have failed, ascending: the agreed
  // set once agree() or a shrink agreed on one, with what MPI reports
  // since. Not collective.
  std::vector<index_t> failed_ranks();
  // MPIX_Comm_agree over the root's survivors (the AND of every survivor's
  // flag); the failed set is agreed on as a side effect. Collective over
  // the surviving members of the root.
  bool agree(bool flag);
  // The survivors' communicator (MPIX_Comm_shrink of the root's, ranks in
  // root order) and the agreed failed set. Collective over the surviving
  // members of the root. The caller owns the communicator.
  MPI_Comm shrink_root(std::vector<index_t>& failed);
  // A mesh made by a shrink knows the old root index of each of its root
  // indices (ascending). Not collective.
  void take_shrink(std::vector<index_t> old_index, index_t old_size);
  // The new root index of an old one, -1 when dropped; invalid_argument
  // for a mesh not made by a shrink or an index outside the old root.
  int shrunk_index(index_t old_index) const;
  // The pool a repair takes processes from (ulfm/pool.hpp): set at
  // creation where the root has spares, or by the repair that made it; null
  // otherwise (the root communicator is the pool then). Read and replaced
  // by repair and release_spares only (collective calls, one thread).
  std::shared_ptr<Pool>& pool() noexcept { return pool_; }

  // What an attribute on a communicator handed out tells: its delete
  // callback ran because the program freed it. devmesh's own free sets
  // `releasing` first.
  struct Tracking {
    std::atomic<bool> freed_by_program{false};
    std::atomic<bool> releasing{false};
    std::atomic<std::uint64_t>* epoch = nullptr;  // the state's, moved on when the program frees it
  };
  // What an attribute on the parent tells: whether the program freed it,
  // and the roots that make their root communicator from it first.
  struct ParentLink;
  // Makes the root communicator over `parent`, which the program is
  // freeing (the parent's delete callback, inside MPI_Comm_free, which is
  // collective over the parent: every member makes this call), unless the
  // state has one or is released. A failure is kept for the calls that
  // need the communicator. Collective over the root's members.
  void keep_members(MPI_Comm parent) noexcept;

 private:
  using Lock = std::lock_guard<std::mutex>;
  // One communicator handed out: a dim layout's or a Cartesian view's.
  struct Handout {
    MPI_Comm comm = MPI_COMM_NULL;
    std::string name;   // MPI_Comm_get_name's
    Tracking tracking;  // its attribute's value (none on the program's own)
    bool owned = true;  // false: the program's own (insert_program_comm)
    std::map<std::string, std::unique_ptr<Communicator>, std::less<>> upgraded;  // by BackendSpec::key
    // Backend communicators whose creation failed, by BackendSpec::key: the
    // failure is reported again, never retried behind the caller's back.
    std::map<std::string, Error, std::less<>> failed;
  };

  // Throws Error(invalid_argument) once MPI_Finalize released the mesh, and
  // Error(revoked) once the mesh is revoked: the one check of every call
  // that would use a communicator.
  void check_alive(const Lock&) const;
  // Runs f (a call that may make communicators); a failure it sees
  // (PROC_FAILED, REVOKED) revokes the mesh before it reaches the caller.
  template <class F>
  decltype(auto) with_failure_policy(F&& f);
  BackendSpec backend_of(const Lock&, const Dim& dim) const;
  // The fault state of a fault-tolerant mesh, or throws unsupported.
  Fault& fault_of(const char* what) const;
  // The root communicator of a fault-tolerant mesh, or throws unsupported.
  MPI_Comm fault_root(const char* what) const;

  // The handout of a key, or nullptr; throws when the program freed it.
  Handout* find(const Lock&, const std::vector<index_t>& key);
  Handout& entry(const Lock&, const Layout& layout, std::string_view dim);
  // Names a new communicator, tracks it and gives it the handed-out error
  // handler, then stores it under key. On failure frees it and throws.
  Handout& hand_out(const Lock&, std::vector<index_t> key, MPI_Comm comm, std::string name);
  MPI_Comm root_comm(const Lock&);
  // A communicator over exactly the root's members for one collective call
  // of devmesh's (create_comms' check and split): the root communicator
  // if it exists, else the parent while tracked and alive, else the root
  // communicator, made now.
  MPI_Comm all_members(const Lock&);
  // The parent, when tracked and not freed by the program; else
  // MPI_COMM_NULL.
  MPI_Comm live_parent(const Lock&) const;
  // The creation tag of what (a layout's key, or "root"): tag_prefix_, then what.
  std::string tag(std::string_view what) const;
  MPI_Comm make_comm(const Lock&, std::span<const int> members, const std::string& creation_tag);
  Communicator& communicator(const Lock&, const Layout& layout, std::string_view dim, const BackendSpec& backend,
                             bool all_root_members);
  MPI_Comm cart(const Lock&, const View& view, std::vector<int> periods);
  void create_comms(const Lock&, const View& view, CommPath path);

  // The root's size and whether it has a rank list (the views passed in
  // tell the rest).
  const index_t root_size_;
  const bool root_listed_;
  MPI_Group root_group_;  // members in root-index order; owned
  const int index_;
  const int parent_rank_;
  const int host_local_rank_;
  const std::string tag_prefix_;  // "devmesh:<seq>.<digest>:"
  const MeshOptions options_;

  std::mutex mutex_;
  std::map<std::vector<index_t>, Handout> handouts_;
  std::map<std::string, std::unique_ptr<BackendInstance>, std::less<>> backends_;  // by BackendSpec::key
  // Backends chosen by flatten/unflatten, by dim name and coalesced layout.
  std::map<std::pair<std::string, std::vector<index_t>>, BackendSpec> chosen_;
  MPI_Comm root_comm_ = MPI_COMM_NULL;
  // The program's parent and the link its attribute sets when it is freed
  // (track_parent); never freed by devmesh.
  MPI_Comm parent_ = MPI_COMM_NULL;
  std::shared_ptr<ParentLink> parent_link_;
  bool parent_members_ = false;  // the parent's ranks are the root's members
  // Why the root communicator could not be made when the program freed
  // the parent (keep_members), reported by the calls that needed it.
  std::optional<Error> root_failure_;
  // Error handler of handed-out communicators: the parent's (a reference
  // from MPI_Comm_get_errhandler, freed at release), or
  // MPI_ERRHANDLER_NULL for MPI_ERRORS_RETURN.
  MPI_Errhandler errhandler_ = MPI_ERRHANDLER_NULL;
  int created_ = 0;
  std::shared_ptr<const RootHosts> hosts_;
  bool released_ = false;
  std::unique_ptr<FailurePolicy> failure_;  // ULFM's with options.fault_tolerance, else the plain one
  // Moves on whenever a communicator(dim) answer given before may no longer
  // be the answer: at release, when a backend is chosen for a dim, when the
  // program frees a communicator handed out.
  std::atomic<std::uint64_t> epoch_{0};
  // The records communicator(dim) gave, by communicator and epoch; kept
  // past release (views may still hold them; they are not current then).
  std::map<std::pair<const Communicator*, std::uint64_t>, Resolved> resolved_;
  // The parent devmesh made for this root (take_parent), and a shrink's
  // old root index of each root index (take_shrink). Set before the mesh
  // is handed out.
  MPI_Comm owned_parent_ = MPI_COMM_NULL;
  std::vector<index_t> old_index_;
  index_t old_size_ = 0;
  std::shared_ptr<Pool> pool_;
};

template <class F>
inline decltype(auto) MeshState::with_failure_policy(F&& f) {
  using R = decltype(f());
  if constexpr (std::is_void_v<R>) {
    failure_->run(f);
  } else if constexpr (std::is_reference_v<R>) {
    std::remove_reference_t<R>* out = nullptr;
    auto call = [&] { out = &f(); };
    failure_->run(call);
    return *out;
  } else {
    R out{};
    auto call = [&] { out = f(); };
    failure_->run(call);
    return out;
  }
}

// The name MPI_Comm_get_name gives a communicator devmesh hands out for dim.
std::string comm_name(std::string_view dim);
// A layout's identity among the root's: its coalesced modes' sizes and strides.
std::vector<index_t> key_of(const Layout& layout);

// The backend a dim of the mesh runs on by the options, with its options:
// the dim's override and options, else the mesh default and its options.
BackendSpec backend_of(const MeshOptions& options, std::string_view dim);
// Every distinct backend the options name (the default first).
std::vector<BackendSpec> backends_named(const MeshOptions& options);
// The same for options that name only the default backends (most
// meshes'): one list, made once and shared; nullptr for other options.
const std::vector<BackendSpec>* default_backends_named(const MeshOptions& options);

// The one door to a Mesh's state (a friend of Mesh): the creation driver
// makes meshes through it, the host functions read the state.
struct MeshAccess {
  static const std::shared_ptr<MeshState>& state(const Mesh& mesh) noexcept { return mesh.state_; }
  static Mesh make(View view, std::shared_ptr<MeshState> state) { return Mesh(std::move(view), std::move(state)); }
};

}  // namespace devmesh::detail
