// The C API's collectives of fixed size and blocking point-to-point calls
// over a dim (include/devmesh/devmesh.h), through the dim's backend
// communicator. Variable-size, rooted and started collectives:
// collectives_v_c.cpp; requests, isend/irecv and batch: requests_c.cpp.
#include <cstdint>

#include "capi/capi.hpp"

using namespace devmesh::capi;

// ---- collectives over a dim ------------------------------------------------
namespace {

static_assert(DEVMESH_INT8 == static_cast<int>(devmesh::DataType::int8));
static_assert(DEVMESH_BFLOAT16 == static_cast<int>(devmesh::DataType::bfloat16));
static_assert(DEVMESH_FLOAT64 == static_cast<int>(devmesh::DataType::float64));
static_assert(DEVMESH_SUM == static_cast<int>(devmesh::ReduceOp::sum));
static_assert(DEVMESH_MAX == static_cast<int>(devmesh::ReduceOp::max));

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

extern "C" {

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
