// The Gloo plugin's version 4 members, driven through its devmesh_backend_v4
// table (dlopen, as plugin_conformance.cpp): every member, blocking and
// started (ended by wait, or by test polled), against a brute-force
// reference computed on every rank from the element formula (uneven counts
// with zeros, gapped and reordered segments whose gaps must stay untouched,
// in place, every root); no MPI call on the data path (the PMPI counter of
// tests/support/comm_counter.cpp); a started operation returns while a peer
// enters late; a revoke ends a pending one with the status it carried.
//
//   plugin_v4 -- PLUGIN.so [key=value ...]
#define BOOST_TEST_MODULE plugin_v4
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "comm_counter.hpp"
#include "devmesh/backend_plugin.h"
#include "mpi_test.hpp"

namespace {

const devmesh_backend_v4_t* table = nullptr;
std::vector<std::string> option_keys, option_values;

const devmesh_backend_v4_t& v4() {
  if (table != nullptr) return *table;
  auto& suite = boost::unit_test::framework::master_test_suite();
  BOOST_TEST_REQUIRE(suite.argc >= 2, "usage: plugin_v4 -- PLUGIN.so [key=value ...]");
  void* h = dlopen(suite.argv[1], RTLD_NOW | RTLD_LOCAL);
  BOOST_TEST_REQUIRE(h != nullptr, (h ? "" : dlerror()));
  table = static_cast<const devmesh_backend_v4_t*>(dlsym(h, DEVMESH_BACKEND_SYMBOL_V4));
  BOOST_TEST_REQUIRE(table != nullptr);
  for (int i = 2; i < suite.argc; ++i) {
    std::string kv = suite.argv[i];
    auto eq = kv.find('=');
    BOOST_TEST_REQUIRE(eq != std::string::npos);
    option_keys.push_back(kv.substr(0, eq));
    option_values.push_back(kv.substr(eq + 1));
  }
  if (table->v3.init_host) BOOST_TEST_REQUIRE(table->v3.init_host(devmesh_backend_host()) == DEVMESH_SUCCESS);
  return *table;
}
const devmesh_backend_v2_t& v2() { return v4().v3.v2; }
const devmesh_backend_v1_t& v1() { return v4().v3.v2.v1; }

// A group's communicator in the plugin (comm_prepare, then comm_connect).
struct Group {
  MPI_Comm mpi = MPI_COMM_NULL;
  void* instance = nullptr;
  void* comm = nullptr;
  int rank = 0, size = 0;
  Group(MPI_Comm parent, int color) {
    MPI_Comm_split(parent, color, 0, &mpi);
    MPI_Comm_rank(mpi, &rank);
    MPI_Comm_size(mpi, &size);
    std::vector<const char*> k, v;
    for (std::size_t i = 0; i < option_keys.size(); ++i) {
      k.push_back(option_keys[i].c_str());
      v.push_back(option_values[i].c_str());
    }
    BOOST_TEST_REQUIRE(v1().open(static_cast<int>(k.size()), k.data(), v.data(), &instance) == DEVMESH_SUCCESS);
    devmesh_backend_group_t g{};
    g.size = sizeof g;
    g.group = mpi;
    g.root = MPI_COMM_NULL;
    void* prepared = nullptr;
    int rc = v4().v3.comm_prepare(instance, &g, &prepared);
    if (rc == DEVMESH_SUCCESS) rc = v4().v3.comm_connect(prepared, &comm);
    BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, v1().last_error());
  }
  ~Group() {
    v1().comm_destroy(comm);
    v1().close(instance);
    MPI_Comm_free(&mpi);
  }
  std::size_t n() const { return static_cast<std::size_t>(size); }
  std::size_t me() const { return static_cast<std::size_t>(rank); }
};

// How an operation is run: blocking (request NULL), started then waited
// for, or started then polled with test.
enum Mode { blocking, started_wait, started_test };
const Mode modes[] = {blocking, started_wait, started_test};

