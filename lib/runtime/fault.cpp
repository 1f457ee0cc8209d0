#include "fault.hpp"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "mpi_check.hpp"
#include "mpi_features.hpp"

namespace devmesh::detail {

namespace {

std::int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A fault-tolerant mesh ignores SIGPIPE, unless the program chose a
// disposition of its own, so that a write to the socket of a peer that died
// fails and the death is reported instead of ending the survivor without a
// word (docs/RELIABILITY.md, "Faults on two real hosts").
void survive_dead_sockets() noexcept {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) != 0) return;
  if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) return;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGPIPE, &ignore, nullptr);
}

}  // namespace

Fault::Fault(double deadline) : deadline_ns_(static_cast<std::int64_t>(deadline * 1e9)) {
  survive_dead_sockets();
  if (deadline_ns_ > 0) {
    std::lock_guard<std::mutex> lock(watch_mutex_);
    start_watcher();
  }
}

void Fault::start_watcher() {
  if (!watcher_.joinable()) watcher_ = std::thread([this] { watch(); });
}

Fault::~Fault() {
  if (watcher_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(watch_mutex_);
      stopping_ = true;
    }
    watch_cv_.notify_all();
    watcher_.join();
  }
}

bool Fault::begin(const char* what) noexcept {
  std::int64_t idle = 0;
  if (!wait_start_.compare_exchange_strong(idle, now_ns())) return false;
  wait_what_.store(what);
  return true;
}

void Fault::end() noexcept { wait_start_.store(0); }

// Checks the waiting operation a few times per deadline (at most every
// 200 ms, so that a wait is cut within the deadline plus a fifth of a
// second), and revokes the mesh when it has waited past the deadline; with
// a backend whose revoke stays local, also probes the root communicator
// every watch_interval.
void Fault::watch() noexcept {
  const std::int64_t deadline_step =
      deadline_ns_ > 0 ? std::clamp<std::int64_t>(deadline_ns_ / 10, 10'000'000, 200'000'000) : INT64_MAX;
  std::unique_lock<std::mutex> lock(watch_mutex_);
  for (;;) {
    const std::int64_t step = probes_root_.load()
                                  ? std::min<std::int64_t>(deadline_step, watch_interval / std::chrono::nanoseconds(1))
                                  : deadline_step;
    if (watch_cv_.wait_for(lock, std::chrono::nanoseconds(step), [this] { return stopping_; })) return;
    if (probes_root_.load() && !revoked_.load()) probe_root();
    if (deadline_ns_ <= 0) continue;
    const std::int64_t start = wait_start_.load();
    if (start == 0 || now_ns() - start < deadline_ns_ || revoked_.load()) continue;
    const char* what = wait_what_.load();
    char reason[160];
    std::snprintf(reason, sizeof reason, "a wait of %s passed the mesh's deadline of %.3g s", what ? what : "the mesh",
                  static_cast<double>(deadline_ns_) / 1e9);
    timeout_pending_.store(true);
    revoke(Status::timeout, reason, true);
  }
}

Error Fault::local(Error e) noexcept {
  if (e.status() == Status::timeout || !timeout_pending_.exchange(false)) return e;
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    return Error(Status::timeout, reason_ + " (the wait was cut: " + e.what() + ")", e.mpi_code(), e.mpi_class());
  } catch (...) {
    return Error(Status::timeout, "a wait passed the mesh's deadline");
  }
}

// The watcher's look at the root communicator: a probe (which also lets MPI
// progress, so that a peer's revoke arrives while this rank's threads wait
// elsewhere, on a GPU stream say), then whether the root is revoked. A
// probe failing (a failed member: PROC_FAILED; REVOKED) revokes the mesh
// here too. From the watcher's thread: only the backends that allow it are
// revoked, and those are the ones that need the watcher.
void Fault::probe_root() noexcept {
  std::lock_guard<std::mutex> probing(probe_mutex_);
  const MPI_Comm root = root_.load(std::memory_order_acquire);
  if (root == MPI_COMM_NULL) return;
  int flag = 0;
  const int rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, root, &flag, MPI_STATUS_IGNORE);
  if (root_revoked(true) || rc == MPI_SUCCESS) return;
  try {
    revoke(Status::revoked, "MPI reported a failure on the mesh's root communicator: " + mpi_error_text(rc), true);
  } catch (...) {
    revoke(Status::revoked, {}, true);
  }
}

bool Fault::root_revoked(bool from_watcher) noexcept {
  const MPI_Comm root = root_.load(std::memory_order_acquire);
  if (root == MPI_COMM_NULL || !mpi::comm_is_revoked(root)) return false;
  revoke(Status::revoked, "a member of the mesh revoked it", from_watcher);
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

void Fault::revoke(Status why, std::string reason, bool from_watcher) noexcept {
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
  for (auto& [b, any_thread] : backends_)
    if (any_thread || !from_watcher) b(status);
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

void Fault::add(std::function<void(int)> revoke, bool any_thread, bool spreads) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    backends_.emplace_back(std::move(revoke), any_thread);
  }
  if (spreads || probes_root_.exchange(true)) return;
  std::lock_guard<std::mutex> lock(watch_mutex_);
  start_watcher();
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
  std::lock_guard<std::mutex> probing(probe_mutex_);  // the watcher is not inside MPI on the root
  std::lock_guard<std::mutex> lock(mutex_);
  root_.store(MPI_COMM_NULL);
  comms_.clear();
  backends_.clear();
}

Error failure_meaning(Error e, MPI_Comm comm, Fault* fault, std::chrono::milliseconds patience) {
  if (e.status() != Status::backend) return e;
  const auto end = std::chrono::steady_clock::now() + patience;
  for (;;) {
    // MPI learns of a death or a revoke while it progresses.
    int pending = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &pending, MPI_STATUS_IGNORE);
    MPI_Group failed = MPI_GROUP_NULL;
    int n = 0;
    if (mpi::comm_get_failed(comm, &failed) == MPI_SUCCESS) {
      MPI_Group_size(failed, &n);
      MPI_Group_free(&failed);
    }
    if (n > 0)
      return Error(Status::proc_failed,
                   std::string(e.what()) + " (" + std::to_string(n) + " process(es) of the group failed, as MPI says)",
                   e.mpi_code(), e.mpi_class());
    if (mpi::comm_is_revoked(comm) || (fault && fault->revoked()))
      return Error(Status::revoked, std::string(e.what()) + " (another member revoked the mesh)", e.mpi_code(),
                   e.mpi_class());
    if (std::chrono::steady_clock::now() >= end) return e;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace devmesh::detail
