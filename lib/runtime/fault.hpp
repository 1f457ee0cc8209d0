// A mesh's fault tolerance (MeshOptions::fault_tolerance): whether the mesh
// is revoked and why, and everything a revoke must reach on this rank. One
// per root, shared by the root's state and its backend communicators; it
// has a lock of its own, never held across a blocking call, so that a
// revoke goes through while another thread waits in an operation of the
// mesh (holding the state's lock).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "devmesh/layout.hpp"
#include "devmesh/status.hpp"

namespace devmesh::detail {

class Fault {
 public:
  // deadline: seconds any one wait of the mesh may take (0: none). With
  // one, the mesh's watcher thread revokes the mesh when a wait passes it.
  // The same thread probes the root communicator for a backend whose revoke stays
  // local (add(..., spreads = false)).
  explicit Fault(double deadline = 0);
  ~Fault();
  Fault(const Fault&) = delete;
  Fault& operator=(const Fault&) = delete;

  // A wait of the mesh (an operation that may block), for the deadline:
  // construct before the blocking call, destroy after. Nested waits count
  // once (the outermost). No-op without a deadline.
  class Wait {
   public:
    Wait(Fault* f, const char* what) noexcept : f_(f && f->deadline_ns_ > 0 ? f : nullptr) {
      if (f_) outer_ = f_->begin(what);
    }
    ~Wait() {
      if (f_ && outer_) f_->end();
    }
    Wait(const Wait&) = delete;
    Wait& operator=(const Wait&) = delete;

   private:
    Fault* f_;
    bool outer_ = false;
  };
  // The error a failed operation reports: TIMEOUT for the wait whose
  // deadline passed on this rank (its own revoke woke it), e otherwise.
  Error local(Error e) noexcept;
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
  // happened, for the error messages of later operations. from_watcher:
  // called from the deadline's own thread, which reaches only the backend
  // communicators whose revoke may run beside an operation
  // (DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD); the others bound their waits
  // by the deadline themselves.
  void revoke(Status why, std::string reason, bool from_watcher = false) noexcept;
  // An error seen by an operation of the mesh: a failure (PROC_FAILED,
  // REVOKED, TIMEOUT) revokes the mesh. Other errors are left alone.
  void saw(const Error& e) noexcept;

  // --- what a revoke reaches -------------------------------------------------
  void set_root(MPI_Comm root) noexcept;
  void add(MPI_Comm comm);
  // A backend communicator's revoke, called with the status; any_thread:
  // it may run while another thread is in an operation of it; spreads: it
  // reaches the other members' operations too. One that does not spread
  // (any_thread is then required, creation checks it) starts the watcher:
  // the watcher thread probes the root communicator every
  // watch_interval, and revokes the mesh on this rank as soon as a peer
  // revoked it or MPI reports a failed member, so that this rank's
  // backend communicators stop even while a thread is blocked in one.
  void add(std::function<void(int)> revoke, bool any_thread, bool spreads);
  static constexpr std::chrono::milliseconds watch_interval{50};
  // Forgets every communicator (the state frees them).
  void clear() noexcept;
  MPI_Comm root() const noexcept { return root_.load(std::memory_order_acquire); }
  // The failed set the survivors agreed on (root indices, ascending).
  void agreed(std::vector<index_t> failed);
  std::vector<index_t> agreed() const;

 private:
  bool root_revoked(bool from_watcher = false) noexcept;  // from_watcher: as for revoke()
  void start_watcher();                                   // under watch_mutex_
  void probe_root() noexcept;

  std::atomic<bool> revoked_{false};
  std::atomic<MPI_Comm> root_{MPI_COMM_NULL};
  mutable std::mutex mutex_;
  std::vector<MPI_Comm> comms_;
  std::vector<std::pair<std::function<void(int)>, bool>> backends_;  // revoke, any_thread
  std::string reason_;
  std::vector<index_t> agreed_;

  // The deadline and the watcher that keeps it.
  bool begin(const char* what) noexcept;
  void end() noexcept;
  void watch() noexcept;
  const std::int64_t deadline_ns_;
  std::atomic<std::int64_t> wait_start_{0};  // steady-clock ns of the waiting operation; 0: none
  std::atomic<const char*> wait_what_{nullptr};
  std::atomic<bool> timeout_pending_{false};  // the watcher revoked; the wait it cut gets TIMEOUT
  std::mutex watch_mutex_;
  std::condition_variable watch_cv_;
  bool stopping_ = false;
  std::atomic<bool> probes_root_{false};  // a backend's revoke does not spread
  // Held by the watcher while it calls MPI on the root communicator, and by
  // clear() before the state frees it.
  std::mutex probe_mutex_;
  std::thread watcher_;
};

// What an error with status BACKEND of a fault-tolerant mesh means, the
// one place that says it: PROC_FAILED while MPI knows a process of `comm`
// to have failed, REVOKED once `comm` or the mesh (fault, when given) is
// revoked, else e as it is. ULFM may learn of a death or a revoke some
// milliseconds after the operation failed: MPI is asked again every 10 ms
// for up to `patience`. An error of any other status is returned as it is.
Error failure_meaning(Error e, MPI_Comm comm, Fault* fault, std::chrono::milliseconds patience);

}  // namespace devmesh::detail
