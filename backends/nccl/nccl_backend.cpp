// NCCL communicators for mesh dims, bootstrapped over the dims' MPI groups.
//
// Every wait of creation and finalisation in here is bounded by
// BackendOptions::init_timeout_seconds: communicators are created
// non-blocking (ncclConfig_t.blocking = 0) and polled with
// ncclCommGetAsyncError; the MPI exchanges around them are non-blocking
// requests polled against the same deadline. A creation that fails or
// times out on any member aborts the NCCL communicator on every member and
// throws Error(backend). Collectives poll an ncclInProgress enqueue against
// it too; the GPU work itself, and barrier's stream synchronisation, are
// not bounded (docs/ERRORS.md, "Waits: which are bounded").
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "nccl_backend.hpp"
#include "runtime/mpi_check.hpp"

namespace devmesh::backends {
namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(Status s, const std::string& msg) { throw Error(s, msg); }

void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    fail(Status::backend, std::string(call) + " failed: " + cudaGetErrorString(e));
}

void check_nccl(ncclResult_t r, const char* call, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  std::string detail = ncclGetLastError(comm) ? ncclGetLastError(comm) : "";
  fail(Status::backend, std::string(call) + " failed: " + ncclGetErrorString(r) +
                            (detail.empty() ? "" : " (" + detail + ")"));
}

#define DEVMESH_CUDA(call) check_cuda((call), #call)

ncclDataType_t nccl_type(DataType t) {
  switch (t) {
    case DataType::int8: return ncclInt8;
    case DataType::uint8: return ncclUint8;
    case DataType::int32: return ncclInt32;
    case DataType::uint32: return ncclUint32;
    case DataType::int64: return ncclInt64;
    case DataType::uint64: return ncclUint64;
    case DataType::float16: return ncclFloat16;
    case DataType::bfloat16: return ncclBfloat16;
    case DataType::float32: return ncclFloat32;
    case DataType::float64: return ncclFloat64;
  }
  fail(Status::invalid_argument, "unknown data type");
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::prod: return ncclProd;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::max: return ncclMax;
  }
  fail(Status::invalid_argument, "unknown reduction");
}

struct Deadline {
  Clock::time_point end;
  double seconds;
  explicit Deadline(double s)
      : end(Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s))),
        seconds(s) {}
  bool passed() const { return Clock::now() >= end; }
};

// Waits for an MPI request, giving up (and cancelling nothing: the request
// is abandoned with its communicator) at the deadline.
void wait_mpi(MPI_Request& req, const Deadline& d, const char* what) {
  for (int done = 0;;) {
    detail::check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    if (d.passed())
      fail(Status::backend, std::string(what) + " did not complete within " + std::to_string(d.seconds) +
                                " s (a member of the group is missing or stuck)");
    std::this_thread::yield();
  }
}

