// Cartesian views and neighbours on real MPI: every view's cart_comm()
// checked with MPI's own answers (MPI_Cart_get, MPI_Cart_coords,
// MPI_Cart_shift, its members) against a brute-force model of the root
// grid; neighbors() against MPI_Cart_shift and the same brute force; and
// all_groups_with_comm() and unflatten's inferred size. Runs at several
// rank counts; shapes adapt to the world size.
#define BOOST_TEST_MODULE cart
#include "mpi_test.hpp"

#include <algorithm>

#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

// The brute-force model: the root is a row-major grid of shape S over
// world ranks (root index x = world rank x); a view dim is a list of root
// dims, flattened most significant first.
struct Ref {
  std::vector<int> shape;
  std::vector<std::vector<int>> dims;  // root dims per view dim

  std::vector<int> root_coord(int x) const {
    std::vector<int> c(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
      c[d] = x % shape[d];
      x /= shape[d];
    }
    return c;
  }
  int size(std::size_t i) const {
    int n = 1;
    for (int d : dims[i]) n *= shape[static_cast<std::size_t>(d)];
    return n;
  }
  std::vector<int> coord(int x) const {
    const std::vector<int> rc = root_coord(x);
    std::vector<int> c;
    for (const auto& ds : dims) {
      int v = 0;
      for (int d : ds) v = v * shape[static_cast<std::size_t>(d)] + rc[static_cast<std::size_t>(d)];
      c.push_back(v);
    }
    return c;
  }
  bool outside_equal(int x, int y, const std::vector<int>& in) const {
    const std::vector<int> a = root_coord(x), b = root_coord(y);
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (std::find(in.begin(), in.end(), static_cast<int>(d)) == in.end() && a[d] != b[d]) return false;
    return true;
  }
  int world() const {
    int n = 1;
    for (int s : shape) n *= s;
    return n;
  }
  // Members of x's group of the dims `which` (all view dims: the cart
  // group), ordered by the row-major number of their coordinates on them.
  std::vector<int> group(int x, const std::vector<std::size_t>& which) const {
    std::vector<int> in;
    for (std::size_t i : which) in.insert(in.end(), dims[i].begin(), dims[i].end());
    std::vector<std::pair<int, int>> keyed;
    for (int y = 0; y < world(); ++y)
      if (outside_equal(x, y, in)) {
        const std::vector<int> c = coord(y);
        int k = 0;
        for (std::size_t i : which) k = k * size(i) + c[i];
        keyed.emplace_back(k, y);
      }
    std::sort(keyed.begin(), keyed.end());
    std::vector<int> out;
    for (const auto& [k, y] : keyed) out.push_back(y);
    return out;
  }
  std::vector<std::size_t> all() const {
    std::vector<std::size_t> v(dims.size());
    std::iota(v.begin(), v.end(), std::size_t{0});
    return v;
  }
};

// MPI_Cart_shift's rule written out: position j of n, wrapped or dropped.
int shifted(int j, int n, bool periodic) {
  if (periodic) return ((j % n) + n) % n;
  return j < 0 || j >= n ? MPI_PROC_NULL : j;
}

std::vector<int> world_of(MPI_Comm c, const std::vector<int>& ranks) {
  const std::vector<int> m = members(c);
  std::vector<int> out;
  for (int r : ranks) out.push_back(r == MPI_PROC_NULL ? MPI_PROC_NULL : m[static_cast<std::size_t>(r)]);
  return out;
}

std::vector<int> shape3() {
  std::vector<int> s = {0, 0, 0};
  MPI_Dims_create(world_size(), 3, s.data());
  return s;
}

struct Case {
  Mesh view;
  Ref ref;
};

// Views of a fresh root of shape s: the root, transposed, sliced,
// flattened and sliced with another dim, unflattened with -1.
std::vector<Case> views(const std::vector<int>& s) {
  const Mesh root = Mesh::create(MPI_COMM_WORLD, s, {"a", "b", "c"});
  std::vector<Case> out;
  out.push_back({root, {s, {{0}, {1}, {2}}}});
  out.push_back({root.slice({"c", "a", "b"}), {s, {{2}, {0}, {1}}}});
  out.push_back({root.slice({"c", "a"}), {s, {{2}, {0}}}});
  out.push_back({root["b"], {s, {{1}}}});
  root.slice({"c", "a"}).flatten("ca");
  out.push_back({root.slice({"b", "ca"}), {s, {{1}, {2, 0}}}});
  const Mesh flat = root.flatten("abc");
  out.push_back({flat.unflatten("abc", {-1, s[2]}, {"x", "y"}), {s, {{0, 1}, {2}}}});
  return out;
}

