// devmesh-plan's hosts: block placement of parent ranks and where each dim's
// groups fall on it.

#include <algorithm>
#include <string>
#include <vector>

#include "plan.hpp"

namespace devmesh::plan {
namespace {

// Number of distinct values in `hosts` (reordered).
index_t distinct(std::vector<index_t>& hosts) {
  std::sort(hosts.begin(), hosts.end());
  return std::unique(hosts.begin(), hosts.end()) - hosts.begin();
}

void add(Placement& p, index_t spanned) {
  p.min_hosts = p.min_hosts ? std::min(p.min_hosts, spanned) : spanned;
  p.max_hosts = std::max(p.max_hosts, spanned);
  p.intra_host = p.max_hosts == 1;
}

}  // namespace

Hosts make_hosts(const View& view, index_t ranks_per_host) {
  if (ranks_per_host < 1)
    throw Error(Status::invalid_argument,
                "--ranks-per-host " + std::to_string(ranks_per_host) + " is not a positive number of ranks");
  if (view.world() % ranks_per_host != 0)
    throw Error(Status::shape_mismatch,
                "the world of " + std::to_string(view.world()) + " ranks is not a multiple of --ranks-per-host " +
                    std::to_string(ranks_per_host) + " (hosts are blocks of " + std::to_string(ranks_per_host) +
                    " consecutive parent ranks" +
                    (view.has_rank_list() ? "; set the parent size with --world)" : ")"));
  return Hosts{ranks_per_host, view.world() / ranks_per_host};
}

Placement placement(const View& view, std::size_t dim, const Hosts& hosts) {
  const Layout& layout = view.dims()[dim].layout;
  const index_t w = view.root_size();
  Placement p;
  if (!view.has_rank_list() && w > max_listed_ranks) {
    // Root index x is parent rank x, hosts are blocks of K root indices.
    p.intra_host = within_blocks(layout, hosts.ranks_per_host);
    if (p.intra_host) p.min_hosts = p.max_hosts = 1;
    return p;
  }
  // Groups are translates of one set of offsets by the complement's bases.
  const index_t n = size(layout);
  std::vector<index_t> offsets(static_cast<std::size_t>(n)), spanned(offsets.size());
  for (index_t k = 0; k < n; ++k) offsets[static_cast<std::size_t>(k)] = offset(layout, k);
  const Layout rest = complement(layout, w);
  for (index_t g = 0, groups = size(rest); g < groups; ++g) {
    const index_t base = offset(rest, g);
    for (std::size_t k = 0; k < offsets.size(); ++k) spanned[k] = hosts.host(view.parent_rank(base + offsets[k]));
    add(p, distinct(spanned));
  }
  return p;
}

std::string describe(const Placement& p) {
  if (p.intra_host) return "intra-host";
  if (p.max_hosts == 0) return "cross-host";
  return std::string("cross-host, ") + (p.min_hosts == p.max_hosts ? "each group spans " : "groups span up to ") +
         std::to_string(p.max_hosts) + " hosts";
}

Placement placement(const View& view, std::size_t dim, const Hosts& hosts, index_t x) {
  std::vector<index_t> spanned = view.group(dim, x);
  for (index_t& r : spanned) r = hosts.host(r);
  Placement p;
  add(p, distinct(spanned));
  return p;
}

}  // namespace devmesh::plan
