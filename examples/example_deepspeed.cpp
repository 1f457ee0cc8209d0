// DeepSpeed-Ulysses style sequence parallelism: a 2-D mesh
// (data_parallel, sequence_parallel) on 8 ranks, sequence_parallel = 4.
//
//   mpiexec -n 8 ./example_deepspeed
//
// DeepSpeed's groups, and the devmesh view for each:
//   sequence parallel group       mesh["sequence_parallel"]   consecutive ranks: the
//                                 all-to-all before and after attention
//   data parallel group           mesh["data_parallel"]       one rank per sequence
//                                 position, strided
//   sequence-data parallel group  mesh.flatten("sequence_data_parallel")
//                                 every rank that holds a replica of the weights:
//                                 gradients are reduced over it, since each
//                                 sequence-parallel rank saw different tokens
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "devmesh/mesh.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    const int sp = world % 4 == 0 ? 4 : world % 2 == 0 ? 2 : 1;
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {0, sp}, {"data_parallel", "sequence_parallel"});
    int failures = example::report(mesh, mesh.names(), MPI_COMM_WORLD, "mesh (data_parallel, sequence_parallel):");
    devmesh::Mesh sdp = mesh.flatten("sequence_data_parallel");
    failures += example::report(sdp, {"sequence_data_parallel"}, MPI_COMM_WORLD, "flattened:");

    using devmesh::DataType;
    using devmesh::ReduceOp;
    // Ulysses all-to-all: rank s of the sequence group holds its sequence
    // chunk for all sp head groups and sends head group j to rank j; after
    // it, rank s holds head group s for the whole sequence.
    devmesh::Communicator& seq = mesh.communicator("sequence_parallel");
    const int s = seq.rank();
    const std::size_t per = 3;  // elements per (chunk, head group)
    std::vector<double> send(per * sp), recv(per * sp);
    for (int j = 0; j < sp; ++j)
      for (std::size_t i = 0; i < per; ++i) send[j * per + i] = 100.0 * s + 10.0 * j + static_cast<double>(i);
    seq.alltoall(send.data(), recv.data(), per, DataType::float64);
    for (int j = 0; j < sp; ++j)
      for (std::size_t i = 0; i < per; ++i)
        failures += example::check(recv[j * per + i] == 100.0 * j + 10.0 * s + static_cast<double>(i));

    // Gradients: summed over the sequence-data parallel group.
    double grad = mesh.parent_rank(), sum = 0;
    sdp.communicator().allreduce(&grad, &sum, 1, DataType::float64, ReduceOp::sum);
    failures += example::check(sum == world * (world - 1) / 2.0);

    example::say(MPI_COMM_WORLD, "Ulysses all-to-all over sequence_parallel (%d ranks) moved every head group to its owner\n", sp);
    example::say(MPI_COMM_WORLD, "gradient allreduce over sequence_data_parallel (%d ranks) summed every rank\n", sdp.size());
    example::say(MPI_COMM_WORLD, "communicators created: %d (2 dims + 1 flattened)\n", mesh.comm_count());
    status = example::finish(failures, MPI_COMM_WORLD);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
