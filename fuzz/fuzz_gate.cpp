// fuzz_gate: random counts, displacements, buffers and datatypes through the
// C API's variable-size collectives (devmesh_alltoallv, devmesh_allgatherv,
// devmesh_reduce_scatterv) on a mesh of the world (1 or 2 ranks), against a
// brute-force reference, in __int128 arithmetic, of whether the argument
// gate must refuse the call (include/devmesh/devmesh.h):
//   a count or displacement array NULL where it is read; displs[r] +
//   counts[r] of a non-empty block past PTRDIFF_MAX, or the largest such
//   end times the element size past SIZE_MAX; a NULL buffer with elements
//   to hold; a local count that disagrees (alltoallv sendcounts[rank] and
//   recvcounts[rank] unless in place, allgatherv sendcount and
//   recvcounts[rank]); the sum of reduce_scatterv's counts past
//   PTRDIFF_MAX; an unknown datatype.
// A refused call must return INVALID_ARGUMENT and leave the receive buffer
// untouched; an accepted one must succeed. Calls the reference accepts but
// whose blocks do not lie inside the real buffers are not made (they would
// be accepted, then read or write outside them: the C API cannot know a C
// pointer's length). An empty block's displacement may be anything (the
// MPI backend passes it on as 0). On 2 ranks every rank decodes the same input; the call
// is made only when both ranks' references agree, so that no rank waits in
// a collective the other refused.
//
// Built two ways: as a libFuzzer target (LLVMFuzzerTestOneInput; MPI and
// the mesh set up once in LLVMFuzzerInitialize), and with
// DEVMESH_FUZZ_STANDALONE as an MPI program that runs a fixed number of
// seeded random inputs (tests/capi/meson.build, capi-fuzz-gate at 1 and 2
// ranks).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "devmesh/devmesh.h"

