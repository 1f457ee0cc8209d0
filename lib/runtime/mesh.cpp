// devmesh::Mesh: the handle (a view plus its root's state) and the C++
// front ends of creation, which translate their arguments into a
// CreationRequest for the one driver (creation.cpp).
#include <algorithm>

#include "creation.hpp"
#include "mesh_state.hpp"

namespace devmesh {
namespace {

std::vector<int> narrow(const std::vector<index_t>& v) {
  std::vector<int> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](index_t x) { return static_cast<int>(x); });
  return out;
}

detail::CreationRequest request(detail::CreationKind kind, MPI_Comm parent, std::vector<int> shape,
                                std::vector<std::string> names, const MeshOptions& options) {
  detail::CreationRequest r;
  r.kind = kind;
  r.parent = parent;
  r.shape = std::move(shape);
  r.names = std::move(names);
  r.options = options;
  return r;
}

}  // namespace

// --- creation ----------------------------------------------------------------

Mesh Mesh::create(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names, const MeshOptions& options) {
  return detail::create(request(detail::CreationKind::shape, parent, std::move(shape), std::move(names), options));
}

Mesh Mesh::create(MPI_Comm parent, std::vector<int> shape, std::vector<std::string> names, std::vector<int> ranks,
                  const MeshOptions& options) {
  auto r = request(detail::CreationKind::ranks, parent, std::move(shape), std::move(names), options);
  r.ranks = std::move(ranks);
  return detail::create(std::move(r));
}

Mesh Mesh::adopt(MPI_Comm parent, std::vector<MPI_Comm> comms, std::vector<std::string> names,
                 const MeshOptions& options) {
  auto r = request(detail::CreationKind::comms, parent, {}, std::move(names), options);
  r.comms = std::move(comms);
  return detail::create(std::move(r));
}

Mesh Mesh::adopt(MPI_Comm comm, std::string_view name, const MeshOptions& options) {
  return adopt(comm, {comm}, {std::string(name)}, options);
}

Mesh Mesh::create_from_group(MPI_Group group, std::string_view tag, std::vector<int> shape,
                             std::vector<std::string> names, const MeshOptions& options) {
  auto r = request(detail::CreationKind::group, MPI_COMM_NULL, std::move(shape), std::move(names), options);
  r.group = group;
  r.tag = tag;
  return detail::create(std::move(r));
}

// --- views -------------------------------------------------------------------

Mesh::Mesh(View view, std::shared_ptr<detail::MeshState> state) : view_(std::move(view)), state_(std::move(state)) {
  if (state_) resolved_.reset(new std::atomic<const detail::Resolved*>[view_->ndim()]());
}

const detail::MeshState& Mesh::state() const {
  if (!state_) throw Error(Status::not_member, "the caller is not a member of this mesh (null mesh)");
  return *state_;
}

const View& Mesh::view() const {
  state();
  return *view_;
}

std::size_t Mesh::dim_of(std::string_view dim) const { return view().dim_or_only(dim); }

Mesh Mesh::slice(const std::vector<std::string>& dims) const { return Mesh(view().slice(dims), state_); }

Mesh Mesh::operator[](std::initializer_list<std::string_view> dims) const {
  return slice(std::vector<std::string>(dims.begin(), dims.end()));
}

Mesh Mesh::flatten(std::optional<std::string> name) const { return Mesh(view().flatten(std::move(name)), state_); }

Mesh Mesh::unflatten(std::string_view dim, const std::vector<int>& sizes, const std::vector<std::string>& names) const {
  const std::vector<index_t> wide(sizes.begin(), sizes.end());
  return Mesh(view().unflatten(dim, wide, names), state_);
}

namespace {

detail::BackendSpec spec_of(const DimBackend& b) {
  if (b.name.empty() && !b.options.empty())
    throw Error(Status::invalid_argument,
                "backend options without a backend name (an empty name is the "
                "mesh's default backend, with the mesh's options)");
  return {b.name, b.options};
}

}  // namespace

