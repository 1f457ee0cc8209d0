// The NCCL backend: a dim's MPI group upgraded to an NCCL communicator.
#pragma once

#include <memory>

#include "devmesh/backend.hpp"

namespace devmesh::backends {

// Throws Error(unsupported) in a build without NCCL ("built without NCCL")
// or on a machine without a usable CUDA device ("no CUDA device: ...").
std::unique_ptr<Backend> make_nccl_backend(const BackendOptions& options);

}  // namespace devmesh::backends

namespace devmesh::detail {

// The CUDA device a rank uses (a pure function, no CUDA call):
//   requested >= 0          -> requested (must be < visible)
//   caller_device >= 0      -> caller_device (the caller already made one current)
//   otherwise               -> host_local_rank % visible
// Errors: visible < 1 -> unsupported ("no CUDA device"); requested >= visible
// or requested < -1 -> invalid_argument.
DEVMESH_API int select_device(int requested, int caller_device, int host_local_rank, int visible);

}  // namespace devmesh::detail
