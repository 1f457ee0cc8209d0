// An HSDP training loop that loses a rank and finishes without it.
//
//   mpirun --with-ft ulfm -n 8 example_elastic [STEPS] [VICTIM] [DEATH_STEP]
//
// A (replicate=4, shard=2) mesh with fault_tolerance. Every step, each rank
// sums its shard's gradients (allreduce along shard) and then averages the
// result over the replicas (allreduce along replicate); the parameters
// every rank holds must stay equal to a closed form. At DEATH_STEP the rank
// VICTIM dies (SIGKILL). The survivors' operations fail with PROC_FAILED
// or REVOKED; they shrink the mesh along replicate, which drops the whole
// replica that held the dead rank (its live partner becomes a spare and
// stops), and redo the step on the smaller mesh. A collective can complete
// on some members and fail on others (ULFM reports a failure where it sees
// one), so survivors may be a step apart: they agree on the earliest step
// any of them failed, and those that had completed it go back to their
// parameters before it. Each rank that finishes
// checks its parameters against the closed form and prints one line.
// Exit status 0 when the check holds (spares: 0 too), 1 otherwise. The
// launcher must let survivors live: Open MPI 5 with `--with-ft ulfm`, and
// MPI_COMM_WORLD must return errors (set below).
#include <mpi.h>

#include <signal.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "devmesh/mesh.hpp"

using devmesh::DataType;
using devmesh::Error;
using devmesh::Mesh;
using devmesh::ReduceOp;
using devmesh::Status;

namespace {

constexpr std::size_t params = 1024;

// One step: the shard's gradient sum, averaged over the replicas. Rank x
// contributes (step + 1) * (shard coordinate + 1) to every element, so a
// shard's sum is (step + 1) * (1 + 2) and the replica average is the same.
void step(const Mesh& mesh, int s, std::vector<double>& w) {
  const double mine = (s + 1) * (mesh.coordinate()[1] + 1);
  std::vector<double> grad(params, mine), sum(params);
  mesh.communicator("shard").allreduce(grad.data(), sum.data(), params, DataType::float64, ReduceOp::sum);
  mesh.communicator("replicate").allreduce(sum.data(), grad.data(), params, DataType::float64, ReduceOp::sum);
  const double replicas = mesh.size("replicate");
  for (std::size_t i = 0; i < params; ++i) w[i] -= 0.01 * grad[i] / replicas;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int steps = argc > 1 ? std::atoi(argv[1]) : 10;
  const int victim = argc > 2 ? std::atoi(argv[2]) : 5;
  const int death = argc > 3 ? std::atoi(argv[3]) : steps / 2;
  int status = 0;
  try {
    devmesh::MeshOptions options;
    options.fault_tolerance = true;
    Mesh mesh = Mesh::create(MPI_COMM_WORLD, {4, 2}, {"replicate", "shard"}, options);
    // w: the parameters; last: w before the last step this rank completed.
    std::vector<double> w(params, 1.0), last = w;
    int shrinks = 0;
    for (int s = 0; s < steps;) {
      if (s == death && rank == victim) raise(SIGKILL);
      try {
        std::vector<double> before = w;
        step(mesh, s, w);  // w changes only once both allreduces succeeded
        last = std::move(before);
        ++s;
      } catch (const Error& e) {
        if (e.status() != Status::proc_failed && e.status() != Status::revoked) throw;
        // Every survivor gets here; they agree on who failed and go on
        // with the replicas that are whole.
        Mesh smaller = mesh.shrink("replicate");
        const std::vector<int> failed = mesh.failed_ranks();
        if (!smaller) {
          std::printf("rank %d: spare after the shrink (failed root indices:", rank);
          for (int f : failed) std::printf(" %d", f);
          std::printf(")\n");
          mesh = Mesh();
          MPI_Finalize();
          return 0;
        }
        // The earliest step a survivor failed (a minimum along both dims
        // is one over the mesh) is redone by all; a rank that completed it
        // (it failed the next one) goes back to its parameters before it.
        int first = s, along = s;
        smaller.communicator("replicate").allreduce(&s, &along, 1, DataType::int32, ReduceOp::min);
        smaller.communicator("shard").allreduce(&along, &first, 1, DataType::int32, ReduceOp::min);
        if (first < s) {
          w = last;
          s = first;
        }
        mesh = smaller;
        ++shrinks;
      }
    }
    // The closed form: each step subtracts 0.01 * 3 * (s + 1).
    double want = 1.0;
    for (int s = 0; s < steps; ++s) want -= 0.01 * 3 * (s + 1);
    bool ok = true;
    for (double x : w) ok = ok && std::fabs(x - want) < 1e-9;
    std::printf("rank %d: finished %d steps on a (%d, %d) mesh after %d shrink(s), parameters %s\n", rank, steps,
                mesh.size("replicate"), mesh.size("shard"), shrinks, ok ? "correct" : "WRONG");
    status = ok ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
