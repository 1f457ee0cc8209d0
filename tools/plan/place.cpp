// devmesh-plan's topology and placement: the levels of the parent's ranks
// (--topology FILE, or blocks from --ranks-per-host K, --hosts-per-domain H,
// --domains-per-switch D), the root the model's place() makes over them
// (--place), and what the text and JSON say about it: each root index's
// parent rank, the leftovers, and the levels each dim's groups stay within.
//
// A topology file has one line per parent rank, in rank order, of
// "level=name" pairs innermost first, e.g.
//   host=n17 domain=nvl2 switch=s0   # rank 0
// blank lines and '#' comments skipped; every line names the same levels,
// "host" first. An instance is its name with every outer instance's, so
// host n0 in domain a and host n0 in domain b are two hosts.

#include <algorithm>
#include <fstream>
#include <numeric>
#include <sstream>

#include "plan.hpp"

namespace devmesh::plan {
namespace {

using json = nlohmann::ordered_json;

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", " : "") + names[i];
  return out;
}

// One line of a topology file, without its comment: the levels' names and
// the rank's instance names. Errors name the file and the line.
void parse_line(std::string line, std::size_t number, const std::string& where, std::vector<std::string>& names,
                std::vector<std::string>& ids) {
  std::replace(line.begin(), line.end(), '\t', ' ');
  const Pairs pairs = parse_pairs(line, ' ', where + " line " + std::to_string(number));
  for (const auto& [level, name] : pairs) {
    for (const std::string& seen : names)
      if (seen == level)
        throw Error(Status::invalid_argument,
                    where + " line " + std::to_string(number) + " gives level '" + level + "' twice");
    names.push_back(level);
    ids.push_back(name);
  }
  if (!names.empty() && names[0] != "host")
    throw Error(Status::invalid_argument, where + " line " + std::to_string(number) + " starts with level '" +
                                              names[0] + "': the first level is the host (innermost first, e.g. " +
                                              "host=n17 domain=nvl2 switch=s0)");
}

// The instance names of each level, as the topology names them.
std::vector<std::vector<std::string>> instance_names(const Levels& levels,
                                                     const std::vector<std::vector<std::string>>& ids) {
  std::vector<std::vector<std::string>> out(levels.names.size());
  for (std::size_t l = 0; l < levels.names.size(); ++l) {
    out[l].resize(levels.sizes(l).size());
    for (std::size_t r = 0; r < ids.size(); ++r) out[l][static_cast<std::size_t>(levels.of[l][r])] = ids[r][l];
  }
  return out;
}

// "0-3,8,11-14"
std::string ranges(const std::vector<index_t>& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(sorted[i]) + (j > i ? "-" + std::to_string(sorted[j]) : "");
    i = j + 1;
  }
  return out.empty() ? "none" : out;
}

// Reads one line of at most max_line bytes, so that no file (a device
// without newlines, say) holds the planner for long or fills its memory.
bool next_line(std::istream& in, std::string& line, std::size_t number, const std::string& where) {
  constexpr std::size_t max_line = 65536, max_lines = 16 * static_cast<std::size_t>(max_placed_ranks);
  line.clear();
  for (char c; in.get(c) && c != '\n';) {
    if (line.size() == max_line)
      throw Error(Status::invalid_argument,
                  where + " line " + std::to_string(number) + " is longer than " + std::to_string(max_line) + " bytes");
    line += c;
  }
  if (number > max_lines && (in || !line.empty()))
    throw Error(Status::invalid_argument, where + " has more than " + std::to_string(max_lines) + " lines");
  return in || !line.empty();
}

}  // namespace

Topology read_topology(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(Status::invalid_argument, "cannot read the topology file '" + file + "'");
  const std::string where = "topology file '" + file + "'";
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> ids;
  std::size_t first = 0;  // the line that set the levels
  std::string line;
  for (std::size_t number = 1; next_line(in, line, number, where); ++number) {
    line = line.substr(0, line.find('#'));
    std::vector<std::string> these, id;
    parse_line(line, number, where, these, id);
    if (these.empty()) continue;
    if (first == 0) {
      names = these;
      first = number;
    } else if (these != names) {
      throw Error(Status::invalid_argument, where + " line " + std::to_string(number) + " names the levels " +
                                                join_names(these) + ", line " + std::to_string(first) + " " +
                                                join_names(names) + ": every line names the same levels in order");
    }
    if (static_cast<index_t>(ids.size()) >= max_placed_ranks)
      throw Error(Status::invalid_argument, where + " lists more than " + std::to_string(max_placed_ranks) +
                                                " ranks, the most the planner places");
    ids.push_back(std::move(id));
  }
  if (in.bad()) throw Error(Status::invalid_argument, "cannot read the topology file '" + file + "'");
  if (ids.empty()) throw Error(Status::invalid_argument, where + " lists no ranks (one line of level=name per rank)");
  Topology t;
  t.levels = make_levels(names, ids);
  t.names = instance_names(t.levels, ids);
  t.source = "--topology " + file;
  return t;
}

