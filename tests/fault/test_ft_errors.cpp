// fault_tolerance where it cannot run, and the failure calls on a mesh
// without it: clear errors, the same on every rank, nothing made (run
// without the launcher's fault tolerance, on every MPI).
#define BOOST_TEST_MODULE ft_errors
#include "mpi_test.hpp"

#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"

using devmesh::Mesh;
using devmesh::Status;

BOOST_AUTO_TEST_CASE(fault_tolerance_needs_ulfm_running) {
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  std::string message;
  const Status s = status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }, &message);
  BOOST_TEST(s == Status::unsupported);
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
  BOOST_TEST(message.find("fault_tolerance") != std::string::npos, message);
  // Either the MPI lacks ULFM (naming what) or runs without it (saying how
  // to start it).
  BOOST_TEST((message.find("lacks") != std::string::npos || message.find("--with-ft ulfm") != std::string::npos),
             message);
  // And through C, with the config field; a value other than 0 or 1 is
  // refused before anything else.
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  c.fault_tolerance = 1;
  const int shape[] = {0};
  const char* names[] = {"x"};
  devmesh_t m = reinterpret_cast<devmesh_t>(0x1);
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &c, &m) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(m == reinterpret_cast<devmesh_t>(0x1));  // untouched
  c.fault_tolerance = 2;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &c, &m) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("fault_tolerance 2") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(failure_calls_need_fault_tolerance) {
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"x"});
  std::string message;
  BOOST_TEST(status_of([&] { m.revoke(); }, &message) == Status::unsupported);
  BOOST_TEST(message.find("fault_tolerance") != std::string::npos, message);
  BOOST_TEST(status_of([&] { m.is_revoked(); }) == Status::unsupported);
  BOOST_TEST(status_of([&] { m.failed_ranks(); }) == Status::unsupported);
  BOOST_TEST(status_of([&] { m.agree(true); }) == Status::unsupported);
  BOOST_TEST(status_of([&] { m.shrink("x"); }) == Status::unsupported);
  BOOST_TEST(status_of([&] { m.shrunk_index(0); }, &message) == Status::invalid_argument);
  BOOST_TEST(message.find("not made by a shrink") != std::string::npos, message);
  // The mesh still works after the refusals: nothing was revoked.
  int sum = 0, one = 1;
  BOOST_TEST(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, m.comm("x")) == MPI_SUCCESS);
  BOOST_TEST(sum == world_size());
  BOOST_TEST(m.root_index() == world_rank());
  // The C entry points say the same.
  devmesh_t h = nullptr;
  const int shape[] = {0};
  const char* names[] = {"x"};
  BOOST_REQUIRE(devmesh_create(MPI_COMM_WORLD, 1, shape, names, &h) == DEVMESH_SUCCESS);
  int flag = 1, n = -1, index = -1;
  devmesh_t s = reinterpret_cast<devmesh_t>(0x1);
  BOOST_TEST(devmesh_revoke(h) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(devmesh_is_revoked(h, &flag) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(devmesh_failed_ranks(h, 0, nullptr, &n) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(n == -1);
  BOOST_TEST(devmesh_agree(h, &flag) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(devmesh_shrink(h, "x", &s) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(s == reinterpret_cast<devmesh_t>(0x1));
  BOOST_TEST(devmesh_root_index(h, &index) == DEVMESH_SUCCESS);
  BOOST_TEST(index == world_rank());
  BOOST_TEST(devmesh_destroy(&h) == DEVMESH_SUCCESS);
}

BOOST_AUTO_TEST_CASE(adopted_communicators_are_not_revoked) {
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  std::string message;
  // Checked before ULFM is asked for: the same answer on every MPI.
  const Status s = status_of([&] { Mesh::adopt(dup, "x", o); }, &message);
  BOOST_TEST(s == Status::invalid_argument);
  BOOST_TEST(message.find("adopted") != std::string::npos, message);
  MPI_Comm_free(&dup);
}

BOOST_AUTO_TEST_CASE(deadline_needs_fault_tolerance) {
  devmesh::MeshOptions o;
  o.deadline = 1;
  std::string message;
  // Checked before ULFM is asked for: the same answer on every MPI.
  BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }, &message) == Status::invalid_argument);
  BOOST_TEST(message.find("needs fault_tolerance") != std::string::npos, message);
  o.fault_tolerance = true;
  o.deadline = -1;
  BOOST_TEST(status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }, &message) == Status::invalid_argument);
  BOOST_TEST(message.find("deadline -1") != std::string::npos, message);
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  BOOST_TEST(c.deadline == 0.0);  // the initializer's default: none
  c.deadline = -0.5;
  const int shape[] = {0};
  const char* names[] = {"x"};
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &c, &m) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(m == nullptr);
}
