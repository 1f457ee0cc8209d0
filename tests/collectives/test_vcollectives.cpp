// The variable-size, rooted and started collectives and batch of
// devmesh::Communicator (version 4 of the plugin interface) for one
// backend, named on the command line as test_collectives takes it:
//
//   test_vcollectives [boost options] -- BACKEND [key=value ...]
//
// Over every dim of a 2-D (3-D at 8 ranks) mesh and over flattened views:
// uneven counts with zeros, displacements in reversed order with gaps (the
// gaps hold a sentinel that must stay), every element compared with a
// brute-force reference each rank computes itself (the counts and values
// are functions of the seed and the group ranks, so every rank knows every
// rank's), in place, roots 0 and last, every started form against the
// blocking one (ended by wait, by polling test, and many at once by
// Request::wait_all), batch as a ring exchange, and bad input refused with
// invalid_argument before anything is written.
#define BOOST_TEST_MODULE vcollectives
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "devmesh/backend.hpp"
#include "devmesh/mesh.hpp"
#include "mpi_test.hpp"

namespace {

using devmesh::Communicator;
using devmesh::DataType;
using devmesh::Mesh;
using devmesh::ReduceOp;
using devmesh::Request;
using devmesh::Status;
using I = std::int64_t;
using Sizes = std::vector<std::size_t>;

constexpr I sentinel = -7777777;

std::string backend_name() {
  auto& suite = boost::unit_test::framework::master_test_suite();
  BOOST_TEST_REQUIRE(suite.argc >= 2, "usage: test_vcollectives -- BACKEND [key=value ...]");
  return suite.argv[1];
}

std::vector<std::string> backend_options() {
  auto& suite = boost::unit_test::framework::master_test_suite();
  return {suite.argv + std::min(suite.argc, 2), suite.argv + suite.argc};
}

// (2, 2, 2) at 8 ranks, (2, n/2) on another even world, (1, n) on an odd one.
Mesh backend_mesh() {
  devmesh::MeshOptions o;
  o.backend = backend_name();
  o.backend_options = backend_options();
  const int n = world_size();
  if (n == 8) return Mesh::create(MPI_COMM_WORLD, {2, 2, 2}, {"pp", "ep", "tp"}, o);
  return Mesh::create(MPI_COMM_WORLD, {n % 2 == 0 ? 2 : 1, n % 2 == 0 ? n / 2 : n}, {"ep", "tp"}, o);
}

// Every dim, the whole mesh flattened, and at 8 ranks ep x tp flattened.
std::vector<Mesh> groups(const Mesh& m) {
  std::vector<Mesh> out;
  for (const std::string& d : m.names()) out.push_back(m[d]);
  out.push_back(m.flatten());
  if (m.names().size() == 3) out.push_back(m[{"ep", "tp"}].flatten());
  return out;
}

// ---- the seeded inputs every rank can compute ---------------------------

// Elements rank a sends to rank b: 0 to 4 (times scale), zero often.
std::size_t count(int a, int b, int salt, std::size_t scale) {
  if ((a + 2 * b + salt) % 4 == 0) return 0;
  unsigned h = static_cast<unsigned>(a) * 73856093u ^ static_cast<unsigned>(b) * 19349663u ^
               static_cast<unsigned>(salt) * 83492791u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  return (h % 5) * scale;
}
// The same for a and b in either order (what in-place alltoallv needs).
std::size_t symmetric(int a, int b, int salt, std::size_t scale) {
  return count(std::min(a, b), std::max(a, b), salt, scale);
}
// Element i of what rank a sends to rank b.
I value(int a, int b, std::size_t i, int salt) {
  return I{a} * 1000000 + I{b} * 10000 + static_cast<I>(i) + I{salt} * 100000000;
}

// Displacements for counts: the last rank's segment first, then down to
// rank 0's, with a gap of 0 to 2 elements before each and after the last.
struct Placement {
  Sizes displs;
  std::size_t total;
};
Placement reversed(const Sizes& counts, int salt) {
  Placement p{Sizes(counts.size()), 0};
  std::size_t at = 1 + static_cast<std::size_t>(salt) % 2;
  for (std::size_t r = counts.size(); r-- > 0;) {
    p.displs[r] = at;
    at += counts[r] + (r + static_cast<std::size_t>(salt)) % 3;
  }
  p.total = at + 1;
  return p;
}

// A buffer of total elements, sentinel but the segments: segment r (counts[r]
// at displs[r]) holds f(r, i).
std::vector<I> placed(std::size_t total, const Sizes& counts, const Sizes& displs,
                      const std::function<I(int, std::size_t)>& f) {
  std::vector<I> b(total, sentinel);
  for (std::size_t r = 0; r < counts.size(); ++r)
    for (std::size_t i = 0; i < counts[r]; ++i) b[displs[r] + i] = f(static_cast<int>(r), i);
  return b;
}

void check_equal(const std::vector<I>& got, const std::vector<I>& want, const std::string& what) {
  BOOST_TEST_REQUIRE(got.size() == want.size(), what);
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      BOOST_TEST(false, what << ": element " << i << " is " << got[i] << ", expected " << want[i]);
      return;
    }
}

