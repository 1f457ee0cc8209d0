// Adopted communicators (Mesh::adopt): what each rank brings, and the mesh
// they form, as the creation driver needs them.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "devmesh/view.hpp"

namespace devmesh::detail {

// What this rank brings to an adoption: whether it is a member (every comm
// non-null), and per dim the comm's size and its rank there.
struct Adopting {
  int member = 0;
  std::vector<int> sizes, coords;
  // Per dim, the comm's members as parent ranks in comm-rank order
  // (MPI_UNDEFINED for a rank outside parent).
  std::vector<std::vector<int>> groups;
};

// Reads the caller's communicators (not collective). Errors: no comms,
// counts that differ, a null comm among non-null ones -> invalid_argument.
Adopting read_comms(MPI_Comm parent, const std::vector<MPI_Comm>& comms, const std::vector<std::string>& names);

// What every rank sends in the adoption's one allgather: member, sizes,
// coordinates (1 + 2 * ndim ints).
std::vector<int> adoption_record(const Adopting& a, std::size_t ndim);

// From everyone's records, the same on every rank: the shape and the rank
// list (root index x, row-major in the coordinates -> parent rank), or the
// error that every rank then reports (invalid_argument).
std::pair<std::vector<int>, std::vector<int>> adopted_layout(const std::vector<int>& table, int world, int ndim);

// Throws invalid_argument unless each of the member's communicators holds
// exactly its group of `view` in rank order.
void check_adopted_groups(const View& view, const Adopting& a, int parent_rank, const std::vector<std::string>& names);

}  // namespace devmesh::detail
