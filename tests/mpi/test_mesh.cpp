// The mesh on real MPI: every communicator holds exactly the group the model
// predicts, views share communicators, errors agree across ranks, nothing
// leaks. Runs at several rank counts; shapes adapt to the world size.
#define BOOST_TEST_MODULE mesh
#include "mpi_test.hpp"

#include <numeric>
#include <optional>
#include <set>

#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

// Checks dim's communicator against the model (group, rank) and with a real
// collective (every member learns every member's world rank).
void check_dim(const Mesh& m, const std::string& dim) {
  BOOST_TEST_CONTEXT("dim " << dim << " of " << m.view().to_string()) {
    MPI_Comm c = m.comm(dim);
    const std::vector<int> expect = m.group(dim);
    BOOST_TEST(members(c) == expect);
    int r = -1;
    MPI_Comm_rank(c, &r);
    BOOST_TEST(r == m.local_rank(dim));
    BOOST_TEST(expect[static_cast<std::size_t>(r)] == world_rank());
    std::vector<int> gathered(expect.size());
    int me = world_rank();
    MPI_Allgather(&me, 1, MPI_INT, gathered.data(), 1, MPI_INT, c);
    BOOST_TEST(gathered == expect);
    // The group is one of all_groups, and the coordinate matches.
    const auto all = m.all_groups(dim);
    BOOST_TEST(std::count(all.begin(), all.end(), expect) == 1);
  }
}

// All ordered factorisations of n into k factors >= 1.
void factorisations(int n, int k, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (k == 0) {
    if (n == 1) out.push_back(cur);
    return;
  }
  for (int f = 1; f <= n; ++f)
    if (n % f == 0) {
      cur.push_back(f);
      factorisations(n / f, k - 1, cur, out);
      cur.pop_back();
    }
}

const std::vector<std::string> names3 = {"a", "b", "c"};

// Number of distinct layouts (as groups go: coalesced) among dims.
int distinct(const std::vector<Layout>& layouts) {
  std::set<std::string> keys;
  for (const Layout& l : layouts) keys.insert(to_string(coalesce(l)));
  return static_cast<int>(keys.size());
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_factorisation_matches_the_model) {
  const int n = world_size();
  for (int k = 1; k <= 3; ++k) {
    std::vector<std::vector<int>> shapes;
    std::vector<int> cur;
    factorisations(n, k, cur, shapes);
    for (const auto& shape : shapes) {
      const long before = comm_counter::live();
      {
        std::vector<std::string> names(names3.begin(), names3.begin() + k);
        Mesh m = Mesh::create(MPI_COMM_WORLD, shape, names);
        for (const auto& d : names) check_dim(m, d);
        Mesh flat = m.flatten();
        check_dim(flat, flat.names()[0]);
        if (k == 3) {
          Mesh ac = m[{"a", "c"}].flatten();  // non-contiguous
          check_dim(ac, "a_c");
          Mesh ca = m[{"c", "a"}].flatten("ca");  // transposed
          check_dim(ca, "ca");
        }
        // coordinate agrees with the cartesian communicator
        MPI_Comm cart = m.cart_comm();
        std::vector<int> coords(static_cast<std::size_t>(k));
        int r = 0;
        MPI_Comm_rank(cart, &r);
        MPI_Cart_coords(cart, r, k, coords.data());
        BOOST_TEST(coords == m.coordinate());
      }
      BOOST_TEST(comm_counter::live() == before);  // all freed with the last view
    }
  }
}

BOOST_AUTO_TEST_CASE(views_reuse_communicators) {
  const int n = world_size();
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"dp", "cp", "tp"});
  const long start = comm_counter::created();
  const int root = comm_counter::at_creation;
  BOOST_TEST(m.comm_count() == root);  // creation makes no communicator
  MPI_Comm tp = m.comm("tp");
  BOOST_TEST(m.comm_count() == root + 1);
  Mesh sub = m[{"cp", "tp"}];
  BOOST_TEST(sub.comm("tp") == tp);
  BOOST_TEST(m["tp"].comm() == tp);
  BOOST_TEST(m.root().comm("tp") == tp);
  // A flattened dp_cp and its re-flatten share one communicator.
  MPI_Comm dpcp = m[{"dp", "cp"}].flatten().comm();
  MPI_Comm again = m[{"dp", "cp"}].flatten().comm();
  BOOST_TEST(again == dpcp);
  BOOST_TEST(m.root()[std::string_view("dp_cp")].comm() == dpcp);
  // Same layout through unflatten: dp_cp unflattened back gives dp and cp.
  Mesh back = m[{"dp", "cp"}].flatten().unflatten("dp_cp", {m.size("dp"), m.size("cp")}, {"x", "y"});
  BOOST_TEST(back.comm("x") == m.comm("dp"));
  // One communicator per distinct layout asked for (size-1 dims coalesce
  // to the same trivial layout), nothing else.
  const int layouts = distinct({m.view().dim("tp").layout, m[{"dp", "cp"}].flatten().view().dims()[0].layout,
                                m.view().dim("dp").layout});
  BOOST_TEST(m.comm_count() == root + layouts);
  BOOST_TEST(comm_counter::created() - start == layouts);
  (void)n;
}

