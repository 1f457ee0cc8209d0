#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <utility>

#include "devmesh/hosts.hpp"
#include "mesh_state.hpp"
#include "mpi_check.hpp"

namespace devmesh {
namespace detail {
namespace {

// --- cleanup at MPI_Finalize ---------------------------------------------
// Meshes alive when MPI_Finalize runs are released by a delete callback of
// an attribute on MPI_COMM_SELF (MPI runs it first thing in MPI_Finalize);
// their handles stay valid but hold no communicators afterwards.
std::mutex live_mutex;
std::set<MeshState*>& live() {
  static std::set<MeshState*> states;
  return states;
}

int release_all(MPI_Comm, int, void*, void*) {
  std::lock_guard lock(live_mutex);
  for (MeshState* s : live()) s->release();
  return MPI_SUCCESS;
}

void watch_finalize() {
  static std::once_flag once;
  std::call_once(once, [] {
    int key = MPI_KEYVAL_INVALID;
    DEVMESH_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_all, &key, nullptr));
    DEVMESH_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr));
  });
}

bool mpi_alive() noexcept {
  int finalized = 1;
  return MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}

std::vector<index_t> key_of(const Layout& layout) {
  std::vector<index_t> key;
  for (const Mode& m : coalesce(layout).modes) {
    key.push_back(m.size);
    key.push_back(m.stride);
  }
  return key;
}

// 64-bit FNV-1a, for the cross-rank argument check.
struct Hash {
  std::uint64_t h = 1469598103934665603ull;
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
  void add(std::int64_t v) { bytes(&v, sizeof v); }
  void add(std::string_view s) {
    add(static_cast<std::int64_t>(s.size()));
    bytes(s.data(), s.size());
  }
};

}  // namespace

const std::string& backend_of(const MeshOptions& options, std::string_view dim) noexcept {
  for (const auto& [name, backend] : options.dim_backends)
    if (name == dim) return backend;
  return options.backend;
}

MeshState::MeshState(View r, MPI_Group group, int idx, std::string root_id, MeshOptions opts)
    : root(std::move(r)), root_group(group), index(idx), id(std::move(root_id)), options(std::move(opts)) {
  std::lock_guard lock(live_mutex);
  live().insert(this);
}

MeshState::~MeshState() {
  {
    std::lock_guard lock(live_mutex);
    live().erase(this);
  }
  release();
}

void MeshState::release() noexcept {
  if (released_) return;
  released_ = true;
  const bool alive = mpi_alive();
  for (auto& [key, e] : cache_) {
    e.upgraded.clear();  // backend communicators go before their MPI group
    if (alive && e.comm != MPI_COMM_NULL) MPI_Comm_free(&e.comm);
  }
  cache_.clear();
  backends_.clear();
  if (alive) {
    if (cart_ != MPI_COMM_NULL) MPI_Comm_free(&cart_);
    if (root_comm_ != MPI_COMM_NULL) MPI_Comm_free(&root_comm_);
    if (root_group != MPI_GROUP_NULL) MPI_Group_free(&root_group);
  }
}

MeshState::Entry* MeshState::find(const Layout& layout) {
  auto it = cache_.find(key_of(layout));
  return it == cache_.end() ? nullptr : &it->second;
}

MeshState::Entry& MeshState::adopt(const Layout& layout, MPI_Comm comm) {
  Entry& e = cache_[key_of(layout)];
  e.comm = comm;
  ++created;
  return e;
}

MeshState::Entry& MeshState::entry(const Layout& layout) {
  if (released_) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  if (Entry* e = find(layout)) return *e;
  // The caller's group in local-rank order, as root indices.
  const index_t base = group_base(layout, index);
  const index_t n = size(layout);
  std::vector<int> members(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) members[static_cast<std::size_t>(k)] = static_cast<int>(base + offset(layout, k));
  std::string what = "layout " + to_string(coalesce(layout));
  return adopt(layout, make_comm(members, what));
}

#if MPI_VERSION >= 4
// MPI 4: a communicator straight from a group, no parent communicator
// involved (so none needs to exist, and the user's may be freed), collective
// over the group only, errors returned from the start. The string tag
// names the root and the layout, so concurrent creations never mix.
MPI_Comm MeshState::make_comm(const std::vector<int>& members, const std::string& what) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Group_incl(root_group, static_cast<int>(members.size()), members.data(), &group));
  const std::string tag = "devmesh:" + id + ":" + what;
  const int rc = MPI_Comm_create_from_group(group, tag.c_str(), MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
  MPI_Group_free(&group);
  check_mpi(rc, "MPI_Comm_create_from_group");
  return comm;
}

