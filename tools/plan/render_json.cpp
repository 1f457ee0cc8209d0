// devmesh-plan's JSON: the whole final view, or one member's place in it.

#include "plan.hpp"

namespace devmesh::plan {
namespace {

using json = nlohmann::ordered_json;

void add_placement(json& dim, const Placement& p) {
  dim["placement"] = p.intra_host ? "intra-host" : "cross-host";
  dim["hosts_spanned"] = p.max_hosts;
}

}  // namespace

json to_json(const View& view, const std::optional<Member>& member, const std::optional<Hosts>& hosts,
             const Topology* topology) {
  json dims = json::array();
  if (member) {
    for (std::size_t d = 0; d < view.ndim(); ++d) {
      dims.push_back({{"name", view.dims()[d].name},
                      {"size", view.dims()[d].size()},
                      {"local_rank", view.local_rank(d, member->index)},
                      {"group", view.group(d, member->index)}});
      if (hosts) add_placement(dims.back(), placement(view, d, *hosts, member->index));
    }
    json out = {{"rank", member->rank}};
    if (topology) {
      out["levels"] = topology->levels.names;
      out["instances"] = instances_of(*topology, member->rank);
    }
    if (hosts) {
      out["ranks_per_host"] = hosts->ranks_per_host;
      out["host"] = hosts->host(member->rank);
    }
    out["coordinate"] = view.coordinate(member->index);
    out["dims"] = std::move(dims);
    return out;
  }
  if (view.root_size() > max_listed_ranks)
    throw Error(Status::invalid_argument,
                "the mesh has " + std::to_string(view.root_size()) + " ranks, too many to list every group (at most " +
                    std::to_string(max_listed_ranks) + "); ask about one rank with --rank");
  for (std::size_t d = 0; d < view.ndim(); ++d) {
    dims.push_back({{"name", view.dims()[d].name},
                    {"size", view.dims()[d].size()},
                    {"layout", to_string(view.dims()[d].layout)},
                    {"groups", view.all_groups(d)}});
    if (hosts) add_placement(dims.back(), placement(view, d, *hosts));
    if (topology) dims.back()["within"] = within(view, d, *topology);
  }
  json out = {{"world", view.world()}};
  if (topology) add_levels_json(out, view, *topology);
  if (hosts) {
    out["ranks_per_host"] = hosts->ranks_per_host;
    out["hosts"] = hosts->count;
  }
  out["dims"] = std::move(dims);
  return out;
}

}  // namespace devmesh::plan
