#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <utility>

#include "devmesh/hosts.hpp"
#include "agreement.hpp"
#include "hosts.hpp"
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

// Under the Sessions model alone (MPI_Init never called) MPI_COMM_SELF may
// not be used and MPI_Finalize never runs: the hook is left out then, and
// the program destroys its meshes before MPI_Session_finalize. It goes in
// with the first mesh created once MPI_Init has run.
void watch_finalize() {
  static std::mutex m;
  static bool installed = false;
  std::lock_guard lock(m);
  if (installed) return;
  int initialized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || !initialized) return;
  int key = MPI_KEYVAL_INVALID;
  DEVMESH_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, release_all, &key, nullptr));
  DEVMESH_MPI(MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr));
  installed = true;
}

bool mpi_alive() noexcept {
  int finalized = 1;
  return MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized;
}

// --- communicators handed out ----------------------------------------------
// An attribute on every communicator devmesh hands out (comm(), cart_comm()):
// its delete callback runs when that communicator is freed, by the program
// (the next comm() then says so instead of returning a dead handle) or by
// release(), which sets `releasing` first.
int watch_deleted(MPI_Comm, int, void* value, void*) {
  auto* watch = static_cast<MeshState::Watch*>(value);
  if (!watch->releasing.load()) watch->freed_by_program = true;
  return MPI_SUCCESS;
}

int watch_keyval() {
  static std::once_flag once;
  static int key = MPI_KEYVAL_INVALID;
  std::call_once(once, [] {
    DEVMESH_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, watch_deleted, &key, nullptr));
  });
  return key;
}

// "devmesh:<dim>", cut to what MPI_Comm_set_name keeps.
std::string comm_name(std::string_view dim) {
  std::string name = "devmesh:" + std::string(dim);
  if (name.size() >= MPI_MAX_OBJECT_NAME) name.resize(MPI_MAX_OBJECT_NAME - 1);
  return name;
}

[[noreturn]] void freed_by_program(const std::string& name) {
  throw Error(Status::invalid_argument,
              "the communicator '" + name + "' was freed by the program (MPI_Comm_free); devmesh owns the "
              "communicators it returns and frees them itself: do not free them");
}

std::vector<index_t> key_of(const Layout& layout) {
  std::vector<index_t> key;
  for (const Mode& m : coalesce(layout).modes) {
    key.push_back(m.size);
    key.push_back(m.stride);
  }
  return key;
}

}  // namespace

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
  // A communicator the program freed is not freed again; the others' watch
  // callbacks must not take devmesh's own free for the program's.
  const auto free_handed_out = [alive](MPI_Comm& comm, Watch* watch) {
    if (watch) watch->releasing = true;
    if (alive && comm != MPI_COMM_NULL && !(watch && watch->freed_by_program)) MPI_Comm_free(&comm);
  };
  for (auto& [key, e] : cache_) {
    e.upgraded.clear();  // backend communicators go before their MPI group
    if (e.owned) free_handed_out(e.comm, e.watch.get());
  }
  cache_.clear();
  backends_.clear();
  for (auto& [key, c] : carts_) free_handed_out(c.comm, c.watch.get());
  carts_.clear();
  if (alive) {
    if (root_comm_ != MPI_COMM_NULL) MPI_Comm_free(&root_comm_);
    if (root_group != MPI_GROUP_NULL) MPI_Group_free(&root_group);
    if (errhandler_ != MPI_ERRHANDLER_NULL) MPI_Errhandler_free(&errhandler_);
  }
}

void MeshState::inherit_errhandler(MPI_Comm parent) {
  if (options.comm_errors != CommErrors::inherit) return;
  DEVMESH_MPI(MPI_Comm_get_errhandler(parent, &errhandler_));
}

// Creation runs under MPI_ERRORS_RETURN (make_comm, the root communicator),
// so that a failure there is an Error, not an abort. The program's handler
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
std::unique_ptr<MeshState::Watch> MeshState::hand_out(MPI_Comm& comm, const std::string& name) {
  auto watch = std::make_unique<Watch>();
  int rc = MPI_SUCCESS;
  const char* call = "MPI_Comm_set_name";
  try {
    const int key = watch_keyval();
    rc = MPI_Comm_set_name(comm, name.c_str());
    if (rc == MPI_SUCCESS) {
      call = "MPI_Comm_set_attr";
      rc = MPI_Comm_set_attr(comm, key, watch.get());
    }
    if (rc == MPI_SUCCESS && errhandler_ != MPI_ERRHANDLER_NULL) {
      call = "MPI_Comm_set_errhandler";
      rc = MPI_Comm_set_errhandler(comm, errhandler_);
    }
  } catch (...) {
    watch->releasing = true;
    MPI_Comm_free(&comm);
    throw;
  }
  if (rc != MPI_SUCCESS) {
    watch->releasing = true;
    MPI_Comm_free(&comm);
    throw_mpi_error(rc, call);
  }
  return watch;
}

