#include <string>

#include "nccl_backend.hpp"

namespace devmesh::detail {

int select_device(int requested, int caller_device, int host_local_rank, int visible) {
  if (visible < 1) throw Error(Status::unsupported, "needs a CUDA device: none is visible");
  if (requested < -1)
    throw Error(Status::invalid_argument,
                "device " + std::to_string(requested) + " is not a device number (use -1 for automatic)");
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

namespace devmesh::detail {

NvlinkDomain nvlink_domain_of(int query_rc, int state, int registration_rc, const unsigned char uuid[16],
                              unsigned clique) {
  if (query_rc == nvml_not_supported || (query_rc == nvml_success && state == fabric_not_supported))
    return {"", "the GPU has no NVLink fabric (NVML: not supported)"};
  if (query_rc != nvml_success)
    throw Error(Status::backend, "NVML's GPU fabric query failed (NVML error " + std::to_string(query_rc) + ")");
  if (state == fabric_not_started || state == fabric_in_progress)
    return {"", std::string("the GPU's NVLink fabric registration is ") +
                    (state == fabric_not_started ? "not started" : "in progress")};
  if (state != fabric_completed) return {"", "NVML reports an unknown fabric state " + std::to_string(state)};
  if (registration_rc != nvml_success)
    return {"", "the GPU's NVLink fabric registration failed (NVML error " + std::to_string(registration_rc) + ")"};
  static constexpr char hex[] = "0123456789abcdef";
  std::string id;
  bool zero = true;
  for (int i = 0; i < 16; ++i) {
    id += hex[uuid[i] >> 4];
    id += hex[uuid[i] & 15];
    zero = zero && uuid[i] == 0;
  }
  if (zero) return {"", "the GPU's fabric reports no cluster (an all-zero cluster UUID)"};
  return {id + "." + std::to_string(clique), ""};
}

}  // namespace devmesh::detail
