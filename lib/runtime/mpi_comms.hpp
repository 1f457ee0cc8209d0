// The communicators devmesh makes over groups, by the call this MPI does
// best (mpi_features.hpp says which); errors returned.
#pragma once

#include <mpi.h>

#include <span>
#include <string>

#include "mpi_features.hpp"

namespace devmesh::detail::mpi {

// A communicator over `members` (ranks of root_group, in rank order),
// errors returned. Collective over those members. With dims_from_group:
// MPI_Comm_create_from_group, `tag` telling concurrent creations apart;
// `over` is not used. Without: MPI_Comm_create_group over `over`, a
// communicator whose group holds every member (the parent or the root
// communicator), with a tag derived from `tag`.
MPI_Comm comm_from_members(MPI_Group root_group, std::span<const int> members, const std::string& tag, MPI_Comm over);

// The same communicator by MPI_Comm_create over `over` (whose group is
// root_group, in its order), each caller passing its own members; it has
// `over`'s error handler. Collective over every rank of `over`: ULFM
// interrupts it when one dies or `over` is revoked. The callers' member
// lists must be disjoint or equal.
MPI_Comm comm_create_over(MPI_Group root_group, std::span<const int> members, MPI_Comm over);

// The communicator of a group that no communicator holds yet (MPI
// Sessions), errors returned. Collective over the group's members, who all
// pass the same tag. Without has_comm_from_group: Error(unsupported), no
// communication.
MPI_Comm comm_from_session_group(MPI_Group group, const std::string& tag);

}  // namespace devmesh::detail::mpi
