// The C API's collectives and point-to-point calls over a dim
// (include/devmesh/devmesh.h), through the dim's backend communicator.
#include <cstdint>
#include <memory>
#include <utility>

#include "capi/capi.hpp"

using namespace devmesh::capi;

// ---- collectives over a dim ------------------------------------------------
namespace {

static_assert(DEVMESH_INT8 == static_cast<int>(devmesh::DataType::int8));
static_assert(DEVMESH_BFLOAT16 == static_cast<int>(devmesh::DataType::bfloat16));
static_assert(DEVMESH_FLOAT64 == static_cast<int>(devmesh::DataType::float64));
static_assert(DEVMESH_SUM == static_cast<int>(devmesh::ReduceOp::sum));
static_assert(DEVMESH_MAX == static_cast<int>(devmesh::ReduceOp::max));

devmesh::DataType datatype_arg(int t) {
  if (t < DEVMESH_INT8 || t > DEVMESH_FLOAT64) invalid("unknown datatype " + std::to_string(t));
  return static_cast<devmesh::DataType>(t);
}

devmesh::ReduceOp op_arg(int op) {
  if (op < DEVMESH_SUM || op > DEVMESH_MAX) invalid("unknown reduction op " + std::to_string(op));
  return static_cast<devmesh::ReduceOp>(op);
}

// A buffer of count elements, times blocks (the group's size for the
// "all" side of allgather, reduce_scatter and alltoall): NULL only when
// empty, and a byte size that fits in size_t.
void buffer_arg(const void* p, std::size_t count, devmesh::DataType t, std::size_t blocks,
                const char* what) {
  const std::size_t es = devmesh::size_of(t);
  if (count > 0 && p == nullptr) invalid(std::string(what) + " is NULL with count > 0");
  if (blocks > 0 && count > SIZE_MAX / es / blocks)
    invalid("count " + std::to_string(count) + " x " + std::to_string(blocks) +
            " elements overflow the byte size of " + what);
}

// A local rank of dim's group (root or peer).
void rank_arg(const Mesh& mesh, std::string_view dim, int r, const char* what) {
  const int n = mesh.size(dim);
  if (r < 0 || r >= n)
    invalid(std::string(what) + " " + std::to_string(r) + " is outside the group of " +
            std::to_string(n) + " ranks");
}

// A point to point peer: a local rank, or MPI_PROC_NULL.
void peer_arg(const Mesh& mesh, std::string_view dim, int peer, const char* what) {
  if (peer != MPI_PROC_NULL) rank_arg(mesh, dim, peer, what);
}

std::size_t group_size(const Mesh& mesh, std::string_view dim) {
  return static_cast<std::size_t>(mesh.size(dim));
}

}  // namespace

extern "C" {

int devmesh_allreduce(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                      int datatype, int op, void* stream) {
  return guard("devmesh_allreduce", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const auto o = op_arg(op);
    mesh.size(d);  // an unknown dim before anything else about buffers
    buffer_arg(sendbuf, count, t, 1, "sendbuf");
    buffer_arg(recvbuf, count, t, 1, "recvbuf");
    mesh.communicator(d).allreduce(sendbuf, recvbuf, count, t, o, stream);
  });
}

int devmesh_allgather(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                      int datatype, void* stream) {
  return guard("devmesh_allgather", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const std::size_t n = group_size(mesh, d);
    buffer_arg(sendbuf, count, t, 1, "sendbuf");
    buffer_arg(recvbuf, count, t, n, "recvbuf");
    mesh.communicator(d).allgather(sendbuf, recvbuf, count, t, stream);
  });
}

int devmesh_reduce_scatter(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                           int datatype, int op, void* stream) {
  return guard("devmesh_reduce_scatter", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const auto o = op_arg(op);
    const std::size_t n = group_size(mesh, d);
    buffer_arg(sendbuf, count, t, n, "sendbuf");
    buffer_arg(recvbuf, count, t, 1, "recvbuf");
    mesh.communicator(d).reduce_scatter(sendbuf, recvbuf, count, t, o, stream);
  });
}

int devmesh_broadcast(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int root,
                      void* stream) {
  return guard("devmesh_broadcast", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    rank_arg(mesh, d, root, "root");
    buffer_arg(buffer, count, t, 1, "buffer");
    mesh.communicator(d).broadcast(buffer, count, t, root, stream);
  });
}

int devmesh_alltoall(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                     int datatype, void* stream) {
  return guard("devmesh_alltoall", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const std::size_t n = group_size(mesh, d);
    buffer_arg(sendbuf, count, t, n, "sendbuf");
    buffer_arg(recvbuf, count, t, n, "recvbuf");
    mesh.communicator(d).alltoall(sendbuf, recvbuf, count, t, stream);
  });
}

