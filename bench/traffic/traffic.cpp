// Traffic of communicator creation: messages, bytes, peers and send phases
// per rank for each creation method of bench/creation (the hand-written MPI
// code and devmesh's paths), counted by bench/traffic/ucp_counter.c at the
// layer the MPI puts messages on the wire (UCX's ucp calls), preloaded.
//
//   mpiexec -n 8 env LD_PRELOAD=libtraffic_ucp_counter.so ./bench_traffic --shapes 4,2 2,2,2
//
// Each method runs once uncounted (endpoints connected, first-use setup
// done) and once counted: the counted run is what a program that already
// communicated pays. The communicators are freed outside the counted window.
// Prints one record per shape and method from rank 0 (max and mean over
// ranks). Counts do not depend on timing, so oversubscription does not
// change them.
#include <dlfcn.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"
#include "hand_written.hpp"

namespace {

struct Counts {
  std::uint64_t messages, bytes, peers, phases, unknown_size;
};

// The counter library's entry points, when it is preloaded.
struct Counter {
  void (*start)() = nullptr;
  void (*stop)() = nullptr;
  void (*read)(Counts*) = nullptr;
  std::uint64_t (*pmix_calls)() = nullptr;
  bool found() const { return start && stop && read; }
};

Counter find_counter() {
  Counter c;
  *reinterpret_cast<void**>(&c.start) = dlsym(RTLD_DEFAULT, "traffic_counter_start");
  *reinterpret_cast<void**>(&c.stop) = dlsym(RTLD_DEFAULT, "traffic_counter_stop");
  *reinterpret_cast<void**>(&c.read) = dlsym(RTLD_DEFAULT, "traffic_counter_read");
  *reinterpret_cast<void**>(&c.pmix_calls) = dlsym(RTLD_DEFAULT, "traffic_counter_pmix_calls");
  return c;
}

std::vector<int> parse_shape(const std::string& s) {
  std::vector<int> dims;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    dims.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return dims;
}

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// A method: `make` is counted; what it leaves (communicators, a mesh) is
// released by `clear` outside the counted window.
struct Method {
  std::string name;
  std::function<void()> make, clear;
};

std::vector<Method> methods(const std::vector<int>& dims, std::vector<MPI_Comm>& comms,
                            std::unique_ptr<devmesh::Mesh>& mesh) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < dims.size(); ++i) names.push_back("d" + std::to_string(i));
  const std::size_t nd = dims.size();
  auto reset = [&comms, nd] { comms.assign(nd, MPI_COMM_NULL); };
  auto clear_comms = [&comms] { free_all(comms); comms.clear(); };
  auto clear_mesh = [&mesh] { mesh.reset(); };
  std::vector<Method> m;
  m.push_back({"hand_split", [&, reset] { reset(); hand_split(dims, comms); }, clear_comms});
  m.push_back({"hand_cart",
               [&, reset] {
                 reset();
                 MPI_Comm cart = MPI_COMM_NULL;
                 hand_cart(dims, comms, cart);
                 comms.push_back(cart);  // freed with the others
               },
               clear_comms});
  m.push_back({"hand_create_group", [&, reset] { reset(); hand_create_group(dims, comms); }, clear_comms});
#if MPI_VERSION >= 4
  m.push_back({"hand_create_from_group", [&, reset] { reset(); hand_create_from_group(dims, comms); },
               clear_comms});
#endif
  m.push_back({"devmesh", [&dims, &mesh, names] {
                 mesh = std::make_unique<devmesh::Mesh>(devmesh::Mesh::create(MPI_COMM_WORLD, dims, names));
                 for (const auto& n : names) mesh->comm(n);
               }, clear_mesh});
  for (auto [label, path] : {std::pair{"devmesh_create_group", devmesh::CommPath::create_group},
                             std::pair{"devmesh_split", devmesh::CommPath::split},
                             std::pair{"devmesh_cart_sub", devmesh::CommPath::cart_sub}}) {
    m.push_back({label, [&dims, &mesh, names, path] {
                   mesh = std::make_unique<devmesh::Mesh>(devmesh::Mesh::create(MPI_COMM_WORLD, dims, names));
                   mesh->create_comms(path);
                 }, clear_mesh});
  }
  m.push_back({"part_mesh_create", [&dims, &mesh, names] {
                 mesh = std::make_unique<devmesh::Mesh>(devmesh::Mesh::create(MPI_COMM_WORLD, dims, names));
               }, clear_mesh});
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<std::string> shapes;
  std::string mpi_label = "unknown";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mpi" && i + 1 < argc) mpi_label = argv[++i];
    else if (a == "--shapes")
      while (i + 1 < argc && argv[i + 1][0] != '-') shapes.push_back(argv[++i]);
  }
  const Counter counter = find_counter();
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (!counter.found() && world_rank() == 0)
    std::fprintf(stderr, "bench_traffic: no counter library preloaded: nothing is counted\n");
  int rc = 0;
  try {
    for (const std::string& s : shapes) {
      const std::vector<int> dims = parse_shape(s);
      std::string text;
      for (std::size_t i = 0; i < dims.size(); ++i) text += (i ? "x" : "") + std::to_string(dims[i]);
      std::vector<MPI_Comm> comms;
      std::unique_ptr<devmesh::Mesh> mesh;
      for (Method& m : methods(dims, comms, mesh)) {
        m.make();  // uncounted: connects endpoints, first-use setup
        m.clear();
        MPI_Barrier(MPI_COMM_WORLD);
        std::uint64_t pmix0 = counter.pmix_calls ? counter.pmix_calls() : 0;
        if (counter.found()) counter.start();
        m.make();
        if (counter.found()) counter.stop();
        Counts c{};
        if (counter.found()) counter.read(&c);
        const std::uint64_t pmix = counter.pmix_calls ? counter.pmix_calls() - pmix0 : 0;
        m.clear();
        std::uint64_t mine[6] = {c.messages, c.bytes, c.peers, c.phases, c.unknown_size, pmix};
        std::uint64_t mx[6], sum[6];
        MPI_Reduce(mine, mx, 6, MPI_UINT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(mine, sum, 6, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        if (world_rank() == 0) {
          std::printf(
              "traffic\tmpi=%s\tshape=%s\tranks=%d\tmethod=%s\tmsgs_max=%llu\tmsgs_mean=%.3f\tbytes_max=%llu\t"
              "bytes_mean=%.3f\tpeers_max=%llu\tphases_max=%llu\tunsized=%llu\tpmix_max=%llu\n",
              mpi_label.c_str(), text.c_str(), size, m.name.c_str(), (unsigned long long)mx[0],
              double(sum[0]) / size, (unsigned long long)mx[1], double(sum[1]) / size,
              (unsigned long long)mx[2], (unsigned long long)mx[3], (unsigned long long)mx[4],
              (unsigned long long)mx[5]);
          std::fflush(stdout);
        }
      }
    }
  } catch (const devmesh::Error& e) {
    std::fprintf(stderr, "devmesh error: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
