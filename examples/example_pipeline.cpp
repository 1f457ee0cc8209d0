// A 1F1B pipeline (one forward, one backward) over communicators the
// program made itself, as a legacy code would: devmesh adopts them, tells
// each stage its neighbours, and carries the stage-to-stage traffic with
// non-blocking sends and receives through the dim's backend.
//
//   mpiexec -n 8 ./example_pipeline [BACKEND]     (BACKEND of pp: mpi, gloo)
//
// The program's own MPI_Comm_splits give pp (stages: consecutive ranks)
// and dp (replicas: one rank per pipeline, strided). Mesh::adopt checks
// that they form the (dp, pp) mesh and keeps them as the mesh's
// communicators. Stage s holds one weight w_s = s + 2 and computes
// a_{s+1} = w_s * a_s on vectors of L numbers; the last stage's loss is the
// sum of its output. Backward sends g_s = w_s * g_{s+1} upstream, and each
// stage accumulates dW_s = sum(a_s * g_{s+1}) over M microbatches, then
// dp allreduces it. Everything is a whole number below 2^53, so the result
// must equal, exactly, the closed form
//   dW_s = (prod over t != s of w_t) * (sum of every replica's inputs).
// Every stage runs the same code: the first stage's prev and the last
// stage's next are MPI_PROC_NULL, where sends and receives do nothing.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"
#include "report.hpp"

namespace {

using devmesh::Communicator;
using devmesh::DataType;
using devmesh::Request;

constexpr int microbatches = 8;
constexpr std::size_t width = 256;  // L

// Input of microbatch m on replica d: x[i] = 1 + i + m + 10 d.
std::vector<double> input(int m, int d) {
  std::vector<double> x(width);
  for (std::size_t i = 0; i < width; ++i) x[i] = 1.0 + static_cast<double>(i) + m + 10.0 * d;
  return x;
}

// The largest divisor of n that is at most 4: the number of stages.
int stages_for(int n) {
  for (int p = 4; p > 1; --p)
    if (n % p == 0) return p;
  return 1;
}

struct Stage {
  Stage(Communicator& pp_, devmesh::Neighbors nb_, int replica_, double w_)
      : pp(pp_), nb(nb_), replica(replica_), w(w_) {}

  Communicator& pp;
  devmesh::Neighbors nb;  // along pp, open ends
  int replica = 0;
  double w = 0;
  std::vector<std::vector<double>> acts;     // a_s of each microbatch, kept for backward
  std::vector<std::vector<double>> sent;     // buffers of pending sends
  std::vector<Request> sends;
  std::vector<double> next_in = std::vector<double>(width);  // prefetched activation
  Request next_recv;
  double dw = 0, loss = 0;

  // Posts the receive of microbatch m's activation (nothing on the first stage).
  void prefetch(int m) {
    if (m < microbatches) next_recv = pp.irecv(next_in.data(), width, DataType::float64, nb.prev);
  }

  void forward(int m) {
    next_recv.wait();
    std::vector<double> in = nb.prev == MPI_PROC_NULL ? input(m, replica) : next_in;
    prefetch(m + 1);  // overlaps the next activation with this compute
    std::vector<double>& out = sent.emplace_back(width);
    for (std::size_t i = 0; i < width; ++i) out[i] = w * in[i];
    acts.push_back(std::move(in));
    if (nb.next == MPI_PROC_NULL)
      for (double v : out) loss += v;
    sends.push_back(pp.isend(out.data(), width, DataType::float64, nb.next));
  }

