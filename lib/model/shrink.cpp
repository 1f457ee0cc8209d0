#include <algorithm>

#include "devmesh/view.hpp"

namespace devmesh {

Shrunk shrink(const View& root, std::span<const index_t> failed, std::optional<std::string_view> dim) {
  const index_t w = root.root_size();
  std::vector<char> dead(static_cast<std::size_t>(w), 0);
  for (index_t x : failed) {
    if (x < 0 || x >= w) throw Error(Status::invalid_argument, "failed rank " + std::to_string(x) + " is outside the root");
    dead[static_cast<std::size_t>(x)] = 1;
  }
  Shrunk out;
  if (!dim) {
    for (index_t x = 0; x < w; ++x)
      if (!dead[static_cast<std::size_t>(x)]) out.kept.push_back(x);
    if (out.kept.empty()) throw Error(Status::invalid_argument, "no survivor left");
    out.shape = {static_cast<index_t>(out.kept.size())};
    out.names = {root.flatten().names()[0]};
    return out;
  }
  const std::size_t d = root.dim_or_only(*dim);
  std::vector<char> drop(static_cast<std::size_t>(root.dims()[d].size()), 0);
  for (index_t x = 0; x < w; ++x)
    if (dead[static_cast<std::size_t>(x)]) drop[static_cast<std::size_t>(root.coordinate(x)[d])] = 1;
  for (index_t x = 0; x < w; ++x) {
    if (drop[static_cast<std::size_t>(root.coordinate(x)[d])]) {
      if (!dead[static_cast<std::size_t>(x)]) out.spares.push_back(x);
    } else {
      out.kept.push_back(x);
    }
  }
  out.shape = root.shape();
  out.shape[d] -= std::count(drop.begin(), drop.end(), 1);
  if (out.shape[d] == 0) throw Error(Status::invalid_argument, "no slice of " + std::string(*dim) + " is left");
  out.names = root.names();
  return out;
}

}  // namespace devmesh
