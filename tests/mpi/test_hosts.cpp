// Hosts on real MPI: discovery (MPI_Comm_split_type and the DEVMESH_HOST_ID
// override), the (host, local) mesh, host-aware ordering and
// dim_within_hosts, with 1, 2, 3 and 4 simulated hosts in blocked and
// cyclic placement. Every expectation is computed here from the placement
// rule, not taken from the library; dim_within_hosts is checked against a
// brute force over all groups.
#define BOOST_TEST_MODULE hosts
#include "mpi_test.hpp"

#include <cstdlib>
#include <numeric>
#include <string>

#include "comm_counter.hpp"
#include "devmesh/hosts.hpp"

using namespace devmesh;

namespace {

// Sets DEVMESH_HOST_ID for the lifetime of the object (unset: nullptr).
struct HostId {
  explicit HostId(const char* value) {
    if (value)
      setenv(host_id_variable, value, 1);
    else
      unsetenv(host_id_variable);
  }
  explicit HostId(const std::string& value) : HostId(value.c_str()) {}
  ~HostId() { unsetenv(host_id_variable); }
};

enum class Placement { blocked, cyclic };

const char* name_of(Placement p) { return p == Placement::blocked ? "blocked" : "cyclic"; }

// The machine a parent rank is on under a placement of W ranks on H hosts,
// numbered by lowest rank (as the library numbers them): blocked = W/H
// consecutive ranks per host, cyclic = round robin.
int host_of(Placement p, int rank, int w, int h) { return p == Placement::blocked ? rank / (w / h) : rank % h; }
int local_of(Placement p, int rank, int w, int h) { return p == Placement::blocked ? rank % (w / h) : rank / h; }
// The parent rank that is local rank l on host `host`.
int rank_at(Placement p, int host, int l, int w, int h) {
  return p == Placement::blocked ? host * (w / h) + l : l * h + host;
}

// Host identity strings of different lengths, so that the allgatherv of
// the strings is exercised, and that do not sort like the host numbers.
std::string id_of(int host) { return "node-" + std::string(static_cast<std::size_t>(7 - host % 7), 'z') + std::to_string(host); }

// dim's communicator holds the group the model predicts, checked with a
// real collective.
void check_comm(const Mesh& m, const std::string& dim) {
  MPI_Comm c = m.comm(dim);
  const std::vector<int> expect = m.group(dim);
  BOOST_TEST(members(c) == expect);
  std::vector<int> got(expect.size());
  int me = world_rank();
  MPI_Allgather(&me, 1, MPI_INT, got.data(), 1, MPI_INT, c);
  BOOST_TEST(got == expect);
}

// Brute force: every group of dim on one host.
bool within_hosts(const Mesh& m, const std::string& dim, Placement p, int w, int h) {
  for (const auto& g : m.all_groups(dim))
    for (int r : g)
      if (host_of(p, r, w, h) != host_of(p, g[0], w, h)) return false;
  return true;
}

// All ordered factorisations of n into k factors >= 1.
void factorisations(int n, int k, std::vector<int>& cur, std::vector<std::vector<int>>& out) {
  if (k == 0) {
    if (n == 1) out.push_back(cur);
    return;
  }
  for (int f = 1; f <= n; ++f)
    if (n % f == 0) {
      cur.push_back(f);
      factorisations(n / f, k - 1, cur, out);
      cur.pop_back();
    }
}

std::vector<std::vector<int>> factorisations(int n, int k) {
  std::vector<int> cur;
  std::vector<std::vector<int>> out;
  factorisations(n, k, cur, out);
  return out;
}

// Host counts this world size can simulate evenly.
std::vector<int> host_counts() {
  std::vector<int> out;
  for (int h : {1, 2, 3, 4})
    if (world_size() % h == 0) out.push_back(h);
  return out;
}

template <class F>
void expect_error_everywhere(Status want, F&& f, const std::string& needle = {}) {
  int got = -1;
  std::string message;
  try {
    f();
  } catch (const Error& e) {
    got = static_cast<int>(e.status());
    message = e.what();
  }
  BOOST_TEST(got == static_cast<int>(want));
  if (!needle.empty()) BOOST_TEST(message.find(needle) != std::string::npos, message);
  // Every rank got the same status.
  int lo = 0, hi = 0;
  MPI_Allreduce(&got, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&got, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  BOOST_TEST(lo == hi);
}

}  // namespace

BOOST_AUTO_TEST_CASE(discovery_follows_the_machine) {
  HostId unset(nullptr);
  const HostInfo info = discover_hosts(MPI_COMM_WORLD);
  // What MPI itself says about this machine.
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_rank = 0, node_size = 0, lowest = 0, me = world_rank();
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Allreduce(&me, &lowest, 1, MPI_INT, MPI_MIN, node);
  MPI_Comm_free(&node);
  BOOST_TEST(info.local_rank == node_rank);
  BOOST_TEST(info.local_size == node_size);
  BOOST_TEST(info.ranks_per_host.size() == static_cast<std::size_t>(info.hosts));
  BOOST_TEST(std::accumulate(info.ranks_per_host.begin(), info.ranks_per_host.end(), 0) == world_size());
  BOOST_TEST(info.ranks_per_host[static_cast<std::size_t>(info.host)] == node_size);
  // The host with the lowest rank of all is host 0.
  if (lowest == 0) BOOST_TEST(info.host == 0);
  // As many hosts as node communicators. (MPIR_CVAR_NOLOCAL=1, which the
  // other tests run with, makes MPICH put every rank on a node of its own.)
  int leaders = node_rank == 0, nodes = 0;
  MPI_Allreduce(&leaders, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  BOOST_TEST(info.hosts == nodes);
  // Set by the meson tests that know how many hosts the launcher made.
  if (const char* want = std::getenv("DEVMESH_TEST_EXPECT_HOSTS")) BOOST_TEST(info.hosts == std::atoi(want));
}

BOOST_AUTO_TEST_CASE(meshes_follow_the_machine) {
  HostId unset(nullptr);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  const std::vector<int> mine = members(node);  // ranks on this node, in rank order
  MPI_Comm_free(&node);
  const HostInfo info = discover_hosts(MPI_COMM_WORLD);
  if (!info.uniform) {  // e.g. mpiexec -hosts localhost:2,127.0.0.1:1
    expect_error_everywhere(Status::shape_mismatch, [] { create_host_mesh(MPI_COMM_WORLD); }, "host 0: ");
    return;
  }
  Mesh m = create_host_mesh(MPI_COMM_WORLD);
  BOOST_TEST(m.group("local") == mine);
  check_comm(m, "local");
  BOOST_TEST(dim_within_hosts(m, "local"));
  BOOST_TEST(dim_within_hosts(m, "host") == (info.hosts == 1));
  Mesh a = create_host_aware(MPI_COMM_WORLD, {0, info.local_size}, {"dp", "tp"});
  BOOST_TEST(a.group("tp") == mine);
  BOOST_TEST(dim_within_hosts(a, "tp"));
  // No dim name: the only dim of a 1-D view; on a view of several dims,
  // invalid_argument on every rank (the rule of every call taking a dim).
  expect_error_everywhere(Status::invalid_argument, [&] { dim_within_hosts(a, ""); }, "a dim name is needed");
  BOOST_TEST(dim_within_hosts(a["tp"], ""));
}

BOOST_AUTO_TEST_CASE(discovery_with_simulated_hosts) {
  const int w = world_size(), me = world_rank();
  for (int h : host_counts())
    for (Placement p : {Placement::blocked, Placement::cyclic}) {
      BOOST_TEST_CONTEXT(h << " hosts, " << name_of(p)) {
        HostId id(id_of(host_of(p, me, w, h)));
        const HostInfo info = discover_hosts(MPI_COMM_WORLD);
        BOOST_TEST(info.hosts == h);
        BOOST_TEST(info.host == host_of(p, me, w, h));
        BOOST_TEST(info.local_rank == local_of(p, me, w, h));
        BOOST_TEST(info.local_size == w / h);
        BOOST_TEST(info.uniform);
        BOOST_TEST(info.ranks_per_host == std::vector<int>(static_cast<std::size_t>(h), w / h));
      }
    }
}

BOOST_AUTO_TEST_CASE(host_mesh) {
  const int w = world_size(), me = world_rank();
  for (int h : host_counts())
    for (Placement p : {Placement::blocked, Placement::cyclic}) {
      BOOST_TEST_CONTEXT(h << " hosts, " << name_of(p)) {
        const long live = comm_counter::live();
        {
          HostId id(id_of(host_of(p, me, w, h)));
          const int per = w / h;
          Mesh m = create_host_mesh(MPI_COMM_WORLD);
          BOOST_TEST(m.names() == (std::vector<std::string>{"host", "local"}));
          BOOST_TEST(m.shape() == (std::vector<int>{h, per}));
          // Root index host * per + local is the parent rank at that spot.
          for (int x = 0; x < w; ++x) BOOST_TEST(m.view().parent_rank(x) == rank_at(p, x / per, x % per, w, h));
          BOOST_TEST(m.coordinate() == (std::vector<int>{host_of(p, me, w, h), local_of(p, me, w, h)}));
          // local = the ranks of my host in parent-rank order.
          std::vector<int> mine;
          for (int r = 0; r < w; ++r)
            if (host_of(p, r, w, h) == host_of(p, me, w, h)) mine.push_back(r);
          BOOST_TEST(m.group("local") == mine);
          check_comm(m, "local");
          check_comm(m, "host");
          const HostInfo info = host_info(m);
          BOOST_TEST(info.host == host_of(p, me, w, h));
          BOOST_TEST(info.local_rank == local_of(p, me, w, h));
          BOOST_TEST(dim_within_hosts(m, "local"));
          BOOST_TEST(dim_within_hosts(m, "host") == (h == 1));
          BOOST_TEST(dim_within_hosts(m.flatten(), "host_local") == (h == 1));
          // Split the host further: every piece stays on the host.
          int split = 0;
          for (const auto& f : factorisations(per, 2)) {
            Mesh u = m.unflatten("local", f, {"shard", "tp"});
            BOOST_TEST(dim_within_hosts(u, "shard"));
            BOOST_TEST(dim_within_hosts(u, "tp"));
            // Flattened names live on the root: one per split.
            const std::string fn = "host_tp" + std::to_string(split++);
            Mesh ht = u.slice({"host", "tp"}).flatten(fn);
            BOOST_TEST(dim_within_hosts(ht, fn) == within_hosts(ht, fn, p, w, h));
          }
          // Other dim names and backend options pass through.
          Mesh n = create_host_mesh(MPI_COMM_WORLD, "node", "gpu");
          BOOST_TEST(n.names() == (std::vector<std::string>{"node", "gpu"}));
          BOOST_TEST(n.group("gpu") == mine);
        }
        BOOST_TEST(comm_counter::live() == live);  // nothing leaks
      }
    }
}

BOOST_AUTO_TEST_CASE(host_aware_ordering) {
  const int w = world_size(), me = world_rank();
  const std::vector<std::string> names = {"a", "b", "c"};
  for (int h : host_counts())
    for (Placement p : {Placement::blocked, Placement::cyclic}) {
      BOOST_TEST_CONTEXT(h << " hosts, " << name_of(p)) {
        HostId id(id_of(host_of(p, me, w, h)));
        const int per = w / h;
        bool comms_checked = false;
        for (int k : {1, 2, 3})
          for (const auto& shape : factorisations(w, k)) {
            BOOST_TEST_CONTEXT("shape " << shape.size() << "-D " << shape[0]) {
              std::vector<std::string> nm(names.begin(), names.begin() + k);
              Mesh m = create_host_aware(MPI_COMM_WORLD, shape, nm);
              for (int x = 0; x < w; ++x)
                BOOST_TEST(m.view().parent_rank(x) == rank_at(p, x / per, x % per, w, h));
              // Trailing dims whose product divides the ranks per host stay
              // within a host; dim_within_hosts agrees with brute force on
              // every dim and every flattened pair.
              int trailing = 1;
              for (int d = k - 1; d >= 0; --d) {
                trailing *= shape[static_cast<std::size_t>(d)];
                if (per % trailing == 0) BOOST_TEST(within_hosts(m, nm[static_cast<std::size_t>(d)], p, w, h));
                BOOST_TEST(dim_within_hosts(m, nm[static_cast<std::size_t>(d)]) ==
                           within_hosts(m, nm[static_cast<std::size_t>(d)], p, w, h));
              }
              for (int i = 0; i < k; ++i)
                for (int j = 0; j < k; ++j)
                  if (i != j) {
                    Mesh f = m.slice({nm[static_cast<std::size_t>(i)], nm[static_cast<std::size_t>(j)]}).flatten();
                    const std::string fn = f.names()[0];
                    BOOST_TEST(dim_within_hosts(f, fn) == within_hosts(f, fn, p, w, h));
                  }
              // Communicators of one 3-D shape per case (they cost time at 16 ranks).
              if (k == 3 && !comms_checked && shape[1] > 1 && shape[2] > 1) {
                comms_checked = true;
                check_comm(m, "c");
                check_comm(m, "b");
              }
            }
          }
        // Zeros are filled as MPI_Dims_create does.
        Mesh z = create_host_aware(MPI_COMM_WORLD, {0, per}, {"dp", "tp"});
        BOOST_TEST(z.shape() == (std::vector<int>{h, per}));
        BOOST_TEST(dim_within_hosts(z, "tp"));
      }
    }
}

// MeshOptions::host_aware is the same ordering as create_host_aware, and
// its errors are collective: a rank list with it is refused, and ranks that
// disagree on it (some would discover hosts, some not) all get
// inconsistent, naming the option, instead of mismatched collectives.
BOOST_AUTO_TEST_CASE(host_aware_option) {
  const int w = world_size(), me = world_rank();
  const int h = w % 2 == 0 ? 2 : 1;
  HostId id(id_of(host_of(Placement::cyclic, me, w, h)));
  MeshOptions aware;
  aware.host_aware = true;
  Mesh m = Mesh::create(MPI_COMM_WORLD, {0, w / h}, {"dp", "tp"}, aware);
  BOOST_TEST(m.shape() == (std::vector<int>{h, w / h}));
  for (int x = 0; x < w; ++x)
    BOOST_TEST(m.view().parent_rank(x) == rank_at(Placement::cyclic, x / (w / h), x % (w / h), w, h));
  BOOST_TEST(dim_within_hosts(m, "tp"));
  const long live = comm_counter::live();
  std::vector<int> all(static_cast<std::size_t>(w));
  std::iota(all.begin(), all.end(), 0);
  expect_error_everywhere(Status::invalid_argument,
                          [&] { Mesh::create(MPI_COMM_WORLD, {w}, {"x"}, all, aware); }, "rank list");
  if (w > 1) {
    MeshOptions some;
    some.host_aware = me == w - 1;
    expect_error_everywhere(Status::inconsistent, [&] { Mesh::create(MPI_COMM_WORLD, {w}, {"x"}, some); },
                            "host_aware");
  }
  BOOST_TEST(comm_counter::live() == live);
}

BOOST_AUTO_TEST_CASE(record_hosts_on_any_mesh) {
  const int w = world_size(), me = world_rank();
  for (int h : host_counts())
    for (Placement p : {Placement::blocked, Placement::cyclic}) {
      BOOST_TEST_CONTEXT(h << " hosts, " << name_of(p)) {
        HostId id(id_of(host_of(p, me, w, h)));
        for (const auto& shape : factorisations(w, 2)) {
          Mesh m = Mesh::create(MPI_COMM_WORLD, shape, {"x", "y"});
          int got = -1;
          try {
            dim_within_hosts(m, "y");
          } catch (const Error& e) {
            got = static_cast<int>(e.status());
          }
          BOOST_TEST(got == static_cast<int>(Status::invalid_argument));
          record_hosts(m);
          record_hosts(m);  // a second time: nothing happens, nothing hangs
          BOOST_TEST(host_info(m).host == host_of(p, me, w, h));
          BOOST_TEST(host_info(m).local_rank == local_of(p, me, w, h));
          for (const char* d : {"x", "y"}) BOOST_TEST(dim_within_hosts(m, d) == within_hosts(m, d, p, w, h));
          Mesh t = m.slice({"y", "x"}).flatten("yx");
          BOOST_TEST(dim_within_hosts(t, "yx") == within_hosts(t, "yx", p, w, h));
        }
        // A mesh over part of the world: hosts among its members only.
        if (w >= 2) {
          std::vector<int> ranks;
          for (int r = w - 1; r >= 1; --r) ranks.push_back(r);
          Mesh s = Mesh::create(MPI_COMM_WORLD, {static_cast<int>(ranks.size())}, {"s"}, ranks);
          if (me == 0) {
            BOOST_TEST(!s.is_member());
            int got = -1;
            try {
              record_hosts(s);
            } catch (const Error& e) {
              got = static_cast<int>(e.status());
            }
            BOOST_TEST(got == static_cast<int>(Status::not_member));
          } else {
            record_hosts(s);
            const HostInfo info = host_info(s);
            int on_my_host = 0, before = 0;
            for (int r : ranks)
              if (host_of(p, r, w, h) == host_of(p, me, w, h)) {
                ++on_my_host;
                if (r > me) ++before;  // root order is descending rank
              }
            BOOST_TEST(info.local_size == on_my_host);
            BOOST_TEST(info.local_rank == before);
            BOOST_TEST(dim_within_hosts(s, "s") == within_hosts(s, "s", p, w, h));
          }
        }
      }
    }
}

BOOST_AUTO_TEST_CASE(uneven_hosts_fail_everywhere) {
  const int w = world_size(), me = world_rank();
  if (w < 3) return;  // 1 or 2 ranks cannot be split unevenly into 2 hosts
  // Host "a" has rank 0, host "b" the rest.
  HostId id(me == 0 ? "a" : "b");
  const HostInfo info = discover_hosts(MPI_COMM_WORLD);
  BOOST_TEST(info.hosts == 2);
  BOOST_TEST(!info.uniform);
  BOOST_TEST(info.ranks_per_host == (std::vector<int>{1, w - 1}));
  BOOST_TEST(info.local_size == (me == 0 ? 1 : w - 1));
  const long live = comm_counter::live();
  const std::string counts = "host 0: 1, host 1: " + std::to_string(w - 1);
  expect_error_everywhere(Status::shape_mismatch, [] { create_host_mesh(MPI_COMM_WORLD); }, counts);
  expect_error_everywhere(
      Status::shape_mismatch, [w] { create_host_aware(MPI_COMM_WORLD, {w}, {"x"}); }, counts);
  BOOST_TEST(comm_counter::live() == live);
  // A mesh made otherwise still learns its uneven hosts.
  Mesh m = Mesh::create(MPI_COMM_WORLD, {w}, {"x"});
  record_hosts(m);
  BOOST_TEST(!host_info(m).uniform);
  BOOST_TEST(!dim_within_hosts(m, "x"));
}

BOOST_AUTO_TEST_CASE(inconsistent_override_fails_everywhere) {
  const int w = world_size(), me = world_rank();
  if (w < 2) return;
  HostId id(me == 0 ? "only-rank-0" : nullptr);
  const long live = comm_counter::live();
  expect_error_everywhere(Status::inconsistent, [] { discover_hosts(MPI_COMM_WORLD); }, "DEVMESH_HOST_ID");
  expect_error_everywhere(Status::inconsistent, [] { create_host_mesh(MPI_COMM_WORLD); });
  expect_error_everywhere(Status::inconsistent, [w] { create_host_aware(MPI_COMM_WORLD, {w}, {"x"}); });
  BOOST_TEST(comm_counter::live() == live);
  // An empty value counts as unset.
  HostId empty(me == 0 ? "" : nullptr);
  BOOST_TEST(discover_hosts(MPI_COMM_WORLD).local_size > 0);
}

BOOST_AUTO_TEST_CASE(bad_arguments) {
  HostId one("one-host");  // uniform, whatever the launcher did
  expect_error_everywhere(Status::duplicate_name, [] { create_host_mesh(MPI_COMM_WORLD, "x", "x"); });
  expect_error_everywhere(Status::invalid_argument, [] { create_host_mesh(MPI_COMM_WORLD, "", "local"); });
  expect_error_everywhere(Status::shape_mismatch,
                          [] { create_host_aware(MPI_COMM_WORLD, {world_size() + 1}, {"x"}); });
  int got = -1;
  try {
    discover_hosts(MPI_COMM_NULL);
  } catch (const Error& e) {
    got = static_cast<int>(e.status());
  }
  BOOST_TEST(got == static_cast<int>(Status::invalid_argument));
  got = -1;
  try {
    host_info(Mesh());
  } catch (const Error& e) {
    got = static_cast<int>(e.status());
  }
  BOOST_TEST(got == static_cast<int>(Status::not_member));
  Mesh m = create_host_mesh(MPI_COMM_WORLD);
  got = -1;
  try {
    dim_within_hosts(m, "nope");
  } catch (const Error& e) {
    got = static_cast<int>(e.status());
  }
  BOOST_TEST(got == static_cast<int>(Status::unknown_dim));
  BOOST_TEST(dim_within_hosts(m["local"], ""));  // a 1-D view needs no name
}