// ---- one operation, in every form ----------------------------------------

// An operation on fresh buffers: blocking, or started (ending its Request
// is the driver's), then its buffers checked against the reference.
struct Case {
  std::string name;
  std::function<void()> blocking;
  std::function<Request()> start;
  std::function<void()> check;
};

enum class Form { blocking, wait, poll };
const Form forms[] = {Form::blocking, Form::wait, Form::poll};
const char* form_name(Form f) {
  return f == Form::blocking ? "blocking" : f == Form::wait ? "started+wait" : "started+test";
}

void perform(const Case& k, Form f) {
  if (f == Form::blocking) return k.blocking();
  Request r = k.start();
  if (f == Form::wait)
    r.wait();
  else
    while (!r.test()) std::this_thread::yield();
  BOOST_TEST(!r.pending());
}

// The caller's arrays are scribbled over as soon as a started call returns:
// the operation must not need them afterwards.
Sizes scribbled(Sizes& a) {
  Sizes copy = a;
  std::fill(a.begin(), a.end(), std::size_t{987654321});
  return copy;
}

struct Setting {
  Communicator* c;
  int salt;
  std::size_t scale;
  bool in_place;
  int root;
};

// Each factory returns a Case over its own buffers (shared by the lambdas).
Case alltoallv_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank();
  struct State {
    Sizes sc, rc;
    Placement sp, rp;
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  for (int r = 0; r < n; ++r) {
    st->sc.push_back(s.in_place ? symmetric(me, r, s.salt, s.scale) : count(me, r, s.salt, s.scale));
    st->rc.push_back(s.in_place ? symmetric(r, me, s.salt, s.scale) : count(r, me, s.salt, s.scale));
  }
  st->sp = reversed(st->sc, s.salt);
  st->rp = reversed(st->rc, s.salt + 1);
  st->send = placed(st->sp.total, st->sc, st->sp.displs, [&](int r, std::size_t i) { return value(me, r, i, s.salt); });
  st->want = placed(st->rp.total, st->rc, st->rp.displs, [&](int r, std::size_t i) { return value(r, me, i, s.salt); });
  if (s.in_place)
    st->recv =
        placed(st->rp.total, st->rc, st->rp.displs, [&](int r, std::size_t i) { return value(me, r, i, s.salt); });
  else
    st->recv.assign(st->rp.total, sentinel);
  Case k{"alltoallv", {}, {}, {}};
  const bool ip = s.in_place;
  k.blocking = [&c, st, ip] {
    const I* in = ip ? st->recv.data() : st->send.data();
    c.alltoallv(in, ip ? Sizes{} : st->sc, ip ? Sizes{} : st->sp.displs, st->recv.data(), st->rc, st->rp.displs,
                DataType::int64);
  };
  k.start = [&c, st, ip] {
    Sizes sc = st->sc, sd = st->sp.displs, rc = st->rc, rd = st->rp.displs;
    const I* in = ip ? st->recv.data() : st->send.data();
    Request r = c.ialltoallv(in, ip ? Sizes{} : sc, ip ? Sizes{} : sd, st->recv.data(), rc, rd, DataType::int64);
    scribbled(sc), scribbled(sd), scribbled(rc), scribbled(rd);
    return r;
  };
  k.check = [st] { check_equal(st->recv, st->want, "alltoallv"); };
  return k;
}

