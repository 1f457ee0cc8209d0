// A C++ program built against an installed devmesh with CMake.
#include <mpi.h>

#include <cstdio>
#include <devmesh/mesh.hpp>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int ok = 0;
  {
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {0, 2}, {"dp", "tp"});
    devmesh::Mesh flat = mesh.flatten();
    int sum = 0, me = mesh.parent_rank();
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, flat.comm());
    const int n = mesh.size();
    ok = sum == n * (n - 1) / 2;
    if (me == 0) std::printf("c++ consumer: %s over %d ranks: %s\n", flat.names()[0].c_str(), n, ok ? "ok" : "WRONG");
  }
  MPI_Finalize();
  return ok ? 0 : 1;
}
