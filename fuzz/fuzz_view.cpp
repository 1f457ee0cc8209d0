// fuzz_view: random root meshes and chains of view operations
// (include/devmesh/view.hpp) against a brute-force reference of SEMANTICS.md.
//
// Input bytes choose a root spec (up to 4 dims of size -1..6, 0 to be
// inferred; names from a small alphabet with duplicates, empty and
// over-long names; an optional world and an optional rank list, valid or
// not) and then up to 12 of slice / flatten / unflatten / root with fuzzed
// arguments. DEVMESH_FUZZ_TRACE=1 prints each operation and its outcome.
//
// The reference keeps every dim as a table (local index k -> root index,
// the dim's layout as a function), the root's registry of flattened names
// likewise, and decides each operation from SEMANTICS.md alone:
//   slice      the named dims (registered names from a root view), in the
//              order given (all of the view's dims in its own order: the
//              view itself); refused when a name is unknown or repeated or
//              when the dims together are not one digit-aligned sub-mesh
//              (their joint table must be injective and tile [0, W))
//   flatten    the dims' tables side by side; name rules of section 3
//   unflatten  k -> table[k * P_i] per new dim; refused unless those parts
//              add up to the dim and each is a layout
//   root       the root's dims
// Every operation must succeed exactly when the reference says so, with the
// reference's status where it names one and always one of the five model
// statuses, and never crash or throw anything else. After each success the
// view is checked whole: names, sizes, each dim's layout as a table, and,
// per dim, the groups computed by brute force (the translates of the dim's
// table that tile [0, W), each in local-rank order) against group,
// group_indices, local_rank, coordinate and all_groups, through the rank
// list; the registry against registered().
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>

#include "devmesh/view.hpp"
#include "expect.hpp"
#include "reference.hpp"

namespace {

using devmesh::Error;
using devmesh::index_t;
using devmesh::RootSpec;
using devmesh::Status;
using devmesh::View;
using ref::Table;

struct RefDim {
  std::string name;
  Table table;
};

// What the reference knows about the one root of an input.
struct RefRoot {
  index_t size = 1;            // W
  index_t world = 0;
  std::vector<index_t> ranks;  // empty = identity
  std::vector<RefDim> dims;
  std::vector<RefDim> registry;
  index_t parent(index_t x) const { return ranks.empty() ? x : ranks[static_cast<std::size_t>(x)]; }
};

struct RefView {
  std::vector<RefDim> dims;
  bool is_root = true;
};

// The reference's verdict on an operation: allowed, or refused with a
// status (nullopt: the reference does not pin the status down).
struct Verdict {
  bool ok = true;
  std::optional<Status> status;
  std::string why;
};
Verdict allow() { return {}; }
Verdict refuse(Status s, std::string why) { return {false, s, std::move(why)}; }

const std::string& long_name() {
  static const std::string name(devmesh::max_name_length + 1, 'n');
  return name;
}

// A small alphabet: root-like names (so that names repeat), names that look
// like default flatten names, the empty name and an over-long one.
std::string alphabet(FuzzedDataProvider& in) {
  static const char* const names[] = {"a", "b", "c", "d", "a", "b", "c", "x",
                                      "a_b", "b_c", "a_b_c", "y", "z", "", "", nullptr};
  const char* n = names[in.ConsumeIntegralInRange<std::size_t>(0, 15)];
  return n ? std::string(n) : long_name();
}

const RefDim* find(const std::vector<RefDim>& dims, const std::string& name) {
  for (const RefDim& d : dims)
    if (d.name == name) return &d;
  return nullptr;
}

// A name to pass to an operation: from the alphabet, this view, the
// registry or the root.
std::string pick_name(FuzzedDataProvider& in, const RefView& v, const RefRoot& r) {
  const std::vector<RefDim>* from = nullptr;
  switch (in.ConsumeIntegralInRange(0, 5)) {
    case 0: return alphabet(in);
    case 1: case 2: case 3: from = &v.dims; break;
    case 4: from = &r.registry; break;
    default: from = &r.dims; break;
  }
  if (from->empty()) return alphabet(in);
  return (*from)[in.ConsumeIntegralInRange<std::size_t>(0, from->size() - 1)].name;
}

bool bad_name(const std::string& n) { return n.empty() || n.size() > devmesh::max_name_length; }

std::string join(const std::vector<RefDim>& dims) {
  std::string out;
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i ? "_" : "") + dims[i].name;
  return out;
}

