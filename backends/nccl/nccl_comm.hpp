// The NCCL backend's communicator and the helpers its files share
// (nccl_backend.cpp: options, instances, creation and the ops table;
// operations.cpp: the collectives and point to point; comm.cpp: the
// checks and bounded waits). Internal: not installed.
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

#include "common/plugin_support.hpp"
#include "devmesh/backend.hpp"
#include "devmesh/backend_plugin.h"

// ncclCommRevoke stops a communicator's work and leaves the handle valid
// until it is destroyed, so it may run beside a call polling it; before
// NCCL 2.28 a revoke can only abort the communicator, which frees it.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define DEVMESH_NCCL_HAS_REVOKE 1
#else
#define DEVMESH_NCCL_HAS_REVOKE 0
#endif

// ncclAlltoAll, ncclGather and ncclScatter (NCCL 2.28); before, grouped
// ncclSend/ncclRecv do their work.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define DEVMESH_NCCL_HAS_ALLTOALL_GATHER_SCATTER 1
#else
#define DEVMESH_NCCL_HAS_ALLTOALL_GATHER_SCATTER 0
#endif

namespace devmesh::backends {

// The core's services (init_host): MPI error text among them.
extern const devmesh_backend_host_t* host;

// An MPI call's failure as Error(backend), code and class kept, the text
// from the core's routine (safe on every MPI).
void check_mpi(int code, const char* call);

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(Status s, const std::string& msg);

void check_cuda(cudaError_t e, const char* call);

void check_nccl(ncclResult_t r, const char* call, ncclComm_t comm = nullptr);

#define DEVMESH_CUDA(call) check_cuda((call), #call)

struct Deadline {
  Clock::time_point end;
  double seconds;
  explicit Deadline(double s)
      : end(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s))), seconds(s) {}
  bool passed() const { return Clock::now() >= end; }
};

// Waits for an MPI request, giving up (and cancelling nothing: the request
// is abandoned with its communicator) at the deadline.
void wait_mpi(MPI_Request& req, const Deadline& d, const char* what);

// Polls a non-blocking NCCL communicator until its pending operation ends;
// ncclInProgress at the deadline, or as soon as *revoked (when given) is set.
ncclResult_t wait_nccl(ncclComm_t comm, const Deadline& d, const std::atomic<int>* revoked = nullptr);

// Flushes and destroys a communicator, or aborts it if that does not finish
// in time.
void close_comm(ncclComm_t comm, double timeout) noexcept;

struct Comm {
  Comm(ncclComm_t c, int device, double timeout) : comm(c), device(device), timeout(timeout) {
    check_nccl(ncclCommCount(comm, &size), "ncclCommCount", comm);
    check_nccl(ncclCommUserRank(comm, &rank), "ncclCommUserRank", comm);
    DEVMESH_CUDA(cudaSetDevice(device));
    DEVMESH_CUDA(cudaStreamCreateWithFlags(&own_stream, cudaStreamNonBlocking));
  }
  ~Comm() {
    cudaSetDevice(device);
    if (scratch) cudaFree(scratch);
    if (own_stream) cudaStreamDestroy(own_stream);
    // NCCL refuses ncclCommFinalize on a revoked communicator, which has no
    // work left to flush: it is aborted once ncclCommRevoke's own
    // asynchronous work has settled, so that the abort does not overtake it
    // (null: revoke() aborted it already).
    if (revoked.load() == 0) {
      close_comm(comm, timeout);
    } else if (comm) {
      wait_nccl(comm, Deadline(timeout));
      ncclCommAbort(comm);
    }
  }
  cudaStream_t stream(void* s) const { return s ? static_cast<cudaStream_t>(s) : own_stream; }
  // A non-blocking communicator may return ncclInProgress while it enqueues.
  void done(ncclResult_t r, const char* call) {
    check_nccl(r, call, comm);
    if (r == ncclInProgress) {
      const ncclResult_t end = wait_nccl(comm, Deadline(timeout), &revoked);
      if (end != ncclSuccess) check_nccl(end == ncclInProgress ? ncclInternalError : end, call, comm);
    }
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm, &async), "ncclCommGetAsyncError", comm);
    check_nccl(async, call, comm);
  }

  // Local and idempotent: the first call stops the work in flight and keeps
  // status (REVOKED for success or a value outside the statuses); the
  // others do nothing. Where NCCL has ncclCommRevoke, safe beside an
  // operation on another thread: the handle stays valid.
  void revoke(int status) {
    const int why = status > DEVMESH_SUCCESS && status <= DEVMESH_ERR_TIMEOUT ? status : DEVMESH_ERR_REVOKED;
    int none = 0;
    if (!revoked.compare_exchange_strong(none, why, std::memory_order_acq_rel)) return;
#if DEVMESH_NCCL_HAS_REVOKE
    check_nccl(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), "ncclCommRevoke", comm);
    const char* how = "ncclCommRevoke";