Case allgatherv_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank();
  struct State {
    Sizes rc;
    Placement rp;
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  for (int r = 0; r < n; ++r) st->rc.push_back(count(r, r + 1, s.salt, s.scale));
  st->rp = reversed(st->rc, s.salt);
  for (std::size_t i = 0; i < st->rc[static_cast<std::size_t>(me)]; ++i) st->send.push_back(value(me, 0, i, s.salt));
  st->want = placed(st->rp.total, st->rc, st->rp.displs, [&](int r, std::size_t i) { return value(r, 0, i, s.salt); });
  st->recv.assign(st->rp.total, sentinel);
  const auto mine = static_cast<std::size_t>(me);
  if (s.in_place)
    std::copy(st->send.begin(), st->send.end(), st->recv.begin() + static_cast<std::ptrdiff_t>(st->rp.displs[mine]));
  const bool ip = s.in_place;
  auto in = [st, ip, mine]() -> const I* { return ip ? st->recv.data() + st->rp.displs[mine] : st->send.data(); };
  Case k{"allgatherv", {}, {}, {}};
  k.blocking = [&c, st, in, mine] {
    c.allgatherv(in(), st->rc[mine], st->recv.data(), st->rc, st->rp.displs, DataType::int64);
  };
  k.start = [&c, st, in, mine] {
    Sizes rc = st->rc, rd = st->rp.displs;
    Request r = c.iallgatherv(in(), st->rc[mine], st->recv.data(), rc, rd, DataType::int64);
    scribbled(rc), scribbled(rd);
    return r;
  };
  k.check = [st] { check_equal(st->recv, st->want, "allgatherv"); };
  return k;
}

// Block r of rank a's packed input: element i is (a + 1) * (i + 1) + r.
I reduced_input(int a, int r, std::size_t i) { return I{a + 1} * static_cast<I>(i + 1) + r; }

Case reduce_scatterv_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank();
  struct State {
    Sizes rc;
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  for (int r = 0; r < n; ++r) st->rc.push_back(count(r, 2 * r, s.salt, s.scale));
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < st->rc[static_cast<std::size_t>(r)]; ++i) st->send.push_back(reduced_input(me, r, i));
  const std::size_t mine = st->rc[static_cast<std::size_t>(me)];
  for (std::size_t i = 0; i < mine; ++i) {
    I sum = 0;
    for (int a = 0; a < n; ++a) sum += reduced_input(a, me, i);
    st->want.push_back(sum);
  }
  st->want.push_back(sentinel);  // the element after the result stays
  const bool ip = s.in_place;
  if (ip) {
    st->recv = st->send;
    st->recv.push_back(sentinel);
  } else {
    st->recv.assign(mine + 1, sentinel);
  }
  Case k{"reduce_scatterv", {}, {}, {}};
  k.blocking = [&c, st, ip] {
    c.reduce_scatterv(ip ? st->recv.data() : st->send.data(), st->recv.data(), st->rc, DataType::int64, ReduceOp::sum);
  };
  k.start = [&c, st, ip] {
    Sizes rc = st->rc;
    Request r =
        c.ireduce_scatterv(ip ? st->recv.data() : st->send.data(), st->recv.data(), rc, DataType::int64, ReduceOp::sum);
    scribbled(rc);
    return r;
  };
  k.check = [st, ip, mine] {
    if (!ip) return check_equal(st->recv, st->want, "reduce_scatterv");
    std::vector<I> got(st->recv.begin(), st->recv.begin() + static_cast<std::ptrdiff_t>(mine));
    std::vector<I> want(st->want.begin(), st->want.begin() + static_cast<std::ptrdiff_t>(mine));
    check_equal(got, want, "reduce_scatterv in place");
    BOOST_TEST(st->recv.back() == sentinel);
  };
  return k;
}

