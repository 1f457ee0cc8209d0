// Built when meson did not find CUDA and NCCL.
#include "nccl_backend.hpp"

namespace devmesh::backends {

std::unique_ptr<Backend> make_nccl_backend(const BackendOptions&) {
  throw Error(Status::unsupported,
              "backend 'nccl' is not available: devmesh was built without NCCL "
              "(reconfigure with -Dnccl=enabled on a machine with CUDA and NCCL)");
}

}  // namespace devmesh::backends
