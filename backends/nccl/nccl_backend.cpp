// NCCL communicators for mesh dims, bootstrapped over the dims' MPI groups.
//
// The plugin libdevmesh-backend-nccl.so (devmesh/backend_plugin.h).
// Options (key=value): init=unique_id|split, split_share=0|1,
// scalable_from=N, timeout=SECONDS, device=N (per rank); docs/BACKENDS.md.
//
// Every wait of creation and finalisation in here is bounded by the
// timeout option: communicators are created non-blocking
// (ncclConfig_t.blocking = 0) and polled with ncclCommGetAsyncError; the
// MPI exchanges around them are non-blocking requests polled against the
// same deadline. A creation that fails or times out on any member aborts
// the NCCL communicator on every member and throws Error(backend).
// Collectives poll an ncclInProgress enqueue against it too; the GPU work
// itself, and barrier's stream synchronisation, are not bounded
// (docs/ERRORS.md, "Waits: which are bounded").
//
// revoke() is local: it stops the communicator's work in flight on this
// rank (ncclCommRevoke from NCCL 2.28, ncclCommAbort before) and keeps the
// status, which the operations under way and every later one fail with.
#include "nccl_backend.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/plugin_support.hpp"

// ncclCommRevoke stops a communicator's work and leaves the handle valid
// until it is destroyed, so it may run beside a call polling it; before
// NCCL 2.28 a revoke can only abort the communicator, which frees it.
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define DEVMESH_NCCL_HAS_REVOKE 1
#else
#define DEVMESH_NCCL_HAS_REVOKE 0
#endif

namespace devmesh::backends {
namespace {

// How a group's communicator is created.
enum class Init {
  // A unique id from the group's rank 0, broadcast over the group's MPI
  // communicator, into ncclCommInitRankConfig (ncclCommInitRankScalable
  // for groups of at least scalable_from ranks). Collective over the group
  // only, so it also serves lazy comm(dim) calls. The default.
  unique_id,
  // ncclCommSplit of one root NCCL communicator (created on first use over
  // all root members). Collective over all root members, so used by
  // create_comms() only; lazy creation falls back to unique_id.
  split,
};

struct Options {
  int device = -1;  // -1: automatic (the caller's current device, else host-local rank % visible)
  Init init = Init::unique_id;
  bool split_share = false;  // ncclConfig_t.splitShare for the split path
  int scalable_from = 1024;  // group size from which InitRankScalable is used
  double timeout = 120.0;    // deadline of one creation, seconds
};

// The core's services (init_host): MPI error text among them.
const devmesh_backend_host_t* host = nullptr;

// An MPI call's failure as Error(backend), code and class kept, the text
// from the core's routine (safe on every MPI).
void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[1024] = "";
  int cls = 0;
  host->mpi_error(code, text, sizeof text, &cls);
  throw Error(Status::backend, std::string(call) + " failed: " + text, code, cls);
}

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(Status s, const std::string& msg) { throw Error(s, msg); }

void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) fail(Status::backend, std::string(call) + " failed: " + cudaGetErrorString(e));
}

void check_nccl(ncclResult_t r, const char* call, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  std::string detail = ncclGetLastError(comm) ? ncclGetLastError(comm) : "";
  fail(Status::backend,
       std::string(call) + " failed: " + ncclGetErrorString(r) + (detail.empty() ? "" : " (" + detail + ")"));
}

#define DEVMESH_CUDA(call) check_cuda((call), #call)

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::int8:
      return ncclInt8;
    case DataType::uint8:
      return ncclUint8;
    case DataType::int32:
      return ncclInt32;
    case DataType::uint32:
      return ncclUint32;
    case DataType::int64:
      return ncclInt64;
    case DataType::uint64:
      return ncclUint64;
    case DataType::float16:
      return ncclFloat16;
    case DataType::bfloat16:
      return ncclBfloat16;
    case DataType::float32:
      return ncclFloat32;
    case DataType::float64:
      return ncclFloat64;
  }
  fail(Status::invalid_argument, "unknown data type");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return ncclSum;
    case ReduceOp::prod:
      return ncclProd;
    case ReduceOp::min:
      return ncclMin;
    case ReduceOp::max:
      return ncclMax;
  }
  fail(Status::invalid_argument, "unknown reduction");
}