MeshState::Entry* MeshState::find(const Layout& layout) {
  auto it = cache_.find(key_of(layout));
  return it == cache_.end() ? nullptr : &it->second;
}

MeshState::Entry& MeshState::adopt(const Layout& layout, MPI_Comm comm, std::string_view dim) {
  std::string name;
  std::vector<index_t> key;
  try {
    name = comm_name(dim);
    key = key_of(layout);
  } catch (...) {
    MPI_Comm_free(&comm);
    throw;
  }
  std::unique_ptr<Watch> watch = hand_out(comm, name);
  Entry& e = cache_[std::move(key)];
  e.comm = comm;
  e.name = std::move(name);
  e.watch = std::move(watch);
  ++created;
  return e;
}

MeshState::Entry& MeshState::entry(const Layout& layout, std::string_view dim) {
  if (released_) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  if (Entry* e = find(layout)) {
    if (e->watch && e->watch->freed_by_program) freed_by_program(e->name);
    return *e;
  }
  // The caller's group in local-rank order, as root indices.
  const index_t base = group_base(layout, index);
  const index_t n = size(layout);
  std::vector<int> members(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) members[static_cast<std::size_t>(k)] = static_cast<int>(base + offset(layout, k));
  std::string what = "layout " + to_string(coalesce(layout));
  return adopt(layout, make_comm(members, what), dim);
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
  MPI_Comm c = make_comm(all, "root");
  if (const int rc = MPI_Comm_set_name(c, "devmesh:root"); rc != MPI_SUCCESS) {
    MPI_Comm_free(&c);
    throw_mpi_error(rc, "MPI_Comm_set_name");
  }
  root_comm_ = c;
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

void MeshState::adopt_root(MPI_Comm comm) {
  root_comm_ = comm;
  ++created;
  DEVMESH_MPI(MPI_Comm_set_name(root_comm_, "devmesh:root"));
}

void MeshState::insert_program_comm(const Layout& layout, MPI_Comm comm, std::string_view dim) {
  // Dims of one layout (only size-1 dims can share one: the caller alone)
  // share the communicator of the first of them.
  auto [it, fresh] = cache_.try_emplace(key_of(layout));
  if (!fresh) return;
  Entry& e = it->second;
  e.comm = comm;
  e.name = comm_name(dim);
  e.owned = false;
}

void MeshState::add_backend(const BackendSpec& spec, std::unique_ptr<BackendInstance> instance) {
  backends_.emplace(spec.key(), std::move(instance));
}

Communicator& MeshState::upgraded(const Layout& layout, std::string_view dim, const BackendSpec& spec,
                                  bool all_root_members) {
  Entry& e = entry(layout, dim);
  const std::string key = spec.key();
  if (auto it = e.upgraded.find(key); it != e.upgraded.end()) return *it->second;
  auto b = backends_.find(key);
  if (b == backends_.end()) b = backends_.emplace(key, std::make_unique<BackendInstance>(spec)).first;
  devmesh_backend_group_t group{};
  group.size = sizeof group;
  group.group = e.comm;
  group.root = all_root_members ? root_comm() : MPI_COMM_NULL;
  group.all_root_members = all_root_members ? 1 : 0;
  group.color = static_cast<int>(group_base(layout, index));
  group.key = static_cast<int>(local_index(layout, index));
  group.host_local_rank = host_local_rank;
  auto comm = b->second->create(group);
  return *e.upgraded.emplace(key, std::move(comm)).first->second;
}

MPI_Comm MeshState::cart() { return cart(root, {}); }

MPI_Comm MeshState::cart(const View& view, const std::vector<int>& periods) {
  if (released_) throw Error(Status::invalid_argument, "the mesh was released by MPI_Finalize");
  // The key tells the grid apart from any other with the same members:
  // each dim's coalesced modes (a size-1 dim has none), then the periods.
  std::vector<int> per = periods;
  if (per.empty()) per.assign(view.ndim(), 0);
  std::vector<index_t> key;
  Layout flat;
  std::string joined;
  for (const Dim& d : view.dims()) {
    joined += (joined.empty() ? "" : "_") + d.name;
    key.push_back(-1);
    for (index_t k : key_of(d.layout)) key.push_back(k);
    flat.modes.insert(flat.modes.end(), d.layout.modes.begin(), d.layout.modes.end());
  }
  key.push_back(-2);
  for (int p : per) key.push_back(p ? 1 : 0);
  if (auto it = carts_.find(key); it != carts_.end()) {
    if (it->second.watch && it->second.watch->freed_by_program) freed_by_program(it->second.name);
    return it->second.comm;
  }
  const bool plain_root = view.is_root() && std::none_of(per.begin(), per.end(), [](int p) { return p; });
  std::string name = "devmesh:cart";
  if (!plain_root) {
    name += ":";
    for (std::size_t i = 0; i < view.ndim(); ++i) name += (i ? "," : "") + view.dims()[i].name;
    if (name.size() >= MPI_MAX_OBJECT_NAME) name.resize(MPI_MAX_OBJECT_NAME - 1);
  }
  std::vector<int> dims;
  for (const Dim& d : view.dims()) dims.push_back(static_cast<int>(d.size()));
  // Cart rank k must be local rank k of the flattened layout: the root
  // communicator is that when the layout is the identity (the root view in
  // its own order), otherwise the flattened layout's own communicator.
  const Layout whole = coalesce(flat);
  const bool identity = size(flat) == root.root_size() &&
                        (whole.modes.empty() || (whole.modes.size() == 1 && whole.modes[0].stride == 1));
  MPI_Comm over = identity ? root_comm() : entry(flat, joined).comm;
  MPI_Comm c = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Cart_create(over, static_cast<int>(dims.size()), dims.data(), per.data(), 0, &c));
  try {
    return_errors(c);
  } catch (...) {
    MPI_Comm_free(&c);
    throw;
  }
  std::unique_ptr<Watch> watch = hand_out(c, name);
  CartEntry& e = carts_[std::move(key)];
  e.comm = c;
  e.name = std::move(name);
  e.watch = std::move(watch);
  ++created;
  return c;
}

}  // namespace detail

