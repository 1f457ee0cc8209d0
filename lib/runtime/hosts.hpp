// Host info recorded on a root mesh (see include/devmesh/hosts.hpp).
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "devmesh/hosts.hpp"

namespace devmesh::detail {

struct MeshState;

// The hosts of a root's members, fixed once recorded.
struct RootHosts {
  HostInfo caller;            // the caller's host among the root's members
  // > 0: the root is host-major over uniform hosts, root index x is on host
  // x / local_size, and host_of is empty. 0: host_of[x] is x's host.
  index_t local_size = 0;
  std::vector<int> host_of;
  int host(index_t x) const noexcept {
    return local_size > 0 ? static_cast<int>(x / local_size) : host_of[static_cast<std::size_t>(x)];
  }
};

// The host of every rank of comm, hosts numbered by their lowest rank.
// Collective over comm (see discover_hosts).
std::vector<int> host_table(MPI_Comm comm);

// The rank's HostInfo from a host table.
HostInfo host_info_of(const std::vector<int>& host_of, int rank);

// join_failed_creation for create_host_mesh: the same collectives up to
// the agreement. Collective over parent; throws.
[[noreturn]] void join_failed_host_creation(MPI_Comm parent, const Error& local);

// The parent ranks host-major (host 0's ranks in parent order, then host
// 1's...). Throws Error(shape_mismatch) on uneven hosts, the same on every
// rank (every rank holds the same table); `what` names the mesh asked for.
std::vector<int> host_major(const std::vector<int>& host_of, const HostInfo& info, const char* what);

// Records host-major host info on a mesh just created over all of the
// parent's ranks in host-major order. Not collective.
void record_host_major(const Mesh& mesh, const HostInfo& info);

// Reaches the private state of a Mesh (a friend of Mesh).
struct MeshAccess {
  static const std::shared_ptr<MeshState>& state(const Mesh& mesh) noexcept { return mesh.state_; }
  static Mesh make(View view, std::shared_ptr<MeshState> state) { return Mesh(std::move(view), std::move(state)); }
};

}  // namespace devmesh::detail