Table joint(const std::vector<RefDim>& dims) {
  std::vector<Table> tables;
  for (const RefDim& d : dims) tables.push_back(d.table);
  return ref::concat(tables);
}

// Whether dims form one sub-mesh: their joint table is injective and its
// translates tile the root.
bool sub_mesh(const std::vector<RefDim>& dims, index_t w) {
  const Table t = joint(dims);
  return ref::injective(t) && ref::tile(t, w).has_value();
}

std::string describe(const RefView& v) {
  std::string out;
  for (const RefDim& d : v.dims) out += d.name + "=" + ref::str(d.table) + " ";
  return out;
}

// --- checking a view against the reference ---------------------------------

void check_view(const View& v, const RefView& want, const RefRoot& r, const std::string& op) {
  const std::string ctx = op + " -> " + v.to_string() + " | reference " + describe(want);
  FUZZ_EXPECT(v.ndim() == want.dims.size(), ctx);
  FUZZ_EXPECT(v.is_root() == want.is_root, ctx);
  FUZZ_EXPECT(v.root_size() == r.size && v.world() == r.world, ctx);
  for (std::size_t d = 0; d < v.ndim(); ++d) {
    FUZZ_EXPECT(v.dims()[d].name == want.dims[d].name, ctx);
    FUZZ_EXPECT(ref::enumerate(v.dims()[d].layout) == want.dims[d].table, ctx << " dim " << d);
  }
  // The view as a whole is one sub-mesh (it can be flattened).
  FUZZ_EXPECT(sub_mesh(want.dims, r.size), ctx);
  index_t view_size = 1;
  for (const RefDim& d : want.dims) view_size *= static_cast<index_t>(d.table.size());
  FUZZ_EXPECT(v.size() == view_size, ctx);

  std::vector<std::vector<index_t>> coords(static_cast<std::size_t>(r.size));
  for (index_t x = 0; x < r.size; ++x) coords[static_cast<std::size_t>(x)] = v.coordinate(x);
  for (std::size_t d = 0; d < v.ndim(); ++d) {
    const Table& t = want.dims[d].table;
    const std::optional<Table> bases = ref::tile(t, r.size);
    FUZZ_EXPECT(bases, ctx << ": groups of dim " << d << " do not partition the root");
    std::vector<std::vector<index_t>> groups;
    for (index_t b : *bases) {
      std::vector<index_t> members, ranks;
      for (index_t o : t) members.push_back(b + o);
      for (index_t x : members) ranks.push_back(r.parent(x));
      for (std::size_t k = 0; k < members.size(); ++k) {
        const index_t x = members[k];
        FUZZ_EXPECT(v.local_rank(d, x) == static_cast<index_t>(k), ctx << " local_rank(" << d << ", " << x << ")");
        FUZZ_EXPECT(coords[static_cast<std::size_t>(x)][d] == static_cast<index_t>(k),
                    ctx << " coordinate(" << x << ")[" << d << "]");
      }
      // The group query costs O(group): ask it of one member per group.
      const index_t x = members[static_cast<std::size_t>(b) % members.size()];
      FUZZ_EXPECT(v.group_indices(d, x) == members, ctx << " group_indices(" << d << ", " << x << ")");
      FUZZ_EXPECT(v.group(d, x) == ranks, ctx << " group(" << d << ", " << x << ")");
      groups.push_back(std::move(ranks));
    }
    FUZZ_EXPECT(v.all_groups(d) == groups, ctx << " all_groups(" << d << ")");
  }
  const std::vector<devmesh::Dim> reg = v.registered();
  FUZZ_EXPECT(reg.size() == r.registry.size(), ctx);
  for (std::size_t i = 0; i < reg.size(); ++i) {
    FUZZ_EXPECT(reg[i].name == r.registry[i].name, ctx);
    FUZZ_EXPECT(ref::enumerate(reg[i].layout) == r.registry[i].table, ctx << " registered " << reg[i].name);
  }
}

