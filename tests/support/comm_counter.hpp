// A PMPI layer that counts communicators made and freed in this process
// (linked into MPI test programs ahead of the MPI library).
#pragma once

namespace comm_counter {
// Communicators created by MPI_Comm_dup/idup/split/split_type/create/
// create_group/create_from_group, MPI_Cart_create/sub, MPI_Intercomm_* since process start.
long created();
// MPI_Comm_free calls that freed one.
long freed();
inline long live() { return created() - freed(); }
}  // namespace comm_counter