MPI_Comm MeshState::root_comm() {
  if (released_) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  if (root_comm_ != MPI_COMM_NULL) return root_comm_;
  int n = 0;
  DEVMESH_MPI(MPI_Group_size(root_group, &n));
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  root_comm_ = make_comm(all, "root");
  ++created;
  return root_comm_;
}
#else
// MPI 3: communicators come from the root communicator, which Mesh::create
// then makes right away (see create_root).
MPI_Comm MeshState::make_comm(const std::vector<int>& members, const std::string& what) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Group_incl(root_group, static_cast<int>(members.size()), members.data(), &group));
  Hash h;
  h.add(what);
  const int rc = MPI_Comm_create_group(root_comm(), group, static_cast<int>(h.h % 32000u), &comm);
  MPI_Group_free(&group);
  check_mpi(rc, "MPI_Comm_create_group");
  return_errors(comm);
  return comm;
}

MPI_Comm MeshState::root_comm() {
  if (released_) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  return root_comm_;
}
#endif

void MeshState::add_backend(std::unique_ptr<Backend> backend) {
  std::string name(backend->name());
  backends_.emplace(std::move(name), std::move(backend));
}

Communicator& MeshState::upgraded(const Layout& layout, const std::string& backend,
                                  bool all_root_members) {
  Entry& e = entry(layout);
  if (auto it = e.upgraded.find(backend); it != e.upgraded.end()) return *it->second;
  auto b = backends_.find(backend);
  if (b == backends_.end())
    b = backends_.emplace(backend, make_backend(backend, options.backend_options)).first;
  GroupContext ctx;
  ctx.group = e.comm;
  if (all_root_members) ctx.root = root_comm();
  ctx.host_local_rank = host_local_rank;
  ctx.all_root_members = all_root_members;
  ctx.color = static_cast<int>(group_base(layout, index));
  ctx.key = static_cast<int>(local_index(layout, index));
  auto comm = b->second->create(ctx);
  return *e.upgraded.emplace(backend, std::move(comm)).first->second;
}

MPI_Comm MeshState::cart() {
  if (released_) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  if (cart_ != MPI_COMM_NULL) return cart_;
  std::vector<int> dims;
  for (index_t n : root.root_shape()) dims.push_back(static_cast<int>(n));
  std::vector<int> periods(dims.size(), 0);
  MPI_Comm c = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Cart_create(root_comm(), static_cast<int>(dims.size()), dims.data(), periods.data(), 0, &c));
  return_errors(c);
  cart_ = c;
  ++created;
  return cart_;
}

}  // namespace detail

using detail::MeshState;

namespace {

std::vector<index_t> widen(const std::vector<int>& v) { return {v.begin(), v.end()}; }

std::vector<int> narrow(const std::vector<index_t>& v) {
  std::vector<int> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](index_t x) { return static_cast<int>(x); });
  return out;
}

bool uses_gpu_backend(const MeshOptions& options) {
  if (options.backend != "mpi") return true;
  for (const auto& [dim, backend] : options.dim_backends)
    if (backend != "mpi") return true;
  return false;
}

