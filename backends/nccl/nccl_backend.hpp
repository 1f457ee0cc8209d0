// The NCCL backend plugin: a dim's MPI group upgraded to an NCCL communicator.
#pragma once

#include "devmesh/backend.hpp"

namespace devmesh::detail {

// The CUDA device a rank uses (a pure function, no CUDA call):
//   requested >= 0          -> requested (must be < visible)
//   caller_device >= 0      -> caller_device (the caller already made one current)
//   otherwise               -> host_local_rank % visible
// Errors: visible < 1 -> unsupported ("no CUDA device"); requested >= visible
// or requested < -1 -> invalid_argument.
int select_device(int requested, int caller_device, int host_local_rank, int visible);

}  // namespace devmesh::detail