#else
    const ncclResult_t r = ncclCommAbort(comm);
    comm = nullptr;
    check_nccl(r, "ncclCommAbort");
    const char* how = "ncclCommAbort";
#endif
    if (host->log_level >= DEVMESH_LOG_INFO)
      host->log("nccl", DEVMESH_LOG_INFO,
                ("communicator revoked (" + std::string(how) + ", rank " + std::to_string(rank) + " of " +
                 std::to_string(size) + "): its operations fail on this rank; NCCL tells no other member")
                    .c_str());
  }
  // Throws the revoke's status once the communicator is revoked; during:
  // the operation was under way when the revoke stopped it.
  void check_revoked(bool during) const {
    const int s = revoked.load(std::memory_order_acquire);
    if (s == 0) [[likely]]
      return;
    std::string msg = during ? "the communicator was revoked while the operation ran (its output is undefined)"
                             : "the communicator is revoked";
    if (s != DEVMESH_ERR_REVOKED) msg += std::string(" after a failure: ") + std::string(status_description(s));
    fail(static_cast<Status>(s), msg);
  }

  ncclComm_t comm;
  int device;
  double timeout;
  int rank = 0;
  int size = 0;
  cudaStream_t own_stream = nullptr;
  void* scratch = nullptr;
  std::atomic<int> revoked{0};  // the revoke's status; 0: usable
};

inline Comm& comm_of(void* c) { return *static_cast<Comm*>(c); }

// Runs body, a part of an operation on k that may have been under way when
// k was revoked: it then fails with the revoke's status, whatever NCCL or
// CUDA answered once the revoke stopped it.
template <class F>
void cut_by_revoke(const Comm& k, F&& body) {
  try {
    body();
  } catch (const Error&) {
    k.check_revoked(true);
    throw;
  }
  k.check_revoked(true);
}

// One operation on communicator c; a revoked one refuses it without
// touching NCCL or CUDA.
template <class F>
int operation(void* c, F&& body) {
  return plugin::guarded([&] {
    Comm& k = comm_of(c);
    k.check_revoked(false);
    cut_by_revoke(k, [&] { body(k); });
  });
}

// A request: an event recorded on the stream after the operation. NCCL's
// work is stream-ordered, so the stream reaching the event means the
// operation ran. Requests end before their communicator is destroyed, so
// comm outlives them.
struct Request {
  int device;
  const Comm* comm;
  cudaEvent_t event = nullptr;
};

// A request for an operation about to be enqueued on k (its event made).
Request* new_request(const Comm& k);
// Frees a request (its event too; CUDA lets a pending event go).
void end_request(Request* r) noexcept;

// One operation on communicator c, enqueued on the caller's stream (s, or
// the communicator's own) by body(k, stream). request NULL: the blocking
// form, which returns once enqueued. Otherwise an event is recorded on the
// stream after the operation and *request names it, written only on
// success: a failed or revoked enqueue frees the request it made.
template <class F>
int started(void* c, void* s, void** request, F&& body) {
  if (!request) return operation(c, [&](Comm& k) { body(k, k.stream(s)); });
  Request* made = nullptr;
  const int rc = operation(c, [&](Comm& k) {
    DEVMESH_CUDA(cudaSetDevice(k.device));
    made = new_request(k);
    body(k, k.stream(s));
    DEVMESH_CUDA(cudaEventRecord(made->event, k.stream(s)));
  });
  if (rc == DEVMESH_SUCCESS)
    *request = made;
  else if (made)
    end_request(made);
  return rc;
}

