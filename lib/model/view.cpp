#include "devmesh/view.hpp"

#include <algorithm>
#include <mutex>
#include <sstream>

#include "names.hpp"

namespace devmesh {
namespace detail {

// What all views of one root mesh share. Immutable after creation except
// the registry of flattened names, which a mutex guards.
struct Root {
  std::vector<index_t> shape;
  std::vector<std::string> names;
  // The root view's dims, made on first use: creation's views hold their
  // own, and most roots are never asked.
  const std::vector<Dim>& dims() const;
  index_t size = 1;                                  // W
  index_t world = 0;                                 // parent size
  std::vector<index_t> ranks;                        // empty = identity
  std::vector<std::pair<index_t, index_t>> by_rank;  // (parent rank, root index), sorted
  mutable std::mutex registry_mutex;
  std::vector<Dim> registry;  // flattened names

 private:
  mutable std::once_flag dims_once_;
  mutable std::vector<Dim> dims_;
};

}  // namespace detail

namespace {

[[noreturn]] void fail(Status s, const std::string& message) { throw Error(s, message); }

const Dim* find(const std::vector<Dim>& dims, std::string_view name) noexcept {
  for (const Dim& d : dims)
    if (d.name == name) return &d;
  return nullptr;
}

// The root dims of a row-major layout, one per name.
std::vector<Dim> root_dims(const Layout& row_major, const std::vector<std::string>& names) {
  std::vector<Dim> dims;
  dims.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) dims.push_back({names[i], Layout{{row_major.modes[i]}}});
  return dims;
}

using detail::check_name;
using detail::join;
using detail::quoted;

}  // namespace

namespace detail {

const std::vector<Dim>& Root::dims() const {
  std::call_once(dims_once_, [this] { dims_ = root_dims(row_major(shape), names); });
  return dims_;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string join(const std::vector<std::string>& names, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i) out += sep;
    out += names[i];
  }
  return out;
}

void check_name(std::string_view name, std::string_view what) {
  if (name.empty()) fail(Status::invalid_argument, std::string(what) + " is empty");
  if (name.size() > max_name_length)
    fail(Status::invalid_argument, std::string(what) + " '" + std::string(name.substr(0, 32)) + "...' is longer than " +
                                       std::to_string(max_name_length) + " bytes");
}

}  // namespace detail

View View::create(RootSpec spec) {
  const std::size_t nd = spec.shape.size();
  if (nd < 1) fail(Status::invalid_argument, "a mesh needs at least one dim (ndim is 0)");
  if (spec.names.size() != nd)
    fail(Status::invalid_argument,
         "shape has " + std::to_string(nd) + " dims but " + std::to_string(spec.names.size()) + " names were given");
  for (std::size_t i = 0; i < nd; ++i) {
    if (spec.names[i].empty() || spec.names[i].size() > max_name_length)
      check_name(spec.names[i], "name of dim " + std::to_string(i));
    if (spec.shape[i] < 0)
      fail(Status::invalid_argument,
           "size " + std::to_string(spec.shape[i]) + " of dim " + quoted(spec.names[i]) + " is negative");
    for (std::size_t j = 0; j < i; ++j)
      if (spec.names[j] == spec.names[i])
        fail(Status::duplicate_name, "dim name " + quoted(spec.names[i]) + " is given twice");
  }
  if (spec.world < 0) fail(Status::invalid_argument, "world size " + std::to_string(spec.world) + " is negative");
  const bool listed = !spec.ranks.empty();
  const index_t target = listed ? static_cast<index_t>(spec.ranks.size()) : spec.world;
  if (std::find(spec.shape.begin(), spec.shape.end(), 0) != spec.shape.end()) {
    if (target == 0) fail(Status::invalid_argument, "a size of 0 needs the world size to be inferred");
    spec.shape = dims_create(target, spec.shape);
  }
  Layout rm = row_major(spec.shape);
  const index_t total = rm.modes[0].size * rm.modes[0].stride;
  if (target != 0 && total != target)
    fail(Status::shape_mismatch, "shape multiplies to " + std::to_string(total) + " but " +
                                     (listed ? "the rank list has " + std::to_string(target) + " ranks"
                                             : "the parent has " + std::to_string(target) + " ranks"));

  auto root = std::make_shared<detail::Root>();
  if (listed) {
    root->by_rank.reserve(spec.ranks.size());
    for (std::size_t x = 0; x < spec.ranks.size(); ++x) {
      const index_t r = spec.ranks[x];
      if (r < 0 || (spec.world > 0 && r >= spec.world))
        fail(Status::invalid_argument, "rank " + std::to_string(r) + " at position " + std::to_string(x) +
                                           " of the rank list is out of range" +
                                           (spec.world > 0 ? " [0, " + std::to_string(spec.world) + ")" : ""));
      root->by_rank.emplace_back(r, static_cast<index_t>(x));
    }
    std::sort(root->by_rank.begin(), root->by_rank.end());
    for (std::size_t i = 1; i < root->by_rank.size(); ++i)
      if (root->by_rank[i].first == root->by_rank[i - 1].first)
        fail(Status::invalid_argument,
             "rank " + std::to_string(root->by_rank[i].first) + " appears twice in the rank list");
    if (spec.world == 0) spec.world = root->by_rank.back().first + 1;
  } else if (spec.world == 0) {
    spec.world = total;
  }
  root->shape = std::move(spec.shape);
  root->names = std::move(spec.names);
  root->size = total;
  root->world = spec.world;
  root->ranks = std::move(spec.ranks);
  std::vector<Dim> dims = root_dims(rm, root->names);
  return View(std::move(root), std::move(dims), true);
}