using detail::BackendSpec;
using detail::MeshState;

namespace {

std::vector<index_t> widen(const std::vector<int>& v) { return {v.begin(), v.end()}; }

std::vector<int> narrow(const std::vector<index_t>& v) {
  std::vector<int> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](index_t x) { return static_cast<int>(x); });
  return out;
}

// What creation checks on each rank before the agreement.
struct Validated {
  int world = 0;
  int me = 0;
  std::optional<View> view;
  std::vector<std::pair<BackendSpec, std::unique_ptr<detail::BackendInstance>>> backends;
};

// The arguments every rank must pass alike, for the agreement. `c_status`
// is what the C API found wrong locally (success from C++).
std::vector<detail::Field> creation_fields(const std::vector<int>& shape, const std::vector<std::string>& names,
                                           const std::vector<int>* ranks, const MeshOptions& options,
                                           const Validated& v, Status c_status) {
  detail::Hash c, sh, nm, rk, ha, be, op;
  c.add(static_cast<std::int64_t>(c_status));
  for (int s : shape) sh.add(s);
  for (const std::string& n : names) nm.add(n);
  rk.add(ranks ? static_cast<std::int64_t>(ranks->size()) : -1);
  if (ranks)
    for (int r : *ranks) rk.add(r);
  ha.add(options.host_aware ? 1 : 0);
  be.add(options.backend);
  for (const auto& [dim, backend] : options.dim_backends) {
    be.add(dim);
    be.add(backend);
  }
  // Every backend named, with its options as each backend parsed them,
  // without those it takes per rank (NCCL's device); where a backend did
  // not load, its options as given (see agreed_options).
  for (const BackendSpec& spec : detail::backends_named(options)) {
    const devmesh_backend_v1_t* table = nullptr;
    for (const auto& [loaded, instance] : v.backends)
      if (instance && loaded.key() == spec.key()) table = &instance->table();
    op.add(detail::agreed_options(spec, table));
  }
  return {{"arguments (as checked by the C API)", c.h}, {"shapes", sh.h},   {"dim names", nm.h},
          {"rank lists", rk.h},                          {"host_aware settings", ha.h},
          {"backends", be.h},                            {"backend options", op.h}};
}

