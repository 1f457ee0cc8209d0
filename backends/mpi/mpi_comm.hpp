// The MPI backend's communicator and what its files share: the
// interruptible wait, the communicator collectives run on, count
// conversions and the requests of started operations.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <vector>

#include "common/mpi_support.hpp"
#include "common/plugin_support.hpp"
#include "mpi/mpi_backend_config.h"
#include "mpi_backend.hpp"

namespace devmesh::backends::mpi_backend {

// The count and displacement types of the calls that take counts (the
// v-collectives, the rooted ones, the started ones, batch): MPI 4's
// large-count `_c` calls where the MPI has them (found at configure time),
// else the int calls, which refuse larger values (UNSUPPORTED).
#if DEVMESH_HAVE_MPI_LARGE_COUNT
using count_t = MPI_Count;
using displ_t = MPI_Aint;
#define DEVMESH_MPI_COUNTED(fn) fn##_c
#define DEVMESH_MPI_COUNTED_NAME(fn) #fn "_c"
#else
using count_t = int;
using displ_t = int;
#define DEVMESH_MPI_COUNTED(fn) fn
#define DEVMESH_MPI_COUNTED_NAME(fn) #fn
#endif

constexpr int p2p_tag = 0x6d73;

// Data types, reductions, buffers and peers arrive checked (the core's
// argument gate, backend_plugin.h).
inline DataType type_of(int t) { return static_cast<DataType>(t); }
inline ReduceOp op_of(int op) { return static_cast<ReduceOp>(op); }

// Counts and displacements as MPI takes them, converted from the caller's
// size_t arrays: room for two count and two displacement arrays of a group,
// grown once and kept (the communicator's, for blocking calls) or owned by
// a request until its operation completes.
struct Arrays {
  std::vector<count_t> counts;
  std::vector<displ_t> displs;
  std::vector<char> copy;  // an in-place input sent from a copy (alltoallv under Open MPI 4)
  void fit(int n) {
    const auto want = 2 * static_cast<std::size_t>(n);
    if (counts.size() < want) counts.resize(want);
    if (displs.size() < want) displs.resize(want);
  }
};

struct Comm {
  MPI_Comm comm;  // owned by the mesh
  // The mesh has a deadline: waits must end when the communicator is
  // revoked (see run()).
  bool interruptible = false;
  int rank = 0, size = 0;  // in comm
  // Of an interruptible communicator: a duplicate of comm that its
  // collectives run on (made by the first one: collective_comm()), never
  // seen by the program, so that small_allreduce's receives cannot take the
  // program's messages and so that the backend decides when it is freed;
  // and small_allreduce's receive buffer.
  MPI_Comm own = MPI_COMM_NULL;
  std::vector<char> scratch;
  // The count arrays of blocking calls.
  Arrays arrays;
  // A wait was cut by a revoke, leaving its requests pending: own is then
  // never freed, since MPI cannot cancel a collective and freeing it may
  // crash a later MPI call (docs/ERRORS.md, "Failures").
  bool abandoned = false;
  Comm(MPI_Comm c, bool i);
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  ~Comm();
};

inline MPI_Comm comm_of(void* c) { return static_cast<Comm*>(c)->comm; }

// v as T, or UNSUPPORTED "takes at most 2^31-1 elements per call, got N
// (in sdispls[3])" when it does not fit (array: what v is an element of,
// NULL for a single count).
[[noreturn, gnu::cold]] void refuse_count(std::size_t v, int digits, const char* array, std::size_t index);
template <class T>
T counted(std::size_t v, const char* array = nullptr, std::size_t index = 0) {
  if (v > static_cast<std::size_t>(std::numeric_limits<T>::max())) [[unlikely]]
    refuse_count(v, std::numeric_limits<T>::digits, array, index);
  return static_cast<T>(v);
}
inline int count_of(std::size_t count) { return counted<int>(count); }

// n entries of a (the caller's size_t array) as T into out, each checked.
template <class T>
T* converted(T* out, const std::size_t* a, int n, const char* name) {
  for (int i = 0; i < n; ++i) out[i] = counted<T>(a[i], name, static_cast<std::size_t>(i));
  return out;
}

// Waits for the requests (testing each until it completes), or throws
// revoked as soon as the communicator is revoked, abandoning them (on:
// the communicator they run on; MPI_COMM_NULL for own).
void wait_interruptible(Comm& comm, MPI_Request* r, int n, const char* name, MPI_Comm on = MPI_COMM_NULL);
// One pass of that wait: true when all are complete, false while some are
// pending on a communicator not revoked.
bool poll_interruptible(Comm& comm, MPI_Request* r, int n, const char* name, MPI_Comm on);

// The communicator collectives run on: comm, or the interruptible
// communicator's own duplicate (made here by the first collective).
MPI_Comm collective_comm(void* c);

// One operation: the blocking MPI call, or, on a communicator of a mesh
// with a deadline, its nonblocking form tested until it completes or the
// communicator is revoked (the mesh's watcher revokes it at the
// deadline), since a revoke alone need not end a blocking call
// (docs/BENCHMARKS.md, "Fault tolerance"). The request of
// an operation cut that way is abandoned with its communicator, which is
// never used again (nor freed, where it is the backend's: Comm::abandoned).
// Collectives run on collective_comm(c), point to point on the dim's
// communicator, where the program's own messages are.
template <class Blocking, class Start>
void run(void* c, const char* name, Blocking&& blocking, Start&& start) {
  Comm& comm = *static_cast<Comm*>(c);
  if (!comm.interruptible) {
    plugin::check_mpi(blocking(), name);
    return;
  }
  MPI_Request r = MPI_REQUEST_NULL;
  plugin::check_mpi(start(&r), name);
  wait_interruptible(comm, &r, 1, name);
}

// A started operation (v2's isend and irecv, version 4's members with a
// request): its MPI requests, the communicator they run on, and the count
// arrays MPI reads until they complete. Ended by test() or wait(), which
// on an interruptible communicator end it as run() does.
struct Request {
  Comm& comm;
  MPI_Comm on;
  const char* name;
  MPI_Request one = MPI_REQUEST_NULL;
  std::vector<MPI_Request> many;  // batch's
  Arrays arrays;
  Request(Comm& c, MPI_Comm o, const char* n) : comm(c), on(o), name(n) {}
  MPI_Request* data() { return many.empty() ? &one : many.data(); }
  int count() const { return many.empty() ? 1 : static_cast<int>(many.size()); }
};

// One operation of a version 4 member: blocking (request NULL) through
// run() on the communicator's kept arrays, or started on collective_comm()
// on arrays a new Request owns, which is written to *request once started.
class Operation {
 public:
  Operation(void* c, void** request, const char* name) : comm_(*static_cast<Comm*>(c)), request_(request), name_(name) {
    if (request_) start(c);
  }
  Comm& comm() { return comm_; }
  bool started() const { return started_ != nullptr; }
  Arrays& arrays() { return started_ ? started_->arrays : comm_.arrays; }
  // Blocking: blocking(communicator) returns an MPI code; start(communicator,
  // MPI_Request*) starts the nonblocking form.
  template <class Blocking, class Start>
  void go(Blocking&& blocking, Start&& start) {
    if (!started_) {
      run(
          &comm_, name_, [&] { return blocking(comm_.comm); },
          [&](MPI_Request* r) { return start(collective_comm(&comm_), r); });
      return;
    }
    plugin::check_mpi(start(started_->on, &started_->one), name_);
    *request_ = started_.release();
  }

