// The C API's variable-size and rooted collectives and the started (i-)
// forms of every collective (include/devmesh/devmesh.h), through the dim's
// backend communicator. Count and displacement arrays become spans of the
// group's size (empty for NULL); the communicator's gate checks them.
#include <span>

#include "capi/capi.hpp"

using namespace devmesh::capi;

namespace {

using Counts = std::span<const std::size_t>;
using devmesh::Communicator;

// counts[0..n-1] (n: the group's size), or an empty span for NULL (an
// array the call does not read, else refused by the gate naming it).
Counts counts_arg(const size_t* counts, std::size_t n) { return counts ? Counts(counts, n) : Counts(); }
std::size_t group_size(const Communicator& c) { return static_cast<std::size_t>(c.size()); }

// A blocking collective: body(communicator of dim).
template <class Body>
int run(const char* fn, devmesh_t m, const char* dim, Body&& body) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    body(mesh.communicator(d));
  });
}

// A started collective: *request = body(communicator of dim) on success;
// a NULL request pointer is refused before any communication.
template <class Body>
int start(const char* fn, devmesh_t m, const char* dim, devmesh_request_t* request, Body&& body) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    need(request, "request");
    give_request(body(mesh.communicator(d)), request);
  });
}

}  // namespace

extern "C" {

// ---- variable-size and rooted collectives ------------------------------------

int devmesh_alltoallv(devmesh_t m, const char* dim, const void* sendbuf, const size_t sendcounts[],
                      const size_t sdispls[], void* recvbuf, const size_t recvcounts[], const size_t rdispls[],
                      int datatype, void* stream) {
  return run("devmesh_alltoallv", m, dim, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    c.alltoallv(sendbuf, counts_arg(sendcounts, n), counts_arg(sdispls, n), recvbuf, counts_arg(recvcounts, n),
                counts_arg(rdispls, n), datatype_arg(datatype), stream);
  });
}

int devmesh_allgatherv(devmesh_t m, const char* dim, const void* sendbuf, size_t sendcount, void* recvbuf,
                       const size_t recvcounts[], const size_t rdispls[], int datatype, void* stream) {
  return run("devmesh_allgatherv", m, dim, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    c.allgatherv(sendbuf, sendcount, recvbuf, counts_arg(recvcounts, n), counts_arg(rdispls, n), datatype_arg(datatype),
                 stream);
  });
}

int devmesh_reduce_scatterv(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, const size_t recvcounts[],
                            int datatype, int op, void* stream) {
  return run("devmesh_reduce_scatterv", m, dim, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    c.reduce_scatterv(sendbuf, recvbuf, counts_arg(recvcounts, n), datatype_arg(datatype), op_arg(op), stream);
  });
}

int devmesh_gather(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                   int root, void* stream) {
  return run("devmesh_gather", m, dim,
             [&](Communicator& c) { c.gather(sendbuf, recvbuf, count, datatype_arg(datatype), root, stream); });
}

int devmesh_gatherv(devmesh_t m, const char* dim, const void* sendbuf, size_t sendcount, void* recvbuf,
                    const size_t recvcounts[], const size_t rdispls[], int datatype, int root, void* stream) {
  return run("devmesh_gatherv", m, dim, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    c.gatherv(sendbuf, sendcount, recvbuf, counts_arg(recvcounts, n), counts_arg(rdispls, n), datatype_arg(datatype),
              root, stream);
  });
}

int devmesh_scatter(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                    int root, void* stream) {
  return run("devmesh_scatter", m, dim,
             [&](Communicator& c) { c.scatter(sendbuf, recvbuf, count, datatype_arg(datatype), root, stream); });
}

int devmesh_scatterv(devmesh_t m, const char* dim, const void* sendbuf, const size_t sendcounts[],
                     const size_t sdispls[], void* recvbuf, size_t recvcount, int datatype, int root, void* stream) {
  return run("devmesh_scatterv", m, dim, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    c.scatterv(sendbuf, counts_arg(sendcounts, n), counts_arg(sdispls, n), recvbuf, recvcount, datatype_arg(datatype),
               root, stream);
  });
}

int devmesh_reduce(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype, int op,
                   int root, void* stream) {
  return run("devmesh_reduce", m, dim, [&](Communicator& c) {
    c.reduce(sendbuf, recvbuf, count, datatype_arg(datatype), op_arg(op), root, stream);
  });
}

// ---- started collectives -----------------------------------------------------

int devmesh_iallreduce(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                       int op, void* stream, devmesh_request_t* request) {
  return start("devmesh_iallreduce", m, dim, request, [&](Communicator& c) {
    return c.iallreduce(sendbuf, recvbuf, count, datatype_arg(datatype), op_arg(op), stream);
  });
}