// What does not depend on the arguments: MPI usable, the parent valid.
// Under the Sessions model (MPI 4, no MPI_Init) the parent is a
// communicator made from a session's group: see check_parent_usable.
Validated validate(MPI_Comm parent) {
  detail::check_parent_usable(parent);
  Validated v;
  DEVMESH_MPI(MPI_Comm_size(parent, &v.world));
  DEVMESH_MPI(MPI_Comm_rank(parent, &v.me));
  return v;
}

// Opens (and so checks) every backend the options name, into v.backends.
void load_backends(Validated& v, const MeshOptions& options) {
  if (options.comm_errors != CommErrors::inherit && options.comm_errors != CommErrors::return_codes)
    throw Error(Status::invalid_argument, "comm_errors " + std::to_string(static_cast<int>(options.comm_errors)) +
                                              " is not a CommErrors");
  for (BackendSpec& b : detail::backends_named(options)) {
    // The built-in MPI backend without options has nothing to check: its
    // instance is made when a dim first needs it (upgraded()).
    if (b.name == "mpi" && b.options.empty()) continue;
    auto instance = std::make_unique<detail::BackendInstance>(b);
    v.backends.emplace_back(std::move(b), std::move(instance));
  }
}

// Checks the arguments on this rank: the view, and every backend named,
// loaded with its options. Fills v; returns the status and message.
Status check_locally(Validated& v, const std::vector<int>& shape, const std::vector<std::string>& names,
                     const std::vector<int>* ranks, const MeshOptions& options, std::string& message) {
  try {
    if (ranks && ranks->empty()) throw Error(Status::invalid_argument, "the rank list is empty");
    if (ranks && options.host_aware)
      throw Error(Status::invalid_argument,
                  "host_aware orders all of the parent's ranks by host; it does not take a rank list");
    load_backends(v, options);
    RootSpec spec{widen(shape), names, v.world, ranks ? widen(*ranks) : std::vector<index_t>{}};
    v.view = View::create(std::move(spec));
    return Status::success;
  } catch (const Error& e) {
    message = e.what();
    return e.status();
  }
}

// Builds the root's state once every rank agreed. Collective over parent
// (host discovery for plugin backends unless `hosts` holds it already;
// MPI 3's root communicator).
Mesh build(MPI_Comm parent, const std::vector<int>* ranks, const MeshOptions& options, Validated& v,
           std::uint64_t seq, std::uint64_t digest, const HostInfo* hosts,
           Mesh (*wrap)(View, std::shared_ptr<MeshState>)) {
  // Plugin backends pick a device by the rank's position on its host
  // (DEVMESH_HOST_ID honoured, see hosts.hpp). Collective over parent.
  const bool plugins = std::any_of(v.backends.begin(), v.backends.end(),
                                   [](const auto& b) { return b.first.name != "mpi"; });
  const int host_rank = !plugins ? 0 : hosts ? hosts->local_rank : discover_hosts(parent).local_rank;
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
  const std::optional<index_t> index = v.view->root_index(v.me);
  if (!index) {
    MPI_Group_free(&group);
    return Mesh();
  }
  std::shared_ptr<MeshState> state;
  try {
    detail::watch_finalize();
    state = std::make_shared<MeshState>(*v.view, group, static_cast<int>(*index),
                                        std::to_string(seq) + "." + std::to_string(digest), options);
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
  state->parent_rank = v.me;
  state->host_local_rank = host_rank;
  state->inherit_errhandler(parent);
  for (auto& [spec, instance] : v.backends) state->add_backend(spec, std::move(instance));
  return wrap(*v.view, std::move(state));
}

// Roots made by this process so far: the agreement takes the largest count
// over the parent, which keeps the roots' creation tags apart.
std::atomic<std::uint64_t> roots_made{0};

std::uint64_t fields_digest(const std::vector<detail::Field>& fields) {
  detail::Hash h;
  for (const detail::Field& f : fields) h.add(static_cast<std::int64_t>(f.digest));
  return h.h;
}

Mesh create_root(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names,
                 const std::vector<int>* ranks, const MeshOptions& options,
                 Mesh (*wrap)(View, std::shared_ptr<MeshState>)) {
  Validated v = validate(parent);
  std::string message;
  const Status local = check_locally(v, shape, names, ranks, options, message);
  const auto fields = creation_fields(shape, names, ranks, options, v, Status::success);
  // Every rank makes this one collective call whatever its arguments, so
  // that ranks that disagree get an error instead of a hang. It is the only
  // communication of creation for MPI-only meshes: no communicator is made
  // until one is asked for (with MPI 4; see make_comm).
  const std::uint64_t seq = detail::agree(parent, "mesh creation", fields, local, message, roots_made.load());
  roots_made = seq + 1;
  if (!options.host_aware) return build(parent, ranks, options, v, seq, fields_digest(fields), nullptr, wrap);
  // Host discovery comes after the agreement, so that every rank makes it
  // only once all agreed to. Its errors (uneven hosts, DEVMESH_HOST_ID on
  // some ranks only) come from tables every rank holds alike, so they are
  // the same on every rank.
  const std::vector<int> host_of = detail::host_table(parent);
  const HostInfo info = detail::host_info_of(host_of, v.me);
  const std::vector<int> order = detail::host_major(host_of, info, "a host-aware mesh");
  v.view = View::create(RootSpec{v.view->root_shape(), std::move(names), v.world, widen(order)});
  Mesh mesh = build(parent, &order, options, v, seq, fields_digest(fields), &info, wrap);
  detail::record_host_major(mesh, info);
  return mesh;
}

}  // namespace