// DEVMESH_FUZZ_TRACE=1 prints every operation and its outcome (to read
// what a crash input or a seed does: fuzz_view INPUT).
bool trace() {
  static const bool on = std::getenv("DEVMESH_FUZZ_TRACE") != nullptr;
  return on;
}

// Runs op, which the reference judged `verdict`; returns its view on
// success. Any exception but devmesh::Error escapes (a crash to libFuzzer).
template <class Op>
std::optional<View> attempt(const Verdict& verdict, const std::string& what, Op op) {
  try {
    View v = op();
    if (trace()) std::fprintf(stderr, "%s -> %s\n", what.c_str(), v.to_string().c_str());
    FUZZ_EXPECT(verdict.ok, what << " succeeded; the reference refuses it: " << verdict.why);
    return v;
  } catch (const Error& e) {
    if (trace()) std::fprintf(stderr, "%s -> %s: %s\n", what.c_str(), std::string(status_name(e.status())).c_str(), e.what());
    FUZZ_EXPECT(fuzz::model_status(e.status()), what << " threw status " << e.status() << ": " << e.what());
    FUZZ_EXPECT(!verdict.ok, what << " threw " << e.status() << " '" << e.what() << "'; the reference allows it");
    if (verdict.status)
      FUZZ_EXPECT(e.status() == *verdict.status, what << " threw " << e.status() << " '" << e.what()
                                                      << "'; the reference says " << *verdict.status << ": "
                                                      << verdict.why);
    return std::nullopt;
  }
}

// --- the root ----------------------------------------------------------------

struct Created {
  View view;
  RefRoot root;
};

