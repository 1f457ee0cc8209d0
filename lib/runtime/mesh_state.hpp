// The runtime state shared by every view of one root mesh.
#pragma once

#include <mpi.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

namespace devmesh::detail {

struct RootHosts;  // hosts.hpp

struct MeshState {
  MeshState(View root, MPI_Comm root_comm, MeshOptions options);
  ~MeshState();
  MeshState(const MeshState&) = delete;
  MeshState& operator=(const MeshState&) = delete;

  // One entry per distinct (coalesced) dim layout.
  struct Entry {
    MPI_Comm comm = MPI_COMM_NULL;
    std::map<std::string, std::unique_ptr<Communicator>, std::less<>> upgraded;  // by backend
  };

  // The entry of a layout if it exists, else nullptr. Caller holds `mutex`.
  Entry* find(const Layout& layout);
  // The entry of a layout, creating its MPI communicator over the caller's
  // group with MPI_Comm_create_group. Caller holds `mutex`.
  Entry& entry(const Layout& layout);
  // Inserts a communicator made elsewhere (split, cart_sub).
  Entry& adopt(const Layout& layout, MPI_Comm comm);
  // The communicator of `backend` for a layout. Caller holds `mutex`.
  // all_root_members: every root member makes this call together.
  Communicator& upgraded(const Layout& layout, const std::string& backend,
                         bool all_root_members = false);
  // Keeps a backend made (and so checked) at creation.
  void add_backend(std::unique_ptr<Backend> backend);
  MPI_Comm cart();
  // Frees every communicator (idempotent; no MPI call after MPI_Finalize).
  void release() noexcept;
  bool released() const noexcept { return released_; }

  const View root;             // the root view
  MPI_Comm root_comm;          // members in root-index order; owned
  MPI_Group root_group = MPI_GROUP_NULL;
  const MeshOptions options;
  int index = 0;               // caller's root index == rank in root_comm
  int parent_rank = 0;
  int host_local_rank = 0;     // rank among root members on the same host
  int created = 1;             // communicators made, root_comm included
  // The hosts of the root's members, once recorded (hosts.cpp); guarded by mutex.
  std::shared_ptr<const RootHosts> hosts;
  std::mutex mutex;

 private:
  std::map<std::vector<index_t>, Entry> cache_;
  std::map<std::string, std::unique_ptr<Backend>, std::less<>> backends_;
  MPI_Comm cart_ = MPI_COMM_NULL;
  bool released_ = false;
};

// The backend a view's dim runs on: its override, else the mesh default.
const std::string& backend_of(const MeshOptions& options, std::string_view dim) noexcept;

}  // namespace devmesh::detail