int devmesh_iallgather(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                       void* stream, devmesh_request_t* request) {
  return start("devmesh_iallgather", m, dim, request,
               [&](Communicator& c) { return c.iallgather(sendbuf, recvbuf, count, datatype_arg(datatype), stream); });
}

int devmesh_ireduce_scatter(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count,
                            int datatype, int op, void* stream, devmesh_request_t* request) {
  return start("devmesh_ireduce_scatter", m, dim, request, [&](Communicator& c) {
    return c.ireduce_scatter(sendbuf, recvbuf, count, datatype_arg(datatype), op_arg(op), stream);
  });
}

int devmesh_ibroadcast(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int root, void* stream,
                       devmesh_request_t* request) {
  return start("devmesh_ibroadcast", m, dim, request,
               [&](Communicator& c) { return c.ibroadcast(buffer, count, datatype_arg(datatype), root, stream); });
}

int devmesh_ialltoall(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                      void* stream, devmesh_request_t* request) {
  return start("devmesh_ialltoall", m, dim, request,
               [&](Communicator& c) { return c.ialltoall(sendbuf, recvbuf, count, datatype_arg(datatype), stream); });
}

int devmesh_ibarrier(devmesh_t m, const char* dim, void* stream, devmesh_request_t* request) {
  return start("devmesh_ibarrier", m, dim, request, [&](Communicator& c) { return c.ibarrier(stream); });
}

int devmesh_ialltoallv(devmesh_t m, const char* dim, const void* sendbuf, const size_t sendcounts[],
                       const size_t sdispls[], void* recvbuf, const size_t recvcounts[], const size_t rdispls[],
                       int datatype, void* stream, devmesh_request_t* request) {
  return start("devmesh_ialltoallv", m, dim, request, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    return c.ialltoallv(sendbuf, counts_arg(sendcounts, n), counts_arg(sdispls, n), recvbuf, counts_arg(recvcounts, n),
                        counts_arg(rdispls, n), datatype_arg(datatype), stream);
  });
}

int devmesh_iallgatherv(devmesh_t m, const char* dim, const void* sendbuf, size_t sendcount, void* recvbuf,
                        const size_t recvcounts[], const size_t rdispls[], int datatype, void* stream,
                        devmesh_request_t* request) {
  return start("devmesh_iallgatherv", m, dim, request, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    return c.iallgatherv(sendbuf, sendcount, recvbuf, counts_arg(recvcounts, n), counts_arg(rdispls, n),
                         datatype_arg(datatype), stream);
  });
}

int devmesh_ireduce_scatterv(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf,
                             const size_t recvcounts[], int datatype, int op, void* stream,
                             devmesh_request_t* request) {
  return start("devmesh_ireduce_scatterv", m, dim, request, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    return c.ireduce_scatterv(sendbuf, recvbuf, counts_arg(recvcounts, n), datatype_arg(datatype), op_arg(op), stream);
  });
}

int devmesh_igather(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                    int root, void* stream, devmesh_request_t* request) {
  return start("devmesh_igather", m, dim, request, [&](Communicator& c) {
    return c.igather(sendbuf, recvbuf, count, datatype_arg(datatype), root, stream);
  });
}

int devmesh_igatherv(devmesh_t m, const char* dim, const void* sendbuf, size_t sendcount, void* recvbuf,
                     const size_t recvcounts[], const size_t rdispls[], int datatype, int root, void* stream,
                     devmesh_request_t* request) {
  return start("devmesh_igatherv", m, dim, request, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    return c.igatherv(sendbuf, sendcount, recvbuf, counts_arg(recvcounts, n), counts_arg(rdispls, n),
                      datatype_arg(datatype), root, stream);
  });
}

int devmesh_iscatter(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                     int root, void* stream, devmesh_request_t* request) {
  return start("devmesh_iscatter", m, dim, request, [&](Communicator& c) {
    return c.iscatter(sendbuf, recvbuf, count, datatype_arg(datatype), root, stream);
  });
}

int devmesh_iscatterv(devmesh_t m, const char* dim, const void* sendbuf, const size_t sendcounts[],
                      const size_t sdispls[], void* recvbuf, size_t recvcount, int datatype, int root, void* stream,
                      devmesh_request_t* request) {
  return start("devmesh_iscatterv", m, dim, request, [&](Communicator& c) {
    const std::size_t n = group_size(c);
    return c.iscatterv(sendbuf, counts_arg(sendcounts, n), counts_arg(sdispls, n), recvbuf, recvcount,
                       datatype_arg(datatype), root, stream);
  });
}

int devmesh_ireduce(devmesh_t m, const char* dim, const void* sendbuf, void* recvbuf, size_t count, int datatype,
                    int op, int root, void* stream, devmesh_request_t* request) {
  return start("devmesh_ireduce", m, dim, request, [&](Communicator& c) {
    return c.ireduce(sendbuf, recvbuf, count, datatype_arg(datatype), op_arg(op), root, stream);
  });
}

}  // extern "C"
