// A PMPI layer that counts communicators made and freed in this process,
// collectives over MPI_COMM_WORLD, and every collective and point-to-point
// call on any communicator (linked into MPI test programs ahead of the MPI
// library).
#pragma once

#include <mpi.h>

#include "mpi_choice.h"

namespace comm_counter {
// Communicators a member of a new mesh holds right after creation: none,
// on every MPI (each dim's is made when first asked for).
inline constexpr int at_creation = 0;
// Communicators a mesh makes when the program frees its parent: none where
// dims' communicators come from their groups; otherwise the root
// communicator, made from the parent inside its MPI_Comm_free, as later
// communicators are made from it. DEVMESH_DIMS_FROM_GROUP is what the
// build chose (lib/runtime/meson.build), not MPI_VERSION: Open MPI 5 says
// 3.1.
inline constexpr int at_parent_free = DEVMESH_DIMS_FROM_GROUP ? 0 : 1;
// Communicators created by MPI_Comm_dup/idup/split/split_type/create/
// create_group/create_from_group and MPI_Cart_create/sub since process start.
long created();
// MPI_Comm_free calls that freed one.
long freed();
inline long live() { return created() - freed(); }
// Collective calls over MPI_COMM_WORLD (MPI_Allreduce, MPI_Allgather(v),
// MPI_Bcast, MPI_Comm_split_type) since process start.
long world_collectives();
// Calls of MPI's collectives (blocking and started: MPI_Allreduce,
// MPI_Allgather(v), MPI_Alltoall(v), MPI_Bcast, MPI_Gather(v),
// MPI_Scatter(v), MPI_Reduce, MPI_Reduce_scatter(_block), MPI_Barrier and
// their MPI_I* forms) and point to point (MPI_Send, MPI_Ssend, MPI_Recv,
// MPI_Isend, MPI_Irecv, MPI_Sendrecv) on any communicator, since process
// start. The large-count (_c) forms are not counted.
long data_calls();
// Seconds spent inside the collective calls this layer sees (the
// creations above, MPI_Allreduce, MPI_Allgather(v), MPI_Bcast on any
// communicator) since process start: a caller's time between them is its
// elapsed time less this.
double seconds_in_collectives();
}  // namespace comm_counter
