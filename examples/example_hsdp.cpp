// HSDP: a 2-D mesh (dp_replicate, dp_shard). Parameters are sharded inside
// a host (dp_shard: fast intra-host links carry the reduce-scatter and
// allgather of every step) and replicated across hosts (dp_replicate: one
// allreduce per step over the slow network, on 1/dp_shard of the data).
//
//   mpiexec -n 8 ./example_hsdp
//
// Which dim is intra-host: the mesh is row-major, so the last dim varies
// fastest and its groups are runs of consecutive ranks. Launchers place
// ranks in blocks per host (ranks 0..k-1 on the first host, ...), so with
// shape (hosts, ranks_per_host) every dp_shard group lies on one host and
// every dp_replicate group has one rank per host. On one machine there is a
// single host: the example then pretends to have 2 hosts of size/2 ranks,
// and says so; the groups are those a real 2-host job would get.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "devmesh/mesh.hpp"
#include "report.hpp"

namespace {

struct Hosts {
  int count = 0;     // hosts holding ranks of MPI_COMM_WORLD
  int smallest = 0;  // ranks on the host with fewest
};

// Ranks grouped by host name. (Not MPI_COMM_TYPE_SHARED: with shared
// memory turned off, as MPIR_CVAR_NOLOCAL=1 does for the tests, MPICH puts
// every rank in a node of its own.) Collective over MPI_COMM_WORLD.
Hosts world_hosts() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  unsigned colour = 2166136261u;  // FNV-1a of the host name
  for (int i = 0; i < len; ++i) colour = (colour ^ static_cast<unsigned char>(name[i])) * 16777619u;
  MPI_Comm host;
  MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(colour & 0x7fffffff), 0, &host);
  int local = 0, local_rank = 0;
  MPI_Comm_size(host, &local);
  MPI_Comm_rank(host, &local_rank);
  MPI_Comm_free(&host);
  Hosts h{local_rank == 0 ? 1 : 0, local};
  MPI_Allreduce(MPI_IN_PLACE, &h.count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &h.smallest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const Hosts real = world_hosts();
    // Several equal hosts of several ranks: the real shape. Otherwise (one
    // host, or uneven ones: not an HSDP layout) pretend 2 hosts.
    int hosts = real.count, per_host = real.smallest;
    if (hosts < 2 || per_host < 2 || hosts * per_host != world) {
      hosts = world % 2 == 0 ? 2 : 1;
      per_host = world / hosts;
      example::say(MPI_COMM_WORLD, "%d host(s) found: pretending %d hosts of %d ranks (ranks 0..%d on \"host 0\", ...)\n",
                   real.count, hosts, per_host, per_host - 1);
    }
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {hosts, per_host}, {"dp_replicate", "dp_shard"});
    int failures = example::report(mesh, mesh.names(), MPI_COMM_WORLD, "mesh (dp_replicate, dp_shard):");

    // dp_shard is intra-host: its members are the caller's host block.
    const int my_host = mesh.parent_rank() / per_host;
    bool intra = true;
    for (int r : mesh.group("dp_shard")) intra = intra && r / per_host == my_host;
    bool across = true;
    const std::vector<int> rep = mesh.group("dp_replicate");
    for (std::size_t k = 0; k < rep.size(); ++k) across = across && rep[k] / per_host == static_cast<int>(k);
    failures += example::check(intra && across);

    // One HSDP gradient step on a vector of L = 2 * dp_shard elements,
    // g[i] = rank + i on every rank:
    //   reduce_scatter over dp_shard   (intra-host)  -> my 2 elements, summed over the host
    //   allreduce over dp_replicate    (inter-host)  -> summed over all ranks
    //   allgather over dp_shard        (intra-host)  -> the full summed gradient
    const int shard = mesh.size("dp_shard");
    const std::size_t chunk = 2, len = chunk * static_cast<std::size_t>(shard);
    std::vector<double> grad(len), part(chunk), total(len);
    for (std::size_t i = 0; i < len; ++i) grad[i] = mesh.parent_rank() + static_cast<double>(i);
    using devmesh::DataType;
    using devmesh::ReduceOp;
    mesh.communicator("dp_shard").reduce_scatter(grad.data(), part.data(), chunk, DataType::float64, ReduceOp::sum);
    mesh.communicator("dp_replicate").allreduce(part.data(), part.data(), chunk, DataType::float64, ReduceOp::sum);
    mesh.communicator("dp_shard").allgather(part.data(), total.data(), chunk, DataType::float64);
    const double rank_sum = world * (world - 1) / 2.0;
    for (std::size_t i = 0; i < len; ++i) failures += example::check(total[i] == rank_sum + world * static_cast<double>(i));

    example::say(MPI_COMM_WORLD, "dp_shard groups are intra-host, dp_replicate groups span the hosts: %s\n",
                 intra && across ? "yes" : "NO");
    example::say(MPI_COMM_WORLD,
                 "HSDP step (reduce_scatter over dp_shard, allreduce over dp_replicate, allgather over dp_shard) "
                 "gave the full gradient sum on every rank\n");
    status = example::finish(failures, MPI_COMM_WORLD);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
