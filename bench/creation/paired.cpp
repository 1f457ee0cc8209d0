// Paired creation benchmark: devmesh's default path against the
// hand-written MPI_Comm_split code and against the floor (the MPI calls
// the default path must make, in sequence, without devmesh), in batches
// that alternate, so that a drift of the machine (other jobs, a rank
// descheduled for a while) hits neighbouring batches alike.
//
//   mpiexec -n 8 ./bench_creation_paired [--shape 2,2,2] [--batches 30] [--iters 16]
//
// Methods, each making one communicator per dim of a row-major mesh over
// MPI_COMM_WORLD:
//   devmesh       Mesh::create, then comm(dim) for every dim (the default path)
//   create_comms  Mesh::create, then create_comms() (CommPath::automatic)
//   split         the hand-written code: one MPI_Comm_split per dim
//   floor         every MPI call the default path makes, in its order,
//                 without devmesh (devmesh_calls): the argument check's
//                 32-byte MPI_Allreduce, then one group creation per dim by
//                 the call devmesh makes on this MPI (MPI_Comm_create_from_group
//                 where dims come straight from their groups,
//                 DEVMESH_DIMS_FROM_GROUP, else MPI_Comm_create_group over
//                 the parent), and the local calls around them
//   groups        the group creations alone (the floor without the check
//                 and the local calls): the least these communicators
//                 cost by that call
// A batch is `iters` creations of one method; each creation starts after a
// barrier, only the creation is timed (freeing is not), and the batch's
// time is the slowest rank's sum over its creations, divided by iters. The
// methods' order rotates every round. The paired ratio of A over B is the
// median over rounds of A's batch time / B's batch time in the same round.
//
// Prints, in the format of bench/support/bench.hpp, one record per method
// (µs per creation), one per method of its time outside the collective
// calls (outside_<method>: elapsed less the time inside them, as the tests'
// PMPI layer sees it, per creation, the mean over ranks) and one per pair
// (the ratios, scaled as the collective benchmark's paired ratios are).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench.hpp"
#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"
#include "hand_written.hpp"

namespace {

std::vector<int> parse_dims(const std::string& s) {
  std::vector<int> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    out.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return out;
}

// Every MPI call devmesh's default path makes, in its order, without
// devmesh: Mesh::create's checks, the 32-byte agreement, the parent's
// group, the lookup of its link to the parent (an attribute, set by the
// first creation) and its error handler; per dim, in the order the devmesh
// method asks for them (first dim first), the group, its creation, then the
// name, the attribute that sees the program free it, and the parent's error
// handler.
int null_delete(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }

// Dim i's communicator from the caller's group g by the call devmesh makes
// on this MPI.
void make_dim(int i, MPI_Group g, MPI_Comm* out) {
#if DEVMESH_DIMS_FROM_GROUP
  comm_from_group(i, g, out);
#else
  MPI_Comm_create_group(MPI_COMM_WORLD, g, i, out);
#endif
}

void devmesh_calls(const std::vector<int>& dims, std::vector<MPI_Comm>& out) {
  static int parent_key = MPI_KEYVAL_INVALID, watch_key = MPI_KEYVAL_INVALID;
  static int link = 0, watch = 0;
  if (parent_key == MPI_KEYVAL_INVALID) {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, null_delete, &parent_key, nullptr);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, null_delete, &watch_key, nullptr);
    MPI_Comm_set_attr(MPI_COMM_WORLD, parent_key, &link);
  }
  int initialized = 0, finalized = 0, size = 0, rank = 0, found = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::uint64_t in[4] = {1, 2, 0, 0}, agreed[4];
  MPI_Allreduce(in, agreed, 4, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Group parent = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &parent);
  void* value = nullptr;
  MPI_Comm_get_attr(MPI_COMM_WORLD, parent_key, &value, &found);
  MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler);
  for_each_caller_group(dims, [&](int i, MPI_Group g) {
    make_dim(i, g, &out[i]);
    const std::string name = "devmesh:d" + std::to_string(i);
    MPI_Comm_set_name(out[i], name.c_str());
    MPI_Comm_set_attr(out[i], watch_key, &watch);
    MPI_Comm_set_errhandler(out[i], handler);
  }, DimOrder::first_first);
  MPI_Errhandler_free(&handler);
  MPI_Group_free(&parent);
}

