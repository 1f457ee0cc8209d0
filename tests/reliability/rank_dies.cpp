// A rank that dies while the others create a mesh or run a collective.
// Run by rank_dies.sh, which checks that the whole job ends (non-zero) in
// bounded time instead of hanging: under MPICH's hydra, a process that
// exits without MPI_Finalize makes mpiexec kill the remaining ranks.
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "devmesh/mesh.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool in_collective = argc > 1 && std::strcmp(argv[1], "collective") == 0;
  devmesh::Mesh m;
  if (in_collective) m = devmesh::Mesh::create(MPI_COMM_WORLD, {size}, {"x"});
  if (rank == size - 1) _exit(7);  // dies without MPI_Finalize
  try {
    if (in_collective) {
      int one = 1, sum = 0;
      for (int i = 0; i < 1000000; ++i) m.communicator("x").allreduce(&one, &sum, 1, devmesh::DataType::int32, devmesh::ReduceOp::sum);
    } else {
      m = devmesh::Mesh::create(MPI_COMM_WORLD, {size}, {"x"});
      m.comm("x");
    }
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    return 2;
  }
  MPI_Finalize();
  return 0;
}
