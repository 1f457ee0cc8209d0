// shrink_create_fails WHEN: a shrink whose creation fails on one survivor
// alone fails on every survivor, and the survivors recover by shrinking
// again. 4 ranks, a (2, 2) mesh (replicate, shard) with fault_tolerance;
// rank 3 SIGKILLs itself; the survivors agree on the death and shrink
// along replicate, which drops the slice of root indices 2 and 3: the
// shrunk mesh's root communicator is made by MPI_Comm_create over the
// shrink's survivors (0, 1 and 2; rank 2 becomes a spare).
//
// On rank 1 that first MPI_Comm_create fails (this program's
// MPI_Comm_create below), as Open MPI 5.0.11 failed it on one survivor of a
// death it had not noticed (tests/multihost/host_dies.cpp). WHEN says how:
//   before  at once, without entering MPI: ranks 0 and 2 wait in theirs
//           unless rank 1 revokes the survivors' communicator (the test's
//           bound ends the job);
//   after   once MPI made it on every survivor (rank 1 frees its own):
//           rank 0 goes on to make the new mesh's dims with rank 1, which
//           left, unless the survivors agree on whether all made it.
// Either way every survivor's shrink must fail (rank 1 with the failure it
// saw, the others with REVOKED), and every survivor's second shrink must
// succeed.
//
// Each survivor prints one line, "rank R: ..." (run_shrink_create_fails.sh
// judges them); the job may stay in MPI_Finalize after the death (ULFM).
#include <mpi.h>

#include <signal.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

namespace {
// Set on rank 1 right before the first shrink: its next MPI_Comm_create
// fails, before or after entering MPI.
bool fail_next_create = false;
bool fail_after = false;
}  // namespace

extern "C" int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* out) {
  if (!fail_next_create) return PMPI_Comm_create(comm, group, out);
  fail_next_create = false;
  if (fail_after) {
    MPI_Comm made = MPI_COMM_NULL;
    if (PMPI_Comm_create(comm, group, &made) == MPI_SUCCESS && made != MPI_COMM_NULL) PMPI_Comm_free(&made);
  }
  return MPI_ERR_OTHER;
}

namespace {

using devmesh::Error;
using devmesh::Mesh;

template <class T>
std::string ints(const std::vector<T>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

// What a shrink along replicate gives this rank: the error's status, or
// the shrunk mesh (moved to `out`).
std::string shrink(const Mesh& m, Mesh& out) {
  try {
    out = m.shrink("replicate");
    return "ok";
  } catch (const Error& e) {
    return std::string(devmesh::status_name(e.status()));
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const std::string when = argc > 1 ? argv[1] : "";
  if (when != "before" && when != "after") {
    std::fprintf(stderr, "usage: shrink_create_fails before|after\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fail_after = when == "after";
  std::string line;
  try {
    devmesh::MeshOptions o;
    o.fault_tolerance = true;
    Mesh m = Mesh::create(MPI_COMM_WORLD, {2, 2}, {"replicate", "shard"}, o);
    m.comm("shard");
    m.comm("replicate");
    if (rank == 3) raise(SIGKILL);
    // Every survivor learns of the death alike.
    m.agree(true);
    const std::vector<int> failed = m.failed_ranks();
    if (rank == 1) fail_next_create = true;
    Mesh first, second;
    const std::string first_status = shrink(m, first);
    const std::string second_status = shrink(m, second);
    line = "first shrink " + first_status + ", second shrink " + second_status;
    if (second) {
      // The shard group of the shrunk (1, 2) mesh, as old root indices
      // summed over its communicator: each member adds its own plus one at
      // its rank (a member missing leaves -1).
      auto& c = second.communicator("shard");
      std::vector<std::int64_t> v(static_cast<std::size_t>(c.size()), 0), sum(v.size());
      v[static_cast<std::size_t>(c.rank())] = m.root_index() + 1;
      c.allreduce(v.data(), sum.data(), v.size(), devmesh::DataType::int64, devmesh::ReduceOp::sum);
      for (std::int64_t& x : sum) --x;
      line += ", shape " + ints(second.shape()) + ", shard group " + ints(sum);
    } else if (second_status == "ok") {
      line += ", spare";
    }
    line += ", failed " + ints(failed);
  } catch (const Error& e) {
    line = "error " + std::string(devmesh::status_name(e.status())) + ": " + e.what();
  }
  std::printf("rank %d: %s\n", rank, line.c_str());
  std::fflush(stdout);
  MPI_Finalize();
  return 0;
}
