// The one checking hook for MPI return codes inside devmesh.
#pragma once

#include <mpi.h>

#include <string>

#include "devmesh/status.hpp"

namespace devmesh::detail {

// Error(backend, "MPI_Comm_split failed: <MPI_Error_string> (MPI error class
// N)", code, N).
[[noreturn]] void throw_mpi_error(int code, const char* call);

inline void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) throw_mpi_error(code, call);
}

// MPI's text for an error code, read through a buffer larger than
// MPI_MAX_ERROR_STRING, since an MPI may write past it (docs/RELIABILITY.md,
// "Faults on two real hosts"); "" when MPI gives none.
std::string mpi_error_text(int code);

// Whether MPI knows code as an error (MPI_Error_class succeeds with a class
// in [1, MPI_LASTUSEDCODE]); *cls gets the class, or 0 when not.
bool mpi_error_known(int code, int* cls);

// Makes a communicator devmesh just created report errors as return codes
// (MPI_ERRORS_RETURN). If that fails, frees it and throws Error(backend).
// MPI_COMM_NULL is left alone.
void return_errors(MPI_Comm& comm);

// Throws Error(invalid_argument) unless MPI can be used on parent: not
// after MPI_Finalize, and before (or without) MPI_Init only where the
// Sessions model allows it: an MPI with communicators from groups and a parent other than MPI_COMM_WORLD and
// MPI_COMM_SELF (which MPI_Init makes), i.e. one made from a session's group.
void check_parent_usable(MPI_Comm parent);

// A communicator with a request that will never complete (a wait cut by a
// revoke) is never freed, since MPI cannot cancel a collective and freeing
// it may crash a later MPI call (docs/ERRORS.md, "Failures").
// leave_unfreed(comm) says so of a communicator devmesh hands out (the
// built-in MPI backend, whose first interruptible collective makes its
// duplicate by MPI_Comm_idup on it); the mesh then releases it without
// MPI_Comm_free (left_unfreed(comm) is true once, and forgets it).
void leave_unfreed(MPI_Comm comm);
bool left_unfreed(MPI_Comm comm);

}  // namespace devmesh::detail

// DEVMESH_MPI(MPI_Comm_rank(comm, &rank)) throws Error(backend) when the call
// fails: the call, MPI's error string and class in the message, the code and
// class in Error::mpi_code() and Error::mpi_class().
#define DEVMESH_MPI(call) ::devmesh::detail::check_mpi((call), #call)
