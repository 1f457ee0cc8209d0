// Shared by the examples: verify a dim's communicator with a real
// collective and print one readable line per dim from rank 0.
#pragma once

#include <mpi.h>

#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

namespace example {

// Every member allgathers its parent rank over dim's communicator; the
// result must be the group the mesh reports. Returns the number of ranks
// (over the whole parent) whose check failed, the same on every rank.
inline int verify_dim(const devmesh::Mesh& mesh, const std::string& dim, MPI_Comm parent) {
  MPI_Comm comm = mesh.comm(dim);
  const std::vector<int> expect = mesh.group(dim);
  std::vector<int> got(expect.size());
  int me = mesh.parent_rank();
  MPI_Allgather(&me, 1, MPI_INT, got.data(), 1, MPI_INT, comm);
  int bad = got != expect, total = 0;
  MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, parent);
  return total;
}

inline std::string groups_text(const std::vector<std::vector<int>>& groups) {
  std::string s;
  for (const auto& g : groups) {
    s += "[";
    for (std::size_t i = 0; i < g.size(); ++i) s += (i ? "," : "") + std::to_string(g[i]);
    s += "] ";
  }
  return s;
}

// Verifies each dim and prints "  name  size  groups  verified" from rank 0.
// Returns the number of failed checks.
inline int report(const devmesh::Mesh& mesh, const std::vector<std::string>& dims, MPI_Comm parent,
                  const char* title) {
  int rank = 0, failures = 0;
  MPI_Comm_rank(parent, &rank);
  if (rank == 0) std::printf("%s\n", title);
  for (const std::string& d : dims) {
    const int bad = verify_dim(mesh, d, parent);
    failures += bad;
    if (rank == 0)
      std::printf("  %-14s size %-3d groups %s %s\n", d.c_str(), mesh.size(d),
                  groups_text(mesh.all_groups(d)).c_str(), bad ? "FAILED" : "verified by allgather");
  }
  return failures;
}

// printf from rank 0 of parent only.
[[gnu::format(printf, 2, 3)]] inline void say(MPI_Comm parent, const char* format, ...) {
  int rank = 0;
  MPI_Comm_rank(parent, &rank);
  if (rank != 0) return;
  std::va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::fflush(stdout);
}

// A check of this rank: counts 1 when it fails. Every rank should take the
// same checks, so that finish() can sum them.
inline int check(bool ok) { return ok ? 0 : 1; }

// Sums every rank's failures over parent, prints the verdict from rank 0
// and returns the process exit status (0 only when no rank failed).
inline int finish(int failures, MPI_Comm parent) {
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, parent);
  say(parent, "%s\n", total == 0 ? "all groups verified" : "VERIFICATION FAILED");
  return total == 0 ? 0 : 1;
}

}  // namespace example
