// The NCCL backend's collectives and point to point: each an operation on
// one communicator (nccl_comm.hpp), stream-ordered on the caller's stream or
// the communicator's own.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <memory>

#include "nccl_comm.hpp"

namespace devmesh::backends {
namespace {

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

// Data types, reductions, buffers, roots and peers arrive checked (the
// core's argument gate, backend_plugin.h).
DataType type_of(int t) { return static_cast<DataType>(t); }
ReduceOp op_of(int op) { return static_cast<ReduceOp>(op); }

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

}  // namespace

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
    const ncclDataType_t type = nccl_type(type_of(t));
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    // The group is ended before a failed call inside it is reported: an
    // open group would swallow this thread's next NCCL calls.
    ncclResult_t failed = ncclSuccess;
    const char* failed_call = "";
    for (int peer = 0; peer < k.size && failed == ncclSuccess; ++peer) {
      const ncclResult_t sent =
          ncclSend(static_cast<const char*>(send) + peer * bytes, count, type, peer, k.comm, k.stream(s));
      const ncclResult_t received =
          sent == ncclSuccess || sent == ncclInProgress
              ? ncclRecv(static_cast<char*>(recv) + peer * bytes, count, type, peer, k.comm, k.stream(s))
              : ncclSuccess;
      if (sent != ncclSuccess && sent != ncclInProgress) failed = sent, failed_call = "ncclSend";
      if (received != ncclSuccess && received != ncclInProgress) failed = received, failed_call = "ncclRecv";
    }
    const ncclResult_t ended = ncclGroupEnd();
    check_nccl(failed, failed_call, k.comm);
    k.done(ended, "ncclGroupEnd");
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

}  // namespace devmesh::backends