Mesh create_root(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names,
                 const std::vector<int>* ranks, const MeshOptions& options,
                 Mesh (*wrap)(View, std::shared_ptr<MeshState>)) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized || !detail::mpi_alive())
    throw Error(Status::invalid_argument, "MPI is not initialized (or already finalized)");
  if (parent == MPI_COMM_NULL) throw Error(Status::invalid_argument, "the parent communicator is MPI_COMM_NULL");
  int world = 0, me = 0;
  DEVMESH_MPI(MPI_Comm_size(parent, &world));
  DEVMESH_MPI(MPI_Comm_rank(parent, &me));

  // Validate locally; every rank then learns whether all agree.
  Status status = Status::success;
  std::string message;
  std::optional<View> view;
  std::unique_ptr<Backend> backend;
  try {
    if (ranks && ranks->empty()) throw Error(Status::invalid_argument, "the rank list is empty");
    check_backend_name(options.backend);
    const BackendOptions& bo = options.backend_options;
    if (bo.nccl_init != NcclInit::unique_id && bo.nccl_init != NcclInit::split)
      throw Error(Status::invalid_argument,
                  "nccl_init " + std::to_string(static_cast<int>(bo.nccl_init)) + " is not an NcclInit");
    if (bo.nccl_scalable_from < 1)
      throw Error(Status::invalid_argument, "nccl_scalable_from is " + std::to_string(bo.nccl_scalable_from) +
                                                "; it must be at least 1");
    if (!(bo.init_timeout_seconds > 0))
      throw Error(Status::invalid_argument, "init_timeout_seconds must be positive");
    if (bo.device < -1)
      throw Error(Status::invalid_argument, "device " + std::to_string(bo.device) +
                                                " is not a device number (-1: automatic)");
    for (const auto& [dim, backend] : options.dim_backends) check_backend_name(backend);
    RootSpec spec{widen(shape), names, world, ranks ? widen(*ranks) : std::vector<index_t>{}};
    view = View::create(std::move(spec));
    // The default backend must run here (e.g. NCCL needs a GPU); per-dim
    // overrides are checked when their dim's communicator is first asked for.
    backend = make_backend(options.backend, options.backend_options);
  } catch (const Error& e) {
    status = e.status();
    message = e.what();
  }
  detail::Hash h;
  for (int s : shape) h.add(s);
  for (const std::string& n : names) h.add(n);
  h.add(ranks ? static_cast<std::int64_t>(ranks->size()) : -1);
  if (ranks)
    for (int r : *ranks) h.add(r);
  h.add(options.backend);
  for (const auto& [dim, backend] : options.dim_backends) {
    h.add(dim);
    h.add(backend);
  }
  // Backend settings that must agree (the CUDA device may differ per rank).
  const BackendOptions& b = options.backend_options;
  h.add(static_cast<std::int64_t>(b.nccl_init));
  h.add(b.nccl_split_share ? 1 : 0);
  h.add(b.nccl_scalable_from);
  h.add(static_cast<std::int64_t>(b.init_timeout_seconds * 1e6));
  // max(h) == h and max(~h) == ~h on every rank exactly when all h agree.
  // The same arguments give the same validation result everywhere, except
  // for what depends on the machine (a GPU for NCCL): the worst status wins.
  // The same reduction agrees on a sequence number for the new root (the
  // largest of the ranks' counters of roots made so far), which keeps the
  // roots' creation tags apart.
  static std::atomic<std::uint64_t> roots_made{0};
  std::uint64_t mine[4] = {h.h, ~h.h, static_cast<std::uint64_t>(status), roots_made.load()};
  std::uint64_t all[4] = {0, 0, 0, 0};
  // Every rank makes this one collective call whatever its arguments, so
  // that ranks that disagree get an error instead of a hang. It is the only
  // communication of creation: no communicator is made until one is asked
  // for (with MPI 4; see make_comm).
  DEVMESH_MPI(MPI_Allreduce(mine, all, 4, MPI_UINT64_T, MPI_MAX, parent));
  roots_made = all[3] + 1;
  if (all[0] != mine[0] || all[1] != mine[1])
    throw Error(Status::inconsistent,
                "ranks of the parent communicator passed different arguments to mesh creation "
                "(shape, names, rank list or backends differ)");
  if (all[2] != static_cast<std::uint64_t>(Status::success)) {
    const auto worst = static_cast<Status>(all[2]);
    if (worst == status) throw Error(status, message);
    throw Error(worst, "mesh creation failed on another rank with status " +
                           std::string(status_name(worst)));
  }
  // GPU backends pick a device by the rank's position on its host
  // (DEVMESH_HOST_ID honoured, see hosts.hpp). Collective over parent.
  const int host_rank = uses_gpu_backend(options) ? discover_hosts(parent).local_rank : 0;
  // The members in root-index order, as a group (no communicator yet).
  MPI_Group parent_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Comm_group(parent, &parent_group));
  if (!ranks) {
    group = parent_group;
  } else {
    const int rc = MPI_Group_incl(parent_group, static_cast<int>(ranks->size()), ranks->data(), &group);
    MPI_Group_free(&parent_group);
    detail::check_mpi(rc, "MPI_Group_incl");
  }
