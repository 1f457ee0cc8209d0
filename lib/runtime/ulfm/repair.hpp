// Repair's rounds over a pool (repair.cpp), shared by the members
// (Mesh::repair, Mesh::release_spares), the spares (Mesh::standby) and the
// spawned processes (Mesh::join). Internal to the runtime.
#pragma once

#include <memory>
#include <optional>

#include "pool.hpp"

namespace devmesh::detail {

// A spare's standby: its pool and what its mesh is made of.
struct SpareRecord {
  std::shared_ptr<Pool> pool;
  RootRecipe recipe;
};

// What the members ask of a round (bits; a spare passes 0 and learns it).
constexpr int op_release = 1, op_repair = 2, op_spawn = 4;

// One round over `pool`, on every live holder alike: the pool is shrunk to
// its live holders (every holder's `pool` becomes that), the members' op
// reaches the spares, and then
//  - release: the spares leave (null mesh);
//  - repair: the failed root indices are filled (devmesh::repair: spares
//    first, then processes spawned from `spawn`) and the repaired mesh is
//    made; the holders of a place get it, the spares left keep its pool.
// index: the caller's root index (a member), or -1 (a spare). A member
// gets the repaired mesh (the null mesh for a release) or an Error; a
// spare gets the mesh that took it or the null mesh of a release, or
// nullopt: it stands by again in `pool` (a repair that left it over or
// failed).
std::optional<Mesh> pool_round(std::shared_ptr<Pool>& pool, const RootRecipe& recipe, int index, int op,
                               const Spawn* spawn);

}  // namespace devmesh::detail
