// The NCCL backend's checks of MPI, CUDA and NCCL results and its waits
// bounded by a deadline (nccl_comm.hpp declares them).
#include <mpi.h>

#include <string>
#include <thread>

#include "nccl_comm.hpp"

namespace devmesh::backends {

const devmesh_backend_host_t* host = nullptr;

void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[1024] = "";
  int cls = 0;
  host->mpi_error(code, text, sizeof text, &cls);
  throw Error(Status::backend, std::string(call) + " failed: " + text, code, cls);
}

[[noreturn]] void fail(Status s, const std::string& msg) { throw Error(s, msg); }

void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) fail(Status::backend, std::string(call) + " failed: " + cudaGetErrorString(e));
}

void check_nccl(ncclResult_t r, const char* call, ncclComm_t comm) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  std::string detail = ncclGetLastError(comm) ? ncclGetLastError(comm) : "";
  fail(Status::backend,
       std::string(call) + " failed: " + ncclGetErrorString(r) + (detail.empty() ? "" : " (" + detail + ")"));
}

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

ncclResult_t wait_nccl(ncclComm_t comm, const Deadline& d, const std::atomic<int>* revoked) {
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

// in time.
void close_comm(ncclComm_t comm, double timeout) noexcept {
  const ncclResult_t r = ncclCommFinalize(comm);
  if ((r != ncclSuccess && r != ncclInProgress) || wait_nccl(comm, Deadline(timeout)) != ncclSuccess) {
    ncclCommAbort(comm);
    return;
  }
  ncclCommDestroy(comm);
}

}  // namespace devmesh::backends
