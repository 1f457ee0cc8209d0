// create_fails WHERE WHEN: a fault-tolerant creation whose MPI_Comm_create
// fails on one member alone fails on every member, and the members recover
// by creating again. 4 ranks, a (2, 2) mesh (replicate, shard) with
// fault_tolerance. On rank 1 one MPI_Comm_create fails (this program's
// MPI_Comm_create below), as Open MPI 5.0.11 failed one on one survivor of
// a death it had not noticed (tests/multihost/host_dies.cpp). WHERE says
// which:
//   shrink  rank 3 SIGKILLs itself; the survivors agree on the death and
//           shrink along replicate, which drops the slice of root indices 2
//           and 3: the call that fails is the shrunk mesh's root
//           communicator's, over the shrink's survivors (0, 1 and 2; rank 2
//           becomes a spare). Then they shrink again.
//   shrink-all  the same, but the shrink keeps every survivor (no dim: a
//           1-D mesh of 0, 1 and 2, whose root communicator is the
//           survivors' as MPIX_Comm_shrink made it): the call that fails is
//           its dim's communicator's, over that one.
//   root    no death: the call that fails is Mesh::create's root
//           communicator's, over MPI_COMM_WORLD. Then they create again.
//   dim     no death: the call that fails is Mesh::create's first dim's
//           communicator's, over the root communicator. Then they create
//           again.
// WHEN says how:
//   before  at once, without entering MPI: the others wait in theirs
//           unless rank 1 revokes the communicator they make it over (the
//           test's bound ends the job). Not with root: devmesh does not
//           revoke the program's MPI_COMM_WORLD.
//   after   once MPI made it on every member (rank 1 frees its own): the
//           others go on to make more communicators with rank 1, which
//           left, unless the members agree on whether all made it.
// Either way every member's first call must fail, and every member's
// second must succeed with the right groups.
//
// Each member prints one line, "rank R: ..." (run_fault.py create-fails judges
// them); the job may stay in MPI_Finalize after the death (ULFM).
#include <mpi.h>

#include <signal.h>

#include <cstdio>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

#include "comm_groups.hpp"

namespace {
// Set on rank 1 right before the first call: its fail_in-th MPI_Comm_create
// from then on fails, before or after entering MPI.
int fail_in = 0;
bool fail_after = false;
}  // namespace

extern "C" int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* out) {
  if (fail_in == 0 || --fail_in > 0) return PMPI_Comm_create(comm, group, out);
  if (fail_after) {
    MPI_Comm made = MPI_COMM_NULL;
    if (PMPI_Comm_create(comm, group, &made) == MPI_SUCCESS && made != MPI_COMM_NULL) PMPI_Comm_free(&made);
  }
  return MPI_ERR_OTHER;
}

namespace {

using devmesh::Error;
using devmesh::Mesh;

std::string ints(const std::vector<int>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

// What a call that makes a mesh gives this rank: "ok" and the mesh (moved
// to `out`), or the error's status.
template <class Make>
std::string attempt(Make make, Mesh& out) {
  try {
    out = make();
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
  const std::string where = argc > 2 ? argv[1] : "", when = argc > 2 ? argv[2] : "";
  if ((where != "shrink" && where != "shrink-all" && where != "root" && where != "dim") ||
      (when != "before" && when != "after") || (where == "root" && when == "before")) {
    std::fprintf(stderr, "usage: create_fails shrink|shrink-all|root|dim before|after (not root before)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  fail_after = when == "after";
  const int nth = where == "dim" ? 2 : 1;  // the root's call comes first, then the dims'
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  const auto create = [&] { return Mesh::create(MPI_COMM_WORLD, {2, 2}, {"replicate", "shard"}, o); };
  std::string line;
  try {
    if (where.starts_with("shrink")) {
      Mesh m = create();
      m.comm("shard");
      m.comm("replicate");
      if (rank == 3) raise(SIGKILL);
      // Every survivor learns of the death alike.
      m.agree(true);
      const std::vector<int> failed = m.failed_ranks();
      if (rank == 1) fail_in = nth;
      Mesh first, second;
      const bool all = where == "shrink-all";
      const auto shrink = [&] { return all ? m.shrink() : m.shrink("replicate"); };
      line = "first shrink " + attempt(shrink, first);
      line += ", second shrink " + attempt(shrink, second);
      // The shrunk mesh's group along its last dim, as old root indices.
      const char* along = all ? "replicate_shard" : "shard";
      if (second)
        line += ", shape " + ints(second.shape()) + ", " + along + " group " + ints(group_by_comm(second, along, rank));
      else if (line.ends_with("ok"))
        line += ", spare";
      line += ", failed " + ints(failed);
    } else {
      if (rank == 1) fail_in = nth;
      Mesh first, second;
      line = "first create " + attempt(create, first);
      line += ", second create " + attempt(create, second);
      if (second)
        line += ", replicate group " + ints(group_by_comm(second, "replicate", rank)) + ", shard group " +
                ints(group_by_comm(second, "shard", rank));
    }
  } catch (const Error& e) {
    line = "error " + std::string(devmesh::status_name(e.status())) + ": " + e.what();
  }
  std::printf("rank %d: %s\n", rank, line.c_str());
  std::fflush(stdout);
  MPI_Finalize();
  return 0;
}
