// Request: a pending operation of a plugin (an isend or irecv, a started
// collective, a batch), ended through its communicator's request host so
// that its waits keep the mesh's fault state as blocking calls do.
#include <exception>
#include <utility>

#include "plugin_communicator_impl.hpp"

namespace devmesh {

namespace detail {

Request RequestHost::adopt(void* r) {
  try {
    const std::lock_guard<std::mutex> lock(mutex_);
    live_.push_back(r);
  } catch (...) {
    // Not kept, so not left pending: ended here, its failure swallowed.
    try {
      owner_->end_request(r, true);
    } catch (...) {
    }
    throw;
  }
  refs_.fetch_add(1, std::memory_order_relaxed);
  return Request(this, r);
}

bool RequestHost::end(void* r, bool wait) {
  PluginCommunicator* owner;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    owner = owner_;
  }
  if (!owner) throw Error(Status::invalid_argument, "the request's mesh was destroyed (the destroy ended it)");
  bool done = false;
  try {
    done = owner->end_request(r, wait);
  } catch (...) {
    forget(r);  // a failure ends the plugin's request too
    throw;
  }
  if (done) forget(r);
  return done;
}

Fault::Wait RequestHost::outer_wait(const char* what) {
  const std::lock_guard<std::mutex> lock(mutex_);
  return owner_ ? owner_->fault_.wait(what) : Fault::Wait(nullptr, what);
}

void RequestHost::forget(void* r) noexcept {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (void*& p : live_)
    if (p == r) {
      p = live_.back();
      live_.pop_back();
      return;
    }
}

void RequestHost::close() noexcept {
  std::vector<void*> pending;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    pending.swap(live_);
  }
  for (void* r : pending) {
    try {
      owner_->end_request(r, true);
    } catch (...) {
      // Documented: the destroy ends a pending Request, swallowing a failure.
    }
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  owner_ = nullptr;
}

}  // namespace detail

Request::~Request() {
  if (!request_) return;
  try {
    wait();
  } catch (...) {
    // Documented: a destroyed pending Request waits and swallows a failure.
  }
}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    this->~Request();
    host_ = std::exchange(other.host_, nullptr);
    request_ = std::exchange(other.request_, nullptr);
  }
  return *this;
}

void Request::release() noexcept {
  request_ = nullptr;
  if (detail::RequestHost* h = std::exchange(host_, nullptr)) h->release();
}

// A Request exists only for a table with test and wait present (checked at
// loading and registration). Each of test and wait frees the plugin's
// request when it reports completion or fails: the Request is empty after
// either, and after any error of the host.
void Request::wait() {
  if (!request_) return;
  void* const r = request_;
  try {
    host_->end(r, true);
  } catch (...) {
    release();
    throw;
  }
  release();
}

bool Request::test() {
  if (!request_) return true;
  bool done = false;
  try {
    done = host_->end(request_, false);
  } catch (...) {
    release();
    throw;
  }
  if (done) release();
  return done;
}

void Request::wait_all(std::span<Request> requests) {
  std::exception_ptr first;
  detail::RequestHost* host = nullptr;
  for (Request& r : requests)
    if (r.request_) {
      host = r.host_;
      break;
    }
  if (!host) return;
  // One wait of the mesh for the whole call: the inner waits nest in it.
  const detail::Fault::Wait outer = host->outer_wait("requests (wait_all)");
  for (Request& r : requests) {
    try {
      r.wait();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

std::size_t size_of(DataType t) noexcept {
  const int i = static_cast<int>(t);
  return i >= 0 && i < detail::datatypes ? detail::element_bytes(t) : 0;
}

}  // namespace devmesh
