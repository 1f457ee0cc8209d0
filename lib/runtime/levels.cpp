// Where ranks run, gathered once: hosts and the levels outside them
// (devmesh/hosts.hpp, devmesh/topology.hpp). What a rank reports is
// gathered raw and read on every rank alike, so that a malformed string or
// a level missing on one rank fails every rank with the same error.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_map>

#include "hosts.hpp"
#include "mesh_state.hpp"
#include "mpi_check.hpp"

namespace devmesh::detail {
namespace {

// What separates the parts of a report, and marks a backend's failure.
constexpr char part_sep = '\x1e';
constexpr char failure_mark = '\x1d';

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

// Every rank's string, in rank order; `lengths` where gathered already.
std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine, std::vector<int> lengths) {
  int size = 0;
  DEVMESH_MPI(MPI_Comm_size(comm, &size));
  const int len = static_cast<int>(mine.size());
  if (lengths.empty()) {
    lengths.resize(static_cast<std::size_t>(size));
    DEVMESH_MPI(MPI_Allgather(&len, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  }
  std::vector<int> displs(static_cast<std::size_t>(size));
  long total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    displs[r] = static_cast<int>(total);
    total += lengths[r];
  }
  if (total > 0x7fffffff) throw Error(Status::invalid_argument, "the host and level strings of all ranks exceed 2 GiB");
  std::string all(static_cast<std::size_t>(total), '\0');
  DEVMESH_MPI(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, comm));
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    out.push_back(all.substr(static_cast<std::size_t>(displs[r]), static_cast<std::size_t>(lengths[r])));
  return out;
}

// leader[r]: the first rank with r's string.
std::vector<int> leaders(const std::vector<std::string>& ids) {
  std::unordered_map<std::string_view, int> first;
  std::vector<int> out;
  for (std::size_t r = 0; r < ids.size(); ++r)
    out.push_back(first.try_emplace(ids[r], static_cast<int>(r)).first->second);
  return out;
}

void every_or_none(const char* variable, int count, int size) {
  if (count != 0 && count != size)
    throw Error(Status::inconsistent, std::string(variable) + " is set on " + std::to_string(count) + " of " +
                                          std::to_string(size) + " ranks: set it on every rank or on none");
}

// This rank's report beyond its host: the override, or Slurm's address,
// its pattern and the backends' levels.
std::string report(bool override_set, const LevelSource* src, int host_local_rank) {
  if (override_set) return env(topology_variable);
  std::string backend;
  if (src && src->backend) {
    try {
      backend = src->backend(host_local_rank);
    } catch (const Error& e) {
      backend = failure_mark + std::string(e.what());
    }
  }
  return env("SLURM_TOPOLOGY_ADDR") + part_sep + env("SLURM_TOPOLOGY_ADDR_PATTERN") + part_sep + backend;
}

// The split-type path: leaders by node, reports gathered with them.
void by_node(MPI_Comm comm, int rank, bool with_reports, const std::function<std::string(int)>& mine,
             std::vector<int>& leader, std::vector<std::string>& reports) {
  MPI_Comm node = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int low = rank, local = 0;
  int rc = MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(node, &local);
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&rank, &low, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Allreduce over the node communicator");
  const std::string text = with_reports ? mine(local) : std::string();
  // One allgather: each rank's leader with its report's length.
  const int pair[2] = {low, static_cast<int>(text.size())};
  std::vector<int> table(leader.size() * 2);
  DEVMESH_MPI(MPI_Allgather(pair, 2, MPI_INT, table.data(), 2, MPI_INT, comm));
  std::vector<int> lengths(leader.size());
  for (std::size_t r = 0; r < leader.size(); ++r) {
    leader[r] = table[2 * r];
    lengths[r] = table[2 * r + 1];
  }
  if (with_reports) reports = gather_strings(comm, text, std::move(lengths));
}

}  // namespace

Places gather_places(MPI_Comm comm, const LevelSource* src) {
  int rank = 0, size = 0;
  DEVMESH_MPI(MPI_Comm_rank(comm, &rank));
  DEVMESH_MPI(MPI_Comm_size(comm, &size));
  const std::string id = env(host_id_variable);
  const int set[2] = {id.empty() ? 0 : 1, src && !env(topology_variable).empty() ? 1 : 0};
  int count[2] = {0, 0};
  DEVMESH_MPI(MPI_Allreduce(set, count, 2, MPI_INT, MPI_SUM, comm));
  every_or_none(host_id_variable, count[0], size);
  every_or_none(topology_variable, count[1], size);
  Places p;
  p.override_set = count[1] != 0;
  // A backend picks its device by the host local rank, which host ids
  // give only once gathered: then the reports are gathered after.
  const bool later = src && src->backend && !p.override_set && count[0] != 0;
  const bool with_reports = src && !later;
  const auto mine = [&](int local) { return report(p.override_set, src, local); };
  std::vector<int> leader(static_cast<std::size_t>(size));
  if (count[0] != 0) {
    const std::vector<std::string> all = gather_strings(comm, with_reports ? id + part_sep + mine(-1) : id, {});
    std::vector<std::string> ids;
    for (const std::string& s : all) {
      const std::size_t cut = with_reports ? s.find(part_sep) : std::string::npos;
      ids.push_back(s.substr(0, cut));
      if (with_reports) p.reports.push_back(s.substr(cut + 1));
    }
    leader = leaders(ids);
  } else {
    by_node(comm, rank, with_reports, mine, leader, p.reports);
  }
  // Leaders come in increasing order of first appearance, so numbering them
  // in rank order numbers hosts by their lowest rank.
  p.host_of.resize(static_cast<std::size_t>(size));
  int hosts = 0;
  for (int r = 0; r < size; ++r) {
    const int l = leader[static_cast<std::size_t>(r)];
    p.host_of[static_cast<std::size_t>(r)] = l == r ? hosts++ : p.host_of[static_cast<std::size_t>(l)];
  }
  if (later) p.reports = gather_strings(comm, mine(host_info_of(p.host_of, rank).local_rank), {});
  return p;
}

