// The runtime state shared by every view of one root mesh.
#pragma once

#include <mpi.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/mesh.hpp"
#include "plugins.hpp"

namespace devmesh::detail {

struct RootHosts;  // hosts.hpp

struct MeshState {
  // root_group: the members in root-index order (owned); index: the
  // caller's root index; id: names this root in creation tags, the same on
  // every member and unique among the roots of the process.
  MeshState(View root, MPI_Group root_group, int index, std::string id, MeshOptions options);
  ~MeshState();
  MeshState(const MeshState&) = delete;
  MeshState& operator=(const MeshState&) = delete;

  // What an attribute on a communicator handed out (comm(), cart_comm())
  // tells: its delete callback ran because the program freed it. Owned by
  // the state; devmesh's own free sets `releasing` first.
  struct Watch {
    std::atomic<bool> freed_by_program{false};
    std::atomic<bool> releasing{false};
  };

  // One entry per distinct (coalesced) dim layout.
  struct Entry {
    MPI_Comm comm = MPI_COMM_NULL;
    std::string name;  // MPI_Comm_get_name's, "devmesh:<dim>"
    std::unique_ptr<Watch> watch;
    std::map<std::string, std::unique_ptr<Communicator>, std::less<>> upgraded;  // by BackendSpec::key
    // false: the program's own communicator (Mesh::adopt), never freed,
    // renamed, watched or given another error handler by devmesh.
    bool owned = true;
  };

  // The entry of a layout if it exists, else nullptr. Caller holds `mutex`.
  Entry* find(const Layout& layout);
  // The entry of a layout, creating its MPI communicator over the caller's
  // group with MPI_Comm_create_group; dim names it (the dim asking). Throws
  // Error(invalid_argument) when the program freed the layout's
  // communicator. Caller holds `mutex`.
  Entry& entry(const Layout& layout, std::string_view dim);
  // Inserts a communicator made elsewhere (split, cart_sub), and hands it
  // out as entry() does (name, watch, error handler).
  Entry& adopt(const Layout& layout, MPI_Comm comm, std::string_view dim);
  // Takes the error handler of the communicators handed out from parent
  // (options.comm_errors inherit; kept until release). Not collective.
  void inherit_errhandler(MPI_Comm parent);
  // The communicator of a backend for a layout. Caller holds `mutex`.
  // all_root_members: every root member makes this call together.
  Communicator& upgraded(const Layout& layout, std::string_view dim, const BackendSpec& backend,
                         bool all_root_members = false);
  // Keeps a backend instance opened (and so checked) at creation.
  void add_backend(const BackendSpec& spec, std::unique_ptr<BackendInstance> instance);
  // The root's Cartesian communicator, non-periodic (cart(root, {})).
  MPI_Comm cart();
  // The Cartesian communicator of a view over the caller's group of its
  // flattened layout, dims in the view's order, one period flag per dim;
  // made the first time a (layout, periods) is asked for. Collective over
  // that group then. Caller holds `mutex`.
  MPI_Comm cart(const View& view, const std::vector<int>& periods);
  // The communicator of all root members in root-index order, created on
  // first use. Collective over all root members then. Caller holds `mutex`.
  MPI_Comm root_comm();
  // A new communicator over the root members listed (root indices, in rank
  // order), errors returned. Collective over those members.
  MPI_Comm make_comm(const std::vector<int>& members, const std::string& what);
  // Makes a new communicator ready for the program: names it, watches it
  // for MPI_Comm_free, gives it the handed-out error handler (last). On
  // failure frees it and throws. Caller holds `mutex`.
  std::unique_ptr<Watch> hand_out(MPI_Comm& comm, const std::string& name);
  bool has_root_comm() const noexcept { return root_comm_ != MPI_COMM_NULL; }
  // Frees the root communicator (when nothing else was made from it).
  void drop_root_comm() noexcept {
    if (root_comm_ != MPI_COMM_NULL && MPI_Comm_free(&root_comm_) == MPI_SUCCESS) --created;
  }
  // The root communicator made at creation (owned from now on): MPI 3's,
  // or the one Mesh::create_from_group makes from the group.
  void adopt_root(MPI_Comm comm);  // also names it devmesh:root
  // Enters a communicator of the program (Mesh::adopt) as the one of a
  // layout, not owned: see Entry::owned. Not counted in `created`.
  void insert_program_comm(const Layout& layout, MPI_Comm comm, std::string_view dim);
  // Frees every communicator (idempotent; no MPI call after MPI_Finalize).
  void release() noexcept;
  bool released() const noexcept { return released_; }

  const View root;             // the root view
  MPI_Group root_group;        // members in root-index order; owned
  const int index;             // caller's root index
  const std::string id;        // see the constructor
  const MeshOptions options;
  int parent_rank = 0;
  int host_local_rank = 0;     // rank among the parent's ranks on the same host
  int created = 0;             // communicators made, the root's own included
  // The hosts of the root's members, once recorded (hosts.cpp); guarded by mutex.
  std::shared_ptr<const RootHosts> hosts;
  std::mutex mutex;

 private:
  std::map<std::vector<index_t>, Entry> cache_;
  std::map<std::string, std::unique_ptr<BackendInstance>, std::less<>> backends_;  // by BackendSpec::key
  // Cartesian communicators by (dims' layouts, periods); see cart().
  struct CartEntry {
    MPI_Comm comm = MPI_COMM_NULL;
    std::string name;
    std::unique_ptr<Watch> watch;
  };
  std::map<std::vector<index_t>, CartEntry> carts_;
  MPI_Comm root_comm_ = MPI_COMM_NULL;
  // Error handler of handed-out communicators: the parent's (a reference
  // from MPI_Comm_get_errhandler, freed at release), or
  // MPI_ERRHANDLER_NULL for MPI_ERRORS_RETURN.
  MPI_Errhandler errhandler_ = MPI_ERRHANDLER_NULL;
  bool released_ = false;
};

// The backend a view's dim runs on, with its options: the dim's override
// and options, else the mesh default and its options.
BackendSpec backend_of(const MeshOptions& options, std::string_view dim);
// Every distinct backend the options name (the default first).
std::vector<BackendSpec> backends_named(const MeshOptions& options);

// Takes part in the agreement of a mesh creation that other ranks make
// with Mesh::create, for a rank whose arguments the C API already found
// wrong (`local`): every rank then fails alike. Collective over parent.
// Always throws.
[[noreturn]] void join_failed_creation(MPI_Comm parent, const Error& local);

// Mesh::adopt, for the C API too: `c_local`, when not null, is what the C
// API already found wrong on this rank; the rank then takes part in the
// adoption's agreement and fails with every other rank. Collective over
// parent.
Mesh adopt_comms(MPI_Comm parent, const std::vector<MPI_Comm>& comms, const std::vector<std::string>& names,
                 const MeshOptions& options, const Error* c_local);
// Mesh::create_from_group, for the C API too (`c_local` as for
// adopt_comms: the rank joins the creation over the group's communicator
// and fails with the others). Collective over the group's members.
Mesh create_from_group(MPI_Group group, std::string_view tag, std::vector<int> shape, std::vector<std::string> names,
                       const MeshOptions& options, const Error* c_local);

}  // namespace devmesh::detail