struct Deadline {
  Clock::time_point end;
  double seconds;
  explicit Deadline(double s)
      : end(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s))), seconds(s) {}
  bool passed() const { return Clock::now() >= end; }
};

// Waits for an MPI request, giving up (and cancelling nothing: the request
// is abandoned with its communicator) at the deadline.
void wait_mpi(MPI_Request& req, const Deadline& d, const char* what) {
  for (int done = 0;;) {
    check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (d.passed())
      fail(Status::backend, std::string(what) + " did not complete within " + std::to_string(d.seconds) +
                                " s (a member of the group is missing or stuck)");
    std::this_thread::yield();
  }
}

// Polls a non-blocking NCCL communicator until its pending operation ends;
// ncclInProgress at the deadline, or as soon as *revoked (when given) is set.
ncclResult_t wait_nccl(ncclComm_t comm, const Deadline& d, const std::atomic<int>* revoked = nullptr) {
  for (;;) {
    if (revoked && revoked->load(std::memory_order_acquire) != 0) return ncclInProgress;
    ncclResult_t state = ncclSuccess;
    const ncclResult_t r = ncclCommGetAsyncError(comm, &state);
    if (r != ncclSuccess) return r;
    if (state != ncclInProgress) return state;
    if (d.passed()) return ncclInProgress;
    std::this_thread::yield();
  }
}

// The device the caller already made current, or -1. Looks for a current
// CUDA context through the driver, only if the driver is already loaded
// (no context can exist otherwise), so no CUDA state is created here.
int caller_device() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return -1;
  using GetCurrent = int (*)(void**);
  auto get = reinterpret_cast<GetCurrent>(dlsym(lib, "cuCtxGetCurrent"));
  void* ctx = nullptr;
  int device = -1;
  if (get && get(&ctx) == 0 && ctx && cudaGetDevice(&device) != cudaSuccess) device = -1;
  dlclose(lib);
  return ctx ? device : -1;
}

// Two members of one NCCL communicator may not share a GPU: every member
// learns every member's (host, PCI bus id) and all fail alike on a repeat.
void check_distinct_gpus(MPI_Comm group, int device, const Deadline& d) {
  struct Id {
    char host[MPI_MAX_PROCESSOR_NAME];
    char bus[32];
  } mine{};
  int len = 0;
  check_mpi(MPI_Get_processor_name(mine.host, &len), "MPI_Get_processor_name");
  DEVMESH_CUDA(cudaDeviceGetPCIBusId(mine.bus, sizeof mine.bus, device));
  int n = 0;
  check_mpi(MPI_Comm_size(group, &n), "MPI_Comm_size");
  std::vector<Id> all(static_cast<std::size_t>(n));
  MPI_Request req;
  check_mpi(MPI_Iallgather(&mine, sizeof(Id), MPI_BYTE, all.data(), sizeof(Id), MPI_BYTE, group, &req),
            "MPI_Iallgather");
  wait_mpi(req, d, "exchanging GPU ids");
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (std::strcmp(all[i].host, all[j].host) == 0 && std::strcmp(all[i].bus, all[j].bus) == 0)
        fail(Status::invalid_argument, "ranks " + std::to_string(j) + " and " + std::to_string(i) +
                                           " of one NCCL group both use GPU " + all[i].bus + " on host " + all[i].host +
                                           " (one NCCL communicator needs one GPU per rank)");
}

// Flushes and destroys a communicator, or aborts it if that does not finish
// in time.
void close_comm(ncclComm_t comm, double timeout) noexcept {
  const ncclResult_t r = ncclCommFinalize(comm);
  if ((r != ncclSuccess && r != ncclInProgress) || wait_nccl(comm, Deadline(timeout)) != ncclSuccess) {
    ncclCommAbort(comm);
    return;
  }
  ncclCommDestroy(comm);
}

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

Comm& comm_of(void* c) { return *static_cast<Comm*>(c); }

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

// Data types, reductions, buffers, roots and peers arrive checked (the
// core's argument gate, backend_plugin.h).
DataType type_of(int t) { return static_cast<DataType>(t); }
ReduceOp op_of(int op) { return static_cast<ReduceOp>(op); }

