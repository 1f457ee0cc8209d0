// The Gloo backend's worker thread and the requests of its tasks
// (worker.hpp).
//
// Threads: the core calls a communicator's members from one thread at a
// time (revoke excepted), so the caller's thread and the worker are the
// only two. They share the queue (under Worker::m_), a task's outcome
// (under Task::m, published by Task::done) and the communicator's broken
// state (gloo_comm.hpp, under Comm::state). The Gloo context is used by
// both at once only for point-to-point transfers on the caller's thread
// (their own slot prefixes) beside a collective on the worker; Gloo's TCP
// pairs serialise their sockets under their own locks, as they do for
// PyTorch's process groups, which start unbound-buffer transfers from the
// caller while a collective runs on a worker.
#include "worker.hpp"

#include <gloo/transport/pair.h>

#include <chrono>
#include <cstring>
#include <exception>
#include <new>
#include <typeinfo>
#include <utility>

#include "gloo_comm.hpp"

namespace devmesh::gloo_backend {
namespace {

void complete(Task& t, int status, std::string message) {
  {
    std::lock_guard<std::mutex> lock(t.m);
    t.status = status;
    t.message = std::move(message);
    t.done.store(true, std::memory_order_release);
  }
  t.cv.notify_all();
}

// The request of a started operation.
struct TaskRequest final : PendingOp {
  TaskRequest(Comm& c, std::shared_ptr<Task> t) : comm(&c), task(std::move(t)) {}
  bool ready() override { return task->done.load(std::memory_order_acquire); }
  void finish() override { finish_task(*comm, *task); }
  Comm* comm;
  std::shared_ptr<Task> task;
};

bool wait_done(Task& t, std::chrono::steady_clock::duration d) {
  std::unique_lock<std::mutex> lock(t.m);
  return t.cv.wait_for(lock, d, [&] { return t.done.load(std::memory_order_acquire); });
}

}  // namespace

// gloo::transport::tcp::Pair::signalExceptionExternal(const std::string&):
// gives the pair an exception and fails every unbound buffer pending on it.
// The installed gloo/transport/tcp/pair.h cannot be included (it needs
// gloo/common/memory.h, which libgloo-dev does not ship), so the member is
// named by its symbol; in the Itanium C++ ABI a member returning a class by
// value takes the result's address, then `this`, then its arguments, as
// this free function does.
extern std::exception_ptr tcp_pair_signal_exception(void* pair, const std::string& msg) __asm__(
    "_ZN4gloo9transport3tcp4Pair23signalExceptionExternalERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE");

namespace {

void fail_pairs(Comm& c, const std::string& why) {
  for (int r = 0; r < c.context->size; ++r) {
    if (r == c.context->rank) continue;
    gloo::transport::Pair* p = c.context->getPair(r).get();
    // tcp::Pair's first base is transport::Pair: the same address.
    if (p != nullptr && std::strcmp(typeid(*p).name(), "N4gloo9transport3tcp4PairE") == 0)
      tcp_pair_signal_exception(p, "the communicator was closed: " + why);
  }
}

}  // namespace

// Closing a pair's socket wakes the peer but not this rank's own waits on
// it: each pair is given an exception first, which fails the unbound
// buffers pending on it (Gloo's waits then throw).
void close_connections(Comm& c, std::string why, int status) {
  {
    std::lock_guard<std::mutex> lock(c.state);
    if (c.is_broken.load()) return;
    c.broken = why;
    c.revoke_status = status;
    c.is_broken.store(true);
  }
  try {
    fail_pairs(c, why);
  } catch (...) {
  }
  try {
    c.context->closeConnections();
  } catch (...) {
  }
}

void execute(Task& t) noexcept {
  try {
    t.body();
    complete(t, 0, {});
  } catch (const Error& e) {
    complete(t, static_cast<int>(e.status()), e.what());
  } catch (const std::bad_alloc&) {
    complete(t, static_cast<int>(Status::internal), "out of memory");
  } catch (const std::exception& e) {
    complete(t, static_cast<int>(Status::backend), std::string("internal error: ") + e.what());
  } catch (...) {
    complete(t, static_cast<int>(Status::internal), "unknown exception");
  }
  t.body = nullptr;  // the temporaries go now, not with the last request
}

// Every Gloo operation of a task waits at most the communicator's timeout
// (setTimeout), so a task ends within about that after it starts; a wait
// bounds itself as well (a task queued behind others starts later): past
// the timeout and a grace it closes the connections (the task then fails
// at once) and reports TIMEOUT. A revoke closes them too.
void finish_task(Comm& c, Task& t) {
  const auto grace = std::chrono::seconds(5);
  if (!wait_done(t, c.timeout + grace)) {
    close_connections(c, "a started operation did not end within the timeout", static_cast<int>(Status::timeout));
    if (!wait_done(t, grace))
      throw Error(Status::timeout, "the started operation did not end within the timeout (" +
                                       std::to_string(c.timeout.count()) + " ms); it was abandoned");
  }
  std::lock_guard<std::mutex> lock(t.m);
  if (t.status != 0) throw Error(static_cast<Status>(t.status), t.message);
}

std::shared_ptr<Task> Worker::submit(std::function<void()> body) {
  auto t = std::make_shared<Task>();
  t->body = std::move(body);
  {
    std::lock_guard<std::mutex> lock(m_);
    if (stopping_) throw Error(Status::revoked, "the communicator is being destroyed");
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    queue_.push_back(t);
    ++pending_;
  }
  cv_.notify_one();
  return t;
}

bool Worker::idle() {
  std::lock_guard<std::mutex> lock(m_);
  return pending_ == 0;
}

void Worker::loop() {
  for (;;) {
    std::shared_ptr<Task> t;
    {
      std::unique_lock<std::mutex> lock(m_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      t = std::move(queue_.front());
      queue_.pop_front();
      if (stopping_) {
        --pending_;
        lock.unlock();
        complete(*t, static_cast<int>(Status::revoked), "the communicator was destroyed before the operation ran");
        continue;
      }
    }
    execute(*t);
    std::lock_guard<std::mutex> lock(m_);
    --pending_;
  }
}

void Worker::stop() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void issue(Comm& c, void** request, std::function<void()> body) {
  if (request == nullptr && c.worker.idle()) {
    body();
    return;
  }
  std::shared_ptr<Task> t = c.worker.submit(std::move(body));
  if (request == nullptr) {
    finish_task(c, *t);
    return;
  }
  *request = static_cast<PendingOp*>(new TaskRequest(c, std::move(t)));
}

}  // namespace devmesh::gloo_backend
