// fault_tolerance where it cannot run, and the failure calls on a mesh
// without it: clear errors, the same on every rank, nothing made (run
// without the launcher's fault tolerance, on every MPI).
#define BOOST_TEST_MODULE ft_errors
#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"
#include "mpi_test.hpp"

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

// Whether this run has ULFM on (Open MPI 5 started with --with-ft ulfm): a
// fault-tolerant mesh can be made (over a duplicate of the world that
// returns errors, as fault_tolerance needs).
static bool ulfm_running() {
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  const bool on = status_of([&] { Mesh::create(dup, {0}, {"x"}, o); }) == Status::success;
  MPI_Comm_free(&dup);
  return on;
}

BOOST_AUTO_TEST_CASE(repair_calls_need_fault_tolerance) {
  BOOST_REQUIRE(!ulfm_running());  // this case runs without the launcher's fault tolerance
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"x"});
  std::string message;
  BOOST_TEST(status_of([&] { m.repair(); }, &message) == Status::unsupported);
  BOOST_TEST(message.find("repair needs a mesh made with fault_tolerance") != std::string::npos, message);
  BOOST_TEST(status_of([&] { m.repair(devmesh::Spawn{"/bin/true", {}, MPI_INFO_NULL}); }) == Status::unsupported);
  BOOST_TEST(status_of([&] { m.release_spares(); }, &message) == Status::unsupported);
  BOOST_TEST(message.find("release_spares needs a mesh made with fault_tolerance") != std::string::npos, message);
  // standby and join: the MPI lacks ULFM (naming what) or runs without it.
  for (const char* what : {"standby", "join"}) {
    const Status s =
        status_of([&] { std::string(what) == "standby" ? Mesh::standby(MPI_COMM_WORLD) : Mesh::join(); }, &message);
    BOOST_TEST(s == Status::unsupported, what);
    BOOST_TEST(message.find(std::string(what) + ": ") == 0, message);
    BOOST_TEST((message.find("lacks") != std::string::npos || message.find("--with-ft ulfm") != std::string::npos),
               message);
  }
  // A creation with spares and fault_tolerance: creation's refusal, every rank alike.
  if (world_size() > 1) {
    devmesh::MeshOptions o;
    o.fault_tolerance = true;
    o.spares = 1;
    const Status s = status_of([&] { Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o); }, &message);
    BOOST_TEST(s == Status::unsupported);
    BOOST_TEST(same_everywhere(static_cast<int>(s)));
    BOOST_TEST(message.find("fault_tolerance") != std::string::npos, message);
  }
  // The mesh still works after the refusals: nothing was revoked.
  int sum = 0, one = 1;
  BOOST_TEST(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, m.comm("x")) == MPI_SUCCESS);
  BOOST_TEST(sum == world_size());
  // The C entry points say the same, the outputs untouched.
  devmesh_t h = nullptr;
  const int shape[] = {0};
  const char* names[] = {"x"};
  BOOST_REQUIRE(devmesh_create(MPI_COMM_WORLD, 1, shape, names, &h) == DEVMESH_SUCCESS);
  devmesh_t const sentinel = reinterpret_cast<devmesh_t>(0x1);
  devmesh_t r = sentinel;
  char arg[] = "x";
  char* argv[] = {arg, nullptr};
  BOOST_TEST(devmesh_repair(h, nullptr, nullptr, &r) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(std::string(devmesh_last_error()).find("devmesh_repair: repair needs") == 0, devmesh_last_error());
  BOOST_TEST(devmesh_repair(h, "/bin/true", argv, &r) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(devmesh_repair_ex(h, "/bin/true", argv, MPI_INFO_NULL, &r) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(std::string(devmesh_last_error()).find("devmesh_repair_ex: ") == 0, devmesh_last_error());
  BOOST_TEST(r == sentinel);
  BOOST_TEST(devmesh_release_spares(h) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(devmesh_standby(MPI_COMM_WORLD, &r) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(devmesh_join(&r) == DEVMESH_ERR_UNSUPPORTED);
  BOOST_TEST(r == sentinel);
  BOOST_TEST(devmesh_destroy(&h) == DEVMESH_SUCCESS);
}

// Checked before ULFM is asked for: the same answer on every MPI, every rank alike.
BOOST_AUTO_TEST_CASE(spares_are_checked_on_every_mpi) {
  const auto refused = [](devmesh::MeshOptions o, const std::string& words,
                          std::optional<std::vector<int>> ranks = std::nullopt) {
    std::string message;
    const Status s = status_of(
        [&] {
          if (ranks)
            Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, *ranks, o);
          else
            Mesh::create(MPI_COMM_WORLD, {0}, {"x"}, o);
        },
        &message);
    BOOST_TEST(s == Status::invalid_argument, words);
    BOOST_TEST(same_everywhere(static_cast<int>(s)));
    BOOST_TEST(message.find(words) != std::string::npos, message);
  };
  devmesh::MeshOptions o;
  o.spares = 1;
  refused(o, "spares needs fault_tolerance");
  o.fault_tolerance = true;
  o.spares = -1;
  refused(o, "spares is -1");
  o.spares = world_size();
  refused(o, std::to_string(world_size()) + " spares leave no member in a parent of " + std::to_string(world_size()) +
                 " ranks");
  o.spares = 1;
  std::vector<int> all(static_cast<std::size_t>(world_size()));
  for (int r = 0; r < world_size(); ++r) all[static_cast<std::size_t>(r)] = r;
  refused(o, "they do not take a rank list", all);
  o.host_aware = true;
  refused(o, "which host_aware would reorder");
  // Through C: the config field, unset by the initializer.
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  BOOST_TEST(c.spares == DEVMESH_CONFIG_UNSET);
  c.spares = -3;
  const int shape[] = {0};
  const char* names[] = {"x"};
  devmesh_t m = nullptr;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &c, &m) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("spares is -3") != std::string::npos, devmesh_last_error());
  c.spares = 1;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &c, &m) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::string(devmesh_last_error()).find("needs fault_tolerance") != std::string::npos,
             devmesh_last_error());
  BOOST_TEST(m == nullptr);
}

// Under ULFM (row fault-standby-join-refused): a process that is no spare
// and was not spawned by a repair is refused by standby and join, with
// nothing made; without ULFM both are unsupported (above).
BOOST_AUTO_TEST_CASE(standby_and_join_outside_a_repair) {
  const Status want = ulfm_running() ? Status::invalid_argument : Status::unsupported;
  std::string message;
  BOOST_TEST(status_of([&] { Mesh::standby(MPI_COMM_WORLD); }, &message) == want);
  if (want == Status::invalid_argument)
    BOOST_TEST(message.find("this process is no spare") != std::string::npos, message);
  BOOST_TEST(status_of([&] { Mesh::join(); }, &message) == want);
  if (want == Status::invalid_argument)
    BOOST_TEST(message.find("not started by a repair") != std::string::npos, message);
  devmesh_t const sentinel = reinterpret_cast<devmesh_t>(0x1);
  devmesh_t r = sentinel;
  BOOST_TEST(devmesh_standby(MPI_COMM_WORLD, &r) == static_cast<int>(want));
  BOOST_TEST(devmesh_join(&r) == static_cast<int>(want));
  BOOST_TEST(r == sentinel);
  BOOST_TEST(devmesh_standby(MPI_COMM_WORLD, nullptr) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(devmesh_join(nullptr) == DEVMESH_ERR_INVALID_ARGUMENT);
}
