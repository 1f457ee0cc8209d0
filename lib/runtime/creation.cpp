// The creation driver (creation.hpp): local checks -> cross-check -> host
// discovery -> build, the same sequence of collective calls on every rank
// whatever its arguments, so that a rank that fails does not leave the
// others waiting.
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <string>

#include "creation_steps.hpp"
#include "devmesh/hosts.hpp"
#include "finalize.hpp"
#include "hosts.hpp"
#include "mesh_state.hpp"
#include "mpi_check.hpp"
#include "mpi_comms.hpp"
#include "mpi_features.hpp"

namespace devmesh::detail {
namespace {

std::vector<index_t> widen(const std::vector<int>& v) { return {v.begin(), v.end()}; }

// Roots made by this process so far: the cross-check takes the largest count
// over the parent, which keeps the roots' creation tags apart.
std::atomic<std::uint64_t> roots_made{0};

const CreationMode& mode_of(const CreationRequest& r) {
  if (r.mode) return *r.mode;
  return r.options.fault_tolerance ? ulfm_mode() : plain_mode();
}

// The parent every collective call of the creation runs over. Kind group:
// a communicator made from the group first (collective over its members).
// Problems here cannot be shared with the other ranks (there is nothing to
// share them over): they throw on this rank alone.
void open_parent(Creation& c) {
  CreationRequest& r = c.request;
  if (r.kind == CreationKind::group) {
    if (!mpi::has_comm_from_group) mpi::comm_from_session_group(r.group, r.tag);  // throws unsupported
    if (r.group == MPI_GROUP_NULL) throw Error(Status::invalid_argument, "the group is MPI_GROUP_NULL");
    int me = MPI_UNDEFINED;
    DEVMESH_MPI(MPI_Group_rank(r.group, &me));
    if (me == MPI_UNDEFINED)
      throw Error(Status::invalid_argument, "the caller is not a member of the group (only members call)");
    c.group_comm = mpi::comm_from_session_group(r.group, r.tag);
    c.parent = c.group_comm;
  } else {
    c.parent = r.parent;
  }
  // Under the Sessions model (no MPI_Init) the parent is a communicator
  // made from a session's group: see check_parent_usable.
  check_parent_usable(c.parent);
  DEVMESH_MPI(MPI_Comm_size(c.parent, &c.world));
  DEVMESH_MPI(MPI_Comm_rank(c.parent, &c.me));
}

// Every backend the options name (backends_named), computed once. Options
// that name the default backends (most meshes') share one list, made once:
// creation allocates as little as it can (docs/BENCHMARKS.md, the gap to
// the floor).
const std::vector<BackendSpec>& named_backends(Creation& c) {
  if (const std::vector<BackendSpec>* shared = default_backends_named(c.request.options)) return *shared;
  if (!c.named) c.named = backends_named(c.request.options);
  return *c.named;
}

}  // namespace

Creation::~Creation() {
  if (group_comm != MPI_COMM_NULL && mpi_alive()) MPI_Comm_free(&group_comm);
  if (request.owns_parent && mpi_alive()) mpi::free_comm(request.parent);
  if (pool != MPI_COMM_NULL && mpi_alive()) MPI_Comm_free(&pool);
}

const char* call_of(CreationKind kind) { return kind == CreationKind::comms ? "mesh adoption" : "mesh creation"; }

std::uint64_t next_root_seq() { return roots_made++; }

void CreationMode::cross_check(Creation& c) const { cross_check_arguments(c); }

// Opens (and so checks) every backend the options name.
void load_backends(Creation& c) {
  for (const BackendSpec& b : named_backends(c)) {
    // A backend that opens without options unchecked (the built-in one)
    // has nothing to check: its instance is made when a dim first needs it.
    if (b.options.empty() && load_backend(b.name).opens_without_check) continue;
    auto instance = std::make_unique<BackendInstance>(b);
    c.backends.emplace_back(b, std::move(instance));
  }
}

// Per-dim backends and options name dims of the mesh: a name that is none
// (a typo, or a dim that only a later flatten or unflatten would make)
// fails instead of being silently ignored.
void check_dim_names(const CreationRequest& r) {
  std::vector<std::string> unknown;
  const auto note = [&](const std::string& dim, const char* field) {
    if (std::find(r.names.begin(), r.names.end(), dim) != r.names.end()) return;
    const std::string item = std::string(field) + " '" + dim + "'";
    if (std::find(unknown.begin(), unknown.end(), item) == unknown.end()) unknown.push_back(item);
  };
  for (const auto& [dim, backend] : r.options.dim_backends) note(dim, "dim_backends");
  for (const auto& [dim, option] : r.options.dim_options) note(dim, "dim_options");
  if (unknown.empty()) return;
  std::string named, dims;
  for (std::size_t i = 0; i < unknown.size(); ++i) named += (i ? ", " : "") + unknown[i];
  for (std::size_t i = 0; i < r.names.size(); ++i) dims += (i ? ", " : "") + r.names[i];
  throw Error(Status::unknown_dim, named + (unknown.size() == 1 ? " names no dim" : " name no dim") +
                                       " of the mesh (its dims: " + dims +
                                       "); a dim made by flatten or unflatten gets its backend there");
}

namespace {

// The options' own values, for every front end (C's included).
void check_options(const MeshOptions& o) {
  if (o.comm_errors != CommErrors::inherit && o.comm_errors != CommErrors::return_codes)
    throw Error(Status::invalid_argument, "comm_errors " + std::to_string(static_cast<int>(o.comm_errors)) +
                                              " is neither inherit nor return (DEVMESH_COMM_ERRORS_INHERIT, _RETURN)");
  if (!(o.deadline >= 0) || o.deadline > 1e9)
    throw Error(Status::invalid_argument,
                "deadline " + std::to_string(o.deadline) + " is not a number of seconds from 0 (none) to 1e9");
}

// A placement's own conditions, and the root's shape: zeros filled over
// the parent, or another number of ranks than the parent's (the places are
// known once the levels are). What place() refuses (a dim or level that
// does not exist, a mesh larger than the parent) it refuses after the
// discovery, on every rank alike, in the words devmesh-plan prints.
void check_placement(Creation& c) {
  const CreationRequest& r = c.request;
  if (r.kind != CreationKind::shape)
    throw Error(Status::invalid_argument,
                "placement places a shape over all of the parent's ranks (Mesh::create, devmesh_create_ex); it does "
                "not take a rank list, a group, a host mesh or adopted communicators");
  if (r.options.host_aware)
    throw Error(Status::invalid_argument,
                "placement orders the parent's ranks itself; host_aware is its shorthand for the innermost dims "
                "within hosts: give one or the other");
  index_t w = 1;
  for (const int s : r.shape) w = s > 0 && w <= (index_t{1} << 40) ? w * s : 0;
  std::vector<index_t> ranks;
  if (w > 0 && w < c.world)  // places for now: the levels decide
    for (index_t x = 0; x < w; ++x) ranks.push_back(x);
  c.view = View::create(RootSpec{widen(r.shape), r.names, std::max<index_t>(w, c.world), std::move(ranks)});
}

// Everything this rank can check before the cross-check.
void check_locally(Creation& c) {
  const CreationRequest& r = c.request;
  if (r.error) throw *r.error;
  const bool host_aware = r.options.host_aware;
  switch (r.kind) {
    case CreationKind::ranks:
      if (r.ranks.empty()) throw Error(Status::invalid_argument, "the rank list is empty");
      if (host_aware)
        throw Error(Status::invalid_argument,
                    "host_aware orders all of the parent's ranks by host; it does not take a rank list");
      break;
    case CreationKind::comms:
      if (host_aware)
        throw Error(Status::invalid_argument,
                    "host_aware does not apply to adopted communicators: their ranks give the order");
      break;
    default:
      break;
  }
  check_dim_names(r);
  check_options(r.options);
  // spares' own conditions before ULFM is asked for: the same answer on every MPI.
  const bool placed = !r.options.placement.empty();
  if (placed) check_placement(c);
  if (r.options.spares != 0)
    member_ranks_with_spares(r.options, r.kind != CreationKind::shape && r.kind != CreationKind::group, c.world);
  load_backends(c);
  mode_of(r).check(c);
  if (placed) return;
  switch (r.kind) {
    case CreationKind::comms:
      c.adopting = read_comms(c.parent, r.comms, r.names);
      break;
    case CreationKind::hosts:
      // The names now; the shape once the hosts are known.
      View::create(RootSpec{{1, c.world}, r.names, c.world, {}});
      break;
    default:
      if (r.options.spares != 0) {  // a shape over all parent ranks (checked above): the first ones
        c.order = member_ranks_with_spares(r.options, false, c.world);
        c.view = View::create(RootSpec{widen(r.shape), r.names, c.world, widen(c.order)});
        break;
      }
      c.view = View::create(RootSpec{widen(r.shape), r.names, c.world, widen(r.ranks)});
      if (r.kind == CreationKind::ranks) c.order = r.ranks;
  }
}

}  // namespace

// The arguments every rank must pass alike, for the cross-check: the same
// fields for every kind.
std::array<Field, 9> fields_of(Creation& c) {
  const CreationRequest& r = c.request;
  Hash kind, checked, sh, nm, rk, nc, ha, be, op;
  kind.add(static_cast<std::int64_t>(r.kind));
  checked.add(static_cast<std::int64_t>(r.error ? r.error->status() : Status::success));
  for (int s : r.shape) sh.add(s);
  for (const std::string& n : r.names) nm.add(n);
  rk.add(static_cast<std::int64_t>(r.ranks.size()));
  for (int x : r.ranks) rk.add(x);
  nc.add(static_cast<std::int64_t>(r.comms.size()));
  ha.add(r.options.host_aware ? 1 : 0);
  for (const auto& [dim, level] : r.options.placement) {
    ha.add(dim);
    ha.add(level);
  }
  ha.add(r.options.fault_tolerance ? 1 : 0);
  ha.add(static_cast<std::int64_t>(r.options.deadline * 1e6));
  ha.add(r.options.spares);
  be.add(r.options.backend);
  for (const auto& [dim, backend] : r.options.dim_backends) {
    be.add(dim);
    be.add(backend);
  }
  // Every backend named, with its options as each backend parsed them,
  // without those it takes per rank (NCCL's device); where a backend did
  // not load, its options as given (see canonical_options).
  for (const BackendSpec& spec : named_backends(c)) {
    const PluginTable* table = nullptr;
    for (const auto& [loaded, instance] : c.backends)
      if (instance && loaded.key() == spec.key()) table = &instance->table();
    op.add(canonical_options(spec, table));
  }
  return {{{"ways of creating the mesh", kind.h},
           {"arguments (as checked by the interface called)", checked.h},
           {"shapes", sh.h},
           {"dim names", nm.h},
           {"rank lists", rk.h},
           {"numbers of communicators", nc.h},
           {"host_aware, placement, fault_tolerance, deadline and spares settings", ha.h},
           {"backends", be.h},
           {"backend options", op.h}}};
}

// Every rank makes this one collective call whatever its arguments, so
// that ranks whose arguments differ get an error instead of a hang. It is the only
// communication of creation for MPI-only meshes: no communicator is made
// until one is asked for (where MPI makes communicators from groups).
void cross_check_arguments(Creation& c) {
  Status local = Status::success;
  std::string message;
  try {
    check_locally(c);
  } catch (const Error& e) {
    local = e.status();
    message = e.what();
  }
  const std::array<Field, 9> fields = fields_of(c);
  c.seq = cross_check(c.parent, call_of(c.request.kind), fields, local, message, roots_made.load());
  roots_made = c.seq + 1;
  Hash h;
  for (const Field& f : fields) h.add(static_cast<std::int64_t>(f.digest));
  c.digest = h.h;
}

namespace {

// Host discovery comes after the cross-check, so that every rank makes it
// only once all passed it. Its errors (uneven hosts, DEVMESH_HOST_ID on
// some ranks only) come from tables every rank holds alike, so they are
// the same on every rank.
void order_by_host(Creation& c) {
  const CreationRequest& r = c.request;
  const bool host_mesh = r.kind == CreationKind::hosts;
  const std::vector<int> host_of = host_table(c.parent);
  c.hosts = host_info_of(host_of, c.me);
  c.order = host_major(host_of, *c.hosts, host_mesh ? "a host mesh" : "a host-aware mesh");
  const std::vector<index_t> shape =
      host_mesh ? std::vector<index_t>{c.hosts->hosts, c.hosts->local_size} : c.view->root_shape();
  c.view = View::create(RootSpec{shape, r.names, c.world, widen(c.order)});
}

// Placement (MeshOptions::placement) after the cross-check, as host
// discovery: the levels gathered with the hosts, then place() on tables
// every rank holds alike, so its errors are the same on every rank.
void place_by_levels(Creation& c) {
  const CreationRequest& r = c.request;
  LevelSource src;
  for (const auto& [spec, instance] : c.backends)
    if (instance && (instance->table().capabilities & DEVMESH_BACKEND_CAP_TOPOLOGY) != 0) {
      src.backend = [&c](int host_local_rank) {
        std::string all;
        for (const auto& [s, b] : c.backends)
          if (b)
            if (const std::string mine = b->levels(host_local_rank); !mine.empty())
              all += (all.empty() ? "" : ";") + mine;
        return all;
      };
      break;
    }
  const Places places = gather_places(c.parent, &src);
  c.hosts = host_info_of(places.host_of, c.me);
  Levels levels = levels_of(places);
  const Placed placed = place(levels, c.view->root_shape(), r.names, r.options.placement);
  const auto spares = static_cast<std::size_t>(std::max(r.options.spares, 0));
  if (spares != 0 && placed.leftovers.size() != spares)
    throw Error(Status::invalid_argument, "the placement leaves " + std::to_string(placed.leftovers.size()) +
                                              " ranks over, and spares is " + std::to_string(spares) +
                                              ": with a placement the ranks left over are the spares");
  c.order.assign(placed.parent_ranks.begin(), placed.parent_ranks.end());
  c.view = View::create(RootSpec{placed.shape, r.names, c.world, placed.parent_ranks});
  c.levels = std::move(levels);
}

// The adopted communicators' layout: one allgather of what each rank holds,
// from which every rank derives the same layout or the same error.
void adopt_layout(Creation& c) {
  const int n = static_cast<int>(c.request.comms.size());
  const std::vector<int> mine = adoption_record(c.adopting, c.request.comms.size());
  std::vector<int> table(mine.size() * static_cast<std::size_t>(c.world));
  DEVMESH_MPI(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT, table.data(),
                            static_cast<int>(mine.size()), MPI_INT, c.parent));
  Status local = Status::success;
  std::string message;
  try {
    auto [shape, ranks] = adopted_layout(table, c.world, n);
    c.order = std::move(ranks);
    c.view = View::create(RootSpec{widen(shape), c.request.names, c.world, widen(c.order)});
    check_adopted_groups(*c.view, c.adopting, c.me, c.request.names);
  } catch (const Error& e) {
    local = e.status();
    message = e.what();
  }
  cross_check(c.parent, "mesh adoption", {}, local, message);
  Hash h;
  for (int x : table) h.add(x);
  c.digest = h.h;
}

// The members in root-index order, as a group (no communicator yet).
MPI_Group member_group(const Creation& c) {
  MPI_Group parent_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Comm_group(c.parent, &parent_group));
  if (!c.has_rank_list()) return parent_group;
  const int rc = MPI_Group_incl(parent_group, static_cast<int>(c.order.size()), c.order.data(), &group);
  MPI_Group_free(&parent_group);
  check_mpi(rc, "MPI_Group_incl");
  return group;
}

