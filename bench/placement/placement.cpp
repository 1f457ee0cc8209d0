// Paired benchmark of creation with a placement (MeshOptions::placement)
// against the same creation with host_aware and against plain creation
// (row-major over the parent), in one run, in batches that alternate.
//
//   mpiexec -n 8 ./bench_placement [--levels ids|shared] [--shape 2,2,2] [--names dp,ep,tp]
//                                  [--place tp=host,ep=domain,dp=switch] [--batches 30] [--iters 8]
//
// Levels, set by the program from its world rank before any creation:
//   ids      DEVMESH_HOST_ID: hosts of 2 ranks; DEVMESH_TOPOLOGY: domains of
//            4 ranks, switches of 8 ("domain=dR/4;switch=sR/8")
//   shared   no DEVMESH_HOST_ID: hosts by MPI_COMM_TYPE_SHARED (one host,
//            this machine); no DEVMESH_TOPOLOGY nor Slurm address: the host
//            is the only level (--place should name only "host")
// Both variables (and SLURM_TOPOLOGY_ADDR(_PATTERN)) are unset in "shared".
//
// Methods (each a creation over MPI_COMM_WORLD of the same shape):
//   plain       Mesh::create with default options, then comm(dim) for every dim
//   host_aware  the same with MeshOptions::host_aware
//   placement   the same with MeshOptions::placement = --place
// and the same three with Mesh::create alone (create_plain,
// create_host_aware, create_placement): the creation without the dims'
// communicators. A batch is `iters` creations of one method, each after a
// barrier, only the creation timed (freeing is not); its time is the
// slowest rank's mean per creation. The six methods' batches alternate,
// their order rotating every round. The paired ratio of A over B is the
// median over rounds of A's batch time over B's batch time in that round.
//
// Prints, in the format of bench/support/bench.hpp, one record per method
// (µs per creation) with what one creation made, counted by the tests'
// PMPI layer (tests/support/comm_counter) around the creation alone:
// colls, the collective calls over the parent (MPI_COMM_WORLD: allreduce,
// allgather(v), bcast, comm_split_type); calls, every collective and
// point-to-point call on any communicator; comms, the communicators made;
// counts_vary=1 when some creation of the method counted otherwise than
// the last. Then one record per method of its time outside the collective
// calls (outside_<method>: elapsed less the time inside the collectives and
// communicator creations the PMPI layer times, per creation, the mean over
// ranks: the creation's own work with its local MPI calls), and one per
// pair (ratios as "seconds" x 1e-6, as bench/creation/paired.cpp prints
// them).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"
#include "comm_counter.hpp"
#include "devmesh/hosts.hpp"
#include "devmesh/mesh.hpp"

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= s.size()) {
    std::size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    out.push_back(s.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return out;
}

// What the simulated machine gives a rank: its host, domain and switch.
int host_of(int r) { return r / 2; }
int domain_of(int r) { return r / 4; }
int switch_of(int r) { return r / 8; }

void set_levels(const std::string& levels) {
  const int r = bench::world_rank();
  unsetenv("SLURM_TOPOLOGY_ADDR");
  unsetenv("SLURM_TOPOLOGY_ADDR_PATTERN");
  if (levels == "ids") {
    setenv(devmesh::host_id_variable, ("h" + std::to_string(host_of(r))).c_str(), 1);
    setenv(devmesh::topology_variable,
           ("domain=d" + std::to_string(domain_of(r)) + ";switch=s" + std::to_string(switch_of(r))).c_str(), 1);
  } else {
    unsetenv(devmesh::host_id_variable);
    unsetenv(devmesh::topology_variable);
  }
}

// What one creation made, counted around it.
struct Counts {
  long colls = 0, calls = 0, comms = 0;
  bool operator!=(const Counts& o) const { return colls != o.colls || calls != o.calls || comms != o.comms; }
};

struct Method {
  std::string name;
  const devmesh::MeshOptions* options;
  bool with_comms;  // comm(dim) for every dim after Mesh::create
};

struct Run {
  std::vector<int> shape;
  std::vector<std::string> names;
};

// One creation by m: this rank's seconds; the mesh is freed untimed.
double create_once(const Run& run, const Method& m, Counts& counted) {
  const long colls = comm_counter::world_collectives(), calls = comm_counter::data_calls();
  const long comms = comm_counter::created();
  const double t0 = MPI_Wtime();
  devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, run.shape, run.names, *m.options);
  if (m.with_comms)
    for (const std::string& n : run.names) mesh.comm(n);
  const double t = MPI_Wtime() - t0;
  counted = {comm_counter::world_collectives() - colls, comm_counter::data_calls() - calls,
             comm_counter::created() - comms};
  if (!mesh) throw std::runtime_error("a rank left out of the mesh");
  return t;
}

// The placed mesh keeps each placed dim within its level (ids: host, domain,
// switch as set_levels gives them; shared: one host, nothing to check).
// Checked once, untimed, from the mesh's own groups of parent ranks.
void check_placed(const Run& run, const devmesh::MeshOptions& placed, const std::string& levels) {
  if (levels != "ids") return;
  devmesh::Mesh mesh = devmesh::Mesh::create(MPI_COMM_WORLD, run.shape, run.names, placed);
  for (const auto& [dim, level] : placed.placement) {
    int (*of)(int) = level == "host" ? host_of : level == "domain" ? domain_of : switch_of;
    const std::vector<int> g = mesh.group(dim);
    for (int x : g)
      if (of(x) != of(g[0])) throw std::runtime_error("the placed dim " + dim + " leaves its " + level);
  }
}

