#include <string>

#include "nccl_backend.hpp"

namespace devmesh::detail {

int select_device(int requested, int caller_device, int host_local_rank, int visible) {
  if (visible < 1) throw Error(Status::unsupported, "needs a CUDA device: none is visible");
  if (requested < -1)
    throw Error(Status::invalid_argument, "device " + std::to_string(requested) +
                                              " is not a device number (use -1 for automatic)");
  if (requested >= visible)
    throw Error(Status::invalid_argument, "device " + std::to_string(requested) + " was requested but only " +
                                              std::to_string(visible) + " CUDA devices are visible");
  if (requested >= 0) return requested;
  if (caller_device >= 0 && caller_device < visible) return caller_device;
  if (host_local_rank < 0)
    throw Error(Status::invalid_argument, "host-local rank " + std::to_string(host_local_rank) + " is negative");
  return host_local_rank % visible;
}

}  // namespace devmesh::detail
