// alltoallv through devmesh against the raw MPI_Alltoallv on the very same
// MPI communicator and the same buffers, by five methods in alternating
// rounds (bench/support/rounds.hpp):
//
//   devmesh     Communicator::alltoallv of a held Communicator& (the gate's
//               pass over the count and displacement arrays, a virtual
//               call, the backend, which hands MPI_Alltoallv_c the size_t
//               arrays as they are where MPI_Count and MPI_Aint are their
//               signed twins)
//   capi        devmesh_alltoallv(mesh, dim, ...) of a C mesh adopting
//               that communicator (the handle and dim look-ups on top)
//   mpi         MPI_Alltoallv with int arrays (no PMPI layer: the program
//               does not link the tests' counter)
//   mpi_c       MPI_Alltoallv_c with MPI_Count and MPI_Aint arrays, the
//               large-count call devmesh's MPI backend makes where the MPI
//               has it (MPI 4; left out, and its records with it, below)
//   devmesh_i   Communicator::ialltoallv, then Request::wait
//   mpi_i       MPI_Ialltoallv, then MPI_Wait
//
//   mpiexec -n 8 ./bench_alltoallv [--batches 40] [--batch-ms 10] [--bytes 8,64,...,1048576]
//   mpiexec -n 8 ./bench_alltoallv --calls N --method NAME [--bytes B]
//
// The second form times nothing: it makes N calls of one method at the
// first size, for an instruction count (bench/alltoallv/instructions.sh
// runs rank 0 under callgrind).
//
// Sizes are bytes per peer (float64): every rank sends that much to every
// rank, itself included, packed in rank order. The result of devmesh's
// call and of the C call are checked element by element first: a
// benchmark of a wrong result is worthless. Prints, per size, one record
// per method (the slowest rank's time per call) and the paired ratios
// paired_ratio (devmesh / mpi), capi_paired_ratio (capi / mpi) and
// i_paired_ratio (devmesh_i / mpi_i), c_paired_ratio (devmesh / mpi_c),
// plus paired_diff (devmesh - mpi, microseconds per call).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench.hpp"
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"
#include "rounds.hpp"

