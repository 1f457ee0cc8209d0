// What a fault-tolerant mesh (MeshOptions::fault_tolerance) does after a
// failure: revoke, agree, the failed ranks, the survivors' communicator.
// None of these takes the state's lock: they run while another thread may
// wait in an operation of the mesh, holding it.
#include <algorithm>

#include "../mesh_state.hpp"
#include "../mpi_check.hpp"
#include "../mpi_features.hpp"

namespace devmesh::detail {

namespace {

[[noreturn]] void not_fault_tolerant(const char* what) {
  throw Error(Status::unsupported, std::string(what) +
                                       " needs a mesh made with fault_tolerance (the option makes "
                                       "the root communicator and everything a revoke and a shrink need)");
}

// The root indices of the members of `group`, a group of root_comm's
// members (root_comm's ranks are root indices), ascending.
std::vector<index_t> root_indices(MPI_Comm root_comm, MPI_Group group) {
  int n = 0;
  DEVMESH_MPI(MPI_Group_size(group, &n));
  std::vector<int> ranks(static_cast<std::size_t>(n)), in_root(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  MPI_Group root_group = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Comm_group(root_comm, &root_group));
  const int rc = MPI_Group_translate_ranks(group, n, ranks.data(), root_group, in_root.data());
  MPI_Group_free(&root_group);
  check_mpi(rc, "MPI_Group_translate_ranks");
  std::vector<index_t> out(in_root.begin(), in_root.end());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Fault& MeshState::fault_of(const char* what) const {
  Fault* f = failure_->fault();
  if (!f) not_fault_tolerant(what);
  return *f;
}

MPI_Comm MeshState::fault_root(const char* what) const {
  const MPI_Comm root = fault_of(what).root();
  if (root == MPI_COMM_NULL) throw Error(Status::invalid_argument, std::string(what) + ": the mesh was released");
  return root;
}

void MeshState::revoke() {
  fault_of("revoke").revoke(Status::revoked, "revoked by the program on root index " + std::to_string(index_));
}

bool MeshState::is_revoked() { return fault_of("is_revoked").revoked(); }

std::vector<index_t> MeshState::failed_ranks() {
  const MPI_Comm root = fault_root("failed_ranks");
  MPI_Group failed = MPI_GROUP_NULL;
  DEVMESH_MPI(mpi::comm_get_failed(root, &failed));
  std::vector<index_t> known;
  try {
    known = root_indices(root, failed);
  } catch (...) {
    MPI_Group_free(&failed);
    throw;
  }
  MPI_Group_free(&failed);
  const std::vector<index_t> agreed = failure_->fault()->agreed();
  std::vector<index_t> out;
  std::set_union(known.begin(), known.end(), agreed.begin(), agreed.end(), std::back_inserter(out));
  return out;
}

bool MeshState::agree(bool flag) {
  const MPI_Comm root = fault_root("agree");
  // A failure the operation saw is raised at every survivor alike
  // (PROC_FAILED); acknowledged, the next round goes without the ranks
  // that did not contribute. Bounded: each round acknowledges at least
  // one more failed rank.
  const int size = static_cast<int>(root_size_);
  int rc = MPI_SUCCESS, out = 1;
  for (int round = 0; round <= size; ++round) {
    out = flag ? 1 : 0;
    rc = mpi::comm_agree(root, &out);
    if (mpi::status_of_class(rc) != Status::proc_failed) break;
    check_mpi(mpi::comm_ack_failed(root), "MPIX_Comm_ack_failed");
  }
  check_mpi(rc, "MPIX_Comm_agree");
  return out != 0;
}

MPI_Comm MeshState::shrink_root(std::vector<index_t>& failed) {
  const MPI_Comm root = fault_root("shrink");
  MPI_Comm survivors = MPI_COMM_NULL;
  DEVMESH_MPI(mpi::comm_shrink(root, &survivors));
  try {
    return_errors(survivors);
    // The shrunk communicator keeps the root's order: the failed set is
    // every root index not in it, the same on every survivor.
    MPI_Group group = MPI_GROUP_NULL;
    DEVMESH_MPI(MPI_Comm_group(survivors, &group));
    std::vector<index_t> alive;
    try {
      alive = root_indices(root, group);
    } catch (...) {
      MPI_Group_free(&group);
      throw;
    }
    MPI_Group_free(&group);
    failed.clear();
    for (index_t x = 0, k = 0; x < root_size_; ++x) {
      if (k < static_cast<index_t>(alive.size()) && alive[static_cast<std::size_t>(k)] == x)
        ++k;
      else
        failed.push_back(x);
    }
    failure_->fault()->agreed(failed);
    return survivors;
  } catch (...) {
    if (survivors != MPI_COMM_NULL) MPI_Comm_free(&survivors);
    throw;
  }
}

void MeshState::take_shrink(std::vector<index_t> old_index, index_t old_size) {
  old_index_ = std::move(old_index);
  old_size_ = old_size;
}

int MeshState::shrunk_index(index_t old_index) const {
  if (old_size_ == 0) throw Error(Status::invalid_argument, "shrunk_index: the mesh was not made by a shrink");
  if (old_index < 0 || old_index >= old_size_)
    throw Error(Status::invalid_argument, "shrunk_index: old root index " + std::to_string(old_index) +
                                              " is outside the shrunk root's " + std::to_string(old_size_) +
                                              " indices");
  const auto it = std::lower_bound(old_index_.begin(), old_index_.end(), old_index);
  return it != old_index_.end() && *it == old_index ? static_cast<int>(it - old_index_.begin()) : -1;
}

}  // namespace devmesh::detail
