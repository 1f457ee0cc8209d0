// Request: a pending transfer of a plugin's isend or irecv.
#include <exception>
#include <utility>

#include "plugin_communicator.hpp"

namespace devmesh {

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
    table_ = other.table_;
    request_ = std::exchange(other.request_, nullptr);
  }
  return *this;
}

// A Request exists only for a table with isend, irecv, test and wait all
// present (checked at loading and registration). Each of test and wait
// frees the request when it reports completion or fails: the Request is
// empty after either.
void Request::wait() {
  if (!request_) return;
  void* r = std::exchange(request_, nullptr);
  detail::check(*table_, table_->wait(r), "wait");
}

bool Request::test() {
  if (!request_) return true;
  int done = 0;
  const int rc = table_->test(request_, &done);
  if (rc != DEVMESH_SUCCESS || done) request_ = nullptr;
  detail::check(*table_, rc, "test");
  return done != 0;
}

void Request::wait_all(std::span<Request> requests) {
  std::exception_ptr first;
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
