// MPI return codes inside a C++ plugin (backend_plugin.h): the text from
// the core's host services (safe on every MPI), the status from the error
// class (ULFM's failure classes where the MPI defines them). Header-only:
// every plugin keeps its own host pointer.
#pragma once

#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <string>

#include "devmesh/backend_plugin.h"
#include "devmesh/status.hpp"

namespace devmesh::plugin {

// The core's services, as init_host gave them (null before).
inline const devmesh_backend_host_t*& host() {
  static const devmesh_backend_host_t* given = nullptr;
  return given;
}

// PROC_FAILED for MPIX_ERR_PROC_FAILED (and _PENDING), REVOKED for
// MPIX_ERR_REVOKED, else BACKEND.
inline Status status_of_mpi_class(int cls) noexcept {
#if defined(MPIX_ERR_PROC_FAILED) && defined(MPIX_ERR_PROC_FAILED_PENDING) && defined(MPIX_ERR_REVOKED)
  if (cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_PROC_FAILED_PENDING) return Status::proc_failed;
  if (cls == MPIX_ERR_REVOKED) return Status::revoked;
#endif
  (void)cls;
  return Status::backend;
}

// Error("MPI_Comm_split failed: <MPI's text> (MPI error class N)", code, N).
[[noreturn]] inline void throw_mpi_error(int code, const char* call) {
  int cls = code;
  if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = code;
  char text[MPI_MAX_ERROR_STRING + 64] = "";
  host()->mpi_error(code, text, sizeof text, nullptr);
  std::string what(call);
  throw Error(status_of_mpi_class(cls), what.substr(0, what.find('(')) + " failed: " + text, code, cls);
}

inline void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, call);
}

}  // namespace devmesh::plugin

// DEVMESH_PLUGIN_MPI(MPI_Comm_rank(comm, &rank)) throws when the call fails.
#define DEVMESH_PLUGIN_MPI(call) ::devmesh::plugin::check_mpi((call), #call)
