// The NCCL backend's collectives and point to point: each an operation on
// one communicator (nccl_comm.hpp), stream-ordered on the caller's stream or
// the communicator's own; version 1's collectives are their started forms
// without a request.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "nccl_comm.hpp"

namespace devmesh::backends {

// Data types and reductions arrive checked (the core's argument gate,
// backend_plugin.h).
ncclDataType_t nccl_type(int datatype) {
  switch (static_cast<DataType>(datatype)) {
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

ncclRedOp_t nccl_op(int op) {
  switch (static_cast<ReduceOp>(op)) {
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

Request* new_request(const Comm& k) {
  auto r = std::make_unique<Request>(Request{k.device, &k});
  DEVMESH_CUDA(cudaEventCreateWithFlags(&r->event, cudaEventDisableTiming));
  return r.release();
}

void end_request(Request* r) noexcept {
  cudaSetDevice(r->device);
  cudaEventDestroy(r->event);
  delete r;
}

namespace {

DataType type_of(int t) { return static_cast<DataType>(t); }

// Whether the stream has passed the request's event: polled until it has
// (true), or once when !block (false if not yet). A block gives up at the
// communicator's deadline (TIMEOUT) and as soon as the communicator is
// revoked (the revoke's status): the stream may then still be running the
// operation, whose buffers are the stream's until it passes the event.
bool passed(const Request& r, bool block) {
  const Deadline d(r.comm->timeout);
  for (;;) {
    const cudaError_t e = cudaEventQuery(r.event);
    if (e != cudaErrorNotReady) {
      cut_by_revoke(*r.comm, [&] { DEVMESH_CUDA(e); });  // a revoke may have cut the operation short
      return true;
    }
    r.comm->check_revoked(true);
    if (!block) return false;
    if (d.passed())
      fail(Status::timeout, "the stream did not run the operation within " + std::to_string(d.seconds) +
                                " s (the timeout option); it may still run it");
    std::this_thread::yield();
  }
}

}  // namespace

int iallreduce(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    k.done(ncclAllReduce(send, recv, count, nccl_type(t), nccl_op(op), k.comm, st), "ncclAllReduce");
  });
}
int iallgather(void* c, const void* send, void* recv, std::size_t count, int t, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    k.done(ncclAllGather(send, recv, count, nccl_type(t), k.comm, st), "ncclAllGather");
  });
}
int ireduce_scatter(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    k.done(ncclReduceScatter(send, recv, count, nccl_type(t), nccl_op(op), k.comm, st), "ncclReduceScatter");
  });
}
int ibroadcast(void* c, void* buffer, std::size_t count, int t, int root, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    k.done(ncclBroadcast(buffer, buffer, count, nccl_type(t), root, k.comm, st), "ncclBroadcast");
  });
}
// In place (send == recv) from a copy: a send and a receive of one block
// with one peer run at once, so the receive could overwrite what the send
// has yet to read.
int ialltoall(void* c, const void* send, void* recv, std::size_t count, int t, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    const std::size_t bytes = count * size_of(type_of(t));
    if (send == recv) DEVMESH_CUDA(cudaSetDevice(k.device));
    const StreamScratch copy(send == recv ? send : nullptr, send == recv ? bytes * k.size : 0, st);
    const char* from = send == recv ? copy.get() : static_cast<const char*>(send);
#if DEVMESH_NCCL_HAS_ALLTOALL_GATHER_SCATTER
    k.done(ncclAlltoAll(from, recv, count, nccl_type(t), k.comm, st), "ncclAlltoAll");
#else
    Group g;
    for (int peer = 0; peer < k.size && !g.failed(); ++peer) {
      g.add(ncclSend(from + peer * bytes, count, nccl_type(t), peer, k.comm, st), "ncclSend");
      if (!g.failed())
        g.add(ncclRecv(static_cast<char*>(recv) + peer * bytes, count, nccl_type(t), peer, k.comm, st), "ncclRecv");
    }
    g.end(k);
#endif
  });
}
// NCCL has no barrier: a one-element all-reduce (the blocking form then
// synchronises the stream; the started one's request completes with it).
int ibarrier(void* c, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    DEVMESH_CUDA(cudaSetDevice(k.device));
    if (!k.scratch) DEVMESH_CUDA(cudaMalloc(&k.scratch, sizeof(int)));
    k.done(ncclAllReduce(k.scratch, k.scratch, 1, ncclInt32, ncclSum, k.comm, st), "ncclAllReduce");
    if (!request) DEVMESH_CUDA(cudaStreamSynchronize(st));
  });
}

