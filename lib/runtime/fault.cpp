#include "fault.hpp"

#include "mpi_features.hpp"

namespace devmesh::detail {

bool Fault::root_revoked() noexcept {
  const MPI_Comm root = root_.load(std::memory_order_acquire);
  if (root == MPI_COMM_NULL || !mpi::comm_is_revoked(root)) return false;
  revoke(Status::revoked, "a member of the mesh revoked it");
  return true;
}

void Fault::fail(std::string_view what) const {
  std::string reason;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    reason = reason_;
  }
  throw Error(Status::revoked, std::string(what) + ": the mesh is revoked (" + reason + ")");
}

void Fault::revoke(Status why, std::string reason) noexcept {
  // Under the lock (no copies that could fail): revoking is local and
  // returns at once, for MPI and for the backends' revoke.
  std::lock_guard<std::mutex> lock(mutex_);
  if (revoked_.load(std::memory_order_relaxed)) return;
  reason_ = std::move(reason);
  revoked_.store(true, std::memory_order_release);
  // Revoking a communicator a peer revoked already is harmless (ULFM: a
  // revoke is idempotent); the root first, so that every member learns of
  // it even where this rank shares no other communicator with it.
  if (const MPI_Comm root = root_.load(); root != MPI_COMM_NULL) mpi::comm_revoke(root);
  for (MPI_Comm c : comms_) mpi::comm_revoke(c);
  const int status = static_cast<int>(why == Status::timeout ? Status::revoked : why);
  for (auto& b : backends_) b(status);
}

void Fault::saw(const Error& e) noexcept {
  const Status s = e.status();
  if (s == Status::proc_failed || s == Status::revoked || s == Status::timeout) {
    try {
      revoke(s, e.what());
    } catch (...) {
      revoke(s, {});
    }
  }
}

void Fault::set_root(MPI_Comm root) noexcept { root_.store(root, std::memory_order_release); }

void Fault::add(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  comms_.push_back(comm);
}

void Fault::add(std::function<void(int)> revoke) {
  std::lock_guard<std::mutex> lock(mutex_);
  backends_.push_back(std::move(revoke));
}

void Fault::agreed(std::vector<index_t> failed) {
  std::lock_guard<std::mutex> lock(mutex_);
  agreed_ = std::move(failed);
}

std::vector<index_t> Fault::agreed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return agreed_;
}

void Fault::clear() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  root_.store(MPI_COMM_NULL);
  comms_.clear();
  backends_.clear();
}

}  // namespace devmesh::detail