Case gather_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank(), root = s.root;
  const std::size_t k = 1 + s.scale;
  struct State {
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  for (std::size_t i = 0; i < k; ++i) st->send.push_back(value(me, root, i, s.salt));
  const bool at_root = me == root, ip = s.in_place && at_root;
  st->recv.assign(at_root ? k * static_cast<std::size_t>(n) + 1 : 1, sentinel);
  st->want = st->recv;
  if (at_root)
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < k; ++i) st->want[static_cast<std::size_t>(r) * k + i] = value(r, root, i, s.salt);
  if (ip)
    std::copy(st->send.begin(), st->send.end(),
              st->recv.begin() + static_cast<std::ptrdiff_t>(k * static_cast<std::size_t>(root)));
  auto in = [st, ip, k, root]() -> const I* {
    return ip ? st->recv.data() + k * static_cast<std::size_t>(root) : st->send.data();
  };
  Case c1{"gather", {}, {}, {}};
  c1.blocking = [&c, st, in, k, root, at_root] {
    c.gather(in(), at_root ? st->recv.data() : nullptr, k, DataType::int64, root);
  };
  c1.start = [&c, st, in, k, root, at_root] {
    return c.igather(in(), at_root ? st->recv.data() : nullptr, k, DataType::int64, root);
  };
  c1.check = [st] { check_equal(st->recv, st->want, "gather"); };
  return c1;
}

Case gatherv_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank(), root = s.root;
  struct State {
    Sizes rc;
    Placement rp;
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  for (int r = 0; r < n; ++r) st->rc.push_back(count(r, root, s.salt, s.scale));
  st->rp = reversed(st->rc, s.salt);
  const auto mine = static_cast<std::size_t>(me), rt = static_cast<std::size_t>(root);
  for (std::size_t i = 0; i < st->rc[mine]; ++i) st->send.push_back(value(me, root, i, s.salt));
  const bool at_root = me == root, ip = s.in_place && at_root;
  if (at_root) {
    st->want =
        placed(st->rp.total, st->rc, st->rp.displs, [&](int r, std::size_t i) { return value(r, root, i, s.salt); });
    st->recv.assign(st->rp.total, sentinel);
  } else {
    st->recv.assign(1, sentinel);
    st->want = st->recv;
  }
  if (ip)
    std::copy(st->send.begin(), st->send.end(), st->recv.begin() + static_cast<std::ptrdiff_t>(st->rp.displs[rt]));
  auto in = [st, ip, rt]() -> const I* { return ip ? st->recv.data() + st->rp.displs[rt] : st->send.data(); };
  Case k{"gatherv", {}, {}, {}};
  // Other ranks pass no arrays and no receive buffer (root-only arguments).
  k.blocking = [&c, st, in, mine, root, at_root] {
    c.gatherv(in(), st->rc[mine], at_root ? st->recv.data() : nullptr, at_root ? st->rc : Sizes{},
              at_root ? st->rp.displs : Sizes{}, DataType::int64, root);
  };
  k.start = [&c, st, in, mine, root, at_root] {
    Sizes rc = at_root ? st->rc : Sizes{}, rd = at_root ? st->rp.displs : Sizes{};
    Request r = c.igatherv(in(), st->rc[mine], at_root ? st->recv.data() : nullptr, rc, rd, DataType::int64, root);
    scribbled(rc), scribbled(rd);
    return r;
  };
  k.check = [st] { check_equal(st->recv, st->want, "gatherv"); };
  return k;
}

Case scatter_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank(), root = s.root;
  const std::size_t k = 1 + s.scale;
  const bool at_root = me == root, ip = s.in_place && at_root;
  struct State {
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  if (at_root)
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < k; ++i) st->send.push_back(value(root, r, i, s.salt));
  st->recv.assign(k + 1, sentinel);
  st->want = st->recv;
  for (std::size_t i = 0; i < k; ++i) st->want[i] = value(root, me, i, s.salt);
  if (ip) {
    st->want = st->send;  // the root's buffer is unchanged
    st->recv = st->send;
  }
  const auto rt = static_cast<std::size_t>(root);
  auto out = [st, ip, k, rt]() -> I* { return ip ? st->recv.data() + k * rt : st->recv.data(); };
  auto in = [st, ip, at_root]() -> const I* { return !at_root ? nullptr : ip ? st->recv.data() : st->send.data(); };
  Case c1{"scatter", {}, {}, {}};
  c1.blocking = [&c, in, out, k, root] { c.scatter(in(), out(), k, DataType::int64, root); };
  c1.start = [&c, in, out, k, root] { return c.iscatter(in(), out(), k, DataType::int64, root); };
  c1.check = [st] { check_equal(st->recv, st->want, "scatter"); };
  return c1;
}