const Dim& View::dim(std::string_view name) const { return dims_[dim_index(name)]; }

std::size_t View::dim_index(std::string_view name) const {
  for (std::size_t i = 0; i < dims_.size(); ++i)
    if (dims_[i].name == name) return i;
  std::vector<std::string> have = names();
  fail(Status::unknown_dim, "unknown dim " + quoted(name) + " (this view has " + join(have, ", ") + ")");
}

std::size_t View::dim_or_only(std::string_view name) const {
  if (!name.empty()) return dim_index(name);
  if (dims_.size() != 1)
    fail(Status::invalid_argument, "a dim name is needed: this view has " + std::to_string(dims_.size()) + " dims");
  return 0;
}

std::vector<std::string> View::names() const {
  std::vector<std::string> out;
  for (const Dim& d : dims_) out.push_back(d.name);
  return out;
}

std::vector<index_t> View::shape() const {
  std::vector<index_t> out;
  for (const Dim& d : dims_) out.push_back(d.size());
  return out;
}

index_t View::size() const noexcept {
  index_t n = 1;
  for (const Dim& d : dims_) n *= d.size();
  return n;
}

index_t View::root_size() const noexcept { return root_->size; }
index_t View::world() const noexcept { return root_->world; }
const std::vector<std::string>& View::root_names() const noexcept { return root_->names; }
const std::vector<index_t>& View::root_shape() const noexcept { return root_->shape; }
bool View::has_rank_list() const noexcept { return !root_->ranks.empty(); }

index_t View::parent_rank(index_t x) const noexcept {
  return root_->ranks.empty() ? x : root_->ranks[static_cast<std::size_t>(x)];
}

std::optional<index_t> View::root_index(index_t parent_rank) const noexcept {
  if (root_->ranks.empty()) {
    if (parent_rank < 0 || parent_rank >= root_->size) return std::nullopt;
    return parent_rank;
  }
  auto it = std::lower_bound(root_->by_rank.begin(), root_->by_rank.end(), std::pair<index_t, index_t>{parent_rank, 0});
  if (it == root_->by_rank.end() || it->first != parent_rank) return std::nullopt;
  return it->second;
}

std::vector<Dim> View::registered() const {
  std::lock_guard lock(root_->registry_mutex);
  return root_->registry;
}

View View::slice(std::span<const std::string> names) const {
  // A view of no dims is not a mesh (create() refuses ndim 0 too).
  if (names.empty()) fail(Status::invalid_argument, "slice needs at least one dim name");
  // Every dim of this view in its own order is this view itself (a root
  // stays a root, so names registered on it stay sliceable), as in PyTorch.
  if (names.size() == dims_.size() && std::equal(names.begin(), names.end(), dims_.begin(),
                                                 [](const std::string& n, const Dim& d) { return n == d.name; }))
    return *this;
  std::vector<Dim> out;
  out.reserve(names.size());
  std::vector<Layout> layouts;
  for (const std::string& name : names) {
    if (find(out, name)) fail(Status::duplicate_name, "dim " + quoted(name) + " is sliced twice");
    const Dim* d = find(dims_, name);
    if (!d && is_root_) {
      std::lock_guard lock(root_->registry_mutex);
      if (const Dim* r = find(root_->registry, name)) out.push_back(*r);
    } else if (d) {
      out.push_back(*d);
    }
    if (out.empty() || out.back().name != name) {
      std::string have = join(this->names(), ", ");
      if (is_root_) {
        std::lock_guard lock(root_->registry_mutex);
        for (const Dim& r : root_->registry) have += ", " + r.name;
      }
      fail(Status::unknown_dim, "unknown dim " + quoted(name) + " (can slice " + have + ")");
    }
    layouts.push_back(out.back().layout);
  }
  if (!disjoint(layouts))
    fail(Status::overlap, "dims " + join(std::vector<std::string>(names.begin(), names.end()), ", ") +
                              " cover the same ranks and cannot be sliced together");
  return View(root_, std::move(out), false);
}

