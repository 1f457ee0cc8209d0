// Include this (after defining BOOST_TEST_MODULE) in Boost.Test programs run
// under mpiexec: main() comes from mpi_test_main.cpp, which initialises MPI.
#pragma once
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include <mpi.h>

#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "devmesh/status.hpp"

// Small helpers shared by the MPI test programs.
inline int world_size() {
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

inline int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// True when every rank of the world passed the same value.
inline bool same_everywhere(int v) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

// The status f throws as devmesh::Error (success if none), its message into
// *message.
inline devmesh::Status status_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const devmesh::Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return devmesh::Status::success;
}

// World ranks of comm's members, in comm rank order (local, no collective).
inline std::vector<int> members(MPI_Comm comm) {
  MPI_Group g, w;
  int n = 0;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &w);
  MPI_Group_size(g, &n);
  std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  std::iota(in.begin(), in.end(), 0);
  MPI_Group_translate_ranks(g, n, in.data(), w, out.data());
  MPI_Group_free(&g);
  MPI_Group_free(&w);
  return out;
}
