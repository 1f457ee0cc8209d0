// What differs between the MPI libraries devmesh builds against, in one
// place. The build asks the MPI library for the functions themselves (see
// lib/runtime/meson.build), never MPI_VERSION, which need not tell what an
// MPI has (README.md, "How to pick the MPI").
#pragma once

#include <mpi.h>

#include <span>
#include <string>
#include <vector>

#include "devmesh/status.hpp"
#include "runtime/mpi_features_config.h"

namespace devmesh::detail::mpi {

// Whether this MPI makes a communicator straight from a group
// (MPI_Comm_create_from_group, the MPI 4 Sessions model): what a mesh from
// a group (Mesh::create_from_group) needs.
inline constexpr bool has_comm_from_group = DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP != 0;

// Whether a dim's communicator is made straight from its group
// (MPI_Comm_create_from_group). Otherwise it is made with
// MPI_Comm_create_group over a communicator that holds the group: the
// program's parent while it lives, else the root communicator (see
// MeshState). Under Open MPI dims take the parent's path, as with an MPI
// that lacks the function, since its MPI_Comm_create_from_group is far
// slower and refused by its UCX PML (docs/BENCHMARKS.md, "Open MPI 5.0.11
// (PyPI wheel)").
inline constexpr bool dims_from_group = has_comm_from_group && DEVMESH_MPI_IS_OPEN_MPI == 0;

// --- fault tolerance (ULFM) ------------------------------------------------
// Whether this MPI has the ULFM functions devmesh's fault_tolerance option
// uses (MPIX_Comm_revoke, _is_revoked, _shrink, _agree, _get_failed): Open
// MPI 5; MPICH lacks MPIX_Comm_is_revoked.
inline constexpr bool has_ulfm = DEVMESH_HAVE_ULFM != 0;
// Why fault tolerance cannot run in this process, "" when it can: the
// functions are missing from the build, or the MPI runs without its fault
// tolerance on (Open MPI: mpirun --with-ft ulfm sets the MPI_FT attribute
// of MPI_COMM_WORLD). Not collective; the same on every rank of a job.
std::string ulfm_unavailable();
// The status of an MPI error class: PROC_FAILED for MPIX_ERR_PROC_FAILED
// (and _PENDING), REVOKED for MPIX_ERR_REVOKED, else BACKEND.
Status status_of_class(int cls) noexcept;
// The ULFM calls, where has_ulfm (else MPI_ERR_OTHER, never called then).
int comm_revoke(MPI_Comm comm) noexcept;
bool comm_is_revoked(MPI_Comm comm) noexcept;
int comm_shrink(MPI_Comm comm, MPI_Comm* survivors) noexcept;
int comm_agree(MPI_Comm comm, int* flag) noexcept;
// The group of comm's members this rank knows to have failed.
int comm_get_failed(MPI_Comm comm, MPI_Group* failed) noexcept;
// Acknowledges every failure this rank knows of on comm (so that
// comm_agree does not report them again).
int comm_ack_failed(MPI_Comm comm) noexcept;
// Frees comm (MPI_COMM_NULL: nothing), unless it is revoked: a revoked
// communicator is left to MPI_Finalize, since a peer's late revoke of a
// freed one may reach, and crash, a communicator made since in its place
// (docs/RELIABILITY.md, "Faults"). Sets comm to MPI_COMM_NULL; returns
// whether it freed a communicator.
bool free_comm(MPI_Comm& comm) noexcept;

// The MPI standard version the library reports, "4.1".
std::string version_text();

}  // namespace devmesh::detail::mpi