// Hands the state what the creation made or was given: the root
// communicator, the parent of devmesh's own, the backends opened, the
// program's communicators (kind comms), the hosts found.
void stock_state(Creation& c, MeshState& state, MPI_Comm root_comm, bool group_is_root) {
  const CreationRequest& r = c.request;
  if (root_comm != MPI_COMM_NULL) state.take_root_comm(root_comm);
  if (group_is_root) state.take_root_comm(std::exchange(c.group_comm, MPI_COMM_NULL));
  if (r.owns_parent) {
    MPI_Comm parent = std::exchange(c.request.parent, MPI_COMM_NULL);
    if (c.parent_is_root)
      state.take_root_comm(parent);
    else
      state.take_parent(parent);
  }
  state.inherit_errhandler(c.parent);
  for (auto& [spec, instance] : c.backends) state.add_backend(spec, std::move(instance));
  if (r.kind == CreationKind::comms) {
    const View& root = *c.view;
    for (std::size_t d = 0; d < root.ndim(); ++d)
      state.insert_program_comm(root.dims()[d].layout, r.comms[d], root.dims()[d].name);
  }
  if (c.levels) {
    state.set_hosts(root_hosts(*c.levels, c.order, state.index()));
  } else if (c.hosts) {
    // Host-major over uniform hosts.
    auto hosts = std::make_shared<RootHosts>();
    hosts->caller = *c.hosts;
    hosts->local_size = c.hosts->local_size;
    state.set_hosts(std::move(hosts));
  }
}

