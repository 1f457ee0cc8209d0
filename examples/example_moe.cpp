// Mixture-of-experts token dispatch over the ep dim of a (pp, dp, ep, tp)
// mesh, as the token dispatchers of torchtitan and Megatron do it:
//
//   1. every rank routes its tokens to experts (top-1, seeded random, so
//      the token counts are uneven and some are zero);
//   2. alltoall of the per-expert token counts along ep;
//   3. alltoallv dispatch of the tokens to the ranks owning their experts;
//   4. expert compute on the tokens received;
//   5. alltoallv combine, sending the results back where the tokens came
//      from;
//   6. allgatherv of every rank's combined output along ep, and along a
//      flattened tp x ep view (Megatron's allgather over tp and ep).
//
// The dispatch is done once more with ialltoallv (started, then ended by
// Request::wait after this rank computed its reference meanwhile), whose
// result must equal the blocking one. Both receive buffers leave a gap of
// a few numbers after each source rank's block (the displacements are not
// the packed prefix sums), which the collective must leave as it was.
//
//   mpiexec -n 8 ./example_moe [BACKEND]     (BACKEND of ep and tp x ep: mpi, gloo)
//
// At 8 ranks the mesh is (pp, dp, ep, tp) = (1, 2, 2, 2); other worlds get
// (1, P/4, 2, 2) where 4 divides P, else ep = tp = 1. Every rank rebuilds
// the routing of every rank (the seeds are known) and computes the whole
// step in one process; each received token, each output and each gathered
// element is compared with that reference, and any mismatch is printed.
// Values are small whole numbers, so every comparison is exact.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"
#include "report.hpp"