std::optional<Created> create(FuzzedDataProvider& in) {
  static const index_t sizes[] = {1, 2, 2, 3, 4, 4, 5, 6, 0, 0, 1, 2, 3, 2, 4, -1};
  RootSpec spec;
  const int nd = in.ConsumeIntegralInRange(0, 15) == 0 ? 0 : in.ConsumeIntegralInRange(1, 4);
  for (int i = 0; i < nd; ++i) {
    spec.shape.push_back(sizes[in.ConsumeIntegralInRange<std::size_t>(0, 15)]);
    spec.names.push_back(alphabet(in));
  }
  index_t fixed = 1;
  for (index_t s : spec.shape) fixed *= std::max<index_t>(s, 1);
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 0: spec.world = 0; break;
    case 1: spec.world = fixed; break;
    case 2: spec.world = fixed + in.ConsumeIntegralInRange<index_t>(0, 8); break;
    default: spec.world = in.ConsumeIntegralInRange<index_t>(-1, 40); break;
  }
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 2: {  // a permutation of some distinct ranks of [0, max(world, len))
      const index_t len = in.ConsumeBool() ? fixed : in.ConsumeIntegralInRange<index_t>(1, 24);
      std::vector<index_t> pool(static_cast<std::size_t>(std::max(spec.world, len)));
      std::iota(pool.begin(), pool.end(), index_t{0});
      for (std::size_t i = pool.size(); i > 1; --i)
        std::swap(pool[i - 1], pool[in.ConsumeIntegralInRange<std::size_t>(0, i - 1)]);
      spec.ranks.assign(pool.begin(), pool.begin() + len);
      break;
    }
    case 3: {  // anything: repeats, negatives, out of range
      const int len = in.ConsumeIntegralInRange(1, 24);
      for (int i = 0; i < len; ++i) spec.ranks.push_back(in.ConsumeIntegralInRange<index_t>(-1, 30));
      break;
    }
    default: break;
  }

  // The reference's verdict, in the order of the rules in view.hpp.
  Verdict verdict;
  const bool listed = !spec.ranks.empty();
  const index_t target = listed ? static_cast<index_t>(spec.ranks.size()) : spec.world;
  const bool zeros = std::find(spec.shape.begin(), spec.shape.end(), 0) != spec.shape.end();
  std::vector<index_t> sorted = spec.ranks;
  std::sort(sorted.begin(), sorted.end());
  if (nd == 0) {
    verdict = refuse(Status::invalid_argument, "ndim 0");
  } else {
    for (int i = 0; i < nd && verdict.ok; ++i) {
      if (bad_name(spec.names[i])) verdict = refuse(Status::invalid_argument, "bad name");
      else if (spec.shape[i] < 0) verdict = refuse(Status::invalid_argument, "negative size");
      else if (std::find(spec.names.begin(), spec.names.begin() + i, spec.names[i]) != spec.names.begin() + i)
        verdict = refuse(Status::duplicate_name, "name twice");
    }
    if (!verdict.ok) {
    } else if (spec.world < 0) {
      verdict = refuse(Status::invalid_argument, "negative world");
    } else if (zeros && target == 0) {
      verdict = refuse(Status::invalid_argument, "zeros without a world");
    } else if (zeros && target % fixed != 0) {
      verdict = refuse(Status::shape_mismatch, "fixed dims do not divide the world");
    } else if (!zeros && target != 0 && fixed != target) {
      verdict = refuse(Status::shape_mismatch, "product differs from the world");
    } else if (listed && (sorted.front() < 0 || (spec.world > 0 && sorted.back() >= spec.world))) {
      verdict = refuse(Status::invalid_argument, "rank out of range");
    } else if (listed && std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      verdict = refuse(Status::invalid_argument, "rank twice");
    }
  }

  const RootSpec given = spec;
  std::optional<View> v = attempt(verdict, "create", [&] { return View::create(spec); });
  if (!v) return std::nullopt;

  RefRoot r;
  r.ranks = given.ranks;
  // Zeros are MPI_Dims_create's to choose: the given sizes stay, the chosen
  // ones are non-increasing, and the product is the target.
  const std::vector<index_t>& shape = v->root_shape();
  FUZZ_EXPECT(shape.size() == given.shape.size(), "create");
  index_t last_chosen = INT64_MAX;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (given.shape[i] != 0) {
      FUZZ_EXPECT(shape[i] == given.shape[i], "create changed a given size");
    } else {
      FUZZ_EXPECT(shape[i] >= 1 && shape[i] <= last_chosen, "create chose " << ref::str(shape));
      last_chosen = shape[i];
    }
    r.size *= shape[i];
  }
  if (target != 0) FUZZ_EXPECT(r.size == target, "create: size " << r.size << ", target " << target);
  r.world = given.world != 0 ? given.world : listed ? sorted.back() + 1 : r.size;
  index_t stride = r.size;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    stride /= shape[i];
    Table t;
    for (index_t k = 0; k < shape[i]; ++k) t.push_back(k * stride);
    r.dims.push_back({given.names[i], std::move(t)});
  }
  FUZZ_EXPECT(v->root_names() == given.names, "create");
  FUZZ_EXPECT(v->has_rank_list() == listed, "create");
  // Parent ranks and back.
  for (index_t x = 0; x < r.size; ++x) {
    FUZZ_EXPECT(v->parent_rank(x) == r.parent(x), "parent_rank(" << x << ")");
    FUZZ_EXPECT(v->root_index(r.parent(x)) == x, "root_index(" << r.parent(x) << ")");
  }
  for (index_t p = -1; p <= r.world; ++p) {
    const bool member = listed ? std::binary_search(sorted.begin(), sorted.end(), p) : p >= 0 && p < r.size;
    FUZZ_EXPECT(v->root_index(p).has_value() == member, "root_index(" << p << ")");
  }
  return Created{std::move(*v), std::move(r)};
}

// --- the operations ---------------------------------------------------------

void slice(FuzzedDataProvider& in, View& v, RefView& rv, RefRoot& r) {
  std::vector<std::string> names;
  for (int n = in.ConsumeIntegralInRange(0, 15) == 0 ? 0 : in.ConsumeIntegralInRange(1, 4); n > 0; --n)
    names.push_back(pick_name(in, rv, r));
  RefView out;
  out.is_root = false;
  Verdict verdict;
  if (names.empty()) verdict = refuse(Status::invalid_argument, "no names");
  for (const std::string& name : names) {
    if (!verdict.ok) break;
    const RefDim* d = find(rv.dims, name);
    if (!d && rv.is_root) d = find(r.registry, name);
    if (find(out.dims, name)) verdict = refuse(Status::duplicate_name, name + " twice");
    else if (!d) verdict = refuse(Status::unknown_dim, name + " unknown");
    else out.dims.push_back(*d);
  }
  if (verdict.ok && !sub_mesh(out.dims, r.size)) verdict = refuse(Status::overlap, "not one sub-mesh");
  // All of the view's dims in its own order: that same view (a root stays
  // a root).
  if (verdict.ok && names.size() == rv.dims.size()) {
    bool same = true;
    for (std::size_t i = 0; i < names.size(); ++i) same = same && names[i] == rv.dims[i].name;
    if (same) out = rv;
  }
  std::string what = "slice(";
  for (const std::string& n : names) what += n.substr(0, 16) + ",";
  what += ") of " + v.to_string();
  if (auto got = attempt(verdict, what, [&] { return v.slice(names); })) {
    v = std::move(*got);
    rv = std::move(out);
    check_view(v, rv, r, what);
  }
}