namespace {

// One rank's levels outside the host, read from its report.
Pairs read_report(const std::string& s, bool override_set, std::size_t r) {
  const std::string who = " of rank " + std::to_string(r);
  if (override_set) return parse_pairs(s, ';', std::string(topology_variable) + who);
  const std::size_t a = s.find(part_sep), b = s.find(part_sep, a + 1);
  const std::string addr = s.substr(0, a), pattern = s.substr(a + 1, b - a - 1), backend = s.substr(b + 1);
  if (!backend.empty() && backend[0] == failure_mark)
    throw Error(Status::backend, "rank " + std::to_string(r) + ": a backend's levels: " + backend.substr(1));
  Pairs out = parse_pairs(backend, ';', "the levels a backend reports" + who);
  if (addr.empty() && pattern.empty()) return out;
  try {
    for (auto& level : slurm_levels(addr, pattern)) out.push_back(std::move(level));
  } catch (const Error& e) {
    throw Error(e.status(), "rank " + std::to_string(r) + ": " + e.what());
  }
  return out;
}

std::string names_text(const Pairs& pairs) {
  std::string out;
  for (const auto& [level, name] : pairs) out += (out.empty() ? "" : ", ") + level;
  return "(" + out + ")";
}

}  // namespace

Levels levels_of(const Places& p) {
  std::vector<std::string> names{"host"};
  std::vector<std::vector<std::string>> ids(p.host_of.size());
  Pairs first;
  for (std::size_t r = 0; r < p.host_of.size(); ++r) {
    const Pairs pairs = p.reports.empty() ? Pairs{} : read_report(p.reports[r], p.override_set, r);
    if (r == 0) {
      first = pairs;
      for (const auto& [level, name] : pairs) names.push_back(level);
    }
    bool same = pairs.size() == first.size();
    for (std::size_t k = 0; same && k < pairs.size(); ++k) same = pairs[k].first == first[k].first;
    if (!same)
      throw Error(Status::inconsistent, "rank " + std::to_string(r) + " finds the levels " + names_text(pairs) +
                                            " outside its host, rank 0 " + names_text(first) +
                                            ": every rank needs the same levels (DEVMESH_TOPOLOGY, "
                                            "SLURM_TOPOLOGY_ADDR_PATTERN)");
    ids[r].push_back(std::to_string(p.host_of[r]));
    for (const auto& [level, name] : pairs) ids[r].push_back(name);
  }
  return make_levels(std::move(names), ids);
}

std::shared_ptr<RootHosts> root_hosts(const Levels& lv, const std::vector<int>& parent_of_root, int index) {
  auto out = std::make_shared<RootHosts>();
  // Instances renumbered by lowest root index among the members.
  const auto renumbered = [&](std::size_t l) {
    std::unordered_map<index_t, index_t> number;
    std::vector<index_t> of;
    for (const int r : parent_of_root)
      of.push_back(number.try_emplace(lv.of[l][static_cast<std::size_t>(r)], number.size()).first->second);
    return of;
  };
  const std::vector<index_t> hosts = renumbered(0);
  std::vector<int> host_of(hosts.begin(), hosts.end());
  out->caller = host_info_of(host_of, index);
  bool host_major = out->caller.uniform;
  for (std::size_t x = 0; host_major && x < host_of.size(); ++x)
    host_major = host_of[x] == static_cast<int>(x) / out->caller.local_size;
  if (host_major)
    out->local_size = out->caller.local_size;
  else
    out->host_of = std::move(host_of);
  for (std::size_t l = 1; l < lv.names.size(); ++l) {
    std::vector<index_t> of = renumbered(l);
    const std::vector<int> as_int(of.begin(), of.end());
    const HostInfo in = host_info_of(as_int, index);
    out->caller.levels.push_back({lv.names[l], in.host, in.hosts, in.local_rank, in.local_size});
    out->level_names.push_back(lv.names[l]);
    out->level_of.push_back(std::move(of));
  }
  return out;
}

}  // namespace devmesh::detail

namespace devmesh {

Levels discover_levels(MPI_Comm parent) {
  detail::check_parent_usable(parent);
  const detail::LevelSource none;
  return detail::levels_of(detail::gather_places(parent, &none));
}

}  // namespace devmesh
