// The NCCL backend where no GPU is usable (CI): selection per mesh and per
// dim, the unsupported path, device selection as a pure function, and no
// GPU call at all for MPI-only meshes.
#define BOOST_TEST_MODULE nccl_cpu
#include "mpi_test.hpp"

#include <string>

#include "devmesh/mesh.hpp"
#include "nccl/nccl_backend.hpp"
#ifdef DEVMESH_TEST_GPU_COUNTER
#include "gpu_call_counter.hpp"
#endif

using namespace devmesh;

namespace {

bool gpu_usable() {
  MeshOptions o;
  o.backend = "nccl";
  return status_of([&] { Mesh::create(MPI_COMM_SELF, {1}, {"x"}, o); }) == Status::success;
}

}  // namespace

BOOST_AUTO_TEST_CASE(device_selection_is_a_pure_function) {
  using detail::select_device;
  BOOST_TEST(select_device(-1, -1, 0, 4) == 0);
  BOOST_TEST(select_device(-1, -1, 5, 4) == 1);   // node-local rank modulo devices
  BOOST_TEST(select_device(-1, -1, 7, 8) == 7);
  BOOST_TEST(select_device(-1, 2, 5, 4) == 2);    // the caller's own choice wins
  BOOST_TEST(select_device(3, 2, 5, 4) == 3);     // an explicit request wins
  BOOST_TEST(status_of([] { select_device(4, -1, 0, 4); }) == Status::invalid_argument);
  BOOST_TEST(status_of([] { select_device(-5, -1, 0, 4); }) == Status::invalid_argument);
  std::string msg;
  BOOST_TEST(status_of([] { select_device(-1, -1, 0, 0); }, &msg) == Status::unsupported);
  BOOST_TEST(msg.find("CUDA device") != std::string::npos);
  // Every local rank of a host with 8 GPUs gets a different one.
  for (int r = 0; r < 8; ++r) BOOST_TEST(select_device(-1, -1, r, 8) == r);
}

BOOST_AUTO_TEST_CASE(unknown_backend_names_are_invalid) {
  MeshOptions o;
  o.backend = "nosuch";
  std::string msg;
  BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }, &msg) == Status::invalid_argument);
  BOOST_TEST(msg.find("nosuch") != std::string::npos);
  MeshOptions p;
  p.dim_backends = {{"x", ""}};
  BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, p); }) == Status::invalid_argument);
}

BOOST_AUTO_TEST_CASE(nccl_mesh_is_unsupported_without_gpu) {
  if (gpu_usable()) return;  // covered by tests/gpu on a GPU machine
  MeshOptions o;
  o.backend = "nccl";
  std::string msg;
  const Status s = status_of([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &msg);
#ifdef DEVMESH_HAVE_NCCL
  BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::unsupported), msg);
  BOOST_TEST(msg.find("needs a CUDA device") != std::string::npos, msg);
#else
  // A build without the plugin: "nccl" is a backend nowhere to be found.
  BOOST_TEST(static_cast<int>(s) == static_cast<int>(Status::invalid_argument), msg);
  BOOST_TEST(msg.find("libdevmesh-backend-nccl.so") != std::string::npos, msg);
#endif
}

BOOST_AUTO_TEST_CASE(per_dim_override_is_checked_at_creation) {
  // Every backend a mesh names is loaded at creation: without a GPU a
  // per-dim "nccl" fails there, on every rank, before any communicator.
  MeshOptions o;
  o.dim_backends = {{"tp", "nccl"}};
  if (!gpu_usable()) {
    std::string msg;
    BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &msg) != Status::success);
    BOOST_TEST(msg.find("nccl") != std::string::npos, msg);
    return;
  }
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
  BOOST_TEST(m.backend("dp") == "mpi");
  BOOST_TEST(m.backend("tp") == "nccl");
  // A view naming the dim differently picks the default backend.
  BOOST_TEST(m["tp"].flatten("t2").backend() == "mpi");
}

BOOST_AUTO_TEST_CASE(nccl_options_are_checked_by_the_plugin) {
  if (!gpu_usable()) return;  // the plugin cannot be opened without a GPU
  MeshOptions o;
  o.backend = "nccl";
  for (const char* bad : {"init=fast", "timeout=0", "scalable_from=0", "device=-3", "colour=red"}) {
    o.backend_options = {bad};
    BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }) == Status::invalid_argument, bad);
  }
}

#ifdef DEVMESH_TEST_GPU_COUNTER
BOOST_AUTO_TEST_CASE(mpi_only_meshes_make_no_gpu_call) {
  const long before = gpu_call_counter::count();
  {
    Mesh m = Mesh::create(MPI_COMM_WORLD, {0, 0}, {"a", "b"});
    m.create_comms();
    for (const std::string d : {"a", "b"}) {
      Communicator& c = m.communicator(d);
      double x = 1, y = 0;
      c.allreduce(&x, &y, 1, DataType::float64, ReduceOp::sum);
    }
    m.flatten().communicator().barrier();
  }
  BOOST_TEST(gpu_call_counter::count() == before);
  // The counter does see the NCCL plugin probing for a device (once per
  // process, when "nccl" is first named: gpu_usable() did).
  BOOST_TEST(gpu_call_counter::count() > 0);
}
#endif
