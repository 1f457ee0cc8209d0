// One side of a paired comparison of two builds of devmesh (bench/seam/run-seam
// alternates two of them): the cost of creating a mesh and of a small
// allreduce through the public C++ API, which both builds must offer.
//
//   mpiexec -n 8 ./seam create [--ft] [--shape 2,2,2] [--iters 40]
//   mpiexec -n 8 ./seam allreduce [--samples 30] [--calls 100]
//
// create: `iters` times Mesh::create over MPI_COMM_WORLD (with
// MeshOptions::fault_tolerance under --ft, the world's errors returned),
// then comm(dim) for every dim; each creation starts after a barrier and
// is timed until its last communicator (freeing is not timed). allreduce: on a (2,2,2) mesh
// flattened to all ranks, 8 bytes (one float64, sum) through the per-call
// lookup mesh.communicator(dim).allreduce and through a held
// Communicator&, in alternating samples of `calls` calls after a warm-up.
// Every sample is the slowest rank's time; rank 0 prints one line per
// method: "<method> <median µs> <samples> <fastest sample µs>".
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

namespace {

double slowest(double t) {
  double out = 0;
  MPI_Allreduce(&t, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

void report(const char* method, std::vector<double> s) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  const double median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  if (rank == 0) std::printf("%s %.3f %zu %.3f\n", method, median * 1e6, n, s.front() * 1e6);
}

std::vector<int> parse_ints(const char* s) {
  std::vector<int> out;
  for (char* end = nullptr;; s = end + 1) {
    out.push_back(static_cast<int>(std::strtol(s, &end, 10)));
    if (*end != ',') break;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  bool ft = false;
  std::vector<int> shape = {2, 2, 2};
  int iters = 40, samples = 30, calls = 100;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "0";
    if (a == "--ft") ft = true;
    if (a == "--shape") shape = parse_ints(v);
    if (a == "--iters") iters = std::atoi(v);
    if (a == "--samples") samples = std::atoi(v);
    if (a == "--calls") calls = std::atoi(v);
  }
  std::vector<std::string> names;
  for (std::size_t d = 0; d < shape.size(); ++d) names.push_back("d" + std::to_string(d));
  int rc = 0;
  try {
    if (mode == "create") {
      devmesh::MeshOptions options;
      options.fault_tolerance = ft;
      if (ft) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);  // as fault_tolerance requires
      std::vector<double> t;
      for (int i = 0; i < iters; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, shape, names, options);
        for (const auto& name : names) (void)mesh.comm(name);
        t.push_back(slowest(MPI_Wtime() - t0));
      }
      report(ft ? "create_ft" : "create", t);
    } else if (mode == "allreduce") {
      devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, shape, names).flatten("all");
      devmesh::Communicator& held = mesh.communicator("all");
      double send = 1, recv = 0;
      auto lookup = [&] {
        mesh.communicator("all").allreduce(&send, &recv, 1, devmesh::DataType::float64, devmesh::ReduceOp::sum);
      };
      auto direct = [&] { held.allreduce(&send, &recv, 1, devmesh::DataType::float64, devmesh::ReduceOp::sum); };
      auto timed = [&](auto&& f) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        for (int c = 0; c < calls; ++c) f();
        return slowest((MPI_Wtime() - t0) / calls);
      };
      for (int w = 0; w < 2; ++w) timed(lookup), timed(direct);  // warm-up
      std::vector<double> t_lookup, t_held;
      for (int s = 0; s < samples; ++s) {
        if (s % 2) {
          t_lookup.push_back(timed(lookup));
          t_held.push_back(timed(direct));
        } else {
          t_held.push_back(timed(direct));
          t_lookup.push_back(timed(lookup));
        }
      }
      report("allreduce_lookup", t_lookup);
      report("allreduce_held", t_held);
    } else {
      std::fprintf(stderr,
                   "usage: seam create [--ft] [--shape 2,2,2] [--iters N] | allreduce [--samples N] [--calls N]\n");
      rc = 2;
    }
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