// communicator(dim) gives one object per layout and backend: the same from
// every view with that dim, from copies and call after call; a view
// assigned over another answers for its new dims.
BOOST_AUTO_TEST_CASE(views_share_backend_communicators) {
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"dp", "cp", "tp"});
  Communicator& tp = m.communicator("tp");
  BOOST_TEST(&m.communicator("tp") == &tp);
  const Mesh sub = m[{"cp", "tp"}];
  BOOST_TEST(&sub.communicator("tp") == &tp);
  BOOST_TEST(&sub.root().communicator("tp") == &tp);
  BOOST_TEST(&m["tp"].communicator() == &tp);
  const Mesh copy = sub;
  BOOST_TEST(&copy.communicator("tp") == &tp);
  Communicator& dpcp = m[{"dp", "cp"}].flatten().communicator();
  Communicator& again = m[{"dp", "cp"}].flatten().communicator("dp_cp");
  BOOST_TEST(&again == &dpcp);
  BOOST_TEST(&m.root()[std::string_view("dp_cp")].communicator() == &dpcp);
  // Another root's dim first, then this root's view assigned over it.
  Mesh other = Mesh::create(MPI_COMM_WORLD, {0}, {"x"});
  Communicator& x = other.communicator("x");
  BOOST_TEST(&other.communicator() == &x);
  other = sub;
  BOOST_TEST(&other.communicator("tp") == &tp);
  BOOST_TEST(&other.communicator("cp") == &m.communicator("cp"));
  BOOST_TEST(status_of([&] { other.communicator("x"); }) == Status::unknown_dim);
  BOOST_TEST(status_of([&] { other.communicator(); }) == Status::invalid_argument);
  BOOST_TEST(status_of([] { Mesh().communicator("tp"); }) == Status::not_member);
  int one = 1, sum = 0;
  other.communicator("tp").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(sum == m.size("tp"));
}

BOOST_AUTO_TEST_CASE(concatenated_views_are_meshes) {
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"dp", "cp", "tp"});
  const Mesh dpcp = m[{"dp", "cp"}].flatten();
  const Mesh c = Mesh::concatenate({dpcp, m["tp"]});
  BOOST_TEST(c.names() == (std::vector<std::string>{"dp_cp", "tp"}));
  check_dim(c, "dp_cp");
  check_dim(c, "tp");
  BOOST_TEST(c.comm("dp_cp") == dpcp.comm());  // one communicator per layout
  BOOST_TEST(c.coordinate() == (std::vector<int>{dpcp.coordinate()[0], m.local_rank("tp")}));
  BOOST_TEST(c.same_root(m));
  // The null mesh and a twin root are refused, the same on every rank.
  BOOST_TEST(status_of([&] { Mesh::concatenate({c, Mesh()}); }) == Status::not_member);
  Mesh twin = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"dp", "cp", "tp"});
  BOOST_TEST(status_of([&] { Mesh::concatenate({m["tp"], twin["dp"]}); }) == Status::invalid_argument);
  BOOST_TEST(status_of([&] { Mesh::concatenate({}); }) == Status::invalid_argument);
}

