// Uses the example backend plugin, built outside devmesh against the
// installed headers, for the tp dim of a (dp, tp) mesh whose dp dim stays
// on MPI, and checks its collectives against MPI's own results over tp's
// MPI communicator. Run on 4 ranks with DEVMESH_BACKEND_PATH naming the
// plugin's directory.
#include <devmesh/mesh.hpp>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, bad = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  {
    devmesh::MeshOptions o;
    o.dim_backends = {{"tp", "example"}};
    o.dim_options = {{"tp", "scale=1"}};
    devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, {0, 2}, {"dp", "tp"}, o);
    bad |= mesh.backend("tp") != "example" || mesh.backend("dp") != "mpi";
    devmesh::Communicator& tp = mesh.communicator("tp");
    bad |= tp.backend() != "example" || tp.size() != 2 || tp.rank() != mesh.local_rank("tp");
    std::vector<double> x = {rank + 0.5, 2.0 * rank, -1.0 * rank}, got(3), want(3);
    tp.allreduce(x.data(), got.data(), 3, devmesh::DataType::float64, devmesh::ReduceOp::sum);
    MPI_Allreduce(x.data(), want.data(), 3, MPI_DOUBLE, MPI_SUM, mesh.comm("tp"));
    bad |= got != want;
    std::vector<int> mine = {rank, 10 * rank}, all(4), ref(4);
    tp.allgather(mine.data(), all.data(), 2, devmesh::DataType::int32);
    MPI_Allgather(mine.data(), 2, MPI_INT, ref.data(), 2, MPI_INT, mesh.comm("tp"));
    bad |= all != ref;
    int value = rank;
    tp.broadcast(&value, 1, devmesh::DataType::int32, 1);
    bad |= value != mesh.group("tp")[1];
    // An operation the plugin leaves out is reported, not crashed on.
    try {
      tp.alltoall(mine.data(), all.data(), 1, devmesh::DataType::int32);
      bad = 1;
    } catch (const devmesh::Error& e) {
      bad |= e.status() != devmesh::Status::unsupported;
    }
    std::printf("backend consumer: rank %d, tp on %s: %s\n", rank, tp.backend().data(), bad ? "WRONG" : "ok");
  }
  MPI_Finalize();
  return bad;
}
