// Placement on real MPI (MeshOptions::placement, docs/TOPOLOGY.md): levels
// given per rank by DEVMESH_HOST_ID and DEVMESH_TOPOLOGY, by Slurm's
// SLURM_TOPOLOGY_ADDR, and by a backend (the test plugin "topology"). Every
// group is read from the dim's communicator (an allgather of world ranks)
// and judged against the rules with the levels this file gives each rank,
// never against the library's own tables: (a) every group of a placed dim
// within one instance of its level; (b) in every group, the members of one
// instance of any level consecutive; the ranks used tiling the levels;
// the leftovers the rest, with the null mesh. Errors must be the same on
// every rank. The cost: placement adds at most one allgather to a
// host-aware creation (tests' PMPI layer).
#define BOOST_TEST_MODULE placement
#include "mpi_test.hpp"

#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "comm_counter.hpp"
#include "devmesh/hosts.hpp"

using namespace devmesh;

namespace {

// The machine this file plays: hosts of 2 ranks (the last one short at an
// odd world), domains of 2 hosts, switches of 2 domains.
int host_of(int r) { return r / 2; }
int domain_of(int r) { return host_of(r) / 2; }
int switch_of(int r) { return domain_of(r) / 2; }
int instance_of(int level, int r) { return level == 0 ? host_of(r) : level == 1 ? domain_of(r) : switch_of(r); }
const char* const level_names[] = {"host", "domain", "switch"};

// Sets the variables for the lifetime of the object; restores none.
struct Env {
  std::vector<std::string> names;
  void set(const std::string& name, const std::string& value) {
    setenv(name.c_str(), value.c_str(), 1);
    names.push_back(name);
  }
  ~Env() {
    for (const std::string& n : names) unsetenv(n.c_str());
  }
};

void play_machine(Env& env) {
  const int r = world_rank();
  env.set(host_id_variable, "h" + std::to_string(host_of(r)));
  env.set(topology_variable, "domain=d" + std::to_string(domain_of(r)) + ";switch=s" + std::to_string(switch_of(r)));
}

// Dim d's group as its communicator has it, in local-rank order.
std::vector<int> real_group(const Mesh& m, const std::string& dim) {
  std::vector<int> got(static_cast<std::size_t>(m.size(dim)));
  int me = world_rank();
  MPI_Allgather(&me, 1, MPI_INT, got.data(), 1, MPI_INT, m.comm(dim));
  return got;
}

// The rules, on this rank's groups; each rank checks its own groups, so
// together every group is checked.
void check_rules(const Mesh& m, const std::map<std::string, int>& bound) {
  for (const std::string& dim : m.names()) {
    const std::vector<int> g = real_group(m, dim);
    BOOST_TEST(g == m.group(dim));
    for (int l = 0; l < 3; ++l) {
      std::set<int> seen;
      for (std::size_t k = 0; k < g.size(); ++k) {
        const int i = instance_of(l, g[k]);
        if (k == 0 || i != instance_of(l, g[k - 1]))
          BOOST_TEST(seen.insert(i).second, dim << " not consecutive in a " << level_names[l]);
      }
      const auto b = bound.find(dim);
      if (b != bound.end() && b->second == l) BOOST_TEST(seen.size() == 1u, dim << " leaves its " << level_names[l]);
    }
  }
}

// How many ranks of each instance the mesh uses: the same for every used
// instance of a level (a tiling), checked on every rank from an allgather.
void check_tiling(const Mesh& m, int expected_members) {
  const int w = world_size();
  int mine = m ? 1 : 0;
  std::vector<int> in(static_cast<std::size_t>(w));
  MPI_Allgather(&mine, 1, MPI_INT, in.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int members = 0;
  for (int x : in) members += x;
  BOOST_TEST(members == expected_members);
  for (int l = 0; l < 3; ++l) {
    std::map<int, std::set<int>> kids;  // used instance -> used children
    for (int r = 0; r < w; ++r)
      if (in[static_cast<std::size_t>(r)]) kids[instance_of(l, r)].insert(l == 0 ? r : instance_of(l - 1, r));
    std::set<std::size_t> counts;
    for (const auto& [i, k] : kids) counts.insert(k.size());
    BOOST_TEST(counts.size() <= 1u, "level " << level_names[l] << " not tiled");
  }
}

// The status and message of f, checked to be the same on every rank.
Status same_error(const std::function<void()>& f, std::string* message = nullptr) {
  std::string text;
  const Status s = status_of(f, &text);
  BOOST_TEST(same_everywhere(static_cast<int>(s)));
  BOOST_TEST(same_everywhere(static_cast<int>(std::hash<std::string>{}(text) & 0x7fffffff)), text);
  if (message) *message = text;
  return s;
}

}  // namespace

BOOST_AUTO_TEST_CASE(placed_meshes_follow_the_rules) {
  const int w = world_size();
  Env env;
  play_machine(env);
  struct Request {
    std::vector<int> shape;
    std::vector<std::string> names;
    std::vector<std::pair<std::string, std::string>> placement;
    int members;
  };
  // Worlds of 8 and 16 ranks (the test's policy): whole switches.
  const std::vector<Request> requests{
      {{w / 8, 8}, {"dp", "tp"}, {{"tp", "switch"}}, w},
      {{w / 2, 2}, {"dp", "tp"}, {{"tp", "host"}}, w},
      {{2, 2}, {"dp", "tp"}, {{"dp", "host"}}, 4},
      {{w / 4, 4}, {"dp", "tp"}, {{"tp", "domain"}}, w},
      {{2, 4}, {"dp", "tp"}, {{"tp", "switch"}, {"dp", "host"}}, 8},
      {{2, 2, 2}, {"pp", "dp", "tp"}, {{"pp", "host"}, {"tp", "domain"}}, 8},
  };
  for (const Request& q : requests) {
    if (q.members == 0) continue;
    MeshOptions o;
    o.placement = q.placement;
    BOOST_TEST_CONTEXT("shape " << q.shape[0] << "x" << q.shape[1] << " placement " << q.placement[0].first) {
      Mesh m;
      BOOST_REQUIRE(same_error([&] { m = Mesh::create(MPI_COMM_WORLD, q.shape, q.names, o); }) == Status::success);
      check_tiling(m, q.members);
      if (!m) continue;
      check_rules(m, [&] {
        std::map<std::string, int> b;
        for (const auto& [dim, level] : q.placement)
          for (int l = 0; l < 3; ++l)
            if (level == level_names[l]) b[dim] = l;
        return b;
      }());
      // The mesh's own report of its levels agrees with a brute force.
      const HostInfo info = host_info(m);
      BOOST_REQUIRE(info.levels.size() == 2u);
      BOOST_TEST(info.levels[0].name == "domain");
      BOOST_TEST(info.levels[1].name == "switch");
      for (const auto& [dim, level] : q.placement) BOOST_TEST(dim_within(m, dim, level));
    }
  }
}

BOOST_AUTO_TEST_CASE(errors_are_the_same_on_every_rank) {
  const int w = world_size();
  const int r = world_rank();
  std::string message;
  MeshOptions o;
  o.placement = {{"tp", "rack"}};
  {
    Env env;
    play_machine(env);
    BOOST_TEST(same_error([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &message) ==
               Status::invalid_argument);
    BOOST_TEST(message.find("'rack'") != std::string::npos, message);
    o.placement = {{"pp", "host"}};
    BOOST_TEST(same_error([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }) == Status::unknown_dim);
    o.placement = {{"tp", "host"}};
    BOOST_TEST(same_error([&] { Mesh::create(MPI_COMM_WORLD, {1, w}, {"dp", "tp"}, o); }, &message) ==
               (w > 2 ? Status::shape_mismatch : Status::success));
    if (w > 2) BOOST_TEST(message.find("'tp'") != std::string::npos, message);
    o.host_aware = true;
    BOOST_TEST(same_error([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }) == Status::invalid_argument);
    o.host_aware = false;
  }
  if (w > 1) {
    // DEVMESH_TOPOLOGY on rank 0 only; another level name on the last rank;
    // a malformed string on the last rank.
    Env env;
    if (r == 0) env.set(topology_variable, "domain=a");
    BOOST_TEST(same_error([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &message) ==
               Status::inconsistent);
    BOOST_TEST(message.find(topology_variable) != std::string::npos, message);
    env.set(topology_variable, r == w - 1 ? "rack=a" : "domain=a");
    BOOST_TEST(same_error([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &message) ==
               Status::inconsistent);
    BOOST_TEST(message.find("rank " + std::to_string(w - 1)) != std::string::npos, message);
    env.set(topology_variable, r == w - 1 ? "domain" : "domain=a");
    BOOST_TEST(same_error([&] { Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o); }, &message) ==
               Status::invalid_argument);
    BOOST_TEST(message.find("rank " + std::to_string(w - 1)) != std::string::npos, message);
  }
}

BOOST_AUTO_TEST_CASE(slurm_levels_and_record_hosts) {
  // SLURM_TOPOLOGY_ADDR as slurmd sets it under topology/tree: leaf switch
  // = the domain of this file's machine, spine = its switch.
  const int r = world_rank();
  Env env;
  env.set(host_id_variable, "h" + std::to_string(host_of(r)));
  env.set("SLURM_TOPOLOGY_ADDR",
          "s" + std::to_string(switch_of(r)) + ".l" + std::to_string(domain_of(r)) + ".node" + std::to_string(r));
  env.set("SLURM_TOPOLOGY_ADDR_PATTERN", "switch.switch.node");
  const Levels levels = discover_levels(MPI_COMM_WORLD);
  BOOST_TEST((levels.names == std::vector<std::string>{"host", "switch", "switch2"}));
  for (int q = 0; q < world_size(); ++q) {
    BOOST_TEST(levels.of[1][static_cast<std::size_t>(q)] == domain_of(q));
    BOOST_TEST(levels.of[2][static_cast<std::size_t>(q)] == switch_of(q));
  }
  // record_hosts on a mesh made without placement records the levels too.
  const Mesh m = Mesh::create(MPI_COMM_WORLD, {0}, {"all"});
  record_hosts(m);
  const HostInfo info = host_info(m);
  BOOST_REQUIRE(info.levels.size() == 2u);
  BOOST_TEST(info.levels[0].name == "switch");
  BOOST_TEST(info.levels[0].instance == domain_of(r));
  BOOST_TEST(dim_within(m, "all", "switch2") == (world_size() <= 8));
  BOOST_TEST(same_error([&] { dim_within(m, "all", "domain"); }) == Status::invalid_argument);
}

BOOST_AUTO_TEST_CASE(a_backend_gives_the_domain) {
  // The test plugin answers domain=<item r mod items> for world rank r.
  const int w = world_size();
  Env env;
  env.set(host_id_variable, "h" + std::to_string(host_of(world_rank())));
  env.set("DEVMESH_TEST_PLUGIN_DOMAIN", "nvlA,nvlA,nvlA,nvlA,nvlB,nvlB,nvlB,nvlB");
  MeshOptions o;
  o.backend = "topology";
  o.placement = {{"tp", "domain"}};
  const int tp = std::min(w, 4);
  Mesh m;
  BOOST_REQUIRE(same_error([&] { m = Mesh::create(MPI_COMM_WORLD, {0, tp}, {"dp", "tp"}, o); }) == Status::success);
  const std::vector<int> g = m.group("tp");
  for (int x : g) BOOST_TEST((x % 8) / 4 == (g[0] % 8) / 4, "tp leaves its domain");
  BOOST_TEST(host_info(m).levels.at(0).name == "domain");
}

BOOST_AUTO_TEST_CASE(placement_costs_at_most_one_allgather) {
  // Hosts by MPI_COMM_TYPE_SHARED (no DEVMESH_HOST_ID): one allgatherv of
  // the level reports more than host_aware; with DEVMESH_HOST_ID the
  // reports ride on the host strings' allgatherv.
  MeshOptions aware, placed;
  aware.host_aware = true;
  placed.placement = {{"tp", "host"}};
  const auto calls = [](const MeshOptions& o) {
    const long before = comm_counter::world_collectives();
    Mesh::create(MPI_COMM_WORLD, {0, 1}, {"dp", "tp"}, o);
    return comm_counter::world_collectives() - before;
  };
  const long by_node = calls(placed) - calls(aware);
  BOOST_TEST(by_node == 1);
  Env env;
  env.set(host_id_variable, "h" + std::to_string(host_of(world_rank())));
  const long by_id = calls(placed) - calls(aware);
  BOOST_TEST(by_id == 0);
}