#if MPI_VERSION < 4
  // Without MPI_Comm_create_from_group, communicators are made from a root
  // communicator, made here: collective over parent (non-members get
  // MPI_COMM_NULL).
  MPI_Comm root_comm = MPI_COMM_NULL;
  if (int rc = MPI_Comm_create(parent, group, &root_comm); rc != MPI_SUCCESS) {
    MPI_Group_free(&group);
    detail::check_mpi(rc, "MPI_Comm_create");
  }
  try {
    detail::return_errors(root_comm);
  } catch (...) {
    MPI_Group_free(&group);
    throw;
  }
#endif
  const std::optional<index_t> index = view->root_index(me);
  if (!index) {
    MPI_Group_free(&group);
    return Mesh();
  }
  std::shared_ptr<MeshState> state;
  try {
    detail::watch_finalize();
    state = std::make_shared<MeshState>(*view, group, static_cast<int>(*index),
                                        std::to_string(all[3]) + "." + std::to_string(h.h), options);
  } catch (...) {
    if (!state) MPI_Group_free(&group);
#if MPI_VERSION < 4
    if (root_comm != MPI_COMM_NULL) MPI_Comm_free(&root_comm);
#endif
    throw;
  }
#if MPI_VERSION < 4
  state->adopt_root(root_comm);  // the state frees it from here on, also if what follows throws
#endif
  state->parent_rank = me;
  state->host_local_rank = host_rank;
  state->add_backend(std::move(backend));
  return wrap(*view, std::move(state));
}

}  // namespace

Mesh Mesh::create(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names,
                  const MeshOptions& options) {
  return create_root(parent, std::move(shape), std::move(names), nullptr, options,
                     [](View v, std::shared_ptr<MeshState> s) { return Mesh(std::move(v), std::move(s)); });
}

Mesh Mesh::create(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names,
                  std::vector<int> ranks, const MeshOptions& options) {
  return create_root(parent, std::move(shape), std::move(names), &ranks, options,
                     [](View v, std::shared_ptr<MeshState> s) { return Mesh(std::move(v), std::move(s)); });
}

const MeshState& Mesh::state() const {
  if (!state_) throw Error(Status::not_member, "the caller is not a member of this mesh (null mesh)");
  return *state_;
}

const View& Mesh::view() const {
  state();
  return *view_;
}

std::size_t Mesh::dim_of(std::string_view dim) const {
  const View& v = view();
  if (dim.empty()) {
    if (v.ndim() != 1)
      throw Error(Status::invalid_argument,
                  "a dim name is needed: this view has " + std::to_string(v.ndim()) + " dims");
    return 0;
  }
  return v.dim_index(dim);
}

Mesh Mesh::slice(const std::vector<std::string>& dims) const { return Mesh(view().slice(dims), state_); }

Mesh Mesh::operator[](std::initializer_list<std::string_view> dims) const {
  return slice(std::vector<std::string>(dims.begin(), dims.end()));
}

Mesh Mesh::flatten(std::optional<std::string> name) const {
  return Mesh(view().flatten(std::move(name)), state_);
}

Mesh Mesh::unflatten(std::string_view dim, const std::vector<int>& sizes,
                     const std::vector<std::string>& names) const {
  const std::vector<index_t> wide = widen(sizes);
  return Mesh(view().unflatten(dim, wide, names), state_);
}

Mesh Mesh::root() const { return Mesh(view().root(), state_); }

int Mesh::ndim() const { return static_cast<int>(view().ndim()); }
std::vector<std::string> Mesh::names() const { return view().names(); }
std::vector<int> Mesh::shape() const { return narrow(view().shape()); }
int Mesh::size() const { return static_cast<int>(view().size()); }
int Mesh::size(std::string_view dim) const { return static_cast<int>(view().dims()[dim_of(dim)].size()); }
std::vector<int> Mesh::coordinate() const { return narrow(view().coordinate(state().index)); }
int Mesh::local_rank(std::string_view dim) const {
  return static_cast<int>(view().local_rank(dim_of(dim), state().index));
}
std::vector<int> Mesh::group(std::string_view dim) const {
  return narrow(view().group(dim_of(dim), state().index));
}
std::vector<std::vector<int>> Mesh::all_groups(std::string_view dim) const {
  std::vector<std::vector<int>> out;
  for (const auto& g : view().all_groups(dim_of(dim))) out.push_back(narrow(g));
  return out;
}
int Mesh::parent_rank() const { return state().parent_rank; }
bool Mesh::same_root(const Mesh& other) const noexcept { return state_ && state_ == other.state_; }

