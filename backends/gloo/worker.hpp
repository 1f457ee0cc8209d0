// The Gloo backend's asynchrony: Gloo has no non-blocking collectives, so
// every communicator runs its started operations (version 4's i-forms) in
// order on a thread of its own, started by the first one. A started
// operation returns at once with a request that shares the task; the
// blocking collectives run on the caller's thread when nothing is pending,
// and otherwise queue behind the started ones and wait, so that every rank
// issues the same collectives in the same order on the context (one tag).
// Internal: not installed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace devmesh::gloo_backend {

struct Comm;

// What the plugin's test() and wait() end: a point-to-point transfer
// (point_to_point.cpp) or a task of the worker (below).
struct PendingOp {
  virtual ~PendingOp() = default;
  // Whether finish() would return (or throw) at once; never blocks.
  virtual bool ready() = 0;
  // Blocks until done; throws devmesh::Error on failure.
  virtual void finish() = 0;
};

// One operation for the worker: its body owns what it needs (copies of
// counts and displacements, temporaries) and reads and writes the caller's
// buffers, which stay the caller's until the request ends.
struct Task {
  std::function<void()> body;
  std::atomic<bool> done{false};
  std::mutex m;
  std::condition_variable cv;
  int status = 0;       // a devmesh status; under m, set before done
  std::string message;  // why it failed
};

class Worker {
 public:
  Worker() = default;
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker() { stop(); }
  // Queues a task (starting the thread on first use).
  std::shared_ptr<Task> submit(std::function<void()> body);
  // True when no task is queued or running.
  bool idle();
  // Ends the thread after the task it runs; tasks still queued fail with
  // DEVMESH_ERR_REVOKED (requests end before comm_destroy, so there are
  // none when the contract is kept). Idempotent.
  void stop();

 private:
  void loop();
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Task>> queue_;
  std::size_t pending_ = 0;  // queued or running
  bool stopping_ = false;
  std::thread thread_;
};

// Runs a task's body, recording its outcome (the body's devmesh::Error, or
// BACKEND for anything else), and wakes its waiters.
void execute(Task& t) noexcept;
// Blocks until t is done; throws its failure.
void finish_task(Comm& c, Task& t);

// The blocking form (request == NULL: inline when the worker is idle, else
// queued and waited for) or the started one (*request written).
void issue(Comm& c, void** request, std::function<void()> body);

}  // namespace devmesh::gloo_backend