Case scatterv_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank(), root = s.root;
  const bool at_root = me == root, ip = s.in_place && at_root;
  struct State {
    Sizes sc;
    Placement sp;
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  for (int r = 0; r < n; ++r) st->sc.push_back(count(root, r, s.salt, s.scale));
  st->sp = reversed(st->sc, s.salt);
  const auto mine = static_cast<std::size_t>(me), rt = static_cast<std::size_t>(root);
  if (at_root)
    st->send =
        placed(st->sp.total, st->sc, st->sp.displs, [&](int r, std::size_t i) { return value(root, r, i, s.salt); });
  st->recv.assign(st->sc[mine] + 1, sentinel);
  st->want = st->recv;
  for (std::size_t i = 0; i < st->sc[mine]; ++i) st->want[i] = value(root, me, i, s.salt);
  if (ip) st->recv = st->want = st->send;  // the root's buffer is unchanged
  auto out = [st, ip, rt]() -> I* { return ip ? st->recv.data() + st->sp.displs[rt] : st->recv.data(); };
  auto in = [st, ip, at_root]() -> const I* { return !at_root ? nullptr : ip ? st->recv.data() : st->send.data(); };
  Case k{"scatterv", {}, {}, {}};
  k.blocking = [&c, st, in, out, mine, root, at_root] {
    c.scatterv(in(), at_root ? st->sc : Sizes{}, at_root ? st->sp.displs : Sizes{}, out(), st->sc[mine],
               DataType::int64, root);
  };
  k.start = [&c, st, in, out, mine, root, at_root] {
    Sizes sc = at_root ? st->sc : Sizes{}, sd = at_root ? st->sp.displs : Sizes{};
    Request r = c.iscatterv(in(), sc, sd, out(), st->sc[mine], DataType::int64, root);
    scribbled(sc), scribbled(sd);
    return r;
  };
  k.check = [st] { check_equal(st->recv, st->want, "scatterv"); };
  return k;
}

Case reduce_case(const Setting& s) {
  Communicator& c = *s.c;
  const int n = c.size(), me = c.rank(), root = s.root;
  const std::size_t k = 1 + 3 * s.scale;
  const bool at_root = me == root, ip = s.in_place && at_root;
  struct State {
    std::vector<I> send, recv, want;
  };
  auto st = std::make_shared<State>();
  for (std::size_t i = 0; i < k; ++i) st->send.push_back(reduced_input(me, s.salt, i));
  st->recv.assign(k + 1, sentinel);  // untouched but at the root
  st->want = st->recv;
  if (at_root)
    for (std::size_t i = 0; i < k; ++i) {
      I sum = 0;
      for (int a = 0; a < n; ++a) sum += reduced_input(a, s.salt, i);
      st->want[i] = sum;
    }
  if (ip) std::copy(st->send.begin(), st->send.end(), st->recv.begin());
  auto in = [st, ip]() -> const I* { return ip ? st->recv.data() : st->send.data(); };
  Case c1{"reduce", {}, {}, {}};
  c1.blocking = [&c, st, in, k, root] { c.reduce(in(), st->recv.data(), k, DataType::int64, ReduceOp::sum, root); };
  c1.start = [&c, st, in, k, root] {
    return c.ireduce(in(), st->recv.data(), k, DataType::int64, ReduceOp::sum, root);
  };
  c1.check = [st] { check_equal(st->recv, st->want, "reduce"); };
  return c1;
}

using Factory = Case (*)(const Setting&);
const Factory unrooted[] = {alltoallv_case, allgatherv_case, reduce_scatterv_case};
const Factory rooted[] = {gather_case, gatherv_case, scatter_case, scatterv_case, reduce_case};

// Every factory's Cases for one group: scales 1 and 97 (past the eager
// limit), in place or not, roots 0 and last.
std::vector<Case> cases_of(Communicator& c, int salt) {
  std::vector<Case> out;
  for (std::size_t scale : {std::size_t{1}, std::size_t{97}})
    for (bool in_place : {false, true}) {
      for (Factory f : unrooted) out.push_back(f({&c, salt, scale, in_place, 0}));
      for (int root : {0, c.size() - 1})
        for (Factory f : rooted) out.push_back(f({&c, salt + root, scale, in_place, root}));
    }
  return out;
}