namespace detail {

void join_failed_creation(MPI_Comm parent, const Error& local) {
  Validated v = validate(parent);
  const auto fields = creation_fields({}, {}, nullptr, {}, v, local.status());
  detail::agree(parent, "mesh creation", fields, local.status(), local.what(), roots_made.load());
  throw local;  // not reached: the agreement fails on every rank
}

}  // namespace detail

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

Mesh Mesh::concatenate(const std::vector<Mesh>& meshes) {
  std::vector<View> views;
  views.reserve(meshes.size());
  for (const Mesh& m : meshes) views.push_back(m.view());
  // Equal views of two roots built alike are still two roots: compare the
  // runtime states, which the views' root ids mirror one to one.
  View out = View::concatenate(views);
  return Mesh(std::move(out), meshes.front().state_);
}

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
Groups Mesh::all_groups_with_comm(std::string_view dim) const {
  const std::size_t i = dim_of(dim);
  const Dim& d = view().dims()[i];
  Groups out;
  out.ranks = all_groups(dim);
  // Groups are in order of their smallest root index, which is the base of
  // each (local rank 0).
  const int first = static_cast<int>(view().parent_rank(group_base(d.layout, state_->index)));
  while (out.own < out.ranks.size() && out.ranks[out.own][0] != first) ++out.own;
  out.comm = comm(dim);
  return out;
}
int Mesh::parent_rank() const { return state().parent_rank; }
bool Mesh::same_root(const Mesh& other) const noexcept { return state_ && state_ == other.state_; }

MPI_Comm Mesh::comm(std::string_view dim) const {
  const Dim& d = view().dims()[dim_of(dim)];
  std::lock_guard lock(state_->mutex);
  return state_->entry(d.layout, d.name).comm;
}

Communicator& Mesh::communicator(std::string_view dim) const {
  const Dim& d = view().dims()[dim_of(dim)];
  std::lock_guard lock(state_->mutex);
  return state_->upgraded(d.layout, d.name, detail::backend_of(state_->options, d.name));
}