 private:
  Comm& comm_;
  void** request_;
  const char* name_;
  std::unique_ptr<Request> started_;
  void start(void* c);  // a started operation's Request
};

// Version 4's members (mpi_vcollectives.cpp, mpi_requests.cpp).
int alltoallv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
              const std::size_t recvcounts[], const std::size_t rdispls[], int type, void*, void** request);
int allgatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
               const std::size_t rdispls[], int type, void*, void** request);
int reduce_scatterv(void* c, const void* send, void* recv, const std::size_t recvcounts[], int type, int op, void*,
                    void** request);
int gather(void* c, const void* send, void* recv, std::size_t count, int type, int root, void*, void** request);
int gatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
            const std::size_t rdispls[], int type, int root, void*, void** request);
int scatter(void* c, const void* send, void* recv, std::size_t count, int type, int root, void*, void** request);
int scatterv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
             std::size_t recvcount, int type, int root, void*, void** request);
int reduce(void* c, const void* send, void* recv, std::size_t count, int type, int op, int root, void*, void** request);
int iallreduce(void* c, const void* send, void* recv, std::size_t count, int type, int op, void*, void** request);
int iallgather(void* c, const void* send, void* recv, std::size_t count, int type, void*, void** request);
int ireduce_scatter(void* c, const void* send, void* recv, std::size_t count, int type, int op, void*, void** request);
int ibroadcast(void* c, void* buffer, std::size_t count, int type, int root, void*, void** request);
int ialltoall(void* c, const void* send, void* recv, std::size_t count, int type, void*, void** request);
int ibarrier(void* c, void*, void** request);
int batch(void* c, const devmesh_backend_p2p_t ops[], std::size_t n, void*, void** request);
// v2's requests.
int isend(void* c, const void* buffer, std::size_t count, int type, int peer, void*, void** request);
int irecv(void* c, void* buffer, std::size_t count, int type, int peer, void*, void** request);
int test(void* request, int* done);
int wait(void* request);

}  // namespace devmesh::backends::mpi_backend