MPI_Comm Mesh::comm(std::string_view dim) const {
  const Layout& layout = view().dims()[dim_of(dim)].layout;
  std::lock_guard lock(state_->mutex);
  return state_->entry(layout).comm;
}

Communicator& Mesh::communicator(std::string_view dim) const {
  const Dim& d = view().dims()[dim_of(dim)];
  std::lock_guard lock(state_->mutex);
  return state_->upgraded(d.layout, detail::backend_of(state_->options, d.name));
}

namespace {

// The root dims whose modes make up `layout` in root order (MPI_Cart_sub's
// remain_dims), or an empty vector when the layout is not such a sub-grid.
std::vector<int> cart_remain(const View& root, const Layout& layout) {
  const Layout want = coalesce(layout);
  std::vector<int> remain(root.ndim(), 0);
  Layout picked;
  for (std::size_t i = 0; i < root.ndim(); ++i) {
    const Mode m = root.dims()[i].layout.modes[0];
    for (const Mode& lm : layout.modes)
      if (m.size > 1 && lm == m) {
        remain[i] = 1;
        picked.modes.push_back(m);
      }
  }
  if (coalesce(picked) != want) return {};
  return remain;
}

}  // namespace

void Mesh::create_comms(CommPath path) const {
  const View& v = view();
  MeshState& s = *state_;
  std::lock_guard lock(s.mutex);
  // No MPI call after MPI_Finalize (the check below is one).
  if (s.released()) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  // All members must ask for the same layouts by the same path, or the
  // creations below would not match up: check first, fail everywhere. An
  // unknown path takes part in the check too, so that a member passing one
  // alone fails with the others instead of leaving them waiting.
  const bool known_path = path >= CommPath::automatic && path <= CommPath::cart_sub;
  detail::Hash h;
  h.add(static_cast<std::int64_t>(path));
  for (const Dim& d : v.dims()) {
    h.add(d.name);
    for (index_t k : detail::key_of(d.layout)) h.add(k);
  }
  std::uint64_t mine[2] = {h.h, ~h.h}, all[2] = {0, 0};
  const bool had_root = s.has_root_comm();
  DEVMESH_MPI(MPI_Allreduce(mine, all, 2, MPI_UINT64_T, MPI_MAX, s.root_comm()));
  const bool agree = all[0] == mine[0] && all[1] == mine[1];
  if (!agree || !known_path) {
    if (!had_root) s.drop_root_comm();  // a failed call leaves nothing made
    if (!agree)
      throw Error(Status::inconsistent,
                  "members of the root called create_comms with different views or paths "
                  "(view here: " + v.to_string() + ")");
    throw Error(Status::invalid_argument, "unknown creation path " + std::to_string(static_cast<int>(path)));
  }
  for (const Dim& d : v.dims()) {
    if (path == CommPath::automatic || path == CommPath::create_group) {
      s.entry(d.layout);
      continue;
    }
    const bool have = s.find(d.layout) != nullptr;
    MPI_Comm c = MPI_COMM_NULL;
    if (path == CommPath::split) {
      const int color = have ? MPI_UNDEFINED : static_cast<int>(group_base(d.layout, s.index));
      DEVMESH_MPI(MPI_Comm_split(s.root_comm(), color, static_cast<int>(local_index(d.layout, s.index)), &c));
    } else {  // cart_sub
      std::vector<int> remain = cart_remain(s.root, d.layout);
      if (remain.empty()) {
        s.entry(d.layout);
        continue;
      }
      DEVMESH_MPI(MPI_Cart_sub(s.cart(), remain.data(), &c));
      if (have) {
        MPI_Comm_free(&c);
        continue;
      }
    }
    if (c == MPI_COMM_NULL) continue;
    detail::return_errors(c);
    s.adopt(d.layout, c);
  }
  for (const Dim& d : v.dims()) s.upgraded(d.layout, detail::backend_of(s.options, d.name), true);
}

MPI_Comm Mesh::cart_comm() const {
  state();
  std::lock_guard lock(state_->mutex);
  return state_->cart();
}

int Mesh::comm_count() const {
  state();
  std::lock_guard lock(state_->mutex);
  return state_->created;
}

}  // namespace devmesh