// Runs f(request) in mode m and ends its request; the status.
template <class F>
int call(Mode m, F&& f) {
  if (m == blocking) return f(nullptr);
  void* request = reinterpret_cast<void*>(0x1);
  int rc = f(&request);
  if (rc != DEVMESH_SUCCESS) return rc;
  if (request == nullptr) return DEVMESH_SUCCESS;
  if (m == started_wait) return v2().wait(request);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (int done = 0; std::chrono::steady_clock::now() < until;) {
    rc = v2().test(request, &done);
    if (rc != DEVMESH_SUCCESS || done) return rc;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return v2().wait(request);  // past the bound: fail loudly below
}

// ---- layouts and patterns ------------------------------------------------

using Sizes = std::vector<std::size_t>;
constexpr unsigned char kGap = 0x5a;

// Displacements for counts: packed (prefix sums) or gapped (in reverse rank
// order, a gap before each block); the buffer's length in elements.
Sizes displs_of(const Sizes& counts, bool gapped, std::size_t* length) {
  Sizes d(counts.size());
  std::size_t at = 0;
  if (!gapped) {
    for (std::size_t r = 0; r < counts.size(); ++r) d[r] = at, at += counts[r];
  } else {
    for (std::size_t r = counts.size(); r-- > 0;) d[r] = at + 1 + r % 2, at = d[r] + counts[r];
    at += 2;
  }
  *length = at;
  return d;
}

// Byte b of element e of the block from rank src meant for rank dst.
unsigned char pat(std::size_t src, std::size_t dst, std::size_t e, std::size_t b) {
  return static_cast<unsigned char>((src * 37 + dst * 11 + e * 5 + b + 1) % 251);
}
void fill_block(unsigned char* p, std::size_t count, std::size_t es, std::size_t src, std::size_t dst) {
  for (std::size_t e = 0; e < count; ++e)
    for (std::size_t b = 0; b < es; ++b) p[e * es + b] = pat(src, dst, e, b);
}

// The whole expected buffer: block r (counts[r] at displs[r]) from
// (src(r), dst(r)), kGap elsewhere; and how many bytes of got differ.
template <class Src, class Dst>
std::vector<unsigned char> expected(std::size_t length, std::size_t es, const Sizes& counts, const Sizes& displs,
                                    Src src, Dst dst) {
  std::vector<unsigned char> out(length * es, kGap);
  for (std::size_t r = 0; r < counts.size(); ++r)
    fill_block(out.data() + displs[r] * es, counts[r], es, src(r), dst(r));
  return out;
}
std::size_t differing(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  std::size_t bad = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) bad += a[i] != b[i];
  return bad;
}

struct Type {
  int id;
  const char* name;
  std::size_t size;
};
const Type movers[] = {{DEVMESH_UINT8, "uint8", 1}, {DEVMESH_INT32, "int32", 4}, {DEVMESH_FLOAT64, "float64", 8}};

// ---- the checks, each over one group, every mode --------------------------

void check_alltoallv(Group& g, const Type& t, bool gapped, bool in_place, Mode m) {
  BOOST_TEST_CONTEXT("alltoallv " << t.name << (gapped ? " gapped" : " packed") << (in_place ? " in place" : "")
                                  << " mode " << m) {
    const std::size_t n = g.n(), me = g.me(), es = t.size;
    Sizes sc(n), rc(n);
    for (std::size_t j = 0; j < n; ++j) {
      sc[j] = in_place ? (me + j) % 3 : (me + 2 * j) % 3;  // symmetric in place
      rc[j] = in_place ? (j + me) % 3 : (j + 2 * me) % 3;
    }
    std::size_t slen = 0, rlen = 0;
    Sizes sd = displs_of(sc, gapped, &slen), rd = displs_of(rc, !gapped, &rlen);
    if (in_place) sd = rd, slen = rlen;
    std::vector<unsigned char> send(slen * es, kGap), recv(rlen * es, kGap);
    auto& src = in_place ? recv : send;
    for (std::size_t j = 0; j < n; ++j) fill_block(src.data() + sd[j] * es, sc[j], es, me, j);
    const void* sp = in_place ? recv.data() : send.data();
    int rc_ = call(m, [&](void** q) {
      return v4().alltoallv(g.comm, sp, in_place ? nullptr : sc.data(), in_place ? nullptr : sd.data(), recv.data(),
                            rc.data(), rd.data(), t.id, nullptr, q);
    });
    BOOST_TEST_REQUIRE(rc_ == DEVMESH_SUCCESS, v1().last_error());
    auto want = expected(
        rlen, es, rc, rd, [](std::size_t r) { return r; }, [&](std::size_t) { return me; });
    BOOST_TEST(differing(recv, want) == 0u);
  }
}

