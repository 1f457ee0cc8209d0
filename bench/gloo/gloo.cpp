// Gloo through devmesh, against two references on the same ranks:
//
// 1. devmesh's Gloo dim (Communicator&: a virtual call into the plugin, its
//    argument checks and its reduction functions) against a raw Gloo context
//    connected the same way (mpi_context.hpp, the plugin's own bootstrap)
//    doing the same allreduce on the same buffers, as PyTorch's Gloo process
//    group calls it (gloo::allreduce with gloo::sum).
// 2. Gloo against MPI, both through devmesh: the same mesh shape with the
//    backend "gloo" and "mpi", allreduce, allgather and reduce_scatter.
//
//   mpiexec -n 8 ./bench_gloo [--batches 30] [--batch-ms 10] [--bytes 8,4096,1048576]
//
// Batches of the two methods of a comparison alternate (the order flips
// every batch); each batch repeats one call for about batch-ms
// milliseconds (the count calibrated once per op and size on the slower
// method), and every batch pair gives one paired ratio. Both Gloo contexts
// listen on 127.0.0.1 (one machine). Sizes are per rank, float64 sum.
// Prints one record per (comparison, op, size, method): the slowest rank's
// time per call, and the paired ratios.
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/transport/tcp/device.h>
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
#include "mpi_context.hpp"

namespace {

using devmesh::DataType;
using devmesh::ReduceOp;

// The plugin's default timeout, for the raw context too.
constexpr std::chrono::milliseconds kTimeout = std::chrono::seconds(1800);

struct Options {
  int batches = 30;
  double batch_seconds = 0.010;
  std::vector<std::size_t> sizes = {8, 4096, std::size_t{1} << 20};
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--batches") {
      o.batches = std::atoi(argv[i + 1]);
    } else if (a == "--batch-ms") {
      o.batch_seconds = std::atof(argv[i + 1]) / 1000;
    } else if (a == "--bytes") {
      o.sizes.clear();
      for (const char* p = argv[i + 1]; *p;) {
        char* end = nullptr;
        o.sizes.push_back(std::strtoull(p, &end, 10));
        p = *end ? end + 1 : end;
      }
    }
  }
  return o;
}

// Interleaved batches of a and b; prints both and their paired ratio a/b.
template <class A, class B>
void compare(const std::string& head, const char* name_a, A&& a, const char* name_b, B&& b, MPI_Comm sync,
             const Options& o) {
  int iters = 1;
  auto timed = [&](auto&& call) {
    MPI_Barrier(sync);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) call();
    return bench::slowest((MPI_Wtime() - t0) / iters);
  };
  // Warm both up; calibrate on the slower, taking the best of three tries
  // so that one stalled call cannot leave the batches a call or two long
  // (every rank sees the same slowest time, so every rank picks the same
  // count).
  timed(a);
  timed(b);
  auto per_call = [&] {
    double best = 1e30;
    for (int k = 0; k < 3; ++k) best = std::min(best, std::max(timed(a), timed(b)));
    return best;
  };
  while (iters < (1 << 20) && per_call() * iters < o.batch_seconds) iters *= 2;
  std::vector<double> ta, tb;
  for (int batch = 0; batch < o.batches; ++batch) {
    if (batch % 2 == 0) {
      ta.push_back(timed(a));
      tb.push_back(timed(b));
    } else {
      tb.push_back(timed(b));
      ta.push_back(timed(a));
    }
  }
  const std::string h = head + "\titers=" + std::to_string(iters);
  bench::print_row(h + "\tmethod=" + name_a, ta);
  bench::print_row(h + "\tmethod=" + name_b, tb);
  // As "seconds" x 1e-6, so that the record's numbers are the ratios.
  std::vector<double> ratio;
  for (std::size_t i = 0; i < ta.size(); ++i) ratio.push_back(ta[i] / tb[i] * 1e-6);
  bench::print_row(h + "\tmethod=paired_ratio", ratio);
}

// Every element of recv is the sum of the ranks' send (all 1.0): a
// benchmark of a wrong result is worthless.
void check_sum(const std::vector<double>& recv, std::size_t n, double want, const char* what) {
  for (std::size_t i = 0; i < n; ++i)
    if (recv[i] != want) {
      std::fprintf(stderr, "bench_gloo: %s gave %g at %zu, expected %g\n", what, recv[i], i, want);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Options o = parse(argc, argv);
  int rc = 0;
  try {
    const int p = bench::world_size();
    devmesh::MeshOptions go;
    go.backend = "gloo";
    go.backend_options = {"hostname=127.0.0.1"};
    devmesh::Mesh gloo_mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {p}, {"world"}, go);
    devmesh::Mesh mpi_mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {p}, {"world"});
    devmesh::Communicator& dg = gloo_mesh.communicator();
    devmesh::Communicator& dm = mpi_mesh.communicator();
    MPI_Comm sync = mpi_mesh.comm();

    // The raw context: same group, same bootstrap, same address.
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    auto raw = std::make_shared<devmesh::gloo_mpi::MpiBootstrappedContext>(dg.rank(), dg.size());
    raw->connect(gloo_mesh.comm(), device, kTimeout);

    for (std::size_t bytes : o.sizes) {
      const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(double));
      std::vector<double> send(n * p, 1.0), recv(n * p, 0.0);
      const std::string sz = "\tbytes=" + std::to_string(bytes) + "\tranks=" + std::to_string(p);

      auto through_devmesh = [&] { dg.allreduce(send.data(), recv.data(), n, DataType::float64, ReduceOp::sum); };
      auto through_gloo = [&] {
        gloo::AllreduceOptions opts(raw);
        opts.setInput(send.data(), n);
        opts.setOutput(recv.data(), n);
        opts.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&gloo::sum<double>));
        opts.setTimeout(kTimeout);
        gloo::allreduce(opts);
      };
      through_devmesh();
      check_sum(recv, n, p, "devmesh's Gloo allreduce");
      through_gloo();
      check_sum(recv, n, p, "the raw Gloo allreduce");
      compare("gloo_overhead\top=allreduce" + sz, "devmesh_gloo", through_devmesh, "raw_gloo", through_gloo,
              sync, o);

      // Gloo against MPI, both through devmesh.
      enum class Op { allreduce, allgather, reduce_scatter };
      for (const auto& [op, name] : {std::pair{Op::allreduce, "allreduce"}, std::pair{Op::allgather, "allgather"},
                                     std::pair{Op::reduce_scatter, "reduce_scatter"}}) {
        auto run = [&, op = op](devmesh::Communicator& comm) {
          return [&, op, c = &comm] {
            switch (op) {
              case Op::allreduce: c->allreduce(send.data(), recv.data(), n, DataType::float64, ReduceOp::sum); break;
              case Op::allgather: c->allgather(send.data(), recv.data(), n, DataType::float64); break;
              case Op::reduce_scatter:
                c->reduce_scatter(send.data(), recv.data(), n, DataType::float64, ReduceOp::sum);
                break;
            }
          };
        };
        compare("gloo_vs_mpi\top=" + std::string(name) + sz, "gloo", run(dg), "mpi", run(dm), sync, o);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_gloo: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