// NCCL calls in one group (ncclGroupStart .. ncclGroupEnd). The group is
// ended before a failed call inside it is reported, and by the destructor
// when a throw leaves it open: an open group would swallow this thread's
// next NCCL calls.
class Group {
 public:
  Group() { check_nccl(ncclGroupStart(), "ncclGroupStart"); }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  ~Group() {
    if (open_) ncclGroupEnd();
  }
  // Keeps the first failure of a call made inside the group.
  void add(ncclResult_t r, const char* call) {
    if (failed_ == ncclSuccess && r != ncclSuccess && r != ncclInProgress) failed_ = r, call_ = call;
  }
  bool failed() const { return failed_ != ncclSuccess; }
  void end(Comm& k) {
    open_ = false;
    const ncclResult_t ended = ncclGroupEnd();
    check_nccl(failed_, call_, k.comm);
    k.done(ended, "ncclGroupEnd");
  }

 private:
  bool open_ = true;
  ncclResult_t failed_ = ncclSuccess;
  const char* call_ = "";
};

// Device memory ordered on stream s (cudaMallocAsync), freed after the work
// enqueued before its end on s: the copy an in-place operation reads while
// it writes the caller's buffer.
class StreamScratch {
 public:
  StreamScratch(const void* from, std::size_t bytes, cudaStream_t s) : s_(s) {
    if (bytes == 0) return;
    DEVMESH_CUDA(cudaMallocAsync(&p_, bytes, s));
    DEVMESH_CUDA(cudaMemcpyAsync(p_, from, bytes, cudaMemcpyDeviceToDevice, s));
  }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;
  ~StreamScratch() {
    if (p_) cudaFreeAsync(p_, s_);
  }
  char* get() const { return static_cast<char*>(p_); }

 private:
  void* p_ = nullptr;
  cudaStream_t s_;
};

// NCCL's data type and reduction of a devmesh one (checked by the core).
ncclDataType_t nccl_type(int t);
ncclRedOp_t nccl_op(int op);

// The collectives and point to point of the ops table (operations.cpp).
int allreduce(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s);
int allgather(void* c, const void* send, void* recv, std::size_t count, int t, void* s);
int reduce_scatter(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s);
int broadcast(void* c, void* buffer, std::size_t count, int t, int root, void* s);
int alltoall(void* c, const void* send, void* recv, std::size_t count, int t, void* s);
int barrier(void* c, void* s);
int send(void* c, const void* buffer, std::size_t count, int t, int peer, void* s);
int recv(void* c, void* buffer, std::size_t count, int t, int peer, void* s);
int isend(void* c, const void* buffer, std::size_t count, int t, int peer, void* s, void** request);
int irecv(void* c, void* buffer, std::size_t count, int t, int peer, void* s, void** request);
int test(void* request, int* done);
int wait(void* request);
int sendrecv(void* c, const void* sendbuf, std::size_t sendcount, int sendtype, int dest, void* recvbuf,
             std::size_t recvcount, int recvtype, int source, void* s);

// Version 4 (collectives_v.cpp: the variable-size and rooted collectives;
// operations.cpp: the started forms of version 1's and batch). Every one
// takes request as started() does.
int alltoallv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
              const std::size_t recvcounts[], const std::size_t rdispls[], int t, void* s, void** request);
int allgatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
               const std::size_t rdispls[], int t, void* s, void** request);
int reduce_scatterv(void* c, const void* send, void* recv, const std::size_t recvcounts[], int t, int op, void* s,
                    void** request);
int gather(void* c, const void* send, void* recv, std::size_t count, int t, int root, void* s, void** request);
int gatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
            const std::size_t rdispls[], int t, int root, void* s, void** request);
int scatter(void* c, const void* send, void* recv, std::size_t count, int t, int root, void* s, void** request);
int scatterv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
             std::size_t recvcount, int t, int root, void* s, void** request);
int reduce(void* c, const void* send, void* recv, std::size_t count, int t, int op, int root, void* s, void** request);
int iallreduce(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s, void** request);
int iallgather(void* c, const void* send, void* recv, std::size_t count, int t, void* s, void** request);
int ireduce_scatter(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s, void** request);
int ibroadcast(void* c, void* buffer, std::size_t count, int t, int root, void* s, void** request);
int ialltoall(void* c, const void* send, void* recv, std::size_t count, int t, void* s, void** request);
int ibarrier(void* c, void* s, void** request);
int batch(void* c, const devmesh_backend_p2p_t ops[], std::size_t n, void* s, void** request);

}  // namespace devmesh::backends
