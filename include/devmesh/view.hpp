// Mesh views: the pure model of a device mesh (no MPI).
//
// A View is an ordered list of named dims, each a Layout over the root index
// space of one root mesh (see SEMANTICS.md). Views are cheap values sharing
// one immutable root description plus the root's registry of flattened
// names. Every per-rank query takes a root index and costs O(ndim) integer
// arithmetic (plus the size of the group it returns): nothing of the root's
// size is ever built, except by all_groups().
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20
#if DEVMESH_CXX20              // below C++20, export.hpp's #error is the only message

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/layout.hpp"
#include "devmesh/status.hpp"

namespace devmesh {

// Longest accepted dim name, in bytes.
inline constexpr std::size_t max_name_length = 256;

// Fills the zeros of `dims` as MPI_Dims_create(nnodes, ndims, dims) does:
// the free dims get factors of nnodes / prod(nonzero dims) in
// non-increasing order with the smallest spread (largest minus smallest),
// ties going to the larger smallest factor: MPICH's choice, under every
// MPI (docs/SEMANTICS.md, "1. Root mesh").
//   dims_create(12, {0,0}) = {4,3}      dims_create(12, {0,3,0}) = {2,3,2}
// Throws Error(invalid_argument) for a negative entry or nnodes < 1 and
// Error(shape_mismatch) when the fixed dims do not divide nnodes.
DEVMESH_API std::vector<index_t> dims_create(index_t nnodes, std::vector<index_t> dims);

struct Dim {
  std::string name;
  Layout layout;
  index_t size() const noexcept { return devmesh::size(layout); }
};

// What a root mesh is made from.
struct RootSpec {
  std::vector<index_t> shape;      // 0 entries are inferred (dims_create)
  std::vector<std::string> names;  // unique, non-empty, one per dim
  index_t world = 0;               // parent size; 0 = unknown (the planner)
  std::vector<index_t> ranks;      // root index x -> parent rank ranks[x]; empty = identity
};

namespace detail {
struct Root;
}

class DEVMESH_API View {
 public:
  // The root view of a new root mesh.
  //   shape (2,2,2), names (dp,cp,tp)  ->  dp=2:4 cp=2:2 tp=2:1
  // Errors: ndim < 1, names.size() != ndim, an empty or over-long name, a
  // negative size, a rank list with a negative, out-of-range or repeated
  // rank -> invalid_argument; a repeated name -> duplicate_name; a product
  // that differs from the world size (or the rank list's length), or zeros
  // that cannot be inferred -> shape_mismatch.
  static View create(RootSpec spec);

  // --- the view -----------------------------------------------------------
  std::size_t ndim() const noexcept { return dims_.size(); }
  const std::vector<Dim>& dims() const noexcept { return dims_; }
  const Dim& dim(std::string_view name) const;         // unknown_dim
  std::size_t dim_index(std::string_view name) const;  // unknown_dim
  // The rule of every call that takes a dim name: an empty name means the
  // only dim of a 1-D view. Errors: an empty name on a view of several dims
  // -> invalid_argument; an unknown name -> unknown_dim.
  std::size_t dim_or_only(std::string_view name) const;
  std::vector<std::string> names() const;
  std::vector<index_t> shape() const;
  index_t size() const noexcept;  // product of the dim sizes
  index_t size(std::string_view dim) const { return this->dim(dim).size(); }
  bool is_root() const noexcept { return is_root_; }

  // --- the root -----------------------------------------------------------
  index_t root_size() const noexcept;  // W
  index_t world() const noexcept;      // parent size
  const std::vector<std::string>& root_names() const noexcept;
  const std::vector<index_t>& root_shape() const noexcept;
  bool has_rank_list() const noexcept;
  // Parent rank of root index x.
  index_t parent_rank(index_t x) const noexcept;
  // Root index of a parent rank, or nullopt for a non-member. O(1) without a
  // rank list, O(log W) with one.
  std::optional<index_t> root_index(index_t parent_rank) const noexcept;
  // Flattened names registered on the root, in registration order.
  std::vector<Dim> registered() const;

  // --- operations ---------------------------------------------------------
  // The named dims, in the order given (transposed order allowed). From a
  // root view, registered flattened names may be sliced too.
  // Errors: no names -> invalid_argument; unknown name -> unknown_dim; a
  // name twice -> duplicate_name; dims covering the same root digits -> overlap.
  View slice(std::span<const std::string> names) const;

  // One dim made of all modes of this view's dims in order, named `name`
  // (default: the dim names joined with '_'); the name is registered on the
  // root. (2,2,2) dp,cp,tp: flatten() of slice(dp,tp) = dp_tp=(2,2):(4,1).
  // Flattening a 1-D view that is a root dim into that dim's own name gives
  // the view back. Errors: an empty or over-long name -> invalid_argument;
  // any other root dim name, or a name registered with a different layout
  // -> duplicate_name (same layout: that dim again).
  View flatten(std::optional<std::string> name = std::nullopt) const;

  // Replaces `dim` by sizes.size() dims, split row-major.
  //   (4,2) dp,tp: unflatten(dp, (2,2), (dp_shard, dp_rep))
  //   -> dp_shard=2:4 dp_rep=2:2 tp=2:1
  // One size may be -1: it is inferred as size(dim) / product(other sizes),
  // as torch.reshape does: (8) unflatten(d, (2,-1)) -> (2,4).
  // Errors: unknown dim -> unknown_dim; no sizes, sizes/names count differ,
  // a size < 1 other than -1, an empty name -> invalid_argument; more than
  // one -1, or other sizes whose product does not divide size(dim) ->
  // shape_mismatch; new names repeated or
  // clashing with another dim of the view, a registered name or a root dim
  // outside this view -> duplicate_name; product differs or a split cuts a
  // mode into non-dividing pieces -> shape_mismatch.
  View unflatten(std::string_view dim, std::span<const index_t> sizes, std::span<const std::string> names) const;

