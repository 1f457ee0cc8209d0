// Mesh::adopt: meshes whose dims are communicators the program made itself
// with MPI_Comm_split. Coordinates and groups are checked against a brute
// force over the world's ranks, communicators against MPI's own view of
// them (MPI_Comm_compare, their groups, a real MPI_Allreduce), and every
// misuse against the same status on every rank with nothing leaked.
#define BOOST_TEST_MODULE adopt
#include "mpi_test.hpp"

#include <algorithm>

#include "comm_counter.hpp"
#include "devmesh/mesh.hpp"

using namespace devmesh;

namespace {

// The program's own (a, b) grid of the world, row-major: tp holds the b
// consecutive ranks of a row (contiguous), dp the a ranks of a column
// (strided by b).
struct Splits {
  int a = 1, b = 1;
  MPI_Comm dp = MPI_COMM_NULL, tp = MPI_COMM_NULL;
  Splits() {
    const int n = world_size(), r = world_rank();
    b = n % 2 == 0 ? 2 : n;
    if (n == 8) b = 4;
    a = n / b;
    MPI_Comm_split(MPI_COMM_WORLD, r / b, r, &tp);
    MPI_Comm_split(MPI_COMM_WORLD, r % b, r, &dp);
  }
  ~Splits() {
    MPI_Comm_free(&dp);
    MPI_Comm_free(&tp);
  }
};

bool ident(MPI_Comm x, MPI_Comm y) {
  int result = MPI_UNEQUAL;
  MPI_Comm_compare(x, y, &result);
  return result == MPI_IDENT;
}

// Sum of world ranks over comm, by MPI.
int rank_sum(MPI_Comm comm) {
  int r = world_rank(), sum = -1;
  MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, comm);
  return sum;
}

int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }

}  // namespace

BOOST_AUTO_TEST_CASE(contiguous_order) {
  Splits s;
  const int r = world_rank();
  const long live = comm_counter::live();
  {
    Mesh m = Mesh::adopt(MPI_COMM_WORLD, {s.dp, s.tp}, {"dp", "tp"});
    BOOST_TEST(m.shape() == (std::vector<int>{s.a, s.b}), boost::test_tools::per_element());
    BOOST_TEST(m.coordinate() == (std::vector<int>{r / s.b, r % s.b}), boost::test_tools::per_element());
    std::vector<int> dp_ref, tp_ref;
    for (int x = 0; x < world_size(); ++x) {
      if (x % s.b == r % s.b) dp_ref.push_back(x);
      if (x / s.b == r / s.b) tp_ref.push_back(x);
    }
    BOOST_TEST(m.group("dp") == dp_ref, boost::test_tools::per_element());
    BOOST_TEST(m.group("tp") == tp_ref, boost::test_tools::per_element());
    BOOST_TEST(m.parent_rank() == r);
    // The very communicators the program gave, not counted, not renamed.
    // (Size-1 dims share the first one's communicator, the caller alone.)
    BOOST_TEST(ident(m.comm("dp"), s.dp));
    if (s.b > 1) BOOST_TEST(ident(m.comm("tp"), s.tp));
    BOOST_TEST(members(m.comm("tp")) == tp_ref, boost::test_tools::per_element());
    BOOST_TEST(ident(m["dp"].comm(), s.dp));
    BOOST_TEST(m.comm_count() == comm_counter::at_creation);
    BOOST_TEST(rank_sum(m.comm("dp")) == sum(dp_ref));
    // The backend runs on them too.
    int one = r, out = -1;
    m.communicator("tp").allreduce(&one, &out, 1, DataType::int32, ReduceOp::sum);
    BOOST_TEST(out == sum(tp_ref));
    // A flatten makes a communicator of its own over every rank, in root order.
    Mesh f = m.flatten();
    std::vector<int> all(static_cast<std::size_t>(world_size()));
    std::iota(all.begin(), all.end(), 0);
    BOOST_TEST(f.group(f.names()[0]) == all, boost::test_tools::per_element());
    BOOST_TEST(members(f.comm()) == all, boost::test_tools::per_element());
    BOOST_TEST(rank_sum(f.comm()) == sum(all));
  }
  // Nothing of the program's was freed, nothing of devmesh's is left.
  BOOST_TEST(comm_counter::live() == live);
  BOOST_TEST(rank_sum(s.dp) == rank_sum(s.dp));
  int n = 0;
  BOOST_TEST(MPI_Comm_size(s.tp, &n) == MPI_SUCCESS);
  BOOST_TEST(n == s.b);
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  MPI_Comm_get_name(s.tp, name, &len);
  BOOST_TEST(std::string(name).find("devmesh") == std::string::npos);
}

