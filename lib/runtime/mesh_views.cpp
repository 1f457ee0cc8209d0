// The communicators of whole views: a view's Cartesian communicator, and
// every dim's at once (create_comms).
#include <algorithm>
#include <numeric>

#include "cross_check.hpp"
#include "mesh_state.hpp"
#include "mpi_check.hpp"
#include "mpi_comms.hpp"

namespace devmesh::detail {
namespace {

// The root dims whose modes make up `layout` in root order (MPI_Cart_sub's
// remain_dims), or an empty vector when the layout is not such a sub-grid
// or keeps no dim (a layout of size 1: MPI_Cart_sub keeping no dim makes
// one 0-dimensional grid of a single process, MPI_COMM_NULL elsewhere).
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
  if (picked.modes.empty() || coalesce(picked) != want) return {};
  return remain;
}

}  // namespace

MPI_Comm MeshState::cart(const View& view, std::vector<int> periods) {
  Lock lock(mutex_);
  return with_failure_policy([&] { return cart(lock, view, std::move(periods)); });
}

MPI_Comm MeshState::cart(const Lock& lock, const View& view, std::vector<int> per) {
  check_alive(lock);
  if (per.empty()) per.assign(view.ndim(), 0);
  // The key tells the grid apart from any other with the same members and
  // from every layout's key (which has no negative entry): each dim's
  // coalesced modes after a -1, then the periods after a -2.
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
  if (Handout* h = find(lock, key)) return h->comm;
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
  // its own order), and so is a tracked parent while it lives if root
  // index x is parent rank x; otherwise the flattened layout's own
  // communicator.
  const Layout whole = coalesce(flat);
  const bool identity =
      size(flat) == root_size_ && (whole.modes.empty() || (whole.modes.size() == 1 && whole.modes[0].stride == 1));
  MPI_Comm over = MPI_COMM_NULL;
  if (identity && root_comm_ == MPI_COMM_NULL && !root_listed_) over = live_parent(lock);
  if (over == MPI_COMM_NULL) over = identity ? root_comm(lock) : entry(lock, flat, joined).comm;
  MPI_Comm c = MPI_COMM_NULL;
  DEVMESH_MPI(MPI_Cart_create(over, static_cast<int>(dims.size()), dims.data(), per.data(), 0, &c));
  return_errors(c);  // frees it on failure
  return hand_out(lock, std::move(key), c, std::move(name)).comm;
}

void MeshState::create_comms(const View& v, CommPath path) {
  Lock lock(mutex_);
  with_failure_policy([&] { create_comms(lock, v, path); });
}

void MeshState::create_comms(const Lock& lock, const View& v, CommPath path) {
  // No MPI call after MPI_Finalize (the check below is one).
  check_alive(lock);
  // All members must ask for the same layouts by the same path, or the
  // creations below would not match up: check first, fail everywhere. An
  // unknown path takes part in the check too, so that a member passing one
  // alone fails with the others instead of leaving them waiting.
  const bool known_path = path >= CommPath::automatic && path <= CommPath::cart_sub;
  Hash p, views;
  p.add(static_cast<std::int64_t>(path));
  for (const Dim& d : v.dims()) {
    views.add(d.name);
    for (index_t k : key_of(d.layout)) views.add(k);
  }
  // Over the parent while the program keeps it (see all_members): no
  // communicator of all members is made for the check alone.
  const bool had_root = root_comm_ != MPI_COMM_NULL;
  MPI_Comm all = MPI_COMM_NULL;
  try {
    all = all_members(lock);
    const Status local = known_path ? Status::success : Status::invalid_argument;
    const Field fields[] = {{"creation paths", p.h}, {"views", views.h}};
    detail::cross_check(all, "create_comms", fields, local,
                        "unknown creation path " + std::to_string(static_cast<int>(path)));
  } catch (const Error&) {
    // A failed call leaves nothing made.
    if (!had_root && root_comm_ != MPI_COMM_NULL && MPI_Comm_free(&root_comm_) == MPI_SUCCESS) --created_;
    throw;
  }
  std::optional<View> root;  // the root view, for cart_sub
  for (const Dim& d : v.dims()) {
    if (path == CommPath::automatic || path == CommPath::create_group) {
      entry(lock, d.layout, d.name);
      continue;
    }
    std::vector<index_t> key = key_of(d.layout);
    // Whether made already (even if the program freed it since: that is
    // reported after these collectives, where every member is past them).
    const bool have = handouts_.count(key) != 0;
    MPI_Comm c = MPI_COMM_NULL;
    if (path == CommPath::split) {
      const int color = have ? MPI_UNDEFINED : static_cast<int>(group_base(d.layout, index_));
      DEVMESH_MPI(MPI_Comm_split(all, color, static_cast<int>(local_index(d.layout, index_)), &c));
    } else {  // cart_sub
      if (!root) root = v.root();
      std::vector<int> remain = cart_remain(*root, d.layout);
      if (remain.empty()) {
        entry(lock, d.layout, d.name);
        continue;
      }
      DEVMESH_MPI(MPI_Cart_sub(cart(lock, *root, {}), remain.data(), &c));
      if (have) {
        MPI_Comm_free(&c);
        continue;
      }
    }
    if (c == MPI_COMM_NULL) continue;
    return_errors(c);
    hand_out(lock, std::move(key), c, comm_name(d.name));
  }
  // Each dim's backend communicator, made now where its making is a
  // collective (all root members are here together); one made locally
  // (LOCAL_CREATE: a wrapper of the communicator) is made when first used,
  // as after comm(dim).
  for (const Dim& d : v.dims()) {
    const BackendSpec spec = backend_of(lock, d);
    if (load_backend(spec.name).capabilities & DEVMESH_BACKEND_CAP_LOCAL_CREATE) continue;
    communicator(lock, d.layout, d.name, spec, true);
  }
}

}  // namespace devmesh::detail