BOOST_AUTO_TEST_CASE(rank_list_and_non_members) {
  const int n = world_size();
  const int me = world_rank();
  // Every rank but the last, in reverse order.
  const int w = n > 1 ? n - 1 : 1;
  std::vector<int> ranks;
  for (int r = w - 1; r >= 0; --r) ranks.push_back(r);
  const long before = comm_counter::live();
  {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {w}, {"x"}, ranks);
    if (me >= w) {
      BOOST_TEST(!m.is_member());
      BOOST_CHECK_THROW(m.comm("x"), Error);
      try {
        m.size();
      } catch (const Error& e) {
        BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::not_member));
      }
    } else {
      BOOST_TEST(m.is_member());
      BOOST_TEST(m.local_rank("x") == w - 1 - me);
      check_dim(m, "x");
    }
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(inconsistent_arguments_fail_everywhere) {
  const int n = world_size();
  if (n < 2) return;
  const long before = comm_counter::live();
  // Rank 0 names its dim differently.
  try {
    Mesh::create(MPI_COMM_WORLD, {n}, {world_rank() == 0 ? "p" : "q"});
    BOOST_FAIL("no error");
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::inconsistent));
  }
  // Rank 0 alone passes a bad shape: that is inconsistent too, not a hang.
  try {
    Mesh::create(MPI_COMM_WORLD, {world_rank() == 0 ? n + 1 : n}, {"p"});
    BOOST_FAIL("no error");
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::inconsistent));
  }
  // The same bad shape everywhere: the same specific error everywhere.
  try {
    Mesh::create(MPI_COMM_WORLD, {n + 1}, {"p"});
    BOOST_FAIL("no error");
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::shape_mismatch));
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(creation_paths_agree) {
  const int n = world_size();
  for (CommPath path : {CommPath::create_group, CommPath::split, CommPath::cart_sub}) {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"a", "b", "c"});
    Mesh ac = m[{"a", "c"}].flatten();
    m.create_comms(path);
    ac.create_comms(path);
    for (const auto& d : names3) check_dim(m, d);
    check_dim(ac, "a_c");
    const int layouts = distinct({m.view().dims()[0].layout, m.view().dims()[1].layout,
                                  m.view().dims()[2].layout, ac.view().dims()[0].layout});
    // Over MPI_COMM_WORLD (alive, all of it members) create_comms makes no
    // root communicator.
    // cart_sub makes the Cartesian communicator where some dim is a
    // sub-grid of it (size > 1).
    BOOST_TEST(m.comm_count() == comm_counter::at_creation + layouts + (path == CommPath::cart_sub && n > 1 ? 1 : 0));
  }
  (void)n;
}

namespace {

// dims, a mesh of them, and create_comms by path; returns the communicators
// made, after checking every dim's.
int created_by(MPI_Comm parent, const std::vector<int>& shape, const std::vector<int>& ranks, CommPath path) {
  Mesh m = ranks.empty() ? Mesh::create(parent, shape, {"a", "b"}) : Mesh::create(parent, shape, {"a", "b"}, ranks);
  if (!m.is_member()) return -1;
  m.create_comms(path);
  check_dim(m, "a");
  check_dim(m, "b");
  return m.comm_count() - distinct({m.view().dims()[0].layout, m.view().dims()[1].layout});
}

}  // namespace

