// Hosts: which ranks share a machine, and meshes that follow the machines.
//
// A *host* is a set of ranks that share memory: by default the groups of
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). The environment variable
// DEVMESH_HOST_ID overrides that: when it is set (non-empty) on every rank,
// ranks with the same string are one host, whatever machine they run on
// (containers that hide the machine, tests that simulate several hosts on
// one). It is read at the time of each call, so a program may set it
// before discovery.
//
// Numbering, the same on every rank:
//   * hosts are numbered 0..H-1 by their lowest parent rank;
//   * a rank's local rank is its position among its host's ranks in
//     parent-rank order.
// Example: 8 ranks placed round-robin on 2 machines (srun
// --distribution=cyclic, hydra -ppn 1): host 0 = parent ranks {0,2,4,6},
// host 1 = {1,3,5,7}; parent rank 5 is host 1, local rank 2.
//
// Collectiveness (tests/docs/check_collectiveness.py checks it against the
// per-function notes of devmesh.h):
//   discover_hosts(parent), discover_levels(parent), create_host_mesh(parent),
//   create_host_aware(parent)   collective over the parent
//   record_hosts(mesh)    collective over all members of mesh's root
//   host_info(mesh), dim_within_hosts(mesh, dim), dim_within(mesh, dim, level)
//                         not collective
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20
#if DEVMESH_CXX20              // below C++20, export.hpp's #error is the only message

#include <mpi.h>

#include <string>
#include <string_view>
#include <vector>

#include "devmesh/mesh.hpp"
#include "devmesh/mpi_check.h"  // one #error for an mpi.h of another MPI than devmesh's
#include "devmesh/topology.hpp"

