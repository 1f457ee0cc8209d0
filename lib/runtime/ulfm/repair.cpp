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
#include <climits>
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

// What spawned processes receive: the recipe, the plan, and the repaired
// pool's map (root index -> rank, the spares' ranks) over the merged
// communicator.
struct Shared {
  RootRecipe recipe;
  Repaired plan;
  std::vector<int> member_rank, spare_rank;
};

std::string pack(const Shared& sh) {
  Wire w;
  const RootRecipe& r = sh.recipe;
  w.put_all(std::vector<std::int64_t>(r.shape.begin(), r.shape.end()));
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
  w.put_all(std::vector<std::int64_t>(sh.plan.failed.begin(), sh.plan.failed.end()));
  w.put_all(std::vector<std::int64_t>(sh.plan.by_spawn.begin(), sh.plan.by_spawn.end()));
  w.put_all(std::vector<std::int64_t>(sh.member_rank.begin(), sh.member_rank.end()));
  w.put_all(std::vector<std::int64_t>(sh.spare_rank.begin(), sh.spare_rank.end()));
  return std::move(w.bytes());
}

void unpack(const std::string& bytes, Shared& sh) {
  Reader in(bytes);
  RootRecipe& r = sh.recipe;
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
  sh.plan.failed = in.ints();
  sh.plan.by_spawn = in.ints();
  for (index_t x : in.ints()) sh.member_rank.push_back(static_cast<int>(x));
  for (index_t x : in.ints()) sh.spare_rank.push_back(static_cast<int>(x));
}

// The rank of comm that leads a round: the live member of the lowest root
// index (`lead` on the holders that know it, -1 on spawned processes,
// which learn it here).
int lead_rank(MPI_Comm comm, bool i_lead) {
  int me = 0, lead = 0;
  DEVMESH_MPI(MPI_Comm_rank(comm, &me));
  int mine = i_lead ? me : INT_MAX;
  DEVMESH_MPI(MPI_Allreduce(&mine, &lead, 1, MPI_INT, MPI_MIN, comm));
  return lead;
}

// Sends what spawned processes need over comm from its lead (a member) to
// them (`receive`); the holders of the pool have it already.
void share(MPI_Comm comm, int lead, Shared& sh, bool receive) {
  int me = 0;
  DEVMESH_MPI(MPI_Comm_rank(comm, &me));
  std::string bytes = me == lead ? pack(sh) : std::string();
  long long n = static_cast<long long>(bytes.size());
  DEVMESH_MPI(MPI_Bcast(&n, 1, MPI_LONG_LONG, lead, comm));
  bytes.resize(static_cast<std::size_t>(n));
  DEVMESH_MPI(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_CHAR, lead, comm));
  if (receive) unpack(bytes, sh);
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

// The pool's rank of the live member of the lowest root index, -1 when no
// member lives: the round's lead, the same on every holder.
int lead_of(const Pool& pool) {
  for (int r : pool.member_rank)
    if (r >= 0) return r;
  return -1;
}

