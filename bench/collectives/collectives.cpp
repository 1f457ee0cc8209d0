// Collective overhead: allreduce, allgather and reduce_scatter through
// devmesh's backend interface against the raw MPI call on the very same MPI
// communicator, by four methods: a held Communicator& (a virtual call plus
// datatype and count translation), the per-call lookup
// mesh.communicator(dim) in front of it, the C API's devmesh_allreduce(m,
// dim, ...) (a mesh adopting that communicator), and the raw MPI call.
// Batches of each alternate (the order rotates every batch).
//
//   mpiexec -n 8 ./bench_collectives [--batches 40] [--batch-ms 10] [--bytes 8,4096,1048576]
//
// Each batch repeats one call for about batch-ms milliseconds (the count is
// calibrated once per op and size on the raw call). At 1 rank the MPI call
// itself is a local copy, so the difference is the interface's own cost in
// nanoseconds, free of the network and of scheduling noise.
//
// Sizes are per rank: allreduce reduces S bytes, allgather sends S bytes
// per rank, reduce_scatter leaves S bytes on each rank (float64 sum);
// isend_irecv is a ring shift: irecv from the previous rank, isend S bytes
// to the next, wait for both (devmesh's Request::wait_all against
// MPI_Irecv/MPI_Isend/MPI_Waitall).
// Prints one record per (op, size, method): the slowest rank's time per
// call; methods devmesh (held), lookup, capi and mpi, then each devmesh
// method's per-batch ratio over the MPI batch of the same round
// (paired_ratio for the held Communicator&, lookup_paired_ratio,
// capi_paired_ratio).
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench.hpp"
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"