std::string_view Mesh::backend(std::string_view dim) const {
  const Dim& d = view().dims()[dim_of(dim)];
  return detail::load_backend(detail::backend_of(state_->options, d.name).name).name;
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
  detail::Hash p, views;
  p.add(static_cast<std::int64_t>(path));
  for (const Dim& d : v.dims()) {
    views.add(d.name);
    for (index_t k : detail::key_of(d.layout)) views.add(k);
  }
  const bool had_root = s.has_root_comm();
  try {
    const Status local = known_path ? Status::success : Status::invalid_argument;
    detail::agree(s.root_comm(), "create_comms", {{"creation paths", p.h}, {"views", views.h}}, local,
                  "unknown creation path " + std::to_string(static_cast<int>(path)));
  } catch (const Error&) {
    if (!had_root) s.drop_root_comm();  // a failed call leaves nothing made
    throw;
  }
  for (const Dim& d : v.dims()) {
    if (path == CommPath::automatic || path == CommPath::create_group) {
      s.entry(d.layout, d.name);
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
        s.entry(d.layout, d.name);
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
    s.adopt(d.layout, c, d.name);
  }
  for (const Dim& d : v.dims()) s.upgraded(d.layout, d.name, detail::backend_of(s.options, d.name), true);
}

MPI_Comm Mesh::cart_comm(std::vector<bool> periodic) const {
  const View& v = view();
  if (!periodic.empty() && periodic.size() != v.ndim())
    throw Error(Status::invalid_argument, "cart_comm got " + std::to_string(periodic.size()) +
                                              " periodic flags for a view of " + std::to_string(v.ndim()) +
                                              " dims (give one periodic flag per dim, or none)");
  std::vector<int> periods(periodic.begin(), periodic.end());
  std::lock_guard lock(state_->mutex);
  return state_->cart(v, periods);
}

Neighbors Mesh::neighbors(std::string_view dim, bool periodic, int distance) const {
  const std::size_t i = dim_of(dim);
  const View& v = view();
  const index_t x = state_->index;
  const auto at = [&](index_t d, int& local, int& parent) {
    if (const std::optional<index_t> y = v.shift(i, x, d, periodic)) {
      local = static_cast<int>(v.local_rank(i, *y));
      parent = static_cast<int>(v.parent_rank(*y));
    }
  };
  Neighbors out;  // MPI_PROC_NULL unless found
  at(-static_cast<index_t>(distance), out.prev, out.parent_prev);
  at(static_cast<index_t>(distance), out.next, out.parent_next);
  return out;
}

int Mesh::comm_count() const {
  state();
  std::lock_guard lock(state_->mutex);
  return state_->created;
}

// --- adopted communicators (Mesh::adopt) ------------------------------------

namespace {

std::string list(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// What this rank brings to an adoption: whether it is a member (every comm
// non-null), and per dim the comm's size and its rank there.
struct Adopting {
  int member = 0;
  std::vector<int> sizes, coords;
  // Per dim, the comm's members as parent ranks in comm-rank order
  // (MPI_UNDEFINED for a rank outside parent).
  std::vector<std::vector<int>> groups;
};

void read_comms(MPI_Comm parent, const std::vector<MPI_Comm>& comms, const std::vector<std::string>& names,
                Adopting& a) {
  if (comms.empty()) throw Error(Status::invalid_argument, "no communicators: a mesh needs at least one dim");
  if (comms.size() != names.size())
    throw Error(Status::invalid_argument, std::to_string(comms.size()) + " communicators but " +
                                              std::to_string(names.size()) + " dim names");
  const auto nulls = std::count(comms.begin(), comms.end(), MPI_COMM_NULL);
  if (nulls == static_cast<long>(comms.size())) return;  // not a member
  if (nulls != 0) {
    const auto at = std::find(comms.begin(), comms.end(), MPI_COMM_NULL) - comms.begin();
    throw Error(Status::invalid_argument, "the communicator of dim '" + names[static_cast<std::size_t>(at)] +
                                              "' is MPI_COMM_NULL but others are not: a member passes one "
                                              "communicator per dim, a non-member MPI_COMM_NULL for all");
  }
  MPI_Group parent_group = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Comm_group(parent, &parent_group));
  try {
    for (MPI_Comm c : comms) {
      int n = 0, r = 0;
      DEVMESH_MPI(MPI_Comm_size(c, &n));
      DEVMESH_MPI(MPI_Comm_rank(c, &r));
      MPI_Group g = MPI_GROUP_NULL;
      DEVMESH_MPI(MPI_Comm_group(c, &g));
      std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k) in[static_cast<std::size_t>(k)] = k;
      const int rc = MPI_Group_translate_ranks(g, n, in.data(), parent_group, out.data());
      MPI_Group_free(&g);
      detail::check_mpi(rc, "MPI_Group_translate_ranks");
      a.sizes.push_back(n);
      a.coords.push_back(r);
      a.groups.push_back(std::move(out));
    }
  } catch (...) {
    MPI_Group_free(&parent_group);
    throw;
  }
  MPI_Group_free(&parent_group);
  a.member = 1;
}

// From everyone's (member, sizes, coords), the same on every rank: the
// shape and the rank list (root index x, row-major in the coordinates ->
// parent rank), or the error that every rank then reports.
std::pair<std::vector<int>, std::vector<int>> layout_of(const std::vector<int>& table, int world, int n) {
  const std::size_t rec = 1 + 2 * static_cast<std::size_t>(n);
  std::vector<int> shape;
  int first = -1, w = 0;
  for (int r = 0; r < world; ++r) {
    const int* t = &table[r * rec];
    if (!t[0]) continue;
    ++w;
    if (first < 0) {
      first = r;
      shape.assign(t + 1, t + 1 + n);
      continue;
    }
    for (int d = 0; d < n; ++d)
      if (t[1 + d] != shape[static_cast<std::size_t>(d)])
        throw Error(Status::invalid_argument,
                    "the communicators of dim " + std::to_string(d) + " have different sizes: " +
                        std::to_string(shape[static_cast<std::size_t>(d)]) + " at parent rank " +
                        std::to_string(first) + ", " + std::to_string(t[1 + d]) + " at parent rank " +
                        std::to_string(r) + "; the communicators of one dim must all be alike in size");
  }
  if (first < 0) throw Error(Status::invalid_argument, "no rank of the parent passed communicators");
  long product = 1;
  for (int s : shape) product *= s;
  if (product != w)
    throw Error(Status::invalid_argument, "the communicators' sizes " + list(shape) + " multiply to " +
                                              std::to_string(product) + " but " + std::to_string(w) +
                                              " ranks passed communicators");
  std::vector<int> ranks(static_cast<std::size_t>(w), -1);
  for (int r = 0; r < world; ++r) {
    const int* t = &table[r * rec];
    if (!t[0]) continue;
    long x = 0;
    for (int d = 0; d < n; ++d) x = x * shape[static_cast<std::size_t>(d)] + t[1 + n + d];
    int& at = ranks[static_cast<std::size_t>(x)];
    if (at >= 0)
      throw Error(Status::invalid_argument,
                  "parent ranks " + std::to_string(at) + " and " + std::to_string(r) +
                      " have the same coordinate (their ranks in the communicators): the communicators do "
                      "not form a mesh");
    at = r;
  }
  return {shape, ranks};
}

Mesh adopt_mesh(MPI_Comm parent, const std::vector<MPI_Comm>& comms, const std::vector<std::string>& names,
                const MeshOptions& options, const Error* c_local, Mesh (*wrap)(View, std::shared_ptr<MeshState>)) {
  Validated v = validate(parent);
  Adopting a;
  std::string message;
  Status local = Status::success;
  try {
    if (c_local) throw *c_local;
    if (options.host_aware)
      throw Error(Status::invalid_argument, "host_aware does not apply to adopted communicators: their ranks "
                                            "give the order");
    load_backends(v, options);
    read_comms(parent, comms, names, a);
  } catch (const Error& e) {
    local = e.status();
    message = e.what();
  }
  detail::Hash count;
  count.add(static_cast<std::int64_t>(c_local ? -1 : static_cast<std::int64_t>(comms.size())));
  auto fields = creation_fields({}, c_local ? std::vector<std::string>{} : names, nullptr, options, v,
                                c_local ? c_local->status() : Status::success);
  fields.push_back({"numbers of communicators", count.h});
  const std::uint64_t seq = detail::agree(parent, "mesh adoption", fields, local, message, roots_made.load());
  roots_made = seq + 1;
  // Everyone agreed on the number of dims: one allgather of what each rank
  // holds, from which every rank derives the same layout or the same error.
  const int n = static_cast<int>(comms.size());
  std::vector<int> mine{a.member};
  for (int d = 0; d < n; ++d) mine.push_back(a.member ? a.sizes[static_cast<std::size_t>(d)] : 0);
  for (int d = 0; d < n; ++d) mine.push_back(a.member ? a.coords[static_cast<std::size_t>(d)] : 0);
  std::vector<int> table(mine.size() * static_cast<std::size_t>(v.world));
  DEVMESH_MPI(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT, table.data(),
                            static_cast<int>(mine.size()), MPI_INT, parent));
  std::vector<int> ranks;
  try {
    auto [shape, order] = layout_of(table, v.world, n);
    ranks = order;
    v.view = View::create(RootSpec{widen(shape), names, v.world, widen(ranks)});
    // Each member's communicators must be exactly the groups of the layout.
    if (a.member) {
      const std::vector<int> me = narrow(v.view->coordinate(*v.view->root_index(v.me)));
      for (int d = 0; d < n; ++d) {
        const std::vector<int> want = narrow(v.view->group(static_cast<std::size_t>(d), *v.view->root_index(v.me)));
        const std::vector<int>& got = a.groups[static_cast<std::size_t>(d)];
        if (got != want)
          throw Error(Status::invalid_argument,
                      "the communicator of dim '" + names[static_cast<std::size_t>(d)] + "' at parent rank " +
                          std::to_string(v.me) + " holds parent ranks " + list(got) + " but the mesh its " +
                          "coordinates give needs " + list(want) + ": the communicators do not form a mesh");
      }
    }
    local = Status::success;
  } catch (const Error& e) {
    local = e.status();
    message = e.what();
  }
  detail::Hash digest;
  for (int x : table) digest.add(x);
  detail::agree(parent, "mesh adoption", {}, local, message);
  Mesh mesh = build(parent, &ranks, options, v, seq, digest.h, nullptr, wrap);
  if (mesh.is_member()) {
    const View& root = mesh.view();
    MeshState& state = *detail::MeshAccess::state(mesh);
    std::lock_guard lock(state.mutex);
    for (std::size_t d = 0; d < root.ndim(); ++d)
      state.insert_program_comm(root.dims()[d].layout, comms[d], root.dims()[d].name);
  }
  return mesh;
}

}  // namespace

