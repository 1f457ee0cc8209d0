// Host discovery, host meshes and host-aware ordering (devmesh/hosts.hpp).
#include "hosts.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "creation.hpp"
#include "mesh_state.hpp"
#include "mpi_check.hpp"

namespace devmesh {
namespace detail {
namespace {

// The value of DEVMESH_HOST_ID, empty when unset or set to "".
std::string host_id_override() {
  const char* v = std::getenv(host_id_variable);
  return v ? std::string(v) : std::string();
}

// leader[r]: the lowest rank of comm on r's host, by the override strings.
std::vector<int> leaders_by_id(MPI_Comm comm, const std::string& id, int size) {
  const int len = static_cast<int>(id.size());
  std::vector<int> lengths(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  DEVMESH_MPI(MPI_Allgather(&len, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm));
  long total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<std::size_t>(r)] = static_cast<int>(total);
    total += lengths[static_cast<std::size_t>(r)];
  }
  if (total > 0x7fffffff)
    throw Error(Status::invalid_argument, "the DEVMESH_HOST_ID strings of all ranks exceed 2 GiB");
  std::string all(static_cast<std::size_t>(total), '\0');
  DEVMESH_MPI(MPI_Allgatherv(id.data(), len, MPI_CHAR, all.data(), lengths.data(), displs.data(), MPI_CHAR, comm));
  std::unordered_map<std::string_view, int> first;
  std::vector<int> leader(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r) {
    std::string_view s(all.data() + displs[static_cast<std::size_t>(r)],
                       static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]));
    leader[static_cast<std::size_t>(r)] = first.try_emplace(s, r).first->second;
  }
  return leader;
}

// leader[r]: the lowest rank of comm on r's node, by MPI_COMM_TYPE_SHARED.
std::vector<int> leaders_by_node(MPI_Comm comm, int rank, int size) {
  MPI_Comm node = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  int mine = rank;
  int rc = MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&rank, &mine, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Allreduce over the node communicator");
  std::vector<int> leader(static_cast<std::size_t>(size));
  DEVMESH_MPI(MPI_Allgather(&mine, 1, MPI_INT, leader.data(), 1, MPI_INT, comm));
  return leader;
}

std::string counts_text(const HostInfo& info) {
  std::string s;
  const std::size_t shown = std::min<std::size_t>(info.ranks_per_host.size(), 32);
  for (std::size_t h = 0; h < shown; ++h)
    s += (h ? ", " : "") + ("host " + std::to_string(h) + ": " + std::to_string(info.ranks_per_host[h]));
  if (shown < info.ranks_per_host.size()) s += ", ... (" + std::to_string(info.ranks_per_host.size()) + " hosts)";
  return s;
}

std::shared_ptr<const RootHosts> hosts_of(const Mesh& mesh) {
  const auto& state = MeshAccess::state(mesh);
  if (!state) throw Error(Status::not_member, "the caller is not a member of this mesh (null mesh)");
  auto hosts = state->hosts();
  if (!hosts)
    throw Error(Status::invalid_argument,
                "no host info on this mesh: create it with create_host_mesh or create_host_aware, "
                "or call record_hosts(mesh) first (collective over the root's members)");
  return hosts;
}

}  // namespace

std::vector<int> host_table(MPI_Comm comm) {
  int rank = 0, size = 0;
  DEVMESH_MPI(MPI_Comm_rank(comm, &rank));
  DEVMESH_MPI(MPI_Comm_size(comm, &size));
  const std::string id = host_id_override();
  // Either every rank overrides its host identity or none does.
  int set = id.empty() ? 0 : 1, count = 0;
  DEVMESH_MPI(MPI_Allreduce(&set, &count, 1, MPI_INT, MPI_SUM, comm));
  if (count != 0 && count != size)
    throw Error(Status::inconsistent, std::string(host_id_variable) + " is set on " + std::to_string(count) + " of " +
                                          std::to_string(size) + " ranks: set it on every rank or on none");
  const std::vector<int> leader = count ? leaders_by_id(comm, id, size) : leaders_by_node(comm, rank, size);
  // Leaders come in increasing order of first appearance, so numbering them
  // in rank order numbers hosts by their lowest rank.
  std::vector<int> host_of(static_cast<std::size_t>(size));
  int hosts = 0;
  for (int r = 0; r < size; ++r) {
    const int l = leader[static_cast<std::size_t>(r)];
    host_of[static_cast<std::size_t>(r)] = l == r ? hosts++ : host_of[static_cast<std::size_t>(l)];
  }
  return host_of;
}