BOOST_AUTO_TEST_CASE(every_operation_every_form) {
  Mesh m = backend_mesh();
  int salt = 0;
  for (const Mesh& g : groups(m)) {
    Communicator& c = g.communicator();
    for (Form f : forms) {
      ++salt;
      const std::vector<Case> cs = cases_of(c, salt);
      for (std::size_t i = 0; i < cs.size(); ++i) {
        BOOST_TEST_CONTEXT(g.names()[0] << " (" << c.size() << " ranks) " << cs[i].name << " #" << i << " "
                                        << form_name(f)) {
          perform(cs[i], f);
          cs[i].check();
        }
      }
    }
  }
}

// Every Case of a group started before any ends, all ended by wait_all.
BOOST_AUTO_TEST_CASE(many_in_flight) {
  Mesh m = backend_mesh();
  for (const Mesh& g : groups(m)) {
    Communicator& c = g.communicator();
    const std::vector<Case> cs = cases_of(c, 40);
    std::vector<Request> rs;
    for (const Case& k : cs) rs.push_back(k.start());
    Request::wait_all(rs);
    for (std::size_t i = 0; i < cs.size(); ++i) {
      BOOST_TEST(!rs[i].pending());
      BOOST_TEST_CONTEXT(g.names()[0] << " " << cs[i].name << " #" << i) cs[i].check();
    }
  }
}

// Version 1's collectives, started, give the bytes of their blocking forms
// (ended by wait, and by polling test), in place too.
BOOST_AUTO_TEST_CASE(started_v1_collectives_match_blocking) {
  Mesh m = backend_mesh();
  for (const Mesh& g : groups(m)) {
    Communicator& c = g.communicator();
    const auto n = static_cast<std::size_t>(c.size()), me = static_cast<std::size_t>(c.rank());
    for (Form f : {Form::wait, Form::poll}) {
      BOOST_TEST_CONTEXT(g.names()[0] << " " << form_name(f)) {
        const std::size_t k = 37;
        std::vector<I> in(k * n), a(k * n, sentinel), b(k * n, sentinel);
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = value(static_cast<int>(me), 3, i, 5);
        auto finish = [f](Request r) {
          if (f == Form::wait)
            r.wait();
          else
            while (!r.test()) std::this_thread::yield();
        };
        c.allreduce(in.data(), a.data(), k, DataType::int64, ReduceOp::max);
        finish(c.iallreduce(in.data(), b.data(), k, DataType::int64, ReduceOp::max));
        check_equal(b, a, "iallreduce");
        std::vector<I> ip = in;
        finish(c.iallreduce(ip.data(), ip.data(), k, DataType::int64, ReduceOp::max));
        check_equal({ip.begin(), ip.begin() + k}, {a.begin(), a.begin() + k}, "iallreduce in place");
        c.allgather(in.data(), a.data(), k, DataType::int64);
        finish(c.iallgather(in.data(), b.data(), k, DataType::int64));
        check_equal(b, a, "iallgather");
        std::vector<I> ag(k * n, sentinel);
        std::copy(in.begin(), in.begin() + k, ag.begin() + k * me);
        finish(c.iallgather(ag.data() + k * me, ag.data(), k, DataType::int64));
        check_equal(ag, a, "iallgather in place");
        c.reduce_scatter(in.data(), a.data(), k, DataType::int64, ReduceOp::sum);
        finish(c.ireduce_scatter(in.data(), b.data(), k, DataType::int64, ReduceOp::sum));
        check_equal({b.begin(), b.begin() + k}, {a.begin(), a.begin() + k}, "ireduce_scatter");
        c.alltoall(in.data(), a.data(), k, DataType::int64);
        finish(c.ialltoall(in.data(), b.data(), k, DataType::int64));
        check_equal(b, a, "ialltoall");
        ip = in;
        finish(c.ialltoall(ip.data(), ip.data(), k, DataType::int64));
        check_equal(ip, a, "ialltoall in place");
        for (int root : {0, c.size() - 1}) {
          std::vector<I> x = in, y = in;
          c.broadcast(x.data(), k, DataType::int64, root);
          finish(c.ibroadcast(y.data(), k, DataType::int64, root));
          check_equal(y, x, "ibroadcast root " + std::to_string(root));
        }
        finish(c.ibarrier());
      }
    }
  }
}