void check_allgatherv(Group& g, const Type& t, bool gapped, bool in_place, Mode m) {
  BOOST_TEST_CONTEXT("allgatherv " << t.name << (gapped ? " gapped" : " packed") << (in_place ? " in place" : "")
                                   << " mode " << m) {
    const std::size_t n = g.n(), me = g.me(), es = t.size;
    Sizes rc(n);
    for (std::size_t r = 0; r < n; ++r) rc[r] = (r + 2) % 3;
    std::size_t len = 0;
    const Sizes rd = displs_of(rc, gapped, &len);
    std::vector<unsigned char> send(rc[me] * es), recv(len * es, kGap);
    fill_block(send.data(), rc[me], es, me, 0);
    const unsigned char* sp = send.data();
    if (in_place) {
      std::memcpy(recv.data() + rd[me] * es, send.data(), send.size());
      sp = recv.data() + rd[me] * es;
    }
    int rc_ = call(m, [&](void** q) {
      return v4().allgatherv(g.comm, sp, rc[me], recv.data(), rc.data(), rd.data(), t.id, nullptr, q);
    });
    BOOST_TEST_REQUIRE(rc_ == DEVMESH_SUCCESS, v1().last_error());
    auto want = expected(
        len, es, rc, rd, [](std::size_t r) { return r; }, [](std::size_t) { return 0u; });
    BOOST_TEST(differing(recv, want) == 0u);
  }
}

void check_gather_scatter(Group& g, const Type& t, int root, bool in_place, Mode m) {
  BOOST_TEST_CONTEXT("gather/scatter " << t.name << " root " << root << (in_place ? " in place" : "") << " mode "
                                       << m) {
    const std::size_t n = g.n(), me = g.me(), es = t.size, count = 3, rt = static_cast<std::size_t>(root);
    const bool at_root = g.rank == root;
    const Sizes packed_d = [&] {
      Sizes d(n);
      for (std::size_t r = 0; r < n; ++r) d[r] = r * count;
      return d;
    }();
    const Sizes all(n, count);
    // gather: block r of the root's recv from rank r
    std::vector<unsigned char> send(count * es), recv(at_root ? n * count * es : 0, kGap);
    fill_block(send.data(), count, es, me, rt);
    const unsigned char* sp = send.data();
    if (at_root && in_place)
      std::memcpy(recv.data() + rt * count * es, send.data(), send.size()), sp = recv.data() + rt * count * es;
    int rc = call(m, [&](void** q) {
      return v4().gather(g.comm, sp, at_root ? recv.data() : nullptr, count, t.id, root, nullptr, q);
    });
    BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, v1().last_error());
    if (at_root)
      BOOST_TEST(differing(recv, expected(
                                     n * count, es, all, packed_d, [](std::size_t r) { return r; },
                                     [&](std::size_t) { return rt; })) == 0u);
    // scatter: the root's block r to rank r
    std::vector<unsigned char> blocks(at_root ? n * count * es : 0), out(count * es, kGap);
    for (std::size_t r = 0; at_root && r < n; ++r) fill_block(blocks.data() + r * count * es, count, es, rt, r);
    unsigned char* rp = at_root && in_place ? blocks.data() + rt * count * es : out.data();
    rc = call(m, [&](void** q) {
      return v4().scatter(g.comm, at_root ? blocks.data() : nullptr, rp, count, t.id, root, nullptr, q);
    });
    BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, v1().last_error());
    std::vector<unsigned char> got(rp, rp + count * es), want(count * es);
    fill_block(want.data(), count, es, rt, me);
    BOOST_TEST(differing(got, want) == 0u);
  }
}