namespace {

using devmesh::Communicator;
using devmesh::DataType;
using devmesh::Request;

constexpr int experts_per_rank = 2;  // local experts on each ep rank
constexpr std::size_t hidden = 4;    // numbers per token
constexpr std::size_t gap = 3;       // unwritten numbers between source blocks of the receive buffer
constexpr double sentinel = -7.0;    // what the gaps hold

// The tokens of one rank (parent rank g): how many, and the expert of each.
// Seeded by g, so every rank can rebuild every other rank's routing. Rank g
// never routes to the experts e with (e + g) % 3 == 0, and every fifth
// rank has no tokens at all: some counts are zero.
struct Routing {
  std::vector<int> expert;  // expert of token t, in [0, experts)
};

Routing route(int g, int experts) {
  std::mt19937 rng(1234u + static_cast<unsigned>(g));
  Routing r;
  const int tokens = g % 5 == 4 ? 0 : static_cast<int>(rng() % 24);
  for (int t = 0; t < tokens; ++t) {
    int e = static_cast<int>(rng() % static_cast<unsigned>(experts));
    while ((e + g) % 3 == 0) e = (e + 1) % experts;
    r.expert.push_back(e);
  }
  return r;
}

// Element h of token t of rank g, and what expert e makes of it.
double token_value(int g, std::size_t t, std::size_t h) { return 1000.0 * g + 10.0 * t + h; }
double expert_out(double x, int e) { return x * (e + 1) + e; }

// Number of mismatches found; the first few are printed.
struct Checker {
  int rank;
  int bad = 0;
  void expect(double got, double want, const char* what, std::size_t i) {
    if (got == want) return;
    if (bad < 5) std::fprintf(stderr, "rank %d: %s[%zu] = %g, expected %g\n", rank, what, i, got, want);
    ++bad;
  }
};

// One ep rank's view of the exchange: the tokens it sends, sorted by
// destination ep rank and expert, and what it receives from each source.
struct Plan {
  std::vector<int> order;                                             // token indices sorted by expert
  std::vector<std::size_t> sendcounts, sdispls, recvcounts, rdispls;  // in numbers
  std::size_t recv_size = 0;                                          // receive buffer length, gaps included
};

// Packed send side from the routing; the receive side from the counts
// (per source ep rank and local expert) the alltoall delivered.
Plan plan(const Routing& mine, int ep, const std::vector<std::uint64_t>& got_counts) {
  Plan p;
  const int experts = ep * experts_per_rank;
  for (int e = 0; e < experts; ++e)
    for (std::size_t t = 0; t < mine.expert.size(); ++t)
      if (mine.expert[t] == e) p.order.push_back(static_cast<int>(t));
  p.sendcounts.assign(ep, 0);
  for (int e : mine.expert) p.sendcounts[static_cast<std::size_t>(e / experts_per_rank)] += hidden;
  std::size_t off = 0;
  for (int r = 0; r < ep; ++r) {
    p.sdispls.push_back(off);
    off += p.sendcounts[r];
  }
  off = 0;
  for (int r = 0; r < ep; ++r) {
    std::size_t n = 0;
    for (int k = 0; k < experts_per_rank; ++k) n += got_counts[r * experts_per_rank + k] * hidden;
    p.recvcounts.push_back(n);
    p.rdispls.push_back(off);
    off += n + gap;
  }
  p.recv_size = off;
  return p;
}

// What ep rank `me` of the group `group` (parent ranks in ep order) must
// receive at dispatch: for each source in ep order, its tokens for this
// rank's experts, sorted by expert, then the gap.
std::vector<double> reference_dispatch(const std::vector<int>& group, int me, int experts) {
  std::vector<double> out;
  for (int g : group) {
    const Routing r = route(g, experts);
    for (int e = me * experts_per_rank; e < (me + 1) * experts_per_rank; ++e)
      for (std::size_t t = 0; t < r.expert.size(); ++t)
        if (r.expert[t] == e)
          for (std::size_t h = 0; h < hidden; ++h) out.push_back(token_value(g, t, h));
    out.insert(out.end(), gap, sentinel);
  }
  return out;
}

// Rank g's output after combine: token t's numbers through its expert.
std::vector<double> reference_output(int g, int experts) {
  const Routing r = route(g, experts);
  std::vector<double> y;
  for (std::size_t t = 0; t < r.expert.size(); ++t)
    for (std::size_t h = 0; h < hidden; ++h) y.push_back(expert_out(token_value(g, t, h), r.expert[t]));
  return y;
}

// Gathers every member's output over comm (a dim of the mesh, members in
// the order of group) with allgatherv, the counts first exchanged with
// allgather, and checks both against the reference of every member.
void gather_and_check(Communicator& comm, const std::vector<int>& group, const std::vector<double>& y, int experts,
                      const char* what, Checker& check) {
  const std::uint64_t mine = y.size();
  std::vector<std::uint64_t> counts(group.size());
  comm.allgather(&mine, counts.data(), 1, DataType::uint64);
  std::vector<std::size_t> rc, rd;
  std::size_t off = 0;
  std::vector<double> want;
  for (std::size_t j = 0; j < group.size(); ++j) {
    const std::vector<double> ref = reference_output(group[j], experts);
    check.expect(static_cast<double>(counts[j]), static_cast<double>(ref.size()), "gathered count", j);
    rc.push_back(counts[j]);
    rd.push_back(off);
    off += counts[j];
    want.insert(want.end(), ref.begin(), ref.end());
  }
  std::vector<double> all(off, sentinel);
  comm.allgatherv(y.data(), y.size(), all.data(), rc, rd, DataType::float64);
  if (all.size() != want.size()) {
    std::fprintf(stderr, "rank %d: %s gathered %zu numbers, expected %zu\n", check.rank, what, all.size(), want.size());
    ++check.bad;
    return;
  }
  for (std::size_t i = 0; i < all.size(); ++i) check.expect(all[i], want[i], what, i);
}

struct Step {
  int failures = 0;
  std::size_t tokens_in = 0, tokens_out = 0;
};

// The whole step on one rank: count exchange, dispatch (blocking and
// started), expert compute, combine, then the two gathers.
Step moe_step(const devmesh::Mesh& mesh, const devmesh::Mesh& tp_ep, int world_rank) {
  Communicator& ep_comm = mesh.communicator("ep");
  const int ep = ep_comm.size(), me = ep_comm.rank(), experts = ep * experts_per_rank;
  const std::vector<int> ep_group = mesh.group("ep");
  const Routing mine = route(world_rank, experts);
  Checker check{world_rank};

  // 2. Count exchange: counts[e] tokens for expert e, experts_per_rank per peer.
  std::vector<std::uint64_t> counts(experts, 0), got(experts, 0);
  for (int e : mine.expert) ++counts[static_cast<std::size_t>(e)];
  ep_comm.alltoall(counts.data(), got.data(), experts_per_rank, DataType::uint64);
  const Plan p = plan(mine, ep, got);

  // 3. Dispatch: the tokens packed by expert, received with gaps.
  std::vector<double> send;
  for (int t : p.order)
    for (std::size_t h = 0; h < hidden; ++h) send.push_back(token_value(world_rank, t, h));
  std::vector<double> recv(p.recv_size, sentinel), recv_started(p.recv_size, sentinel);
  ep_comm.alltoallv(send.data(), p.sendcounts, p.sdispls, recv.data(), p.recvcounts, p.rdispls, DataType::float64);
  // The same exchange started, with the reference computed meanwhile.
  Request r = ep_comm.ialltoallv(send.data(), p.sendcounts, p.sdispls, recv_started.data(), p.recvcounts, p.rdispls,
                                 DataType::float64);
  const std::vector<double> want = reference_dispatch(ep_group, me, experts);
  r.wait();
  check.expect(static_cast<double>(recv.size()), static_cast<double>(want.size()), "dispatch size", 0);
  for (std::size_t i = 0; i < recv.size() && i < want.size(); ++i) {
    check.expect(recv[i], want[i], "dispatched", i);
    check.expect(recv_started[i], recv[i], "dispatched by ialltoallv", i);
  }

  // 4. Expert compute, in place: each source's block holds its tokens for
  // this rank's experts in expert order, got[] of them per expert.
  for (int src = 0; src < ep; ++src) {
    std::size_t at = p.rdispls[src];
    for (int k = 0; k < experts_per_rank; ++k)
      for (std::uint64_t t = 0; t < got[src * experts_per_rank + k]; ++t)
        for (std::size_t h = 0; h < hidden; ++h, ++at) recv[at] = expert_out(recv[at], me * experts_per_rank + k);
  }

  // 5. Combine: the reverse exchange, then the tokens back in their order.
  std::vector<double> back(send.size(), sentinel);
  ep_comm.alltoallv(recv.data(), p.recvcounts, p.rdispls, back.data(), p.sendcounts, p.sdispls, DataType::float64);
  std::vector<double> y(send.size());
  for (std::size_t i = 0; i < p.order.size(); ++i)
    for (std::size_t h = 0; h < hidden; ++h)
      y[static_cast<std::size_t>(p.order[i]) * hidden + h] = back[i * hidden + h];
  const std::vector<double> y_want = reference_output(world_rank, experts);
  for (std::size_t i = 0; i < y.size(); ++i) check.expect(y[i], y_want[i], "combined", i);

  // 6. Every output gathered along ep and along tp x ep.
  gather_and_check(ep_comm, ep_group, y, experts, "allgatherv over ep", check);
  gather_and_check(tp_ep.communicator(), tp_ep.group("tp_ep"), y, experts, "allgatherv over tp x ep", check);

  std::size_t received = 0;
  for (std::size_t n : p.recvcounts) received += n / hidden;
  return {check.bad, mine.expert.size(), received};
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    const std::string backend = argc > 1 ? argv[1] : "mpi";
    int rank = 0, world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const int ep = world % 4 == 0 ? 2 : 1, tp = ep, dp = world / (ep * tp);
    devmesh::MeshOptions options;
    options.dim_backends = {{"ep", backend}};
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {1, dp, ep, tp}, {"pp", "dp", "ep", "tp"}, options);
    // The flattened tp x ep dim runs on the same backend as ep.
    const devmesh::Mesh tp_ep = mesh.slice({"tp", "ep"}).flatten("tp_ep", devmesh::DimBackend{backend, {}});
    int failures = example::report(mesh, mesh.names(), MPI_COMM_WORLD, "MoE mesh (pp, dp, ep, tp):");
    failures += example::report(tp_ep, tp_ep.names(), MPI_COMM_WORLD, "flattened view:");
    example::say(MPI_COMM_WORLD, "%d experts per ep rank, %zu numbers per token, ep and tp x ep on %s\n",
                 experts_per_rank, hidden, backend.c_str());

    const Step s = moe_step(mesh, tp_ep, rank);
    failures += s.failures;
    unsigned long long sums[2] = {s.tokens_in, s.tokens_out}, totals[2] = {0, 0};
    MPI_Allreduce(sums, totals, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    failures += example::check(totals[0] == totals[1]);
    int any = 0;
    MPI_Allreduce(&s.failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    example::say(MPI_COMM_WORLD,
                 "%llu tokens routed and %llu received by experts; dispatch (alltoallv and ialltoallv), expert "
                 "compute, combine and the allgatherv over ep and tp x ep %s the single-process reference "
                 "(%d mismatches)\n",
                 totals[0], totals[1], any ? "DIFFER from" : "match", any);
    status = example::finish(failures, MPI_COMM_WORLD);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