int devmesh_barrier(devmesh_t m, const char* dim, void* stream) {
  return guard("devmesh_barrier", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    mesh.size(d);
    mesh.communicator(d).barrier(stream);
  });
}

int devmesh_send(devmesh_t m, const char* dim, const void* buffer, size_t count, int datatype, int peer,
                 void* stream) {
  return guard("devmesh_send", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    peer_arg(mesh, d, peer, "peer");
    buffer_arg(buffer, count, t, 1, "buffer");
    mesh.communicator(d).send(buffer, count, t, peer, stream);
  });
}

int devmesh_recv(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int peer,
                 void* stream) {
  return guard("devmesh_recv", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    peer_arg(mesh, d, peer, "peer");
    buffer_arg(buffer, count, t, 1, "buffer");
    mesh.communicator(d).recv(buffer, count, t, peer, stream);
  });
}

}  // extern "C"

// A pending request at the C boundary.
struct devmesh_request_s {
  devmesh::Request request;
};

namespace {

template <bool Send, class Buffer>
int start(const char* fn, devmesh_t m, const char* dim, Buffer buffer, size_t count, int datatype, int peer,
          void* stream, devmesh_request_t* request) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    need(request, "request");
    peer_arg(mesh, d, peer, "peer");
    buffer_arg(buffer, count, t, 1, "buffer");
    auto r = std::make_unique<devmesh_request_s>();
    devmesh::Communicator& c = mesh.communicator(d);
    r->request = Send ? c.isend(buffer, count, t, peer, stream)
                      : c.irecv(const_cast<void*>(static_cast<const void*>(buffer)), count, t, peer, stream);
    *request = r->request.pending() ? r.release() : DEVMESH_REQUEST_NULL;
  });
}

// Ends *request (freeing it) whatever happens.
void end(devmesh_request_t* request) {
  const std::unique_ptr<devmesh_request_s> r(std::exchange(*request, DEVMESH_REQUEST_NULL));
  if (r) r->request.wait();
}

}  // namespace

extern "C" {

int devmesh_isend(devmesh_t m, const char* dim, const void* buffer, size_t count, int datatype, int peer,
                  void* stream, devmesh_request_t* request) {
  return start<true>("devmesh_isend", m, dim, buffer, count, datatype, peer, stream, request);
}

int devmesh_irecv(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int peer,
                  void* stream, devmesh_request_t* request) {
  return start<false>("devmesh_irecv", m, dim, buffer, count, datatype, peer, stream, request);
}

int devmesh_wait(devmesh_request_t* request) {
  return guard("devmesh_wait", [&] { end(need(request, "request")); });
}

int devmesh_test(devmesh_request_t* request, int* done) {
  return guard("devmesh_test", [&] {
    need(request, "request");
    need(done, "done");
    if (!*request) {
      *done = 1;
      return;
    }
    bool finished = false;
    try {
      finished = (*request)->request.test();
    } catch (...) {
      end(request);  // already ended by the failure; frees the handle
      throw;
    }
    if (finished) end(request);
    *done = finished ? 1 : 0;
  });
}

int devmesh_waitall(int n, devmesh_request_t requests[]) {
  int first = DEVMESH_SUCCESS;
  const int checked = guard("devmesh_waitall", [&] {
    if (n < 0) invalid("n " + std::to_string(n) + " is negative");
    if (n > 0) need(requests, "requests");
  });
  if (checked != DEVMESH_SUCCESS) return checked;
  std::string message;
  for (int i = 0; i < n; ++i) {
    const int rc = guard("devmesh_waitall", [&] { end(&requests[i]); });
    if (rc != DEVMESH_SUCCESS && first == DEVMESH_SUCCESS) {
      first = rc;
      message = last_error_text;
    }
  }
  if (first != DEVMESH_SUCCESS) last_error_text = message;
  return first;
}

int devmesh_sendrecv(devmesh_t m, const char* dim, const void* sendbuf, size_t sendcount, int sendtype, int dest,
                     void* recvbuf, size_t recvcount, int recvtype, int source, void* stream) {
  return guard("devmesh_sendrecv", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto st = datatype_arg(sendtype);
    const auto rt = datatype_arg(recvtype);
    peer_arg(mesh, d, dest, "dest");
    peer_arg(mesh, d, source, "source");
    buffer_arg(sendbuf, sendcount, st, 1, "sendbuf");
    buffer_arg(recvbuf, recvcount, rt, 1, "recvbuf");
    mesh.communicator(d).sendrecv(sendbuf, sendcount, st, dest, recvbuf, recvcount, rt, source, stream);
  });
}

}  // extern "C"
