#include "devmesh/status.hpp"

#include <ostream>

namespace devmesh {

std::string_view status_name(Status s) noexcept {
  switch (s) {
    case Status::success: return "success";
    case Status::invalid_argument: return "invalid_argument";
    case Status::shape_mismatch: return "shape_mismatch";
    case Status::unknown_dim: return "unknown_dim";
    case Status::duplicate_name: return "duplicate_name";
    case Status::overlap: return "overlap";
    case Status::inconsistent: return "inconsistent";
    case Status::not_member: return "not_member";
    case Status::backend: return "backend";
    case Status::unsupported: return "unsupported";
    case Status::internal: return "internal";
  }
  return "unknown_status";
}

std::ostream& operator<<(std::ostream& os, Status s) { return os << status_name(s); }

}  // namespace devmesh
