// Plugin-level conformance: a version 3 backend plugin loaded with dlopen,
// driven through its devmesh_backend_v3 table over MPI sub-communicators
// (init_host given the core's services, devmesh_backend_host()), every
// collective x data type x reduction checked against MPI's own result.
//
//   plugin_conformance -- PLUGIN.so [key=value ...]
//
// Any plugin can be checked this way; the options go to its open().
#define BOOST_TEST_MODULE plugin_conformance
#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "devmesh/backend_plugin.h"
#include "mpi_test.hpp"

namespace {

const devmesh_backend_v3_t* table = nullptr;
std::vector<std::string> option_keys, option_values;

const devmesh_backend_v3_t& plugin3() {
  if (table != nullptr) return *table;
  auto& suite = boost::unit_test::framework::master_test_suite();
  BOOST_TEST_REQUIRE(suite.argc >= 2, "usage: plugin_conformance -- PLUGIN.so [key=value ...]");
  void* h = dlopen(suite.argv[1], RTLD_NOW | RTLD_LOCAL);
  BOOST_TEST_REQUIRE(h != nullptr, (h ? "" : dlerror()));
  table = static_cast<const devmesh_backend_v3_t*>(dlsym(h, DEVMESH_BACKEND_SYMBOL_V3));
  BOOST_TEST_REQUIRE(table != nullptr);
  for (int i = 2; i < suite.argc; ++i) {
    std::string kv = suite.argv[i];
    auto eq = kv.find('=');
    BOOST_TEST_REQUIRE(eq != std::string::npos);
    option_keys.push_back(kv.substr(0, eq));
    option_values.push_back(kv.substr(eq + 1));
  }
  if (table->init_host) BOOST_TEST_REQUIRE(table->init_host(devmesh_backend_host()) == DEVMESH_SUCCESS);
  return *table;
}

const devmesh_backend_v1_t& plugin() { return plugin3().v2.v1; }

// A communicator in the two steps of version 3 (the local one, then the
// collective one), as the core makes it.
int create_comm(void* instance, const devmesh_backend_group_t* group, void** comm) {
  const devmesh_backend_v3_t& t = plugin3();
  void* prepared = nullptr;
  const int rc = t.comm_prepare(instance, group, &prepared);
  return rc != DEVMESH_SUCCESS ? rc : t.comm_connect(prepared, comm);
}

// ---- values of every data type, as doubles ------------------------------
// Test values are small integers, exact in every type (bfloat16 holds
// integers up to 256 exactly), so MPI's double reduction is the reference.

struct Type {
  int id;
  const char* name;
  std::size_t size;
  MPI_Datatype mpi;  // MPI_DATATYPE_NULL for the 16-bit floats
  bool is_signed;
};
const Type types[] = {
    {DEVMESH_INT8, "int8", 1, MPI_INT8_T, true},       {DEVMESH_UINT8, "uint8", 1, MPI_UINT8_T, false},
    {DEVMESH_INT32, "int32", 4, MPI_INT32_T, true},    {DEVMESH_UINT32, "uint32", 4, MPI_UINT32_T, false},
    {DEVMESH_INT64, "int64", 8, MPI_INT64_T, true},    {DEVMESH_UINT64, "uint64", 8, MPI_UINT64_T, false},
    {DEVMESH_FLOAT16, "float16", 2, MPI_DATATYPE_NULL, true},
    {DEVMESH_BFLOAT16, "bfloat16", 2, MPI_DATATYPE_NULL, true},
    {DEVMESH_FLOAT32, "float32", 4, MPI_FLOAT, true},  {DEVMESH_FLOAT64, "float64", 8, MPI_DOUBLE, true},
};
struct Op {
  int id;
  const char* name;
  MPI_Op mpi;
};
const Op ops[] = {{DEVMESH_SUM, "sum", MPI_SUM},
                  {DEVMESH_PROD, "prod", MPI_PROD},
                  {DEVMESH_MIN, "min", MPI_MIN},
                  {DEVMESH_MAX, "max", MPI_MAX}};

// IEEE binary16 of a small integer (exact), and back.
uint16_t to_half(double v) {
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  double a = std::fabs(v);
  int e = 0;
  double m = std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  auto mant = static_cast<uint16_t>((m * 2 - 1) * 1024);
  return static_cast<uint16_t>(sign | ((e - 1 + 15) << 10) | mant);
}
double from_half(uint16_t h) {
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -v : v;
}
uint16_t to_bf16(double v) {
  float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return static_cast<uint16_t>(b >> 16);
}
double from_bf16(uint16_t h) {
  uint32_t b = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

void put(const Type& t, void* buf, std::size_t i, double v) {
  char* p = static_cast<char*>(buf) + i * t.size;
  switch (t.id) {
    case DEVMESH_INT8: { auto x = static_cast<int8_t>(v); std::memcpy(p, &x, 1); break; }
    case DEVMESH_UINT8: { auto x = static_cast<uint8_t>(v); std::memcpy(p, &x, 1); break; }
    case DEVMESH_INT32: { auto x = static_cast<int32_t>(v); std::memcpy(p, &x, 4); break; }
    case DEVMESH_UINT32: { auto x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
    case DEVMESH_INT64: { auto x = static_cast<int64_t>(v); std::memcpy(p, &x, 8); break; }
    case DEVMESH_UINT64: { auto x = static_cast<uint64_t>(v); std::memcpy(p, &x, 8); break; }
    case DEVMESH_FLOAT16: { auto x = to_half(v); std::memcpy(p, &x, 2); break; }
    case DEVMESH_BFLOAT16: { auto x = to_bf16(v); std::memcpy(p, &x, 2); break; }
    case DEVMESH_FLOAT32: { auto x = static_cast<float>(v); std::memcpy(p, &x, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}
double get(const Type& t, const void* buf, std::size_t i) {
  const char* p = static_cast<const char*>(buf) + i * t.size;
  switch (t.id) {
    case DEVMESH_INT8: { int8_t x; std::memcpy(&x, p, 1); return x; }
    case DEVMESH_UINT8: { uint8_t x; std::memcpy(&x, p, 1); return x; }
    case DEVMESH_INT32: { int32_t x; std::memcpy(&x, p, 4); return x; }
    case DEVMESH_UINT32: { uint32_t x; std::memcpy(&x, p, 4); return x; }
    case DEVMESH_INT64: { int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case DEVMESH_UINT64: { uint64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case DEVMESH_FLOAT16: { uint16_t x; std::memcpy(&x, p, 2); return from_half(x); }
    case DEVMESH_BFLOAT16: { uint16_t x; std::memcpy(&x, p, 2); return from_bf16(x); }
    case DEVMESH_FLOAT32: { float x; std::memcpy(&x, p, 4); return x; }
    default: { double x; std::memcpy(&x, p, 8); return x; }
  }
}

// Element i of rank r: small, exact, signed where the type is; for prod
// at most a few factors of 2 and -1, so that no product overflows int8.
double value(const Type& t, const Op& op, int r, std::size_t i) {
  if (op.id == DEVMESH_PROD) {
    double v = ((r + static_cast<int>(i)) % 3 == 0) ? 2 : 1;
    if (r > 2 && (r + i) % 3 == 0) v = 1;
    if (t.is_signed && (r + i) % 4 == 1) v = -v;
    return v;
  }
  double v = static_cast<double>((r * 7 + static_cast<int>(i % 1000) * 3) % 11);
  return t.is_signed ? v - 5 : v;
}

std::vector<double> mpi_reduce_ref(MPI_Comm comm, const std::vector<double>& in, MPI_Op op) {
  std::vector<double> out(in.size());
  MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE, op, comm);
  return out;
}

// A group's communicator in the plugin.
struct Group {
  MPI_Comm mpi = MPI_COMM_NULL;
  void* instance = nullptr;
  void* comm = nullptr;
  int rank = 0, size = 0;

  explicit Group(MPI_Comm parent, int color) {
    MPI_Comm_split(parent, color, 0, &mpi);
    MPI_Comm_set_errhandler(mpi, MPI_ERRORS_RETURN);
    MPI_Comm_rank(mpi, &rank);
    MPI_Comm_size(mpi, &size);
    const auto& p = plugin();
    std::vector<const char*> k, v;
    for (std::size_t i = 0; i < option_keys.size(); ++i) {
      k.push_back(option_keys[i].c_str());
      v.push_back(option_values[i].c_str());
    }
    BOOST_TEST_REQUIRE(p.open(static_cast<int>(k.size()), k.data(), v.data(), &instance) ==
                       DEVMESH_SUCCESS);
    devmesh_backend_group_t g{};
    g.size = sizeof g;
    g.group = mpi;
    g.root = MPI_COMM_NULL;
    int rc = create_comm(instance, &g, &comm);
    BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
  }
  ~Group() {
    plugin().comm_destroy(comm);
    plugin().close(instance);
    MPI_Comm_free(&mpi);
  }
};

// The groups every check runs over: the world, two interleaved halves
// (an odd size at 3 ranks), and single ranks.
template <class F>
void for_each_group(F&& f) {
  for (int kind = 0; kind < 3; ++kind) {
    int color = kind == 0 ? 0 : kind == 1 ? world_rank() % 2 : world_rank();
    Group g(MPI_COMM_WORLD, color);
    f(g);
  }
}

const std::size_t counts[] = {1, 7, 1000};

BOOST_AUTO_TEST_CASE(table_is_complete) {
  const auto& p = plugin();
  BOOST_TEST(p.abi_version == 3u);
  BOOST_TEST(p.name != nullptr);
  BOOST_TEST(p.last_error != nullptr);
  BOOST_TEST(std::string(plugin3().mpi_family) == DEVMESH_BACKEND_MPI);
  for (const void* f : {(const void*)p.open, (const void*)p.close, (const void*)plugin3().comm_prepare,
                        (const void*)plugin3().comm_connect, (const void*)plugin3().comm_abandon,
                        (const void*)p.comm_destroy, (const void*)p.allreduce, (const void*)p.allgather,
                        (const void*)p.reduce_scatter, (const void*)p.broadcast, (const void*)p.alltoall,
                        (const void*)p.barrier, (const void*)p.send, (const void*)p.recv})
    BOOST_TEST(f != nullptr);
}

BOOST_AUTO_TEST_CASE(allreduce_and_reduce_scatter) {
  const auto& p = plugin();
  for_each_group([&](Group& g) {
    for (const Type& t : types)
      for (const Op& op : ops)
        for (std::size_t n : counts) {
          BOOST_TEST_CONTEXT(t.name << " " << op.name << " n=" << n << " group size " << g.size) {
            // allreduce, out of place and in place
            std::vector<double> mine(n);
            for (std::size_t i = 0; i < n; ++i) mine[i] = value(t, op, world_rank(), i);
            auto ref = mpi_reduce_ref(g.mpi, mine, op.mpi);
            std::vector<char> send(n * t.size), recv(n * t.size, 0x5a);
            for (std::size_t i = 0; i < n; ++i) put(t, send.data(), i, mine[i]);
            int rc = p.allreduce(g.comm, send.data(), recv.data(), n, t.id, op.id, nullptr);
            BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
            std::size_t bad = 0;
            for (std::size_t i = 0; i < n; ++i) bad += get(t, recv.data(), i) != ref[i];
            BOOST_TEST(bad == 0u);
            rc = p.allreduce(g.comm, send.data(), send.data(), n, t.id, op.id, nullptr);
            BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
            BOOST_TEST(std::memcmp(send.data(), recv.data(), recv.size()) == 0);
            // Native MPI types: the bytes agree with MPI's own reduction too.
            if (t.mpi != MPI_DATATYPE_NULL) {
              std::vector<char> in(n * t.size), out(n * t.size);
              for (std::size_t i = 0; i < n; ++i) put(t, in.data(), i, mine[i]);
              MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), t.mpi, op.mpi, g.mpi);
              BOOST_TEST(std::memcmp(out.data(), recv.data(), out.size()) == 0);
            }

            // reduce_scatter: block r of the reduction of size*n elements
            const std::size_t all = n * static_cast<std::size_t>(g.size);
            std::vector<double> whole(all);
            for (std::size_t i = 0; i < all; ++i) whole[i] = value(t, op, world_rank(), i + 5);
            auto wref = mpi_reduce_ref(g.mpi, whole, op.mpi);
            std::vector<char> ws(all * t.size), wr(n * t.size);
            for (std::size_t i = 0; i < all; ++i) put(t, ws.data(), i, whole[i]);
            rc = p.reduce_scatter(g.comm, ws.data(), wr.data(), n, t.id, op.id, nullptr);
            BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
            bad = 0;
            const std::size_t off = n * static_cast<std::size_t>(g.rank);
            for (std::size_t i = 0; i < n; ++i) bad += get(t, wr.data(), i) != wref[off + i];
            BOOST_TEST(bad == 0u);
            // in place (send == recv): the result at the start
            rc = p.reduce_scatter(g.comm, ws.data(), ws.data(), n, t.id, op.id, nullptr);
            BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
            BOOST_TEST(std::memcmp(ws.data(), wr.data(), wr.size()) == 0);
          }
        }
  });
}

// Data movement: byte patterns that identify rank and element.
BOOST_AUTO_TEST_CASE(allgather_alltoall_broadcast) {
  const auto& p = plugin();
  for_each_group([&](Group& g) {
    for (const Type& t : types)
      for (std::size_t n : counts) {
        BOOST_TEST_CONTEXT(t.name << " n=" << n << " group size " << g.size) {
          const std::size_t bytes = n * t.size, gsz = static_cast<std::size_t>(g.size);
          auto pattern = [&](int r, std::size_t i) { return static_cast<char>((r * 31 + i * 7 + 1) & 0x7f); };
          // allgather
          std::vector<char> send(bytes), recv(bytes * gsz), ref(bytes * gsz);
          for (std::size_t i = 0; i < bytes; ++i) send[i] = pattern(world_rank(), i);
          MPI_Allgather(send.data(), static_cast<int>(bytes), MPI_BYTE, ref.data(), static_cast<int>(bytes),
                        MPI_BYTE, g.mpi);
          int rc = p.allgather(g.comm, send.data(), recv.data(), n, t.id, nullptr);
          BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
          BOOST_TEST(std::memcmp(recv.data(), ref.data(), ref.size()) == 0);
          std::vector<char> inplace(bytes * gsz, 0);
          std::memcpy(inplace.data() + bytes * static_cast<std::size_t>(g.rank), send.data(), bytes);
          rc = p.allgather(g.comm, inplace.data() + bytes * static_cast<std::size_t>(g.rank), inplace.data(), n,
                           t.id, nullptr);
          BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
          BOOST_TEST(std::memcmp(inplace.data(), ref.data(), ref.size()) == 0);

          // alltoall (also with send == recv)
          std::vector<char> as(bytes * gsz), ar(bytes * gsz), aref(bytes * gsz);
          for (std::size_t i = 0; i < as.size(); ++i) as[i] = pattern(world_rank() + 3, i);
          MPI_Alltoall(as.data(), static_cast<int>(bytes), MPI_BYTE, aref.data(), static_cast<int>(bytes),
                       MPI_BYTE, g.mpi);
          rc = p.alltoall(g.comm, as.data(), ar.data(), n, t.id, nullptr);
          BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
          BOOST_TEST(std::memcmp(ar.data(), aref.data(), aref.size()) == 0);
          rc = p.alltoall(g.comm, as.data(), as.data(), n, t.id, nullptr);
          BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
          BOOST_TEST(std::memcmp(as.data(), aref.data(), aref.size()) == 0);

          // broadcast from every root
          for (int root = 0; root < g.size; ++root) {
            std::vector<char> b(bytes), bref(bytes);
            for (std::size_t i = 0; i < bytes; ++i) b[i] = bref[i] = pattern(world_rank() + root, i);
            MPI_Bcast(bref.data(), static_cast<int>(bytes), MPI_BYTE, root, g.mpi);
            rc = p.broadcast(g.comm, b.data(), n, t.id, root, nullptr);
            BOOST_TEST_REQUIRE(rc == DEVMESH_SUCCESS, p.last_error());
            BOOST_TEST(std::memcmp(b.data(), bref.data(), bytes) == 0);
          }
        }
      }
  });
}

BOOST_AUTO_TEST_CASE(barrier_and_send_recv) {
  const auto& p = plugin();
  for_each_group([&](Group& g) {
    BOOST_TEST(p.barrier(g.comm, nullptr) == DEVMESH_SUCCESS, p.last_error());
    // A ring: even ranks send first, odd ranks receive first, so that a
    // blocking send cannot deadlock; then the reverse direction.
    for (std::size_t n : counts) {
      const Type& t = types[8];
      std::vector<double> out(n), in(n, -1);
      for (std::size_t i = 0; i < n; ++i) out[i] = g.rank * 1000 + static_cast<double>(i);
      const int next = (g.rank + 1) % g.size, prev = (g.rank + g.size - 1) % g.size;
      std::vector<char> sb(n * t.size), rb(n * t.size);
      for (std::size_t i = 0; i < n; ++i) put(t, sb.data(), i, out[i]);
      if (g.size == 1) {
        // To itself: no peer, nothing that could match; skip.
        continue;
      }
      int rc1, rc2;
      if (g.rank % 2 == 0) {
        rc1 = p.send(g.comm, sb.data(), n, t.id, next, nullptr);
        rc2 = p.recv(g.comm, rb.data(), n, t.id, prev, nullptr);
      } else {
        rc2 = p.recv(g.comm, rb.data(), n, t.id, prev, nullptr);
        rc1 = p.send(g.comm, sb.data(), n, t.id, next, nullptr);
      }
      BOOST_TEST(rc1 == DEVMESH_SUCCESS, p.last_error());
      BOOST_TEST(rc2 == DEVMESH_SUCCESS, p.last_error());
      // Reference: the same exchange through MPI.
      std::vector<float> ref(n);
      std::vector<float> fout(out.begin(), out.end());
      MPI_Sendrecv(fout.data(), static_cast<int>(n), MPI_FLOAT, next, 0, ref.data(), static_cast<int>(n), MPI_FLOAT,
                   prev, 0, g.mpi, MPI_STATUS_IGNORE);
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) bad += get(t, rb.data(), i) != ref[i];
      BOOST_TEST(bad == 0u);
      // Several messages to one peer arrive in order.
      if (g.size >= 2 && g.rank < 2) {
        const int peer = 1 - g.rank;
        int32_t a[3] = {g.rank * 10 + 1, g.rank * 10 + 2, g.rank * 10 + 3}, b[3] = {0, 0, 0};
        if (g.rank == 0) {
          for (int k = 0; k < 3; ++k) BOOST_TEST(p.send(g.comm, &a[k], 1, DEVMESH_INT32, peer, nullptr) == 0);
        } else {
          for (int k = 0; k < 3; ++k) BOOST_TEST(p.recv(g.comm, &b[k], 1, DEVMESH_INT32, peer, nullptr) == 0);
          BOOST_TEST((b[0] == 1 && b[1] == 2 && b[2] == 3));
        }
      }
    }
    BOOST_TEST(p.barrier(g.comm, nullptr) == DEVMESH_SUCCESS, p.last_error());
  });
}

// Large messages cross Gloo's segment size (1 MiB) and the ring's chunks.
BOOST_AUTO_TEST_CASE(large_allreduce) {
  const auto& p = plugin();
  Group g(MPI_COMM_WORLD, 0);
  const std::size_t n = (3u << 20) / 4 + 13;
  std::vector<float> send(n), recv(n), ref(n);
  for (std::size_t i = 0; i < n; ++i) send[i] = static_cast<float>((world_rank() * 13 + i) % 101);
  MPI_Allreduce(send.data(), ref.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, g.mpi);
  BOOST_TEST_REQUIRE(p.allreduce(g.comm, send.data(), recv.data(), n, DEVMESH_FLOAT32, DEVMESH_SUM, nullptr) ==
                     DEVMESH_SUCCESS);
  BOOST_TEST(std::memcmp(recv.data(), ref.data(), n * 4) == 0);
}

// Bad arguments (data types, reductions, buffers, counts, roots, peers) are
// the core's to refuse before a plugin is called (the argument gate,
// backend_plugin.h): collectives/test_collectives.cpp checks them for every
// backend through devmesh::Communicator.

BOOST_AUTO_TEST_CASE(bad_options) {
  const auto& p = plugin();
  if (std::string(p.name) != "gloo") return;
  struct Case {
    std::vector<const char*> keys, values;
  } cases[] = {
      {{"colour"}, {"blue"}},
      {{"timeout"}, {"-3"}},
      {{"timeout"}, {"soon"}},
      {{"hostname"}, {""}},
      {{"hostname", "iface"}, {"localhost", "lo"}},
  };
  for (auto& c : cases) {
    void* inst = reinterpret_cast<void*>(0x1);
    int rc = p.open(static_cast<int>(c.keys.size()), c.keys.data(), c.values.data(), &inst);
    BOOST_TEST(rc == DEVMESH_ERR_INVALID_ARGUMENT);
    BOOST_TEST(inst == reinterpret_cast<void*>(0x1));
    BOOST_TEST(std::string(p.last_error()).find(c.keys.back()) != std::string::npos, p.last_error());
  }
  // An interface that does not exist: the local step fails on every rank.
  const char* k[] = {"iface"};
  const char* v[] = {"no-such-if0"};
  void* inst = nullptr;
  BOOST_TEST_REQUIRE(p.open(1, k, v, &inst) == DEVMESH_SUCCESS);
  devmesh_backend_group_t grp{};
  grp.size = sizeof grp;
  grp.group = MPI_COMM_WORLD;
  grp.root = MPI_COMM_NULL;
  void* comm = reinterpret_cast<void*>(0x2);
  int rc = create_comm(inst, &grp, &comm);
  BOOST_TEST(rc == DEVMESH_ERR_BACKEND);
  BOOST_TEST(comm == reinterpret_cast<void*>(0x2));
  BOOST_TEST(std::string(p.last_error()).find("no-such-if0") != std::string::npos, p.last_error());
  BOOST_TEST(same_everywhere(rc));
  p.close(inst);
}

}  // namespace
