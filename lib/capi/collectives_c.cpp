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

// Data types, reductions, buffers, roots and peers are checked in one
// place for every caller, C, C++ and Fortran: the backend communicator's
// argument gate (lib/runtime/plugin_communicator.cpp). Here only what C adds.
devmesh::DataType datatype_arg(int t) { return static_cast<devmesh::DataType>(t); }
devmesh::ReduceOp op_arg(int op) { return static_cast<devmesh::ReduceOp>(op); }

}  // namespace

extern "C" {

int devmesh_allreduce(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                      int op, void* stream) {
  return guard("devmesh_allreduce", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const auto o = op_arg(op);
    mesh.communicator(d).allreduce(sendbuf, recvbuf, count, t, o, stream);
  });
}

int devmesh_allgather(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                      void* stream) {
  return guard("devmesh_allgather", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    mesh.communicator(d).allgather(sendbuf, recvbuf, count, t, stream);
  });
}

int devmesh_reduce_scatter(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                           int op, void* stream) {
  return guard("devmesh_reduce_scatter", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    const auto o = op_arg(op);
    mesh.communicator(d).reduce_scatter(sendbuf, recvbuf, count, t, o, stream);
  });
}

int devmesh_broadcast(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int root, void* stream) {
  return guard("devmesh_broadcast", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    mesh.communicator(d).broadcast(buffer, count, t, root, stream);
  });
}

int devmesh_alltoall(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                     void* stream) {
  return guard("devmesh_alltoall", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    mesh.communicator(d).alltoall(sendbuf, recvbuf, count, t, stream);
  });
}

int devmesh_barrier(devmesh_t m, const char* dim, void* stream) {
  return guard("devmesh_barrier", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    mesh.communicator(d).barrier(stream);
  });
}

int devmesh_send(devmesh_t m, const char* dim, const void* buffer, size_t count, int datatype, int peer, void* stream) {
  return guard("devmesh_send", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    mesh.communicator(d).send(buffer, count, t, peer, stream);
  });
}

int devmesh_recv(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int peer, void* stream) {
  return guard("devmesh_recv", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
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

int devmesh_isend(devmesh_t m, const char* dim, const void* buffer, size_t count, int datatype, int peer, void* stream,
                  devmesh_request_t* request) {
  return start<true>("devmesh_isend", m, dim, buffer, count, datatype, peer, stream, request);
}

int devmesh_irecv(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int peer, void* stream,
                  devmesh_request_t* request) {
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
    mesh.communicator(d).sendrecv(sendbuf, sendcount, st, dest, recvbuf, recvcount, rt, source, stream);
  });
}

}  // extern "C"