// Builds the root's state once every rank passed the cross-check. Collective over the
// parent: host discovery for plugin backends unless known already, and the
// root communicator where the mode needs one now.
Mesh build(Creation& c) {
  const CreationRequest& r = c.request;
  // Backends that pick a device by the rank's position on its host say so
  // (DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK); only then are hosts discovered
  // (DEVMESH_HOST_ID honoured, see hosts.hpp). Others are given -1.
  const bool by_host = std::any_of(c.backends.begin(), c.backends.end(), [](const auto& b) {
    return (b.second->table().capabilities & DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK) != 0;
  });
  const int host_rank = !by_host ? -1 : c.hosts ? c.hosts->local_rank : discover_hosts(c.parent).local_rank;
  MPI_Group group = member_group(c);
  // Where the group's communicator (a mesh from a group, not host_aware)
  // or a parent of devmesh's own is the root already, it is the root
  // communicator; otherwise the mode says whether it needs one now.
  const bool group_is_root = c.group_comm != MPI_COMM_NULL && !r.options.host_aware;
  c.parent_is_root = r.owns_parent && c.view->root_size() == c.world &&
                     (!c.has_rank_list() || std::is_sorted(c.order.begin(), c.order.end()));
  MPI_Comm root_comm = MPI_COMM_NULL;
  if (!group_is_root && !c.parent_is_root) {
    try {
      root_comm = mode_of(r).root_comm(c, group);
      if (root_comm != MPI_COMM_NULL) return_errors(root_comm);
    } catch (...) {
      MPI_Group_free(&group);
      if (root_comm != MPI_COMM_NULL) MPI_Comm_free(&root_comm);
      throw;
    }
  }
  const std::optional<index_t> index = c.view->root_index(c.me);
  if (!index) {
    MPI_Group_free(&group);
    return Mesh();
  }
  std::shared_ptr<MeshState> state;
  try {
    install_finalize_hook();
    // The options move to the state; their flags (copied by the move) stay
    // readable in the request.
    state = std::make_shared<MeshState>(*c.view, group, static_cast<int>(*index), c.me, host_rank, c.seq, c.digest,
                                        std::move(c.request.options));
  } catch (...) {
    if (!state) MPI_Group_free(&group);
    if (root_comm != MPI_COMM_NULL) MPI_Comm_free(&root_comm);
    throw;
  }
  // The state frees what it takes from here on, also if what follows throws.
  stock_state(c, *state, root_comm, group_is_root);
  mode_of(r).finish(c, *state);
  return MeshAccess::make(std::move(*c.view), std::move(state));
}