int allreduce(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s) {
  return iallreduce(c, send, recv, count, t, op, s, nullptr);
}
int allgather(void* c, const void* send, void* recv, std::size_t count, int t, void* s) {
  return iallgather(c, send, recv, count, t, s, nullptr);
}
int reduce_scatter(void* c, const void* send, void* recv, std::size_t count, int t, int op, void* s) {
  return ireduce_scatter(c, send, recv, count, t, op, s, nullptr);
}
int broadcast(void* c, void* buffer, std::size_t count, int t, int root, void* s) {
  return ibroadcast(c, buffer, count, t, root, s, nullptr);
}
int alltoall(void* c, const void* send, void* recv, std::size_t count, int t, void* s) {
  return ialltoall(c, send, recv, count, t, s, nullptr);
}
int barrier(void* c, void* s) { return ibarrier(c, s, nullptr); }

int send(void* c, const void* buffer, std::size_t count, int t, int peer, void* s) {
  return operation(
      c, [&](Comm& k) { k.done(ncclSend(buffer, count, nccl_type(t), peer, k.comm, k.stream(s)), "ncclSend"); });
}
int recv(void* c, void* buffer, std::size_t count, int t, int peer, void* s) {
  return operation(
      c, [&](Comm& k) { k.done(ncclRecv(buffer, count, nccl_type(t), peer, k.comm, k.stream(s)), "ncclRecv"); });
}
int isend(void* c, const void* buffer, std::size_t count, int t, int peer, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    k.done(ncclSend(buffer, count, nccl_type(t), peer, k.comm, st), "ncclSend");
  });
}
int irecv(void* c, void* buffer, std::size_t count, int t, int peer, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    k.done(ncclRecv(buffer, count, nccl_type(t), peer, k.comm, st), "ncclRecv");
  });
}
// The sends and receives in one group (zero counts skipped on both sides),
// then one event for all.
int batch(void* c, const devmesh_backend_p2p_t ops[], std::size_t n, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    Group g;
    for (std::size_t i = 0; i < n && !g.failed(); ++i) {
      const devmesh_backend_p2p_t& o = ops[i];
      if (o.count == 0) continue;
      if (o.send)
        g.add(ncclSend(o.buffer, o.count, nccl_type(o.datatype), o.peer, k.comm, st), "ncclSend");
      else
        g.add(ncclRecv(o.buffer, o.count, nccl_type(o.datatype), o.peer, k.comm, st), "ncclRecv");
    }
    g.end(k);
  });
}

// test and wait end the request whatever they report, but test's "not yet".
int test(void* request, int* done) {
  auto* r = static_cast<Request*>(request);
  const int rc = plugin::guarded([&] {
    DEVMESH_CUDA(cudaSetDevice(r->device));
    *done = passed(*r, false) ? 1 : 0;
  });
  if (rc != DEVMESH_SUCCESS || *done) end_request(r);
  return rc;
}
int wait(void* request) {
  auto* r = static_cast<Request*>(request);
  const int rc = plugin::guarded([&] {
    DEVMESH_CUDA(cudaSetDevice(r->device));
    passed(*r, true);
  });
  end_request(r);
  return rc;
}
// One group, so that a ring shift cannot deadlock; stream-ordered like send.
int sendrecv(void* c, const void* sendbuf, std::size_t sendcount, int sendtype, int dest, void* recvbuf,
             std::size_t recvcount, int recvtype, int source, void* s) {
  return operation(c, [&](Comm& k) {
    Group g;
    g.add(ncclSend(sendbuf, sendcount, nccl_type(sendtype), dest, k.comm, k.stream(s)), "ncclSend");
    if (!g.failed()) g.add(ncclRecv(recvbuf, recvcount, nccl_type(recvtype), source, k.comm, k.stream(s)), "ncclRecv");
    g.end(k);
  });
}

}  // namespace devmesh::backends
