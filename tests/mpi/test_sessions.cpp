// Mesh::create_from_group under the MPI Sessions model: this program never
// calls MPI_Init (MPI_COMM_WORLD and MPI_COMM_SELF are not to be used). The
// group of the session's mpi://WORLD process set gives meshes whose groups
// are checked against a brute force over the group's ranks, and whose
// communicators against MPI (their groups, a real MPI_Allreduce) and the
// backend. With an MPI older than 4 (no Sessions), MPI_Init instead, and
// every rank must get Error(unsupported) with nothing made.
#include <mpi.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

int failures = 0;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                            \
    }                                                                        \
  } while (0)

// The helpers of the Sessions checks, which need MPI_Comm_create_from_group.
#if DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP
// Ranks of `group` in comm's rank order.
std::vector<int> members_in(MPI_Comm comm, MPI_Group group) {
  MPI_Group g;
  int n = 0;
  MPI_Comm_group(comm, &g);
  MPI_Group_size(g, &n);
  std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  std::iota(in.begin(), in.end(), 0);
  MPI_Group_translate_ranks(g, n, in.data(), group, out.data());
  MPI_Group_free(&g);
  return out;
}

// The brute-force group of root index me along dim d of shape (row-major).
std::vector<int> brute_group(const std::vector<int>& shape, int me, std::size_t d) {
  std::vector<int> out;
  const int total = std::accumulate(shape.begin(), shape.end(), 1, std::multiplies<>());
  auto coord = [&](int x) {
    std::vector<int> c(shape.size());
    for (std::size_t i = shape.size(); i-- > 0;) {
      c[i] = x % shape[i];
      x /= shape[i];
    }
    return c;
  };
  const std::vector<int> mine = coord(me);
  for (int x = 0; x < total; ++x) {
    std::vector<int> c = coord(x);
    c[d] = mine[d];
    if (c == mine) out.push_back(x);
  }
  return out;
}

void check_mesh(MPI_Group group, const std::vector<int>& shape, const std::vector<std::string>& names,
                const std::string& tag) {
  int me = 0;
  MPI_Group_rank(group, &me);
  const long live = comm_counter::live();
  {
    Mesh m = Mesh::create_from_group(group, tag, shape, names);
    CHECK(m.comm_count() == 1);  // the root communicator from the group
    CHECK(m.shape() == shape);
    for (std::size_t d = 0; d < names.size(); ++d) {
      const std::vector<int> want = brute_group(shape, me, d);
      CHECK(m.group(names[d]) == want);
      MPI_Comm c = m.comm(names[d]);
      CHECK(members_in(c, group) == want);
      int sum = -1, mine = me;
      CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c) == MPI_SUCCESS);
      CHECK(sum == std::accumulate(want.begin(), want.end(), 0));
      int bsum = -1;
      m.communicator(names[d]).allreduce(&mine, &bsum, 1, DataType::int32, ReduceOp::sum);
      CHECK(bsum == sum);
    }
    m.create_comms();
    MPI_Comm all = m.flatten("all").comm();
    std::vector<int> every(static_cast<std::size_t>(m.size()));
    std::iota(every.begin(), every.end(), 0);
    CHECK(members_in(all, group) == every);
  }
  CHECK(comm_counter::live() == live);  // everything the mesh made is freed
}
#endif

}  // namespace

int main() {
#if DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP
  MPI_Session session = MPI_SESSION_NULL;
  if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session) != MPI_SUCCESS) return 2;
  MPI_Group group = MPI_GROUP_NULL;
  if (MPI_Group_from_session_pset(session, "mpi://WORLD", &group) != MPI_SUCCESS) return 2;
  int initialized = 1;
  MPI_Initialized(&initialized);
  CHECK(!initialized);  // the Sessions model alone
  int n = 0, me = 0;
  MPI_Group_size(group, &n);
  MPI_Group_rank(group, &me);
  // The test's own communicator, for agreeing on results.
  MPI_Comm own = MPI_COMM_NULL;
  MPI_Comm_create_from_group(group, "devmesh-test:own", MPI_INFO_NULL, MPI_ERRORS_RETURN, &own);
  try {
    check_mesh(group, {n}, {"x"}, "devmesh-test:1d");
    if (n == 8) {
      check_mesh(group, {2, 2, 2}, {"pp", "dp", "tp"}, "devmesh-test:3d");
      check_mesh(group, {4, 2}, {"dp", "tp"}, "devmesh-test:2d");
    }
    if (n == 4) check_mesh(group, {2, 2}, {"dp", "tp"}, "devmesh-test:2d");
    // Under Sessions the other creations work over a communicator from the
    // group: Mesh::create, and Mesh::adopt of splits of it.
    {
      Mesh c = Mesh::create(own, {n}, {"x"});
      CHECK(members_in(c.comm(), group) == brute_group({n}, me, 0));
      const int b = n % 2 == 0 ? 2 : 1;
      MPI_Comm dp, tp;
      MPI_Comm_split(own, me % b, me, &dp);
      MPI_Comm_split(own, me / b, me, &tp);
      {
        Mesh a = Mesh::adopt(own, {dp, tp}, {"dp", "tp"});
        CHECK(a.group("dp") == brute_group({n / b, b}, me, 0));
        CHECK(a.comm("dp") == dp);
        CHECK(members_in(a.flatten("all").comm(), group) == brute_group({n}, me, 0));
      }
      int size = 0;
      CHECK(MPI_Comm_size(tp, &size) == MPI_SUCCESS && size == b);
      MPI_Comm_free(&dp);
      MPI_Comm_free(&tp);
    }
    // A bad shape: the same error on every rank, nothing left behind.
    const long live = comm_counter::live();
    int status = 0;
    try {
      Mesh bad = Mesh::create_from_group(group, "devmesh-test:bad", {n + 1}, {"x"});
    } catch (const Error& e) {
      status = static_cast<int>(e.status());
    }
    int lo = 0, hi = 0;
    MPI_Allreduce(&status, &lo, 1, MPI_INT, MPI_MIN, own);
    MPI_Allreduce(&status, &hi, 1, MPI_INT, MPI_MAX, own);
    CHECK(status == static_cast<int>(Status::shape_mismatch));
    CHECK(lo == hi);
    CHECK(comm_counter::live() == live);
    // The null group.
    status = 0;
    try {
      Mesh bad = Mesh::create_from_group(MPI_GROUP_NULL, "devmesh-test:null", {n}, {"x"});
    } catch (const Error& e) {
      status = static_cast<int>(e.status());
    }
    CHECK(status == static_cast<int>(Status::invalid_argument));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", me, e.what());
    ++failures;
  }
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, own);
  MPI_Comm_free(&own);
  MPI_Group_free(&group);
  MPI_Session_finalize(&session);
  if (me == 0) std::printf("sessions at %d ranks: %d failures\n", n, worst);
  return worst == 0 ? 0 : 1;
#else
  MPI_Init(nullptr, nullptr);
  MPI_Group group;
  MPI_Comm_group(MPI_COMM_WORLD, &group);
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const long live = comm_counter::live();
  int status = 0;
  std::string message;
  try {
    Mesh m = Mesh::create_from_group(group, "devmesh-test", {n}, {"x"});
  } catch (const Error& e) {
    status = static_cast<int>(e.status());
    message = e.what();
  }
  CHECK(status == static_cast<int>(Status::unsupported));
  CHECK(message.find("MPI 4") != std::string::npos);
  CHECK(comm_counter::live() == live);
  MPI_Group_free(&group);
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
#endif
}
