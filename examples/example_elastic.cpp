// An HSDP training loop that loses a rank: it finishes without it (shrink
// mode) or gets the whole mesh back (repair mode).
//
//   mpirun --with-ft ulfm -n 8 example_elastic [shrink] [STEPS] [VICTIM] [DEATH_STEP]
//   mpirun --with-ft ulfm -n 8+SPARES example_elastic repair [STEPS] [VICTIM] [DEATH_STEP]
//
// A (replicate=4, shard=2) mesh with fault_tolerance. Every step, each rank
// sums its shard's gradients (allreduce along shard) and then averages the
// result over the replicas (allreduce along replicate); the parameters
// every rank holds must stay equal to a closed form. At DEATH_STEP the rank
// VICTIM (default 5, at step STEPS / 2; STEPS default 10) dies (SIGKILL).
// The survivors' operations fail with PROC_FAILED or REVOKED.
//
// Shrink (the default): they shrink the mesh along replicate, which drops
// the whole replica that held the dead rank (its live partner becomes a
// spare and stops), and redo the step on the smaller mesh.
//
// Repair: the last SPARES ranks of the job (its size minus 8) are hot
// spares in standby. The survivors repair the mesh: a spare takes the dead
// rank's root index or, when none is left, the repair spawns this program
// with the argument `join` (the process calls Mesh::join). Every survivor
// keeps its root index; the newcomer gets the parameters by a broadcast
// along replicate from a surviving replica, and the (4, 2) mesh goes on.
// The members release the spares no repair took when they finish.
//
// A collective can complete on some members and fail on others (ULFM
// reports a failure where it sees one), so survivors may be a step apart:
// they agree on the earliest step any of them failed, and those that had
// completed it go back to their parameters before it. Each process that
// finishes checks its parameters against the closed form and prints one
// line (a released spare says so). Exit status 0 when the check holds, 1
// otherwise. The launcher must let survivors live: Open MPI 5 with
// `--with-ft ulfm`, and MPI_COMM_WORLD must return errors (set below).
// Repair spawns by the program's path: start it by an absolute path (or
// one valid where the spawned process starts).
#include <mpi.h>

#include <signal.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

using devmesh::DataType;
using devmesh::Error;
using devmesh::Mesh;
using devmesh::ReduceOp;
using devmesh::Status;