// Gloo has no connection to a rank's own self (docs/BACKENDS.md).
bool claims_self_messages(const std::string& backend) { return backend != "gloo"; }

// A ring both ways in one batch: two receives and two sends, sizes uneven
// per direction, and a MPI_PROC_NULL entry, all ended by one Request.
BOOST_AUTO_TEST_CASE(batch_ring) {
  const std::string b = backend_name();
  Mesh m = backend_mesh();
  for (const Mesh& g : groups(m)) {
    Communicator& c = g.communicator();
    const int n = c.size(), me = c.rank();
    if (n == 1 && !claims_self_messages(b)) continue;
    const int next = (me + 1) % n, prev = (me + n - 1) % n;
    for (Form f : {Form::wait, Form::poll}) {
      BOOST_TEST_CONTEXT(g.names()[0] << " (" << n << " ranks) " << form_name(f)) {
        auto len = [](int from, int dir) { return static_cast<std::size_t>(3 + 40 * ((from + dir) % 3)); };
        auto msg = [&](int from, int dir) {
          std::vector<I> v(len(from, dir));
          for (std::size_t i = 0; i < v.size(); ++i) v[i] = value(from, dir, i, 9);
          return v;
        };
        std::vector<I> to_next = msg(me, 1), to_prev = msg(me, 2);
        std::vector<I> from_prev(len(prev, 1), sentinel), from_next(len(next, 2), sentinel);
        std::vector<I> nothing(4, sentinel);
        const Communicator::P2P ops[] = {
            {false, prev, from_prev.data(), from_prev.size(), DataType::int64},
            {false, next, from_next.data(), from_next.size(), DataType::int64},
            {false, MPI_PROC_NULL, nothing.data(), nothing.size(), DataType::int64},
            {true, next, to_next.data(), to_next.size(), DataType::int64},
            {true, prev, to_prev.data(), to_prev.size(), DataType::int64},
        };
        Request r = c.batch(ops);
        if (f == Form::wait)
          r.wait();
        else
          while (!r.test()) std::this_thread::yield();
        check_equal(from_prev, msg(prev, 1), "from prev");
        check_equal(from_next, msg(next, 2), "from next");
        check_equal(nothing, std::vector<I>(4, sentinel), "MPI_PROC_NULL");
      }
    }
    c.barrier();
  }
}

// The displacement of an empty block is not read (as in MPI): junk there,
// beyond what any buffer or MPI's signed displacements could hold, changes
// nothing, blocking and started alike. Every rank sends one element to the
// peers of odd group rank and nothing to the others (itself excepted,
// whose block must match on both sides).
BOOST_AUTO_TEST_CASE(empty_blocks_displacements_unread) {
  const std::size_t junk[] = {std::numeric_limits<std::size_t>::max(), std::size_t{1} << 62,
                              (std::size_t{1} << 63) + 5};
  Mesh m = backend_mesh();
  for (const Mesh& g : groups(m)) {
    Communicator& c = g.communicator();
    const int n = c.size(), me = c.rank();
    Sizes counts(n), displs(n);
    Sizes rcounts(n), rdispls(n);  // what each peer sends this rank: one element if this rank is odd
    std::vector<I> send(n, sentinel), want(n, sentinel);
    for (int r = 0; r < n; ++r) {
      counts[r] = r % 2 == 1 || r == me ? 1 : 0;
      displs[r] = counts[r] ? static_cast<std::size_t>(r) : junk[r % 3];
      rcounts[r] = me % 2 == 1 || r == me ? 1 : 0;
      rdispls[r] = rcounts[r] ? static_cast<std::size_t>(r) : junk[(r + 1) % 3];
      if (counts[r]) send[r] = value(me, r, 0, 3);
      if (rcounts[r]) want[r] = value(r, me, 0, 3);
    }
    for (Form f : forms) {
      BOOST_TEST_CONTEXT(g.names()[0] << " alltoallv " << form_name(f)) {
        std::vector<I> recv(n, sentinel);
        perform(
            {"alltoallv",
             [&] { c.alltoallv(send.data(), counts, displs, recv.data(), rcounts, rdispls, DataType::int64); },
             [&] { return c.ialltoallv(send.data(), counts, displs, recv.data(), rcounts, rdispls, DataType::int64); },
             {}},
            f);
        check_equal(recv, want, "recv");
      }
    }
  }
}

