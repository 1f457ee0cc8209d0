// The MPI backend, built into libdevmesh behind the plugin interface: a
// dim's communicator is its MPI sub-communicator itself.
#pragma once

#include <mpi.h>

#include "devmesh/backend.hpp"
#include "devmesh/backend_plugin.h"

namespace devmesh::backends {

// MPI datatype and operation of devmesh's enums. float16/bfloat16 travel as
// 16-bit words; MPI has no reduction for them, which the backend's
// reduce_supported says (the core refuses those before calling it).
MPI_Datatype mpi_datatype(DataType type);
MPI_Op mpi_op(ReduceOp op);

// The backend's plugin table (version 4, through its first member), which
// the core's registry serves as the built-in backend "mpi".
const devmesh_backend_v1_t& mpi_table();

}  // namespace devmesh::backends
