// The backend registry: one line per backend.
#include <string>

#include "devmesh/backend.hpp"
#include "mpi/mpi_backend.hpp"
#include "nccl/nccl_backend.hpp"

namespace devmesh {

std::size_t size_of(DataType t) noexcept {
  switch (t) {
    case DataType::int8:
    case DataType::uint8: return 1;
    case DataType::float16:
    case DataType::bfloat16: return 2;
    case DataType::int32:
    case DataType::uint32:
    case DataType::float32: return 4;
    case DataType::int64:
    case DataType::uint64:
    case DataType::float64: return 8;
  }
  return 0;
}

void check_backend_name(std::string_view name) {
  if (name != "mpi" && name != "nccl")
    throw Error(Status::invalid_argument,
                "unknown backend '" + std::string(name) + "' (known: mpi, nccl)");
}

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options) {
  check_backend_name(name);
  if (name == "nccl") return backends::make_nccl_backend(options);
  return backends::make_mpi_backend();
}

}  // namespace devmesh
