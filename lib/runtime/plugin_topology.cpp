// The levels a backend sees around its device (BackendInstance::levels).
#include "plugins.hpp"

namespace devmesh::detail {

std::string BackendInstance::levels(int /*host_local_rank*/) const { return {}; }

}  // namespace devmesh::detail
