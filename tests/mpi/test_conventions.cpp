// The communicators a mesh hands out follow MPI's conventions: they carry
// the parent's error handler (or MPI_ERRORS_RETURN when asked), a name
// that says which dim they are (MPI_Comm_get_name), and a program that
// frees one gets a clear error on the next comm() instead of a dead handle.
// Checked against MPI's own answers (MPI_Comm_get_errhandler,
// MPI_Comm_get_name, which handler an erroneous call invokes).
#define BOOST_TEST_MODULE conventions
#include "mpi_test.hpp"

#include <cstring>
#include <functional>
#include <string>

#include "devmesh/devmesh.h"
#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

std::string name_of(MPI_Comm comm) {
  char name[MPI_MAX_OBJECT_NAME] = {0};
  int len = 0;
  MPI_Comm_get_name(comm, name, &len);
  return std::string(name, static_cast<std::size_t>(len));
}

MPI_Errhandler errhandler_of(MPI_Comm comm) {
  MPI_Errhandler h = MPI_ERRHANDLER_NULL;
  MPI_Comm_get_errhandler(comm, &h);
  return h;
}

// Whether comm's error handler is `want` (MPI_Comm_get_errhandler hands out
// a reference, freed here).
bool has_errhandler(MPI_Comm comm, MPI_Errhandler want) {
  MPI_Errhandler h = errhandler_of(comm);
  const bool same = h == want;
  MPI_Errhandler_free(&h);
  return same;
}

// A program's own error handler: counts the errors it sees and returns, so
// that the erroneous call returns its code.
int errors_seen = 0;
void count_error(MPI_Comm*, int*, ...) { ++errors_seen; }

// An erroneous call on comm that every MPI detects, also one built without
// argument checks (MPICH 5's wheel lets a send to a rank the communicator
// does not have through): a receive too small for the message this rank
// sent itself (MPI_ERR_TRUNCATE). Returns its code; the send is completed.
int bad_send(MPI_Comm comm) {
  int me = 0, two[2] = {1, 2}, one = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Request sent = MPI_REQUEST_NULL;
  MPI_Isend(two, 2, MPI_INT, me, 0, comm, &sent);
  const int rc = MPI_Recv(&one, 1, MPI_INT, me, 0, comm, MPI_STATUS_IGNORE);
  MPI_Wait(&sent, MPI_STATUS_IGNORE);
  return rc;
}

}  // namespace

BOOST_AUTO_TEST_CASE(communicators_are_named_after_their_dim) {
  const int n = world_size();
  Mesh mesh = Mesh::create(MPI_COMM_WORLD, {n, 1}, {"dp", "tp"});
  BOOST_TEST(name_of(mesh.comm("dp")) == "devmesh:dp");
  // With one rank dp and tp are one layout: one communicator, named after
  // the dim that asked first.
  const std::string tp_name = n > 1 ? "devmesh:tp" : "devmesh:dp";
  BOOST_TEST(name_of(mesh.comm("tp")) == tp_name);
  if (n >= 4 && n % 2 == 0) {  // a flattened layout of its own needs two dims above size 1
    Mesh two = Mesh::create(MPI_COMM_WORLD, {2, n / 2}, {"dp", "tp"});
    BOOST_TEST(name_of(two.flatten().comm()) == "devmesh:dp_tp");
    BOOST_TEST(name_of(two[{"tp", "dp"}].flatten("inner").comm()) == "devmesh:inner");
  }
  BOOST_TEST(name_of(mesh["tp"].comm()) == tp_name);  // a 1-D view, dim omitted
  BOOST_TEST(name_of(mesh.cart_comm()) == "devmesh:cart");
  // One communicator per layout: a view reaching the layout of dp under
  // another name gets dp's communicator, named after the dim that first
  // asked for it.
  Mesh data = mesh["dp"].flatten("data");
  BOOST_TEST((data.comm() == mesh.comm("dp")));
  BOOST_TEST(name_of(data.comm()) == "devmesh:dp");
  // Names longer than MPI keeps are cut, not refused.
  const std::string long_name(200, 'q');
  Mesh wide = Mesh::create(MPI_COMM_WORLD, {n}, {long_name});
  const std::string got = name_of(wide.comm());
  BOOST_TEST(got.size() == std::size_t{MPI_MAX_OBJECT_NAME - 1});
  BOOST_TEST(("devmesh:" + long_name).compare(0, got.size(), got) == 0);
  // create_comms' other paths name theirs too (with one rank, the two
  // dims have one layout, named after the first).
  Mesh split = Mesh::create(MPI_COMM_WORLD, {1, n}, {"a", "b"});
  split.create_comms(CommPath::split);
  BOOST_TEST(name_of(split.comm("a")) == "devmesh:a");
  BOOST_TEST(name_of(split.comm("b")) == (n > 1 ? "devmesh:b" : "devmesh:a"));
  Mesh sub = Mesh::create(MPI_COMM_WORLD, {1, n}, {"c", "d"});
  sub.create_comms(CommPath::cart_sub);
  BOOST_TEST(name_of(sub.comm("d")) == (n > 1 ? "devmesh:d" : "devmesh:c"));
}