HostInfo host_info_of(const std::vector<int>& host_of, int rank) {
  HostInfo info;
  info.host = host_of[static_cast<std::size_t>(rank)];
  int hosts = 0;
  for (int h : host_of) hosts = std::max(hosts, h + 1);
  info.hosts = hosts;
  info.ranks_per_host.assign(static_cast<std::size_t>(hosts), 0);
  for (std::size_t r = 0; r < host_of.size(); ++r) {
    if (static_cast<int>(r) == rank) info.local_rank = info.ranks_per_host[static_cast<std::size_t>(host_of[r])];
    ++info.ranks_per_host[static_cast<std::size_t>(host_of[r])];
  }
  info.local_size = info.ranks_per_host[static_cast<std::size_t>(info.host)];
  info.uniform = true;
  for (int n : info.ranks_per_host) info.uniform = info.uniform && n == info.ranks_per_host[0];
  return info;
}

std::vector<int> host_major(const std::vector<int>& host_of, const HostInfo& info, const char* what) {
  if (!info.uniform)
    throw Error(Status::shape_mismatch,
                std::string(what) + " needs the same number of ranks on every host, but hosts have " +
                    counts_text(info) + " (hosts numbered by lowest parent rank" +
                    (host_id_override().empty() ? ")" : "; host identity from DEVMESH_HOST_ID)"));
  std::vector<int> next(static_cast<std::size_t>(info.hosts));
  for (int h = 0; h < info.hosts; ++h) next[static_cast<std::size_t>(h)] = h * info.local_size;
  std::vector<int> ranks(host_of.size());
  for (std::size_t r = 0; r < host_of.size(); ++r)
    ranks[static_cast<std::size_t>(next[static_cast<std::size_t>(host_of[r])]++)] = static_cast<int>(r);
  return ranks;
}

}  // namespace detail

using detail::host_info_of;
using detail::host_table;

HostInfo discover_hosts(MPI_Comm parent) {
  detail::check_parent_usable(parent);
  int rank = 0;
  DEVMESH_MPI(MPI_Comm_rank(parent, &rank));
  return host_info_of(host_table(parent), rank);
}

Mesh create_host_mesh(MPI_Comm parent, std::string host_dim, std::string local_dim, const MeshOptions& options) {
  detail::CreationRequest r;
  r.kind = detail::CreationKind::hosts;
  r.parent = parent;
  r.names = {std::move(host_dim), std::move(local_dim)};
  r.options = options;
  return detail::create(std::move(r));
}

Mesh create_host_aware(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names,
                       const MeshOptions& options) {
  MeshOptions aware = options;
  aware.host_aware = true;
  return Mesh::create(parent, std::move(shape), std::move(names), aware);
}

void record_hosts(const Mesh& mesh) {
  const auto& state = detail::MeshAccess::state(mesh);
  if (!state) throw Error(Status::not_member, "the caller is not a member of this mesh (null mesh)");
  if (state->hosts()) return;
  // Rank x of the root communicator is root index x.
  std::vector<int> host_of = host_table(state->root_comm());
  auto hosts = std::make_shared<detail::RootHosts>();
  hosts->caller = host_info_of(host_of, state->index());
  bool host_major = hosts->caller.uniform;
  const int per_host = hosts->caller.local_size;
  for (std::size_t x = 0; host_major && x < host_of.size(); ++x)
    host_major = host_of[x] == static_cast<int>(x) / per_host;
  if (host_major)
    hosts->local_size = per_host;
  else
    hosts->host_of = std::move(host_of);
  state->set_hosts(std::move(hosts));
}

HostInfo host_info(const Mesh& mesh) { return detail::hosts_of(mesh)->caller; }

bool dim_within_hosts(const Mesh& mesh, std::string_view dim) {
  const auto hosts = detail::hosts_of(mesh);
  const View& view = mesh.view();
  const Layout& layout = view.dims()[view.dim_or_only(dim)].layout;
  if (hosts->local_size > 0) return within_blocks(layout, hosts->local_size);
  const index_t w = view.root_size();
  for (index_t x = 0; x < w; ++x)
    if (hosts->host(x) != hosts->host(group_base(layout, x))) return false;
  return true;
}

}  // namespace devmesh
