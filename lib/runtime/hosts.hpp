// Host discovery as the creation driver and the host functions need it
// (see include/devmesh/hosts.hpp).
#pragma once

#include <mpi.h>

#include <vector>

#include "devmesh/hosts.hpp"

namespace devmesh::detail {

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