BOOST_AUTO_TEST_CASE(communicators_inherit_the_parents_error_handler) {
  const int n = world_size();
  // MPI_COMM_WORLD's (MPI_ERRORS_ARE_FATAL unless the program changed it).
  {
    Mesh mesh = Mesh::create(MPI_COMM_WORLD, {n, 1}, {"dp", "tp"});
    MPI_Errhandler world = errhandler_of(MPI_COMM_WORLD);
    BOOST_TEST(has_errhandler(mesh.comm("dp"), world));
    BOOST_TEST(has_errhandler(mesh.flatten().comm(), world));
    BOOST_TEST(has_errhandler(mesh.cart_comm(), world));
    BOOST_TEST(!has_errhandler(mesh.comm("tp"), MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&world);
  }
  // A program's own handler on a parent that is freed before the
  // communicators are made: they still get it, and an erroneous call on
  // them invokes it, as on the parent.
  MPI_Errhandler mine = MPI_ERRHANDLER_NULL;
  MPI_Comm_create_errhandler(count_error, &mine);
  MPI_Comm parent = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &parent);
  MPI_Comm_set_errhandler(parent, mine);
  errors_seen = 0;
  // The handler's count is the check: what the call returns after a
  // handler that returns differs between MPIs (MPICH 5 through the standard
  // ABI returns MPI_SUCCESS).
  bad_send(parent);
  BOOST_TEST(errors_seen == 1);
  Mesh mesh = Mesh::create(parent, {n, 1}, {"dp", "tp"});
  Mesh by_split = Mesh::create(parent, {1, n}, {"a", "b"});
  Mesh by_cart_sub = Mesh::create(parent, {1, n}, {"a", "b"});
  MPI_Comm_free(&parent);
  MPI_Errhandler_free(&mine);  // the mesh keeps its own reference
  MPI_Comm dp = mesh.comm("dp");
  MPI_Errhandler expected = errhandler_of(dp);
  BOOST_TEST(expected != MPI_ERRORS_RETURN);
  BOOST_TEST(expected != MPI_ERRORS_ARE_FATAL);
  errors_seen = 0;
  bad_send(dp);
  bad_send(mesh.comm("tp"));
  bad_send(mesh.cart_comm());
  BOOST_TEST(errors_seen == 3);
  // Communicators made by create_comms' other paths too.
  by_split.create_comms(CommPath::split);
  by_cart_sub.create_comms(CommPath::cart_sub);
  for (const Mesh* m : {&by_split, &by_cart_sub}) {
    BOOST_TEST(has_errhandler(m->comm("b"), expected));
    BOOST_TEST(has_errhandler(m->comm("a"), expected));
  }
  errors_seen = 0;
  bad_send(by_split.comm("b"));
  bad_send(by_cart_sub.comm("b"));
  BOOST_TEST(errors_seen == 2);
  MPI_Errhandler_free(&expected);
}

BOOST_AUTO_TEST_CASE(return_codes_option) {
  const int n = world_size();
  MeshOptions o;
  o.comm_errors = CommErrors::return_codes;
  Mesh mesh = Mesh::create(MPI_COMM_WORLD, {n, 1}, {"dp", "tp"}, o);
  BOOST_TEST(has_errhandler(mesh.comm("dp"), MPI_ERRORS_RETURN));
  BOOST_TEST(has_errhandler(mesh.cart_comm(), MPI_ERRORS_RETURN));
  // On MPI_COMM_WORLD this call would abort; here it returns its code.
  int cls = MPI_SUCCESS;
  MPI_Error_class(bad_send(mesh.comm("dp")), &cls);
  BOOST_TEST(cls == MPI_ERR_TRUNCATE);
  // Not an option: refused on every rank.
  MeshOptions bad;
  bad.comm_errors = static_cast<CommErrors>(7);
  std::string message;
  const Status s = status_of([&] { Mesh::create(MPI_COMM_WORLD, {n}, {"x"}, bad); }, &message);
  BOOST_TEST((s == Status::invalid_argument));
  BOOST_TEST(message.find("comm_errors 7") != std::string::npos);
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
}

