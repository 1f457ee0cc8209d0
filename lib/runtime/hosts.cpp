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

std::vector<int> host_table(MPI_Comm comm) { return gather_places(comm, nullptr).host_of; }

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
  const detail::LevelSource none;
  const Levels levels = detail::levels_of(detail::gather_places(state->root_comm(), &none));
  std::vector<int> identity(static_cast<std::size_t>(levels.ranks()));
  for (std::size_t x = 0; x < identity.size(); ++x) identity[x] = static_cast<int>(x);
  state->set_hosts(detail::root_hosts(levels, identity, state->index()));
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

bool dim_within(const Mesh& mesh, std::string_view dim, std::string_view level) {
  const auto hosts = detail::hosts_of(mesh);
  if (level == "host") return dim_within_hosts(mesh, dim);
  const View& view = mesh.view();
  const Layout& layout = view.dims()[view.dim_or_only(dim)].layout;
  for (std::size_t l = 0; l < hosts->level_names.size(); ++l)
    if (hosts->level_names[l] == level) return groups_within(layout, hosts->level_of[l]);
  std::string known = "host";
  for (const std::string& name : hosts->level_names) known += ", " + name;
  throw Error(Status::invalid_argument,
              "no level '" + std::string(level) + "' recorded on this mesh (its levels: " + known + ")");
}

}  // namespace devmesh
