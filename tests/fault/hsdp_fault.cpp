// hsdp_fault REPORT_DIR KILL_RANK POINT [SECOND]: an HSDP mesh
// (replicate=P/2, shard=2) at P ranks (an even P: 8 and 4 in the tests) with
// fault_tolerance; rank KILL_RANK
// SIGKILLs itself at POINT (creation, first_comm, shard_allreduce,
// replicate_allreduce, p2p, agree, none). Every survivor writes what it
// saw to REPORT_DIR/rank-R.json (through a temporary name, renamed when
// complete): the status its operations failed with, the failed set it
// agreed on, and, when it is in the shrunk mesh, its groups there as OLD
// root indices (by an allreduce over the shrunk mesh's communicators), so
// that run_fault.py can judge them against a brute-force reference. With
// SECOND, rank SECOND also dies, right before the shrink (a death during it).
// POINT stop_<point>: rank KILL_RANK stops (SIGSTOP) there instead, and the
// mesh has a deadline (DEVMESH_TEST_DEADLINE seconds, default 2): the
// others must fail with TIMEOUT or REVOKED within it plus a second; no
// shrink (the stopped rank lives). DEVMESH_TEST_SHARD_BACKEND=gloo puts the
// shard dim on Gloo.
#include <mpi.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "devmesh/mesh.hpp"

#include "comm_groups.hpp"

namespace {

using devmesh::Error;
using devmesh::Mesh;
using devmesh::Status;

std::string json_ints(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 4) return 2;
  const std::string dir = argv[1];
  const int victim = std::atoi(argv[2]);
  const std::string point = argv[3];
  const int second = argc > 4 ? std::atoi(argv[4]) : -1;
  const bool stopping = point.rfind("stop_", 0) == 0;
  // The death's time (wall clock, shared by the ranks of this machine),
  // for the detection latency: from it to each survivor's first error.
  const auto wall_us = [] {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const auto die_at = [&](const char* p) {
    if (rank == victim && point == p) {
      std::ofstream(dir + "/death") << wall_us() << "\n";
      raise(SIGKILL);
    }
    if (rank == victim && stopping && point.substr(5) == p) raise(SIGSTOP);
  };

  std::string status = "success", where = "none", message;
  std::vector<int> failed;
  std::string shrunk = "null";
  const auto t0 = std::chrono::steady_clock::now();
  double detect_ms = -1, op_ms = -1;
  long long error_us = 0;
  auto op_start = t0;
  devmesh::MeshOptions o;
  o.fault_tolerance = true;
  if (stopping) o.deadline = std::getenv("DEVMESH_TEST_DEADLINE") ? std::atof(std::getenv("DEVMESH_TEST_DEADLINE")) : 2;
  if (const char* b = std::getenv("DEVMESH_TEST_SHARD_BACKEND")) o.dim_backends = {{"shard", b}};
  Mesh m;
  std::string step = "creation";
  try {
    die_at("creation");
    m = Mesh::create(MPI_COMM_WORLD, {0, 2}, {"replicate", "shard"}, o);
    step = "first_comm";
    die_at("first_comm");
    m.comm("shard");
    m.comm("replicate");
    std::vector<double> buf(64, 1.0), out(64);
    for (int iter = 0; iter < 3; ++iter) {
      step = "shard_allreduce";
      if (iter == 1) die_at("shard_allreduce");
      op_start = std::chrono::steady_clock::now();
      m.communicator("shard").allreduce(buf.data(), out.data(), buf.size(), devmesh::DataType::float64,
                                        devmesh::ReduceOp::sum);
      step = "replicate_allreduce";
      if (iter == 1) die_at("replicate_allreduce");
      op_start = std::chrono::steady_clock::now();
      m.communicator("replicate").allreduce(buf.data(), out.data(), buf.size(), devmesh::DataType::float64,
                                            devmesh::ReduceOp::sum);
      step = "p2p";
      if (iter == 1) die_at("p2p");
      op_start = std::chrono::steady_clock::now();
      auto& s = m.communicator("shard");
      const int peer = 1 - s.rank();
      s.sendrecv(buf.data(), 8, devmesh::DataType::float64, peer, out.data(), 8, devmesh::DataType::float64, peer);
    }
    step = "agree";
    die_at("agree");
    // Every survivor gets the same flag, and learns of a death there.
    if (!m.agree(true)) status = "disagree";
    if (!m.failed_ranks().empty()) {
      status = "proc_failed";
      where = "agree";
    }
  } catch (const Error& e) {
    status = std::string(devmesh::status_name(e.status()));
    where = step;
    message = e.what();
    const auto now = std::chrono::steady_clock::now();
    error_us = wall_us();
    detect_ms = std::chrono::duration<double, std::milli>(now - t0).count();
    op_ms = std::chrono::duration<double, std::milli>(now - op_start).count();
  }
  if (m && status != "success" && !stopping) {
    try {
      if (rank == second) raise(SIGKILL);
      Mesh s = m.shrink("replicate");
      if (!s) {
        shrunk = "\"spare\"";
      } else {
        const int old_index = m.root_index();
        std::ostringstream os;
        os << "{\"index\":" << s.root_index() << ",\"old_index\":" << old_index
           << ",\"mapped\":" << s.shrunk_index(old_index) << ",\"shape\":" << json_ints(s.shape())
           << ",\"shard\":" << json_ints(group_by_comm(s, "shard", old_index))
           << ",\"replicate\":" << json_ints(group_by_comm(s, "replicate", old_index)) << "}";
        shrunk = os.str();
      }
    } catch (const Error& e) {
      shrunk = "{\"error\":\"" + std::string(devmesh::status_name(e.status())) + "\"}";
    }
    // The agreed set, also where the shrink left no slice.
    failed = m.failed_ranks();
  }
  int revoked = -1;
  if (m) revoked = m.is_revoked() ? 1 : 0;
  std::ostringstream r;
  r << "{\"rank\":" << rank << ",\"status\":\"" << status << "\",\"where\":\"" << where
    << "\",\"detect_ms\":" << detect_ms << ",\"op_ms\":" << op_ms << ",\"error_us\":" << error_us << ",\"revoked\":" << revoked << ",\"failed\":" << json_ints(failed)
    << ",\"shrunk\":" << shrunk << "}\n";
  const std::string path = dir + "/rank-" + std::to_string(rank) + ".json";
  {
    std::ofstream f(path + ".tmp");
    f << r.str();
  }
  std::rename((path + ".tmp").c_str(), path.c_str());
  m = Mesh();
  // A job may stay in MPI_Finalize after a death (ULFM): the runner judges
  // by the reports and ends the job itself.
  MPI_Finalize();
  return 0;
}
