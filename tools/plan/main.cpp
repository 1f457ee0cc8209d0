// devmesh-plan: the device-mesh model on the command line, without MPI.
//
//   devmesh-plan --shape 2,2,2 --names dp,cp,tp --slice tp,dp --json
//   devmesh-plan --shape 2,2,4 --names dp,cp,tp --ranks-per-host 4 --svg mesh.svg
//
// Builds the root view, applies --slice/--flatten/--unflatten/--root/--push/
// --concatenate in command-line order, then prints the final view (text or --json), or one
// parent rank's coordinate and groups (--rank R). --failed LIST --shrink DIM
// replaces the root, where --shrink stands in the chain, by the mesh left
// after those ranks died (docs/SEMANTICS.md "Shrink"), shown as a new root
// over the same parent ranks with the failed, spare and kept ranks listed;
// --failed LIST --repair [--spares N] replaces it by the same mesh repaired
// (docs/SEMANTICS.md "Repair"; repair.cpp): spares, then spawned ranks, at
// the failed indices, every survivor at its own.
// --ranks-per-host K adds
// hosts (blocks of K consecutive parent ranks) and each dim's placement on
// them; --place "dim=level,..." over --topology FILE (or --ranks-per-host K
// --hosts-per-domain H --domains-per-switch D) makes the root as the
// library's placement does (place.cpp); --neighbors DIM[:periodic] lists each rank's previous and next
// rank along DIM; --svg FILE also draws the mesh. Exit status 0 on success; 2 on any
// error, with a one-line message on stderr and, with --json,
// {"error": "<status name>", "message": "..."} on stdout. On an error
// nothing is written to stdout (but that JSON) nor to the SVG file.

#include <algorithm>
#include <charconv>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <CLI/CLI.hpp>

#include "plan.hpp"