int allreduce(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s) {
  return operation(c, [&](Comm& k) {
    k.done(ncclAllReduce(send, recv, count, nccl_type(type_of(t)), nccl_op(op_of(op)), k.comm, k.stream(s)),
           "ncclAllReduce");
  });
}
int allgather(void* c, const void* send, void* recv, std::size_t count, int t, void* s) {
  return operation(c, [&](Comm& k) {
    k.done(ncclAllGather(send, recv, count, nccl_type(type_of(t)), k.comm, k.stream(s)), "ncclAllGather");
  });
}
int reduce_scatter(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s) {
  return operation(c, [&](Comm& k) {
    k.done(ncclReduceScatter(send, recv, count, nccl_type(type_of(t)), nccl_op(op_of(op)), k.comm, k.stream(s)),
           "ncclReduceScatter");
  });
}
int broadcast(void* c, void* buffer, std::size_t count, int t, int root, void* s) {
  return operation(c, [&](Comm& k) {
    k.done(ncclBroadcast(buffer, buffer, count, nccl_type(type_of(t)), root, k.comm, k.stream(s)), "ncclBroadcast");
  });
}
int alltoall(void* c, const void* send, void* recv, std::size_t count, int t, void* s) {
  return operation(c, [&](Comm& k) {
    const std::size_t bytes = count * size_of(type_of(t));
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < k.size; ++peer) {
      check_nccl(ncclSend(static_cast<const char*>(send) + peer * bytes, count, nccl_type(type_of(t)), peer, k.comm,
                          k.stream(s)),
                 "ncclSend", k.comm);
      check_nccl(
          ncclRecv(static_cast<char*>(recv) + peer * bytes, count, nccl_type(type_of(t)), peer, k.comm, k.stream(s)),
          "ncclRecv", k.comm);
    }
    k.done(ncclGroupEnd(), "ncclGroupEnd");
  });
}
// NCCL has no barrier: a one-element all-reduce, then the stream is synchronised.
int barrier(void* c, void* s) {
  return operation(c, [&](Comm& k) {
    DEVMESH_CUDA(cudaSetDevice(k.device));
    if (!k.scratch) DEVMESH_CUDA(cudaMalloc(&k.scratch, sizeof(int)));
    k.done(ncclAllReduce(k.scratch, k.scratch, 1, ncclInt32, ncclSum, k.comm, k.stream(s)), "ncclAllReduce");
    DEVMESH_CUDA(cudaStreamSynchronize(k.stream(s)));
  });
}
int send(void* c, const void* buffer, std::size_t count, int t, int peer, void* s) {
  return operation(c, [&](Comm& k) {
    k.done(ncclSend(buffer, count, nccl_type(type_of(t)), peer, k.comm, k.stream(s)), "ncclSend");
  });
}
int recv(void* c, void* buffer, std::size_t count, int t, int peer, void* s) {
  return operation(c, [&](Comm& k) {
    k.done(ncclRecv(buffer, count, nccl_type(type_of(t)), peer, k.comm, k.stream(s)), "ncclRecv");
  });
}

// A request is an event recorded on the stream after the transfer: NCCL's
// point to point is stream-ordered, so the stream reaching the event means
// the transfer ran. (Not run on a GPU yet: docs/NCCL.md.) Requests end
// before their communicator is destroyed, so comm outlives them.
struct Request {
  int device;
  const Comm* comm;
  cudaEvent_t event = nullptr;
};

void end(Request* r) noexcept {
  cudaSetDevice(r->device);
  cudaEventDestroy(r->event);
  delete r;
}