// The group creations alone: the floor without the argument check and the
// local calls around the creations, in the same order. What these
// communicators cost at the least by the call devmesh makes, with nothing
// (no check) that turns disagreeing ranks into an error instead of a hang.
void group_calls(const std::vector<int>& dims, std::vector<MPI_Comm>& out) {
  for_each_caller_group(dims, [&](int i, MPI_Group g) { make_dim(i, g, &out[i]); }, DimOrder::first_first);
}

struct Method {
  const char* name;
  // One creation: returns this rank's seconds, cleans up untimed.
  std::function<double()> run;
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string shape_arg = "2,2,2";
  int batches = 30, iters = 16;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--shape") shape_arg = argv[i + 1];
    else if (a == "--batches") batches = std::atoi(argv[i + 1]);
    else if (a == "--iters") iters = std::atoi(argv[i + 1]);
  }
  const std::vector<int> dims = parse_dims(shape_arg);
  const std::size_t nd = dims.size();
  std::vector<std::string> names;
  std::string text;
  for (std::size_t i = 0; i < nd; ++i) {
    names.push_back("d" + std::to_string(i));
    text += (i ? "x" : "") + std::to_string(dims[i]);
  }
  const std::vector<Method> methods = {
      {"devmesh",
       [&] {
         const double t0 = MPI_Wtime();
         devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, dims, names);
         for (const std::string& n : names) mesh.comm(n);
         return MPI_Wtime() - t0;
       }},
      {"create_comms",
       [&] {
         const double t0 = MPI_Wtime();
         devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, dims, names);
         mesh.create_comms();
         return MPI_Wtime() - t0;
       }},
      {"split", [&] { return timed_comms(dims, hand_split); }},
      {"floor", [&] { return timed_comms(dims, devmesh_calls); }},
      {"groups", [&] { return timed_comms(dims, group_calls); }},
  };
  const std::size_t nm = methods.size();
  int rc = 0;
  try {
    // A batch's time, and each rank's time outside the collective calls
    // (the creation's own work between them, with the local MPI calls),
    // averaged over the ranks.
    auto batch = [&](const Method& m, double& outside) {
      double sum = 0, between = 0;
      for (int i = 0; i < iters; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double in0 = comm_counter::seconds_in_collectives();
        const double t = m.run();
        sum += t;
        between += t - (comm_counter::seconds_in_collectives() - in0);
      }
      between /= iters;
      MPI_Allreduce(MPI_IN_PLACE, &between, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      outside = between / bench::world_size();
      return bench::slowest(sum / iters);
    };
    double outside = 0;
    for (const Method& m : methods) batch(m, outside);  // warm-up: endpoints, first-call costs
    std::vector<std::vector<double>> t(nm), out(nm);
    for (int b = 0; b < batches; ++b)
      for (std::size_t j = 0; j < nm; ++j) {
        const std::size_t k = (j + static_cast<std::size_t>(b)) % nm;
        t[k].push_back(batch(methods[k], outside));
        out[k].push_back(outside);
      }
    const std::string head = "creation_paired\tshape=" + text + "\tranks=" + std::to_string(bench::world_size()) +
                             "\titers=" + std::to_string(iters);
    for (std::size_t k = 0; k < nm; ++k) bench::print_row(head + "\tmethod=" + methods[k].name, t[k]);
    for (std::size_t k = 0; k < nm; ++k) bench::print_row(head + "\tmethod=outside_" + methods[k].name, out[k]);
    // Ratios as "seconds" x 1e-6, so that the record's numbers are the
    // ratios themselves (as bench/collectives prints them).
    auto pair = [&](std::size_t a, std::size_t b) {
      std::vector<double> r;
      for (int i = 0; i < batches; ++i) r.push_back(t[a][i] / t[b][i] * 1e-6);
      bench::print_row(head + "\tmethod=paired_" + methods[a].name + "_over_" + methods[b].name, r);
    };
    pair(0, 2);  // devmesh / split
    pair(0, 3);  // devmesh / floor
    pair(3, 2);  // floor / split
    pair(1, 0);  // create_comms / devmesh
    pair(1, 2);  // create_comms / split
    pair(4, 2);  // groups / split
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
