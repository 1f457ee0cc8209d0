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

using devmesh::Error;
using devmesh::Status;
using devmesh::detail::NvlinkDomain;

// The part of nvml.h read here, from NVML's documentation: device handles,
// the fabric info of nvmlDeviceGetGpuFabricInfo (drivers from 535) and its
// versioned form, nvmlGpuFabricInfo_v2_t of nvmlDeviceGetGpuFabricInfoV
// (the version in its first member: the struct's size | 2 << 24).
using NvmlDevice = void*;
struct NvmlFabricInfo {
  unsigned char cluster_uuid[16];
  int status;  // nvmlReturn_t of the registration
  unsigned int clique_id;
  unsigned char state;         // nvmlGpuFabricState_t
  unsigned char reserved[64];  // room, should a driver write past the documented fields
};
struct NvmlFabricInfoV2 {
  unsigned int version;
  unsigned char cluster_uuid[16];
  int status;
  unsigned int clique_id;
  unsigned char state;
  unsigned int health_mask;
};
constexpr unsigned fabric_info_v2 = static_cast<unsigned>(sizeof(NvmlFabricInfoV2)) | (2u << 24);
// nvmlReturn_t values read here besides success and not-supported.
constexpr int nvml_driver_not_loaded = 9, nvml_library_not_found = 12, nvml_function_not_found = 13,
              nvml_argument_version_mismatch = 25;

using Init = int (*)();
using Shutdown = int (*)();
using HandleByBus = int (*)(const char*, NvmlDevice*);
using FabricInfo = int (*)(NvmlDevice, NvmlFabricInfo*);
using FabricInfoV = int (*)(NvmlDevice, NvmlFabricInfoV2*);

void put(std::string_view s, char* out, std::size_t len) {
  if (!out || len == 0) return;
  const std::size_t n = std::min(s.size(), len - 1);
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

// NVML, opened and initialised for one query.
class Nvml {
 public:
  Nvml() : lib_(dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {}
  ~Nvml() {
    if (initialised_) shutdown_();
    if (lib_) dlclose(lib_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // Why NVML cannot answer here ("" when it can); throws when it fails.
  std::string open() {
    if (!lib_) return "NVML (libnvidia-ml.so.1) is not loadable";
    const auto init = reinterpret_cast<Init>(dlsym(lib_, "nvmlInit_v2"));
    shutdown_ = reinterpret_cast<Shutdown>(dlsym(lib_, "nvmlShutdown"));
    by_bus_ = reinterpret_cast<HandleByBus>(dlsym(lib_, "nvmlDeviceGetHandleByPciBusId_v2"));
    fabric_v_ = reinterpret_cast<FabricInfoV>(dlsym(lib_, "nvmlDeviceGetGpuFabricInfoV"));
    fabric_ = reinterpret_cast<FabricInfo>(dlsym(lib_, "nvmlDeviceGetGpuFabricInfo"));
    if (!init || !shutdown_ || !by_bus_ || (!fabric_v_ && !fabric_))
      return "this driver's NVML has no GPU fabric query";
    const int rc = init();
    if (rc == nvml_driver_not_loaded || rc == nvml_library_not_found)
      return "NVML cannot reach the driver (NVML error " + std::to_string(rc) + ")";
    if (rc != devmesh::detail::nvml_success)
      throw Error(Status::backend, "nvmlInit_v2 failed (NVML error " + std::to_string(rc) + ")");
    initialised_ = true;
    return {};
  }

  // The domain of the GPU at PCI bus id `bus`: the versioned query where
  // the driver has it, else the unversioned one.
  NvlinkDomain domain(const char* bus) const {
    NvmlDevice handle = nullptr;
    int rc = by_bus_(bus, &handle);
    if (rc != devmesh::detail::nvml_success)
      throw Error(Status::backend, std::string("nvmlDeviceGetHandleByPciBusId_v2 found no GPU at ") + bus +
                                       " (NVML error " + std::to_string(rc) + ")");
    if (fabric_v_) {
      NvmlFabricInfoV2 v{};
      v.version = fabric_info_v2;
      rc = fabric_v_(handle, &v);
      if (rc != nvml_argument_version_mismatch && rc != nvml_function_not_found)
        return devmesh::detail::nvlink_domain_of(rc, v.state, v.status, v.cluster_uuid, v.clique_id);
      if (!fabric_) return {"", "this driver's NVML does not know version 2 of the GPU fabric info"};
    }
    NvmlFabricInfo info{};
    rc = fabric_(handle, &info);
    return devmesh::detail::nvlink_domain_of(rc, info.state, info.status, info.cluster_uuid, info.clique_id);
  }

 private:
  void* lib_;
  bool initialised_ = false;
  Shutdown shutdown_ = nullptr;
  HandleByBus by_bus_ = nullptr;
  FabricInfoV fabric_v_ = nullptr;
  FabricInfo fabric_ = nullptr;
};

}  // namespace

namespace devmesh::detail {

NvlinkDomain nvlink_domain(int device) {
  char bus[32] = "";
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess)
    throw Error(Status::invalid_argument, "CUDA device " + std::to_string(device) + " does not exist");
  Nvml nvml;
  if (std::string why = nvml.open(); !why.empty()) return {"", std::move(why)};
  return nvml.domain(bus);
}

}  // namespace devmesh::detail

extern "C" int devmesh_nccl_nvlink_domain(int device, char* id, std::size_t id_len, char* why, std::size_t why_len) {
  NvlinkDomain found;
  const int rc = devmesh::plugin::guarded([&] { found = devmesh::detail::nvlink_domain(device); });
  put(rc == DEVMESH_SUCCESS ? std::string_view(found.id) : std::string_view(), id, id_len);
  put(rc == DEVMESH_SUCCESS ? std::string_view(found.why) : std::string_view(devmesh::plugin::last_error()), why,
      why_len);
  return rc;
}