// *request is written only on success: a revoke during the enqueue fails
// the start and frees the request it made.
template <bool Send>
int start(void* c, void* buffer, std::size_t count, int t, int peer, void* s, void** request) {
  Request* made = nullptr;
  const int rc = operation(c, [&](Comm& k) {
    DEVMESH_CUDA(cudaSetDevice(k.device));
    auto r = std::make_unique<Request>(Request{k.device, &k});
    DEVMESH_CUDA(cudaEventCreateWithFlags(&r->event, cudaEventDisableTiming));
    try {
      if constexpr (Send)
        k.done(ncclSend(buffer, count, nccl_type(type_of(t)), peer, k.comm, k.stream(s)), "ncclSend");
      else
        k.done(ncclRecv(buffer, count, nccl_type(type_of(t)), peer, k.comm, k.stream(s)), "ncclRecv");
      DEVMESH_CUDA(cudaEventRecord(r->event, k.stream(s)));
    } catch (...) {
      cudaEventDestroy(r->event);
      throw;
    }
    made = r.release();
  });
  if (rc == DEVMESH_SUCCESS)
    *request = made;
  else if (made)
    end(made);
  return rc;
}
int isend(void* c, const void* buffer, std::size_t count, int t, int peer, void* s, void** request) {
  return start<true>(c, const_cast<void*>(buffer), count, t, peer, s, request);
}
int irecv(void* c, void* buffer, std::size_t count, int t, int peer, void* s, void** request) {
  return start<false>(c, buffer, count, t, peer, s, request);
}
// A request of a revoked communicator still ends when the stream passes its
// event (the revoke stops the transfer, so that comes promptly): its buffer
// is not in use once test or wait reports the revoke's status.
int test(void* request, int* done) {
  auto* r = static_cast<Request*>(request);
  const int rc = plugin::guarded([&] {
    DEVMESH_CUDA(cudaSetDevice(r->device));
    const cudaError_t e = cudaEventQuery(r->event);
    if (e == cudaErrorNotReady) {
      *done = 0;
      return;
    }
    cut_by_revoke(*r->comm, [&] { DEVMESH_CUDA(e); });
    *done = 1;
  });
  if (rc != DEVMESH_SUCCESS || *done) end(r);
  return rc;
}
int wait(void* request) {
  auto* r = static_cast<Request*>(request);
  const int rc = plugin::guarded([&] {
    DEVMESH_CUDA(cudaSetDevice(r->device));
    cut_by_revoke(*r->comm, [&] { DEVMESH_CUDA(cudaEventSynchronize(r->event)); });
  });
  end(r);
  return rc;
}
// One group, so that a ring shift cannot deadlock; stream-ordered like send.
int sendrecv(void* c, const void* sendbuf, std::size_t sendcount, int sendtype, int dest, void* recvbuf,
             std::size_t recvcount, int recvtype, int source, void* s) {
  return operation(c, [&](Comm& k) {
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    check_nccl(ncclSend(sendbuf, sendcount, nccl_type(type_of(sendtype)), dest, k.comm, k.stream(s)), "ncclSend",
               k.comm);
    check_nccl(ncclRecv(recvbuf, recvcount, nccl_type(type_of(recvtype)), source, k.comm, k.stream(s)), "ncclRecv",
               k.comm);
    k.done(ncclGroupEnd(), "ncclGroupEnd");
  });
}

// One instance per root mesh and option set.
class Instance {
 public:
  explicit Instance(const Options& options, int visible) : options_(options), visible_(visible) {}
  ~Instance() {
    if (root_) close_comm(root_, options_.timeout);
  }

  // The local step: the device, chosen once per instance and made current.
  void prepare(const devmesh_backend_group_t& ctx) {
    if (device_ < 0) {
      device_ = detail::select_device(options_.device, caller_device(), ctx.host_local_rank, visible_);
      if (host->log_level >= DEVMESH_LOG_INFO)
        host->log("nccl", DEVMESH_LOG_INFO,
                  ("device " + std::to_string(device_) + " of " + std::to_string(visible_) + " (host-local rank " +
                   std::to_string(ctx.host_local_rank) + ")")
                      .c_str());
    }
    DEVMESH_CUDA(cudaSetDevice(device_));
  }

  // The collective step (after the core agreed on every member's prepare);
  // the core agrees on its outcome too, so a member whose creation failed
  // fails every member's call.
  Comm* connect(const devmesh_backend_group_t& ctx) {
    const Deadline d(options_.timeout);
    DEVMESH_CUDA(cudaSetDevice(device_));
    check_distinct_gpus(ctx.group, device_, d);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    std::string error;
    try {
      if (options_.init == Init::split && ctx.all_root_members) {
        if (!root_) root_ = init_from_id(ctx.root, d);
        config.splitShare = options_.split_share ? 1 : 0;
        check_nccl(ncclCommSplit(root_, ctx.color, ctx.key, &comm, &config), "ncclCommSplit", root_);
        finish_split(comm, d);
      } else {
        comm = init_from_id(ctx.group, d);
      }
    } catch (const Error& e) {
      error = e.what();
    }
    if (!error.empty()) {
      if (comm) ncclCommAbort(comm);
      fail(Status::backend, error);
    }
    return new Comm(comm, device_, options_.timeout);
  }

