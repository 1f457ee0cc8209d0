// repair_fault DIR STEPS SPARES SPAWN KILLS: HSDP training (replicate=4,
// shard=2, fault_tolerance) over the first 8 ranks of MPI_COMM_WORLD, the
// last SPARES ranks hot spares, that loses ranks and repairs the mesh
// (Mesh::repair: spares first, then, with SPAWN 1, processes spawned from
// this program, which start with --join). KILLS: comma-separated, each
//   X@S        whoever holds root index X dies (SIGKILL) before step S;
//   X@rN       whoever holds root index X dies entering its N-th repair
//              (a death during the others' repair);
//   wW@M       world rank W (a spare) dies M ms into its standby, unless
//              a repair took it by then;
// "-" for none. A refused repair (too few spares, SPAWN 0) ends the run:
// the survivors release the spares. Every process writes DIR/<id>.json
// (id: w<world rank>, or n<pid> for a spawned one): how it started (member
// at an index, spare, spawned), how it ended (finished, released, refused,
// error), its final root index, shape and names, the indices each repair
// it saw filled, whether its parameters equal the closed form of a run with
// no failure, and the sums of root indices over its replicate and shard
// groups (run_fault.py judges them against a reference).
// DEVMESH_TEST_SHARD_BACKEND=gloo puts the shard dim on Gloo (spawned
// processes get it with the rest of the mesh's options from the repair).
#include <mpi.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "devmesh/mesh.hpp"

namespace {

using devmesh::DataType;
using devmesh::Error;
using devmesh::Mesh;
using devmesh::ReduceOp;
using devmesh::Status;

constexpr std::size_t params = 64;

struct Kill {
  int index = -1, step = -1, repair = -1;  // X@S or X@rN
  int world = -1, ms = -1;                 // wW@M
};

std::vector<Kill> parse_kills(const std::string& text) {
  std::vector<Kill> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item == "-" || item.empty()) continue;
    const std::size_t at = item.find('@');
    Kill k;
    if (item[0] == 'w') {
      k.world = std::atoi(item.substr(1, at - 1).c_str());
      k.ms = std::atoi(item.substr(at + 1).c_str());
    } else {
      k.index = std::atoi(item.substr(0, at).c_str());
      if (item[at + 1] == 'r')
        k.repair = std::atoi(item.substr(at + 2).c_str());
      else
        k.step = std::atoi(item.substr(at + 1).c_str());
    }
    out.push_back(k);
  }
  return out;
}