BOOST_AUTO_TEST_CASE(transposed_order) {
  Splits s;
  const int r = world_rank(), n = world_size();
  // tp first: root index x = (r % b) * a + r / b, so the root order is the
  // world's column-major order.
  Mesh m = Mesh::adopt(MPI_COMM_WORLD, {s.tp, s.dp}, {"tp", "dp"});
  BOOST_TEST(m.shape() == (std::vector<int>{s.b, s.a}), boost::test_tools::per_element());
  BOOST_TEST(m.coordinate() == (std::vector<int>{r % s.b, r / s.b}), boost::test_tools::per_element());
  std::vector<int> root(static_cast<std::size_t>(n));
  for (int x = 0; x < n; ++x) root[static_cast<std::size_t>((x % s.b) * s.a + x / s.b)] = x;
  BOOST_TEST(m.flatten("all").group("all") == root, boost::test_tools::per_element());
  BOOST_TEST(members(m.flatten("all").comm()) == root, boost::test_tools::per_element());
  if (s.a > 1) BOOST_TEST(ident(m.comm("dp"), s.dp));
  BOOST_TEST(ident(m.slice({"dp", "tp"})["tp"].comm(), s.tp));
  // A transposed slice flattened: dp-major order.
  std::vector<int> dp_major(static_cast<std::size_t>(n));
  std::iota(dp_major.begin(), dp_major.end(), 0);
  Mesh t = m.slice({"dp", "tp"}).flatten("dt");
  BOOST_TEST(t.group("dt") == dp_major, boost::test_tools::per_element());
  BOOST_TEST(members(t.comm()) == dp_major, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(three_dims_and_unflatten) {
  const int n = world_size(), r = world_rank();
  if (n != 8) return;
  // (2,2,2) from three splits: pp strided by 4, dp by 2, tp contiguous.
  MPI_Comm pp, dp, tp;
  MPI_Comm_split(MPI_COMM_WORLD, r % 4, r, &pp);
  MPI_Comm_split(MPI_COMM_WORLD, (r / 4) * 2 + r % 2, r, &dp);
  MPI_Comm_split(MPI_COMM_WORLD, r / 2, r, &tp);
  {
    Mesh m = Mesh::adopt(MPI_COMM_WORLD, {pp, dp, tp}, {"pp", "dp", "tp"});
    BOOST_TEST(m.coordinate() == (std::vector<int>{r / 4, (r / 2) % 2, r % 2}), boost::test_tools::per_element());
    Mesh dt = m.slice({"dp", "tp"}).flatten("dt");
    const std::vector<int> want{(r / 4) * 4, (r / 4) * 4 + 1, (r / 4) * 4 + 2, (r / 4) * 4 + 3};
    BOOST_TEST(dt.group("dt") == want, boost::test_tools::per_element());
    BOOST_TEST(members(dt.comm()) == want, boost::test_tools::per_element());
    // Unflattening the flattened dims gives back the program's dp.
    Mesh u = dt.unflatten("dt", {2, 2}, {"d2", "t2"});
    BOOST_TEST(ident(u.comm("d2"), dp));
    BOOST_TEST(ident(u.comm("t2"), tp));
    m.create_comms();
    BOOST_TEST(ident(m.comm("pp"), pp));
  }
  int alive = 0;
  BOOST_TEST(MPI_Comm_size(pp, &alive) == MPI_SUCCESS);
  MPI_Comm_free(&pp);
  MPI_Comm_free(&dp);
  MPI_Comm_free(&tp);
}

BOOST_AUTO_TEST_CASE(one_dim_and_non_members) {
  const int n = world_size(), r = world_rank();
  Mesh whole = Mesh::adopt(MPI_COMM_WORLD, "w");
  BOOST_TEST(ident(whole.comm(), MPI_COMM_WORLD));
  BOOST_TEST(whole.local_rank("w") == r);
  // All ranks but the last (if n > 1) split off; the last is no member.
  const bool member = n == 1 || r < n - 1;
  MPI_Comm part = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, r, &part);
  Mesh m = Mesh::adopt(MPI_COMM_WORLD, {part}, {"x"});
  BOOST_TEST(m.is_member() == member);
  if (member) {
    std::vector<int> want(static_cast<std::size_t>(n == 1 ? 1 : n - 1));
    std::iota(want.begin(), want.end(), 0);
    BOOST_TEST(m.group("x") == want, boost::test_tools::per_element());
    BOOST_TEST(ident(m.comm(), part));
  }
  m = Mesh();
  if (part != MPI_COMM_NULL) MPI_Comm_free(&part);
}

namespace {

// f fails on every rank alike with `want`, leaving no communicator behind.
void fails_alike(const std::function<void()>& f, Status want, const char* needle) {
  const long live = comm_counter::live();
  std::string message;
  const Status got = status_of(f, &message);
  BOOST_TEST(static_cast<int>(got) == static_cast<int>(want), message);
  BOOST_TEST(same_everywhere(static_cast<int>(got)));
  BOOST_TEST(message.find(needle) != std::string::npos, message);
  BOOST_TEST(comm_counter::live() == live);
}

}  // namespace

BOOST_AUTO_TEST_CASE(errors_same_everywhere) {
  Splits s;
  const int n = world_size(), r = world_rank();
  Mesh out;
  fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {s.dp, s.tp}, {"dp"}); }, Status::invalid_argument,
              "2 communicators but 1 dim names");
  if (n > 1)
    fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {s.dp, s.tp}, {"dp", r == 0 ? "tp" : "t"}); },
                Status::inconsistent, "dim names");
  fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {s.dp, r == 0 ? MPI_COMM_NULL : s.tp}, {"dp", "tp"}); },
              Status::invalid_argument, "MPI_COMM_NULL");
  MeshOptions host_aware;
  host_aware.host_aware = true;
  fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {s.dp, s.tp}, {"dp", "tp"}, host_aware); },
              Status::invalid_argument, "host_aware");
  fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {s.dp, s.tp}, {"dp", "dp"}); }, Status::duplicate_name,
              "dp");
  if (n > 1) {
    // One comm that is not all of the parent's members.
    if (s.b != n)
      fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {s.tp}, {"x"}); }, Status::invalid_argument,
                  "multiply to");
    // Sizes that differ between ranks.
    if (n >= 3) {
      MPI_Comm uneven;
      MPI_Comm_split(MPI_COMM_WORLD, r == 0 ? 0 : 1, r, &uneven);
      fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {uneven, s.tp}, {"u", "tp"}); },
                  Status::invalid_argument, "different sizes");
      MPI_Comm_free(&uneven);
    }
  }
  if (s.a > 1 && s.b > 1) {
    // Right sizes and a bijection, but "dp" groups a diagonal, not a column.
    MPI_Comm diag;
    MPI_Comm_split(MPI_COMM_WORLD, (r % s.b + r / s.b) % s.b, r, &diag);
    fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {diag, s.tp}, {"dp", "tp"}); }, Status::invalid_argument,
                "do not form a mesh");
    // The same communicator as two dims: coordinates collide.
    fails_alike([&] { out = Mesh::adopt(MPI_COMM_WORLD, {s.tp, s.tp}, {"a", "b"}); }, Status::invalid_argument,
                s.a == s.b ? "same coordinate" : "multiply to");
    MPI_Comm_free(&diag);
  }
  BOOST_TEST(!out.is_member());
  // The program's communicators still work.
  BOOST_TEST(rank_sum(s.tp) >= 0);
}
