// request_fault MODE: a devmesh::Request keeps the mesh's fault state as a
// blocking call does, and never outlives its communicator's plugin request.
// Each rank prints one line "rank R: ..." saying what it saw; the program
// fails (exit 1 on every rank) when a rank saw what it must not.
//   kill      (run_fault.py requests, N >= 3, ULFM): the last rank SIGKILLs
//             itself while the others wait on an irecv from it and on the
//             started collectives the backend has; every survivor's waits
//             end with proc_failed or revoked, within 10 s.
//   deadline  (ULFM, N >= 2): a mesh with a 2 s deadline; rank 0 waits on an
//             irecv nobody sends: timeout after the deadline (and within it
//             plus 1.5 s); the others start the same wait 1 s later and end
//             with revoked when rank 0's deadline revokes the mesh.
//   outlive   (any MPI, any N): requests outlive their mesh; its destroy
//             ended them (the data arrived), and their wait and test then
//             throw invalid_argument without touching the plugin's request.
#include <mpi.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "devmesh/mesh.hpp"

namespace {

using devmesh::Communicator;
using devmesh::DataType;
using devmesh::Error;
using devmesh::Mesh;
using devmesh::ReduceOp;
using devmesh::Request;
using devmesh::Status;
using Clock = std::chrono::steady_clock;

int rank = 0, size = 0;
bool bad = false;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The status f throws (success when it returns), and its message.
Status status_of(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.status();
  }
  return Status::success;
}

std::string name(Status s) { return std::string(devmesh::status_name(s)); }

void expect(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("rank %d: FAIL: %s\n", rank, what.c_str());
  bad = true;
}

Mesh line(bool fault_tolerance, double deadline = 0) {
  devmesh::MeshOptions o;
  o.fault_tolerance = fault_tolerance;
  o.deadline = deadline;
  return Mesh::create(MPI_COMM_WORLD, {0}, {"all"}, o);
}

// The started collectives the mesh's backend has, each on its own buffers:
// (name, Request) for those that started, unsupported ones left out.
struct Started {
  std::vector<int> send, sum, blocks;  // sum: iallreduce's; blocks: ialltoallv's
  std::vector<std::size_t> counts, displs;
  std::vector<std::pair<const char*, Request>> requests;
};
void start_collectives(Communicator& c, Started& s) {
  const int n = c.size();
  s.send.assign(n, rank);
  s.sum.assign(1, -1);
  s.blocks.assign(n, -1);
  s.counts.assign(n, 1);
  s.displs.resize(n);
  for (int i = 0; i < n; ++i) s.displs[i] = i;
  const auto start = [&](const char* what, const std::function<Request()>& f) {
    Request r;
    const Status st = status_of([&] { r = f(); });
    if (st == Status::unsupported) return;
    expect(st == Status::success, std::string(what) + " started with " + name(st));
    s.requests.emplace_back(what, std::move(r));
  };
  start("iallreduce", [&] { return c.iallreduce(s.send.data(), s.sum.data(), 1, DataType::int32, ReduceOp::sum); });
  start("ialltoallv", [&] {
    return c.ialltoallv(s.send.data(), s.counts, s.displs, s.blocks.data(), s.counts, s.displs, DataType::int32);
  });
}

int kill_mode() {
  const int victim = size - 1;
  const Mesh m = line(true);
  Communicator& c = m.communicator("all");
  int x = 1, y = 0;
  c.allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
  if (rank == victim) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    raise(SIGKILL);
  }
  int in = -1;
  Request irecv = c.irecv(&in, 1, DataType::int32, victim);
  Started s2;
  start_collectives(c, s2);
  const auto t0 = Clock::now();
  std::string line = "rank " + std::to_string(rank) + ":";
  const auto end = [&](const char* what, Request& r) {
    const Status st = status_of([&] { r.wait(); });
    line += std::string(" ") + what + " " + name(st) + ",";
    expect(st == Status::proc_failed || st == Status::revoked, std::string(what) + " ended with " + name(st));
    expect(!r.pending(), std::string(what) + " still pending after its wait");
  };
  // Rank 0 waits on the collectives first, the others on the irecv first.
  if (rank != 0) end("irecv", irecv);
  for (auto& [what, r] : s2.requests) end(what, r);
  if (rank == 0) end("irecv", irecv);
  const double t = since(t0);
  expect(t < 10, "the waits took " + std::to_string(t) + " s");
  std::printf("%s started %zu collective(s), ended in %.2f s%s\n", line.c_str(), s2.requests.size(), t,
              bad ? " FAIL" : " ok");
  std::fflush(stdout);
  return bad ? 1 : 0;
}

