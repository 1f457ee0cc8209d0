// alltoallv on a Gloo dim through devmesh against gloo::alltoallv on the
// very same gloo::Context (the dim's own, from Communicator::native_handle:
// a std::shared_ptr<gloo::Context>*) and the same buffers, as PyTorch's
// Gloo process group calls it (AlltoallvOptions with elements per rank).
// Batches of the two alternate (bench/support/rounds.hpp).
//
//   mpiexec -n 8 ./bench_gloo_alltoallv [--batches 20] [--batch-ms 50] [--bytes 8,...,1048576]
//
// Sizes are bytes per peer (float64), packed in rank order: the
// displacements are the prefix sums of the counts, the case where the
// plugin hands the caller's buffers to Gloo without packing. Both results
// are checked element by element first. Prints, per size, the slowest
// rank's time per call of each and their paired_ratio (devmesh / gloo).
#include <gloo/alltoallv.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench.hpp"
#include "devmesh/mesh.hpp"
#include "rounds.hpp"

namespace {

// The plugin's default timeout, for the raw calls too.
constexpr std::chrono::milliseconds kTimeout = std::chrono::seconds(1800);

double value(int from, int to, std::size_t i) { return 1e6 * from + 1e3 * to + static_cast<double>(i % 997); }

void check(const std::vector<double>& recv, std::size_t n, int p, int me, const char* what) {
  for (int r = 0; r < p; ++r)
    for (std::size_t i = 0; i < n; ++i)
      if (recv[r * n + i] != value(r, me, i)) {
        std::fprintf(stderr, "bench_gloo_alltoallv: %s: element %zu from rank %d is %g, expected %g\n", what, i, r,
                     recv[r * n + i], value(r, me, i));
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int batches = 20;
  double batch_seconds = 0.050;
  std::vector<std::size_t> sizes = {8, 64, 512, 4096, 32768, 262144, std::size_t{1} << 20};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--batches") {
      batches = std::atoi(argv[i + 1]);
    } else if (a == "--batch-ms") {
      batch_seconds = std::atof(argv[i + 1]) / 1000;
    } else if (a == "--bytes") {
      sizes.clear();
      for (const char* q = argv[i + 1]; *q;) {
        char* end = nullptr;
        sizes.push_back(std::strtoull(q, &end, 10));
        q = *end ? end + 1 : end;
      }
    }
  }
  int rc = 0;
  try {
    const int p = bench::world_size();
    devmesh::MeshOptions go;
    go.backend = "gloo";
    go.backend_options = {"hostname=127.0.0.1"};
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {p}, {"world"}, go);
    devmesh::Communicator& dg = mesh.communicator();
    const std::shared_ptr<gloo::Context> context = *static_cast<std::shared_ptr<gloo::Context>*>(dg.native_handle());
    const int me = dg.rank();
    for (std::size_t bytes : sizes) {
      const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(double));
      std::vector<double> send(n * p), recv(n * p, -1.0);
      for (int r = 0; r < p; ++r)
        for (std::size_t i = 0; i < n; ++i) send[r * n + i] = value(me, r, i);
      std::vector<std::size_t> counts(p, n), displs(p);
      for (int r = 0; r < p; ++r) displs[r] = r * n;
      const std::vector<std::int64_t> per_rank(p, static_cast<std::int64_t>(n));
      auto through_devmesh = [&] {
        dg.alltoallv(send.data(), counts, displs, recv.data(), counts, displs, devmesh::DataType::float64);
      };
      auto through_gloo = [&] {
        gloo::AlltoallvOptions opts(context);
        opts.setInput(send.data(), per_rank);
        opts.setOutput(recv.data(), per_rank);
        opts.setTimeout(kTimeout);
        gloo::alltoallv(opts);
      };
      through_devmesh();
      check(recv, n, p, me, "devmesh's Gloo alltoallv");
      std::fill(recv.begin(), recv.end(), -1.0);
      through_gloo();
      check(recv, n, p, me, "the raw gloo::alltoallv");
      const std::vector<bench::Method> methods = {{"devmesh_gloo", through_devmesh}, {"raw_gloo", through_gloo}};
      const bench::Rounds r = bench::run_rounds(methods, batches, batch_seconds, mesh.comm(), 1);
      const std::string head = "gloo_alltoallv\tbytes=" + std::to_string(bytes) + "\tranks=" + std::to_string(p) +
                               "\titers=" + std::to_string(r.iters);
      for (std::size_t m = 0; m < methods.size(); ++m)
        bench::print_row(head + "\tmethod=" + methods[m].name, r.times[m]);
      bench::print_row(head + "\tmethod=paired_ratio", bench::paired(r.times[0], r.times[1]));
      bench::print_row(head + "\tmethod=paired_diff", bench::difference(r.times[0], r.times[1]));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gloo_alltoallv: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
