// A peer that dies (kill) or stops responding (stop) while the group runs
// Gloo allreduces: every other rank must fail with DEVMESH_ERR_BACKEND (or
// DEVMESH_ERR_TIMEOUT after the timeout option) instead of hanging. Run by peer_dies.sh, which bounds the time.
//
//   peer_dies PLUGIN.so kill|stop TIMEOUT_SECONDS DIR
//
// Survivors write "rank R: status S after T s" to DIR/rank.R (hydra stops
// forwarding output once a rank died) and leave with _exit (MPI cannot be
// finalised with a dead rank).
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "devmesh/backend_plugin.h"

// The launchers (hydra, Open MPI's mpirun) end the whole job as soon as one
// of their processes dies, before the survivors could report. So the victim
// rank runs in a child process: the launcher's own process only waits for
// it and for the reports. Its rank comes from the launcher's environment.
void fork_victim(const char* dir) {
  const char* r = std::getenv("PMI_RANK");
  const char* n = std::getenv("PMI_SIZE");
  if (r == nullptr || n == nullptr) {
    r = std::getenv("OMPI_COMM_WORLD_RANK");
    n = std::getenv("OMPI_COMM_WORLD_SIZE");
  }
  if (r == nullptr || n == nullptr || std::atoi(r) != std::atoi(n) - 1) return;
  pid_t child = fork();
  if (child != 0) {
    int status = 0;
    waitpid(child, &status, 0);
    for (int waited = 0; waited < 300; ++waited) {
      int reported = 0;
      for (int k = 0; k < std::atoi(n); ++k)
        reported += access((std::string(dir) + "/rank." + std::to_string(k)).c_str(), F_OK) == 0;
      if (reported >= std::atoi(n) - 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    _exit(0);
  }
}

int main(int argc, char** argv) {
  if (argc == 5) fork_victim(argv[4]);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) {
    if (rank == 0) std::fprintf(stderr, "usage: peer_dies PLUGIN.so kill|stop TIMEOUT DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  auto* p3 = h ? static_cast<const devmesh_backend_v3_t*>(dlsym(h, DEVMESH_BACKEND_SYMBOL_V3)) : nullptr;
  const devmesh_backend_v1_t* p = p3 ? &p3->v2.v1 : nullptr;
  if (p == nullptr || (p3->init_host && p3->init_host(devmesh_backend_host()) != 0)) {
    std::fprintf(stderr, "rank %d: cannot load %s\n", rank, argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const bool stop = std::strcmp(argv[2], "stop") == 0;
  const char* keys[] = {"timeout"};
  const char* values[] = {argv[3]};
  void* inst = nullptr;
  void* comm = nullptr;
  devmesh_backend_group_t g{};
  g.size = sizeof g;
  g.group = MPI_COMM_WORLD;
  g.root = MPI_COMM_NULL;
  void* prepared = nullptr;
  if (p->open(1, keys, values, &inst) != 0 || p3->comm_prepare(inst, &g, &prepared) != 0 ||
      p3->comm_connect(prepared, &comm) != 0) {
    std::fprintf(stderr, "rank %d: setup failed: %s\n", rank, p->last_error());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  std::vector<int> pids(static_cast<std::size_t>(size));
  int me = static_cast<int>(getpid());
  MPI_Allgather(&me, 1, MPI_INT, pids.data(), 1, MPI_INT, MPI_COMM_WORLD);

  const int victim = size - 1;
  if (rank == victim) {
    // Dies (or stops) while inside a collective of the loop below.
    std::thread([stop] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      raise(stop ? SIGSTOP : SIGKILL);
    }).detach();
  }
  std::vector<float> a(1 << 18, 1.0f), b(a.size());
  const auto start = std::chrono::steady_clock::now();
  int rc = 0;
  long iterations = 0;
  while (rc == 0) {
    rc = p->allreduce(comm, a.data(), b.data(), a.size(), DEVMESH_FLOAT32, DEVMESH_SUM, nullptr);
    ++iterations;
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Written under another name and renamed when complete: the others stop
  // waiting as soon as every report's name exists, and the launcher may end
  // the job then, so a report must never be seen half written.
  const std::string path = std::string(argv[4]) + "/rank." + std::to_string(rank);
  if (FILE* out = std::fopen((path + ".part").c_str(), "w")) {
    std::fprintf(out, "rank %d: status %d after %.2f s (%ld allreduces): %s\n", rank, rc, took, iterations,
                 p->last_error());
    std::fclose(out);
    std::rename((path + ".part").c_str(), path.c_str());
  }
  // Hydra ends the whole job when a rank leaves without MPI_Finalize, so
  // every survivor waits (bounded) until all survivors have reported.
  for (int waited = 0; waited < 300; ++waited) {
    int reported = 0;
    for (int r = 0; r < size; ++r)
      reported += access((std::string(argv[4]) + "/rank." + std::to_string(r)).c_str(), F_OK) == 0;
    if (reported >= size - 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // A stopped victim never exits by itself.
  if (stop && rank == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(pids[static_cast<std::size_t>(victim)], SIGKILL);
  }
  _exit(0);
}