struct Args {
  std::string levels = "ids", shape = "2,2,2", names = "dp,ep,tp", place = "tp=host,ep=domain,dp=switch";
  int batches = 30, iters = 8;
};

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--levels")
      a.levels = v;
    else if (k == "--shape")
      a.shape = v;
    else if (k == "--names")
      a.names = v;
    else if (k == "--place")
      a.place = v;
    else if (k == "--batches")
      a.batches = std::atoi(v.c_str());
    else if (k == "--iters")
      a.iters = std::atoi(v.c_str());
  }
  return a;
}

void measure(const Args& a, const Run& run, const std::vector<Method>& methods) {
  const std::size_t nm = methods.size();
  std::vector<Counts> last(nm);
  std::vector<int> vary(nm, 0);
  auto batch = [&](std::size_t k, double& outside) {
    double sum = 0, between = 0;
    for (int i = 0; i < a.iters; ++i) {
      MPI_Barrier(MPI_COMM_WORLD);
      Counts c;
      const double in0 = comm_counter::seconds_in_collectives();
      const double t = create_once(run, methods[k], c);
      sum += t;
      between += t - (comm_counter::seconds_in_collectives() - in0);
      if (i > 0 && c != last[k]) vary[k] = 1;
      last[k] = c;
    }
    between /= a.iters;
    MPI_Allreduce(MPI_IN_PLACE, &between, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    outside = between / bench::world_size();
    return bench::slowest(sum / a.iters);
  };
  double outside = 0;
  for (std::size_t k = 0; k < nm; ++k) batch(k, outside);  // warm-up: endpoints, first-call costs
  std::fill(vary.begin(), vary.end(), 0);
  std::vector<std::vector<double>> t(nm), out(nm);
  for (int b = 0; b < a.batches; ++b)
    for (std::size_t j = 0; j < nm; ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(b)) % nm;
      t[k].push_back(batch(k, outside));
      out[k].push_back(outside);
    }
  MPI_Allreduce(MPI_IN_PLACE, vary.data(), static_cast<int>(nm), MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  std::string text;
  for (std::size_t i = 0; i < run.shape.size(); ++i) text += (i ? "x" : "") + std::to_string(run.shape[i]);
  const std::string head = "placement\tlevels=" + a.levels + "\tshape=" + text + "\tnames=" + a.names +
                           "\tplace=" + a.place + "\tranks=" + std::to_string(bench::world_size()) +
                           "\titers=" + std::to_string(a.iters);
  // Rank 0's counts (the library makes the same calls on every rank).
  for (std::size_t k = 0; k < nm; ++k)
    bench::print_row(head + "\tmethod=" + methods[k].name + "\tcolls=" + std::to_string(last[k].colls) +
                         "\tcalls=" + std::to_string(last[k].calls) + "\tcomms=" + std::to_string(last[k].comms) +
                         "\tcounts_vary=" + std::to_string(vary[k]),
                     t[k]);
  for (std::size_t k = 0; k < nm; ++k) bench::print_row(head + "\tmethod=outside_" + methods[k].name, out[k]);
  auto pair = [&](std::size_t x, std::size_t y) {
    std::vector<double> r;
    for (int i = 0; i < a.batches; ++i) r.push_back(t[x][i] / t[y][i] * 1e-6);
    bench::print_row(head + "\tmethod=paired_" + methods[x].name + "_over_" + methods[y].name, r);
  };
  for (std::size_t base : {std::size_t{0}, std::size_t{3}}) {
    pair(base + 2, base + 1);  // placement / host_aware
    pair(base + 2, base);      // placement / plain
    pair(base + 1, base);      // host_aware / plain
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const Args a = parse_args(argc, argv);
  if (a.levels != "ids" && a.levels != "shared") {
    if (bench::world_rank() == 0)
      std::fprintf(stderr, "bench_placement: --levels %s: 'ids' or 'shared' expected\n", a.levels.c_str());
    MPI_Finalize();
    return 2;
  }
  Run run;
  for (const std::string& d : split_list(a.shape)) run.shape.push_back(std::atoi(d.c_str()));
  run.names = split_list(a.names);
  devmesh::MeshOptions plain, aware, placed;
  aware.host_aware = true;
  for (const std::string& p : split_list(a.place)) {
    const std::size_t eq = p.find('=');
    placed.placement.emplace_back(p.substr(0, eq), eq == std::string::npos ? "" : p.substr(eq + 1));
  }
  const std::vector<Method> methods = {
      {"plain", &plain, true},         {"host_aware", &aware, true},         {"placement", &placed, true},
      {"create_plain", &plain, false}, {"create_host_aware", &aware, false}, {"create_placement", &placed, false},
  };
  int rc = 0;
  try {
    set_levels(a.levels);
    check_placed(run, placed, a.levels);
    measure(a, run, methods);
  } catch (const std::exception& e) {  // devmesh::Error or a failed check above
    std::fprintf(stderr, "bench_placement: %s\n", e.what());
    rc = 1;
  }
  MPI_Finalize();
  return rc;
}