Topology block_topology(index_t world, index_t ranks_per_host, index_t hosts_per_domain, index_t domains_per_switch) {
  if (world > max_placed_ranks)
    throw Error(Status::invalid_argument, "a topology of " + std::to_string(world) +
                                              " ranks: the planner places at most " + std::to_string(max_placed_ranks));
  Topology t;
  t.levels = block_levels(world, ranks_per_host, hosts_per_domain, domains_per_switch);
  t.names.resize(t.levels.names.size());
  for (std::size_t l = 0; l < t.names.size(); ++l)
    for (std::size_t i = 0; i < t.levels.sizes(l).size(); ++i) t.names[l].push_back(std::to_string(i));
  t.source = "--ranks-per-host " + std::to_string(ranks_per_host);
  if (hosts_per_domain > 0) t.source += " --hosts-per-domain " + std::to_string(hosts_per_domain);
  if (domains_per_switch > 0) t.source += " --domains-per-switch " + std::to_string(domains_per_switch);
  return t;
}

void check_root(const RootSpec& spec) {
  // Zeros stand for any size until place() fills them.
  RootSpec check{spec.shape, spec.names, 0, {}};
  for (index_t& s : check.shape) s = s == 0 ? 1 : s;
  (void)View::create(std::move(check));
}

RootSpec place_root(RootSpec spec, Topology& t) {
  if (t.placement.empty()) {
    // Nothing placed, as the library without a placement: root index x is
    // parent rank x, over every rank (the library's checks and messages).
    spec.world = t.levels.ranks();
    const View root = View::create(spec);
    t.placed = Placed{root.root_shape(), std::vector<index_t>(static_cast<std::size_t>(root.root_size())), {}};
    std::iota(t.placed.parent_ranks.begin(), t.placed.parent_ranks.end(), index_t{0});
    return spec;
  }
  t.placed = place(t.levels, spec.shape, spec.names, t.placement);
  spec.shape = t.placed.shape;
  spec.ranks = t.placed.parent_ranks;
  spec.world = t.levels.ranks();
  return spec;
}

std::vector<index_t> instance_of_root(const View& view, const Topology& t, std::size_t level) {
  std::vector<index_t> out(static_cast<std::size_t>(view.root_size()));
  const std::vector<index_t>& of = t.levels.of[level];
  for (index_t x = 0; x < view.root_size(); ++x) {
    const index_t r = view.parent_rank(x);
    out[static_cast<std::size_t>(x)] = r < static_cast<index_t>(of.size()) ? of[static_cast<std::size_t>(r)] : -1 - x;
  }
  return out;
}

std::vector<std::string> within(const View& view, std::size_t dim, const Topology& t) {
  std::vector<std::string> out;
  for (std::size_t l = 0; l < t.levels.names.size(); ++l)
    if (groups_within(view.dims()[dim].layout, instance_of_root(view, t, l))) out.push_back(t.levels.names[l]);
  return out;
}

std::string within_text(const std::vector<std::string>& levels) {
  return "within " + (levels.empty() ? std::string("no level") : join_names(levels));
}

LevelTree level_tree(const Levels& levels) {
  const std::size_t n = levels.names.size();
  LevelTree t;
  t.members.resize(n);
  t.inner.resize(n);
  for (std::size_t l = 0; l < n; ++l) {
    t.members[l].resize(levels.sizes(l).size());
    t.inner[l].resize(t.members[l].size());
  }
  for (index_t r = 0; r < levels.ranks(); ++r)
    for (std::size_t l = 0; l < n; ++l) {
      t.members[l][static_cast<std::size_t>(levels.of[l][static_cast<std::size_t>(r)])].push_back(r);
    }
  for (std::size_t l = 1; l < n; ++l)
    for (std::size_t i = 0; i < t.members[l - 1].size(); ++i) {
      const index_t first = t.members[l - 1][i].front();
      t.inner[l][static_cast<std::size_t>(levels.of[l][static_cast<std::size_t>(first)])].push_back(
          static_cast<index_t>(i));
    }
  return t;
}

