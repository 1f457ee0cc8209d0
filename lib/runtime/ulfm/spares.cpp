// Hot spares (MeshOptions::spares, docs/SEMANTICS.md "Repair"): the
// creation that sets them aside, their standby records, and the calls that
// end a standby (Mesh::standby, Mesh::release_spares). The repair that
// takes them is repair.cpp.
#include <map>
#include <mutex>
#include <utility>

#include "../creation_steps.hpp"
#include "../finalize.hpp"
#include "../mesh_state.hpp"
#include "../mpi_check.hpp"
#include "../mpi_features.hpp"
#include "repair.hpp"

namespace devmesh::detail {

Pool::~Pool() {
  if (owned && mpi_alive()) mpi::free_comm(comm);
}

std::vector<int> member_ranks_with_spares(const MeshOptions& options, bool has_rank_list, int world) {
  const int n = options.spares;
  if (n < 0) throw Error(Status::invalid_argument, "spares is " + std::to_string(n) + "; give 0 or more");
  if (!options.fault_tolerance)
    throw Error(Status::invalid_argument,
                "spares needs fault_tolerance (a spare stands by for a repair after a member's death)");
  if (has_rank_list)
    throw Error(Status::invalid_argument,
                "spares are the parent's last ranks; they do not take a rank list, a host mesh or adopted "
                "communicators");
  if (options.host_aware)
    throw Error(Status::invalid_argument,
                "spares are the parent's last ranks, which host_aware would reorder; give one or the other");
  if (n >= world)
    throw Error(Status::invalid_argument,
                std::to_string(n) + " spares leave no member in a parent of " + std::to_string(world) + " ranks");
  std::vector<int> ranks(static_cast<std::size_t>(world - n));
  for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int>(i);
  return ranks;
}

namespace {

// The spares of this process in standby, by the parent their mesh was made
// over: the last fault-tolerant mesh with spares over it.
std::mutex standby_mutex;
std::map<MPI_Comm, SpareRecord>& standby_records() {
  static std::map<MPI_Comm, SpareRecord> records;
  return records;
}

}  // namespace

void take_pool_at_creation(MPI_Comm parent, MPI_Comm comm, const std::vector<int>& members, const RootRecipe& recipe,
                           MeshState* member_state) {
  auto pool = std::make_shared<Pool>();
  pool->comm = comm;
  pool->owned = true;
  int size = 0;
  DEVMESH_MPI(MPI_Comm_size(comm, &size));
  pool->member_rank = members;
  std::vector<char> member(static_cast<std::size_t>(size));
  for (const int r : members) member[static_cast<std::size_t>(r)] = 1;
  for (int r = 0; r < size; ++r)
    if (!member[static_cast<std::size_t>(r)]) pool->spare_rank.push_back(r);
  if (member_state) {
    member_state->pool() = std::move(pool);
    return;
  }
  const std::lock_guard<std::mutex> lock(standby_mutex);
  standby_records()[parent] = SpareRecord{std::move(pool), recipe};
}

Mesh build_with_spares(Creation& c, Mesh (*build)(Creation&)) {
  // The shape as the view resolved it (a 0 in the request is chosen there).
  RootRecipe recipe{{}, c.request.names, c.request.options};
  if (c.view)
    for (index_t n : c.view->root_shape()) recipe.shape.push_back(static_cast<int>(n));
  Mesh out;
  std::optional<Error> failed;
  try {
    out = build(c);
  } catch (const Error& e) {
    if (c.pool == MPI_COMM_NULL) throw;  // failed alike before the pool was made
    failed = e;
  }
  // Every parent rank agrees on whether every member made the mesh, so that
  // no spare stands by for members whose creation failed.
  int made = failed ? 0 : 1;
  const int agreed = mpi::comm_agree(c.pool, &made);
  if (failed) throw *failed;
  check_mpi(agreed, "MPIX_Comm_agree");
  if (!made)
    throw Error(Status::revoked, "mesh creation: making the mesh failed on a member, so no spare stands by for it");
  take_pool_at_creation(c.parent, std::exchange(c.pool, MPI_COMM_NULL), c.order, recipe,
                        out ? MeshAccess::state(out).get() : nullptr);
  return out;
}

}  // namespace devmesh::detail

namespace devmesh {

using detail::SpareRecord;

Mesh Mesh::standby(MPI_Comm parent) {
  if (const std::string why = detail::mpi::ulfm_unavailable(); !why.empty())
    throw Error(Status::unsupported, "standby: " + why);
  SpareRecord record;
  {
    const std::lock_guard<std::mutex> lock(detail::standby_mutex);
    auto it = detail::standby_records().find(parent);
    if (it == detail::standby_records().end())
      throw Error(Status::invalid_argument,
                  "standby: this process is no spare of a fault-tolerant mesh made over this parent (a mesh "
                  "with spares set, whose creation gave this process the null mesh)");
    record = std::move(it->second);
    detail::standby_records().erase(it);
  }
  // Each round ends in a release, a repair that takes this spare, or one
  // that leaves it (or fails): then it stands by in the pool made since.
  while (true) {
    std::optional<Mesh> out = detail::pool_round(record.pool, record.recipe, -1, 0, nullptr);
    if (out) return std::move(*out);
  }
}

void Mesh::release_spares() const {
  const std::shared_ptr<detail::MeshState>& s = detail::MeshAccess::state(*this);
  state();
  if (!s->fault()) throw Error(Status::unsupported, "release_spares needs a mesh made with fault_tolerance");
  std::shared_ptr<detail::Pool>& pool = s->pool();
  if (pool && pool->moved)
    throw Error(Status::invalid_argument,
                "release_spares: the spares of this mesh stand by for the mesh a repair made from it; release "
                "them there");
  if (!pool || pool->spare_rank.empty()) return;
  detail::pool_round(pool, detail::RootRecipe{}, root_index(), detail::op_release, nullptr);
}

}  // namespace devmesh