std::vector<std::vector<bool>> period_choices(std::size_t nd) {
  std::vector<bool> all(nd, true), alternate(nd);
  for (std::size_t i = 0; i < nd; ++i) alternate[i] = i % 2 == 0;
  return {{}, all, alternate};
}

void check_cart(const Case& c, const std::vector<bool>& periodic) {
  const Mesh& m = c.view;
  const Ref& ref = c.ref;
  const int me = world_rank();
  const std::size_t nd = ref.dims.size();
  BOOST_TEST_CONTEXT(m.view().to_string() << " periodic " << periodic.size()) {
    MPI_Comm cart = m.cart_comm(periodic);
    BOOST_REQUIRE(cart != MPI_COMM_NULL);
    // Members and rank: the caller's group of the whole view, row-major.
    const std::vector<int> group = ref.group(me, ref.all());
    BOOST_TEST(members(cart) == group);
    int rank = -1;
    MPI_Comm_rank(cart, &rank);
    BOOST_TEST(group[static_cast<std::size_t>(rank)] == me);
    // MPI's own view of the grid.
    int ndims = -1;
    MPI_Cartdim_get(cart, &ndims);
    BOOST_TEST(ndims == static_cast<int>(nd));
    std::vector<int> dims(nd), periods(nd), coords(nd);
    MPI_Cart_get(cart, static_cast<int>(nd), dims.data(), periods.data(), coords.data());
    for (std::size_t i = 0; i < nd; ++i) {
      BOOST_TEST(dims[i] == ref.size(i));
      BOOST_TEST(periods[i] == (periodic.empty() ? 0 : periodic[i] ? 1 : 0));
    }
    BOOST_TEST(coords == ref.coord(me));
    BOOST_TEST(coords == m.coordinate());
    for (int r = 0; r < static_cast<int>(group.size()); ++r) {
      std::vector<int> rc(nd);
      MPI_Cart_coords(cart, r, static_cast<int>(nd), rc.data());
      BOOST_TEST(rc == ref.coord(group[static_cast<std::size_t>(r)]));
    }
    // Shifts along every dim: MPI's, the brute force's and neighbors().
    for (std::size_t i = 0; i < nd; ++i) {
      const std::string dim = m.names()[i];
      const bool per = !periodic.empty() && periodic[i];
      const int n = ref.size(i);
      const std::vector<int> line = ref.group(me, {i});
      const int k = ref.coord(me)[i];
      for (int d : {-n - 1, -2, -1, 0, 1, 2, n, n + 1}) {
        BOOST_TEST_CONTEXT("dim " << dim << " distance " << d) {
          int src = -2, dst = -2;
          MPI_Cart_shift(cart, static_cast<int>(i), d, &src, &dst);
          const int lp = shifted(k - d, n, per), ln = shifted(k + d, n, per);
          const int wp = lp == MPI_PROC_NULL ? MPI_PROC_NULL : line[static_cast<std::size_t>(lp)];
          const int wn = ln == MPI_PROC_NULL ? MPI_PROC_NULL : line[static_cast<std::size_t>(ln)];
          BOOST_TEST((world_of(cart, {src, dst}) == std::vector<int>{wp, wn}));
          const Neighbors nb = m.neighbors(dim, per, d);
          BOOST_TEST(nb.prev == lp);
          BOOST_TEST(nb.next == ln);
          BOOST_TEST(nb.parent_prev == wp);
          BOOST_TEST(nb.parent_next == wn);
          // The local ranks name the same members in the dim's communicator.
          BOOST_TEST((world_of(m.comm(dim), {nb.prev, nb.next}) == std::vector<int>{wp, wn}));
        }
      }
    }
    // Cached: the same communicator again, nothing new made.
    const int after = m.comm_count();
    BOOST_TEST(m.cart_comm(periodic) == cart);
    BOOST_TEST(m.comm_count() == after);
    char name[MPI_MAX_OBJECT_NAME] = {};
    int len = 0;
    MPI_Comm_get_name(cart, name, &len);
    const bool plain_root = m.view().is_root() && std::none_of(periodic.begin(), periodic.end(), [](bool p) { return p; });
    // Named by the view that first asked for the grid (at one rank every
    // view of all size-1 dims has the root's grid).
    if (plain_root) BOOST_TEST(std::string(name) == "devmesh:cart");
    else BOOST_TEST(std::string(name).rfind("devmesh:cart", 0) == 0);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(cart_comm_of_every_view) {
  std::vector<int> s = shape3();
  for (const auto& shape : {s, std::vector<int>{s[2], s[0], s[1]}})
    for (const Case& c : views(shape))
      for (const auto& periodic : period_choices(c.ref.dims.size())) check_cart(c, periodic);
}

BOOST_AUTO_TEST_CASE(root_cart_is_the_old_grid) {
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  MPI_Comm cart = m.cart_comm();
  int rank = -1;
  MPI_Comm_rank(cart, &rank);
  BOOST_TEST(rank == world_rank());  // rank x is root index x
  BOOST_TEST(m.cart_comm({false, false}) == cart);  // all false is none
  // A 1-D slice's grid agrees with neighbors() through MPI_Cart_shift.
  for (bool per : {false, true}) {
    MPI_Comm line = m["a"].cart_comm({per});
    int src = -2, dst = -2;
    MPI_Cart_shift(line, 0, 1, &src, &dst);
    const Neighbors nb = m.neighbors("a", per);
    BOOST_TEST(src == nb.prev);
    BOOST_TEST(dst == nb.next);
  }
}

BOOST_AUTO_TEST_CASE(errors_alike_everywhere) {
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  const int count = m.comm_count();
  std::string message;
  const Status s1 = status_of([&] { m.cart_comm({true}); }, &message);
  BOOST_TEST((s1 == Status::invalid_argument));
  BOOST_TEST(message.find("1 periodic") != std::string::npos);
  BOOST_TEST(same_everywhere(static_cast<int>(s1)));
  const Status s2 = status_of([&] { m.neighbors("zz"); }, &message);
  BOOST_TEST((s2 == Status::unknown_dim));
  BOOST_TEST(message.find("'zz'") != std::string::npos);
  BOOST_TEST((status_of([&] { m.neighbors({}); }) == Status::invalid_argument));  // 2-D: a name is needed
  BOOST_TEST((status_of([&] { Mesh().neighbors("a"); }) == Status::not_member));
  BOOST_TEST((status_of([&] { Mesh().cart_comm(); }) == Status::not_member));
  BOOST_TEST(m.comm_count() == count);  // nothing made
}

BOOST_AUTO_TEST_CASE(all_groups_with_comm_brute_force) {
  const std::vector<int> s = shape3();
  for (const Case& c : views(s))
    for (std::size_t i = 0; i < c.ref.dims.size(); ++i) {
      const std::string dim = c.view.names()[i];
      BOOST_TEST_CONTEXT(c.view.view().to_string() << " dim " << dim) {
        const Groups g = c.view.all_groups_with_comm(dim);
        // Brute force: the distinct groups of every root index, by their
        // smallest member.
        std::vector<std::vector<int>> expect;
        for (int x = 0; x < c.ref.world(); ++x) {
          std::vector<int> grp = c.ref.group(x, {i});
          if (std::find(expect.begin(), expect.end(), grp) == expect.end()) expect.push_back(grp);
        }
        std::sort(expect.begin(), expect.end(), [](const auto& a, const auto& b) {
          return *std::min_element(a.begin(), a.end()) < *std::min_element(b.begin(), b.end());
        });
        BOOST_TEST(g.ranks == expect);
        BOOST_REQUIRE(g.own < g.ranks.size());
        BOOST_TEST(g.ranks[g.own] == c.ref.group(world_rank(), {i}));
        BOOST_TEST(g.comm == c.view.comm(dim));
        BOOST_TEST(members(g.comm) == g.ranks[g.own]);
      }
    }
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  BOOST_TEST((status_of([&] { m.all_groups_with_comm("zz"); }) == Status::unknown_dim));
}

BOOST_AUTO_TEST_CASE(unflatten_inferred_size) {
  const int p = world_size();
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {p}, {"w"});
  for (int f = 1; f <= p; ++f) {
    if (p % f) {
      BOOST_TEST((status_of([&] { m.unflatten("w", {f, -1}, {"u", "v"}); }) == Status::shape_mismatch));
      continue;
    }
    const Mesh u = m.unflatten("w", {-1, f}, {"u", "v"});
    BOOST_TEST((u.shape() == std::vector<int>{p / f, f}));
    // Brute force: v groups are runs of f consecutive ranks.
    std::vector<int> run(static_cast<std::size_t>(f));
    std::iota(run.begin(), run.end(), world_rank() / f * f);
    BOOST_TEST(u.group("v") == run);
    BOOST_TEST(members(u.comm("v")) == run);
  }
  BOOST_TEST((status_of([&] { m.unflatten("w", {-1, -1}, {"u", "v"}); }) == Status::shape_mismatch));
  BOOST_TEST((status_of([&] { m.unflatten("w", {-2, 1}, {"u", "v"}); }) == Status::invalid_argument));
}
