// The hand-written MPI code devmesh replaces, one function per method, as
// the creation benchmarks (bench/creation, bench/traffic) measure it: each
// makes one communicator per dim of a row-major mesh over MPI_COMM_WORLD.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

// Whether the MPI makes communicators from groups: what the build found
// (meson's function check, given to the benchmarks it builds), else the
// version the MPI reports. Open MPI 5 says MPI 3.1 and has the function.
#ifdef DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP
#define BENCH_HAVE_COMM_FROM_GROUP DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP
#else
#define BENCH_HAVE_COMM_FROM_GROUP (MPI_VERSION >= 4)
#endif

// The hand-written code of the seed tutorial: one MPI_Comm_split over
// MPI_COMM_WORLD per dim, colour = the rank's position in the other dims,
// key = its coordinate along the dim.
inline void hand_split(const std::vector<int>& dims, std::vector<MPI_Comm>& out) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int nd = static_cast<int>(dims.size());
  std::vector<int> coord(nd);
  for (int i = nd - 1, r = rank; i >= 0; --i) {
    coord[i] = r % dims[i];
    r /= dims[i];
  }
  for (int i = 0; i < nd; ++i) {
    int color = 0;
    for (int j = 0; j < nd; ++j)
      if (j != i) color = color * dims[j] + coord[j];
    MPI_Comm_split(MPI_COMM_WORLD, color, coord[i], &out[i]);
  }
}

// MPI's own Cartesian topology: MPI_Cart_create, then one MPI_Cart_sub per dim.
inline void hand_cart(const std::vector<int>& dims, std::vector<MPI_Comm>& out, MPI_Comm& cart) {
  const int nd = static_cast<int>(dims.size());
  std::vector<int> periods(nd, 0);
  MPI_Cart_create(MPI_COMM_WORLD, nd, dims.data(), periods.data(), 0, &cart);
  for (int i = 0; i < nd; ++i) {
    std::vector<int> remain(nd, 0);
    remain[i] = 1;
    MPI_Cart_sub(cart, remain.data(), &out[i]);
  }
}

// Calls make(i, g) for each dim i with g the caller's group along dim i
// (members `stride` apart, the product of the later dims): last dim first,
// as the hand-written group-based methods list it, or first dim first (the
// order in which the creation benchmarks ask a mesh for its dims).
enum class DimOrder { last_first, first_first };
template <class Make>
void for_each_caller_group(const std::vector<int>& dims, Make&& make, DimOrder order = DimOrder::last_first) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int nd = static_cast<int>(dims.size());
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  std::vector<int> stride(nd, 1);
  for (int i = nd - 2; i >= 0; --i) stride[i] = stride[i + 1] * dims[i + 1];
  for (int j = 0; j < nd; ++j) {
    const int i = order == DimOrder::last_first ? nd - 1 - j : j;
    const int c = (rank / stride[i]) % dims[i];
    const int base = rank - c * stride[i];
    std::vector<int> members(dims[i]);
    for (int k = 0; k < dims[i]; ++k) members[k] = base + k * stride[i];
    MPI_Group g;
    MPI_Group_incl(world, dims[i], members.data(), &g);
    make(i, g);
    MPI_Group_free(&g);
  }
  MPI_Group_free(&world);
}

// The reference: one MPI_Comm_create_group per dim over just the
// caller's group, members listed by hand.
inline void hand_create_group(const std::vector<int>& dims, std::vector<MPI_Comm>& out) {
  for_each_caller_group(dims, [&](int i, MPI_Group g) { MPI_Comm_create_group(MPI_COMM_WORLD, g, i, &out[i]); });
}

#if BENCH_HAVE_COMM_FROM_GROUP
// Dim i's communicator from the caller's group g through MPI-4's
// MPI_Comm_create_from_group, the call devmesh makes per dim (no parent
// communicator; a string tag per dim).
inline void comm_from_group(int i, MPI_Group g, MPI_Comm* out) {
  const std::string tag = "bench:from_group:" + std::to_string(i);
  MPI_Comm_create_from_group(g, tag.c_str(), MPI_INFO_NULL, MPI_ERRORS_RETURN, out);
}

// The same groups as hand_create_group through comm_from_group: measured
// beside it to show what the MPI-4 call costs.
inline void hand_create_from_group(const std::vector<int>& dims, std::vector<MPI_Comm>& out) {
  for_each_caller_group(dims, [&](int i, MPI_Group g) { comm_from_group(i, g, &out[i]); });
}
#endif

inline void free_all(std::vector<MPI_Comm>& comms) {
  for (MPI_Comm& c : comms)
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
}

// One creation by make(dims, comms) of a communicator per dim: this rank's
// seconds for it; the communicators are freed untimed.
template <class Make>
double timed_comms(const std::vector<int>& dims, Make&& make) {
  std::vector<MPI_Comm> c(dims.size(), MPI_COMM_NULL);
  const double t0 = MPI_Wtime();
  make(dims, c);
  const double t = MPI_Wtime() - t0;
  free_all(c);
  return t;
}
