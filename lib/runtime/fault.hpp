// A mesh's fault tolerance (MeshOptions::fault_tolerance): whether the mesh
// is revoked and why, and everything a revoke must reach on this rank. One
// per root, shared by the root's state and its backend communicators; it
// has a lock of its own, never held across a blocking call, so that a
// revoke goes through while another thread waits in an operation of the
// mesh (holding the state's lock).
#pragma once

#include <mpi.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/layout.hpp"
#include "devmesh/status.hpp"

namespace devmesh::detail {

class Fault {
 public:
  // Whether the mesh is revoked: by this rank (revoke(), or a failure this
  // rank saw), or by a peer, whose revoke of the root communicator reached
  // this rank; in that case this rank revokes its own communicators too,
  // so that the members it shares only them with learn of it. Cheap: an
  // atomic load, and MPIX_Comm_is_revoked of the root communicator.
  bool revoked() noexcept {
    if (revoked_.load(std::memory_order_acquire)) return true;
    return root_revoked();
  }
  // The error an operation `what` of a revoked mesh fails with: REVOKED, or
  // TIMEOUT on the rank whose deadline passed, naming why.
  [[noreturn]] void fail(std::string_view what) const;
  // Revokes the mesh (idempotent; thread-safe; not collective): every MPI
  // communicator and backend communicator registered here, the root
  // communicator first. why: the status of the failure that led to it (a
  // peer's failure: PROC_FAILED; devmesh_revoke: REVOKED); reason: what
  // happened, for the error messages of later operations.
  void revoke(Status why, std::string reason) noexcept;
  // An error seen by an operation of the mesh: a failure (PROC_FAILED,
  // REVOKED, TIMEOUT) revokes the mesh. Other errors are left alone.
  void saw(const Error& e) noexcept;

  // --- what a revoke reaches -------------------------------------------------
  void set_root(MPI_Comm root) noexcept;
  void add(MPI_Comm comm);
  // A backend communicator's revoke, called with the status.
  void add(std::function<void(int)> revoke);
  // Forgets every communicator (the state frees them).
  void clear() noexcept;
  MPI_Comm root() const noexcept { return root_.load(std::memory_order_acquire); }
  // The failed set the survivors agreed on (root indices, ascending).
  void agreed(std::vector<index_t> failed);
  std::vector<index_t> agreed() const;

 private:
  bool root_revoked() noexcept;

  std::atomic<bool> revoked_{false};
  std::atomic<MPI_Comm> root_{MPI_COMM_NULL};
  mutable std::mutex mutex_;
  std::vector<MPI_Comm> comms_;
  std::vector<std::function<void(int)>> backends_;
  std::string reason_;
  std::vector<index_t> agreed_;
};

}  // namespace devmesh::detail