Mesh Mesh::flatten(std::optional<std::string> name, const DimBackend& backend) const {
  const detail::BackendSpec spec = spec_of(backend);
  state();
  state_->open_backends({spec});
  Mesh out = flatten(std::move(name));
  state_->choose_backends(out.view(), {{out.view().dims()[0], spec}});
  return out;
}

Mesh Mesh::unflatten(std::string_view dim, const std::vector<int>& sizes, const std::vector<std::string>& names,
                     const std::vector<DimBackend>& backends) const {
  if (backends.size() != names.size())
    throw Error(Status::invalid_argument, "unflatten got " + std::to_string(backends.size()) + " backends for " +
                                              std::to_string(names.size()) + " new dims (give one per new dim)");
  std::vector<detail::BackendSpec> specs;
  for (const DimBackend& b : backends) specs.push_back(spec_of(b));
  state();
  state_->open_backends(specs);
  Mesh out = unflatten(dim, sizes, names);
  std::vector<std::pair<Dim, detail::BackendSpec>> chosen;
  for (std::size_t i = 0; i < names.size(); ++i) chosen.emplace_back(out.view().dim(names[i]), specs[i]);
  state_->choose_backends(out.view(), chosen);
  return out;
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

// --- queries -------------------------------------------------------------------

int Mesh::ndim() const { return static_cast<int>(view().ndim()); }
std::vector<std::string> Mesh::names() const { return view().names(); }
std::vector<int> Mesh::shape() const { return narrow(view().shape()); }
int Mesh::size() const { return static_cast<int>(view().size()); }
int Mesh::size(std::string_view dim) const { return static_cast<int>(view().dims()[dim_of(dim)].size()); }
std::vector<int> Mesh::coordinate() const { return narrow(view().coordinate(state().index())); }
int Mesh::local_rank(std::string_view dim) const {
  return static_cast<int>(view().local_rank(dim_of(dim), state().index()));
}
std::vector<int> Mesh::group(std::string_view dim) const { return narrow(view().group(dim_of(dim), state().index())); }
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
  const int first = static_cast<int>(view().parent_rank(group_base(d.layout, state().index())));
  while (out.own < out.ranks.size() && out.ranks[out.own][0] != first) ++out.own;
  out.comm = comm(dim);
  return out;
}
int Mesh::parent_rank() const { return state().parent_rank(); }
bool Mesh::same_root(const Mesh& other) const noexcept { return state_ && state_ == other.state_; }