  View root() const;

  // The dims of every view in turn, in the order given: a view of one root
  // made of dims taken from several views (PyTorch's _concatenate), e.g.
  // the flattened dp_cp of one view with tp of another. One view gives that
  // view back. Errors: no views -> invalid_argument; views of different
  // roots -> invalid_argument; a name twice -> duplicate_name; dims
  // covering the same root digits -> overlap.
  static View concatenate(std::span<const View> views);

  // --- per-rank queries (root index x of the caller) ----------------------
  std::vector<index_t> coordinate(index_t x) const;
  index_t local_rank(std::size_t dim, index_t x) const noexcept { return local_index(dims_[dim].layout, x); }
  // Parent ranks of x's group along dim, in local-rank order.
  std::vector<index_t> group(std::size_t dim, index_t x) const;
  // Root indices of x's group along dim, in local-rank order.
  std::vector<index_t> group_indices(std::size_t dim, index_t x) const;
  // Every group of dim as parent ranks, each in local-rank order, groups
  // ordered by their smallest root index. O(W).
  std::vector<std::vector<index_t>> all_groups(std::size_t dim) const;
  // The root index of the member of x's group along dim at local rank
  // local_rank(dim, x) + distance (any sign), wrapped modulo size(dim) when
  // periodic, else nullopt outside [0, size(dim)): MPI_Cart_shift's rule.
  //   (2,4) a,b, x = 5 (b rank 1): shift(b, 5, 3) = nullopt, periodic -> 4
  // O(ndim).
  std::optional<index_t> shift(std::size_t dim, index_t x, index_t distance, bool periodic) const;

  // "dp=2:4 cp=2:2 tp=2:1"
  std::string to_string() const;

  // Identity of the root this view belongs to (equal for views of one root).
  const void* root_id() const noexcept { return root_.get(); }

 private:
  View(std::shared_ptr<detail::Root> root, std::vector<Dim> dims, bool is_root)
      : root_(std::move(root)), dims_(std::move(dims)), is_root_(is_root) {}
  std::shared_ptr<detail::Root> root_;
  std::vector<Dim> dims_;
  bool is_root_ = false;
};

// What shrinking a root view keeps after the ranks of `failed` died
// (docs/SEMANTICS.md "Shrink"). Pure: no MPI; the runtime builds the new
// root from it once the survivors agree on the failed set.
struct Shrunk {
  std::vector<index_t> shape;      // the new root's shape
  std::vector<std::string> names;  // its dim names
  std::vector<index_t> kept;       // kept[i]: the old root index of new root index i (ascending)
  std::vector<index_t> spares;     // live old root indices in dropped slices, ascending
};

// The mesh left when the ranks at old root indices `failed` died.
// With a dim: every slice along it (the sub-mesh at one coordinate of the
// dim) that holds a failed rank is dropped whole; the dim shrinks by the
// number dropped, the other dims and all names stay, and kept lists the
// surviving slices' indices in root order. Without (nullopt): a 1-D mesh
// of every survivor in root order, its dim named as flatten() names the
// root's dims (joined with '_'), no spares.
//   (4,2) replicate,shard, failed {5}, dim replicate (slice 2 = {4,5}):
//   shape (3,2), kept {0,1,2,3,6,7}, spares {4}
//   the same, dim nullopt: shape (7), names {replicate_shard},
//   kept {0,1,2,3,4,6,7}, spares {}
// No failed rank gives the same mesh (with a dim) or every rank in one dim
// (without). O(W).
// `root`: a root view, or a view with exactly the root's dims in root order.
// `failed`: any order, repeats allowed. `dim` follows dim_or_only (an
// empty name is the only dim of a 1-D root).
// Errors: `root` not a root view -> invalid_argument; a failed index
// outside [0, root_size()) -> invalid_argument naming it; an unknown dim ->
// unknown_dim; an empty dim on a root of several dims -> invalid_argument;
// every slice of the dim holds a failed rank, or (without a dim) every rank
// failed -> invalid_argument; the joined name over max_name_length bytes
// -> invalid_argument.
DEVMESH_API Shrunk shrink(const View& root, std::span<const index_t> failed, std::optional<std::string_view> dim);

// Who takes the places of the ranks at root indices `failed` when a mesh
// is repaired (docs/SEMANTICS.md "Repair"). Pure: no MPI; the runtime and
// devmesh-plan both ask it. Every survivor keeps its index; the spares
// take failed indices first, the spare of the lowest parent rank the
// lowest failed index, and spawned ranks, in the order MPI_Comm_spawn
// numbers them, take the rest.
//   root size 8, failed {6, 1}, 1 spare: failed {1, 6}, by_spare {1},
//   by_spawn {6}, spares_left 0
struct Repaired {
  std::vector<index_t> failed;    // sorted, no repeats
  std::vector<index_t> by_spare;  // by_spare[k]: the index spare k takes (spares by parent rank)
  std::vector<index_t> by_spawn;  // by_spawn[j]: the index spawned rank j takes
  index_t spares_left = 0;        // spares no index needs; they stay in standby
};
// Errors: a failed index outside [0, root_size) -> invalid_argument naming
// it; spares < 0, or every index failed (no survivor to repair from) ->
// invalid_argument.
DEVMESH_API Repaired repair(index_t root_size, std::span<const index_t> failed, index_t spares);

}  // namespace devmesh

#endif  // DEVMESH_CXX20