namespace {

struct Options {
  int batches = 40;
  double batch_seconds = 0.010;
  std::vector<std::size_t> sizes = {8, 64, 512, 4096, 32768, 262144, std::size_t{1} << 20};
  long calls = 0;      // > 0: the counting form
  std::string method;  // its method
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--batches") {
      o.batches = std::atoi(argv[i + 1]);
    } else if (a == "--batch-ms") {
      o.batch_seconds = std::atof(argv[i + 1]) / 1000;
    } else if (a == "--calls") {
      o.calls = std::atol(argv[i + 1]);
    } else if (a == "--method") {
      o.method = argv[i + 1];
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

// What rank `from` sends to rank `to`, element i.
double value(int from, int to, std::size_t i) { return 1e6 * from + 1e3 * to + static_cast<double>(i % 997); }

void check(const std::vector<double>& recv, std::size_t n, int p, int me, const char* what) {
  for (int r = 0; r < p; ++r)
    for (std::size_t i = 0; i < n; ++i)
      if (recv[r * n + i] != value(r, me, i)) {
        std::fprintf(stderr, "bench_alltoallv: %s: element %zu from rank %d is %g, expected %g\n", what, i, r,
                     recv[r * n + i], value(r, me, i));
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
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {0, 0}, {"dp", "tp"});
    devmesh::Mesh all = mesh.flatten("all");  // every rank, one communicator
    devmesh::Communicator& dm = all.communicator();
    MPI_Comm raw = all.comm();
    const int me = dm.rank();
    const char* all_name[] = {"all"};
    devmesh_t c_all = nullptr;
    if (devmesh_create_from_comms(raw, 1, &raw, all_name, nullptr, &c_all) != DEVMESH_SUCCESS)
      throw devmesh::Error(devmesh::Status::backend, devmesh_last_error());
    for (std::size_t bytes : o.sizes) {
      const std::size_t n = std::max<std::size_t>(1, bytes / sizeof(double));
      std::vector<double> send(n * p), recv(n * p, -1.0);
      for (int r = 0; r < p; ++r)
        for (std::size_t i = 0; i < n; ++i) send[r * n + i] = value(me, r, i);
      std::vector<std::size_t> counts(p, n), displs(p);
      std::vector<int> icounts(p, static_cast<int>(n)), idispls(p);
      for (int r = 0; r < p; ++r) {
        displs[r] = r * n;
        idispls[r] = static_cast<int>(r * n);
      }
      auto through_devmesh = [&] {
        dm.alltoallv(send.data(), counts, displs, recv.data(), counts, displs, devmesh::DataType::float64);
      };
      auto through_c = [&] {
        devmesh_alltoallv(c_all, "all", send.data(), counts.data(), displs.data(), recv.data(), counts.data(),
                          displs.data(), DEVMESH_FLOAT64, nullptr);
      };
      auto through_mpi = [&] {
        MPI_Alltoallv(send.data(), icounts.data(), idispls.data(), MPI_DOUBLE, recv.data(), icounts.data(),
                      idispls.data(), MPI_DOUBLE, raw);
      };
#if MPI_VERSION >= 4
      std::vector<MPI_Count> ccounts(p, static_cast<MPI_Count>(n));
      std::vector<MPI_Aint> cdispls(displs.begin(), displs.end());
      auto through_mpi_c = [&] {
        MPI_Alltoallv_c(send.data(), ccounts.data(), cdispls.data(), MPI_DOUBLE, recv.data(), ccounts.data(),
                        cdispls.data(), MPI_DOUBLE, raw);
      };
#endif
      auto started_devmesh = [&] {
        dm.ialltoallv(send.data(), counts, displs, recv.data(), counts, displs, devmesh::DataType::float64).wait();
      };
      auto started_mpi = [&] {
        MPI_Request r;
        MPI_Ialltoallv(send.data(), icounts.data(), idispls.data(), MPI_DOUBLE, recv.data(), icounts.data(),
                       idispls.data(), MPI_DOUBLE, raw, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      };
      through_devmesh();
      check(recv, n, p, me, "Communicator::alltoallv");
      std::fill(recv.begin(), recv.end(), -1.0);
      if (devmesh_alltoallv(c_all, "all", send.data(), counts.data(), displs.data(), recv.data(), counts.data(),
                            displs.data(), DEVMESH_FLOAT64, nullptr) != DEVMESH_SUCCESS)
        throw devmesh::Error(devmesh::Status::backend, devmesh_last_error());
      check(recv, n, p, me, "devmesh_alltoallv");
      std::fill(recv.begin(), recv.end(), -1.0);
      started_devmesh();
      check(recv, n, p, me, "Communicator::ialltoallv");

      const std::vector<bench::Method> methods = {
        {"devmesh", through_devmesh},
        {"capi", through_c},
        {"mpi", through_mpi},
        {"devmesh_i", started_devmesh},
        {"mpi_i", started_mpi},
#if MPI_VERSION >= 4
        {"mpi_c", through_mpi_c}
#endif
      };
      if (o.calls > 0) {
        const auto m =
            std::find_if(methods.begin(), methods.end(), [&](const bench::Method& x) { return x.name == o.method; });
        if (m == methods.end()) throw devmesh::Error(devmesh::Status::invalid_argument, "no method '" + o.method + "'");
        for (long i = 0; i < o.calls; ++i) m->call();
        break;
      }
      const bench::Rounds r = bench::run_rounds(methods, o.batches, o.batch_seconds, raw, 2);
      const std::string head = "alltoallv\tbytes=" + std::to_string(bytes) + "\tranks=" + std::to_string(p) +
                               "\titers=" + std::to_string(r.iters);
      for (std::size_t m = 0; m < methods.size(); ++m)
        bench::print_row(head + "\tmethod=" + methods[m].name, r.times[m]);
      bench::print_row(head + "\tmethod=paired_ratio", bench::paired(r.times[0], r.times[2]));
      bench::print_row(head + "\tmethod=capi_paired_ratio", bench::paired(r.times[1], r.times[2]));
      bench::print_row(head + "\tmethod=i_paired_ratio", bench::paired(r.times[3], r.times[4]));
      if (methods.size() > 5) bench::print_row(head + "\tmethod=c_paired_ratio", bench::paired(r.times[0], r.times[5]));
      bench::print_row(head + "\tmethod=paired_diff", bench::difference(r.times[0], r.times[2]));
    }
    devmesh_destroy(&c_all);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "bench_alltoallv: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