void check_gatherv_scatterv(Group& g, const Type& t, int root, bool in_place, Mode m) {
  BOOST_TEST_CONTEXT("gatherv/scatterv " << t.name << " root " << root << (in_place ? " in place" : "") << " mode "
                                         << m) {
    const std::size_t n = g.n(), me = g.me(), es = t.size, rt = static_cast<std::size_t>(root);
    const bool at_root = g.rank == root;
    Sizes counts(n);
    for (std::size_t r = 0; r < n; ++r) counts[r] = (r + rt + 1) % 3;
    std::size_t len = 0;
    const Sizes d = displs_of(counts, true, &len);
    // gatherv
    std::vector<unsigned char> send(counts[me] * es), recv(at_root ? len * es : 0, kGap);
    fill_block(send.data(), counts[me], es, me, rt);
    const unsigned char* sp = send.data();
    if (at_root && in_place)
      std::memcpy(recv.data() + d[rt] * es, send.data(), send.size()), sp = recv.data() + d[rt] * es;
    int rc = call(m, [&](void** q) {
      return v4().gatherv(g.comm, sp, counts[me], at_root ? recv.data() : nullptr, at_root ? counts.data() : nullptr,
                          at_root ? d.data() : nullptr, t.id, root, nullptr, q);
    });
    BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, v1().last_error());
    if (at_root)
      BOOST_TEST(differing(recv, expected(
                                     len, es, counts, d, [](std::size_t r) { return r; },
                                     [&](std::size_t) { return rt; })) == 0u);
    // scatterv
    std::vector<unsigned char> blocks(at_root ? len * es : 0, kGap), out(counts[me] * es);
    for (std::size_t r = 0; at_root && r < n; ++r) fill_block(blocks.data() + d[r] * es, counts[r], es, rt, r);
    const std::vector<unsigned char> blocks_before = blocks;
    unsigned char* rp = at_root && in_place ? blocks.data() + d[rt] * es : out.data();
    rc = call(m, [&](void** q) {
      return v4().scatterv(g.comm, at_root ? blocks.data() : nullptr, at_root ? counts.data() : nullptr,
                           at_root ? d.data() : nullptr, rp, counts[me], t.id, root, nullptr, q);
    });
    BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, v1().last_error());
    std::vector<unsigned char> got(rp, rp + counts[me] * es), want(counts[me] * es);
    fill_block(want.data(), counts[me], es, rt, me);
    BOOST_TEST(differing(got, want) == 0u);
    BOOST_TEST(differing(blocks, blocks_before) == 0u);  // the root's send is read only
  }
}

// ---- reductions: small integers, exact in int32 and float64 ---------------

double val(std::size_t r, std::size_t i) { return static_cast<double>((r * 7 + i * 3) % 11) - 5; }
double reference(int op, std::size_t n, std::size_t i) {
  double acc = val(0, i);
  for (std::size_t r = 1; r < n; ++r) acc = op == DEVMESH_SUM ? acc + val(r, i) : std::max(acc, val(r, i));
  return acc;
}
struct Num {
  int id;
  const char* name;
};
const Num nums[] = {{DEVMESH_INT32, "int32"}, {DEVMESH_FLOAT64, "float64"}};
std::vector<char> encode(const Num& t, const std::vector<double>& v) {
  std::vector<char> out(v.size() * (t.id == DEVMESH_INT32 ? 4 : 8));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t.id == DEVMESH_INT32) {
      auto x = static_cast<int32_t>(v[i]);
      std::memcpy(out.data() + 4 * i, &x, 4);
    } else {
      std::memcpy(out.data() + 8 * i, &v[i], 8);
    }
  }
  return out;
}

