#include "mesh_state.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <type_traits>

#include "cross_check.hpp"
#include "finalize.hpp"
#include "mpi_check.hpp"
#include "mpi_comms.hpp"
#include "mpi_features.hpp"

namespace devmesh::detail {

struct MeshState::ParentLink {
  std::atomic<bool> freed{false};
  std::mutex mutex;
  // Roots whose dims' communicators are made over the parent, in creation
  // order (the same on every member: creation is collective over the
  // parent), which keep_members() visits in that order.
  std::vector<std::weak_ptr<MeshState>> keepers;
};

namespace {

// An attribute on every communicator devmesh hands out (comm(), cart_comm()):
// its delete callback runs when that communicator is freed, by the program
// (the next comm() then says so instead of returning a dead handle) or by
// release(), which sets `releasing` first.
int tracked_comm_deleted(MPI_Comm, int, void* value, void*) {
  auto* tracking = static_cast<MeshState::Tracking*>(value);
  if (tracking->releasing.load()) return MPI_SUCCESS;
  tracking->freed_by_program = true;
  // After the flag: an answer recorded at the new epoch saw the flag.
  if (tracking->epoch) tracking->epoch->fetch_add(1);
  return MPI_SUCCESS;
}

// A keyval made once (a static's initialization: thread-safe, and tried
// again by the next call if it throws).
int keyval_of(MPI_Comm_delete_attr_function* deleted) {
  int key = MPI_KEYVAL_INVALID;
  DEVMESH_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, deleted, &key, nullptr));
  return key;
}

int tracking_keyval() {
  static const int key = keyval_of(tracked_comm_deleted);
  return key;
}

// The attribute on a tracked parent (MeshState::track_parent) holds a
// std::shared_ptr<ParentLink>, one per parent, shared by every root made
// over it. Its delete callback, which MPI runs when the program frees the
// parent (MPI_Comm_free, MPI_Comm_disconnect; for MPI_COMM_WORLD at
// MPI_Finalize, if at all), marks the link and drops the attribute's share.
// Not copied by MPI_Comm_dup. Before it marks the link, the roots that
// make communicators over the parent make their root communicator from it
// (MeshState::keep_members).
int parent_deleted(MPI_Comm parent, int, void* value, void*) {
  auto* link = static_cast<std::shared_ptr<MeshState::ParentLink>*>(value);
  std::vector<std::weak_ptr<MeshState>> keepers;
  {
    std::lock_guard<std::mutex> lock((*link)->mutex);
    keepers.swap((*link)->keepers);
  }
  for (const std::weak_ptr<MeshState>& k : keepers)
    if (const std::shared_ptr<MeshState> state = k.lock()) state->keep_members(parent);
  (*link)->freed = true;
  delete link;
  return MPI_SUCCESS;
}

int parent_keyval() {
  static const int key = keyval_of(parent_deleted);
  return key;
}

// "devmesh:<seq>.<digest>:", the start of a root's creation tags.
std::string tag_prefix_of(std::uint64_t seq, std::uint64_t digest) {
  // "devmesh:" is 8 bytes and each number at most 20 digits, so the bounds
  // given to to_chars are never reached: the text ends by byte 50.
  char buf[64] = "devmesh:";
  char* at = std::to_chars(buf + 8, buf + 30, seq).ptr;
  *at++ = '.';
  at = std::to_chars(at, buf + 62, digest).ptr;
  *at++ = ':';
  return std::string(buf, at);
}

// A layout's part of a creation tag: its key's numbers, the same on every
// member (coalesced), without formatting a Layout.
std::string layout_tag(const std::vector<index_t>& key) {
  std::string out = "layout";
  char buf[24];
  for (index_t k : key) {
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, k);
    out += ':';
    out.append(buf, end);
  }
  return out;
}

}  // namespace

// "devmesh:<dim>", cut to what MPI_Comm_set_name keeps.
std::string comm_name(std::string_view dim) {
  std::string name = "devmesh:";
  name.append(dim.substr(0, MPI_MAX_OBJECT_NAME - 1 - name.size()));
  return name;
}