namespace {

using devmesh::Error;
using devmesh::index_t;
using devmesh::Status;
using devmesh::View;

// The one list parser: splits `text` at `sep`, keeping empty items (the
// model judges names; parse_index rejects empty numbers).
std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> out;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(sep, start);
    out.emplace_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

index_t parse_index(std::string_view item, std::string_view what) {
  index_t value = 0;
  const char* end = item.data() + item.size();
  auto [stop, ec] = std::from_chars(item.data(), end, value);
  if (item.empty() || ec != std::errc{} || stop != end)
    throw Error(Status::invalid_argument,
                std::string(what) + ": '" + std::string(item) + "' is not a 64-bit integer");
  return value;
}

std::vector<index_t> parse_indices(std::string_view text, std::string_view what) {
  std::vector<index_t> out;
  for (const std::string& item : split(text, ',')) out.push_back(parse_index(item, what));
  return out;
}

// --unflatten DIM:SIZES:NAMES, e.g. dp:2,2:dp_shard,dp_rep
View unflatten(const View& view, std::string_view arg) {
  const std::vector<std::string> fields = split(arg, ':');
  if (fields.size() != 3)
    throw Error(Status::invalid_argument,
                "--unflatten '" + std::string(arg) + "' is not DIM:SIZES:NAMES");
  return view.unflatten(fields[0], parse_indices(fields[1], "--unflatten sizes"),
                        split(fields[2], ','));
}

// --neighbors DIM[:periodic|open[:DISTANCE]]: each member's previous and
// next member along DIM at DISTANCE (default 1), as MPI_Cart_shift gives
// them; "-" (JSON null) at an open edge.
struct NeighborQuery {
  std::size_t dim = 0;
  std::string name;
  bool periodic = false;
  index_t distance = 1;
};

NeighborQuery neighbor_query(const View& view, std::string_view arg) {
  const std::vector<std::string> fields = split(arg, ':');
  if (fields.size() > 3 || (fields.size() >= 2 && fields[1] != "periodic" && fields[1] != "open"))
    throw Error(Status::invalid_argument,
                "--neighbors '" + std::string(arg) + "' is not DIM[:periodic|open[:DISTANCE]]");
  NeighborQuery q;
  q.dim = view.dim_index(fields[0]);
  q.name = fields[0];
  q.periodic = fields.size() >= 2 && fields[1] == "periodic";
  if (fields.size() == 3) q.distance = parse_index(fields[2], "--neighbors distance");
  return q;
}

// The members listed: the one --rank names, else every member by root index.
std::vector<index_t> neighbor_members(const View& view, const std::optional<devmesh::plan::Member>& member) {
  if (member) return {member->index};
  if (view.root_size() > devmesh::plan::max_drawn_ranks)
    throw Error(Status::invalid_argument,
                "--neighbors lists every rank only up to " + std::to_string(devmesh::plan::max_drawn_ranks) +
                    " ranks; this mesh has " + std::to_string(view.root_size()) + " (use --rank R)");
  std::vector<index_t> out;
  for (index_t x = 0; x < view.root_size(); ++x) out.push_back(x);
  return out;
}

void neighbors_text(std::ostream& os, const View& view, const NeighborQuery& q, const std::vector<index_t>& xs) {
  os << "neighbors along " << q.name << " (" << (q.periodic ? "periodic" : "open") << ", distance " << q.distance
     << "): parent rank (local rank)\n";
  const auto show = [&](const std::optional<index_t>& y) {
    if (!y) return std::string("-");
    return std::to_string(view.parent_rank(*y)) + " (" + std::to_string(view.local_rank(q.dim, *y)) + ")";
  };
  for (index_t x : xs)
    os << "  rank " << view.parent_rank(x) << " (" << view.local_rank(q.dim, x) << "): prev "
       << show(view.shift(q.dim, x, -q.distance, q.periodic)) << ", next "
       << show(view.shift(q.dim, x, q.distance, q.periodic)) << '\n';
}

nlohmann::ordered_json neighbors_json(const View& view, const NeighborQuery& q, const std::vector<index_t>& xs) {
  nlohmann::ordered_json ranks = nlohmann::ordered_json::array();
  const auto rank_of = [&](const std::optional<index_t>& y) {
    return y ? nlohmann::ordered_json(view.parent_rank(*y)) : nlohmann::ordered_json(nullptr);
  };
  const auto local_of = [&](const std::optional<index_t>& y) {
    return y ? nlohmann::ordered_json(view.local_rank(q.dim, *y)) : nlohmann::ordered_json(nullptr);
  };
  for (index_t x : xs) {
    const auto prev = view.shift(q.dim, x, -q.distance, q.periodic);
    const auto next = view.shift(q.dim, x, q.distance, q.periodic);
    ranks.push_back({{"rank", view.parent_rank(x)}, {"local_rank", view.local_rank(q.dim, x)},
                     {"prev", rank_of(prev)}, {"next", rank_of(next)},
                     {"local_prev", local_of(prev)}, {"local_next", local_of(next)}});
  }
  return {{"dim", q.name}, {"periodic", q.periodic}, {"distance", q.distance}, {"ranks", ranks}};
}

int fail(bool json, Status status, std::string message, std::ostream& to_stdout, std::ostream& to_stderr) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  to_stderr << "devmesh-plan: " << message << '\n';
  // The message quotes the user's arguments, which need not be UTF-8:
  // replace bad bytes rather than throw from here.
  if (json)
    to_stdout << nlohmann::ordered_json{{"error", devmesh::status_name(status)}, {"message", message}}.dump(
                     -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
              << '\n';
  return 2;
}

// The command line: every value, and the options whose order in the chain
// or whose count matters.
struct Args {
  bool json = false;
  std::string shape, names, ranks, world, rank, ranks_per_host, svg_file, color_by, neighbors, failed, spares;
  std::string topology, hosts_per_domain, domains_per_switch, place;
  std::vector<std::string> slices, flattens, unflattens, shrinks;
  int roots = 0, pushes = 0, concatenates = 0, repairs = 0;
  CLI::Option *slice = nullptr, *flatten = nullptr, *unflatten = nullptr, *root = nullptr, *push = nullptr,
              *concat = nullptr, *failed_opt = nullptr, *shrink = nullptr, *repair = nullptr, *spares_opt = nullptr,
              *hosts = nullptr, *svg = nullptr, *color = nullptr, *neighbors_opt = nullptr, *ranks_opt = nullptr,
              *world_opt = nullptr, *topology_opt = nullptr, *domains_opt = nullptr, *switches_opt = nullptr,
              *place_opt = nullptr;
};

// --shape, --names, --ranks, --world and the chain's steps.
void add_view_options(CLI::App& app, Args& a) {
  app.add_option("--shape", a.shape, "dim sizes, e.g. 2,2,2 (0 = choose, needs --world or --ranks)")->required();
  app.add_option("--names", a.names, "dim names, e.g. dp,cp,tp")->required();
  a.ranks_opt = app.add_option("--ranks", a.ranks, "parent rank of each root index (default: identity)");
  a.world_opt = app.add_option("--world", a.world, "parent size (default: the mesh size, or max rank + 1)");
  a.slice = app.add_option("--slice", a.slices, "slice dims a,b (any order)")->allow_extra_args(false);
  a.flatten = app.add_option("--flatten", a.flattens, "flatten into NAME (no NAME, or '-': the dim names joined by _)")
                  ->expected(0, 1)  // a NAME or none, each time it is given
                  ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                  ->default_str("-")  // what --flatten alone means
                  ->allow_extra_args(false);
  a.unflatten = app.add_option("--unflatten", a.unflattens, "DIM:SIZES:NAMES, e.g. dp:2,2:dp_shard,dp_rep")
                    ->allow_extra_args(false);
  // Steps of the chain, counted: they take no value (CLI11 would add a
  // value given as --root=N to the count, and overflow on large ones).
  a.root = app.add_flag("--root", a.roots, "back to the root view")->disable_flag_override();
  a.push = app.add_flag("--push", a.pushes, "keep the current view for --concatenate (the chain goes on from it)")
               ->disable_flag_override();
  a.concat = app.add_flag("--concatenate", a.concatenates,
                          "the views kept by --push, then the current view, as one view (their dims in turn)")
                 ->disable_flag_override();
}

// --failed with --shrink or --repair (and --spares).
void add_fault_options(CLI::App& app, Args& a) {
  a.failed_opt = app.add_option("--failed", a.failed,
                                "root indices of the ranks that died, e.g. 3,5 ('' = none), for --shrink or --repair")
                     ->type_name("LIST");
  a.shrink = app.add_option("--shrink", a.shrinks,
                            "the mesh left after --failed died: drop every DIM slice holding a failed rank "
                            "(no DIM, or '-': every survivor in one dim)")
                 ->type_name("DIM")
                 ->expected(0, 1)
                 ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                 ->default_str("-")
                 ->allow_extra_args(false);
  a.repair = app.add_flag("--repair", a.repairs,
                          "the same mesh after --failed died: spares, then spawned ranks, take the failed indices")
                 ->disable_flag_override();
  a.spares_opt =
      app.add_option("--spares", a.spares, "with --repair: the mesh was made with N spares (default 0)")->type_name("N");
  a.shrink->needs(a.failed_opt);
  a.repair->needs(a.failed_opt);
  a.repair->excludes(a.shrink);
  a.spares_opt->needs(a.repair);
}

// --rank, --ranks-per-host, --svg, --color-by, --neighbors, --json.
void add_output_options(CLI::App& app, Args& a) {
  app.add_option("--rank", a.rank, "show only this parent rank's coordinate and groups");
  a.hosts = app.add_option("--ranks-per-host", a.ranks_per_host,
                           "K: hosts are blocks of K consecutive parent ranks; mark them and say which dims "
                           "stay on one host")
                ->type_name("K");
  a.svg = app.add_option("--svg", a.svg_file, "also draw the mesh as SVG into FILE ('-': stdout, instead of the text)")
              ->type_name("FILE");
  a.color = app.add_option("--color-by", a.color_by,
                           "with --svg: draw only DIM, ranks coloured by their group along it "
                           "(default: one panel per dim of the view)")
                ->type_name("DIM")
                ->needs(a.svg);
  a.neighbors_opt = app.add_option("--neighbors", a.neighbors,
                                   "DIM[:periodic|open[:DISTANCE]]: each rank's previous and next rank along DIM of "
                                   "the final view (as MPI_Cart_shift; default open, distance 1)")
                        ->type_name("DIM");
  app.add_flag("--json", a.json, "print JSON");
}

// --topology, --hosts-per-domain, --domains-per-switch, --place (after
// add_view_options, add_fault_options and add_output_options).
void add_placement_options(CLI::App& app, Args& a) {
  a.topology_opt = app.add_option("--topology", a.topology,
                                  "the levels of each parent rank: one line per rank of level=name pairs, innermost "
                                  "first, host first (host=n17 domain=nvl2 switch=s0; '#' comments); the root is "
                                  "placed over them")
                       ->type_name("FILE");
  a.domains_opt = app.add_option("--hosts-per-domain", a.hosts_per_domain,
                                 "H: with --ranks-per-host, a level 'domain' of H consecutive hosts; the root is "
                                 "placed over the levels")
                      ->type_name("H");
  a.switches_opt = app.add_option("--domains-per-switch", a.domains_per_switch,
                                  "D: with --hosts-per-domain, a level 'switch' of D consecutive domains")
                       ->type_name("D");
  a.place_opt = app.add_option("--place", a.place,
                               "dim=level,...: place the root so that every group of each dim lies within one "
                               "instance of its level, e.g. tp=host,ep=domain (needs --topology or --ranks-per-host)")
                    ->type_name("LIST");
  a.domains_opt->needs(a.hosts);
  a.switches_opt->needs(a.domains_opt);
  a.topology_opt->excludes(a.hosts)->excludes(a.ranks_opt)->excludes(a.world_opt);
  a.place_opt->excludes(a.ranks_opt);
  for (CLI::Option* opt : {a.topology_opt, a.domains_opt, a.place_opt}) a.repair->excludes(opt);
}

// The footer's paragraph on --place and the levels.
std::string placement_help() {
  return "Placement (--place dim=level,...): the levels of the parent's ranks come from\n"
         "--topology FILE, or from --ranks-per-host K with --hosts-per-domain H and\n"
         "--domains-per-switch D (blocks of K consecutive ranks, H consecutive hosts, D\n"
         "consecutive domains; the last block may be smaller). The root is placed as the\n"
         "library's placement places it (docs/TOPOLOGY.md): every group of a placed dim\n"
         "lies within one instance of its level and, in every group of every dim, the\n"
         "members in one instance of any level are consecutive. Root index x is then the\n"
         "parent rank the placement gives it; the ranks left out are the leftovers. The\n"
         "world is the topology's ranks (with --ranks-per-host: --world, else the mesh\n"
         "size); a 0 in --shape is filled from it. --topology or --hosts-per-domain\n"
         "without --place places nothing, as the library without a placement: root\n"
         "index x is parent rank x over every rank. Shown: each root index's\n"
         "parent rank, the leftovers, the level instances and each dim's levels (\"within\n"
         "host, domain\": every group inside one host and one domain); --json adds\n"
         "\"levels\", \"placement\", \"parent_ranks\" (root index -> parent rank),\n"
         "\"leftovers\" and per dim \"within\", with \"world\" the topology's ranks and\n"
         "\"groups\" as parent ranks; with --rank R, \"levels\" and R's \"instances\". The\n"
         "SVG draws the level instances as nested boxes around the parent ranks, each\n"
         "coloured by its group, the leftovers grey. A request no placement meets exits 2\n"
         "with the library's message. E.g. --ranks-per-host 2 --shape 2,4 --names dp,tp\n"
         "--place dp=host gives parent ranks 0,2,4,6,1,3,5,7.\n"
         "\n";
}

std::string help_footer() {
  return "--slice, --flatten, --unflatten, --root, --push and --concatenate apply in\n"
         "command-line order; e.g. --slice dp,cp --flatten --push --root --slice tp\n"
         "--concatenate gives the view (dp_cp, tp).\n"
         "\n"
         "Hosts (--ranks-per-host K): parent rank r is on host r / K, the block placement\n"
         "most launchers use by default (consecutive ranks fill a node first; a cyclic\n"
         "placement is not modelled: see --topology); the parent world must be a\n"
         "multiple of K. Each dim of the final view is labelled intra-host (every group\n"
         "lies within one host) or cross-host (with the most hosts one group spans);\n"
         "--json adds \"ranks_per_host\", \"hosts\" and per dim \"placement\", \"hosts_spanned\".\n"
         "With --rank R these describe R's own group only. With --place (below) K gives\n"
         "the host level instead.\n"
         "\n" +
         placement_help() +
         "Layouts are written size:stride over root indices (row-major, the root's last\n"
         "dim fastest): a dim of layout 2:4 groups 2 ranks 4 root indices apart (x, x+4);\n"
         "(sizes):(strides) has several modes, the first most significant: (2,2):(4,2)\n"
         "groups x, x+2, x+4, x+6, in local-rank order. The root (2,2,2) named dp,cp,tp is\n"
         "dp=2:4 cp=2:2 tp=2:1; flattening (dp,tp) gives (2,2):(4,1). Root index x is\n"
         "parent rank x, or the x-th entry of --ranks (docs/SEMANTICS.md).\n"
         "\n"
         "Shrink (--failed LIST --shrink DIM): the mesh left after the ranks at root\n"
         "indices LIST died (root indices of the mesh --shape makes, not parent ranks;\n"
         "--failed '' is the empty list): every DIM slice (the ranks at one coordinate of\n"
         "DIM) holding a failed rank is dropped whole, DIM shrinks by the slices dropped,\n"
         "the other dims stay. --shrink - (or --shrink alone) keeps every survivor in one\n"
         "dim, named as --flatten names the root's dims. E.g. --shape 4,2 --names\n"
         "replicate,shard --failed 5 --shrink replicate keeps 0,1,2,3,6,7 as (3,2); rank 4,\n"
         "alive in a dropped slice, is a spare. The result is a new root over the same\n"
         "parent ranks, shown as any root after the failed, spare and kept ranks; --json\n"
         "adds \"shrink\" (\"dim\", \"dropped\", \"failed\", \"spares\", \"kept\" as old root\n"
         "indices, \"failed_ranks\", \"spare_ranks\", \"kept_ranks\" as parent ranks), the\n"
         "SVG lists them under its title. --shrink acts on the root where it stands in the\n"
         "chain (after --slice, give --root first), once; later options (--slice, --rank,\n"
         "--neighbors, --ranks-per-host, --svg) act on the shrunk mesh.\n"
         "\n"
         "Repair (--failed LIST --repair [--spares N]): the same mesh again after the\n"
         "ranks at root indices LIST died, as a mesh made with N spares (default 0) is\n"
         "repaired: the mesh is over parent ranks 0..W-1 (root index = parent rank), the\n"
         "spares are the parent's last N ranks W..W+N-1. Every survivor keeps its root\n"
         "index and coordinate; the failed indices, in ascending order, are filled first\n"
         "by the spares (lowest parent rank first), then by spawned ranks (in spawn\n"
         "order); spares left over stay in standby. E.g. --shape 4,2 --names\n"
         "replicate,shard --failed 5 --repair --spares 2: parent rank 8 takes index 5,\n"
         "rank 9 stays in standby. Shown: who fills each failed index and its coordinate,\n"
         "the kept ranks, the mesh before the repair, then the repaired root (same shape\n"
         "and names) with spare k as parent rank W+k and spawned rank j as W+N+j; --json\n"
         "adds \"repair\" (\"failed\", \"filled\": [{\"index\", \"coords\", \"by\": \"spare\" or\n"
         "\"spawn\", \"parent_rank\" or \"spawn_rank\"}], \"spares\", \"spares_left\", \"spawned\",\n"
         "\"kept\", \"standby_ranks\", \"before\"). --repair excludes --shrink; like it, it\n"
         "acts on the root where it stands in the chain, once.\n"
         "\n"
         "SVG (--svg FILE): one panel per dim of the view, each the root grid as in the\n"
         "text picture (last dim across) with every rank a cell labelled with its parent\n"
         "rank and coloured by its group along that dim (10 colours, repeating past 10\n"
         "groups), hosts as rounded boxes, and a legend of the groups; --color-by DIM\n"
         "draws DIM's panel only. Above them the op chain, each dim's layout and\n"
         "placement, and the notation. At most " +
         std::to_string(devmesh::plan::max_drawn_ranks) + " ranks.";
}

// The view the chain ends in, the chain as given (for the SVG's title), and
// the shrink or repair made on the way.
struct Chain {
  View view;
  std::string ops;
  std::optional<devmesh::plan::ShrinkResult> shrunk;
  std::optional<devmesh::plan::RepairResult> repaired;
  std::optional<devmesh::plan::Topology> topology;
};

// The levels the root is placed over, with the request: none without
// --place, --topology and --hosts-per-domain.
std::optional<devmesh::plan::Topology> make_topology(const Args& a, const devmesh::RootSpec& spec) {
  if (a.place_opt->count() == 0 && a.topology_opt->count() == 0 && a.domains_opt->count() == 0) return std::nullopt;
  devmesh::plan::check_root(spec);
  devmesh::plan::Topology t;
  if (a.topology_opt->count() > 0) {
    t = devmesh::plan::read_topology(a.topology);
  } else if (a.hosts->count() > 0) {
    index_t world = spec.world;
    for (std::size_t d = 0; world == 0 && d < spec.shape.size(); ++d)
      if (spec.shape[d] == 0)
        throw Error(Status::invalid_argument,
                    "--shape has a 0 to fill: give the number of parent ranks with --world (or use --topology)");
    if (world == 0) {
      world = 1;
      for (const index_t s : spec.shape)  // at most max_placed_ranks + 1: no overflow
        world = std::min(world * std::min(s, devmesh::plan::max_placed_ranks + 1), devmesh::plan::max_placed_ranks + 1);
    }
    const index_t domains = a.domains_opt->count() > 0 ? parse_index(a.hosts_per_domain, "--hosts-per-domain") : 0;
    const index_t switches =
        a.switches_opt->count() > 0 ? parse_index(a.domains_per_switch, "--domains-per-switch") : 0;
    t = devmesh::plan::block_topology(world, parse_index(a.ranks_per_host, "--ranks-per-host"), domains, switches);
  } else {
    throw Error(Status::invalid_argument,
                "--place needs the levels of the parent's ranks: --topology FILE, or --ranks-per-host K (with "
                "--hosts-per-domain H, --domains-per-switch D)");
  }
  if (a.place_opt->count() > 0) t.placement = devmesh::parse_pairs(a.place, ',', "placement");
  return t;
}

// --shrink and --repair: once each, --failed with one of them.
void check_fault_options(const Args& a) {
  for (const auto& [opt, name, verb] : {std::tuple{a.shrink, "--shrink", "shrinks"}, {a.repair, "--repair", "repairs"}})
    if (opt->count() > 1)
      throw Error(Status::invalid_argument, std::string(name) + " is given " + std::to_string(opt->count()) +
                                                " times: the planner " + verb +
                                                " once (--failed names root indices of one mesh)");
  if (a.failed_opt->count() > 0 && a.shrink->count() == 0 && a.repair->count() == 0)
    throw Error(Status::invalid_argument, "--failed requires --shrink or --repair");
}

Chain run_chain(const CLI::App& app, const Args& a) {
  devmesh::RootSpec spec;
  spec.shape = parse_indices(a.shape, "--shape");
  spec.names = split(a.names, ',');
  if (!a.ranks.empty()) spec.ranks = parse_indices(a.ranks, "--ranks");
  if (!a.world.empty()) spec.world = parse_index(a.world, "--world");
  std::optional<devmesh::plan::Topology> topology = make_topology(a, spec);
  if (topology) spec = devmesh::plan::place_root(std::move(spec), *topology);
  Chain c{View::create(std::move(spec)), "", std::nullopt, std::nullopt, std::move(topology)};
  check_fault_options(a);
  std::vector<index_t> failed;
  if (!a.failed.empty()) failed = parse_indices(a.failed, "--failed");
  const std::string failed_arg = " --failed " + (a.failed.empty() ? std::string("''") : a.failed);
  std::vector<View> pushed;                        // --push, until --concatenate
  std::map<const CLI::Option*, std::size_t> used;  // occurrences consumed per option
  for (const CLI::Option* opt : app.parse_order()) {
    const std::size_t n = used[opt]++;
    if (opt == a.slice) {
      c.view = c.view.slice(split(a.slices[n], ','));
      c.ops += " --slice " + a.slices[n];
    } else if (opt == a.flatten) {
      c.view = a.flattens[n] == "-" ? c.view.flatten() : c.view.flatten(a.flattens[n]);
      c.ops += " --flatten " + a.flattens[n];
    } else if (opt == a.unflatten) {
      c.view = unflatten(c.view, a.unflattens[n]);
      c.ops += " --unflatten " + a.unflattens[n];
    } else if (opt == a.root) {
      c.view = c.view.root();
      c.ops += " --root";
    } else if (opt == a.push) {
      pushed.push_back(c.view);
      c.ops += " --push";
    } else if (opt == a.shrink) {
      c.view = devmesh::plan::shrink_root(c.view, failed, a.shrinks[n], c.shrunk);
      c.ops += failed_arg + " --shrink " + a.shrinks[n];
    } else if (opt == a.repair) {
      const index_t spares = a.spares_opt->count() > 0 ? parse_index(a.spares, "--spares") : 0;
      c.view = devmesh::plan::repair_root(c.view, failed, spares, c.repaired);
      c.ops += failed_arg + " --repair" + (a.spares_opt->count() > 0 ? " --spares " + a.spares : "");
    } else if (opt == a.concat) {
      pushed.push_back(c.view);
      c.view = View::concatenate(pushed);
      pushed.clear();
      c.ops += " --concatenate";
    }
  }
  return c;
}

// --rank R: R's root index in the final view; a rank the shrink or the
// repair left out is told why.
std::optional<devmesh::plan::Member> find_member(const Args& a, const Chain& c) {
  if (a.rank.empty()) return std::nullopt;
  const index_t r = parse_index(a.rank, "--rank");
  const std::optional<index_t> x = c.view.root_index(r);
  if (!x) {
    const std::string why = c.shrunk     ? devmesh::plan::shrink_not_member(*c.shrunk, r)
                            : c.repaired ? devmesh::plan::repair_not_member(*c.repaired, r)
                            : c.topology ? devmesh::plan::leftover_text(*c.topology, r)
                                         : "";
    if (!why.empty()) throw Error(Status::invalid_argument, why);
  }
  if (!x) throw Error(Status::invalid_argument, "rank " + std::to_string(r) + " is not a member of the mesh");
  return devmesh::plan::Member{r, *x};
}

// What goes to stdout (text or JSON) and into the SVG file; throws before
// anything is written.
struct Output {
  std::string out, svg;
};

Output render(const Args& a, const Chain& c) {
  std::optional<devmesh::plan::Hosts> hosts;
  // Counted, not tested for emptiness: an empty value is an error.
  if (a.hosts->count() > 0 && !c.topology)  // with a topology, its levels say where the hosts are
    hosts = devmesh::plan::make_hosts(c.view, parse_index(a.ranks_per_host, "--ranks-per-host"));
  const std::optional<devmesh::plan::Member> member = find_member(a, c);
  std::optional<NeighborQuery> query;
  std::vector<index_t> neighbor_xs;
  if (a.neighbors_opt->count() > 0) {
    query = neighbor_query(c.view, a.neighbors);
    neighbor_xs = neighbor_members(c.view, member);
  }
  const bool svg_to_stdout = a.svg_file == "-";
  if (svg_to_stdout && a.json) throw Error(Status::invalid_argument, "--svg - and --json would both write to stdout");
  if (a.svg->count() > 0 && a.svg_file.empty())
    throw Error(Status::invalid_argument, "--svg needs a file name ('-' for stdout)");
  Output o;
  if (!a.svg_file.empty()) {
    devmesh::plan::SvgOptions options;
    if (a.color->count() > 0) options.color_dim = c.view.dim_index(a.color_by);
    options.member = member;
    options.hosts = hosts;
    options.topology = c.topology ? &*c.topology : nullptr;
    options.ops = c.ops.empty() ? "" : c.ops.substr(1);
    if (c.shrunk) options.notes = devmesh::plan::shrink_notes(*c.shrunk);
    if (c.repaired) options.notes = devmesh::plan::repair_notes(*c.repaired);
    o.svg = devmesh::plan::to_svg(c.view, options);
  }
  if (a.json) {
    nlohmann::ordered_json j = devmesh::plan::to_json(c.view, member, hosts, c.topology ? &*c.topology : nullptr);
    if (c.shrunk) j["shrink"] = devmesh::plan::shrink_json(*c.shrunk);
    if (c.repaired) j["repair"] = devmesh::plan::repair_json(*c.repaired);
    if (query) j["neighbors"] = neighbors_json(c.view, *query, neighbor_xs);
    o.out = j.dump() + '\n';
  } else if (!svg_to_stdout) {
    std::ostringstream text;
    if (c.shrunk) devmesh::plan::shrink_text(text, *c.shrunk);
    if (c.repaired) devmesh::plan::repair_text(text, *c.repaired);
    devmesh::plan::print_text(text, c.view, member, hosts, c.topology ? &*c.topology : nullptr);
    if (query) neighbors_text(text, c.view, *query, neighbor_xs);
    o.out = text.str();
  }
  return o;
}

}  // namespace

