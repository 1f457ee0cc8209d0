// What overlapping an allreduce with compute actually gains: iallreduce,
// compute, wait against allreduce then compute, on the same ranks and
// buffers, in alternating rounds (bench/support/rounds.hpp). Methods:
//
//   comm         Communicator::allreduce alone
//   compute      the compute alone (a multiply-add sweep over a 256 KiB
//                array, repeated so that it lasts about as long as comm)
//   sequential   allreduce, then compute
//   overlapped   iallreduce, compute, Request::wait
//   polled       iallreduce, compute in 16 slices with Request::test
//                between them (progress for an MPI without its own
//                progress thread), Request::wait
//   mpi          MPI_Iallreduce, compute, MPI_Wait on the same communicator
//                (what the MPI gives without devmesh)
//   mpi_polled   the same with MPI_Test between the 16 slices (polled's
//                raw counterpart)
//
//   mpiexec -n 8 ./bench_overlap [--batches 20] [--batch-ms 50] [--bytes 1048576,8388608]
//                                [--thread-multiple] [--label mpich4]
//
// --thread-multiple initialises MPI with MPI_THREAD_MULTIPLE (what
// MPICH_ASYNC_PROGRESS=1 needs for its progress thread). Sizes are bytes
// per rank, float32 sum; the results are checked first. Per round, the
// overlap obtained is (sequential - overlapped) / min(comm, compute): 0
// when the started form gains nothing, 1 when the shorter of the two is
// hidden entirely. Prints one record per method (the slowest rank's time
// per call) and overlap, polled_overlap, mpi_overlap and
// mpi_polled_overlap (the fractions, as print_row's numbers).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench.hpp"
#include "devmesh/mesh.hpp"
#include "rounds.hpp"

namespace {

using devmesh::DataType;
using devmesh::ReduceOp;

struct Options {
  int batches = 20;
  double batch_seconds = 0.050;
  std::vector<std::size_t> sizes = {std::size_t{1} << 20, std::size_t{8} << 20};
  bool thread_multiple = false;
  std::string label = "mpi";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--thread-multiple") {
      o.thread_multiple = true;
    } else if (i + 1 < argc && a == "--batches") {
      o.batches = std::atoi(argv[++i]);
    } else if (i + 1 < argc && a == "--batch-ms") {
      o.batch_seconds = std::atof(argv[++i]) / 1000;
    } else if (i + 1 < argc && a == "--label") {
      o.label = argv[++i];
    } else if (i + 1 < argc && a == "--bytes") {
      o.sizes.clear();
      for (const char* p = argv[++i]; *p;) {
        char* end = nullptr;
        o.sizes.push_back(std::strtoull(p, &end, 10));
        p = *end ? end + 1 : end;
      }
    }
  }
  return o;
}

// The compute: `sweeps` multiply-adds over a private array.
struct Kernel {
  std::vector<float> x = std::vector<float>(65536, 1.0f);
  void run(long sweeps) {
    for (long s = 0; s < sweeps; ++s)
      for (float& v : x) v = v * 0.999f + 0.001f;
  }
};

