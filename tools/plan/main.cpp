// devmesh-plan: the device-mesh model on the command line, without MPI.
//
//   devmesh-plan --shape 2,2,2 --names dp,cp,tp --slice tp,dp --json
//   devmesh-plan --shape 2,2,4 --names dp,cp,tp --ranks-per-host 4 --svg mesh.svg
//
// Builds the root view, applies --slice/--flatten/--unflatten/--root/--push/
// --concatenate in command-line order, then prints the final view (text or --json), or one
// parent rank's coordinate and groups (--rank R). --ranks-per-host K adds
// hosts (blocks of K consecutive parent ranks) and each dim's placement on
// them; --neighbors DIM[:periodic] lists each rank's previous and next
// rank along DIM; --svg FILE also draws the mesh. Exit status 0 on success; 2 on any
// error, with a one-line message on stderr and, with --json,
// {"error": "<status name>", "message": "..."} on stdout. On an error
// nothing is written to stdout (but that JSON) nor to the SVG file.

#include <charconv>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
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

}  // namespace

int run_plan(int argc, char** argv, std::ostream& to_stdout, std::ostream& to_stderr) {
  // Known before parsing, so that even a syntax error answers in JSON.
  bool json = false;
  for (int i = 1; i < argc; ++i) json = json || std::string_view(argv[i]) == "--json";

  CLI::App app{"Plan a device mesh: print its rank groups without MPI."};
  std::string shape, names, ranks, world, rank, ranks_per_host, svg_file, color_by, neighbors;
  std::vector<std::string> slices, flattens, unflattens;
  int roots = 0, pushes = 0, concatenates = 0;
  app.add_option("--shape", shape, "dim sizes, e.g. 2,2,2 (0 = choose, needs --world or --ranks)")
      ->required();
  app.add_option("--names", names, "dim names, e.g. dp,cp,tp")->required();
  app.add_option("--ranks", ranks, "parent rank of each root index (default: identity)");
  app.add_option("--world", world, "parent size (default: the mesh size, or max rank + 1)");
  CLI::Option* slice_opt = app.add_option("--slice", slices, "slice dims a,b (any order)")
                               ->allow_extra_args(false);
  CLI::Option* flatten_opt =
      app.add_option("--flatten", flattens, "flatten into NAME (no NAME, or '-': the dim names joined by _)")
          ->expected(0, 1)  // a NAME or none, each time it is given
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
          ->default_str("-")  // what --flatten alone means
          ->allow_extra_args(false);
  CLI::Option* unflatten_opt =
      app.add_option("--unflatten", unflattens, "DIM:SIZES:NAMES, e.g. dp:2,2:dp_shard,dp_rep")
          ->allow_extra_args(false);
  CLI::Option* root_opt = app.add_flag("--root", roots, "back to the root view");
  CLI::Option* push_opt = app.add_flag("--push", pushes, "keep the current view for --concatenate (the chain goes on from it)");
  CLI::Option* concat_opt = app.add_flag(
      "--concatenate", concatenates, "the views kept by --push, then the current view, as one view (their dims in turn)");
  app.add_option("--rank", rank, "show only this parent rank's coordinate and groups");
  CLI::Option* hosts_opt = app.add_option("--ranks-per-host", ranks_per_host,
                 "K: hosts are blocks of K consecutive parent ranks; mark them and say which dims "
                 "stay on one host")
      ->type_name("K");
  CLI::Option* svg_opt =
      app.add_option("--svg", svg_file, "also draw the mesh as SVG into FILE ('-': stdout, instead of the text)")
          ->type_name("FILE");
  CLI::Option* color_opt = app.add_option("--color-by", color_by,
                                          "with --svg: draw only DIM, ranks coloured by their group along it "
                                          "(default: one panel per dim of the view)")
      ->type_name("DIM")
      ->needs(svg_opt);
  CLI::Option* neighbors_opt =
      app.add_option("--neighbors", neighbors,
                     "DIM[:periodic|open[:DISTANCE]]: each rank's previous and next rank along DIM of the "
                     "final view (as MPI_Cart_shift; default open, distance 1)")
          ->type_name("DIM");
  app.add_flag("--json", json, "print JSON");
  app.footer(
      "--slice, --flatten, --unflatten, --root, --push and --concatenate apply in\n"
      "command-line order; e.g. --slice dp,cp --flatten --push --root --slice tp\n"
      "--concatenate gives the view (dp_cp, tp).\n"
      "\n"
      "Hosts (--ranks-per-host K): parent rank r is on host r / K, the block placement\n"
      "most launchers use by default (consecutive ranks fill a node first; a cyclic\n"
      "placement is not modelled); the parent world must be a multiple of K. Each dim\n"
      "of the final view is labelled intra-host (every group lies within one host) or\n"
      "cross-host (with the most hosts one group spans);\n"
      "--json adds \"ranks_per_host\", \"hosts\" and per dim \"placement\", \"hosts_spanned\".\n"
      "With --rank R these describe R's own group only.\n"
      "\n"
      "Layouts are written size:stride over root indices (row-major, the root's last\n"
      "dim fastest): a dim of layout 2:4 groups 2 ranks 4 root indices apart (x, x+4);\n"
      "(sizes):(strides) has several modes, the first most significant: (2,2):(4,2)\n"
      "groups x, x+2, x+4, x+6, in local-rank order. The root (2,2,2) named dp,cp,tp is\n"
      "dp=2:4 cp=2:2 tp=2:1; flattening (dp,tp) gives (2,2):(4,1). Root index x is\n"
      "parent rank x, or the x-th entry of --ranks (docs/SEMANTICS.md).\n"
      "\n"
      "SVG (--svg FILE): one panel per dim of the view, each the root grid as in the\n"
      "text picture (last dim across) with every rank a cell labelled with its parent\n"
      "rank and coloured by its group along that dim (10 colours, repeating past 10\n"
      "groups), hosts as rounded boxes, and a legend of the groups; --color-by DIM\n"
      "draws DIM's panel only. Above them the op chain, each dim's layout and\n"
      "placement, and the notation. At most " +
      std::to_string(devmesh::plan::max_drawn_ranks) + " ranks.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e, to_stdout, to_stderr);
  } catch (const CLI::ParseError& e) {
    return fail(json, Status::invalid_argument, e.what(), to_stdout, to_stderr);
  } catch (const std::exception& e) {
    // CLI11 2.1 lets std::stoll's out_of_range escape from a flag given a
    // huge value (--root=99999999999999999999).
    return fail(json, Status::invalid_argument,
                std::string("a value on the command line is out of range (") + e.what() + ")", to_stdout,
                to_stderr);
  }

  try {
    devmesh::RootSpec spec;
    spec.shape = parse_indices(shape, "--shape");
    spec.names = split(names, ',');
    if (!ranks.empty()) spec.ranks = parse_indices(ranks, "--ranks");
    if (!world.empty()) spec.world = parse_index(world, "--world");
    View view = View::create(std::move(spec));

    std::string ops;  // the chain as given, for the SVG's title
    std::vector<View> pushed;  // --push, until --concatenate
    std::map<const CLI::Option*, std::size_t> used;  // occurrences consumed per option
    for (const CLI::Option* opt : app.parse_order()) {
      const std::size_t n = used[opt]++;
      if (opt == slice_opt) {
        view = view.slice(split(slices[n], ','));
        ops += " --slice " + slices[n];
      } else if (opt == flatten_opt) {
        view = flattens[n] == "-" ? view.flatten() : view.flatten(flattens[n]);
        ops += " --flatten " + flattens[n];
      } else if (opt == unflatten_opt) {
        view = unflatten(view, unflattens[n]);
        ops += " --unflatten " + unflattens[n];
      } else if (opt == root_opt) {
        view = view.root();
        ops += " --root";
      } else if (opt == push_opt) {
        pushed.push_back(view);
        ops += " --push";
      } else if (opt == concat_opt) {
        pushed.push_back(view);
        view = View::concatenate(pushed);
        pushed.clear();
        ops += " --concatenate";
      }
    }

    std::optional<devmesh::plan::Hosts> hosts;
    // Counted, not tested for emptiness: an empty value is an error.
    if (hosts_opt->count() > 0)
      hosts = devmesh::plan::make_hosts(view, parse_index(ranks_per_host, "--ranks-per-host"));

    std::optional<devmesh::plan::Member> member;
    if (!rank.empty()) {
      const index_t r = parse_index(rank, "--rank");
      const std::optional<index_t> x = view.root_index(r);
      if (!x)
        throw Error(Status::invalid_argument,
                    "rank " + std::to_string(r) + " is not a member of the mesh");
      member = devmesh::plan::Member{r, *x};
    }

    std::optional<NeighborQuery> query;
    std::vector<index_t> neighbor_xs;
    if (neighbors_opt->count() > 0) {
      query = neighbor_query(view, neighbors);
      neighbor_xs = neighbor_members(view, member);
    }

    // Everything that can fail runs before the first byte goes out.
    const bool svg_to_stdout = svg_file == "-";
    if (svg_to_stdout && json)
      throw Error(Status::invalid_argument, "--svg - and --json would both write to stdout");
    if (svg_opt->count() > 0 && svg_file.empty())
      throw Error(Status::invalid_argument, "--svg needs a file name ('-' for stdout)");
    std::string svg;
    if (!svg_file.empty()) {
      devmesh::plan::SvgOptions options;
      if (color_opt->count() > 0) options.color_dim = view.dim_index(color_by);
      options.member = member;
      options.hosts = hosts;
      options.ops = ops.empty() ? "" : ops.substr(1);
      svg = devmesh::plan::to_svg(view, options);
    }
    std::string out;
    if (json) {
      nlohmann::ordered_json j = devmesh::plan::to_json(view, member, hosts);
      if (query) j["neighbors"] = neighbors_json(view, *query, neighbor_xs);
      out = j.dump() + '\n';
    } else if (!svg_to_stdout) {
      std::ostringstream text;
      devmesh::plan::print_text(text, view, member, hosts);
      if (query) neighbors_text(text, view, *query, neighbor_xs);
      out = text.str();
    }
    if (!svg_file.empty() && !svg_to_stdout) {
      std::ofstream file(svg_file, std::ios::binary);
      if (!(file << svg) || !file.flush())
        throw Error(Status::invalid_argument, "cannot write the SVG to '" + svg_file + "'");
    }
    to_stdout << (svg_to_stdout ? svg : out) << std::flush;
    return 0;
  } catch (const Error& e) {
    return fail(json, e.status(), e.what(), to_stdout, to_stderr);
  } catch (const std::exception& e) {
    // Out of memory and the like: still a plain error, never a crash.
    return fail(json, Status::invalid_argument, e.what(), to_stdout, to_stderr);
  }
}

// fuzz/fuzz_plan_args.cpp compiles this file with DEVMESH_PLAN_NO_MAIN and
// calls run_plan in-process.
#ifndef DEVMESH_PLAN_NO_MAIN
int main(int argc, char** argv) { return run_plan(argc, argv, std::cout, std::cerr); }
#endif