 private:
  // Finishes a non-blocking split. NCCL writes the new communicator into
  // `comm` only when the split is complete, and reports its progress on the
  // parent, which is polled. At the deadline the parent is aborted, which
  // ends the split too (it could otherwise write `comm` after this returns);
  // a later split makes a new parent.
  void finish_split(ncclComm_t& comm, const Deadline& d) {
    const ncclResult_t r = wait_nccl(root_, d);
    if (r == ncclSuccess && comm) return finish(comm, d, "ncclCommSplit");
    ncclCommAbort(root_);
    root_ = nullptr;
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    if (r == ncclInProgress)
      fail(Status::backend,
           "ncclCommSplit did not finish within " + std::to_string(d.seconds) + " s; the communicators were aborted");
    check_nccl(r == ncclSuccess ? ncclInternalError : r, "ncclCommSplit");
  }

  // Finishes a non-blocking creation; aborts it at the deadline.
  void finish(ncclComm_t& comm, const Deadline& d, const char* call) {
    const ncclResult_t r = wait_nccl(comm, d);
    if (r == ncclSuccess) return;
    ncclCommAbort(comm);
    comm = nullptr;
    if (r == ncclInProgress)
      fail(Status::backend, std::string(call) + " did not finish within " + std::to_string(d.seconds) +
                                " s; the communicator was aborted");
    check_nccl(r, call);
  }

  // Unique ids from the group's first ranks, broadcast over its MPI
  // communicator, then ncclCommInitRankConfig (or InitRankScalable).
  ncclComm_t init_from_id(MPI_Comm group, const Deadline& d) {
    int n = 0, r = 0;
    check_mpi(MPI_Comm_size(group, &n), "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(group, &r), "MPI_Comm_rank");
    const bool scalable = n >= options_.scalable_from;
    // One id per 1024 ranks for InitRankScalable, generated by ranks 0..nid-1.
    const int nid = scalable ? (n + 1023) / 1024 : 1;
    struct Slot {
      int ok;
      ncclUniqueId id;
    };
    Slot mine{1, {}};
    if (r < nid) mine.ok = ncclGetUniqueId(&mine.id) == ncclSuccess;
    std::vector<Slot> ids(static_cast<std::size_t>(nid));
    std::vector<int> counts(static_cast<std::size_t>(n), 0), displs(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < nid; ++i) {
      counts[static_cast<std::size_t>(i)] = sizeof(Slot);
      displs[static_cast<std::size_t>(i)] = i * static_cast<int>(sizeof(Slot));
    }
    MPI_Request req;
    check_mpi(MPI_Iallgatherv(&mine, r < nid ? sizeof(Slot) : 0, MPI_BYTE, ids.data(), counts.data(), displs.data(),
                              MPI_BYTE, group, &req),
              "MPI_Iallgatherv");
    wait_mpi(req, d, "broadcasting the NCCL unique id");
    std::vector<ncclUniqueId> raw;
    for (const Slot& s : ids) {
      if (!s.ok) fail(Status::backend, "ncclGetUniqueId failed on the group's first rank");
      raw.push_back(s.id);
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    if (scalable) {
      check_nccl(ncclCommInitRankScalable(&comm, n, r, nid, raw.data(), &config), "ncclCommInitRankScalable");
      finish(comm, d, "ncclCommInitRankScalable");
    } else {
      check_nccl(ncclCommInitRankConfig(&comm, n, raw[0], r, &config), "ncclCommInitRankConfig");
      finish(comm, d, "ncclCommInitRankConfig");
    }
    return comm;
  }

  Options options_;
  int visible_ = 0;
  int device_ = -1;
  ncclComm_t root_ = nullptr;
};

int visible_devices = 0;

int init_host(const devmesh_backend_host_t* h) {
  host = h;
  return plugin::guarded([] {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1)
      fail(Status::unsupported, std::string("needs a CUDA device: none is usable (") +
                                    (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices visible") + ")");
    visible_devices = n;
  });
}

int open(int n, const char* const keys[], const char* const values[], void** instance) {
  return plugin::guarded([&] {
    Options o;
    for (int i = 0; i < n; ++i) {
      const std::string k = keys[i];
      const char* v = values[i];
      if (k == "init") {
        if (std::strcmp(v, "unique_id") == 0)
          o.init = Init::unique_id;
        else if (std::strcmp(v, "split") == 0)
          o.init = Init::split;
        else
          fail(Status::invalid_argument, "option init=" + std::string(v) + ": expected unique_id or split");
      } else if (k == "split_share") {
        o.split_share = plugin::integer_option(k, v, 0, 1) != 0;
      } else if (k == "scalable_from") {
        o.scalable_from = static_cast<int>(plugin::integer_option(k, v, 1, 1L << 30));
      } else if (k == "timeout") {
        o.timeout = plugin::seconds_option(k, v);
      } else if (k == "device") {
        o.device = static_cast<int>(plugin::integer_option(k, v, -1, 1L << 20));
      } else {
        fail(Status::invalid_argument,
             "no option '" + k + "' (known: init, split_share, scalable_from, timeout, device)");
      }
    }
    detail::select_device(o.device, -1, 0, visible_devices);  // validates the request
    *instance = new Instance(o, visible_devices);
  });
}

void close(void* instance) { delete static_cast<Instance*>(instance); }

// What comm_prepare made: the instance (its device chosen) and the group.
struct Prepared {
  Instance* instance;
  devmesh_backend_group_t group;
};

int comm_prepare(void* instance, const devmesh_backend_group_t* group, void** prepared) {
  return plugin::guarded([&] {
    auto* inst = static_cast<Instance*>(instance);
    inst->prepare(*group);
    devmesh_backend_group_t g{};
    std::memcpy(&g, group, std::min(sizeof g, group->size));
    *prepared = new Prepared{inst, g};
  });
}

void comm_abandon(void* prepared) { delete static_cast<Prepared*>(prepared); }

int comm_connect(void* prepared, void** comm) {
  const std::unique_ptr<Prepared> p(static_cast<Prepared*>(prepared));
  return plugin::guarded([&] { *comm = p->instance->connect(p->group); });
}

int revoke(void* comm, int status) {
  return plugin::guarded([&] { comm_of(comm).revoke(status); });
}

void comm_destroy(void* comm) { delete static_cast<Comm*>(comm); }

int comm_native(void* comm, void** handle) {
  *handle = &comm_of(comm).comm;
  return DEVMESH_SUCCESS;
}

// The device is each rank's own choice; everything else must agree.
constexpr const char* per_rank_keys[] = {"device", nullptr};

}  // namespace

}  // namespace devmesh::backends