void flatten(FuzzedDataProvider& in, View& v, RefView& rv, RefRoot& r) {
  std::optional<std::string> given;
  if (!in.ConsumeBool()) given = pick_name(in, rv, r);
  const std::string name = given ? *given : join(rv.dims);
  const RefDim flat{name, joint(rv.dims)};
  Verdict verdict;
  RefView out{{flat}, false};
  bool registers = false;
  if (bad_name(name)) {
    verdict = refuse(Status::invalid_argument, "bad name");
  } else if (const RefDim* root_dim = find(r.dims, name)) {
    // A root dim's name for the same layout is that dim again (a 1-D view
    // of that name, itself); for another layout a clash.
    if (root_dim->table != flat.table) verdict = refuse(Status::duplicate_name, "a root dim's name, another layout");
    else if (rv.dims.size() == 1 && rv.dims[0].name == name) out = rv;
    else out.dims = {*root_dim};
  } else if (const RefDim* reg = find(r.registry, name)) {
    if (reg->table == flat.table) out.dims = {*reg};
    else verdict = refuse(Status::duplicate_name, "registered with another layout");
  } else {
    registers = true;
  }
  const std::string what = "flatten(" + (given ? given->substr(0, 16) : std::string("default")) + ") of " + v.to_string();
  if (auto got = attempt(verdict, what, [&] { return v.flatten(given); })) {
    if (registers) r.registry.push_back(flat);
    v = std::move(*got);
    rv = std::move(out);
    check_view(v, rv, r, what);
  }
}

