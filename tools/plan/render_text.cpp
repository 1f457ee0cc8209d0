// devmesh-plan's readable picture.
//
//   root mesh dp=2 tp=4 (8 ranks, world 8)
//        tp=0 tp=1 tp=2 tp=3        the root index grid, last dim across,
//   dp=0    0    1    2    3        showing each index's parent rank
//   dp=1    4    5    6    7
//
//   view: dp=2 tp=4
//   dp = 2:4                        per dim: its layout and its groups
//     [0,4] [1,5] [2,6] [3,7]
//
// With --ranks-per-host K the hosts are listed under the first line
// ("host 1: ranks 4-7"), each grid row ends with its host ("host 1") or,
// where some row spans hosts, every cell shows its host ("5@h1"), and each
// dim's line says whether its groups stay on one host ("intra-host") or not
// ("cross-host, each group spans 2 hosts"). With a topology (--topology,
// --place) the placement's lines follow the first line (print_levels) and
// each dim's line says which levels its groups stay within.

#include <algorithm>
#include <string>
#include <vector>

#include "plan.hpp"

namespace devmesh::plan {
namespace {

std::string pad_left(const std::string& s, std::size_t width) {
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

std::string pad_right(const std::string& s, std::size_t width) {
  return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
}

// "[0,4]"
std::string list(const std::vector<index_t>& values) {
  std::string out = "[";
  for (std::size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + std::to_string(values[i]);
  return out + "]";
}

// "dp=2 tp=4"
std::string shape_line(const std::vector<std::string>& names, const std::vector<index_t>& sizes) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i ? " " : "") + names[i] + "=" + std::to_string(sizes[i]);
  return out;
}

// "ranks 4-7", "rank 4"
std::string rank_range(index_t first, index_t last) {
  return first == last ? "rank " + std::to_string(first)
                       : "ranks " + std::to_string(first) + "-" + std::to_string(last);
}

// "hosts: 4 hosts of 4 ranks, ..." and one line per host holding members:
// its block of parent ranks and, when the mesh holds only some, which.
void print_hosts(std::ostream& os, const View& view, const Hosts& hosts) {
  const index_t k = hosts.ranks_per_host;
  os << "hosts: " << hosts.count << (hosts.count == 1 ? " host of " : " hosts of ") << k
     << (k == 1 ? " rank" : " ranks") << ", block placement (rank r on host r / " << k << ")\n";
  if (view.root_size() > max_drawn_ranks) {
    os << "  (not listed for more than " << max_drawn_ranks << " ranks)\n";
    return;
  }
  std::vector<index_t> ranks;
  for (index_t x = 0; x < view.root_size(); ++x) ranks.push_back(view.parent_rank(x));
  std::sort(ranks.begin(), ranks.end());
  for (auto first = ranks.begin(); first != ranks.end();) {
    const index_t h = hosts.host(*first);
    const auto last = std::find_if(first, ranks.end(), [&](index_t r) { return hosts.host(r) != h; });
    os << "  host " << h << ": " << rank_range(h * k, h * k + k - 1);
    if (last - first != k) {
      const std::string members = list({first, last});
      os << " (in the mesh: " << members.substr(1, members.size() - 2) << ")";
    }
    os << '\n';
    first = last;
  }
}

// Rows are the root's leading dims (labelled by their coordinates), columns
// its last dim; each cell is the parent rank of that root index. With hosts,
// when every row lies on one host, each row ends with "host h"; otherwise
// each cell reads "r@hH".
void print_grid(std::ostream& os, const View& view, const std::optional<Hosts>& hosts) {
  const std::vector<std::string>& names = view.root_names();
  const std::vector<index_t>& shape = view.root_shape();
  const index_t cols = shape.back();
  const index_t rows = view.root_size() / cols;
  auto host_of = [&](index_t x) { return hosts->host(view.parent_rank(x)); };

  bool rows_on_one_host = true;
  for (index_t x = 0; hosts && x < view.root_size(); ++x)
    rows_on_one_host = rows_on_one_host && host_of(x) == host_of(x - x % cols);
  auto cell_text = [&](index_t x) {
    std::string text = std::to_string(view.parent_rank(x));
    return hosts && !rows_on_one_host ? text + "@h" + std::to_string(host_of(x)) : text;
  };

  std::vector<std::string> header, labels(static_cast<std::size_t>(rows));
  std::size_t cell = 0, label_width = 0;
  for (index_t c = 0; c < cols; ++c) {
    header.push_back(names.back() + "=" + std::to_string(c));
    cell = std::max(cell, header.back().size());
  }
  for (index_t x = 0; x < view.root_size(); ++x) cell = std::max(cell, cell_text(x).size());
  for (index_t r = 0; r < rows; ++r) {
    std::string& label = labels[static_cast<std::size_t>(r)];
    index_t rest = r;
    for (std::size_t i = shape.size() - 1; i-- > 0;) {
      label = names[i] + "=" + std::to_string(rest % shape[i]) + (label.empty() ? "" : " ") + label;
      rest /= shape[i];
    }
    label_width = std::max(label_width, label.size());
  }

  auto line = [&](const std::string& label, auto&& text, const std::string& tail) {
    std::string out = label_width ? pad_right(label, label_width) + " " : "";
    for (index_t c = 0; c < cols; ++c) out += (c ? " " : "") + pad_left(text(c), cell);
    os << out << tail << '\n';
  };
  line("", [&](index_t c) { return header[static_cast<std::size_t>(c)]; }, "");
  for (index_t r = 0; r < rows; ++r)
    line(labels[static_cast<std::size_t>(r)], [&](index_t c) { return cell_text(r * cols + c); },
         hosts && rows_on_one_host ? "  host " + std::to_string(host_of(r * cols)) : "");
}

}  // namespace

std::string list_text(const std::vector<index_t>& xs) {
  if (xs.empty()) return "none";
  std::string out;
  for (std::size_t i = 0; i < xs.size() && i < 64; ++i) out += (i ? "," : "") + std::to_string(xs[i]);
  if (xs.size() > 64) out += ",... (" + std::to_string(xs.size()) + " in all)";
  return out;
}

void print_text(std::ostream& os, const View& view, const std::optional<Member>& member,
                const std::optional<Hosts>& hosts, const Topology* topology) {
  const std::string view_line = "view: " + shape_line(view.names(), view.shape());
  if (member) {
    os << "rank " << member->rank << " (root index " << member->index;
    if (hosts) os << ", host " << hosts->host(member->rank);
    os << ") in " << view_line << '\n';
    if (topology) {
      const std::vector<std::string> at = instances_of(*topology, member->rank);
      os << "on";
      for (std::size_t l = 0; l < at.size(); ++l) os << (l ? ", " : " ") << topology->levels.names[l] << ' ' << at[l];
      os << '\n';
    }
    os << "coordinate " << list(view.coordinate(member->index)) << '\n';
    for (std::size_t d = 0; d < view.ndim(); ++d) {
      os << view.dims()[d].name << " = " << to_string(view.dims()[d].layout) << "  local rank "
         << view.local_rank(d, member->index) << "  group " << list(view.group(d, member->index));
      if (hosts) {
        // Only this rank's group was looked at, so no "each group".
        const Placement p = placement(view, d, *hosts, member->index);
        os << "  " << (p.intra_host ? "intra-host" : "cross-host, " + std::to_string(p.max_hosts) + " hosts");
      }
      os << '\n';
    }
    return;
  }

  const index_t w = view.root_size();
  os << "root mesh " << shape_line(view.root_names(), view.root_shape()) << " (" << w << " ranks, world "
     << view.world() << ")\n";
  if (hosts) print_hosts(os, view, *hosts);
  if (topology) print_levels(os, view, *topology);
  if (w <= max_drawn_ranks) {
    print_grid(os, view, hosts);
  } else {
    os << "(grid not drawn for more than " << max_drawn_ranks << " ranks)\n";
  }
  os << '\n' << view_line << '\n';
  for (std::size_t d = 0; d < view.ndim(); ++d) {
    const Dim& dim = view.dims()[d];
    os << dim.name << " = " << to_string(dim.layout);
    if (hosts) os << "  " << describe(placement(view, d, *hosts));
    if (topology) os << "  " << within_text(within(view, d, *topology));
    os << '\n';
    if (w > max_drawn_ranks) {
      os << "  " << w / dim.size() << " groups of " << dim.size() << " ranks (use --rank R to see one)\n";
      continue;
    }
    std::string groups;
    for (const std::vector<index_t>& g : view.all_groups(d)) groups += " " + list(g);
    os << ' ' << groups << '\n';
  }
}

}  // namespace devmesh::plan