std::string json_ints(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

struct Run {
  std::string dir, id, start = "member", end = "error", message;
  int start_index = -1, steps = 0, spares = 0;
  bool spawn = false;
  std::vector<Kill> kills;
  std::vector<std::string> spawn_argv;
  std::vector<std::vector<int>> filled;  // per repair seen
  std::vector<double> repair_ms;
  Mesh mesh;
  std::vector<double> w = std::vector<double>(params, 1.0), last = w;
  bool have_w = true;
  int s = 0, repairs = 0;
  std::string program;

  // Kill k fires once in the job: on the first process to claim it.
  void die_if(std::size_t k, bool cond) {
    if (!cond) return;
    const std::string claim = dir + "/kill-" + std::to_string(k);
    const int fd = open(claim.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
    if (fd < 0) return;
    const std::string line = std::to_string(mesh ? mesh.root_index() : -1) + " " + id + "\n";
    (void)!write(fd, line.data(), line.size());
    close(fd);
    raise(SIGKILL);
  }
  void report();
  void step();
  void catch_up();
  bool recover();
  void start_up();
  void train();
};

void Run::step() {
  const double mine = (s + 1) * (mesh.coordinate()[1] + 1);
  std::vector<double> grad(params, mine), sum(params);
  mesh.communicator("shard").allreduce(grad.data(), sum.data(), params, DataType::float64, ReduceOp::sum);
  mesh.communicator("replicate").allreduce(sum.data(), grad.data(), params, DataType::float64, ReduceOp::sum);
  for (std::size_t i = 0; i < params; ++i) w[i] -= 0.01 * grad[i] / 4;
}

// After a repair: every member goes to the earliest step a survivor
// failed, and the ranks that took a failed place get the parameters from
// a surviving replica (a broadcast along replicate).
void Run::catch_up() {
  int mine = have_w ? s : INT_MAX, along = 0, first = 0;
  mesh.communicator("replicate").allreduce(&mine, &along, 1, DataType::int32, ReduceOp::min);
  mesh.communicator("shard").allreduce(&along, &first, 1, DataType::int32, ReduceOp::min);
  if (have_w && first < s) w = last;
  s = first;
  int src = have_w ? mesh.local_rank("replicate") : INT_MAX, root = 0;
  mesh.communicator("replicate").allreduce(&src, &root, 1, DataType::int32, ReduceOp::min);
  mesh.communicator("replicate").broadcast(w.data(), params, DataType::float64, root);
  have_w = true;
  last = w;
}

// Repairs until a repaired mesh is caught up; false: the repair was
// refused (the survivors released the spares).
bool Run::recover() {
  while (true) {
    ++repairs;
    for (std::size_t k = 0; k < kills.size(); ++k)
      die_if(k, kills[k].index == mesh.root_index() && kills[k].repair == repairs);
    try {
      std::optional<devmesh::Spawn> sp;
      if (spawn) sp = devmesh::Spawn{program, spawn_argv, MPI_INFO_NULL};
      const auto t0 = std::chrono::steady_clock::now();
      Mesh repaired = mesh.repair(sp);
      repair_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      filled.push_back(repaired.failed_ranks());
      mesh = repaired;
      catch_up();
      return true;
    } catch (const Error& e) {
      if (e.status() == Status::invalid_argument) {
        message = e.what();
        mesh.release_spares();
        return false;
      }
      if (e.status() != Status::proc_failed && e.status() != Status::revoked) throw;
    }
  }
}

// A rank that took a failed place catches up, repairing on a death.
void Run::start_up() {
  try {
    catch_up();
  } catch (const Error& e) {
    if (e.status() != Status::proc_failed && e.status() != Status::revoked) throw;
    if (!recover()) s = steps + 1;
  }
}

void Run::train() {
  if (s > steps) {
    end = "refused";
    return;
  }
  while (s < steps) {
    for (std::size_t k = 0; k < kills.size(); ++k) die_if(k, kills[k].index == mesh.root_index() && kills[k].step == s);
    try {
      std::vector<double> before = w;
      step();
      last = std::move(before);
      ++s;
    } catch (const Error& e) {
      if (e.status() != Status::proc_failed && e.status() != Status::revoked) throw;
      if (!recover()) {
        end = "refused";
        return;
      }
    }
  }
  mesh.release_spares();
  end = "finished";
}

void Run::report() {
  double want = 1.0;
  for (int t = 0; t < steps; ++t) want -= 0.01 * 3 * (t + 1);
  bool ok = true;
  for (double x : w) ok = ok && std::fabs(x - want) < 1e-9;
  std::string groups = "null";
  if (mesh && end == "finished") {
    int x = mesh.root_index(), rsum = 0, ssum = 0;
    mesh.communicator("replicate").allreduce(&x, &rsum, 1, DataType::int32, ReduceOp::sum);
    mesh.communicator("shard").allreduce(&x, &ssum, 1, DataType::int32, ReduceOp::sum);
    groups = "{\"replicate\":" + std::to_string(rsum) + ",\"shard\":" + std::to_string(ssum) + "}";
  }
  std::string fills = "[";
  for (std::size_t i = 0; i < filled.size(); ++i) fills += (i ? "," : "") + json_ints(filled[i]);
  fills += "]";
  std::string ms = "[";
  for (std::size_t i = 0; i < repair_ms.size(); ++i) ms += (i ? "," : "") + std::to_string(repair_ms[i]);
  ms += "]";
  std::string esc;
  for (char c : message) esc += c == '"' || c == '\\' ? ' ' : c;
  const std::string tmp = dir + "/." + id, path = dir + "/" + id + ".json";
  std::ofstream(tmp) << "{\"start\":\"" << start << "\",\"start_index\":" << start_index << ",\"end\":\"" << end
                     << "\",\"index\":" << (mesh ? mesh.root_index() : -1) << ",\"shape\":"
                     << (mesh ? json_ints(mesh.shape()) : "null") << ",\"names\":\""
                     << (mesh ? mesh.names()[0] + "," + mesh.names()[1] : "") << "\",\"filled\":" << fills
                     << ",\"params_ok\":" << (ok ? "true" : "false") << ",\"groups\":" << groups
                     << ",\"repair_ms\":" << ms << ",\"message\":\"" << esc << "\"}\n";
  std::rename(tmp.c_str(), path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const bool joined = argc > 1 && std::string(argv[1]) == "--join";
  const int a = joined ? 2 : 1;
  if (argc < a + 5) return 2;
  Run run;
  run.program = argv[0];
  run.dir = argv[a];
  run.steps = std::atoi(argv[a + 1]);
  run.spares = std::atoi(argv[a + 2]);
  run.spawn = std::atoi(argv[a + 3]) != 0;
  run.kills = parse_kills(argv[a + 4]);
  run.spawn_argv = {"--join", argv[a], argv[a + 1], argv[a + 2], argv[a + 3], argv[a + 4]};
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  run.id = joined ? "n" + std::to_string(getpid()) : "w" + std::to_string(world);
  try {
    if (joined) {
      run.start = "spawned";
      run.have_w = false;
      run.mesh = Mesh::join();
      run.start_up();
    } else {
      devmesh::MeshOptions options;
      options.fault_tolerance = true;
      options.spares = run.spares;
      if (const char* b = std::getenv("DEVMESH_TEST_SHARD_BACKEND")) options.dim_backends = {{"shard", b}};
      run.mesh = Mesh::create(MPI_COMM_WORLD, {4, 2}, {"replicate", "shard"}, options);
      if (!run.mesh) {
        run.start = "spare";
        static std::atomic<bool> waiting{true};
        for (std::size_t k = 0; k < run.kills.size(); ++k)
          if (run.kills[k].world == world)
            std::thread([&run, k] {
              std::this_thread::sleep_for(std::chrono::milliseconds(run.kills[k].ms));
              run.die_if(k, waiting);
            }).detach();
        run.mesh = Mesh::standby(MPI_COMM_WORLD);
        waiting = false;
        if (!run.mesh) {
          run.end = "released";
          run.report();
          MPI_Finalize();
          return 0;
        }
        run.have_w = false;
        run.start_up();
      } else {
        run.start_index = run.mesh.root_index();
      }
    }
    run.train();
  } catch (const Error& e) {
    run.end = "error";
    run.message = std::string(devmesh::status_name(e.status())) + ": " + e.what();
  }
  run.report();
  run.mesh = Mesh();
  MPI_Finalize();
  return 0;
}
