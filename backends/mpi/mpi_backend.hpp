// The MPI backend, built into libdevmesh behind the plugin interface: a
// dim's communicator is its MPI sub-communicator itself.
#pragma once

#include <mpi.h>

#include "devmesh/backend.hpp"

namespace devmesh::backends {

// MPI datatype and operation of devmesh's enums. float16/bfloat16 travel as
// 16-bit words (no MPI reduction for them): reducing them throws
// Error(unsupported).
MPI_Datatype mpi_datatype(DataType type);
MPI_Op mpi_op(ReduceOp op, DataType type);

}  // namespace devmesh::backends