namespace {

__extension__ using u128 = unsigned __int128;
constexpr std::size_t R = 64;  // elements of every real buffer
constexpr u128 size_max = static_cast<u128>(SIZE_MAX);
constexpr u128 ptrdiff_max = static_cast<u128>(PTRDIFF_MAX);

devmesh_t mesh = nullptr;
long refusals = 0, accepted = 0, skipped = 0;
int me = 0, n = 1;

[[noreturn]] void mismatch(const std::string& what) {
  std::fprintf(stderr, "\n*** reference mismatch (rank %d): %s [%s]\n", me, what.c_str(), devmesh_last_error());
  std::fflush(stderr);
  std::abort();
}

// The input, read a byte at a time (zeros past its end).
struct Bytes {
  const std::uint8_t* p;
  std::size_t size, at = 0;
  std::uint8_t byte() { return at < size ? p[at++] : 0; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = v << 8 | byte();
    return v;
  }
  // A count or displacement: small ones, the real buffer's edges, and
  // values around the overflow boundaries.
  std::size_t value(std::size_t es) {
    const std::uint8_t k = byte();
    switch (k % 12) {
      case 0: return 0;
      case 1: return 1;
      case 2: case 3: case 4: return byte() % (R + 2);
      case 5: return SIZE_MAX - byte() % 4;
      case 6: return SIZE_MAX / es - byte() % 3 + 1;
      case 7: return (SIZE_MAX / es) / 2 + byte() % 3;
      case 8: return std::size_t{1} << (40 + byte() % 24);
      case 9: return static_cast<std::size_t>(u64());
      default: return byte() % 8;
    }
  }
};

int datatype_of(std::uint8_t k) {
  static const int types[] = {DEVMESH_INT32, DEVMESH_FLOAT64, DEVMESH_INT32, DEVMESH_FLOAT64, -1, 99};
  return types[k % 6];
}
std::size_t element_size(int t) { return t == DEVMESH_FLOAT64 ? 8 : 4; }
bool known(int t) { return t == DEVMESH_INT32 || t == DEVMESH_FLOAT64; }

// One rank's arguments; arrays empty = NULL.
struct Side {
  std::vector<std::size_t> sc, sd, rc, rd;
  std::size_t sendcount = 0;
  int send = 0, recv = 0;  // 0: NULL, 1: the send buffer, 2: the receive buffer
};

// The reference for segments (p, counts, displs): whether refused, and the
// end (elements) of the furthest block.
bool bad_segments(int p, const std::vector<std::size_t>& c, const std::vector<std::size_t>& d, std::size_t es,
                  u128& end) {
  end = 0;
  if (c.empty() || d.empty()) return true;
  for (std::size_t r = 0; r < c.size(); ++r) {
    if (c[r] == 0) continue;
    const u128 e = static_cast<u128>(d[r]) + c[r];
    if (e > ptrdiff_max) return true;
    if (e > end) end = e;
  }
  return end > 0 && (p == 0 || end * es > size_max);
}

bool bad_buffer(int p, u128 count, std::size_t es) { return count > 0 && (p == 0 || count * es > size_max); }

// What the gate must decide for call `op` at rank k, and whether an accepted
// call stays inside the real buffers.
struct Verdict {
  bool refused = false, inside = true;
};

Verdict judge(int op, const Side& s, int k, int type) {
  Verdict v;
  const std::size_t es = element_size(type);
  if (!known(type)) {
    v.refused = true;
    return v;
  }
  u128 end = 0;
  if (op == 0) {  // alltoallv
    v.refused = bad_segments(s.recv, s.rc, s.rd, es, end);
    v.inside = end <= R;
    if (!v.refused && s.send != s.recv) {
      v.refused = bad_segments(s.send, s.sc, s.sd, es, end) || s.sc[k] != s.rc[k];
      v.inside = v.inside && end <= R;
    }
  } else if (op == 1) {  // allgatherv
    v.refused = bad_segments(s.recv, s.rc, s.rd, es, end) || s.sendcount != s.rc[k] ||
                bad_buffer(s.send, s.sendcount, es);
    v.inside = end <= R && s.sendcount <= R;
  } else {  // reduce_scatterv
    if (s.rc.empty()) {
      v.refused = true;
      return v;
    }
    u128 total = 0;
    for (std::size_t c : s.rc) total += c;
    v.refused = total > ptrdiff_max || bad_buffer(s.send, total, es) || bad_buffer(s.recv, s.rc[k], es);
    v.inside = total <= R && s.rc[k] <= R;
  }
  return v;
}

std::vector<std::size_t> array(Bytes& in, std::size_t es) {
  if (in.byte() % 8 == 0) return {};  // NULL
  std::vector<std::size_t> a(static_cast<std::size_t>(n));
  for (auto& x : a) x = in.value(es);
  return a;
}

// Every rank's arguments from one input: a counts matrix shared by all
// (consistent across ranks), displacements and pointers per rank.
std::vector<Side> decode(Bytes& in, int op, std::size_t es) {
  std::vector<Side> sides(static_cast<std::size_t>(n));
  std::vector<std::vector<std::size_t>> m(static_cast<std::size_t>(n), std::vector<std::size_t>(n));
  for (auto& row : m)
    for (auto& x : row) x = in.value(es);
  const int send = in.byte() % 3, recv = in.byte() % 3;  // shared: in place on all ranks or none
  if (send == recv)  // in place, block j of rank k is recvcounts[j] both ways: symmetric counts
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < k; ++j) m[k][j] = m[j][k];
  const bool null_rc = in.byte() % 8 == 0, null_sc = in.byte() % 8 == 0;
  for (int k = 0; k < n; ++k) {
    Side& s = sides[k];
    s.send = send;
    s.recv = recv;
    for (int j = 0; j < n; ++j) {
      if (!null_sc) s.sc.push_back(m[k][j]);
      if (!null_rc) s.rc.push_back(op == 0 ? m[j][k] : m[0][j]);
    }
    s.sd = array(in, es);
    s.rd = array(in, es);
    s.sendcount = in.byte() % 4 == 0 || s.rc.empty() ? in.value(es) : s.rc[k];
  }
  return sides;
}