void check_reductions(Group& g, const Num& t, int op, bool in_place, Mode m) {
  BOOST_TEST_CONTEXT("reductions " << t.name << " op " << op << (in_place ? " in place" : "") << " mode " << m) {
    const std::size_t n = g.n(), me = g.me();
    // reduce_scatterv: uneven blocks, rank 0's empty (except alone)
    Sizes rc(n);
    std::size_t total = 0, off = 0;
    for (std::size_t r = 0; r < n; ++r) rc[r] = r % 3 + (n == 1 ? 1 : 0), total += rc[r];
    for (std::size_t r = 0; r < me; ++r) off += rc[r];
    std::vector<double> mine(total), want_rs(rc[me]);
    for (std::size_t i = 0; i < total; ++i) mine[i] = val(me, i);
    for (std::size_t i = 0; i < rc[me]; ++i) want_rs[i] = reference(op, n, off + i);
    std::vector<char> send = encode(t, mine), recv(std::max<std::size_t>(send.size(), 1), 0);
    char* out = in_place ? send.data() : recv.data();
    int status = call(
        m, [&](void** q) { return v4().reduce_scatterv(g.comm, send.data(), out, rc.data(), t.id, op, nullptr, q); });
    BOOST_TEST_REQUIRE(status == DEVMESH_SUCCESS, v1().last_error());
    const std::vector<char> want = encode(t, want_rs);
    BOOST_TEST(std::memcmp(out, want.data(), want.size()) == 0);
    // reduce at every root
    for (int root = 0; root < g.size; ++root) {
      const std::size_t count = 5;
      std::vector<double> in(count), ref(count);
      for (std::size_t i = 0; i < count; ++i) in[i] = val(me, i + 2), ref[i] = reference(op, n, i + 2);
      std::vector<char> s = encode(t, in), r(s.size(), 0);
      const bool at_root = g.rank == root;
      char* rp = at_root ? (in_place ? s.data() : r.data()) : nullptr;
      status = call(m, [&](void** q) { return v4().reduce(g.comm, s.data(), rp, count, t.id, op, root, nullptr, q); });
      BOOST_TEST_REQUIRE(status == DEVMESH_SUCCESS, v1().last_error());
      if (at_root) BOOST_TEST(std::memcmp(rp, encode(t, ref).data(), s.size()) == 0);
    }
  }
}

// Version 1's collectives started together, six in flight, ended in order.
void check_started_v1(Group& g) {
  const std::size_t n = g.n(), me = g.me(), count = 4;
  std::vector<double> a(count), ar(count), rs(count * n), rsr(count), b(count), ag(count * n), at(count * n),
      atr(count * n);
  for (std::size_t i = 0; i < count; ++i) a[i] = val(me, i), b[i] = g.rank == 0 ? 40.0 + i : -1;
  for (std::size_t i = 0; i < count * n; ++i) rs[i] = val(me, i), at[i] = 1000.0 * me + i;
  for (std::size_t i = 0; i < count; ++i) ag[me * count + i] = 10.0 * me + i;
  void* q[6] = {};
  const int D = DEVMESH_FLOAT64, S = DEVMESH_SUM;
  BOOST_TEST_REQUIRE(v4().iallreduce(g.comm, a.data(), ar.data(), count, D, S, nullptr, &q[0]) == 0);
  BOOST_TEST_REQUIRE(v4().ireduce_scatter(g.comm, rs.data(), rsr.data(), count, D, S, nullptr, &q[1]) == 0);
  BOOST_TEST_REQUIRE(v4().ibroadcast(g.comm, b.data(), count, D, 0, nullptr, &q[2]) == 0);
  BOOST_TEST_REQUIRE(v4().iallgather(g.comm, ag.data() + me * count, ag.data(), count, D, nullptr, &q[3]) == 0);
  BOOST_TEST_REQUIRE(v4().ialltoall(g.comm, at.data(), atr.data(), count, D, nullptr, &q[4]) == 0);
  BOOST_TEST_REQUIRE(v4().ibarrier(g.comm, nullptr, &q[5]) == 0);
  // A blocking collective issued now runs after the six, on every rank.
  std::vector<double> late{val(me, 9)}, late_r(1);
  BOOST_TEST_REQUIRE(v1().allreduce(g.comm, late.data(), late_r.data(), 1, D, S, nullptr) == 0, v1().last_error());
  for (void* r : q) BOOST_TEST_REQUIRE(v2().wait(r) == 0, v1().last_error());
  std::size_t bad = late_r[0] != reference(S, n, 9);
  for (std::size_t i = 0; i < count; ++i) {
    bad += ar[i] != reference(S, n, i);
    bad += rsr[i] != reference(S, n, me * count + i);
    bad += b[i] != 40.0 + i;
  }
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < count; ++i) {
      bad += ag[r * count + i] != 10.0 * r + i;
      bad += atr[r * count + i] != 1000.0 * r + me * count + i;
    }
  BOOST_TEST(bad == 0u);
}

