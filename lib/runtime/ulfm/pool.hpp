// The processes a fault-tolerant mesh may take members from after a death
// (docs/SEMANTICS.md "Repair"): its live members and its spares in standby,
// all in one communicator, with a map of which rank holds which root index
// and which ranks are spares (in parent order: the order they take failed
// indices in). The members hold it in their MeshState, each spare in its
// standby record; a repair shrinks it (every holder alike) and maps the
// result anew. Internal to the runtime.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

namespace devmesh::detail {

class MeshState;

struct Pool {
  Pool() = default;
  ~Pool();
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  MPI_Comm comm = MPI_COMM_NULL;
  bool owned = false;            // freed with the pool (else the root communicator)
  std::vector<int> member_rank;  // root index -> rank in comm (-1: its process failed)
  std::vector<int> spare_rank;   // ranks in comm of the spares in standby, in parent order
  // A repair made the next pool from this one: its spares serve the repaired mesh.
  bool moved = false;
};

// What a root mesh is made of, as a repair makes it again: the same on
// every member, spare and spawned process (spawned ones receive it).
struct RootRecipe {
  std::vector<int> shape;
  std::vector<std::string> names;
  MeshOptions options;
};

// Creation (creation.cpp) asks these of the ULFM side.
// The rank list of a creation with options.spares (parent ranks 0 to
// world - spares - 1), or throws invalid_argument naming what does not fit.
std::vector<int> member_ranks_with_spares(const MeshOptions& options, bool has_rank_list, int world);
// The pool of a creation with spares, once the mesh is made over `pool`
// (a copy of the parent made on every parent rank; members[x]: root index
// x's parent rank, the others are the spares): members take it into their
// state, spares into their standby record under `parent`.
void take_pool_at_creation(MPI_Comm parent, MPI_Comm pool, const std::vector<int>& members, const RootRecipe& recipe,
                           MeshState* member_state);

}  // namespace devmesh::detail