// (sequential - overlapped) / min(comm, compute), round by round, as
// print_row's numbers.
std::vector<double> overlap(const bench::Rounds& r, std::size_t seq, std::size_t ovl) {
  std::vector<double> out;
  for (std::size_t i = 0; i < r.times[0].size(); ++i)
    out.push_back((r.times[seq][i] - r.times[ovl][i]) / std::min(r.times[0][i], r.times[1][i]) * 1e-6);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, o.thread_multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  int rc = 0;
  try {
    if (o.thread_multiple && provided != MPI_THREAD_MULTIPLE)
      throw devmesh::Error(devmesh::Status::unsupported, "MPI_THREAD_MULTIPLE not provided");
    const int p = bench::world_size();
    devmesh::Mesh all = devmesh::Mesh::create(MPI_COMM_WORLD, {p}, {"all"});
    devmesh::Communicator& dm = all.communicator();
    MPI_Comm raw = all.comm();
    Kernel k;
    for (std::size_t bytes : o.sizes) {
      const std::size_t n = bytes / sizeof(float);
      std::vector<float> send(n, 1.0f), recv(n, 0.0f);
      dm.iallreduce(send.data(), recv.data(), n, DataType::float32, ReduceOp::sum).wait();
      for (std::size_t i = 0; i < n; ++i)
        if (recv[i] != static_cast<float>(p)) {
          std::fprintf(stderr, "bench_overlap: iallreduce gave %g at %zu, expected %d\n", recv[i], i, p);
          MPI_Abort(MPI_COMM_WORLD, 2);
        }
      // Sweeps of compute that last about as long as one allreduce.
      auto comm = [&] { dm.allreduce(send.data(), recv.data(), n, DataType::float32, ReduceOp::sum); };
      double t_comm = 1e30, t_sweep = 1e30;
      for (int t = 0; t < 5; ++t) {
        MPI_Barrier(raw);
        double t0 = MPI_Wtime();
        comm();
        t_comm = std::min(t_comm, bench::slowest(MPI_Wtime() - t0));
        t0 = MPI_Wtime();
        k.run(4);
        t_sweep = std::min(t_sweep, bench::slowest((MPI_Wtime() - t0) / 4));
      }
      const long sweeps = std::max(16L, static_cast<long>(t_comm / t_sweep));
      auto compute = [&] { k.run(sweeps); };
      auto sequential = [&] {
        comm();
        compute();
      };
      auto overlapped = [&] {
        devmesh::Request r = dm.iallreduce(send.data(), recv.data(), n, DataType::float32, ReduceOp::sum);
        compute();
        r.wait();
      };
      auto polled = [&] {
        devmesh::Request r = dm.iallreduce(send.data(), recv.data(), n, DataType::float32, ReduceOp::sum);
        for (int s = 0; s < 16; ++s) {
          k.run(sweeps / 16);
          r.test();
        }
        r.wait();
      };
      auto mpi = [&] {
        MPI_Request r;
        MPI_Iallreduce(send.data(), recv.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, raw, &r);
        compute();
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      };
      auto mpi_polled = [&] {
        MPI_Request r;
        MPI_Iallreduce(send.data(), recv.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, raw, &r);
        for (int s = 0; s < 16; ++s) {
          k.run(sweeps / 16);
          int done = 0;
          MPI_Test(&r, &done, MPI_STATUS_IGNORE);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      };
      const std::vector<bench::Method> methods = {
          {"comm", comm},     {"compute", compute}, {"sequential", sequential}, {"overlapped", overlapped},
          {"polled", polled}, {"mpi", mpi},         {"mpi_polled", mpi_polled}};
      const bench::Rounds r = bench::run_rounds(methods, o.batches, o.batch_seconds, raw, 2);
      const std::string head = "overlap\tmpi=" + o.label + "\tbytes=" + std::to_string(bytes) +
                               "\tranks=" + std::to_string(p) + "\titers=" + std::to_string(r.iters) +
                               "\tsweeps=" + std::to_string(sweeps);
      for (std::size_t m = 0; m < methods.size(); ++m)
        bench::print_row(head + "\tmethod=" + methods[m].name, r.times[m]);
      bench::print_row(head + "\tmethod=overlap", overlap(r, 2, 3));
      bench::print_row(head + "\tmethod=polled_overlap", overlap(r, 2, 4));
      bench::print_row(head + "\tmethod=mpi_overlap", overlap(r, 2, 5));
      bench::print_row(head + "\tmethod=mpi_polled_overlap", overlap(r, 2, 6));
      if (k.x[0] < 0) std::printf("%g\n", static_cast<double>(k.x[0]));  // keeps the compute
    }
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "bench_overlap: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
