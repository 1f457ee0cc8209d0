// The NCCL backend plugin: a dim's MPI group upgraded to an NCCL communicator.
#pragma once

#include <cstddef>
#include <string>

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

namespace devmesh::detail {

// A GPU's NVLink domain from NVML's GPU fabric info: the pair (cluster
// UUID, clique id) names it, as "<32 hex digits of the UUID>.<clique id>"
// (clique ids repeat across domains). `id` is empty when the GPU is in
// none, and `why` then says why not.
struct NvlinkDomain {
  std::string id;
  std::string why;
};

// NVML's fabric states (nvmlGpuFabricState_t) and the return codes read here.
inline constexpr int nvml_success = 0, nvml_not_supported = 3;
inline constexpr int fabric_not_supported = 0, fabric_not_started = 1, fabric_in_progress = 2, fabric_completed = 3;

// The domain that NVML's answer names (a pure function, no NVML call):
// query_rc is nvmlDeviceGetGpuFabricInfo's return code, the rest its
// fields. A GPU without a fabric, or whose registration is not complete or
// failed, or with an all-zero cluster UUID, is in no domain. Errors: a
// query_rc other than success or not-supported -> backend.
NvlinkDomain nvlink_domain_of(int query_rc, int state, int registration_rc, const unsigned char uuid[16],
                              unsigned clique);

// The NVLink domain of CUDA device `device`, from NVML (libnvidia-ml.so.1,
// loaded for the query, never linked; fabric.cpp). NVML absent or without
// the fabric query, or a driver it cannot reach: none, with the reason.
// Errors: a device CUDA does not know -> invalid_argument; NVML failing
// (nvmlInit_v2, the handle of the device's PCI bus id, the query) -> backend.
NvlinkDomain nvlink_domain(int device);

}  // namespace devmesh::detail

// The NVLink domain of CUDA device `device`, looked up through NVML
// (libnvidia-ml.so.1, loaded on first use; never linked), for topology
// discovery outside the plugin table. Writes the domain id, or "" when the
// GPU is in none, to id (id_len bytes, NUL-terminated, cut to fit) and the
// reason for none or the error to why. Returns DEVMESH_SUCCESS (in a domain
// or not; NVML missing or too old is "not"), or DEVMESH_ERR_BACKEND for an
// NVML failure, DEVMESH_ERR_INVALID_ARGUMENT for a device CUDA does not know.
extern "C" __attribute__((visibility("default"))) int devmesh_nccl_nvlink_domain(int device, char* id,
                                                                                 std::size_t id_len, char* why,
                                                                                 std::size_t why_len);