// Bad input: invalid_argument on every rank (the same everywhere, nothing
// communicated), the receive buffer untouched, blocking and started alike.
BOOST_AUTO_TEST_CASE(bad_input) {
  Mesh m = backend_mesh();
  for (const Mesh& g : groups(m)) {
    Communicator& c = g.communicator();
    const auto n = static_cast<std::size_t>(c.size()), me = static_cast<std::size_t>(c.rank());
    Sizes ones(n, 1), displs(n);
    std::iota(displs.begin(), displs.end(), std::size_t{0});
    const Sizes short_counts(n - 1, 1), long_counts(n + 1, 1);
    Sizes overflow = displs;
    overflow[n - 1] = std::numeric_limits<std::size_t>::max();
    Sizes mismatched = ones;
    mismatched[me] = 2;
    Sizes past_ptrdiff = ones;  // int8: 2^63 bytes fit size_t, not ptrdiff_t
    past_ptrdiff[n - 1] = std::size_t{1} << 63;
    std::vector<I> send(2 * n + 2, 5);
    const std::vector<I> fresh(2 * n + 2, sentinel);
    std::vector<I> recv = fresh;
    const auto t = DataType::int64;
    const std::pair<const char*, std::function<void()>> cases[] = {
        {"alltoallv short sendcounts",
         [&] { c.alltoallv(send.data(), short_counts, displs, recv.data(), ones, displs, t); }},
        {"alltoallv long recvcounts",
         [&] { c.alltoallv(send.data(), ones, displs, recv.data(), long_counts, displs, t); }},
        {"alltoallv rdispls overflow", [&] { c.alltoallv(send.data(), ones, displs, recv.data(), ones, overflow, t); }},
        {"alltoallv int8 block past PTRDIFF_MAX elements",
         [&] { c.alltoallv(send.data(), ones, displs, recv.data(), past_ptrdiff, displs, DataType::int8); }},
        {"alltoallv NULL recv", [&] { c.alltoallv(send.data(), ones, displs, nullptr, ones, displs, t); }},
        {"alltoallv NULL send", [&] { c.alltoallv(nullptr, ones, displs, recv.data(), ones, displs, t); }},
        {"alltoallv sendcounts[rank] != recvcounts[rank]",
         [&] { c.alltoallv(send.data(), mismatched, displs, recv.data(), ones, displs, t); }},
        {"ialltoallv short rdispls",
         [&] { (void)c.ialltoallv(send.data(), ones, displs, recv.data(), ones, short_counts, t); }},
        {"allgatherv short recvcounts", [&] { c.allgatherv(send.data(), 1, recv.data(), short_counts, displs, t); }},
        {"allgatherv sendcount != recvcounts[rank]",
         [&] { c.allgatherv(send.data(), 2, recv.data(), ones, displs, t); }},
        {"iallgatherv rdispls overflow", [&] { (void)c.iallgatherv(send.data(), 1, recv.data(), ones, overflow, t); }},
        {"reduce_scatterv long recvcounts",
         [&] { c.reduce_scatterv(send.data(), recv.data(), long_counts, t, ReduceOp::sum); }},
        {"reduce_scatterv NULL send", [&] { c.reduce_scatterv(nullptr, recv.data(), ones, t, ReduceOp::sum); }},
        {"scatterv NULL recv", [&] { c.scatterv(send.data(), ones, displs, nullptr, 1, t, 0); }},
        {"igather bad root", [&] { (void)c.igather(send.data(), recv.data(), 1, t, c.size()); }},
        {"reduce NULL send", [&] { c.reduce(nullptr, recv.data(), 1, t, ReduceOp::sum, 0); }},
    };
    for (const auto& [what, f] : cases) {
      BOOST_TEST_CONTEXT(g.names()[0] << ": " << what) {
        std::string message;
        const Status s = status_of(f, &message);
        BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::invalid_argument), message);
        BOOST_TEST(!message.empty());
        BOOST_TEST(same_everywhere(static_cast<int>(s)));
        check_equal(recv, fresh, "recv");
      }
    }
    // The communicator works afterwards.
    c.alltoallv(send.data(), ones, displs, recv.data(), ones, displs, t);
    BOOST_TEST(recv[0] == 5);
  }
}

}  // namespace