// The cache key of a layout: its coalesced modes (a size-1 dim has none),
// all positive, so that no layout's key starts like a Cartesian view's.
std::vector<index_t> key_of(const Layout& layout) {
  const Layout modes = coalesce(layout);
  std::vector<index_t> key;
  key.reserve(2 * modes.modes.size());
  for (const Mode& m : modes.modes) {
    key.push_back(m.size);
    key.push_back(m.stride);
  }
  return key;
}

BackendSpec backend_of(const MeshOptions& options, std::string_view dim) {
  BackendSpec spec{options.backend, {}};
  bool own_options = false;
  for (const auto& [name, backend] : options.dim_backends)
    if (name == dim) spec.name = backend;
  for (const auto& [name, option] : options.dim_options)
    if (name == dim) {
      spec.options.push_back(option);
      own_options = true;
    }
  if (!own_options && spec.name == options.backend) spec.options = options.backend_options;
  return spec;
}

std::vector<BackendSpec> backends_named(const MeshOptions& options) {
  std::vector<BackendSpec> out{backend_of(options, {})};
  std::vector<std::string> dims;
  for (const auto& [dim, b] : options.dim_backends) dims.push_back(dim);
  for (const auto& [dim, o] : options.dim_options) dims.push_back(dim);
  for (const std::string& dim : dims) {
    BackendSpec s = backend_of(options, dim);
    const std::string key = s.key();
    if (std::none_of(out.begin(), out.end(), [&](const BackendSpec& o) { return o.key() == key; }))
      out.push_back(std::move(s));
  }
  return out;
}

// The fields backends_named reads, compared with the defaults'.
const std::vector<BackendSpec>* default_backends_named(const MeshOptions& options) {
  static const MeshOptions defaults;
  if (options.backend != defaults.backend || options.backend_options != defaults.backend_options ||
      options.dim_backends != defaults.dim_backends || options.dim_options != defaults.dim_options)
    return nullptr;
  static const std::vector<BackendSpec> named = backends_named(defaults);
  return &named;
}

MeshState::MeshState(const View& root, MPI_Group root_group, int index, int parent_rank, int host_local_rank,
                     std::uint64_t seq, std::uint64_t digest, MeshOptions options)
    : root_size_(root.root_size()),
      root_listed_(root.has_rank_list()),
      root_group_(root_group),
      index_(index),
      parent_rank_(parent_rank),
      host_local_rank_(host_local_rank),
      tag_prefix_(tag_prefix_of(seq, digest)),
      options_(std::move(options)) {
  failure_ = options_.fault_tolerance ? ulfm_policy(options_.deadline) : plain_policy();
  register_live(this);
}

MeshState::~MeshState() {
  unregister_live(this);
  release();
}

void MeshState::release() noexcept {
  Lock lock(mutex_);
  if (released_) return;
  released_ = true;
  epoch_.fetch_add(1);  // before any communicator goes
  failure_->clear();
  const bool alive = mpi_alive();
  for (auto& [key, h] : handouts_) {
    h.upgraded.clear();  // backend communicators go before their MPI group
    // A communicator the program freed is not freed again; the others'
    // tracking callbacks must not take devmesh's own free for the program's.
    h.tracking.releasing = true;
    if (!alive || !h.owned || h.comm == MPI_COMM_NULL) continue;
    // One with a request that never completes (leave_unfreed) and a
    // revoked one (mpi::free_comm) are left to MPI_Finalize, without the
    // attribute that points at their tracking.
    const bool unfreed = left_unfreed(h.comm);
    if (h.tracking.freed_by_program) continue;
    const MPI_Comm comm = h.comm;
    if (unfreed || !mpi::free_comm(h.comm)) MPI_Comm_delete_attr(comm, tracking_keyval());
  }
  handouts_.clear();
  backends_.clear();
  if (alive) {
    mpi::free_comm(root_comm_);
    mpi::free_comm(owned_parent_);
    if (root_group_ != MPI_GROUP_NULL) MPI_Group_free(&root_group_);
    if (errhandler_ != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&errhandler_);
  }
}

