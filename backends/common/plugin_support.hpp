// Support for backends written in C++ (backend_plugin.h is the interface):
// C++ exceptions inside, statuses at the plugin boundary, and one
// thread-local message per plugin for last_error(). Header-only, so every
// plugin gets its own copy of the message.
#pragma once

#include <exception>
#include <new>
#include <string>
#include <string_view>

#include "devmesh/backend_plugin.h"
#include "devmesh/status.hpp"

namespace devmesh::plugin {

inline std::string& last_error_text() {
  thread_local std::string text;
  return text;
}

inline int& last_mpi_code() {
  thread_local int code = 0;
  return code;
}

inline const char* last_error() noexcept { return last_error_text().c_str(); }
inline int last_mpi_error() noexcept { return last_mpi_code(); }

// Runs body; an exception becomes a status and the thread's message. Never
// throws.
template <class Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return DEVMESH_SUCCESS;
  } catch (const Error& e) {
    last_mpi_code() = e.mpi_code();
    try {
      last_error_text() = e.what();
    } catch (...) {
    }
    return static_cast<int>(e.status());
  } catch (const std::bad_alloc&) {
    last_mpi_code() = 0;
    last_error_text().clear();
    return DEVMESH_ERR_INTERNAL;
  } catch (const std::exception& e) {
    last_mpi_code() = 0;
    try {
      last_error_text() = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    return DEVMESH_ERR_INTERNAL;
  } catch (...) {
    return DEVMESH_ERR_INTERNAL;
  }
}

// Options as the core passes them to open(): parse helpers that name the key.
inline double seconds_option(std::string_view key, const char* value) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || value[used] != '\0' || !(v > 0))
    throw Error(Status::invalid_argument,
                "option " + std::string(key) + "=" + value + ": expected a positive number of seconds");
  return v;
}
inline long integer_option(std::string_view key, const char* value, long lo, long hi) {
  std::size_t used = 0;
  long v = 0;
  try {
    v = std::stol(value, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || value[used] != '\0' || v < lo || v > hi)
    throw Error(Status::invalid_argument, "option " + std::string(key) + "=" + value + ": expected an integer in [" +
                                              std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

}  // namespace devmesh::plugin