namespace devmesh {

// The environment variable that overrides the host identity.
inline constexpr const char* host_id_variable = "DEVMESH_HOST_ID";

// The environment variable that gives the levels outside the host:
// "level=name" pairs separated by ';', innermost first, e.g.
// "domain=nvl2;switch=s0". Set on every rank or on none; when set, Slurm's
// SLURM_TOPOLOGY_ADDR and the backends' NVLink domains are not read.
inline constexpr const char* topology_variable = "DEVMESH_TOPOLOGY";

// The caller's place at one level outside the host.
struct LevelInfo {
  std::string name;    // "domain", "switch", "switch2", "block", ...
  int instance = 0;    // the caller's instance, numbered by lowest rank
  int instances = 1;   // number of instances
  int local_rank = 0;  // the caller's position among its instance's ranks
  int local_size = 1;  // ranks in the caller's instance
};

struct HostInfo {
  int host = 0;                     // the caller's host, 0..hosts-1
  int hosts = 1;                    // number of hosts
  int local_rank = 0;               // the caller's position among its host's ranks
  int local_size = 1;               // ranks on the caller's host
  bool uniform = true;              // every host has the same number of ranks
  std::vector<int> ranks_per_host;  // by host index; size `hosts`
  // The levels outside the host, innermost first, where they were found
  // (placement, record_hosts); empty otherwise.
  std::vector<LevelInfo> levels;
};

// Discovers the hosts of the parent's ranks. Collective over parent.
// Cost: one small reduction plus an allgather of one int per rank
// (MPI_Comm_split_type path) or of the host strings (DEVMESH_HOST_ID path).
// Errors: DEVMESH_HOST_ID set on some ranks and not on others ->
// inconsistent, on every rank; MPI not initialised or parent ==
// MPI_COMM_NULL -> invalid_argument; an MPI failure -> backend.
DEVMESH_API HostInfo discover_hosts(MPI_Comm parent);

// The levels of the parent's ranks (devmesh/topology.hpp), "host" first,
// then those outside it: DEVMESH_TOPOLOGY's where it is set (on every rank
// or none), else the levels of SLURM_TOPOLOGY_ADDR named by
// SLURM_TOPOLOGY_ADDR_PATTERN (switch.switch.node -> "switch" for the
// leaf, "switch2"; block.node -> "block"). Collective over parent: host
// discovery plus one allgather of the level strings. Errors: the variable
// on some ranks only, ranks that find different level names ->
// inconsistent on every rank; a malformed string -> invalid_argument on
// every rank; as discover_hosts otherwise.
DEVMESH_API Levels discover_levels(MPI_Comm parent);

// The 2-D mesh (host_dim, local_dim) of shape (hosts, ranks per host) over
// all ranks of the parent. Root index x = host * local_size + local_rank:
// hosts ordered by their lowest parent rank, ranks within a host by parent
// rank. Unflatten local_dim to split a host further, e.g.
//   create_host_mesh(comm).unflatten("local", {2, 4}, {"shard", "tp"}).
// Collective over parent. Host info is recorded on the root (host_info and
// dim_within_hosts work without communication).
//   8 ranks, cyclic on 2 hosts (host 0 = parent ranks 0,2,4,6): shape (2,4),
//   local = [0,2,4,6] [1,3,5,7]   host = [0,1] [2,3] [4,5] [6,7]
// Errors: hosts with different numbers of ranks -> shape_mismatch (the
// message gives the count of every host), on every rank; host_dim ==
// local_dim -> duplicate_name; as discover_hosts and Mesh::create otherwise.
DEVMESH_API Mesh create_host_mesh(MPI_Comm parent, std::string host_dim = "host", std::string local_dim = "local",
                                  const MeshOptions& options = {});

// A mesh of the given shape and names over all ranks of the parent whose
// root indices run host-major, whatever the launcher's placement: root
// index x is the parent rank with local rank x % L on host x / L (L ranks
// per host). Any trailing dims whose product divides L therefore stay
// within one host, as in JAX's create_device_mesh. Shape zeros are filled
// as MPI_Dims_create does.
//   8 ranks cyclic on 2 hosts, shape (2,4) (dp,tp): root index -> parent
//   rank 0 2 4 6 1 3 5 7; tp = [0,2,4,6] [1,3,5,7] (each on one host),
//   dp = [0,1] [2,3] [4,5] [6,7].
// Collective over parent. Host info is recorded on the root.
// Errors: uneven hosts -> shape_mismatch (counts per host in the message),
// on every rank; as Mesh::create otherwise.
DEVMESH_API Mesh create_host_aware(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names,
                                   const MeshOptions& options = {});

// Records the hosts of the root's members on a mesh made by Mesh::create,
// so that host_info and dim_within_hosts work on it and on every view of
// its root. Hosts are numbered by lowest root index among members. Does
// nothing (and communicates nothing) if the root already has host info.
// Collective over all members of mesh's root. Errors: a null mesh ->
// not_member; as discover_hosts otherwise.
DEVMESH_API void record_hosts(const Mesh& mesh);

// The caller's host info among the root's members, as recorded at
// creation (create_host_mesh, create_host_aware) or by record_hosts. Not
// collective. Errors: no host info recorded -> invalid_argument; a null
// mesh -> not_member.
DEVMESH_API HostInfo host_info(const Mesh& mesh);

// Whether every group of dim (on every rank, not just the caller's) lies
// within one host. Not collective: O(ndim) for roots whose root indices run
// host-major over uniform hosts (create_host_mesh, create_host_aware, or a
// blocked placement recorded by record_hosts), O(root size) otherwise.
//   8 ranks, 2 hosts, create_host_aware((2,2,2), (dp,cp,tp)):
//   tp -> true, cp -> true, dp -> false, flatten(cp,tp) -> true.
// Errors: as host_info; unknown dim -> unknown_dim.
DEVMESH_API bool dim_within_hosts(const Mesh& mesh, std::string_view dim);

// Whether every group of dim lies within one instance of level ("host" as
// dim_within_hosts, or a level of host_info(mesh).levels). Not collective,
// O(root size). Errors: as dim_within_hosts; a level not recorded ->
// invalid_argument naming those there are.
DEVMESH_API bool dim_within(const Mesh& mesh, std::string_view dim, std::string_view level);

}  // namespace devmesh

#endif  // DEVMESH_CXX20
