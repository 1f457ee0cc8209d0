// A PMPI layer that counts communicators made and freed in this process
// (linked into MPI test programs ahead of the MPI library).
#pragma once

#include <mpi.h>

namespace comm_counter {
// Communicators a member of a new mesh holds right after creation: none
// with MPI 4 (each is made from a group when first asked for); with MPI 3
// the root communicator, made at creation because MPI_Comm_create_group
// needs a parent over the members. comm_count() counts it too.
inline constexpr int at_creation = MPI_VERSION >= 4 ? 0 : 1;
// Communicators created by MPI_Comm_dup/idup/split/split_type/create/
// create_group/create_from_group, MPI_Cart_create/sub, MPI_Intercomm_* since process start.
long created();
// MPI_Comm_free calls that freed one.
long freed();
inline long live() { return created() - freed(); }
}  // namespace comm_counter
