// Communicator creation for one mesh shape: devmesh (every creation path)
// against the hand-written MPI code it replaces, measured side by side in
// one run. Methods alternate (rotating order each repetition) so that drift
// of the machine hits all of them alike.
//
//   mpiexec -n 8 ./bench_creation --shape 2,2,2 --reps 60
//
// Prints one record per method (see bench/support/bench.hpp): the slowest
// rank's time to have every dim's communicator, and the communicators the
// method made (counted by the tests' PMPI layer, comm_counter).
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench.hpp"
#include "hand_written.hpp"
#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

namespace {

struct Shape {
  std::vector<int> dims;
  std::vector<std::string> names;
  std::string text;  // "2x2x2"
};

Shape parse_shape(const std::string& s) {
  Shape out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    out.dims.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  for (std::size_t i = 0; i < out.dims.size(); ++i) {
    out.names.push_back("d" + std::to_string(i));
    out.text += (i ? "x" : "") + std::to_string(out.dims[i]);
  }
  return out;
}

struct Method {
  std::string name;
  // Runs the method once; returns this rank's seconds. Cleans up untimed.
  std::function<double()> run;
};

std::vector<Method> methods(const Shape& shape) {
  const auto& dims = shape.dims;
  const auto& names = shape.names;
  const std::size_t nd = dims.size();
  std::vector<Method> m;
  m.push_back({"hand_split", [&dims] { return timed_comms(dims, hand_split); }});
  m.push_back({"hand_cart", [&dims, nd] {
                 std::vector<MPI_Comm> c(nd, MPI_COMM_NULL);
                 MPI_Comm cart = MPI_COMM_NULL;
                 const double t0 = MPI_Wtime();
                 hand_cart(dims, c, cart);
                 const double t = MPI_Wtime() - t0;
                 free_all(c);
                 MPI_Comm_free(&cart);
                 return t;
               }});
  m.push_back({"hand_create_group", [&dims] { return timed_comms(dims, hand_create_group); }});
#if BENCH_HAVE_COMM_FROM_GROUP
  m.push_back({"hand_create_from_group", [&dims] { return timed_comms(dims, hand_create_from_group); }});
#endif
  // devmesh as a user writes it: create, then ask each dim for its communicator.
  m.push_back({"devmesh", [&dims, &names] {
                 const double t0 = MPI_Wtime();
                 devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, dims, names);
                 for (const auto& n : names) mesh.comm(n);
                 return MPI_Wtime() - t0;
               }});
  for (auto [label, path] : {std::pair{"devmesh_create_group", devmesh::CommPath::create_group},
                             std::pair{"devmesh_split", devmesh::CommPath::split},
                             std::pair{"devmesh_cart_sub", devmesh::CommPath::cart_sub}}) {
    m.push_back({label, [&dims, &names, path] {
                   const double t0 = MPI_Wtime();
                   devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, dims, names);
                   mesh.create_comms(path);
                   return MPI_Wtime() - t0;
                 }});
  }
  // The parts of devmesh's creation, to explain its total. Mesh::create
  // makes no communicator (with MPI 4): its only MPI call is the argument
  // check, one MPI_Allreduce of 4 uint64 over the parent.
  m.push_back({"part_mesh_create", [&dims, &names] {
                 const double t0 = MPI_Wtime();
                 devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, dims, names);
                 return MPI_Wtime() - t0;
               }});
  m.push_back({"part_allreduce32", [] {
                 // The check's MPI call alone, without devmesh around it.
                 std::uint64_t in[4] = {1, 2, 0, 0}, out[4];
                 const double t0 = MPI_Wtime();
                 MPI_Allreduce(in, out, 4, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
                 return MPI_Wtime() - t0;
               }});
#if BENCH_HAVE_COMM_FROM_GROUP
  m.push_back({"part_check_from_group", [&dims, nd] {
                 // devmesh's MPI calls in sequence, without devmesh: the
                 // check, then one MPI_Comm_create_from_group per dim.
                 std::uint64_t in[4] = {1, 2, 0, 0}, out[4];
                 std::vector<MPI_Comm> c(nd, MPI_COMM_NULL);
                 const double t0 = MPI_Wtime();
                 MPI_Allreduce(in, out, 4, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
                 hand_create_from_group(dims, c);
                 const double t = MPI_Wtime() - t0;
                 free_all(c);
                 return t;
               }});
#endif
  m.push_back({"part_idup_iallreduce", [] {
                 // What the previous design's Mesh::create did in MPI: the
                 // root communicator as a duplicate of the parent, with the
                 // check overlapped. Kept to show what making it cost.
                 std::uint64_t in[3] = {1, 2, 0}, out[3];
                 MPI_Comm c;
                 MPI_Request req[2];
                 const double t0 = MPI_Wtime();
                 MPI_Comm_idup(MPI_COMM_WORLD, &c, &req[0]);
                 MPI_Iallreduce(in, out, 3, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &req[1]);
                 MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
                 const double t = MPI_Wtime() - t0;
                 MPI_Comm_free(&c);
                 return t;
               }});
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::string shape_arg = "2,2,2";
  int reps = 40, warmup = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--shape") shape_arg = argv[i + 1];
    else if (a == "--reps") reps = std::atoi(argv[i + 1]);
    else if (a == "--warmup") warmup = std::atoi(argv[i + 1]);
  }
  const Shape shape = parse_shape(shape_arg);
  int rc = 0;
  try {
    std::vector<Method> ms = methods(shape);
    const std::size_t nm = ms.size();
    std::vector<std::vector<double>> samples(nm);
    std::vector<long> comms(nm, 0);
    for (int rep = -warmup; rep < reps; ++rep) {
      for (std::size_t j = 0; j < nm; ++j) {
        // Rotate the order each repetition: no method always runs first.
        const std::size_t k = (j + static_cast<std::size_t>(rep + warmup)) % nm;
        MPI_Barrier(MPI_COMM_WORLD);
        const long before = comm_counter::created();
        const double t = bench::slowest(ms[k].run());
        comms[k] = comm_counter::created() - before;
        if (rep >= 0) samples[k].push_back(t);
      }
    }
    for (std::size_t k = 0; k < nm; ++k)
      bench::print_row("creation\tshape=" + shape.text + "\tranks=" + std::to_string(bench::world_size()) +
                           "\tmethod=" + ms[k].name + "\tcomms=" + std::to_string(comms[k]),
                       samples[k]);
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