// Where every parent rank is a member and the parent is alive, the calls
// over all members (the check, split, the root's Cartesian communicator)
// run over the parent; otherwise over the root communicator, made for them.
BOOST_AUTO_TEST_CASE(create_comms_over_the_parent_while_it_lives) {
  const int n = world_size();
  int dims[2] = {0, 0};
  MPI_Dims_create(n, 2, dims);
  const std::vector<int> shape{dims[0], dims[1]};
  std::vector<int> reversed(static_cast<std::size_t>(n));
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  const long before = comm_counter::live();
  for (CommPath path : {CommPath::create_group, CommPath::split, CommPath::cart_sub}) {
    BOOST_TEST_CONTEXT("path " << static_cast<int>(path)) {
      const int cart = path == CommPath::cart_sub && n > 1 ? 1 : 0;
      // Beyond the dims: the Cartesian communicator for cart_sub (where a
      // dim has size > 1: one of size 1 comes from its group).
      MPI_Comm parent = MPI_COMM_NULL;
      MPI_Comm_dup(MPI_COMM_WORLD, &parent);
      BOOST_TEST(created_by(parent, shape, {}, path) == comm_counter::at_creation + cart);
      // Root order other than the parent's: the check and split still run
      // over the parent; the Cartesian grid needs the root communicator.
      BOOST_TEST(created_by(parent, shape, reversed, path) == (cart ? 1 + cart : comm_counter::at_creation));
      // A parent freed before: the root communicator is made.
      Mesh m = Mesh::create(parent, shape, {"a", "b"});
      MPI_Comm_free(&parent);
      m.create_comms(path);
      check_dim(m, "a");
      check_dim(m, "b");
      BOOST_TEST(m.comm_count() - distinct({m.view().dims()[0].layout, m.view().dims()[1].layout}) == 1 + cart);
      // Some parent ranks are not members: the root communicator too.
      if (n > 1) {
        std::vector<int> some(static_cast<std::size_t>(n - 1));
        std::iota(some.begin(), some.end(), 1);
        const int made = created_by(MPI_COMM_WORLD, {1, n - 1}, some, path);
        if (world_rank() != 0) BOOST_TEST(made == 1 + (path == CommPath::cart_sub && n > 2 ? 1 : 0));
      }
    }
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(backend_collectives) {
  const int n = world_size();
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
  for (const std::string dim : {"a", "b"}) {
    Communicator& c = m.communicator(dim);
    const int k = c.size();
    const int r = c.rank();
    BOOST_TEST(k == m.size(dim));
    BOOST_TEST(r == m.local_rank(dim));
    BOOST_TEST(*static_cast<MPI_Comm*>(c.native_handle()) == m.comm(dim));
    const std::vector<int> g = m.group(dim);
    // allreduce: sum of world ranks of the group
    std::int64_t mine = world_rank(), sum = 0;
    c.allreduce(&mine, &sum, 1, DataType::int64, ReduceOp::sum);
    BOOST_TEST(sum == std::accumulate(g.begin(), g.end(), std::int64_t{0}));
    // allgather
    std::vector<std::int32_t> all(static_cast<std::size_t>(k));
    std::int32_t me32 = world_rank();
    c.allgather(&me32, all.data(), 1, DataType::int32);
    BOOST_TEST(all == std::vector<std::int32_t>(g.begin(), g.end()));
    // reduce_scatter: element i of rank j's send is j*100+i; rank i gets sum_j(j*100+i)
    std::vector<double> send(static_cast<std::size_t>(k)), got(1);
    for (int i = 0; i < k; ++i) send[static_cast<std::size_t>(i)] = r * 100.0 + i;
    c.reduce_scatter(send.data(), got.data(), 1, DataType::float64, ReduceOp::sum);
    BOOST_TEST(got[0] == 100.0 * k * (k - 1) / 2 + k * r);
    // broadcast from the last rank
    std::int32_t b = r == k - 1 ? 4242 : -1;
    c.broadcast(&b, 1, DataType::int32, k - 1);
    BOOST_TEST(b == 4242);
    // alltoall: send[j] = r*1000+j; recv[j] = j*1000+r
    std::vector<std::int32_t> s2(static_cast<std::size_t>(k)), r2(static_cast<std::size_t>(k));
    for (int j = 0; j < k; ++j) s2[static_cast<std::size_t>(j)] = r * 1000 + j;
    c.alltoall(s2.data(), r2.data(), 1, DataType::int32);
    for (int j = 0; j < k; ++j) BOOST_TEST(r2[static_cast<std::size_t>(j)] == j * 1000 + r);
    // ring send/recv
    if (k > 1) {
      std::int32_t out = r, in = -1;
      if (r % 2 == 0) {
        c.send(&out, 1, DataType::int32, (r + 1) % k);
        c.recv(&in, 1, DataType::int32, (r + k - 1) % k);
      } else {
        c.recv(&in, 1, DataType::int32, (r + k - 1) % k);
        c.send(&out, 1, DataType::int32, (r + 1) % k);
      }
      BOOST_TEST(in == (r + k - 1) % k);
    }
    c.barrier();
    // float16 cannot be reduced by MPI
    std::uint16_t h = 0;
    try {
      c.allreduce(&h, &h, 1, DataType::float16, ReduceOp::sum);
      BOOST_FAIL("no error");
    } catch (const Error& e) {
      BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::unsupported));
    }
  }
  (void)n;
}

BOOST_AUTO_TEST_CASE(create_comms_with_different_views_fails_everywhere) {
  const int n = world_size();
  if (n < 2) return;
  const long before = comm_counter::live();
  {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
    // Rank 0 asks for (a, b), the others for (b, a): same layouts, other
    // order, so the creations would not pair up.
    Mesh v = world_rank() == 0 ? m : m[{"b", "a"}];
    try {
      v.create_comms();
      BOOST_FAIL("no error");
    } catch (const Error& e) {
      BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::inconsistent));
    }
    // Different paths are caught too; then the same call works.
    try {
      m.create_comms(world_rank() == 0 ? CommPath::split : CommPath::create_group);
      BOOST_FAIL("no error");
    } catch (const Error& e) {
      BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::inconsistent));
    }
    m.create_comms(CommPath::split);
    check_dim(m, "a");
    check_dim(m, "b");
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(backend_options_must_agree) {
  if (world_size() < 2) return;
  // The example plugin (tests/install/backend) takes scale=N, agreed, and
  // label=TEXT, per rank.
  MeshOptions o;
  o.backend = "example";
  o.backend_options = {world_rank() == 0 ? "scale=5" : "scale=6"};
  try {
    Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o);
    BOOST_FAIL("no error");
  } catch (const Error& e) {
    BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::inconsistent));
    BOOST_TEST(std::string(e.what()).find("different backend options on rank 0 and rank 1") !=
                   std::string::npos,
               e.what());
  }
  // Options a backend takes per rank may differ; their order does not matter.
  MeshOptions d;
  d.backend = "example";
  d.backend_options = {"label=" + std::to_string(world_rank()), "scale=2"};
  if (world_rank() % 2) std::swap(d.backend_options[0], d.backend_options[1]);
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, d);
  int one = 1, sum = 0;
  m.communicator("x").allreduce(&one, &sum, 1, DataType::int32, ReduceOp::sum);
  BOOST_TEST(sum == 2 * world_size());  // scale=2 reached the backend
}

