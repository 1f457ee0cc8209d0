// devmesh-plan internals: what the command line hands to the renderers.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devmesh/view.hpp"

namespace devmesh::plan {

// Listing every group of every dim is O(W) output. Past these sizes the
// renderers refuse (JSON, SVG) or summarise (text); --rank answers any size.
inline constexpr index_t max_listed_ranks = index_t{1} << 22;  // JSON "groups"
inline constexpr index_t max_drawn_ranks = 4096;               // text grid and groups, SVG

// The rank a --rank query is about: its parent rank and its root index.
struct Member {
  index_t rank;
  index_t index;
};

// --ranks-per-host K: hosts are blocks of K consecutive parent ranks, the
// block placement launchers use by default (mpiexec without -ppn tricks,
// srun --distribution=block): parent rank r is on host r / K. The parent
// world must be a multiple of K.
struct Hosts {
  index_t ranks_per_host = 1;
  index_t count = 1;  // world / ranks_per_host
  index_t host(index_t parent_rank) const noexcept { return parent_rank / ranks_per_host; }
};

// Checks K against the view's world. Errors: K < 1 -> invalid_argument;
// world not a multiple of K -> shape_mismatch.
Hosts make_hosts(const View& view, index_t ranks_per_host);

// How the groups of one dim sit on the hosts: each group spans between
// min_hosts and max_hosts hosts; intra-host when max_hosts == 1. A count of
// 0 means "not counted": meshes of more than max_listed_ranks ranks without
// a rank list are judged from their modes alone (O(ndim), exact for the
// placement, no counts).
struct Placement {
  bool intra_host = true;
  index_t min_hosts = 0;
  index_t max_hosts = 0;
};

// Every group of `dim` (O(W log size), or O(ndim) as above).
Placement placement(const View& view, std::size_t dim, const Hosts& hosts);
// The group of root index x along `dim` only (O(size of the group)).
Placement placement(const View& view, std::size_t dim, const Hosts& hosts, index_t x);

// "intra-host", "cross-host, each group spans 2 hosts", "cross-host, groups
// span up to 2 hosts", or "cross-host" when not counted.
std::string describe(const Placement& p);

// The readable picture: the root's rank grid and, per dim of `view`, its
// layout and groups; with a member, that member's coordinate and groups;
// with hosts, the hosts in the grid and each dim's placement.
void print_text(std::ostream& os, const View& view, const std::optional<Member>& member,
                const std::optional<Hosts>& hosts);

// {"world", "dims": [{"name", "size", "layout", "groups"}]}, or with a member
// {"rank", "coordinate", "dims": [{"name", "size", "local_rank", "group"}]}.
// With hosts: "ranks_per_host" and "hosts" after "world" ("host" after
// "rank"), and per dim "placement" and "hosts_spanned" (the most hosts one
// group spans; with a member, that member's group).
// Throws Error(invalid_argument) when the groups would be too many to list.
nlohmann::ordered_json to_json(const View& view, const std::optional<Member>& member,
                               const std::optional<Hosts>& hosts);

// What the SVG picture shows besides the view.
struct SvgOptions {
  // Ranks are coloured by their group along this dim; none: one panel per
  // dim of the view, each coloured by that dim's groups.
  std::optional<std::size_t> color_dim;
  std::optional<Member> member;   // outlined
  std::optional<Hosts> hosts;     // boxed
  std::string ops;                // the op chain, for the title ("" = the root view)
  // Lines under the title, each a <text class="note" data-note=KIND>
  // (--shrink: "failed", "spares", "kept"; --repair: see repair_notes).
  struct Note {
    std::string kind, text;
  };
  std::vector<Note> notes;
};

// A standalone SVG document of the root grid (see render_svg.cpp).
// Throws Error(invalid_argument) above max_drawn_ranks ranks.
std::string to_svg(const View& view, const SvgOptions& options);

// "0,1,6,7", "none"; past 64 entries the first 64 and how many in all.
std::string list_text(const std::vector<index_t>& xs);

// --failed LIST --shrink [DIM] (shrink.cpp): the root `before` shrunk, for
// the summary; the chain goes on from the new root.
struct ShrinkResult {
  View before;                     // the root shrunk
  std::optional<std::size_t> dim;  // its dim, or none (every survivor)
  std::vector<index_t> failed;     // old root indices, sorted, no repeats
  std::vector<index_t> dropped;    // coordinates along dim dropped, increasing
  Shrunk shrunk;
};

// The shrunk root as the runtime builds it: the same parent, the kept
// ranks' parent ranks as its rank list. Errors: those of devmesh::shrink;
// more than max_listed_ranks ranks -> invalid_argument.
View shrink_root(const View& root, const std::vector<index_t>& failed, const std::string& dim,
                 std::optional<ShrinkResult>& result);
// The summary lines (kinds "shrink", "failed", "spares", "kept"), shared by
// the text and the SVG.
std::vector<SvgOptions::Note> shrink_notes(const ShrinkResult& r);
// The summary, then a blank line.
void shrink_text(std::ostream& os, const ShrinkResult& r);
// {"dim", "dropped", "failed", "spares", "kept", "failed_ranks", "spare_ranks", "kept_ranks"}.
nlohmann::ordered_json shrink_json(const ShrinkResult& r);
// Why parent rank `rank` is no member of the shrunk mesh (it failed, or it
// is a spare in a dropped slice), or "" when the shrink is not why.
std::string shrink_not_member(const ShrinkResult& r, index_t rank);

// --failed LIST --repair [--spares N] (repair.cpp): the root `before`, made
// with `spares` spares (parent ranks 0..W-1, the spares W..W+N-1), and who
// fills each failed index.
struct RepairResult {
  View before;
  index_t spares = 0;
  Repaired repaired;
};

// The repaired root, as the chain goes on from it: the same shape and names,
// every survivor at its index, spare k as parent rank W+k, spawned rank j as
// W+N+j. Errors: those of devmesh::repair (a failed index out of range,
// spares < 0, every index failed); a view that is not the root, a rank list
// other than 0..W-1, a parent of neither W nor W+N ranks, more than
// max_listed_ranks ranks -> invalid_argument.
View repair_root(const View& root, const std::vector<index_t>& failed, index_t spares,
                 std::optional<RepairResult>& result);
// The summary lines (kinds "repair", "failed", "filled", "kept", "standby"),
// shared by the text and the SVG.
std::vector<SvgOptions::Note> repair_notes(const RepairResult& r);
// The summary, then the mesh before the repair, then "after the repair:".
void repair_text(std::ostream& os, const RepairResult& r);
// {"failed", "filled": [{"index", "coords", "by", "parent_rank" | "spawn_rank"}],
//  "spares", "spares_left", "spawned", "kept", "standby_ranks", "before"}.
nlohmann::ordered_json repair_json(const RepairResult& r);
// Why parent rank `rank` is no member of the repaired mesh (it failed, or
// it is a spare left in standby), or "" when the repair is not why.
std::string repair_not_member(const RepairResult& r, index_t rank);

}  // namespace devmesh::plan

// The whole tool (main.cpp): parses argv, writes the result to to_stdout
// (and the SVG file), messages to to_stderr; returns the exit status, 0 or
// 2. main() runs it on std::cout and std::cerr; fuzz/fuzz_plan_args.cpp
// calls it in-process.
int run_plan(int argc, char** argv, std::ostream& to_stdout, std::ostream& to_stderr);