void MeshState::check_alive(const Lock&) const {
  if (released_) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  failure_->check("an operation of the mesh");
}

void MeshState::inherit_errhandler(MPI_Comm parent) {
  // A fault-tolerant mesh's communicators return errors (see mesh.hpp).
  if (options_.comm_errors != CommErrors::inherit || failure_->returns_errors()) return;
  Lock lock(mutex_);
  DEVMESH_MPI(MPI_Comm_get_errhandler(parent, &errhandler_));
}

BackendSpec MeshState::backend_of(const Dim& dim) {
  Lock lock(mutex_);
  return backend_of(lock, dim);
}

BackendSpec MeshState::backend_of(const Lock&, const Dim& dim) const {
  if (auto it = chosen_.find({dim.name, key_of(dim.layout)}); it != chosen_.end()) return it->second;
  return detail::backend_of(options_, dim.name);
}

void MeshState::open_backends(const std::vector<BackendSpec>& specs) {
  Lock lock(mutex_);
  check_alive(lock);
  for (const BackendSpec& spec : specs) {
    if (spec.name.empty() || backends_.count(spec.key())) continue;
    backends_.emplace(spec.key(), std::make_unique<BackendInstance>(spec));
  }
}

void MeshState::choose_backends(const View& view, const std::vector<std::pair<Dim, BackendSpec>>& chosen) {
  Lock lock(mutex_);
  const auto describe = [](const BackendSpec& b) {
    std::string out = "'" + b.name + "'";
    for (std::size_t i = 0; i < b.options.size(); ++i) out += (i ? "," : " with ") + b.options[i];
    return out;
  };
  const std::vector<std::string>& roots = view.root_names();
  for (const auto& [dim, spec] : chosen) {
    if (spec.name.empty()) continue;
    BackendSpec before;
    if (auto it = chosen_.find({dim.name, key_of(dim.layout)}); it != chosen_.end())
      before = it->second;
    else if (std::find(roots.begin(), roots.end(), dim.name) != roots.end())
      before = detail::backend_of(options_, dim.name);
    if (!before.name.empty() && before.key() != spec.key())
      throw Error(Status::duplicate_name,
                  "dim '" + dim.name + "' (" + to_string(coalesce(dim.layout)) + ") runs on backend " +
                      describe(before) + " already, not " + describe(spec) +
                      ": a dim keeps the backend it was first made with (a root dim's comes from the mesh's "
                      "options)");
  }
  bool changed = false;
  for (const auto& [dim, spec] : chosen)
    if (!spec.name.empty()) changed |= chosen_.emplace(std::make_pair(dim.name, key_of(dim.layout)), spec).second;
  // A view that asked for such a dim before got its default backend's.
  if (changed) epoch_.fetch_add(1);
}

void MeshState::add_backend(const BackendSpec& spec, std::unique_ptr<BackendInstance> instance) {
  Lock lock(mutex_);
  backends_.emplace(spec.key(), std::move(instance));
}

void MeshState::take_root_comm(MPI_Comm comm) {
  Lock lock(mutex_);
  root_comm_ = comm;
  ++created_;
  failure_->made(root_comm_, true);
  DEVMESH_MPI(MPI_Comm_set_name(root_comm_, "devmesh:root"));
}

void MeshState::take_parent(MPI_Comm parent) {
  Lock lock(mutex_);
  owned_parent_ = parent;
}

void MeshState::track_parent(MPI_Comm parent, bool all_members) {
  std::shared_ptr<ParentLink> link;
  {
    Lock lock(mutex_);
    const int key = parent_keyval();
    void* value = nullptr;
    int found = 0;
    DEVMESH_MPI(MPI_Comm_get_attr(parent, key, &value, &found));
    if (found) {
      link = *static_cast<std::shared_ptr<ParentLink>*>(value);
    } else {
      auto held = std::make_unique<std::shared_ptr<ParentLink>>(std::make_shared<ParentLink>());
      DEVMESH_MPI(MPI_Comm_set_attr(parent, key, held.get()));
      link = *held.release();  // the attribute's from now on
    }
    parent_ = parent;
    parent_link_ = link;
    parent_members_ = all_members;
  }
  if (mpi::dims_from_group) return;
  // Outside the state's lock: the delete callback takes the link's lock,
  // then each state's.
  std::lock_guard<std::mutex> lock(link->mutex);
  std::erase_if(link->keepers, [](const std::weak_ptr<MeshState>& k) { return k.expired(); });
  link->keepers.push_back(weak_from_this());
}