// A batch around the ring: two sends to the next rank, two receives from
// the previous one (one of them empty), one request.
void check_batch(Group& g, Mode m) {
  if (g.size < 2) return;  // Gloo has no pair to the caller's own rank
  const int next = (g.rank + 1) % g.size, prev = (g.rank + g.size - 1) % g.size;
  std::vector<int32_t> s1(3), s2(5), r1(3, -1), r2(5, -1);
  for (int i = 0; i < 3; ++i) s1[i] = g.rank * 100 + i;
  for (int i = 0; i < 5; ++i) s2[i] = g.rank * 100 + 50 + i;
  const devmesh_backend_p2p_t ops[] = {
      {0, prev, r1.data(), 3, DEVMESH_INT32}, {1, next, s1.data(), 3, DEVMESH_INT32},
      {1, next, nullptr, 0, DEVMESH_INT32},   {1, next, s2.data(), 5, DEVMESH_INT32},
      {0, prev, r2.data(), 5, DEVMESH_INT32},
  };
  int rc = call(m, [&](void** q) { return v4().batch(g.comm, ops, 5, nullptr, q); });
  BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, v1().last_error());
  std::size_t bad = 0;
  for (int i = 0; i < 3; ++i) bad += r1[i] != prev * 100 + i;
  for (int i = 0; i < 5; ++i) bad += r2[i] != prev * 100 + 50 + i;
  BOOST_TEST(bad == 0u);
}

// The groups: the world, two interleaved halves, single ranks.
template <class F>
void for_each_group(F&& f) {
  for (int kind = 0; kind < 3; ++kind) {
    Group g(MPI_COMM_WORLD, kind == 0 ? 0 : kind == 1 ? world_rank() % 2 : world_rank());
    f(g);
  }
}

BOOST_AUTO_TEST_CASE(table_states_version_4) {
  const auto& t = v4();
  BOOST_TEST(t.v3.v2.v1.abi_version == 4u);
  const unsigned long long all =
      DEVMESH_BACKEND_CAP_ALLTOALLV | DEVMESH_BACKEND_CAP_ALLGATHERV | DEVMESH_BACKEND_CAP_REDUCE_SCATTERV |
      DEVMESH_BACKEND_CAP_GATHER | DEVMESH_BACKEND_CAP_GATHERV | DEVMESH_BACKEND_CAP_SCATTER |
      DEVMESH_BACKEND_CAP_SCATTERV | DEVMESH_BACKEND_CAP_REDUCE | DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES |
      DEVMESH_BACKEND_CAP_BATCH | DEVMESH_BACKEND_CAP_NONBLOCKING;
  BOOST_TEST((t.v3.capabilities & all) == all);
  for (const void* f :
       {(const void*)t.alltoallv, (const void*)t.allgatherv, (const void*)t.reduce_scatterv, (const void*)t.gather,
        (const void*)t.gatherv, (const void*)t.scatter, (const void*)t.scatterv, (const void*)t.reduce,
        (const void*)t.iallreduce, (const void*)t.iallgather, (const void*)t.ireduce_scatter, (const void*)t.ibroadcast,
        (const void*)t.ialltoall, (const void*)t.ibarrier, (const void*)t.batch})
    BOOST_TEST(f != nullptr);
}