  void backward(int m) {
    std::vector<double> g(width, 1.0);  // d loss / d output on the last stage
    pp.irecv(g.data(), width, DataType::float64, nb.next).wait();
    const std::vector<double>& a = acts[static_cast<std::size_t>(m)];
    for (std::size_t i = 0; i < width; ++i) dw += a[i] * g[i];
    std::vector<double>& out = sent.emplace_back(width);
    for (std::size_t i = 0; i < width; ++i) out[i] = w * g[i];
    sends.push_back(pp.isend(out.data(), width, DataType::float64, nb.prev));
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    const std::string backend = argc > 1 ? argv[1] : "mpi";
    int rank = 0, world = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const int p = stages_for(world), d = world / p;

    // What the program had before devmesh: its own splits.
    MPI_Comm pp_comm, dp_comm;
    MPI_Comm_split(MPI_COMM_WORLD, rank / p, rank % p, &pp_comm);
    MPI_Comm_split(MPI_COMM_WORLD, rank % p, rank / p, &dp_comm);
    devmesh::MeshOptions options;
    options.dim_backends = {{"pp", backend}};
    devmesh::Mesh mesh = devmesh::Mesh::adopt(MPI_COMM_WORLD, {dp_comm, pp_comm}, {"dp", "pp"}, options);
    int failures = example::report(mesh, mesh.names(), MPI_COMM_WORLD, "adopted mesh (dp, pp):");
    int same = MPI_UNEQUAL;
    MPI_Comm_compare(mesh.comm("pp"), pp_comm, &same);
    failures += example::check(same == MPI_IDENT);
    example::say(MPI_COMM_WORLD, "%d pipeline(s) of %d stages, %d microbatches of %zu numbers, pp on %s\n", d, p,
                 microbatches, width, backend.c_str());

    // The neighbours, checked against MPI's own Cartesian answer.
    Stage st{mesh.communicator("pp"), mesh.neighbors("pp"), mesh.local_rank("dp"), mesh.local_rank("pp") + 2.0};
    int src = -1, dst = -1;
    MPI_Cart_shift(mesh["pp"].cart_comm(), 0, 1, &src, &dst);
    failures += example::check(src == st.nb.prev && dst == st.nb.next);

    // 1F1B: warm-up forwards, then one forward and one backward in turn,
    // then the remaining backwards.
    const int s = mesh.local_rank("pp");
    const int warmup = std::min(p - s - 1, microbatches);
    st.prefetch(0);
    int fwd = 0, bwd = 0;
    for (int i = 0; i < warmup; ++i) st.forward(fwd++);
    for (int i = warmup; i < microbatches; ++i) {
      st.forward(fwd++);
      st.backward(bwd++);
    }
    while (bwd < microbatches) st.backward(bwd++);
    Request::wait_all(st.sends);

    // Data parallel: the replicas' weight gradients summed.
    mesh.communicator("dp").allreduce(&st.dw, &st.dw, 1, DataType::float64, devmesh::ReduceOp::sum);

    double prod_others = 1, inputs = 0;
    for (int t = 0; t < p; ++t)
      if (t != s) prod_others *= t + 2.0;
    for (int r = 0; r < d; ++r)
      for (int m = 0; m < microbatches; ++m)
        for (double x : input(m, r)) inputs += x;
    failures += example::check(st.dw == prod_others * inputs);
    if (st.nb.next == MPI_PROC_NULL) {
      double own = 0;
      for (int m = 0; m < microbatches; ++m)
        for (double x : input(m, st.replica)) own += x;
      failures += example::check(st.loss == prod_others * (s + 2.0) * own);
    }

    // A periodic ring along pp: each stage hands its gradient to the next
    // with sendrecv and checks the one it got from the previous.
    const devmesh::Neighbors ring = mesh.neighbors("pp", true);
    MPI_Cart_shift(mesh["pp"].cart_comm({true}), 0, 1, &src, &dst);
    failures += example::check(src == ring.prev && dst == ring.next);
    double from_prev = -1;
    st.pp.sendrecv(&st.dw, 1, DataType::float64, ring.next, &from_prev, 1, DataType::float64, ring.prev);
    const int sp = (s + p - 1) % p;
    double prod_prev = 1;
    for (int t = 0; t < p; ++t)
      if (t != sp) prod_prev *= t + 2.0;
    failures += example::check(from_prev == prod_prev * inputs);

    example::say(MPI_COMM_WORLD, "stage gradients after 1F1B and the dp allreduce match the closed form%s\n",
                 failures ? " (NOT on every rank)" : "");
    status = example::finish(failures, MPI_COMM_WORLD);
    mesh = devmesh::Mesh();  // the mesh goes first; the program's comms stay its own
    MPI_Comm_free(&pp_comm);
    MPI_Comm_free(&dp_comm);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
