// Status codes and the one exception type of devmesh.
//
// Every failure inside the C++ API is a devmesh::Error carrying one Status;
// the values are the C API's DEVMESH_* codes, one to one.
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20
#if DEVMESH_CXX20              // below C++20, export.hpp's #error is the only message

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>

namespace devmesh {

enum class Status : int {
  success = 0,
  invalid_argument = 1,  // null/empty/negative input, bad rank list, ndim < 1
  shape_mismatch = 2,    // products that must match do not; a split that does not fit
  unknown_dim = 3,       // a dim name the view does not have
  duplicate_name = 4,    // a name given twice or clashing with an existing one
  overlap = 5,           // two dims of one view cover the same root digits
  inconsistent = 6,      // ranks of one collective call passed different arguments
  not_member = 7,        // the caller is not a member of the mesh
  backend = 8,           // the communication backend (MPI, NCCL) failed
  unsupported = 9,       // the backend or build cannot do what was asked
  internal = 10,         // a bug in devmesh, or out of memory
  proc_failed = 11,      // a member of the operation's group died
  revoked = 12,          // the communicator was revoked (by a peer's failure or a deadline)
  timeout = 13,          // a deadline passed
};

// Short lower-case name of a status, e.g. "unknown_dim" (the planner's JSON
// and the reference vectors use these names).
DEVMESH_API std::string_view status_name(Status s) noexcept;
// What a status value means, e.g. "unknown dim" ("unknown status" for a
// value that is no Status): the text of the C API's devmesh_status_string.
// The names and descriptions come from one table (lib/model/status.cpp).
DEVMESH_API std::string_view status_description(int value) noexcept;
DEVMESH_API std::ostream& operator<<(std::ostream& os, Status s);

// An Error raised because an MPI call failed also keeps what MPI returned, so
// that callers can test it (e.g. mpi_class() == MPI_ERR_PROC_FAILED) instead
// of parsing the message. Other errors report 0 for both: 0 is MPI_SUCCESS
// in every MPI implementation, so "no MPI error" needs no <mpi.h> here.
class DEVMESH_API Error : public std::runtime_error {
 public:
  Error(Status status, const std::string& message) : std::runtime_error(message), status_(status) {}
  // `mpi_code` as the MPI call returned it, `mpi_class` its MPI_Error_class.
  Error(Status status, const std::string& message, int mpi_code, int mpi_class)
      : std::runtime_error(message), status_(status), mpi_code_(mpi_code), mpi_class_(mpi_class) {}
  Status status() const noexcept { return status_; }
  // The MPI error code of the failed call; 0 (MPI_SUCCESS) when not an MPI error.
  int mpi_code() const noexcept { return mpi_code_; }
  // The MPI error class of mpi_code(); 0 (MPI_SUCCESS) when not an MPI error.
  int mpi_class() const noexcept { return mpi_class_; }

 private:
  Status status_;
  int mpi_code_ = 0;
  int mpi_class_ = 0;
};

}  // namespace devmesh

#endif  // DEVMESH_CXX20