// Every member against the reference; no MPI call between creation and
// destruction.
BOOST_AUTO_TEST_CASE(every_member_against_reference) {
  for_each_group([&](Group& g) {
    BOOST_TEST_CONTEXT("group size " << g.size) {
      const long calls = comm_counter::data_calls(), made = comm_counter::created();
      for (Mode m : modes) {
        for (const Type& t : movers)
          for (bool gapped : {false, true})
            for (bool in_place : {false, true}) {
              check_alltoallv(g, t, gapped, in_place, m);
              check_allgatherv(g, t, gapped, in_place, m);
            }
        for (int root = 0; root < g.size; ++root)
          for (bool in_place : {false, true}) {
            check_gather_scatter(g, movers[1], root, in_place, m);
            check_gatherv_scatterv(g, movers[m == blocking ? 0 : 2], root, in_place, m);
          }
        for (const Num& t : nums)
          for (int op : {DEVMESH_SUM, DEVMESH_MAX})
            for (bool in_place : {false, true}) check_reductions(g, t, op, in_place, m);
        check_batch(g, m);
      }
      check_started_v1(g);
      BOOST_TEST(comm_counter::data_calls() - calls == 0);
      BOOST_TEST(comm_counter::created() - made == 0);
      // The counter sees MPI's calls: zero above means none were made.
      const long before = comm_counter::data_calls();
      MPI_Barrier(g.mpi);
      BOOST_TEST(comm_counter::data_calls() - before == 1);
    }
  });
}

// Rank 0 enters 1 s late: every other rank's iallreduce returns at once
// (measured around the call alone), and its wait then gives the sum.
BOOST_AUTO_TEST_CASE(started_call_returns_while_a_peer_is_late) {
  Group g(MPI_COMM_WORLD, 0);
  const long calls = comm_counter::data_calls();
  if (g.rank == 0) std::this_thread::sleep_for(std::chrono::seconds(1));
  std::vector<double> in(1000), out(1000, -1);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = val(g.me(), i);
  void* q = nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = v4().iallreduce(g.comm, in.data(), out.data(), in.size(), DEVMESH_FLOAT64, DEVMESH_SUM, nullptr, &q);
  const double call_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, v1().last_error());
  if (g.rank != 0) BOOST_TEST(call_s < 0.5, "iallreduce took " << call_s << " s to return");
  BOOST_TEST_REQUIRE(v2().wait(q) == DEVMESH_SUCCESS, v1().last_error());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < in.size(); ++i) bad += out[i] != reference(DEVMESH_SUM, g.n(), i);
  BOOST_TEST(bad == 0u);
  BOOST_TEST(comm_counter::data_calls() - calls == 0);
}

// A started broadcast whose root never calls: a revoke ends it promptly
// with the status the revoke carried.
BOOST_AUTO_TEST_CASE(revoke_ends_a_pending_request) {
  {
    Group g(MPI_COMM_WORLD, 0);
    if (g.size >= 2 && g.rank == 1) {
      std::vector<double> b(8, 0);
      void* q = nullptr;
      BOOST_TEST_REQUIRE(v4().ibroadcast(g.comm, b.data(), b.size(), DEVMESH_FLOAT64, 0, nullptr, &q) == 0);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      int done = 1;
      BOOST_TEST(v2().test(q, &done) == DEVMESH_SUCCESS);
      BOOST_TEST(done == 0);
      const auto t0 = std::chrono::steady_clock::now();
      BOOST_TEST(v4().v3.revoke(g.comm, DEVMESH_ERR_PROC_FAILED) == DEVMESH_SUCCESS);
      BOOST_TEST(v2().wait(q) == DEVMESH_ERR_PROC_FAILED, v1().last_error());
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      BOOST_TEST(s < 5.0, "the wait took " << s << " s after the revoke");
    }
    MPI_Barrier(MPI_COMM_WORLD);  // nobody destroys before rank 1 is done
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