// A failure is an error like any other: the program's parent is tracked
// while it lives (dims' communicators may be made over it later), and a
// root communicator is made now only where dims cannot come from their
// groups and the parent is devmesh's own (kind group).
class PlainMode final : public CreationMode {
 public:
  void check(const Creation& c) const override {
    if (c.request.options.deadline > 0)
      throw Error(Status::invalid_argument, "a deadline needs fault_tolerance (a wait past it revokes the mesh)");
  }
  MPI_Comm root_comm(const Creation& c, MPI_Group members) const override {
    if (mpi::dims_from_group || c.request.kind != CreationKind::group) return MPI_COMM_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    check_mpi(MPI_Comm_create(c.parent, members, &comm), "MPI_Comm_create");
    return comm;
  }
  void finish(const Creation& c, MeshState& state) const override {
    if (c.request.kind != CreationKind::group) state.track_parent(c.parent, c.view->root_size() == c.world);
  }
};

}  // namespace

const CreationMode& plain_mode() {
  static const PlainMode mode;
  return mode;
}

void keep_root_order(MeshOptions& options) {
  options.spares = 0;
  options.host_aware = false;
  options.placement.clear();
}

Mesh create(CreationRequest request) {
  Creation c(std::move(request));
  open_parent(c);
  mode_of(c.request).cross_check(c);
  const CreationRequest& r = c.request;
  if (r.kind == CreationKind::hosts || r.options.host_aware) order_by_host(c);
  if (!r.options.placement.empty()) place_by_levels(c);
  if (r.kind == CreationKind::comms) adopt_layout(c);
  if (r.options.spares == 0 || r.fresh_parent) return build(c);
  return build_with_spares(c, build);
}

}  // namespace devmesh::detail
