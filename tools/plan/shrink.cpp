// devmesh-plan --failed LIST --shrink [DIM]: the mesh left after some ranks
// died (docs/SEMANTICS.md "Shrink"), shown as a new root over the same
// parent ranks with the failed, spare and kept ranks listed.

#include <algorithm>
#include <string>
#include <vector>

#include "plan.hpp"

namespace devmesh::plan {
namespace {

std::vector<index_t> parent_ranks(const View& root, const std::vector<index_t>& xs) {
  std::vector<index_t> out;
  out.reserve(xs.size());
  for (const index_t x : xs) out.push_back(root.parent_rank(x));
  return out;
}

// The summary lines: the shrink, then the failed, spare and kept ranks as
// old root indices (with their parent ranks where a rank list makes them
// differ). Shared by the text and the SVG.
std::string shrink_heading(const ShrinkResult& r) {
  if (!r.dim)
    return "shrunk to every survivor: one dim " + r.shrunk.names[0] + " of " + std::to_string(r.shrunk.kept.size()) +
           " ranks";
  const std::string& name = r.before.dims()[*r.dim].name;
  std::string out = "shrunk along " + name + ": ";
  if (r.dropped.empty()) return out + "nothing failed, nothing dropped";
  out += "dropped";
  for (const index_t c : r.dropped) out += " " + name + "=" + std::to_string(c);
  return out + " (" + name + " " + std::to_string(r.before.dims()[*r.dim].size()) + " -> " +
         std::to_string(r.shrunk.shape[*r.dim]) + ")";
}

}  // namespace

// The shrunk root as the runtime builds it: the same parent, the kept
// ranks' parent ranks as its rank list.
View shrink_root(const View& root, const std::vector<index_t>& failed, const std::string& dim,
                 std::optional<ShrinkResult>& result) {
  // shrink is O(W) in memory; the planner shows it where JSON lists groups.
  if (root.root_size() > max_listed_ranks)
    throw Error(Status::invalid_argument, "--shrink is shown for meshes of at most " +
                                              std::to_string(max_listed_ranks) + " ranks; this one has " +
                                              std::to_string(root.root_size()));
  ShrinkResult r{root, std::nullopt, failed, {}, {}};
  r.shrunk = devmesh::shrink(root, failed, dim == "-" ? std::nullopt : std::optional<std::string_view>(dim));
  std::sort(r.failed.begin(), r.failed.end());
  r.failed.erase(std::unique(r.failed.begin(), r.failed.end()), r.failed.end());
  if (dim != "-") {
    r.dim = root.dim_or_only(dim);
    for (const index_t x : r.failed) r.dropped.push_back(root.local_rank(*r.dim, x));
    std::sort(r.dropped.begin(), r.dropped.end());
    r.dropped.erase(std::unique(r.dropped.begin(), r.dropped.end()), r.dropped.end());
  }
  RootSpec spec{r.shrunk.shape, r.shrunk.names, root.world(), {}};
  for (const index_t x : r.shrunk.kept) spec.ranks.push_back(root.parent_rank(x));
  View next = View::create(std::move(spec));
  result = std::move(r);
  return next;
}

std::vector<SvgOptions::Note> shrink_notes(const ShrinkResult& r) {
  std::vector<SvgOptions::Note> out{{"shrink", shrink_heading(r)}};
  const bool listed = r.before.has_rank_list();
  for (const auto& [kind, xs] : {std::pair<std::string, const std::vector<index_t>*>{"failed", &r.failed},
                                 {"spares", &r.shrunk.spares},
                                 {"kept", &r.shrunk.kept}}) {
    std::string line = kind + ": " + list_text(*xs);
    if (listed && !xs->empty()) line += " (parent ranks " + list_text(parent_ranks(r.before, *xs)) + ")";
    out.push_back({kind, line});
  }
  return out;
}

void shrink_text(std::ostream& os, const ShrinkResult& r) {
  const auto notes = shrink_notes(r);
  os << notes[0].text << '\n';
  for (std::size_t i = 1; i < notes.size(); ++i) os << "  " << notes[i].text << '\n';
  if (r.before.has_rank_list()) os << "  (root indices of the mesh shrunk; the mesh below shows parent ranks)\n";
  os << '\n';
}

nlohmann::ordered_json shrink_json(const ShrinkResult& r) {
  nlohmann::ordered_json j;
  j["dim"] = r.dim ? nlohmann::ordered_json(r.before.dims()[*r.dim].name) : nlohmann::ordered_json(nullptr);
  j["dropped"] = r.dropped;
  j["failed"] = r.failed;
  j["spares"] = r.shrunk.spares;
  j["kept"] = r.shrunk.kept;
  j["failed_ranks"] = parent_ranks(r.before, r.failed);
  j["spare_ranks"] = parent_ranks(r.before, r.shrunk.spares);
  j["kept_ranks"] = parent_ranks(r.before, r.shrunk.kept);
  return j;
}

std::string shrink_not_member(const ShrinkResult& r, index_t rank) {
  const std::optional<index_t> old = r.before.root_index(rank);
  const auto holds = [&](const std::vector<index_t>& xs) {
    return old && std::binary_search(xs.begin(), xs.end(), *old);
  };
  if (holds(r.failed)) return "rank " + std::to_string(rank) + " failed: it is not a member of the shrunk mesh";
  if (holds(r.shrunk.spares))
    return "rank " + std::to_string(rank) +
           " is a spare (alive in a dropped slice): it is not a member of the shrunk mesh";
  return "";
}

}  // namespace devmesh::plan
