// devmesh-plan's JSON: the whole final view, or one member's place in it.

#include "plan.hpp"

namespace devmesh::plan {

nlohmann::ordered_json to_json(const View& view, const std::optional<Member>& member) {
  using json = nlohmann::ordered_json;
  json dims = json::array();
  if (member) {
    for (std::size_t d = 0; d < view.ndim(); ++d)
      dims.push_back({{"name", view.dims()[d].name},
                      {"size", view.dims()[d].size()},
                      {"local_rank", view.local_rank(d, member->index)},
                      {"group", view.group(d, member->index)}});
    return {{"rank", member->rank}, {"coordinate", view.coordinate(member->index)}, {"dims", dims}};
  }
  if (view.root_size() > max_listed_ranks)
    throw Error(Status::invalid_argument,
                "the mesh has " + std::to_string(view.root_size()) + " ranks, too many to list every group (at most " +
                    std::to_string(max_listed_ranks) + "); ask about one rank with --rank");
  for (std::size_t d = 0; d < view.ndim(); ++d)
    dims.push_back({{"name", view.dims()[d].name},
                    {"size", view.dims()[d].size()},
                    {"layout", to_string(view.dims()[d].layout)},
                    {"groups", view.all_groups(d)}});
  return {{"world", view.world()}, {"dims", dims}};
}

}  // namespace devmesh::plan