BOOST_AUTO_TEST_CASE(bad_backend_options_are_invalid_everywhere) {
  auto expect_invalid = [](const MeshOptions& o, const std::string& needle) {
    try {
      Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o);
      BOOST_FAIL("no error");
    } catch (const Error& e) {
      BOOST_TEST(static_cast<int>(e.status()) == static_cast<int>(Status::invalid_argument));
      BOOST_TEST(std::string(e.what()).find(needle) != std::string::npos, e.what());
    }
  };
  MeshOptions o;
  o.backend = "example";
  o.backend_options = {"scale=0"};
  expect_invalid(o, "scale needs a positive integer");
  o.backend_options = {"scale"};
  expect_invalid(o, "'scale' is not of the form key=value");
  o.backend_options = {"scale=1", "scale=2"};
  expect_invalid(o, "'scale' is given twice");
  o = {};
  o.dim_backends = {{"x", "example"}};
  o.dim_options = {{"x", "speed=9"}};
  expect_invalid(o, "no option 'speed'");
  o = {};
  o.backend_options = {"device=0"};
  expect_invalid(o, "backend 'mpi', options: takes no options (got");
}

// A mesh over some of the parent's ranks, in another order, outlives the
// parent too: where communicators come from the parent, its free makes the
// root communicator of the members only (the other rank takes no part).
BOOST_AUTO_TEST_CASE(rank_list_mesh_outlives_its_parent) {
  const int n = world_size();
  const long before = comm_counter::live();
  if (n >= 2) {
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &parent);
    std::vector<int> ranks(static_cast<std::size_t>(n - 1));
    std::iota(ranks.rbegin(), ranks.rend(), 1);  // n-1, ..., 1
    Mesh m = Mesh::create(parent, {n - 1}, {"x"}, ranks);
    BOOST_TEST(m.is_member() == (world_rank() != 0));
    MPI_Comm_free(&parent);
    if (m) {
      BOOST_TEST(m.comm_count() == comm_counter::at_parent_free);
      check_dim(m, "x");
      BOOST_TEST(m.comm_count() == comm_counter::at_parent_free + 1);
    }
  }
  BOOST_TEST(comm_counter::live() == before);
}

BOOST_AUTO_TEST_CASE(creation_makes_no_communicator_and_outlives_its_parent) {
  const long before = comm_counter::live();
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &parent);
  std::optional<Mesh> m;
  m.emplace(Mesh::create(parent, {0, 0}, {"a", "b"}));
  // The parent, and no communicator of the mesh's.
  BOOST_TEST(comm_counter::live() - before == 1);
  BOOST_TEST(m->comm_count() == 0);
  // Communicators are made from groups, or from the root communicator
  // that the parent's MPI_Comm_free leaves behind, so the parent may go.
  MPI_Comm_free(&parent);
  const int root = comm_counter::at_parent_free;
  BOOST_TEST(m->comm_count() == root);
  check_dim(*m, "a");
  check_dim(*m, "b");
  check_dim(m->flatten(), "a_b");
  BOOST_TEST(m->comm_count() == root + distinct({m->view().dims()[0].layout, m->view().dims()[1].layout,
                                                 m->flatten().view().dims()[0].layout}));
  // The root communicator is made on demand by a call over all members, or
  // exists already (made at the parent's free).
  const int before_cart = m->comm_count();
  m->cart_comm();
  BOOST_TEST(m->comm_count() == before_cart + (root ? 1 : 2));  // [root communicator +] Cartesian
  m.reset();
  BOOST_TEST(comm_counter::live() == before);
}
