// A GPU's NVLink domain through NVML, loaded at run time: the plugin never
// links NVML, and a machine without it has GPUs in no domain.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "common/plugin_support.hpp"
#include "nccl_backend.hpp"

namespace {

// The part of nvml.h read here (NVML API 12: nvmlGpuFabricInfo_t, the
// unversioned query drivers from 535 have).
using NvmlDevice = void*;
struct NvmlFabricInfo {
  unsigned char cluster_uuid[16];
  int status;  // nvmlReturn_t of the registration
  unsigned int clique_id;
  unsigned char state;         // nvmlGpuFabricState_t
  unsigned char reserved[64];  // room for fields a newer driver might write
};
using Init = int (*)();
using Shutdown = int (*)();
using HandleByBus = int (*)(const char*, NvmlDevice*);
using FabricInfo = int (*)(NvmlDevice, NvmlFabricInfo*);

void put(std::string_view s, char* out, std::size_t len) {
  if (!out || len == 0) return;
  const std::size_t n = std::min(s.size(), len - 1);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

devmesh::detail::NvlinkDomain lookup(int device) {
  using devmesh::Error;
  using devmesh::Status;
  char bus[32] = "";
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess)
    throw Error(Status::invalid_argument, "CUDA device " + std::to_string(device) + " does not exist");
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return {"", "NVML (libnvidia-ml.so.1) is not loadable"};
  const auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  const auto shutdown = reinterpret_cast<Shutdown>(dlsym(lib, "nvmlShutdown"));
  const auto by_bus = reinterpret_cast<HandleByBus>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  const auto fabric = reinterpret_cast<FabricInfo>(dlsym(lib, "nvmlDeviceGetGpuFabricInfo"));
  devmesh::detail::NvlinkDomain out{"", "this driver's NVML has no GPU fabric query"};
  if (init && shutdown && by_bus && fabric) {
    if (const int rc = init(); rc != devmesh::detail::nvml_success) {
      dlclose(lib);
      throw Error(Status::backend, "nvmlInit_v2 failed (NVML error " + std::to_string(rc) + ")");
    }
    NvmlDevice handle = nullptr;
    NvmlFabricInfo info{};
    int rc = by_bus(bus, &handle);
    if (rc == devmesh::detail::nvml_success) rc = fabric(handle, &info);
    shutdown();
    dlclose(lib);
    return devmesh::detail::nvlink_domain_of(rc, info.state, info.status, info.cluster_uuid, info.clique_id);
  }
  dlclose(lib);
  return out;
}

}  // namespace

extern "C" int devmesh_nccl_nvlink_domain(int device, char* id, std::size_t id_len, char* why, std::size_t why_len) {
  devmesh::detail::NvlinkDomain found;
  const int rc = devmesh::plugin::guarded([&] { found = lookup(device); });
  put(rc == DEVMESH_SUCCESS ? std::string_view(found.id) : std::string_view(), id, id_len);
  put(rc == DEVMESH_SUCCESS ? std::string_view(found.why) : std::string_view(devmesh::plugin::last_error()), why,
      why_len);
  return rc;
}