// Polls a non-blocking NCCL communicator until its pending operation ends.
ncclResult_t wait_nccl(ncclComm_t comm, const Deadline& d) {
  for (;;) {
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
  detail::check_mpi(MPI_Get_processor_name(mine.host, &len), "MPI_Get_processor_name");
  DEVMESH_CUDA(cudaDeviceGetPCIBusId(mine.bus, sizeof mine.bus, device));
  int n = 0;
  detail::check_mpi(MPI_Comm_size(group, &n), "MPI_Comm_size");
  std::vector<Id> all(static_cast<std::size_t>(n));
  MPI_Request req;
  detail::check_mpi(MPI_Iallgather(&mine, sizeof(Id), MPI_BYTE, all.data(), sizeof(Id), MPI_BYTE, group, &req),
                    "MPI_Iallgather");
  wait_mpi(req, d, "exchanging GPU ids");
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (std::strcmp(all[i].host, all[j].host) == 0 && std::strcmp(all[i].bus, all[j].bus) == 0)
        fail(Status::invalid_argument,
             "ranks " + std::to_string(j) + " and " + std::to_string(i) + " of one NCCL group both use GPU " +
                 all[i].bus + " on host " + all[i].host +
                 " (one NCCL communicator needs one GPU per rank)");
}

// Every member learns whether all members succeeded (bounded wait).
bool all_ok(MPI_Comm group, bool ok, const Deadline& d) {
  int mine = ok ? 0 : 1, any = 0;
  MPI_Request req;
  detail::check_mpi(MPI_Iallreduce(&mine, &any, 1, MPI_INT, MPI_MAX, group, &req), "MPI_Iallreduce");
  wait_mpi(req, d, "agreeing on NCCL communicator creation");
  return any == 0;
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

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, int device, double timeout) : comm_(comm), device_(device), timeout_(timeout) {
    check_nccl(ncclCommCount(comm_, &size_), "ncclCommCount", comm_);
    check_nccl(ncclCommUserRank(comm_, &rank_), "ncclCommUserRank", comm_);
    DEVMESH_CUDA(cudaSetDevice(device_));
    DEVMESH_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~NcclCommunicator() override {
    cudaSetDevice(device_);
    if (scratch_) cudaFree(scratch_);
    if (stream_) cudaStreamDestroy(stream_);
    close_comm(comm_, timeout_);
  }
  std::string_view backend() const noexcept override { return "nccl"; }
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  void* native_handle() noexcept override { return &comm_; }

  void allreduce(const void* send, void* recv, std::size_t count, DataType t, ReduceOp op, void* s) override {
    done(ncclAllReduce(send, recv, count, nccl_type(t), nccl_op(op), comm_, stream(s)), "ncclAllReduce");
  }
  void allgather(const void* send, void* recv, std::size_t count, DataType t, void* s) override {
    done(ncclAllGather(send, recv, count, nccl_type(t), comm_, stream(s)), "ncclAllGather");
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType t, ReduceOp op,
                      void* s) override {
    done(ncclReduceScatter(send, recv, count, nccl_type(t), nccl_op(op), comm_, stream(s)), "ncclReduceScatter");
  }
  void broadcast(void* buffer, std::size_t count, DataType t, int root, void* s) override {
    done(ncclBroadcast(buffer, buffer, count, nccl_type(t), root, comm_, stream(s)), "ncclBroadcast");
  }
  void alltoall(const void* send, void* recv, std::size_t count, DataType t, void* s) override {
    const std::size_t bytes = count * size_of(t);
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < size_; ++peer) {
      check_nccl(ncclSend(static_cast<const char*>(send) + peer * bytes, count, nccl_type(t), peer, comm_, stream(s)),
                 "ncclSend", comm_);
      check_nccl(ncclRecv(static_cast<char*>(recv) + peer * bytes, count, nccl_type(t), peer, comm_, stream(s)),
                 "ncclRecv", comm_);
    }
    done(ncclGroupEnd(), "ncclGroupEnd");
  }
  // NCCL has no barrier: a one-element all-reduce, then the stream is synchronised.
  void barrier(void* s) override {
    DEVMESH_CUDA(cudaSetDevice(device_));
    if (!scratch_) DEVMESH_CUDA(cudaMalloc(&scratch_, sizeof(int)));
    allreduce(scratch_, scratch_, 1, DataType::int32, ReduceOp::sum, s);
    DEVMESH_CUDA(cudaStreamSynchronize(stream(s)));
  }
  void send(const void* buffer, std::size_t count, DataType t, int peer, void* s) override {
    done(ncclSend(buffer, count, nccl_type(t), peer, comm_, stream(s)), "ncclSend");
  }
  void recv(void* buffer, std::size_t count, DataType t, int peer, void* s) override {
    done(ncclRecv(buffer, count, nccl_type(t), peer, comm_, stream(s)), "ncclRecv");
  }

 private:
  cudaStream_t stream(void* s) const { return s ? static_cast<cudaStream_t>(s) : stream_; }
  // A non-blocking communicator may return ncclInProgress while it enqueues.
  void done(ncclResult_t r, const char* call) {
    check_nccl(r, call, comm_);
    if (r == ncclInProgress) {
      const ncclResult_t end = wait_nccl(comm_, Deadline(timeout_));
      if (end != ncclSuccess) check_nccl(end == ncclInProgress ? ncclInternalError : end, call, comm_);
    }
    ncclResult_t async = ncclSuccess;
    check_nccl(ncclCommGetAsyncError(comm_, &async), "ncclCommGetAsyncError", comm_);
    check_nccl(async, call, comm_);
  }

  ncclComm_t comm_;
  int device_;
  double timeout_;
  int rank_ = 0;
  int size_ = 0;
  cudaStream_t stream_ = nullptr;
  void* scratch_ = nullptr;
};

class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(const BackendOptions& options) : options_(options) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess)
      fail(Status::unsupported, std::string("backend 'nccl' needs a CUDA device: no CUDA device is usable (") +
                                    cudaGetErrorString(e) + ")");
    visible_ = n;
    detail::select_device(options_.device, -1, 0, visible_);  // validates the request
  }
  ~NcclBackend() override {
    if (root_) close_comm(root_, options_.init_timeout_seconds);
  }
  std::string_view name() const noexcept override { return "nccl"; }

  std::unique_ptr<Communicator> create(const GroupContext& ctx) override {
    const Deadline d(options_.init_timeout_seconds);
    if (device_ < 0) device_ = detail::select_device(options_.device, caller_device(), ctx.host_local_rank, visible_);
    DEVMESH_CUDA(cudaSetDevice(device_));
    check_distinct_gpus(ctx.group, device_, d);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    std::string error;
    try {
      if (options_.nccl_init == NcclInit::split && ctx.all_root_members) {
        if (!root_) root_ = init_from_id(ctx.root, d);
        config.splitShare = options_.nccl_split_share ? 1 : 0;
        check_nccl(ncclCommSplit(root_, ctx.color, ctx.key, &comm, &config), "ncclCommSplit", root_);
        finish(comm, d, "ncclCommSplit");
      } else {
        comm = init_from_id(ctx.group, d);
      }
    } catch (const Error& e) {
      error = e.what();
    }
    if (!all_ok(ctx.group, error.empty(), d)) {
      if (comm) ncclCommAbort(comm);
      fail(Status::backend, error.empty() ? "NCCL communicator creation failed on another member of the group"
                                          : error);
    }
    return std::make_unique<NcclCommunicator>(comm, device_, options_.init_timeout_seconds);
  }

 private:
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
    detail::check_mpi(MPI_Comm_size(group, &n), "MPI_Comm_size");
    detail::check_mpi(MPI_Comm_rank(group, &r), "MPI_Comm_rank");
    const bool scalable = n >= options_.nccl_scalable_from;
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
    detail::check_mpi(MPI_Iallgatherv(&mine, r < nid ? sizeof(Slot) : 0, MPI_BYTE, ids.data(), counts.data(),
                                      displs.data(), MPI_BYTE, group, &req),
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

  BackendOptions options_;
  int visible_ = 0;
  int device_ = -1;
  ncclComm_t root_ = nullptr;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const BackendOptions& options) {
  return std::make_unique<NcclBackend>(options);
}

}  // namespace devmesh::backends
