// Topology levels and placement: the pure model (no MPI) that the runtime
// (MeshOptions::placement) and devmesh-plan (--place) share, so that both
// give the same parent rank for every root index (docs/TOPOLOGY.md).
//
// A *level* is a kind of place that holds ranks: "host" innermost, then
// what the machine has around hosts ("domain": an NVLink domain,
// "switch", "switch2", "block": the network's). An *instance* of a level
// is one such place (host n17, domain nvl2). Levels nest: an instance is
// its name together with every outer instance's, so ranks that share an
// instance of a level share every outer one.
//
// Placement asks for dims to stay within a level, e.g. {tp: host, ep:
// domain}. place() assigns every root index a parent rank so that
//   (a) every group of a constrained dim lies within one instance of its
//       level;
//   (b) in every group of every dim, for every level, the members in one
//       instance are consecutive in local-rank order (an NVLink domain is
//       one consecutive block of the group, as NCCL needs);
// using whole, equal subtrees: u_0 ranks of each host used, u_1 hosts of
// each domain used, and so on, prod(u) = mesh size. Ranks the tiling does
// not use are the leftovers (non-members, or spares).
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20
#if DEVMESH_CXX20              // below C++20, export.hpp's #error is the only message

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "devmesh/layout.hpp"
#include "devmesh/status.hpp"

namespace devmesh {

// "level=name" pairs, innermost first; also "dim=level" pairs (placement).
using Pairs = std::vector<std::pair<std::string, std::string>>;

// The levels of a parent's ranks, innermost first; names[0] is "host".
struct Levels {
  std::vector<std::string> names;
  // of[l][r]: the instance of level l that holds parent rank r, numbered
  // 0.. by lowest parent rank.
  std::vector<std::vector<index_t>> of;
  index_t ranks() const noexcept { return of.empty() ? 0 : static_cast<index_t>(of[0].size()); }
  // The index of a level by name; throws Error(invalid_argument) naming
  // the levels there are.
  std::size_t level(std::string_view name) const;
  // Ranks in each instance of level l, by instance.
  std::vector<index_t> sizes(std::size_t l) const;
};

// Levels from what each rank reported: ids[r] the rank's instance names,
// innermost first, one per entry of names (host first). Errors: a rank
// with another number of names -> inconsistent; duplicate level names ->
// duplicate_name.
DEVMESH_API Levels make_levels(std::vector<std::string> names, const std::vector<std::vector<std::string>>& ids);

// Levels of `ranks` ranks in blocks: each host holds ranks_per_host
// consecutive ranks, each domain hosts_per_domain consecutive hosts, each
// switch domains_per_switch consecutive domains (0: no such level). The
// planner's --ranks-per-host, --hosts-per-domain, --domains-per-switch.
DEVMESH_API Levels block_levels(index_t ranks, index_t ranks_per_host, index_t hosts_per_domain,
                                index_t domains_per_switch);

// "level=name" items separated by `sep` (';' in DEVMESH_TOPOLOGY, ' ' in a
// planner topology file line), in their order. Empty items are skipped.
// Errors: an item without '=' or with an empty side -> invalid_argument
// naming `what` and the item.
DEVMESH_API Pairs parse_pairs(std::string_view text, char sep, std::string_view what);

// The levels of SLURM_TOPOLOGY_ADDR (e.g. "s0.s4.node17") named by
// SLURM_TOPOLOGY_ADDR_PATTERN (e.g. "switch.switch.node"), innermost first
// without the node: {switch=s4, switch2=s0}; a repeated name is numbered
// from the leaf. Errors: another number of parts than the pattern's ->
// invalid_argument naming both.
DEVMESH_API Pairs slurm_levels(std::string_view addr, std::string_view pattern);

// Where the ranks go.
struct Placed {
  std::vector<index_t> shape;         // the mesh's shape, zeros filled
  std::vector<index_t> parent_ranks;  // root index x -> parent rank
  std::vector<index_t> leftovers;     // parent ranks outside the mesh, increasing
};

// Places a mesh of `shape` (zeros filled as dims_create does over all
// ranks) with dims `names` over `levels`, keeping each dim of `placement`
// ({dim, level}) within one instance of its level; see the top of this
// file. The same answer on every rank for the same levels. Errors: a
// placement dim that is no dim -> unknown_dim; an unknown level, a dim
// given twice -> invalid_argument; a mesh larger than the ranks, a dim
// larger than its level, levels that cannot be tiled -> shape_mismatch,
// naming the dim, the level and the sizes.
DEVMESH_API Placed place(const Levels& levels, std::vector<index_t> shape, const std::vector<std::string>& names,
                         const Pairs& placement);

// Whether every group of `layout` (over root indices 0..W-1, W =
// instance_of_root.size()) lies within one instance, instance_of_root[x]
// being root index x's instance. O(W).
DEVMESH_API bool groups_within(const Layout& layout, const std::vector<index_t>& instance_of_root);

}  // namespace devmesh

#endif  // DEVMESH_CXX20