BOOST_AUTO_TEST_CASE(a_communicator_freed_by_the_program_is_reported) {
  const int n = world_size();
  {
    Mesh mesh = Mesh::create(MPI_COMM_WORLD, {n, 1}, {"dp", "tp"});
    MPI_Comm dp = mesh.comm("dp");
    MPI_Comm tp = mesh.comm("tp");
    MPI_Comm cart = mesh.cart_comm();
    // A view that asked for dp's backend communicator before.
    const Mesh dp_view = mesh["dp"];
    dp_view.communicator();
    const int count = mesh.comm_count();
    MPI_Comm_free(&dp);
    std::string message;
    BOOST_TEST((status_of([&] { mesh.comm("dp"); }, &message) == Status::invalid_argument));
    BOOST_TEST(message.find("'devmesh:dp' was freed by the program (MPI_Comm_free)") != std::string::npos, message);
    // Every view with that layout, and its backend communicator, says so too.
    BOOST_TEST((status_of([&] { mesh["dp"].flatten("data").comm(); }) == Status::invalid_argument));
    BOOST_TEST((status_of([&] { mesh.communicator("dp"); }) == Status::invalid_argument));
    BOOST_TEST((status_of([&] { dp_view.communicator(); }, &message) == Status::invalid_argument));
    BOOST_TEST(message.find("'devmesh:dp' was freed by the program (MPI_Comm_free)") != std::string::npos, message);
    // The other communicators are untouched and still work (with one rank,
    // dp and tp are one layout, and so one communicator).
    if (n > 1) {
      BOOST_TEST((mesh.comm("tp") == tp));
      int sum = 0, one = 1;
      BOOST_TEST(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, mesh.comm("tp")) == MPI_SUCCESS);
      BOOST_TEST(sum == 1);
    }
    MPI_Comm_free(&cart);
    BOOST_TEST((status_of([&] { mesh.cart_comm(); }, &message) == Status::invalid_argument));
    BOOST_TEST(message.find("'devmesh:cart' was freed") != std::string::npos, message);
    BOOST_TEST(mesh.comm_count() == count);  // nothing remade
  }  // released: what the program freed is not freed again
  // devmesh's own frees (the last handle of a root going) are not taken for
  // the program's: a mesh made, used and released leaves the next one's
  // communicators of the same layouts working.
  {
    Mesh first = Mesh::create(MPI_COMM_WORLD, {n, 1}, {"dp", "tp"});
    first.comm("dp");
  }
  Mesh second = Mesh::create(MPI_COMM_WORLD, {n, 1}, {"dp", "tp"});
  BOOST_TEST((status_of([&] { second.comm("dp"); }) == Status::success));
  int sum = 0, one = 1;
  BOOST_TEST(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, second.comm("dp")) == MPI_SUCCESS);
  BOOST_TEST(sum == n);
}

BOOST_AUTO_TEST_CASE(c_api_comm_errors) {
  const int n = world_size();
  const int shape[] = {n};
  const char* names[] = {"x"};
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  BOOST_TEST(cfg.comm_errors == DEVMESH_CONFIG_UNSET);  // the library's default: inherit
  devmesh_t m = nullptr;
  MPI_Comm c = MPI_COMM_NULL;
  BOOST_REQUIRE(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &m) == DEVMESH_SUCCESS);
  BOOST_REQUIRE(devmesh_comm(m, "x", &c) == DEVMESH_SUCCESS);
  MPI_Errhandler world = errhandler_of(MPI_COMM_WORLD);
  BOOST_TEST(has_errhandler(c, world));
  MPI_Errhandler_free(&world);
  BOOST_TEST(name_of(c) == "devmesh:x");
  // Freed by the program: the next devmesh_comm fails, the output untouched.
  MPI_Comm_free(&c);
  MPI_Comm keep = MPI_COMM_SELF;
  BOOST_TEST(devmesh_comm(m, "x", &keep) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST((keep == MPI_COMM_SELF));
  BOOST_TEST(std::strstr(devmesh_last_error(), "devmesh_comm: the communicator 'devmesh:x' was freed") != nullptr,
             devmesh_last_error());
  devmesh_destroy(&m);

  cfg.comm_errors = DEVMESH_COMM_ERRORS_RETURN;
  BOOST_REQUIRE(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &m) == DEVMESH_SUCCESS);
  BOOST_REQUIRE(devmesh_comm(m, "x", &c) == DEVMESH_SUCCESS);
  BOOST_TEST(has_errhandler(c, MPI_ERRORS_RETURN));
  devmesh_destroy(&m);

  // A config from an older header (without comm_errors) gets the default.
  devmesh_config_t old = DEVMESH_CONFIG_INITIALIZER;
  old.comm_errors = DEVMESH_COMM_ERRORS_RETURN;  // beyond `size`: not read
  old.size = offsetof(devmesh_config_t, comm_errors);
  BOOST_REQUIRE(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &old, &m) == DEVMESH_SUCCESS);
  BOOST_REQUIRE(devmesh_comm(m, "x", &c) == DEVMESH_SUCCESS);
  BOOST_TEST(!has_errhandler(c, MPI_ERRORS_RETURN));
  devmesh_destroy(&m);

  cfg.comm_errors = 7;
  BOOST_TEST(devmesh_create_ex(MPI_COMM_WORLD, 1, shape, names, &cfg, &m) == DEVMESH_ERR_INVALID_ARGUMENT);
  BOOST_TEST(std::strstr(devmesh_last_error(), "comm_errors 7") != nullptr, devmesh_last_error());
  BOOST_TEST(m == nullptr);
}