Neighbors Mesh::neighbors(std::string_view dim, bool periodic, int distance) const {
  const std::size_t i = dim_of(dim);
  const View& v = view();
  const index_t x = state().index();
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

// --- communicators ---------------------------------------------------------------

MPI_Comm Mesh::comm(std::string_view dim) const {
  const Dim& d = view().dims()[dim_of(dim)];
  return state_->comm(d.layout, d.name);
}

// The answer recorded for the dim, while current; else the state's, recorded.
Communicator& Mesh::communicator(std::string_view dim) const {
  const std::size_t i = dim_of(dim);
  std::atomic<const detail::Resolved*>& slot = resolved_[i];
  if (const detail::Resolved* r = slot.load(std::memory_order_acquire); r && state_->current(*r)) return *r->comm;
  const detail::Resolved& r = state_->communicator(view_->dims()[i]);
  slot.store(&r, std::memory_order_release);
  return *r.comm;
}

std::string_view Mesh::backend(std::string_view dim) const {
  const Dim& d = view().dims()[dim_of(dim)];
  return detail::load_backend(state_->backend_of(d).name).name;
}

void Mesh::create_comms(CommPath path) const { state_->create_comms(view(), path); }

MPI_Comm Mesh::cart_comm(std::vector<bool> periodic) const {
  const View& v = view();
  if (!periodic.empty() && periodic.size() != v.ndim())
    throw Error(Status::invalid_argument, "cart_comm got " + std::to_string(periodic.size()) +
                                              " periodic flags for a view of " + std::to_string(v.ndim()) +
                                              " dims (give one periodic flag per dim, or none)");
  return state_->cart(v, std::vector<int>(periodic.begin(), periodic.end()));
}

// --- failures ----------------------------------------------------------------------

namespace {

// The root dims whose flatten, in this order, gives `layout` (compared
// coalesced), or none: a registered flattened name as the root dims it
// flattens, so that a shrink can make it again on the new root.
std::vector<std::string> flattened_dims(const View& root, const Layout& layout) {
  const Layout want = coalesce(layout);
  std::vector<std::string> order;
  std::vector<bool> used(root.ndim(), false);
  const auto search = [&](auto&& self, Layout sofar) -> bool {
    if (!order.empty() && coalesce(sofar) == want) return true;
    for (std::size_t i = 0; i < root.ndim(); ++i) {
      if (used[i]) continue;
      used[i] = true;
      order.push_back(root.dims()[i].name);
      Layout next = sofar;
      const Layout& l = root.dims()[i].layout;
      next.modes.insert(next.modes.end(), l.modes.begin(), l.modes.end());
      if (self(self, next)) return true;
      order.pop_back();
      used[i] = false;
    }
    return false;
  };
  if (root.ndim() > 8 || !search(search, Layout{})) return {};
  return order;
}

}  // namespace

void Mesh::revoke() const {
  state();
  state_->revoke();
}

bool Mesh::is_revoked() const {
  state();
  return state_->is_revoked();
}

std::vector<int> Mesh::failed_ranks() const {
  state();
  return narrow(state_->failed_ranks());
}

bool Mesh::agree(bool flag) const {
  state();
  return state_->agree(flag);
}

Mesh Mesh::shrink(std::optional<std::string_view> dim) const {
  const View root = view().root();
  std::vector<index_t> failed;
  MPI_Comm survivors = state_->shrink_root(failed);
  // A new root over the survivors' communicator, by the one creation
  // driver, which owns that communicator from here on (it becomes the new
  // root's where every survivor is kept); what the plan finds wrong (no
  // slice left) is the same on every survivor (the failed set is agreed),
  // and fails the creation everywhere.
  detail::CreationRequest r = request(detail::CreationKind::ranks, survivors, {1}, {"survivors"}, state_->options());
  r.owns_parent = true;
  r.fresh_parent = true;
  // The survivors' order is the old root's (host-major where it was).
  detail::keep_root_order(r.options);
  r.mode = &detail::ulfm_survivors_mode();
  r.ranks = {0};
  std::vector<index_t> kept;
  try {
    Shrunk plan = devmesh::shrink(root, failed, dim);
    r.shape = narrow(plan.shape);
    r.names = std::move(plan.names);
    // The survivors' communicator keeps root order: old root index x is
    // its rank x - (failed indices below x).
    r.ranks.clear();
    for (index_t x : plan.kept)
      r.ranks.push_back(static_cast<int>(x - (std::lower_bound(failed.begin(), failed.end(), x) - failed.begin())));
    kept = std::move(plan.kept);
  } catch (const Error& e) {
    r.error = e;
  }
  Mesh out = detail::create(std::move(r));
  if (!out) return out;
  detail::MeshAccess::state(out)->take_shrink(std::move(kept), root.root_size());
  // Flattened names registered on the old root are registered on the new
  // one, with their backends, where the new root's dims still flatten
  // into them (docs/SEMANTICS.md "Shrink"); not collective.
  for (const Dim& registered : root.registered()) {
    const std::vector<std::string> dims = flattened_dims(root, registered.layout);
    if (dims.empty()) continue;
    const detail::BackendSpec spec = state_->backend_of(registered);
    try {
      out.slice(dims).flatten(registered.name, DimBackend{spec.name, spec.options});
    } catch (const Error&) {
      // The layout does not fit the new root (a dim shrank to size 1).
    }
  }
  return out;
}

int Mesh::root_index() const { return state().index(); }

int Mesh::shrunk_index(int old_index) const { return state().shrunk_index(old_index); }

int Mesh::comm_count() const {
  state();
  return state_->comm_count();
}

}  // namespace devmesh
