// One rank of the job dies while the others use devmesh (or plain MPI for
// comparison); every process writes what it saw to OUTDIR/rank-<r>, so that
// the runner can check each survivor's fate against its exit status.
//
//   peer_dies OUTDIR PHASE API [ITERATIONS]
//
// PHASE: where the victim (the last rank) dies, by SIGKILL to itself:
//   create      before Mesh::create (the others are inside it)
//   comm        after creation, before the first communicator(dim)
//   collective  after ITERATIONS (default 200) allreduces through the backend
//   link        nobody dies; the runner takes the link down meanwhile and
//               the loop runs for ITERATIONS
// API: devmesh (Mesh, communicator(dim).allreduce) or mpi (the same with
// MPI_Comm_dup and MPI_Allreduce under MPI_ERRORS_RETURN).
//
// Outcome lines: "started <t>", then one of "died <t>" (the victim),
// "error <t> status=<name> mpi_class=<c> <message>" (a survivor that got
// the error; it then exits with status 3 without MPI_Finalize, which could
// wait for the dead peer), "done <t>" (exit 0). A survivor killed by the
// launcher leaves only "started". <t> is CLOCK_REALTIME in milliseconds.
#include <mpi.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

namespace {

FILE* out = nullptr;

double now_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

void note(const std::string& line) {
  std::fprintf(out, "%s\n", line.c_str());
  std::fflush(out);
  fsync(fileno(out));
}

[[noreturn]] void die() {
  note("died " + std::to_string(now_ms()));
  raise(SIGKILL);
  std::abort();
}

[[noreturn]] void failed(const char* status, int mpi_class, const std::string& message) {
  std::string flat = message;
  for (char& c : flat)
    if (c == '\n') c = ' ';
  note("error " + std::to_string(now_ms()) + " status=" + status + " mpi_class=" + std::to_string(mpi_class) +
       " " + flat);
  std::_Exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s OUTDIR create|comm|collective|link devmesh|mpi [ITERATIONS]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1], phase = argv[2], api = argv[3];
  const int iterations = argc > 4 ? std::atoi(argv[4]) : 200;
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  out = std::fopen((dir + "/rank-" + std::to_string(rank)).c_str(), "w");
  if (!out) return 2;
  note("started " + std::to_string(now_ms()));
  const bool victim = phase != "link" && rank == size - 1;

  std::vector<double> send(1024), recv(1024);
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = rank + static_cast<double>(i);
  // What every element must sum to: an independent reference for the loop.
  const double ranks_sum = size * (size - 1) / 2.0;
  auto check = [&](int it) {
    for (std::size_t i = 0; i < recv.size(); ++i)
      if (recv[i] != ranks_sum + size * static_cast<double>(i)) {
        note("wrong " + std::to_string(now_ms()) + " iteration " + std::to_string(it));
        std::_Exit(4);
      }
  };
  const int loops = phase == "collective" || phase == "link" ? iterations : 1;

  if (api == "mpi") {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (victim && phase == "create") die();
    MPI_Comm comm = MPI_COMM_NULL;
    int e = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (victim && phase == "comm") die();
    int cls = 0;
    if (e == MPI_SUCCESS) MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int it = 0; e == MPI_SUCCESS && it < loops; ++it) {
      if (victim && phase == "collective" && it == iterations / 2) die();
      e = MPI_Allreduce(send.data(), recv.data(), static_cast<int>(send.size()), MPI_DOUBLE, MPI_SUM, comm);
      if (e == MPI_SUCCESS) check(it);
    }
    if (e != MPI_SUCCESS) {
      MPI_Error_class(e, &cls);
      failed("mpi", cls, "MPI error");
    }
  } else {
    try {
      if (victim && phase == "create") die();
      devmesh::Mesh m = devmesh::Mesh::create(MPI_COMM_WORLD, {size}, {"x"});
      if (victim && phase == "comm") die();
      devmesh::Communicator& c = m.communicator("x");
      for (int it = 0; it < loops; ++it) {
        if (victim && phase == "collective" && it == iterations / 2) die();
        c.allreduce(send.data(), recv.data(), send.size(), devmesh::DataType::float64, devmesh::ReduceOp::sum);
        check(it);
      }
    } catch (const devmesh::Error& e) {
      failed(std::string(devmesh::status_name(e.status())).c_str(), e.mpi_class(), e.what());
    }
  }
  note("done " + std::to_string(now_ms()));
  std::fclose(out);
  MPI_Finalize();
  return 0;
}