namespace detail {

Mesh adopt_comms(MPI_Comm parent, const std::vector<MPI_Comm>& comms, const std::vector<std::string>& names,
                 const MeshOptions& options, const Error* c_local) {
  return adopt_mesh(parent, comms, names, options, c_local, detail::MeshAccess::make);
}

}  // namespace detail

Mesh Mesh::adopt(MPI_Comm parent, std::vector<MPI_Comm> comms, std::vector<std::string> names,
                 const MeshOptions& options) {
  return detail::adopt_comms(parent, comms, names, options, nullptr);
}

Mesh Mesh::adopt(MPI_Comm comm, std::string_view name, const MeshOptions& options) {
  return detail::adopt_comms(comm, {comm}, {std::string(name)}, options, nullptr);
}

// --- MPI Sessions (Mesh::create_from_group) ----------------------------------

namespace detail {

Mesh create_from_group(MPI_Group group, std::string_view tag, std::vector<int> shape, std::vector<std::string> names,
                       const MeshOptions& options, const Error* c_local) {
#if MPI_VERSION < 4
  (void)group, (void)tag, (void)shape, (void)names, (void)options, (void)c_local;
  throw Error(Status::unsupported, "a mesh from an MPI_Group needs MPI 4 (MPI_Comm_create_from_group); this MPI is " +
                                       std::to_string(MPI_VERSION) + "." + std::to_string(MPI_SUBVERSION));
#else
  if (group == MPI_GROUP_NULL) throw Error(Status::invalid_argument, "the group is MPI_GROUP_NULL");
  int me = MPI_UNDEFINED;
  DEVMESH_MPI(MPI_Group_rank(group, &me));
  if (me == MPI_UNDEFINED)
    throw Error(Status::invalid_argument, "the caller is not a member of the group (only members call)");
  const std::string t(tag);
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_create_from_group(group, t.c_str(), MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm),
            "MPI_Comm_create_from_group");
  Mesh mesh;
  try {
    if (c_local) join_failed_creation(comm, *c_local);
    mesh = create_root(comm, std::move(shape), std::move(names), nullptr, options, MeshAccess::make);
  } catch (...) {
    MPI_Comm_free(&comm);
    throw;
  }
  if (options.host_aware) {
    // The root is in host order, not in the group's: the communicator is
    // not the root communicator, and not needed any more (MPI 4 makes every
    // communicator from groups).
    MPI_Comm_free(&comm);
  } else {
    MeshState& state = *MeshAccess::state(mesh);
    std::lock_guard lock(state.mutex);
    state.adopt_root(comm);
  }
  return mesh;
#endif
}

}  // namespace detail

Mesh Mesh::create_from_group(MPI_Group group, std::string_view tag, std::vector<int> shape,
                             std::vector<std::string> names, const MeshOptions& options) {
  return detail::create_from_group(group, tag, std::move(shape), std::move(names), options, nullptr);
}

}  // namespace devmesh
