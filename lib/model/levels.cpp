// Levels: what a rank reports of where it runs, as the placement reads it
// (devmesh/topology.hpp).
#include <algorithm>
#include <unordered_map>

#include "devmesh/topology.hpp"
#include "names.hpp"

namespace devmesh {
namespace {

[[noreturn]] void fail(Status s, const std::string& message) { throw Error(s, message); }

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::string_view trimmed(std::string_view s) {
  const std::size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

}  // namespace

std::size_t Levels::level(std::string_view name) const {
  for (std::size_t l = 0; l < names.size(); ++l)
    if (names[l] == name) return l;
  fail(Status::invalid_argument,
       "no level " + detail::quoted(name) + " among the levels found (" + detail::join(names, ", ") +
           "); levels outside the host come from DEVMESH_TOPOLOGY, Slurm's SLURM_TOPOLOGY_ADDR or a backend's "
           "NVLink domain (docs/TOPOLOGY.md)");
}

std::vector<index_t> Levels::sizes(std::size_t l) const {
  std::vector<index_t> n;
  for (const index_t i : of[l]) {
    if (static_cast<std::size_t>(i) >= n.size()) n.resize(static_cast<std::size_t>(i) + 1);
    ++n[static_cast<std::size_t>(i)];
  }
  return n;
}

Levels make_levels(std::vector<std::string> names, const std::vector<std::vector<std::string>>& ids) {
  for (std::size_t a = 0; a < names.size(); ++a) {
    detail::check_name(names[a], "a level name");
    for (std::size_t b = 0; b < a; ++b)
      if (names[a] == names[b]) fail(Status::duplicate_name, "level " + detail::quoted(names[a]) + " is given twice");
  }
  Levels out;
  out.of.assign(names.size(), std::vector<index_t>(ids.size()));
  for (std::size_t l = 0; l < names.size(); ++l) {
    // An instance is its name with every outer instance's.
    std::unordered_map<std::string, index_t> number;
    for (std::size_t r = 0; r < ids.size(); ++r) {
      if (ids[r].size() != names.size())
        fail(Status::inconsistent, "rank " + std::to_string(r) + " reports " + std::to_string(ids[r].size()) +
                                       " levels where the levels are " + detail::join(names, ", "));
      std::string key;
      for (std::size_t k = l; k < names.size(); ++k) key += ids[r][k] + '\x1f';
      out.of[l][r] = number.try_emplace(key, static_cast<index_t>(number.size())).first->second;
    }
  }
  out.names = std::move(names);
  return out;
}

Levels block_levels(index_t ranks, index_t ranks_per_host, index_t hosts_per_domain, index_t domains_per_switch) {
  if (ranks < 1) fail(Status::invalid_argument, "a topology needs at least one rank");
  if (ranks_per_host < 1)
    fail(Status::invalid_argument, "ranks per host " + std::to_string(ranks_per_host) + " is below 1");
  if (hosts_per_domain < 0 || domains_per_switch < 0)
    fail(Status::invalid_argument, "hosts per domain and domains per switch are counts (0: no such level)");
  if (domains_per_switch > 0 && hosts_per_domain == 0)
    fail(Status::invalid_argument, "domains per switch needs hosts per domain");
  std::vector<std::string> names{"host"};
  if (hosts_per_domain > 0) names.push_back("domain");
  if (domains_per_switch > 0) names.push_back("switch");
  std::vector<std::vector<std::string>> ids(static_cast<std::size_t>(ranks));
  for (index_t r = 0; r < ranks; ++r) {
    const index_t host = r / ranks_per_host;
    auto& id = ids[static_cast<std::size_t>(r)];
    id.push_back(std::to_string(host));
    if (hosts_per_domain > 0) id.push_back(std::to_string(host / hosts_per_domain));
    if (domains_per_switch > 0) id.push_back(std::to_string(host / hosts_per_domain / domains_per_switch));
  }
  return make_levels(std::move(names), ids);
}

Pairs parse_pairs(std::string_view text, char sep, std::string_view what) {
  Pairs out;
  for (const std::string_view raw : split(text, sep)) {
    const std::string_view item = trimmed(raw);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos || trimmed(item.substr(0, eq)).empty() || trimmed(item.substr(eq + 1)).empty())
      fail(Status::invalid_argument,
           std::string(what) + " item " + detail::quoted(item) + " is not of the form key=value");
    out.emplace_back(trimmed(item.substr(0, eq)), trimmed(item.substr(eq + 1)));
  }
  return out;
}

Pairs slurm_levels(std::string_view addr, std::string_view pattern) {
  const std::vector<std::string_view> names = split(pattern, '.'), parts = split(addr, '.');
  if (names.size() != parts.size())
    fail(Status::invalid_argument, "SLURM_TOPOLOGY_ADDR " + detail::quoted(addr) + " has " +
                                       std::to_string(parts.size()) + " parts, SLURM_TOPOLOGY_ADDR_PATTERN " +
                                       detail::quoted(pattern) + " " + std::to_string(names.size()));
  Pairs out;
  for (std::size_t i = names.size(); i-- > 0;) {
    if (names[i] == "node") continue;
    // The how-many-th of its name, counted from the leaf.
    const auto seen = std::count(names.begin() + static_cast<std::ptrdiff_t>(i) + 1, names.end(), names[i]);
    out.emplace_back(std::string(names[i]) + (seen ? std::to_string(seen + 1) : ""), std::string(parts[i]));
  }
  return out;
}

bool groups_within(const Layout& layout, const std::vector<index_t>& instance_of_root) {
  const auto w = static_cast<index_t>(instance_of_root.size());
  for (index_t x = 0; x < w; ++x)
    if (instance_of_root[static_cast<std::size_t>(x)] !=
        instance_of_root[static_cast<std::size_t>(group_base(layout, x))])
      return false;
  return true;
}

}  // namespace devmesh
