// The backend registry: one line per backend.
#include <string>

#include "devmesh/backend.hpp"
#include "mpi/mpi_backend.hpp"

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
  if (name != "mpi")
    throw Error(Status::invalid_argument, "unknown backend '" + std::string(name) + "' (known: mpi)");
}

std::unique_ptr<Backend> make_backend(std::string_view name) {
  check_backend_name(name);
  return backends::make_mpi_backend();
}

}  // namespace devmesh