// Version 3 only: the plugin uses the core's host services, which older
// cores do not give.
DEVMESH_BACKEND_EXPORT_V3 = {
    {
        {
            DEVMESH_BACKEND_ABI_VERSION_3,
            "nccl",
            devmesh::backends::per_rank_keys,
            nullptr,  // init: init_host
            nullptr,
            devmesh::plugin::last_error,
            devmesh::backends::open,
            devmesh::backends::close,
            nullptr,  // comm_create: comm_prepare and comm_connect
            devmesh::backends::comm_destroy,
            devmesh::backends::comm_native,
            devmesh::backends::allreduce,
            devmesh::backends::allgather,
            devmesh::backends::reduce_scatter,
            devmesh::backends::broadcast,
            devmesh::backends::alltoall,
            devmesh::backends::barrier,
            devmesh::backends::send,
            devmesh::backends::recv,
            devmesh::plugin::last_mpi_error,
        },
        devmesh::backends::isend,
        devmesh::backends::irecv,
        devmesh::backends::test,
        devmesh::backends::wait,
        devmesh::backends::sendrecv,
    },
    DEVMESH_BACKEND_MPI,
    // A device per rank by its host-local rank; CUDA streams; creation and
    // enqueue waits bounded by the timeout option. revoke() is local, not
    // REVOKE_SPREADS: NCCL tells no other member (they learn of a failure
    // through the core: a fault-tolerant mesh's MPI root communicator). It
    // may run beside an operation on another thread only through
    // ncclCommRevoke (NCCL >= 2.28): ncclCommAbort frees the communicator
    // under that operation.
    DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK | DEVMESH_BACKEND_CAP_STREAMS | DEVMESH_BACKEND_CAP_NONBLOCKING |
        DEVMESH_BACKEND_CAP_DEADLINE | (DEVMESH_NCCL_HAS_REVOKE ? DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD : 0),
    devmesh::backends::init_host,
    nullptr,  // reduce_supported: every type and reduction
    devmesh::backends::comm_prepare,
    devmesh::backends::comm_connect,
    devmesh::backends::comm_abandon,
    devmesh::backends::revoke,
};