namespace {

void print_instance(std::ostream& os, const Topology& t, const LevelTree& tr, const std::vector<index_t>& used_sorted,
                    std::size_t l, index_t i) {
  const std::vector<index_t>& in = tr.members[l][static_cast<std::size_t>(i)];
  std::vector<index_t> used;
  for (const index_t q : in)
    if (std::binary_search(used_sorted.begin(), used_sorted.end(), q)) used.push_back(q);
  os << std::string(2 * (t.levels.names.size() - l), ' ') << t.levels.names[l] << ' '
     << t.names[l][static_cast<std::size_t>(i)] << ": " << (in.size() == 1 ? "rank " : "ranks ") << ranges(in);
  if (used.size() != in.size()) os << " (in the mesh: " << ranges(used) << ")";
  os << '\n';
  if (l > 0)
    for (const index_t k : tr.inner[l][static_cast<std::size_t>(i)]) print_instance(os, t, tr, used_sorted, l - 1, k);
}

}  // namespace

namespace {

// "placed over 15 parent ranks, levels host, domain (--topology f), placement tp=host"
std::string placement_line(const Topology& t) {
  std::string request;
  for (const auto& [dim, level] : t.placement) request += (request.empty() ? "" : ",") + dim + "=" + level;
  return "placed over " + std::to_string(t.levels.ranks()) + " parent ranks, levels " + join_names(t.levels.names) +
         " (" + t.source + "), placement " + (request.empty() ? "none" : request);
}

}  // namespace

std::vector<SvgOptions::Note> placement_notes(const Topology& t) {
  return {{"placement", placement_line(t)}, {"leftovers", "leftovers: " + list_text(t.placed.leftovers)}};
}

void print_levels(std::ostream& os, const View& view, const Topology& t) {
  std::vector<index_t> ranks;
  for (index_t x = 0; x < view.root_size(); ++x) ranks.push_back(view.parent_rank(x));
  os << placement_line(t) << '\n';
  os << "parent ranks by root index: " << list_text(ranks) << '\n';
  os << "leftovers: " << list_text(t.placed.leftovers) << '\n';
  if (t.levels.ranks() > max_drawn_ranks) {
    os << "  (levels not listed for more than " << max_drawn_ranks << " ranks)\n";
    return;
  }
  // The instances, outermost first, each indented inside the one holding it.
  os << "level instances, outermost first:\n";
  std::sort(ranks.begin(), ranks.end());
  const LevelTree tr = level_tree(t.levels);
  const std::size_t top = t.levels.names.size() - 1;
  for (std::size_t i = 0; i < tr.members[top].size(); ++i)
    print_instance(os, t, tr, ranks, top, static_cast<index_t>(i));
}

void add_levels_json(json& out, const View& view, const Topology& t) {
  std::vector<index_t> ranks;
  for (index_t x = 0; x < view.root_size(); ++x) ranks.push_back(view.parent_rank(x));
  json placement = json::object();
  for (const auto& [dim, level] : t.placement) placement[dim] = level;
  out["levels"] = t.levels.names;
  out["placement"] = std::move(placement);
  out["parent_ranks"] = std::move(ranks);
  out["leftovers"] = t.placed.leftovers;
}

std::vector<std::string> instances_of(const Topology& t, index_t rank) {
  std::vector<std::string> out;
  for (std::size_t l = 0; l < t.levels.names.size(); ++l)
    out.push_back(rank < t.levels.ranks()
                      ? t.names[l][static_cast<std::size_t>(t.levels.of[l][static_cast<std::size_t>(rank)])]
                      : std::string("-"));
  return out;
}

std::string leftover_text(const Topology& t, index_t rank) {
  if (!std::binary_search(t.placed.leftovers.begin(), t.placed.leftovers.end(), rank)) return "";
  return "rank " + std::to_string(rank) +
         " is not a member of the mesh: the placement leaves it over (leftovers: " + list_text(t.placed.leftovers) +
         ")";
}

}  // namespace devmesh::plan
