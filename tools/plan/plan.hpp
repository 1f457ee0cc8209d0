// devmesh-plan internals: what the command line hands to the renderers.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devmesh/topology.hpp"
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

// --- placement over levels (place.cpp) --------------------------------------

// The most parent ranks a topology may have: place() and the level strings
// are O(ranks).
inline constexpr index_t max_placed_ranks = index_t{1} << 20;

// The levels of the parent's ranks and where the model's place() put the
// mesh: --topology FILE, or --ranks-per-host K with --hosts-per-domain H,
// --domains-per-switch D (blocks of consecutive ranks, hosts, domains),
// and --place "dim=level,...".
struct Topology {
  Levels levels;
  // names[l][i]: instance i of level l as the topology names it ("n17";
  // blocks: "0", "1", ...).
  std::vector<std::vector<std::string>> names;
  std::string source;  // "--topology FILE", "--ranks-per-host 4 --hosts-per-domain 2"
  Pairs placement;     // --place, in its order; empty: nothing placed (root index = parent rank)
  Placed placed;       // set by place_root
};

// A topology file (see place.cpp). Errors (invalid_argument, naming the
// file and the line): an unreadable or empty file, an item that is not
// level=name, a level given twice on a line, a first level other than
// host, a line naming other levels than the first; more than
// max_placed_ranks lines; make_levels' own.
Topology read_topology(const std::string& file);
// block_levels(world, K, H, D), the instances named by their numbers.
// Errors: block_levels'; world above max_placed_ranks -> invalid_argument.
Topology block_topology(index_t world, index_t ranks_per_host, index_t hosts_per_domain, index_t domains_per_switch);
// The shape's sizes and the names as View::create checks them (a 0 stands
// for any size), so that those errors read the same with a placement.
void check_root(const RootSpec& spec);
// The root spec of the mesh placed over t: place(t.levels, ...) into
// t.placed (its errors as the library gives them), then ranks = the placed
// parent ranks, world = the topology's ranks, shape filled.
RootSpec place_root(RootSpec spec, Topology& t);

// Ranks in each instance of each level, increasing (members[l][i]); the
// instances of level l - 1 in each instance of level l, by lowest parent
// rank (inner[l][i], empty for l = 0).
struct LevelTree {
  std::vector<std::vector<std::vector<index_t>>> members, inner;
};
LevelTree level_tree(const Levels& levels);

// instance_of_root(view, t, l)[x]: the instance of level l holding the
// parent rank of the view's root index x (a rank outside the topology
// gets an instance of its own).
std::vector<index_t> instance_of_root(const View& view, const Topology& t, std::size_t level);
// The levels, innermost first, within one instance of which every group of
// `dim` lies (groups_within for each level).
std::vector<std::string> within(const View& view, std::size_t dim, const Topology& t);
// "within host, domain", "within no level".
std::string within_text(const std::vector<std::string>& levels);
// The placement's lines of the text picture: the levels, the request, each
// root index's parent rank, the leftovers, and the instances (outermost
// first, each with its ranks and those of them in the mesh).
void print_levels(std::ostream& os, const View& view, const Topology& t);
// Adds "levels", "placement", "parent_ranks" (root index -> parent rank)
// and "leftovers" to a JSON document.
void add_levels_json(nlohmann::ordered_json& out, const View& view, const Topology& t);
// The rank's instance of each level, innermost first, by name.
std::vector<std::string> instances_of(const Topology& t, index_t rank);
// Why parent rank `rank` is no member (a leftover of the placement), or "".
std::string leftover_text(const Topology& t, index_t rank);

// The readable picture: the root's rank grid and, per dim of `view`, its
// layout and groups; with a member, that member's coordinate and groups;
// with hosts, the hosts in the grid and each dim's placement.
// With a topology, the placement's lines (print_levels) under the first
// line, and each dim's levels (within_text); with a member, its instances.
void print_text(std::ostream& os, const View& view, const std::optional<Member>& member,
                const std::optional<Hosts>& hosts, const Topology* topology = nullptr);

// {"world", "dims": [{"name", "size", "layout", "groups"}]}, or with a member
// {"rank", "coordinate", "dims": [{"name", "size", "local_rank", "group"}]}.
// With hosts: "ranks_per_host" and "hosts" after "world" ("host" after
// "rank"), and per dim "placement" and "hosts_spanned" (the most hosts one
// group spans; with a member, that member's group).
// With a topology: "levels", "placement", "parent_ranks", "leftovers" after
// "world" and per dim "within" (the levels each of its groups stays
// within); with a member, "levels" and "instances" (its instance of each,
// by name) after "rank".
// Throws Error(invalid_argument) when the groups would be too many to list.
nlohmann::ordered_json to_json(const View& view, const std::optional<Member>& member,
                               const std::optional<Hosts>& hosts, const Topology* topology = nullptr);

// What the SVG picture shows besides the view.
struct SvgOptions {
  // Ranks are coloured by their group along this dim; none: one panel per
  // dim of the view, each coloured by that dim's groups.
  std::optional<std::size_t> color_dim;
  std::optional<Member> member;   // outlined
  std::optional<Hosts> hosts;     // boxed
  // The placement (--place, --topology): each dim drawn over the level
  // instances instead of the grid (render_levels.cpp).
  const Topology* topology = nullptr;
  std::string ops;                // the op chain, for the title ("" = the root view)
  // Lines under the title, each a <text class="note" data-note=KIND>
  // (--shrink: "failed", "spares", "kept"; --repair: see repair_notes).
  struct Note {
    std::string kind, text;
  };
  std::vector<Note> notes;
};

// The SVG's lines on the placement: kinds "placement" (the request, the
// levels and where they come from) and "leftovers".
std::vector<SvgOptions::Note> placement_notes(const Topology& t);

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