View View::concatenate(std::span<const View> views) {
  if (views.empty()) fail(Status::invalid_argument, "concatenate needs at least one view");
  if (views.size() == 1) return views[0];
  std::vector<Dim> out;
  std::vector<Layout> layouts;
  std::vector<std::string> names;
  for (std::size_t i = 1; i < views.size(); ++i)
    if (views[i].root_ != views[0].root_)
      fail(Status::invalid_argument, "view " + std::to_string(i) + " (" + views[i].to_string() +
                                         ") is not of the same root mesh as view 0 (" + views[0].to_string() + ")");
  for (const View& v : views) {
    for (const Dim& d : v.dims_) {
      if (find(out, d.name))
        fail(Status::duplicate_name, "dim " + quoted(d.name) + " is in more than one of the views concatenated");
      out.push_back(d);
      layouts.push_back(d.layout);
      names.push_back(d.name);
    }
  }
  if (!disjoint(layouts))
    fail(Status::overlap, "dims " + join(names, ", ") + " cover the same ranks and cannot be concatenated");
  return View(views[0].root_, std::move(out), false);
}

View View::flatten(std::optional<std::string> name) const {
  Dim flat;
  flat.name = name ? *name : join(names(), "_");
  check_name(flat.name, "flatten name");
  for (const Dim& d : dims_)
    flat.layout.modes.insert(flat.layout.modes.end(), d.layout.modes.begin(), d.layout.modes.end());
  // A root dim's name for the same layout is that dim again, as in PyTorch
  // (flattening a 1-D view into its own name is the view itself); for
  // another layout it is a clash. Layouts compare coalesced, as for
  // registered names (unflattening a size-1 dim drops its size-1 mode).
  if (const Dim* r = find(root_->dims(), flat.name)) {
    if (coalesce(flat.layout) != coalesce(r->layout))
      fail(Status::duplicate_name, "flatten name " + quoted(flat.name) + " is a dim of the root mesh, " +
                                       devmesh::to_string(r->layout) + ", not " + devmesh::to_string(flat.layout));
    if (dims_.size() == 1 && dims_[0].name == flat.name) return *this;
    return View(root_, {*r}, false);
  }
  // A registered name is fine when it names the same layout: that dim again.
  std::lock_guard lock(root_->registry_mutex);
  if (const Dim* r = find(root_->registry, flat.name)) {
    if (coalesce(r->layout) != coalesce(flat.layout))
      fail(Status::duplicate_name, "flatten name " + quoted(flat.name) + " is already registered as " +
                                       devmesh::to_string(r->layout) + ", not " + devmesh::to_string(flat.layout));
    return View(root_, {*r}, false);
  }
  root_->registry.push_back(flat);
  return View(root_, {std::move(flat)}, false);
}