int deadline_mode() {
  const double deadline = 2;
  const Mesh m = line(true, deadline);
  Communicator& c = m.communicator("all");
  int x = 1, y = 0;
  c.allreduce(&x, &y, 1, DataType::int32, ReduceOp::sum);
  expect(y == size, "allreduce gave " + std::to_string(y));
  if (rank != 0) std::this_thread::sleep_for(std::chrono::seconds(1));
  int in = -1;
  Request r = c.irecv(&in, 1, DataType::int32, rank == 0 ? 1 : 0);
  const auto t0 = Clock::now();
  std::string message;
  const Status st = status_of([&] { r.wait(); }, &message);
  const double t = since(t0);
  if (rank == 0) {
    expect(st == Status::timeout, "the wait its deadline cut ended with " + name(st) + ": " + message);
    expect(t >= deadline - 0.1 && t < deadline + 1.5, "the timeout came after " + std::to_string(t) + " s");
  } else {
    expect(st == Status::revoked, "the wait ended with " + name(st) + ": " + message);
    expect(t < deadline, "the revoke came after " + std::to_string(t) + " s");
  }
  expect(!r.pending(), "pending after its wait");
  expect(in == -1, "the receive buffer was written");
  // Later requests of the revoked mesh: refused at the start.
  const Status later = status_of([&] { (void)c.irecv(&in, 1, DataType::int32, 0); });
  expect(later == Status::revoked || later == Status::timeout, "an irecv after the revoke: " + name(later));
  std::printf("rank %d: wait %s after %.2f s (%s)%s\n", rank, name(st).c_str(), t, message.c_str(),
              bad ? " FAIL" : " ok");
  return 0;
}

int outlive_mode() {
  // A ring: each rank sends to the next and receives from the previous.
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size, n = 1000;
  std::vector<int> out(n), in(n, -1);
  for (int i = 0; i < n; ++i) out[i] = rank * 100000 + i;
  Request a, b, started;
  Started s;
  {
    const Mesh m = line(false);
    Communicator& c = m.communicator("all");
    // Each rank sends first, then receives: both are posted before either
    // rank destroys its mesh, so the destroy's waits complete.
    a = c.isend(out.data(), n, DataType::int32, next);
    b = c.irecv(in.data(), n, DataType::int32, prev);
    start_collectives(c, s);
  }  // destroyed: a, b and the started collectives ended here
  for (int i = 0; i < n; ++i)
    if (in[i] != prev * 100000 + i) {
      expect(false, "element " + std::to_string(i) + " of the irecv is " + std::to_string(in[i]));
      break;
    }
  // What the destroy's waits completed: the sum of the ranks, and from
  // every rank r its block (its rank).
  for (const auto& [what, r] : s.requests) {
    if (std::strcmp(what, "iallreduce") == 0) expect(s.sum[0] == size * (size - 1) / 2, "iallreduce's sum");
    if (std::strcmp(what, "ialltoallv") == 0)
      for (int i = 0; i < size; ++i) expect(s.blocks[i] == i, "ialltoallv's block " + std::to_string(i));
  }
  expect(a.pending() && b.pending(), "a Request of a destroyed mesh forgot its request");
  std::string message;
  const Status wa = status_of([&] { a.wait(); }, &message);
  expect(wa == Status::invalid_argument, "wait of a request of a destroyed mesh: " + name(wa));
  expect(message.find("the request's mesh was destroyed (the destroy ended it)") != std::string::npos,
         "the message: " + message);
  expect(!a.pending(), "pending after the wait");
  expect(status_of([&] { a.wait(); }) == Status::success, "a second wait did something");
  const Status tb = status_of([&] { (void)b.test(); });
  expect(tb == Status::invalid_argument, "test of a request of a destroyed mesh: " + name(tb));
  expect(!b.pending(), "pending after the test");
  for (auto& [what, r] : s.requests) {
    const Status st = status_of([&] { r.wait(); });
    expect(st == Status::invalid_argument, std::string(what) + " of a destroyed mesh: " + name(st));
  }
  // Destroying a pending Request of a destroyed mesh: nothing touched.
  {
    Request c2;
    {
      const Mesh m = line(false);
      int z = rank;
      c2 = m.communicator("all").isend(&z, 1, DataType::int32, rank);
      int w = -1;
      m.communicator("all").recv(&w, 1, DataType::int32, rank);
      expect(w == rank, "the self-message carried " + std::to_string(w));
    }
  }
  std::printf("rank %d: outlive: %zu started collective(s)%s\n", rank, s.requests.size(), bad ? " FAIL" : " ok");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "kill") return kill_mode();  // the harness ends the job
  if (mode == "deadline")
    deadline_mode();
  else if (mode == "outlive")
    outlive_mode();
  else
    expect(false, "unknown mode '" + mode + "' (kill, deadline or outlive)");
  std::fflush(stdout);
  int any = bad ? 1 : 0, all = 0;
  MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return all;
}