// MPI_Comm_spawn of one process per index of plan.by_spawn over the live
// pool (the lead's command and argv; every holder learns whether it
// worked), merged with the pool, whose ranks come first and stay.
MPI_Comm spawn_and_merge(MPI_Comm live, int lead, const Spawn* spawn, const Repaired& plan) {
  int me = 0;
  DEVMESH_MPI(MPI_Comm_rank(live, &me));
  std::vector<char*> argv;
  if (spawn)
    for (const std::string& a : spawn->argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int k = static_cast<int>(plan.by_spawn.size());
  MPI_Comm inter = MPI_COMM_NULL;
  const bool root = me == lead && spawn;
  const int rc = MPI_Comm_spawn(root ? spawn->command.c_str() : nullptr, root ? argv.data() : MPI_ARGV_NULL, k,
                                root ? spawn->info : MPI_INFO_NULL, lead, live, &inter, MPI_ERRCODES_IGNORE);
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

// The repaired mesh over the members of `merged` (the live pool, with the
// spawned processes after it): their communicator by one split keyed by
// root index (it is the new root's; spares left over are not in it), then
// the creation driver over it. Where spares are left, every holder of
// `merged` agrees on whether every member made the mesh, so that no spare
// stands by beside members whose creation failed. A spare left over gets
// the null mesh.
Mesh make_repaired(MPI_Comm merged, int key, const Shared& sh) {
  const int members = static_cast<int>(sh.member_rank.size());
  const bool member = key < members, spares_left = !sh.spare_rank.empty();
  MPI_Comm root = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Comm_split(merged, member ? 0 : MPI_UNDEFINED, key, &root));
  Mesh out;
  std::optional<Error> failed;
  if (member) {
    CreationRequest r;
    r.kind = CreationKind::ranks;
    r.parent = root;
    r.shape = sh.recipe.shape;
    r.names = sh.recipe.names;
    r.options = sh.recipe.options;
    // Every survivor keeps its index: the old order (host-major where it
    // was), not a new one.
    keep_root_order(r.options);
    for (int x = 0; x < members; ++x) r.ranks.push_back(x);
    r.owns_parent = true;  // the root communicator from here on
    r.fresh_parent = true;
    r.mode = &ulfm_survivors_mode();
    try {
      return_errors(root);
      out = create(std::move(r));
      MeshAccess::state(out)->fault()->agreed(sh.plan.failed);
    } catch (const Error& e) {
      if (!spares_left) throw;
      failed = e;
    }
  }
  if (!spares_left) return out;
  int made = failed ? 0 : 1;
  const int agreed = mpi::comm_agree(merged, &made);
  if (failed) throw *failed;
  check_mpi(agreed, "MPIX_Comm_agree");
  if (!made) throw Error(Status::revoked, "repair: making the repaired mesh failed on one of its members");
  return out;
}

// The repaired pool's map: survivors keep their ranks, spares and spawned
// processes (after the live pool's `live` ranks) take the indices the plan
// gives them; the spares left keep their order.
void map_repaired(const Pool& pool, int live, Shared& sh) {
  sh.member_rank = pool.member_rank;
  const std::size_t taken = sh.plan.by_spare.size();
  for (std::size_t k = 0; k < taken; ++k)
    sh.member_rank[static_cast<std::size_t>(sh.plan.by_spare[k])] = pool.spare_rank[k];
  for (std::size_t j = 0; j < sh.plan.by_spawn.size(); ++j)
    sh.member_rank[static_cast<std::size_t>(sh.plan.by_spawn[j])] = live + static_cast<int>(j);
  sh.spare_rank.assign(pool.spare_rank.begin() + static_cast<std::ptrdiff_t>(taken), pool.spare_rank.end());
}

// The key of rank `me` of the merged communicator in the split: its root
// index, or (a spare left over) after every member.
int split_key(const Shared& sh, int me) {
  const auto at = std::find(sh.member_rank.begin(), sh.member_rank.end(), me);
  if (at != sh.member_rank.end()) return static_cast<int>(at - sh.member_rank.begin());
  return static_cast<int>(sh.member_rank.size()) + 1;
}

// The repair part of a round, once the pool is shrunk and the op known.
std::optional<Mesh> repair_round(std::shared_ptr<Pool>& pool, const RootRecipe& recipe, int index, int op,
                                 const Spawn* spawn) {
  const int members = static_cast<int>(pool->member_rank.size());
  std::vector<index_t> failed;
  for (int x = 0; x < members; ++x)
    if (pool->member_rank[static_cast<std::size_t>(x)] < 0) failed.push_back(x);
  Shared sh{recipe, repair(members, failed, static_cast<index_t>(pool->spare_rank.size())), {}, {}};
  if (!sh.plan.by_spawn.empty() && !(op & op_spawn)) {
    if (index < 0) return std::nullopt;
    const std::size_t n = pool->spare_rank.size();
    throw Error(Status::invalid_argument, "repair: root " +
                                              std::string(sh.plan.failed.size() == 1 ? "index " : "indices ") +
                                              index_list(sh.plan.failed) + " failed and " +
                                              (n == 1 ? "1 spare stands" : std::to_string(n) + " spares stand") +
                                              " by; give a command to spawn the rest, or shrink the mesh");
  }
  int me = 0, live = 0;
  DEVMESH_MPI(MPI_Comm_rank(pool->comm, &me));
  DEVMESH_MPI(MPI_Comm_size(pool->comm, &live));
  map_repaired(*pool, live, sh);
  const int lead = lead_of(*pool);
  MPI_Comm merged = pool->comm;
  try {
    if (!sh.plan.by_spawn.empty()) {
      merged = spawn_and_merge(pool->comm, lead, spawn, sh.plan);
      share(merged, lead_rank(merged, me == lead), sh, false);
      reach_newcomers(merged, static_cast<int>(sh.plan.by_spawn.size()));
    }
    Mesh out = make_repaired(merged, split_key(sh, me), sh);
    // The pool of the repaired mesh: the same communicator with the new map,
    // or the merged one; none where no spare is left.
    std::shared_ptr<Pool> next;
    if (!sh.spare_rank.empty()) {
      next = merged == pool->comm ? pool : std::make_shared<Pool>();
      if (merged != pool->comm) {
        next->comm = merged;
        next->owned = true;
      }
      next->member_rank = sh.member_rank;
      next->spare_rank = sh.spare_rank;
    } else if (merged != pool->comm) {
      MPI_Comm_free(&merged);
    }
    if (!out) {  // a spare left over: it stands by in the new pool
      pool = std::move(next);
      return std::nullopt;
    }
    MeshAccess::state(out)->pool() = std::move(next);
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
  const int lead = lead_of(*pool);
  if (lead < 0) throw Error(Status::proc_failed, "standby: every member of the mesh failed");
  int header = index < 0 ? 0 : op;
  if (const int rc = MPI_Bcast(&header, 1, MPI_INT, lead, pool->comm); rc != MPI_SUCCESS) {
    mpi::comm_revoke(pool->comm);
    if (index < 0) return std::nullopt;
    throw_mpi_error(rc, "MPI_Bcast");
  }
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
  detail::Shared sh;
  try {
    detail::share(merged, detail::lead_rank(merged, false), sh, true);
    detail::reach_newcomers(merged, static_cast<int>(sh.plan.by_spawn.size()));
    int me = 0;
    DEVMESH_MPI(MPI_Comm_rank(merged, &me));
    Mesh out = detail::make_repaired(merged, detail::split_key(sh, me), sh);
    // The spares left stand by in the merged communicator, the repaired
    // mesh's pool; without spares it is not needed.
    if (!sh.spare_rank.empty()) {
      auto pool = std::make_shared<detail::Pool>();
      pool->comm = merged;
      pool->owned = true;
      pool->member_rank = sh.member_rank;
      pool->spare_rank = sh.spare_rank;
      detail::MeshAccess::state(out)->pool() = std::move(pool);
    } else {
      MPI_Comm_free(&merged);
    }
    return out;
  } catch (const Error&) {
    detail::mpi::comm_revoke(merged);
    throw;
  }
}

}  // namespace devmesh
