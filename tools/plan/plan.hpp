// devmesh-plan internals: what the command line hands to the two renderers.
#pragma once

#include <optional>
#include <ostream>

#include <nlohmann/json.hpp>

#include "devmesh/view.hpp"

namespace devmesh::plan {

// Listing every group of every dim is O(W) output. Past these sizes the
// renderers refuse (JSON) or summarise (text); --rank answers any size.
inline constexpr index_t max_listed_ranks = index_t{1} << 22;  // JSON "groups"
inline constexpr index_t max_drawn_ranks = 4096;               // text grid and groups

// The rank a --rank query is about: its parent rank and its root index.
struct Member {
  index_t rank;
  index_t index;
};

// The readable picture: the root's rank grid and, per dim of `view`, its
// layout and groups; with a member, that member's coordinate and groups.
void print_text(std::ostream& os, const View& view, const std::optional<Member>& member);

// {"world", "dims": [{"name", "size", "layout", "groups"}]}, or with a member
// {"rank", "coordinate", "dims": [{"name", "size", "local_rank", "group"}]}.
// Throws Error(invalid_argument) when the groups would be too many to list.
nlohmann::ordered_json to_json(const View& view, const std::optional<Member>& member);

}  // namespace devmesh::plan