const std::size_t* ptr(const std::vector<std::size_t>& a) { return a.empty() ? nullptr : a.data(); }

int call(int op, const Side& s, int type, void* bufs[3]) {
  void* send = bufs[s.send];
  void* recv = bufs[s.recv];
  if (op == 0)
    return devmesh_alltoallv(mesh, nullptr, send, ptr(s.sc), ptr(s.sd), recv, ptr(s.rc), ptr(s.rd), type, nullptr);
  if (op == 1)
    return devmesh_allgatherv(mesh, nullptr, send, s.sendcount, recv, ptr(s.rc), ptr(s.rd), type, nullptr);
  return devmesh_reduce_scatterv(mesh, nullptr, send, recv, ptr(s.rc), type, DEVMESH_SUM, nullptr);
}

void one(const std::uint8_t* data, std::size_t size) {
  Bytes in{data, size};
  const int op = in.byte() % 3;
  const int type = datatype_of(in.byte());
  const std::size_t es = element_size(type);
  const std::vector<Side> sides = decode(in, op, es);
  bool refused_all = true, accepted_all = true;
  for (int k = 0; k < n; ++k) {
    const Verdict v = judge(op, sides[k], k, type);
    refused_all = refused_all && v.refused;
    accepted_all = accepted_all && !v.refused && v.inside;
  }
  if (!refused_all && !accepted_all) {  // would leave a rank waiting, or touch memory outside
    ++skipped;
    return;
  }
  ++(refused_all ? refusals : accepted);

  alignas(8) static unsigned char sbuf[R * 8], rbuf[R * 8];
  for (std::size_t i = 0; i < sizeof sbuf; ++i) sbuf[i] = static_cast<unsigned char>(i);
  std::memset(rbuf, 0, sizeof rbuf);  // zeros: valid int32 and float64 data, reducible
  void* bufs[3] = {nullptr, sbuf, rbuf};
  const Side& s = sides[me];
  unsigned char before[sizeof rbuf];
  std::memcpy(before, rbuf, sizeof rbuf);
  const int rc = call(op, s, type, bufs);
  const std::string what = "op " + std::to_string(op) + " type " + std::to_string(type);
  if (refused_all) {
    if (rc != DEVMESH_ERR_INVALID_ARGUMENT) mismatch(what + ": must be refused, status " + std::to_string(rc));
    if (std::memcmp(before, rbuf, sizeof rbuf) != 0) mismatch(what + ": a refused call wrote the receive buffer");
  } else if (rc != DEVMESH_SUCCESS) {
    mismatch(what + ": must be accepted, status " + std::to_string(rc));
  }
}

void setup() {
  int inited = 0;
  MPI_Initialized(&inited);
  if (!inited) MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int shape[1] = {n};
  const char* names[1] = {"x"};
  if (devmesh_create(MPI_COMM_WORLD, 1, shape, names, &mesh) != DEVMESH_SUCCESS) mismatch("create");
}

}  // namespace

#ifdef DEVMESH_FUZZ_STANDALONE
// usage: fuzz_gate [INPUTS [SEED]]: every rank draws the same inputs.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  setup();
  const long inputs = argc > 1 ? std::atol(argv[1]) : 20000;
  std::uint64_t x = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 45;
  std::vector<std::uint8_t> data(160);
  for (long i = 0; i < inputs; ++i) {
    for (auto& b : data) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      b = static_cast<std::uint8_t>(x >> 24);
    }
    one(data.data(), data.size());
  }
  devmesh_destroy(&mesh);
  if (me == 0) std::printf("fuzz_gate: %ld inputs (%ld refused, %ld accepted, %ld not made), no mismatch\n", inputs, refusals,
                accepted, skipped);
  MPI_Finalize();
  return 0;
}
#else
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setup();
  return 0;
}
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  one(data, size);
  return 0;
}
#endif
