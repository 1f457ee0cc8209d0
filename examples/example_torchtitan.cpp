// torchtitan style: one 1-D world mesh, unflattened twice, once for the
// dense layers and once for the mixture-of-experts layers, plus the
// flattened data-parallel group of the loss. Views of one world share a
// communicator wherever their layouts coincide.
//
//   mpiexec -n 8 ./example_torchtitan
//
// On 8 ranks (torchtitan with dp_shard 2, cp 2, tp 2 and expert
// parallelism borrowing dp x cp):
//   dense  (dp, cp, tp)      = (2, 2, 2)   dp=2:4  cp=2:2  tp=2:1
//   experts (dp, ep, ep_tp)  = (1, 4, 2)   ep=4:2  ep_tp=2:1
//   flattened dp_cp          = dense (dp, cp) as one dim: (2,2):(4,2) = 4:2
// ep has the layout of dp_cp and ep_tp that of tp, so the expert mesh
// creates no communicator of its own beyond its size-1 dp.
#include <mpi.h>

#include <cstdio>
#include <vector>

#include "devmesh/mesh.hpp"
#include "report.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    int world_size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    devmesh::Mesh world = devmesh::Mesh::create(MPI_COMM_WORLD, {0}, {"world"});
    const int cp = 2, tp = 2, dp = world_size / (cp * tp);
    devmesh::Mesh dense = world.unflatten("world", {dp, cp, tp}, {"dp", "cp", "tp"});
    devmesh::Mesh experts = world.unflatten("world", {1, dp * cp, tp}, {"dp", "ep", "ep_tp"});
    devmesh::Mesh dp_cp = dense[{"dp", "cp"}].flatten();  // "dp_cp": loss and gradient reduction

    int failures = example::report(dense, dense.names(), MPI_COMM_WORLD, "dense (dp, cp, tp):");
    failures += example::report(experts, experts.names(), MPI_COMM_WORLD, "experts (dp, ep, ep_tp):");
    failures += example::report(dp_cp, {"dp_cp"}, MPI_COMM_WORLD, "flattened:");

    // Where the layouts coincide, the views hold the very same communicator.
    struct Shared {
      const char* what;
      bool same;
    };
    const Shared shared[] = {
        {"experts ep    == dense dp_cp", experts.comm("ep") == dp_cp.comm()},
        {"experts ep_tp == dense tp   ", experts.comm("ep_tp") == dense.comm("tp")},
        {"dense (dp,cp,tp) flattened == world", dense.flatten("all").comm() == world.comm()},
        {"experts ep    != dense cp   ", experts.comm("ep") != dense.comm("cp")},
    };
    example::say(MPI_COMM_WORLD, "communicators shared between views of one world:\n");
    for (const Shared& s : shared) {
      failures += example::check(s.same);
      example::say(MPI_COMM_WORLD, "  %s  %s\n", s.what, s.same ? "yes" : "NO");
    }

    // A real collective on a shared communicator: the expert all-to-all
    // (token dispatch) runs over ep, which is dp_cp's communicator.
    devmesh::Communicator& ep = experts.communicator("ep");
    const int n = ep.size(), r = ep.rank();
    std::vector<double> tokens(static_cast<std::size_t>(n)), routed(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) tokens[static_cast<std::size_t>(j)] = 100.0 * r + j;
    ep.alltoall(tokens.data(), routed.data(), 1, devmesh::DataType::float64);
    for (int j = 0; j < n; ++j) failures += example::check(routed[static_cast<std::size_t>(j)] == 100.0 * j + r);

    // dense dp, cp, tp, dp_cp, world, experts' size-1 dp: one each; ep and
    // ep_tp reuse dp_cp and tp; the flattened (dp,cp,tp) reuses world.
    example::say(MPI_COMM_WORLD, "token all-to-all over ep (%d ranks) verified\n", n);
    example::say(MPI_COMM_WORLD, "communicators created: %d (6 distinct layouts for 9 dims asked for)\n",
                 world.comm_count());
    failures += example::check(world.comm_count() == 6);
    status = example::finish(failures, MPI_COMM_WORLD);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
