// Host discovery as the creation driver and the host functions need it
// (see include/devmesh/hosts.hpp).
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "devmesh/hosts.hpp"

namespace devmesh::detail {

struct RootHosts;  // mesh_state.hpp

// What a rank reports of the levels outside its host besides the
// environment (DEVMESH_TOPOLOGY, SLURM_TOPOLOGY_ADDR): the backends'
// levels for a host local rank ("level=name;..."), or none.
struct LevelSource {
  std::function<std::string(int host_local_rank)> backend;
};

// The hosts of comm's ranks and, where asked, every rank's raw report of
// the levels outside its host.
struct Places {
  std::vector<int> host_of;          // hosts numbered by their lowest rank
  std::vector<std::string> reports;  // by rank; empty without a source
  bool override_set = false;         // DEVMESH_TOPOLOGY on every rank
};

// Collective over comm: one allreduce of which variables are set, then the
// hosts (by MPI_COMM_TYPE_SHARED: one allgather of each rank's host leader
// and report length, then one allgatherv of the reports; by
// DEVMESH_HOST_ID: one allgather of lengths and one allgatherv of the host
// ids with the reports). src null: hosts only. Errors: a variable set on
// some ranks only -> inconsistent; an MPI failure -> backend.
Places gather_places(MPI_Comm comm, const LevelSource* src);

// The levels in the reports, read on every rank alike: "host", then the
// levels outside it. Errors: a malformed report -> invalid_argument, ranks
// with different level names -> inconsistent, a backend that failed on a
// rank -> backend; each naming the rank.
Levels levels_of(const Places& places);

// The host info of a root whose root index x is rank parent_of_root[x] of
// the levels' ranks, for the member at root index `index`: hosts and
// instances numbered by lowest root index among members.
std::shared_ptr<RootHosts> root_hosts(const Levels& levels, const std::vector<int>& parent_of_root, int index);

// The host of every rank of comm, hosts numbered by their lowest rank.
// Collective over comm (see discover_hosts).
std::vector<int> host_table(MPI_Comm comm);

// The rank's HostInfo from a host table.
HostInfo host_info_of(const std::vector<int>& host_of, int rank);

// The parent ranks host-major (host 0's ranks in parent order, then host
// 1's...). Throws Error(shape_mismatch) on uneven hosts, the same on every
// rank (every rank holds the same table); `what` names the mesh asked for.
std::vector<int> host_major(const std::vector<int>& host_of, const HostInfo& info, const char* what);

}  // namespace devmesh::detail
