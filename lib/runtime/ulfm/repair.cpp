// Repair (docs/SEMANTICS.md "Repair"): a round over a mesh's pool of live
// members and spares in standby, in which the failed root indices are
// filled by spares, then by spawned processes, and the whole mesh is made
// again with every survivor at its root index. The sequence on every
// holder of the pool:
//   shrink the pool -> the members' op reaches everyone (one broadcast) ->
//   [spawn, merge, the recipe to the newcomers] -> split keyed by root
//   index (spares left over after them) -> the mesh, by the creation
//   driver over that split, with no cross-check (the recipe is the same
//   everywhere by construction).
#include "repair.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "../creation.hpp"
#include "../finalize.hpp"
#include "../mesh_state.hpp"
#include "../mpi_check.hpp"
#include "../mpi_features.hpp"

namespace devmesh::detail {
namespace {

// --- the recipe, as spawned processes receive it -----------------------------

class Wire {
 public:
  void put(std::int64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void put(const std::string& s) {
    put(static_cast<std::int64_t>(s.size()));
    bytes_ += s;
  }
  void put(double d) {
    std::int64_t v = 0;
    std::memcpy(&v, &d, sizeof v);
    put(v);
  }
  template <class T>
  void put_all(const std::vector<T>& xs) {
    put(static_cast<std::int64_t>(xs.size()));
    for (const T& x : xs) put(x);
  }
  std::string& bytes() { return bytes_; }

 private:
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  std::int64_t i64() {
    std::int64_t v = 0;
    need(sizeof v);
    std::memcpy(&v, b_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string str() {
    const auto n = static_cast<std::size_t>(i64());
    need(n);
    std::string s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  double f64() {
    const std::int64_t v = i64();
    double d = 0;
    std::memcpy(&d, &v, sizeof d);
    return d;
  }
  std::vector<std::string> strs() {
    std::vector<std::string> out(static_cast<std::size_t>(i64()));
    for (std::string& s : out) s = str();
    return out;
  }
  std::vector<index_t> ints() {
    std::vector<index_t> out(static_cast<std::size_t>(i64()));
    for (index_t& x : out) x = i64();
    return out;
  }

 private:
  void need(std::size_t n) const {
    if (at_ + n > b_.size()) throw Error(Status::internal, "repair: the recipe a repair sent is cut short");
  }
  const std::string& b_;
  std::size_t at_ = 0;
};

std::vector<std::string> pairs_flat(const std::vector<std::pair<std::string, std::string>>& ps) {
  std::vector<std::string> out;
  for (const auto& [a, b] : ps) {
    out.push_back(a);
    out.push_back(b);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> pairs_of(const std::vector<std::string>& flat) {
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i + 1 < flat.size(); i += 2) out.emplace_back(flat[i], flat[i + 1]);
  return out;
}

std::string pack(const RootRecipe& r, const Repaired& plan) {
  Wire w;
  std::vector<std::int64_t> shape(r.shape.begin(), r.shape.end());
  w.put_all(shape);
  w.put_all(r.names);
  const MeshOptions& o = r.options;
  w.put(o.backend);
  w.put_all(o.backend_options);
  w.put_all(pairs_flat(o.dim_backends));
  w.put_all(pairs_flat(o.dim_options));
  w.put(static_cast<std::int64_t>(o.comm_errors));
  w.put(static_cast<std::int64_t>(o.fault_tolerance));
  w.put(o.deadline);
  w.put(static_cast<std::int64_t>(o.spares));
  w.put_all(std::vector<std::int64_t>(plan.failed.begin(), plan.failed.end()));
  w.put_all(std::vector<std::int64_t>(plan.by_spawn.begin(), plan.by_spawn.end()));
  return std::move(w.bytes());
}

void unpack(const std::string& bytes, RootRecipe& r, Repaired& plan) {
  Reader in(bytes);
  for (index_t x : in.ints()) r.shape.push_back(static_cast<int>(x));
  r.names = in.strs();
  MeshOptions& o = r.options;
  o.backend = in.str();
  o.backend_options = in.strs();
  o.dim_backends = pairs_of(in.strs());
  o.dim_options = pairs_of(in.strs());
  o.comm_errors = static_cast<CommErrors>(in.i64());
  o.fault_tolerance = in.i64() != 0;
  o.deadline = in.f64();
  o.spares = static_cast<int>(in.i64());
  plan.failed = in.ints();
  plan.by_spawn = in.ints();
}

// Sends the recipe and plan over comm from rank 0 (a member) to the ranks
// that lack them (the spawned ones: `receive`).
void share_recipe(MPI_Comm comm, RootRecipe& recipe, Repaired& plan, bool receive) {
  int me = 0;
  DEVMESH_MPI(MPI_Comm_rank(comm, &me));
  std::string bytes = me == 0 ? pack(recipe, plan) : std::string();
  long long n = static_cast<long long>(bytes.size());
  DEVMESH_MPI(MPI_Bcast(&n, 1, MPI_LONG_LONG, 0, comm));
  bytes.resize(static_cast<std::size_t>(n));
  DEVMESH_MPI(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_CHAR, 0, comm));
  if (receive) unpack(bytes, recipe, plan);
}

// Every holder of the pool sends each spawned process one empty message,
// so that MPI knows how to reach it while it lives: Open MPI 5.0.11 looks a
// peer's address up on first use, from PMIx, which waits for ever once a
// spawned job has ended, and a revoke's broadcast after a newcomer's death
// hung there on a holder that had never sent to it.
void reach_newcomers(MPI_Comm merged, int spawned) {
  int me = 0, size = 0;
  DEVMESH_MPI(MPI_Comm_rank(merged, &me));
  DEVMESH_MPI(MPI_Comm_size(merged, &size));
  const int old = size - spawned;
  std::vector<MPI_Request> requests;
  constexpr int tag = 27;
  for (int peer = me < old ? old : 0; peer < (me < old ? size : old); ++peer) {
    requests.push_back(MPI_REQUEST_NULL);
    if (me < old)
      DEVMESH_MPI(MPI_Isend(nullptr, 0, MPI_BYTE, peer, tag, merged, &requests.back()));
    else
      DEVMESH_MPI(MPI_Irecv(nullptr, 0, MPI_BYTE, peer, tag, merged, &requests.back()));
  }
  DEVMESH_MPI(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
}

// --- the round ----------------------------------------------------------------

// MPIX_Comm_shrink of the pool: its live holders in pool order, the same
// on every holder; the pool becomes that one.
void shrink_pool(std::shared_ptr<Pool>& pool) {
  MPI_Comm live = MPI_COMM_NULL;
  DEVMESH_MPI(mpi::comm_shrink(pool->comm, &live));
  return_errors(live);
  auto next = std::make_shared<Pool>();
  next->comm = live;
  next->owned = true;
  int n = 0, old_size = 0;
  DEVMESH_MPI(MPI_Comm_size(live, &n));
  DEVMESH_MPI(MPI_Comm_size(pool->comm, &old_size));
  std::vector<int> ranks(static_cast<std::size_t>(n)), old_of(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ranks[static_cast<std::size_t>(i)] = i;
  MPI_Group g_live = MPI_GROUP_NULL, g_old = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Comm_group(live, &g_live));
  DEVMESH_MPI(MPI_Comm_group(pool->comm, &g_old));
  const int rc = MPI_Group_translate_ranks(g_live, n, ranks.data(), g_old, old_of.data());
  MPI_Group_free(&g_live);
  MPI_Group_free(&g_old);
  check_mpi(rc, "MPI_Group_translate_ranks");
  std::vector<int> new_of(static_cast<std::size_t>(old_size), -1);
  for (int i = 0; i < n; ++i) new_of[static_cast<std::size_t>(old_of[static_cast<std::size_t>(i)])] = i;
  for (int r : pool->member_rank) next->member_rank.push_back(r < 0 ? -1 : new_of[static_cast<std::size_t>(r)]);
  for (int r : pool->spare_rank)
    if (new_of[static_cast<std::size_t>(r)] >= 0) next->spare_rank.push_back(new_of[static_cast<std::size_t>(r)]);
  pool = std::move(next);
}

std::string index_list(const std::vector<index_t>& xs) {
  std::string out;
  for (std::size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
  return out;
}

// MPI_Comm_spawn of one process per index of plan.by_spawn over the live
// pool (rank 0's command and argv; every holder learns whether it worked),
// merged with the pool, which comes first.
MPI_Comm spawn_and_merge(MPI_Comm live, const Spawn* spawn, const Repaired& plan) {
  int me = 0;
  DEVMESH_MPI(MPI_Comm_rank(live, &me));
  std::vector<char*> argv;
  if (spawn)
    for (const std::string& a : spawn->argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int k = static_cast<int>(plan.by_spawn.size());
  MPI_Comm inter = MPI_COMM_NULL;
  const bool root = me == 0 && spawn;
  const int rc = MPI_Comm_spawn(root ? spawn->command.c_str() : nullptr, root ? argv.data() : MPI_ARGV_NULL, k,
                                root ? spawn->info : MPI_INFO_NULL, 0, live, &inter, MPI_ERRCODES_IGNORE);
  int ok = rc == MPI_SUCCESS ? 1 : 0;
  DEVMESH_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, live));
  if (!ok) {
    if (inter != MPI_COMM_NULL) MPI_Comm_free(&inter);
    throw Error(Status::backend, "repair: MPI_Comm_spawn could not start " + std::to_string(k) + " process" +
                                     (k == 1 ? "" : "es") + (spawn ? " of '" + spawn->command + "'" : "") +
                                     " for root index" + (k == 1 ? " " : "es ") + index_list(plan.by_spawn) +
                                     (rc != MPI_SUCCESS ? ": " + mpi_error_text(rc) : std::string()));
  }
  MPI_Comm merged = MPI_COMM_NULL;
  const int mrc = MPI_Intercomm_merge(inter, 0, &merged);
  MPI_Comm_free(&inter);
  check_mpi(mrc, "MPI_Intercomm_merge");
  return_errors(merged);
  return merged;
}

// The repaired mesh over `merged` (the live pool, with the spawned
// processes after it): split keyed by root index, spares left over after
// the members, then the creation driver over it. Where spares are left,
// every holder agrees on whether every member made the mesh, so that no
// spare stands by beside members whose creation failed; a spare left over
// gets the null mesh and *spare_pool the new pool.
Mesh make_repaired(MPI_Comm merged, int key, const RootRecipe& recipe, const Repaired& plan,
                   std::shared_ptr<Pool>* spare_pool) {
  int members = 1;
  for (int n : recipe.shape) members *= n;
  MPI_Comm parent = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Comm_split(merged, 0, key, &parent));
  return_errors(parent);
  int size = 0;
  DEVMESH_MPI(MPI_Comm_size(parent, &size));
  const bool spares_left = size > members;
  CreationRequest r;
  r.kind = CreationKind::ranks;
  r.parent = parent;
  r.shape = recipe.shape;
  r.names = recipe.names;
  r.options = recipe.options;
  // Every survivor keeps its index: the old order (host-major where it
  // was), not a new one.
  r.options.spares = 0;
  r.options.host_aware = false;
  for (int x = 0; x < members; ++x) r.ranks.push_back(x);
  r.fresh_parent = true;
  r.owns_parent = !spares_left;
  r.mode = &ulfm_survivors_mode();
  if (!spares_left) {
    Mesh out = create(std::move(r));
    MeshAccess::state(out)->fault()->agreed(plan.failed);
    return out;
  }
  Mesh out;
  std::optional<Error> failed;
  try {
    out = create(std::move(r));
  } catch (const Error& e) {
    failed = e;
  }
  int made = failed ? 0 : 1;
  const int agreed = mpi::comm_agree(parent, &made);
  if (failed || agreed != MPI_SUCCESS || !made) {
    mpi::free_comm(parent);
    if (failed) throw *failed;
    check_mpi(agreed, "MPIX_Comm_agree");
    throw Error(Status::revoked, "repair: making the repaired mesh failed on another of its members");
  }
  auto next = std::make_shared<Pool>();
  next->comm = parent;
  for (int x = 0; x < members; ++x) next->member_rank.push_back(x);
  for (int x = members; x < size; ++x) next->spare_rank.push_back(x);
  if (!out) {
    next->owned = true;
    *spare_pool = std::move(next);
    return out;
  }
  const std::shared_ptr<MeshState>& state = MeshAccess::state(out);
  state->take_parent(parent);
  state->fault()->agreed(plan.failed);
  state->pool() = std::move(next);
  return out;
}

// The repair part of a round, once the pool is shrunk and the op known.
std::optional<Mesh> repair_round(std::shared_ptr<Pool>& pool, RootRecipe recipe, int index, int op,
                                 const Spawn* spawn) {
  const int members = static_cast<int>(pool->member_rank.size());
  std::vector<index_t> failed;
  for (int x = 0; x < members; ++x)
    if (pool->member_rank[static_cast<std::size_t>(x)] < 0) failed.push_back(x);
  Repaired plan = repair(members, failed, static_cast<index_t>(pool->spare_rank.size()));
  if (!plan.by_spawn.empty() && !(op & op_spawn)) {
    if (index < 0) return std::nullopt;
    const std::size_t n = pool->spare_rank.size();
    throw Error(Status::invalid_argument, "repair: root " +
                                              std::string(plan.failed.size() == 1 ? "index " : "indices ") +
                                              index_list(plan.failed) + " failed" + " and " +
                                              (n == 1 ? "1 spare stands" : std::to_string(n) + " spares stand") +
                                              " by; give a command to spawn the rest, or shrink the mesh");
  }
  int me = 0;
  DEVMESH_MPI(MPI_Comm_rank(pool->comm, &me));
  int key = index;
  if (index < 0) {
    const auto k = static_cast<std::size_t>(std::find(pool->spare_rank.begin(), pool->spare_rank.end(), me) -
                                            pool->spare_rank.begin());
    key = k < plan.by_spare.size() ? static_cast<int>(plan.by_spare[k])
                                   : members + static_cast<int>(k - plan.by_spare.size());
  }
  MPI_Comm merged = pool->comm;
  try {
    if (!plan.by_spawn.empty()) {
      merged = spawn_and_merge(pool->comm, spawn, plan);
      share_recipe(merged, recipe, plan, false);
      reach_newcomers(merged, static_cast<int>(plan.by_spawn.size()));
    }
    std::shared_ptr<Pool> next;
    Mesh out = make_repaired(merged, key, recipe, plan, &next);
    if (merged != pool->comm) MPI_Comm_free(&merged);
    if (next) {
      pool = std::move(next);
      return std::nullopt;
    }
    if (index >= 0) {
      pool = std::make_shared<Pool>();
      pool->moved = true;
    }
    return out;
  } catch (const Error&) {
    // Every holder learns of it (MPI may fail a call on some ranks only).
    if (merged != pool->comm) mpi::comm_revoke(merged);
    mpi::comm_revoke(pool->comm);
    if (index < 0) return std::nullopt;
    throw;
  }
}

}  // namespace

std::optional<Mesh> pool_round(std::shared_ptr<Pool>& pool, const RootRecipe& recipe, int index, int op,
                               const Spawn* spawn) {
  shrink_pool(pool);
  int header = index < 0 ? 0 : op;
  if (const int rc = MPI_Bcast(&header, 1, MPI_INT, 0, pool->comm); rc != MPI_SUCCESS) {
    mpi::comm_revoke(pool->comm);
    if (index < 0) return std::nullopt;
    throw_mpi_error(rc, "MPI_Bcast");
  }
  if (header == 0) throw Error(Status::proc_failed, "standby: every member of the mesh failed");
  if (header & op_release) {
    pool->spare_rank.clear();
    return Mesh();
  }
  return repair_round(pool, recipe, index, header, spawn);
}

}  // namespace devmesh::detail

namespace devmesh {

Mesh Mesh::repair(std::optional<Spawn> spawn) const {
  const std::shared_ptr<detail::MeshState>& s = detail::MeshAccess::state(*this);
  state();
  detail::Fault* fault = s->fault();
  if (!fault) throw Error(Status::unsupported, "repair needs a mesh made with fault_tolerance");
  std::shared_ptr<detail::Pool>& pool = s->pool();
  if (pool && pool->moved)
    throw Error(Status::invalid_argument, "repair: this mesh was repaired already; repair the mesh its repair made");
  const int index = root_index();
  fault->revoke(Status::revoked, "repair started on root index " + std::to_string(index));
  if (!pool) {
    // No spares: the root communicator is the pool.
    pool = std::make_shared<detail::Pool>();
    pool->comm = fault->root();
    for (int x = 0; x < static_cast<int>(view().root_size()); ++x) pool->member_rank.push_back(x);
  }
  const View root = view().root();
  detail::RootRecipe recipe;
  for (index_t n : root.root_shape()) recipe.shape.push_back(static_cast<int>(n));
  recipe.names = root.names();
  recipe.options = s->options();
  const int op = detail::op_repair | (spawn ? detail::op_spawn : 0);
  return std::move(*detail::pool_round(pool, recipe, index, op, spawn ? &*spawn : nullptr));
}

Mesh Mesh::join() {
  if (const std::string why = detail::mpi::ulfm_unavailable(); !why.empty())
    throw Error(Status::unsupported, "join: " + why);
  static std::atomic<bool> joined{false};
  MPI_Comm inter = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Comm_get_parent(&inter));
  if (inter == MPI_COMM_NULL)
    throw Error(Status::invalid_argument, "join: this process was not started by a repair (it has no MPI parent)");
  if (joined.exchange(true)) throw Error(Status::invalid_argument, "join: this process joined its mesh already");
  MPI_Comm merged = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Intercomm_merge(inter, 1, &merged));
  detail::return_errors(merged);
  detail::RootRecipe recipe;
  Repaired plan;
  std::shared_ptr<detail::Pool> unused;
  try {
    detail::share_recipe(merged, recipe, plan, true);
    detail::reach_newcomers(merged, static_cast<int>(plan.by_spawn.size()));
    int me = 0, size = 0;
    DEVMESH_MPI(MPI_Comm_rank(merged, &me));
    DEVMESH_MPI(MPI_Comm_size(merged, &size));
    const int j = me - (size - static_cast<int>(plan.by_spawn.size()));
    Mesh out = detail::make_repaired(merged, static_cast<int>(plan.by_spawn.at(static_cast<std::size_t>(j))), recipe,
                                     plan, &unused);
    MPI_Comm_free(&merged);
    return out;
  } catch (const Error&) {
    detail::mpi::comm_revoke(merged);
    throw;
  }
}

}  // namespace devmesh