void unflatten(FuzzedDataProvider& in, View& v, RefView& rv, RefRoot& r) {
  const std::string dim = pick_name(in, rv, r);
  const RefDim* d = find(rv.dims, dim);
  const int count = in.ConsumeIntegralInRange(0, 15) == 0 ? 0 : in.ConsumeIntegralInRange(1, 3);
  std::vector<index_t> sizes;
  if (d && in.ConsumeIntegralInRange(0, 3) != 0) {
    // A factorisation of the dim's size (1s allowed).
    index_t n = static_cast<index_t>(d->table.size());
    for (int i = 0; i + 1 < count; ++i) {
      std::vector<index_t> divs;
      for (index_t q = 1; q <= n; ++q)
        if (n % q == 0) divs.push_back(q);
      const index_t q = divs[in.ConsumeIntegralInRange<std::size_t>(0, divs.size() - 1)];
      sizes.push_back(q);
      n /= q;
    }
    if (count > 0) sizes.push_back(n);
    // One entry left to be inferred.
    if (count > 0 && in.ConsumeIntegralInRange(0, 2) == 0)
      sizes[in.ConsumeIntegralInRange<std::size_t>(0, sizes.size() - 1)] = -1;
  } else {
    for (int i = 0; i < count; ++i) sizes.push_back(in.ConsumeIntegralInRange<index_t>(-1, 6));
  }
  std::vector<std::string> names;
  const int name_count = in.ConsumeIntegralInRange(0, 15) == 0 ? count + 1 : count;
  for (int i = 0; i < name_count; ++i) names.push_back(pick_name(in, rv, r));

  const std::vector<index_t> given = sizes;  // as passed; `sizes` gets the -1 resolved
  Verdict verdict;
  std::size_t at = 0;
  if (!d) {
    verdict = refuse(Status::unknown_dim, "unknown dim");
  } else {
    at = static_cast<std::size_t>(d - rv.dims.data());
    if (sizes.empty()) verdict = refuse(Status::invalid_argument, "no sizes");
    else if (sizes.size() != names.size()) verdict = refuse(Status::invalid_argument, "counts differ");
  }
  for (std::size_t i = 0; verdict.ok && i < names.size(); ++i) {
    const std::string& n = names[i];
    if (bad_name(n)) verdict = refuse(Status::invalid_argument, "bad name");
    else if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(i), n) != names.begin() + static_cast<std::ptrdiff_t>(i))
      verdict = refuse(Status::duplicate_name, n + " twice");
    else if (find(rv.dims, n) && find(rv.dims, n) != d) verdict = refuse(Status::duplicate_name, n + " is a dim of the view");
  }
  RefView out;
  out.is_root = false;
  if (verdict.ok) {
    // -1 stands for the dim size over the product of the other sizes.
    const index_t n = static_cast<index_t>(d->table.size());
    const auto minus_ones = std::count(sizes.begin(), sizes.end(), index_t{-1});
    index_t others = 1;
    for (index_t s : sizes)
      if (s != -1) others *= s;
    if (std::any_of(sizes.begin(), sizes.end(), [](index_t s) { return s < 1 && s != -1; }))
      verdict = refuse(Status::invalid_argument, "size < 1");
    else if (minus_ones > 1)
      verdict = refuse(Status::shape_mismatch, "more than one -1");
    else if (minus_ones == 1 && n % others != 0)
      verdict = refuse(Status::shape_mismatch, "-1 cannot be inferred");
    else if (minus_ones == 1)
      *std::find(sizes.begin(), sizes.end(), index_t{-1}) = n / others;
  }
  if (verdict.ok) {
    index_t product = 1;
    for (index_t s : sizes) product *= s;
    if (product != static_cast<index_t>(d->table.size()))
      verdict = refuse(Status::shape_mismatch, "product differs");
    else if (!ref::splittable(d->table, sizes))
      verdict = refuse(Status::shape_mismatch, "the parts are no layouts of the dim");
  }
  std::vector<Table> parts;
  if (verdict.ok) {
    parts = ref::split_parts(d->table, sizes);
    // A root dim's name (other than the dim's own) or a registered name is
    // that dim again for the very same layout, a clash for another.
    for (std::size_t i = 0; verdict.ok && i < names.size(); ++i) {
      const RefDim* root_dim = names[i] != dim ? find(r.dims, names[i]) : nullptr;
      const RefDim* reg = find(r.registry, names[i]);
      if (root_dim && root_dim->table != parts[i]) verdict = refuse(Status::duplicate_name, names[i] + " is a root dim");
      else if (reg && reg->table != parts[i]) verdict = refuse(Status::duplicate_name, names[i] + " is registered");
    }
  }
  if (verdict.ok) {
    out.dims.assign(rv.dims.begin(), rv.dims.begin() + static_cast<std::ptrdiff_t>(at));
    for (std::size_t i = 0; i < parts.size(); ++i) out.dims.push_back({names[i], parts[i]});
    out.dims.insert(out.dims.end(), rv.dims.begin() + static_cast<std::ptrdiff_t>(at) + 1, rv.dims.end());
  }
  const std::string what = "unflatten(" + dim.substr(0, 16) + ", " + ref::str(given) + ") of " + v.to_string();
  if (auto got = attempt(verdict, what, [&] { return v.unflatten(dim, given, names); })) {
    v = std::move(*got);
    rv = std::move(out);
    check_view(v, rv, r, what);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  std::optional<Created> c = create(in);
  if (!c) return 0;
  View v = c->view;
  RefRoot& r = c->root;
  RefView rv{r.dims, true};
  check_view(v, rv, r, "create");
  for (int ops = 0; ops < 12 && in.remaining_bytes() > 0; ++ops) {
    switch (in.ConsumeIntegralInRange(0, 7)) {
      case 0: case 1: slice(in, v, rv, r); break;
      case 2: case 3: flatten(in, v, rv, r); break;
      case 4: case 5: unflatten(in, v, rv, r); break;
      default:
        v = v.root();
        if (trace()) std::fprintf(stderr, "root -> %s\n", v.to_string().c_str());
        rv = RefView{r.dims, true};
        check_view(v, rv, r, "root");
        break;
    }
  }
  return 0;
}