namespace {

using devmesh::DataType;
using devmesh::ReduceOp;

enum class Op { allreduce, allgather, reduce_scatter, isend_irecv };
constexpr struct {
  Op op;
  const char* name;
} ops[] = {{Op::allreduce, "allreduce"},
           {Op::allgather, "allgather"},
           {Op::reduce_scatter, "reduce_scatter"},
           {Op::isend_irecv, "isend_irecv"}};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int batches = 40;
  double batch_seconds = 0.010;
  std::vector<std::size_t> sizes = {8, 4096, std::size_t{1} << 20};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--batches") {
      batches = std::atoi(argv[i + 1]);
    } else if (a == "--batch-ms") {
      batch_seconds = std::atof(argv[i + 1]) / 1000;
    } else if (a == "--bytes") {
      sizes.clear();
      for (const char* p = argv[i + 1]; *p;) {
        char* end = nullptr;
        sizes.push_back(std::strtoull(p, &end, 10));
        p = *end ? end + 1 : end;
      }
    }
  }
  int rc = 0;
  try {
    const int p = bench::world_size();
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {0, 0, 0}, {"dp", "cp", "tp"});
    devmesh::Mesh all = mesh.flatten("all");  // every rank, one communicator
    devmesh::Communicator& dm = all.communicator();
    MPI_Comm raw = all.comm();
    // The C API's mesh adopts the same MPI communicator.
    const char* all_name[] = {"all"};
    devmesh_t c_all = nullptr;
    if (devmesh_create_from_comms(raw, 1, &raw, all_name, nullptr, &c_all) != DEVMESH_SUCCESS)
      throw devmesh::Error(devmesh::Status::backend, devmesh_last_error());
    const int next = (dm.rank() + 1) % p, prev = (dm.rank() + p - 1) % p;
    for (std::size_t bytes : sizes) {
      const std::size_t n = bytes / sizeof(double);
      std::vector<double> send(n * p, 1.0), recv(n * p, 0.0);
      for (const auto& [op, op_name] : ops) {
        auto call = [&, op = op](devmesh::Communicator& c) {
          switch (op) {
            case Op::allreduce:
              c.allreduce(send.data(), recv.data(), n, DataType::float64, ReduceOp::sum);
              break;
            case Op::allgather:
              c.allgather(send.data(), recv.data(), n, DataType::float64);
              break;
            case Op::reduce_scatter:
              c.reduce_scatter(send.data(), recv.data(), n, DataType::float64, ReduceOp::sum);
              break;
            case Op::isend_irecv: {
              devmesh::Request r[] = {c.irecv(recv.data(), n, DataType::float64, prev),
                                      c.isend(send.data(), n, DataType::float64, next)};
              devmesh::Request::wait_all(r);
              break;
            }
          }
        };
        auto through_devmesh = [&] { call(dm); };
        auto through_lookup = [&] { call(all.communicator("all")); };
        auto through_c = [&, op = op] {
          constexpr int f64 = DEVMESH_FLOAT64;
          switch (op) {
            case Op::allreduce:
              devmesh_allreduce(c_all, "all", send.data(), recv.data(), n, f64, DEVMESH_SUM, nullptr);
              break;
            case Op::allgather:
              devmesh_allgather(c_all, "all", send.data(), recv.data(), n, f64, nullptr);
              break;
            case Op::reduce_scatter:
              devmesh_reduce_scatter(c_all, "all", send.data(), recv.data(), n, f64, DEVMESH_SUM, nullptr);
              break;
            case Op::isend_irecv: {
              devmesh_request_t r[2] = {DEVMESH_REQUEST_NULL, DEVMESH_REQUEST_NULL};
              devmesh_irecv(c_all, "all", recv.data(), n, f64, prev, nullptr, &r[0]);
              devmesh_isend(c_all, "all", send.data(), n, f64, next, nullptr, &r[1]);
              devmesh_waitall(2, r);
              break;
            }
          }
        };
        auto through_mpi = [&, op = op] {
          const int c = static_cast<int>(n);
          switch (op) {
            case Op::allreduce: MPI_Allreduce(send.data(), recv.data(), c, MPI_DOUBLE, MPI_SUM, raw); break;
            case Op::allgather: MPI_Allgather(send.data(), c, MPI_DOUBLE, recv.data(), c, MPI_DOUBLE, raw); break;
            case Op::reduce_scatter:
              MPI_Reduce_scatter_block(send.data(), recv.data(), c, MPI_DOUBLE, MPI_SUM, raw);
              break;
            case Op::isend_irecv: {
              MPI_Request r[2];
              MPI_Irecv(recv.data(), c, MPI_DOUBLE, prev, 1, raw, &r[0]);
              MPI_Isend(send.data(), c, MPI_DOUBLE, next, 1, raw, &r[1]);
              MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
              break;
            }
          }
        };
        int iters = 1;
        auto timed = [&](auto&& f) {
          MPI_Barrier(raw);
          const double t0 = MPI_Wtime();
          for (int i = 0; i < iters; ++i) f();
          return bench::slowest((MPI_Wtime() - t0) / iters);
        };
        constexpr int methods = 4;  // devmesh, lookup, capi, mpi
        const char* method_names[methods] = {"devmesh", "lookup", "capi", "mpi"};
        auto run = [&](int m) {
          switch (m) {
            case 0:
              return timed(through_devmesh);
            case 1:
              return timed(through_lookup);
            case 2:
              return timed(through_c);
            default:
              return timed(through_mpi);
          }
        };
        std::vector<double> t[methods];
        // Calibrate on the raw call (every rank sees the same slowest time,
        // so every rank picks the same count); this also warms all up.
        for (int m = 0; m < methods; ++m) run(m);
        while (iters < (1 << 22) && timed(through_mpi) * iters < batch_seconds) iters *= 2;
        for (int batch = 0; batch < batches; ++batch)
          for (int k = 0; k < methods; ++k) {
            const int m = (batch + k) % methods;
            t[m].push_back(run(m));
          }
        const std::string head = "collective\top=" + std::string(op_name) + "\tbytes=" + std::to_string(bytes) +
                                 "\tranks=" + std::to_string(p) + "\titers=" + std::to_string(iters);
        for (int m = 0; m < methods; ++m) bench::print_row(head + "\tmethod=" + method_names[m], t[m]);
        // Paired: each batch's devmesh/MPI ratio (as "seconds" x 1e-6 so the
        // record's numbers are the ratios themselves).
        const char* ratio_names[methods - 1] = {"paired_ratio", "lookup_paired_ratio", "capi_paired_ratio"};
        for (int m = 0; m + 1 < methods; ++m) {
          std::vector<double> ratio;
          for (std::size_t i = 0; i < t[m].size(); ++i) ratio.push_back(t[m][i] / t[methods - 1][i] * 1e-6);
          bench::print_row(head + "\tmethod=" + ratio_names[m], ratio);
        }
      }
    }
    devmesh_destroy(&c_all);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