View View::unflatten(std::string_view dim, std::span<const index_t> sizes, std::span<const std::string> names) const {
  const std::size_t at = dim_index(dim);
  if (sizes.empty()) fail(Status::invalid_argument, "unflatten of " + quoted(dim) + " needs at least one size");
  if (sizes.size() != names.size())
    fail(Status::invalid_argument, "unflatten of " + quoted(dim) + " got " + std::to_string(sizes.size()) +
                                       " sizes but " + std::to_string(names.size()) + " names");
  for (std::size_t i = 0; i < names.size(); ++i) {
    check_name(names[i], "unflatten name");
    for (std::size_t j = 0; j < i; ++j)
      if (names[j] == names[i]) fail(Status::duplicate_name, "unflatten name " + quoted(names[i]) + " is given twice");
    for (std::size_t j = 0; j < dims_.size(); ++j)
      if (j != at && dims_[j].name == names[i])
        fail(Status::duplicate_name, "unflatten name " + quoted(names[i]) + " is already a dim of this view");
  }
  // One size may be -1, inferred from the others as torch.reshape does.
  // Invalid sizes are reported before a second -1, whatever their order.
  std::vector<index_t> resolved(sizes.begin(), sizes.end());
  for (index_t s : resolved)
    if (s < 1 && s != -1)
      fail(Status::invalid_argument,
           "unflatten size " + std::to_string(s) + " of " + quoted(dim) + " must be at least 1 (or -1, inferred)");
  std::size_t inferred = resolved.size();
  index_t known = 1;
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    if (resolved[i] != -1) {
      if (__builtin_mul_overflow(known, resolved[i], &known))
        fail(Status::shape_mismatch, "unflatten sizes of " + quoted(dim) + " overflow 63 bits");
    } else if (inferred != resolved.size()) {
      fail(Status::shape_mismatch,
           "unflatten of " + quoted(dim) + " has more than one size -1 (only one can be inferred)");
    } else {
      inferred = i;
    }
  }
  if (inferred != resolved.size()) {
    const index_t n = dims_[at].size();
    if (n % known != 0)
      fail(Status::shape_mismatch,
           "unflatten of " + quoted(dim) + " cannot infer the size -1: the other sizes multiply to " +
               std::to_string(known) + ", which does not divide the dim size " + std::to_string(n));
    resolved[inferred] = n / known;
  }
  std::vector<Layout> parts = split(dims_[at].layout, resolved);
  // A name of the root mesh (other than the dim unflattened) or a
  // registered flattened name is fine for the very layout it names: that
  // dim again, as in PyTorch; for another layout it is a clash.
  for (std::size_t i = 0; i < names.size(); ++i) {
    const Layout mine = coalesce(parts[i]);
    if (const Dim* r = find(root_->dims(), names[i]); r && names[i] != dim && coalesce(r->layout) != mine)
      fail(Status::duplicate_name, "unflatten name " + quoted(names[i]) + " is a dim of the root mesh, " +
                                       devmesh::to_string(r->layout) + ", not " + devmesh::to_string(parts[i]));
    std::lock_guard lock(root_->registry_mutex);
    if (const Dim* r = find(root_->registry, names[i]); r && coalesce(r->layout) != mine)
      fail(Status::duplicate_name, "unflatten name " + quoted(names[i]) + " is a registered flattened name, " +
                                       devmesh::to_string(r->layout) + ", not " + devmesh::to_string(parts[i]));
  }
  std::vector<Dim> out(dims_.begin(), dims_.begin() + static_cast<std::ptrdiff_t>(at));
  for (std::size_t i = 0; i < parts.size(); ++i) out.push_back({names[i], std::move(parts[i])});
  out.insert(out.end(), dims_.begin() + static_cast<std::ptrdiff_t>(at) + 1, dims_.end());
  return View(root_, std::move(out), false);
}

View View::root() const { return View(root_, root_->dims(), true); }

std::vector<index_t> View::coordinate(index_t x) const {
  std::vector<index_t> c(dims_.size());
  for (std::size_t i = 0; i < dims_.size(); ++i) c[i] = local_index(dims_[i].layout, x);
  return c;
}

std::vector<index_t> View::group_indices(std::size_t dim, index_t x) const {
  const Layout& l = dims_.at(dim).layout;
  const index_t base = group_base(l, x);
  const index_t n = devmesh::size(l);
  std::vector<index_t> out(static_cast<std::size_t>(n));
  for (index_t k = 0; k < n; ++k) out[static_cast<std::size_t>(k)] = base + offset(l, k);
  return out;
}

std::vector<index_t> View::group(std::size_t dim, index_t x) const {
  std::vector<index_t> out = group_indices(dim, x);
  for (index_t& r : out) r = parent_rank(r);
  return out;
}

std::vector<std::vector<index_t>> View::all_groups(std::size_t dim) const {
  const Layout& l = dims_.at(dim).layout;
  const Layout rest = complement(l, root_->size);
  const index_t count = devmesh::size(rest);
  std::vector<std::vector<index_t>> out(static_cast<std::size_t>(count));
  for (index_t g = 0; g < count; ++g) out[static_cast<std::size_t>(g)] = group(dim, offset(rest, g));
  return out;
}

std::optional<index_t> View::shift(std::size_t dim, index_t x, index_t distance, bool periodic) const {
  const Layout& l = dims_.at(dim).layout;
  const index_t n = devmesh::size(l);
  // distance is at most 64-bit: reduce it first so k + d cannot overflow.
  index_t j = local_index(l, x);
  if (periodic) {
    j = (j + distance % n + n) % n;
  } else {
    if (distance >= n || distance <= -n) return std::nullopt;
    j += distance;
    if (j < 0 || j >= n) return std::nullopt;
  }
  return group_base(l, x) + offset(l, j);
}

std::string View::to_string() const {
  std::ostringstream os;
  for (std::size_t i = 0; i < dims_.size(); ++i)
    os << (i ? " " : "") << dims_[i].name << '=' << devmesh::to_string(dims_[i].layout);
  return os.str();
}

}  // namespace devmesh