int run_plan(int argc, char** argv, std::ostream& to_stdout, std::ostream& to_stderr) {
  Args a;
  // Known before parsing, so that even a syntax error answers in JSON.
  for (int i = 1; i < argc; ++i) a.json = a.json || std::string_view(argv[i]) == "--json";

  CLI::App app{"Plan a device mesh: print its rank groups without MPI."};
  add_view_options(app, a);
  add_fault_options(app, a);
  add_output_options(app, a);
  add_placement_options(app, a);
  app.footer(help_footer());
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, to_stdout, to_stderr);
  } catch (const CLI::ParseError& e) {
    return fail(a.json, Status::invalid_argument, e.what(), to_stdout, to_stderr);
  } catch (const std::exception& e) {
    // CLI11 2.1 lets std::stoll's out_of_range escape from a counted flag
    // given a huge value (--root=99999999999999999999, before the chain's
    // flags refused values): whatever escapes is an error, not an abort.
    return fail(a.json, Status::invalid_argument,
                std::string("a value on the command line is out of range (") + e.what() + ")", to_stdout, to_stderr);
  }

  try {
    // Everything that can fail runs before the first byte goes out.
    const Output o = render(a, run_chain(app, a));
    if (!a.svg_file.empty() && a.svg_file != "-") {
      std::ofstream file(a.svg_file, std::ios::binary);
      if (!(file << o.svg) || !file.flush())
        throw Error(Status::invalid_argument, "cannot write the SVG to '" + a.svg_file + "'");
    }
    to_stdout << (a.svg_file == "-" ? o.svg : o.out) << std::flush;
    return 0;
  } catch (const Error& e) {
    return fail(a.json, e.status(), e.what(), to_stdout, to_stderr);
  } catch (const std::exception& e) {
    // Out of memory and the like: still a plain error, never a crash.
    return fail(a.json, Status::invalid_argument, e.what(), to_stdout, to_stderr);
  }
}

// fuzz/fuzz_plan_args.cpp compiles this file with DEVMESH_PLAN_NO_MAIN and
// calls run_plan in-process.
#ifndef DEVMESH_PLAN_NO_MAIN
int main(int argc, char** argv) { return run_plan(argc, argv, std::cout, std::cerr); }
#endif