void MeshState::keep_members(MPI_Comm parent) noexcept {
  Lock lock(mutex_);
  if (released_ || root_comm_ != MPI_COMM_NULL || !mpi_alive()) return;
  try {
    int n = 0;
    DEVMESH_MPI(MPI_Group_size(root_group_, &n));
    std::vector<int> all(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
    MPI_Comm c = mpi::comm_from_members(root_group_, all, tag("root"), parent);
    if (const int rc = MPI_Comm_set_name(c, "devmesh:root"); rc != MPI_SUCCESS) {
      MPI_Comm_free(&c);
      throw_mpi_error(rc, "MPI_Comm_set_name");
    }
    root_comm_ = c;
    ++created_;
  } catch (const Error& e) {
    root_failure_ =
        Error(e.status(), std::string("the root communicator, made when the program freed the parent: ") + e.what(),
              e.mpi_code(), e.mpi_class());
  } catch (...) {
    root_failure_ = Error(Status::backend, "the root communicator could not be made when the program freed the parent");
  }
}

MPI_Comm MeshState::live_parent(const Lock&) const {
  return parent_link_ && !parent_link_->freed ? parent_ : MPI_COMM_NULL;
}

// Whether the program freed the parent is the same on every member of a
// correct program: MPI_Comm_free is collective over the parent, and a rank
// freeing it before create_comms while another frees it after would call
// two collectives (the free, and create_comms over the root communicator)
// in opposite orders, which MPI does not allow.
MPI_Comm MeshState::all_members(const Lock& lock) {
  check_alive(lock);
  if (root_comm_ != MPI_COMM_NULL) return root_comm_;
  if (const MPI_Comm parent = live_parent(lock); parent != MPI_COMM_NULL && parent_members_) return parent;
  return root_comm(lock);
}

void MeshState::insert_program_comm(const Layout& layout, MPI_Comm comm, std::string_view dim) {
  Lock lock(mutex_);
  // Dims of one layout (only size-1 dims can share one: the caller alone)
  // share the communicator of the first of them.
  auto [it, fresh] = handouts_.try_emplace(key_of(layout));
  if (!fresh) return;
  it->second.comm = comm;
  it->second.name = comm_name(dim);
  it->second.owned = false;
}

// Creation runs under MPI_ERRORS_RETURN (make_comm, the root communicator),
// so that a failure there is an Error, not an abort (but for the calls made
// over the program's parent, which run under its handler, as
// Mesh::create's check does). The program's handler
// goes on last, once, before anyone else holds the handle, and is never
// changed afterwards: switching to MPI_ERRORS_RETURN around devmesh's later
// calls on the same communicator would also switch it for another thread
// of the program using that communicator meanwhile (a handler belongs to
// the communicator, not to the call), and a second communicator per layout
// for devmesh's own calls would double the communicators. So devmesh's
// later calls on a handed-out communicator (backend collectives, NCCL
// set-up, MPI_Cart_sub of the cart) follow the program's handler, as the
// program's own calls on it do; they still check every code a handler
// lets return.
MeshState::Handout& MeshState::hand_out(const Lock&, std::vector<index_t> key, MPI_Comm comm, std::string name) {
  // Entered first, so that the attribute points at the tracking's final place;
  // taken out again if what follows fails.
  const auto [at, fresh] = handouts_.try_emplace(std::move(key));
  if (!fresh) {
    MPI_Comm_free(&comm);
    throw Error(Status::backend, "internal: a communicator was made twice for one layout");
  }
  Handout& h = at->second;
  h.tracking.epoch = &epoch_;
  const auto fail = [&] {
    h.tracking.releasing = true;
    MPI_Comm_free(&comm);
    handouts_.erase(at);
  };
  int rc = MPI_SUCCESS;
  const char* call = "MPI_Comm_set_name";
  try {
    const int keyval = tracking_keyval();
    rc = MPI_Comm_set_name(comm, name.c_str());
    if (rc == MPI_SUCCESS) {
      call = "MPI_Comm_set_attr";
      rc = MPI_Comm_set_attr(comm, keyval, &h.tracking);
    }
    if (rc == MPI_SUCCESS && errhandler_ != MPI_ERRHANDLER_NULL) {
      call = "MPI_Comm_set_errhandler";
      rc = MPI_Comm_set_errhandler(comm, errhandler_);
    }
  } catch (...) {
    fail();
    throw;
  }
  if (rc != MPI_SUCCESS) {
    fail();
    throw_mpi_error(rc, call);
  }
  failure_->made(comm, false);
  h.comm = comm;
  h.name = std::move(name);
  ++created_;
  return h;
}

MeshState::Handout* MeshState::find(const Lock&, const std::vector<index_t>& key) {
  auto it = handouts_.find(key);
  if (it == handouts_.end()) return nullptr;
  if (it->second.tracking.freed_by_program)
    throw Error(Status::invalid_argument,
                "the communicator '" + it->second.name +
                    "' was freed by the program (MPI_Comm_free); devmesh "
                    "owns the communicators it returns and frees them itself: do not free them");
  return &it->second;
}

MeshState::Handout& MeshState::entry(const Lock& lock, const Layout& layout, std::string_view dim) {
  check_alive(lock);
  std::vector<index_t> key = key_of(layout);
  if (Handout* h = find(lock, key)) return *h;
  // The caller's group in local-rank order, as root indices.
  const index_t base = group_base(layout, index_);
  const index_t n = size(layout);
  // On the stack for the groups of most meshes: creation allocates as
  // little as it can (docs/BENCHMARKS.md, the gap to the floor).
  std::array<int, 64> small;
  std::vector<int> large;
  if (n > static_cast<index_t>(small.size())) large.resize(static_cast<std::size_t>(n));
  const std::span<int> members =
      large.empty() ? std::span<int>(small).first(static_cast<std::size_t>(n)) : std::span<int>(large);
  for (index_t k = 0; k < n; ++k) members[static_cast<std::size_t>(k)] = static_cast<int>(base + offset(layout, k));
  MPI_Comm c = make_comm(lock, members, tag(layout_tag(key)));
  std::string name;
  try {
    name = comm_name(dim);
  } catch (...) {
    MPI_Comm_free(&c);
    throw;
  }
  return hand_out(lock, std::move(key), c, std::move(name));
}

// The tag names the root and the layout, so concurrent creations never
// mix. One allocation.
std::string MeshState::tag(std::string_view what) const {
  std::string out;
  out.reserve(tag_prefix_.size() + what.size());
  out.append(tag_prefix_).append(what);
  return out;
}

// Where dims do not come from their groups: over the root communicator if
// made, else over the program's parent (tracked: a freed parent left the
// root communicator behind, see keep_members).
MPI_Comm MeshState::make_comm(const Lock& lock, std::span<const int> members, const std::string& creation_tag) {
  // A fault-tolerant mesh makes it by MPI_Comm_create over the root
  // communicator, each member passing its own group (the layout's groups
  // partition the root): a creation over all root members, which ULFM makes
  // uniform and which a revoke or a death interrupts (a creation over a
  // group, MPI_Comm_create_group, goes on waiting for a member that left
  // it). It is MPI_Comm_split without the split's allgather of every
  // member's colour and key, which the members' groups make needless.
  if (failure_->dims_over_root()) {
    MPI_Comm c = mpi::comm_create_over(root_group_, members, root_comm(lock));
    return_errors(c);
    return c;
  }
  MPI_Comm over = MPI_COMM_NULL;
  if (!mpi::dims_from_group) {
    over = root_comm_ != MPI_COMM_NULL ? root_comm_ : live_parent(lock);
    if (over == MPI_COMM_NULL) {
      if (root_failure_) throw *root_failure_;
      throw Error(Status::invalid_argument,
                  "no communicator holds the mesh's members any more (the parent was "
                  "freed and no root communicator was made from it)");
    }
  }
  return mpi::comm_from_members(root_group_, members, creation_tag, over);
}

MPI_Comm MeshState::root_comm(const Lock& lock) {
  check_alive(lock);
  if (root_comm_ != MPI_COMM_NULL) return root_comm_;
  int n = 0;
  DEVMESH_MPI(MPI_Group_size(root_group_, &n));
  std::vector<int> all(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) all[static_cast<std::size_t>(i)] = i;
  MPI_Comm c = make_comm(lock, all, tag("root"));
  if (const int rc = MPI_Comm_set_name(c, "devmesh:root"); rc != MPI_SUCCESS) {
    MPI_Comm_free(&c);
    throw_mpi_error(rc, "MPI_Comm_set_name");
  }
  root_comm_ = c;
  ++created_;
  failure_->made(root_comm_, true);
  return root_comm_;
}

MPI_Comm MeshState::root_comm() {
  Lock lock(mutex_);
  return with_failure_policy([&] { return root_comm(lock); });
}

MPI_Comm MeshState::comm(const Layout& layout, std::string_view dim) {
  Lock lock(mutex_);
  return with_failure_policy([&] { return entry(lock, layout, dim).comm; });
}

const Resolved& MeshState::communicator(const Dim& dim) {
  Lock lock(mutex_);
  // Read first: a program's free moves the epoch on after marking its
  // communicator, which the lookup below then sees.
  const std::uint64_t epoch = epoch_.load(std::memory_order_acquire);
  const BackendSpec spec = backend_of(lock, dim);
  Communicator& comm =
      with_failure_policy([&]() -> Communicator& { return communicator(lock, dim.layout, dim.name, spec, false); });
  return resolved_.try_emplace({&comm, epoch}, Resolved{&comm, epoch}).first->second;
}

// all_root_members: every root member makes this call together.
Communicator& MeshState::communicator(const Lock& lock, const Layout& layout, std::string_view dim,
                                      const BackendSpec& spec, bool all_root_members) {
  Handout& h = entry(lock, layout, dim);
  const std::string key = spec.key();
  if (auto it = h.upgraded.find(key); it != h.upgraded.end()) return *it->second;
  if (auto it = h.failed.find(key); it != h.failed.end()) throw it->second;
  auto b = backends_.find(key);
  if (b == backends_.end()) b = backends_.emplace(key, std::make_unique<BackendInstance>(spec)).first;
  devmesh_backend_group_t group{};
  group.size = sizeof group;
  group.group = h.comm;
  // A backend whose creation communicates over nothing (LOCAL_CREATE, as
  // the built-in one) gets no root communicator (where dims come from
  // groups, it would be a communicator over all members made for nothing).
  // The others get it, as devmesh_backend_group_t promises.
  const bool local = (b->second->table().capabilities & DEVMESH_BACKEND_CAP_LOCAL_CREATE) != 0;
  group.root = all_root_members && !local ? root_comm(lock) : MPI_COMM_NULL;
  group.all_root_members = all_root_members ? 1 : 0;
  group.color = static_cast<int>(group_base(layout, index_));
  group.key = static_cast<int>(local_index(layout, index_));
  group.host_local_rank = host_local_rank_;
  group.deadline = options_.deadline;
  std::unique_ptr<Communicator> comm;
  try {
    comm = b->second->create(group, failure_->fault());
  } catch (const Error& e) {
    h.failed.emplace(key, e);
    throw;
  }
  return *h.upgraded.emplace(key, std::move(comm)).first->second;
}

int MeshState::comm_count() {
  Lock lock(mutex_);
  return created_;
}

std::shared_ptr<const RootHosts> MeshState::hosts() {
  Lock lock(mutex_);
  return hosts_;
}

void MeshState::set_hosts(std::shared_ptr<const RootHosts> hosts) {
  Lock lock(mutex_);
  if (!hosts_) hosts_ = std::move(hosts);
}

}  // namespace devmesh::detail
