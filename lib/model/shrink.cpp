// shrink(): the mesh left after some ranks died (docs/SEMANTICS.md "Shrink"),
// and repair(): who takes their places ("Repair").

#include <algorithm>

#include "devmesh/view.hpp"
#include "names.hpp"

namespace devmesh {
namespace {

[[noreturn]] void fail(Status s, const std::string& message) { throw Error(s, message); }

// "1, 3, 5": sorted, without repeats, the first `limit` then how many in all.
std::string index_list(std::vector<index_t> xs, std::size_t limit = 16) {
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  std::string out;
  for (std::size_t i = 0; i < xs.size() && i < limit; ++i) out += (i ? ", " : "") + std::to_string(xs[i]);
  if (xs.size() > limit) out += ", ... (" + std::to_string(xs.size()) + " in all)";
  return out;
}

// A root view, or one with exactly the root's dims in root order (layouts
// compared coalesced, as flatten() compares them).
void check_root(const View& view) {
  const View root = view.root();
  bool same = view.ndim() == root.ndim();
  for (std::size_t i = 0; same && i < view.ndim(); ++i)
    same = view.dims()[i].name == root.dims()[i].name &&
           coalesce(view.dims()[i].layout) == coalesce(root.dims()[i].layout);
  if (!same)
    fail(Status::invalid_argument,
         "shrink needs a root view (" + root.to_string() + "), not the view " + view.to_string());
}

}  // namespace

Shrunk shrink(const View& root, std::span<const index_t> failed, std::optional<std::string_view> dim) {
  check_root(root);
  const index_t w = root.root_size();
  std::vector<bool> dead(static_cast<std::size_t>(w));
  for (const index_t x : failed) {
    if (x < 0 || x >= w)
      fail(Status::invalid_argument,
           "failed rank " + std::to_string(x) + " is not a root index of the mesh [0, " + std::to_string(w) + ")");
    dead[static_cast<std::size_t>(x)] = true;
  }

  Shrunk out;
  if (!dim) {
    out.names = {detail::join(root.names(), "_")};
    detail::check_name(out.names[0], "the shrunk mesh's dim name (the root's dim names joined with '_')");
    for (index_t x = 0; x < w; ++x)
      if (!dead[static_cast<std::size_t>(x)]) out.kept.push_back(x);
    if (out.kept.empty())
      fail(Status::invalid_argument, "no rank is left: all " + std::to_string(w) + " ranks of the mesh failed");
    out.shape = {static_cast<index_t>(out.kept.size())};
    return out;
  }

  const std::size_t d = root.dim_or_only(*dim);
  const Layout& along = root.dims()[d].layout;
  const index_t n = devmesh::size(along);
  std::vector<bool> dropped(static_cast<std::size_t>(n));
  for (const index_t x : failed) dropped[static_cast<std::size_t>(local_index(along, x))] = true;
  const index_t gone = std::count(dropped.begin(), dropped.end(), true);
  if (gone == n)
    fail(Status::invalid_argument, "no slice of " + detail::quoted(root.dims()[d].name) + " is left: all " +
                                       std::to_string(n) + (n == 1 ? " slice holds" : " slices hold") +
                                       " a failed rank (failed root indices " +
                                       index_list({failed.begin(), failed.end()}) + ")");
  out.shape = root.shape();
  out.shape[d] -= gone;
  out.names = root.names();
  for (index_t x = 0; x < w; ++x) {
    if (!dropped[static_cast<std::size_t>(local_index(along, x))])
      out.kept.push_back(x);
    else if (!dead[static_cast<std::size_t>(x)])
      out.spares.push_back(x);
  }
  return out;
}

Repaired repair(index_t root_size, std::span<const index_t> failed, index_t spares) {
  if (spares < 0) fail(Status::invalid_argument, "a repair cannot have " + std::to_string(spares) + " spares");
  Repaired out;
  for (const index_t x : failed) {
    if (x < 0 || x >= root_size)
      fail(Status::invalid_argument, "failed rank " + std::to_string(x) + " is not a root index of the mesh [0, " +
                                         std::to_string(root_size) + ")");
    out.failed.push_back(x);
  }
  std::sort(out.failed.begin(), out.failed.end());
  out.failed.erase(std::unique(out.failed.begin(), out.failed.end()), out.failed.end());
  if (root_size > 0 && static_cast<index_t>(out.failed.size()) == root_size)
    fail(Status::invalid_argument,
         "no rank is left to repair from: all " + std::to_string(root_size) + " ranks of the mesh failed");
  const std::size_t taken = std::min(out.failed.size(), static_cast<std::size_t>(spares));
  out.by_spare.assign(out.failed.begin(), out.failed.begin() + static_cast<std::ptrdiff_t>(taken));
  out.by_spawn.assign(out.failed.begin() + static_cast<std::ptrdiff_t>(taken), out.failed.end());
  out.spares_left = spares - static_cast<index_t>(taken);
  return out;
}

}  // namespace devmesh