namespace {

constexpr std::size_t params = 1024;

// One step: the shard's gradient sum, averaged over the replicas. Rank x
// contributes (step + 1) * (shard coordinate + 1) to every element, so a
// shard's sum is (step + 1) * (1 + 2) and the replica average is the same.
void step(const Mesh& mesh, int s, std::vector<double>& w) {
  const double mine = (s + 1) * (mesh.coordinate()[1] + 1);
  std::vector<double> grad(params, mine), sum(params);
  mesh.communicator("shard").allreduce(grad.data(), sum.data(), params, DataType::float64, ReduceOp::sum);
  mesh.communicator("replicate").allreduce(sum.data(), grad.data(), params, DataType::float64, ReduceOp::sum);
  const double replicas = mesh.size("replicate");
  for (std::size_t i = 0; i < params; ++i) w[i] -= 0.01 * grad[i] / replicas;
}

// The closed form of a run with no failure: each step subtracts
// 0.01 * 3 * (s + 1) from every parameter.
bool correct(const std::vector<double>& w, int steps) {
  double want = 1.0;
  for (int s = 0; s < steps; ++s) want -= 0.01 * 3 * (s + 1);
  bool ok = true;
  for (double x : w) ok = ok && std::fabs(x - want) < 1e-9;
  return ok;
}

bool failure(const Error& e) { return e.status() == Status::proc_failed || e.status() == Status::revoked; }

// The earliest of the members' steps s (a minimum along both dims is one
// over the mesh).
int earliest(const Mesh& mesh, int s) {
  int along = s, first = s;
  mesh.communicator("replicate").allreduce(&s, &along, 1, DataType::int32, ReduceOp::min);
  mesh.communicator("shard").allreduce(&along, &first, 1, DataType::int32, ReduceOp::min);
  return first;
}

int shrink_mode(int rank, int steps, int victim, int death) {
  devmesh::MeshOptions options;
  options.fault_tolerance = true;
  Mesh mesh = Mesh::create(MPI_COMM_WORLD, {4, 2}, {"replicate", "shard"}, options);
  // w: the parameters; last: w before the last step this rank completed.
  std::vector<double> w(params, 1.0), last = w;
  int shrinks = 0;
  for (int s = 0; s < steps;) {
    if (s == death && rank == victim) raise(SIGKILL);
    try {
      std::vector<double> before = w;
      step(mesh, s, w);  // w changes only once both allreduces succeeded
      last = std::move(before);
      ++s;
    } catch (const Error& e) {
      if (!failure(e)) throw;
      // Every survivor gets here; they agree on who failed and go on with
      // the replicas that are whole.
      Mesh smaller = mesh.shrink("replicate");
      const std::vector<int> failed = mesh.failed_ranks();
      if (!smaller) {
        std::printf("rank %d: spare after the shrink (failed root indices:", rank);
        for (int f : failed) std::printf(" %d", f);
        std::printf(")\n");
        return 0;
      }
      // The earliest step a survivor failed is redone by all; a rank that
      // completed it (it failed the next one) goes back to its parameters
      // before it.
      const int first = earliest(smaller, s);
      if (first < s) {
        w = last;
        s = first;
      }
      mesh = smaller;
      ++shrinks;
    }
  }
  const bool ok = correct(w, steps);
  std::printf("rank %d: finished %d steps on a (%d, %d) mesh after %d shrink(s), parameters %s\n", rank, steps,
              mesh.size("replicate"), mesh.size("shard"), shrinks, ok ? "correct" : "WRONG");
  return ok ? 0 : 1;
}

// Repair mode: one process's training state. A newcomer (a spare a repair
// took, a spawned process) holds no parameters until it catches up.
struct Training {
  Mesh mesh;
  std::vector<double> w = std::vector<double>(params, 1.0), last = w;
  bool have_w = true;
  int s = 0, repairs = 0;
  devmesh::Spawn spawn;
};

// After a repair: every member goes back to the earliest step a holder of
// parameters failed, and the newcomers get the parameters from a surviving
// replica: a broadcast along replicate from its lowest member that holds
// them.
void catch_up(Training& t) {
  const int first = earliest(t.mesh, t.have_w ? t.s : INT_MAX);
  if (t.have_w && first < t.s) t.w = t.last;
  t.s = first;
  devmesh::Communicator& replicate = t.mesh.communicator("replicate");
  int mine = t.have_w ? t.mesh.local_rank("replicate") : INT_MAX, root = INT_MAX;
  replicate.allreduce(&mine, &root, 1, DataType::int32, ReduceOp::min);
  if (root == INT_MAX) throw std::runtime_error("no surviving replica holds this shard's parameters");
  replicate.broadcast(t.w.data(), params, DataType::float64, root);
  t.have_w = true;
  t.last = t.w;
}

// Repairs (spares first, then a spawn) until the repaired mesh has caught
// up; a death during the repair or the catch-up: repair again.
void recover(Training& t) {
  while (true) {
    try {
      Mesh repaired = t.mesh.repair(t.spawn);
      ++t.repairs;
      t.mesh = repaired;
      catch_up(t);
      return;
    } catch (const Error& e) {
      if (!failure(e)) throw;
    }
  }
}

void train(Training& t, int steps, bool victim, int death) {
  while (t.s < steps) {
    if (t.s == death && victim) raise(SIGKILL);
    try {
      std::vector<double> before = t.w;
      step(t.mesh, t.s, t.w);  // w changes only once both allreduces succeeded
      t.last = std::move(before);
      ++t.s;
    } catch (const Error& e) {
      if (!failure(e)) throw;
      recover(t);
    }
  }
  t.mesh.release_spares();
}

// mode "repair": a member or a spare of MPI_COMM_WORLD; "join": a process a
// repair spawned. Its line names it by how it started: member, spare or
// spawned, and its world rank.
int repair_mode(const char* mode, const std::string& program, int steps, int victim, int death) {
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Training t;
  t.spawn = devmesh::Spawn{program, {"join", std::to_string(steps)}, MPI_INFO_NULL};
  std::string who = "member " + std::to_string(rank);
  if (std::strcmp(mode, "join") == 0) {
    who = "spawned " + std::to_string(rank);
    t.mesh = Mesh::join();
  } else {
    devmesh::MeshOptions options;
    options.fault_tolerance = true;
    options.spares = size - 8;
    t.mesh = Mesh::create(MPI_COMM_WORLD, {4, 2}, {"replicate", "shard"}, options);
    if (!t.mesh) {
      // A spare could load the model here, before it stands by.
      who = "spare " + std::to_string(rank);
      t.mesh = Mesh::standby(MPI_COMM_WORLD);
      if (!t.mesh) {
        std::printf("%s: released, no repair needed it\n", who.c_str());
        return 0;
      }
    }
  }
  const bool member = who.rfind("member", 0) == 0;
  if (!member) {
    // A newcomer: the repair that took it is its first.
    t.have_w = false;
    t.repairs = 1;
    try {
      catch_up(t);
    } catch (const Error& e) {
      if (!failure(e)) throw;
      recover(t);
    }
  }
  train(t, steps, member && rank == victim, death);
  const bool ok = correct(t.w, steps);
  std::printf("%s: finished %d steps on a (%d, %d) mesh at root index %d after %d repair(s), parameters %s\n",
              who.c_str(), steps, t.mesh.size("replicate"), t.mesh.size("shard"), t.mesh.root_index(), t.repairs,
              ok ? "correct" : "WRONG");
  return ok ? 0 : 1;
}

// The path a repair spawns: this program's, absolute where it can be.
std::string program_path(const char* argv0) {
  char* full = realpath(argv0, nullptr);
  std::string path = full ? full : argv0;
  std::free(full);
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // An optional first argument names the mode: shrink (the default),
  // repair, or join (a process a repair spawned).
  const char* mode = "shrink";
  int a = 1;
  if (argc > 1 && (argv[1][0] < '0' || argv[1][0] > '9')) mode = argv[a++];
  const int steps = argc > a ? std::atoi(argv[a]) : 10;
  const int victim = argc > a + 1 ? std::atoi(argv[a + 1]) : 5;
  const int death = argc > a + 2 ? std::atoi(argv[a + 2]) : steps / 2;
  const bool repair = std::strcmp(mode, "repair") == 0 || std::strcmp(mode, "join") == 0;
  if (!repair && std::strcmp(mode, "shrink") != 0) {
    if (rank == 0) std::fprintf(stderr, "unknown mode '%s': shrink, repair or join\n", mode);
    MPI_Finalize();
    return 2;
  }
  int status = 0;
  try {
    status = repair ? repair_mode(mode, program_path(argv[0]), steps, victim, death)
                    : shrink_mode(rank, steps, victim, death);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    status = 1;
  }
  std::fflush(stdout);
  MPI_Finalize();
  return status;
}
