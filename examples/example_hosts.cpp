// Meshes that follow the machines: the (host, local) mesh and a host-aware
// (replicate, shard, tp) mesh whose shard and tp groups stay within a host
// whatever order the launcher placed the ranks in (srun
// --distribution=cyclic, hydra -ppn 1). The shape comes from host discovery
// (one host per node, or per DEVMESH_HOST_ID value) and is compared with
// the Slurm job geometry when there is one.
//
//   srun --mpi=pmi2 ./example_hosts                   (in a batch job)
//   mpiexec -n 8 ./example_hosts --simulate-hosts 2 --cyclic
//
// --simulate-hosts N sets DEVMESH_HOST_ID from the MPI rank before
// discovery, so that one machine plays N hosts: ranks blocked (rank / (W/N))
// or, with --cyclic, round robin (rank % N). On a real cluster leave it out.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "devmesh/hosts.hpp"
#include "devmesh/mesh.hpp"
#include "report.hpp"

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

const char* where(bool within) { return within ? "intra-host" : "across hosts"; }

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  int simulate = 0;
  bool cyclic = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--simulate-hosts") && i + 1 < argc) simulate = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--cyclic")) cyclic = true;
  }
  int failures = 0;
  try {
    if (simulate > 0) {
      if (world % simulate != 0) simulate = 1;
      const int host = cyclic ? rank % simulate : rank / (world / simulate);
      setenv(devmesh::host_id_variable, ("sim-node-" + std::to_string(host)).c_str(), 1);
    }
    const char* id = std::getenv(devmesh::host_id_variable);
    const devmesh::HostInfo info = devmesh::discover_hosts(MPI_COMM_WORLD);
    const int hosts = info.hosts, per_host = info.local_size;
    example::say(MPI_COMM_WORLD, "%d ranks on %d host(s) x %d rank(s) per host (host identity from %s)\n",
                 world, hosts, per_host, id && *id ? "DEVMESH_HOST_ID" : "MPI_COMM_TYPE_SHARED");
    // The Slurm job geometry, when run inside a job.
    if (const int nodes = env_int("SLURM_NNODES"); nodes > 0) {
      const int tasks = env_int("SLURM_NTASKS_PER_NODE");
      const bool match = nodes == hosts && (tasks == 0 || tasks == per_host);
      example::say(MPI_COMM_WORLD, "Slurm job geometry: %d node(s) x %s task(s) per node: %s\n", nodes,
                   tasks ? std::to_string(tasks).c_str() : "?",
                   match ? "matches host discovery" : "differs from host discovery (simulated hosts or a partial launch)");
    }

    // (host, local): one call.
    devmesh::Mesh host_mesh = devmesh::create_host_mesh(MPI_COMM_WORLD);
    failures += example::report(host_mesh, {"host", "local"}, MPI_COMM_WORLD, "host mesh (host, local):");

    // Host-aware (replicate, shard, tp) = (hosts, per_host / tp, tp): the
    // trailing dims multiply to per_host, so shard and tp stay on a host.
    const int tp = per_host % 2 == 0 ? 2 : 1;
    const std::vector<int> shape = {hosts, per_host / tp, tp};
    const std::vector<std::string> names = {"replicate", "shard", "tp"};
    devmesh::Mesh aware = devmesh::create_host_aware(MPI_COMM_WORLD, shape, names);
    char title[128];
    std::snprintf(title, sizeof title, "host-aware (replicate, shard, tp) = (%d, %d, %d):", shape[0], shape[1], shape[2]);
    failures += example::report(aware, names, MPI_COMM_WORLD, title);

    // The same shape in the launcher's rank order, for comparison.
    devmesh::Mesh plain = devmesh::Mesh::create(MPI_COMM_WORLD, shape, names);
    devmesh::record_hosts(plain);
    example::say(MPI_COMM_WORLD, "  %-14s %-14s %s\n", "dim", "host-aware", "launcher order");
    for (const std::string& d : names) {
      const bool a = devmesh::dim_within_hosts(aware, d);
      example::say(MPI_COMM_WORLD, "  %-14s %-14s %s\n", d.c_str(), where(a),
                   where(devmesh::dim_within_hosts(plain, d)));
      if (d != "replicate") failures += example::check(a);  // the promise of host-aware ordering
    }
    std::string intra;
    for (const std::string& d : names)
      if (devmesh::dim_within_hosts(aware, d)) intra += (intra.empty() ? "" : ", ") + d;
    example::say(MPI_COMM_WORLD, "intra-host dims: %s\n", intra.empty() ? "(none)" : intra.c_str());
    example::say(MPI_COMM_WORLD, "rank 0 is host %d, local rank %d; in the host-aware mesh at (%d, %d, %d)\n",
                 info.host, info.local_rank, aware.coordinate()[0], aware.coordinate()[1],
                 aware.coordinate()[2]);
    failures = example::finish(failures, MPI_COMM_WORLD);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "rank %d: devmesh error: %s\n", rank, e.what());
    failures = 1;
  }
  MPI_Finalize();
  return failures == 0 ? 0 : 1;
}
