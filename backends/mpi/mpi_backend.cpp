#include "mpi_backend.hpp"

#include <cstring>

#include "mpi_comm.hpp"

namespace devmesh::backends {

MPI_Datatype mpi_datatype(DataType type) {
  switch (type) {
    case DataType::int8:
      return MPI_INT8_T;
    case DataType::uint8:
      return MPI_UINT8_T;
    case DataType::int32:
      return MPI_INT32_T;
    case DataType::uint32:
      return MPI_UINT32_T;
    case DataType::int64:
      return MPI_INT64_T;
    case DataType::uint64:
      return MPI_UINT64_T;
    case DataType::float16:
    case DataType::bfloat16:
      return MPI_UINT16_T;
    case DataType::float32:
      return MPI_FLOAT;
    case DataType::float64:
      return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;  // never: the core passes only the enum's values
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      return MPI_SUM;
    case ReduceOp::prod:
      return MPI_PROD;
    case ReduceOp::min:
      return MPI_MIN;
    case ReduceOp::max:
      return MPI_MAX;
  }
  return MPI_OP_NULL;  // never, as above
}

namespace mpi_backend {
namespace {

// An allreduce of at most small_allreduce_bytes on an interruptible
// communicator: recursive doubling over nonblocking point to point on the
// communicator's own duplicate, each wait interruptible by a revoke as in
// run(); it costs about what the blocking call does, far less than
// MPI_Iallreduce tested in a loop (docs/BENCHMARKS.md, "Fault
// tolerance"). Ranks past the largest power of
// two p fold their data into rank - p first and get the result from it
// last. Every step combines the same two partial results on both sides,
// and the reductions are commutative, so every rank ends with the same
// bits.
constexpr std::size_t small_allreduce_bytes = 16384;

void small_allreduce(Comm& comm, const void* send, void* recv, int n, MPI_Datatype t, MPI_Op o, std::size_t bytes) {
  const char* name = "MPI_Allreduce (point to point)";
  collective_comm(&comm);
  if (send != recv) std::memcpy(recv, send, bytes);
  int rank = 0, size = 0;
  DEVMESH_PLUGIN_MPI(MPI_Comm_rank(comm.own, &rank));
  DEVMESH_PLUGIN_MPI(MPI_Comm_size(comm.own, &size));
  int p = 1;
  while (p * 2 <= size) p *= 2;
  comm.scratch.resize(bytes);
  void* tmp = comm.scratch.data();
  enum { fold = 1, step = 2, result = 3 };
  MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  if (rank >= p) {
    plugin::check_mpi(MPI_Isend(recv, n, t, rank - p, fold, comm.own, &r[0]), name);
    wait_interruptible(comm, r, 1, name);
    plugin::check_mpi(MPI_Irecv(recv, n, t, rank - p, result, comm.own, &r[0]), name);
    wait_interruptible(comm, r, 1, name);
    return;
  }
  if (rank + p < size) {
    plugin::check_mpi(MPI_Irecv(tmp, n, t, rank + p, fold, comm.own, &r[0]), name);
    wait_interruptible(comm, r, 1, name);
    plugin::check_mpi(MPI_Reduce_local(tmp, recv, n, t, o), name);
  }
  for (int mask = 1; mask < p; mask <<= 1) {
    const int peer = rank ^ mask;
    plugin::check_mpi(MPI_Irecv(tmp, n, t, peer, step, comm.own, &r[0]), name);
    plugin::check_mpi(MPI_Isend(recv, n, t, peer, step, comm.own, &r[1]), name);
    wait_interruptible(comm, r, 2, name);
    plugin::check_mpi(MPI_Reduce_local(tmp, recv, n, t, o), name);
  }
  if (rank + p < size) {
    plugin::check_mpi(MPI_Isend(recv, n, t, rank + p, result, comm.own, &r[0]), name);
    wait_interruptible(comm, r, 1, name);
  }
}

int open(int n, const char* const keys[], const char* const*, void** instance) {
  return plugin::guarded([&] {
    if (n > 0) throw Error(Status::invalid_argument, std::string("takes no options (got '") + keys[0] + "')");
    *instance = nullptr;
  });
}

void close(void*) {}

int init_host(const devmesh_backend_host_t* h) {
  plugin::host() = h;
  return DEVMESH_SUCCESS;
}

// The communicator wraps the group's own: made locally, nothing to connect.
int comm_prepare(void*, const devmesh_backend_group_t* group, void** prepared) {
  return plugin::guarded([&] { *prepared = new Comm(group->group, group->deadline > 0); });
}

int comm_connect(void* prepared, void** comm) {
  *comm = prepared;
  return DEVMESH_SUCCESS;
}

void comm_abandon(void* prepared) { delete static_cast<Comm*>(prepared); }

// MPI reduces every type but the 16-bit floats.
int reduce_supported(void*, int datatype, int) { return datatype != DEVMESH_FLOAT16 && datatype != DEVMESH_BFLOAT16; }

void comm_destroy(void* comm) { delete static_cast<Comm*>(comm); }

int comm_native(void* comm, void** handle) {
  *handle = &static_cast<Comm*>(comm)->comm;
  return DEVMESH_SUCCESS;
}

int allreduce(void* c, const void* send, void* recv, std::size_t count, int type, int op, void*) {
  return plugin::guarded([&] {
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const int n = count_of(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const MPI_Op o = mpi_op(op_of(op));
    Comm& comm = *static_cast<Comm*>(c);
    const std::size_t bytes = count * size_of(type_of(type));
    if (comm.interruptible && bytes <= small_allreduce_bytes) return small_allreduce(comm, send, recv, n, t, o, bytes);
    run(
        c, "MPI_Allreduce", [&] { return MPI_Allreduce(in, recv, n, t, o, comm_of(c)); },
        [&](MPI_Request* r) { return MPI_Iallreduce(in, recv, n, t, o, collective_comm(c), r); });
  });
}

int allgather(void* c, const void* send, void* recv, std::size_t count, int type, void*) {
  return plugin::guarded([&] {
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const int rank = static_cast<Comm*>(c)->rank;
    const bool in_place = send == static_cast<const char*>(recv) + rank * count * size_of(type_of(type));
    const void* in = in_place ? MPI_IN_PLACE : send;
    const int n = count_of(count);
    run(
        c, "MPI_Allgather", [&] { return MPI_Allgather(in, n, t, recv, n, t, comm_of(c)); },
        [&](MPI_Request* r) { return MPI_Iallgather(in, n, t, recv, n, t, collective_comm(c), r); });
  });
}

int reduce_scatter(void* c, const void* send, void* recv, std::size_t count, int type, int op, void*) {
  return plugin::guarded([&] {
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const int n = count_of(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const MPI_Op o = mpi_op(op_of(op));
    run(
        c, "MPI_Reduce_scatter_block", [&] { return MPI_Reduce_scatter_block(in, recv, n, t, o, comm_of(c)); },
        [&](MPI_Request* r) { return MPI_Ireduce_scatter_block(in, recv, n, t, o, collective_comm(c), r); });
  });
}

int broadcast(void* c, void* buffer, std::size_t count, int type, int root, void*) {
  return plugin::guarded([&] {
    const int n = count_of(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    run(
        c, "MPI_Bcast", [&] { return MPI_Bcast(buffer, n, t, root, comm_of(c)); },
        [&](MPI_Request* r) { return MPI_Ibcast(buffer, n, t, root, collective_comm(c), r); });
  });
}

int alltoall(void* c, const void* send, void* recv, std::size_t count, int type, void*) {
  return plugin::guarded([&] {
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const int n = count_of(count);
    run(
        c, "MPI_Alltoall", [&] { return MPI_Alltoall(in, n, t, recv, n, t, comm_of(c)); },
        [&](MPI_Request* r) { return MPI_Ialltoall(in, n, t, recv, n, t, collective_comm(c), r); });
  });
}

int barrier(void* c, void*) {
  return plugin::guarded([&] {
    run(
        c, "MPI_Barrier", [&] { return MPI_Barrier(comm_of(c)); },
        [&](MPI_Request* r) { return MPI_Ibarrier(collective_comm(c), r); });
  });
}

int send(void* c, const void* buffer, std::size_t count, int type, int peer, void*) {
  return plugin::guarded([&] {
    const int n = count_of(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    run(
        c, "MPI_Send", [&] { return MPI_Send(buffer, n, t, peer, p2p_tag, comm_of(c)); },
        [&](MPI_Request* r) { return MPI_Isend(buffer, n, t, peer, p2p_tag, comm_of(c), r); });
  });
}

int recv(void* c, void* buffer, std::size_t count, int type, int peer, void*) {
  return plugin::guarded([&] {
    const int n = count_of(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    run(
        c, "MPI_Recv", [&] { return MPI_Recv(buffer, n, t, peer, p2p_tag, comm_of(c), MPI_STATUS_IGNORE); },
        [&](MPI_Request* r) { return MPI_Irecv(buffer, n, t, peer, p2p_tag, comm_of(c), r); });
  });
}

int sendrecv(void* c, const void* sendbuf, std::size_t sendcount, int sendtype, int dest, void* recvbuf,
             std::size_t recvcount, int recvtype, int source, void*) {
  return plugin::guarded([&] {
    const int ns = count_of(sendcount), nr = count_of(recvcount);
    const MPI_Datatype ts = mpi_datatype(type_of(sendtype)), tr = mpi_datatype(type_of(recvtype));
    if (!static_cast<Comm*>(c)->interruptible) {
      DEVMESH_PLUGIN_MPI(MPI_Sendrecv(sendbuf, ns, ts, dest, p2p_tag, recvbuf, nr, tr, source, p2p_tag, comm_of(c),
                                      MPI_STATUS_IGNORE));
      return;
    }
    // Both halves as requests, each waited for interruptibly.
    MPI_Request rr = MPI_REQUEST_NULL;
    DEVMESH_PLUGIN_MPI(MPI_Irecv(recvbuf, nr, tr, source, p2p_tag, comm_of(c), &rr));
    run(
        c, "MPI_Sendrecv", [] { return MPI_SUCCESS; },
        [&](MPI_Request* r) { return MPI_Isend(sendbuf, ns, ts, dest, p2p_tag, comm_of(c), r); });
    run(
        c, "MPI_Sendrecv", [] { return MPI_SUCCESS; },
        [&](MPI_Request* r) {
          *r = rr;
          return MPI_SUCCESS;
        });
  });
}

// The capabilities: non-blocking point to point, local creation, and every
// member of version 4.
constexpr unsigned long long capabilities =
    DEVMESH_BACKEND_CAP_NONBLOCKING | DEVMESH_BACKEND_CAP_LOCAL_CREATE | DEVMESH_BACKEND_CAP_ALLTOALLV |
    DEVMESH_BACKEND_CAP_ALLGATHERV | DEVMESH_BACKEND_CAP_REDUCE_SCATTERV | DEVMESH_BACKEND_CAP_GATHER |
    DEVMESH_BACKEND_CAP_GATHERV | DEVMESH_BACKEND_CAP_SCATTER | DEVMESH_BACKEND_CAP_SCATTERV |
    DEVMESH_BACKEND_CAP_REDUCE | DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES | DEVMESH_BACKEND_CAP_BATCH;

constexpr devmesh_backend_v4_t table = {
    {
        {
            {
                DEVMESH_BACKEND_ABI_VERSION_4,
                "mpi",
                nullptr,
                nullptr,
                nullptr,
                plugin::last_error,
                open,
                close,
                nullptr,
                comm_destroy,
                comm_native,
                allreduce,
                allgather,
                reduce_scatter,
                broadcast,
                alltoall,
                barrier,
                send,
                recv,
                plugin::last_mpi_error,
            },
            isend,
            irecv,
            test,
            wait,
            sendrecv,
        },
        DEVMESH_BACKEND_MPI,
        capabilities,
        init_host,
        reduce_supported,
        comm_prepare,
        comm_connect,
        comm_abandon,
        nullptr,  // revoke: not without ULFM
    },
    alltoallv,
    allgatherv,
    reduce_scatterv,
    gather,
    gatherv,
    scatter,
    scatterv,
    reduce,
    iallreduce,
    iallgather,
    ireduce_scatter,
    ibroadcast,
    ialltoall,
    ibarrier,
    batch,
    nullptr,  // topology: MPI sees no level outside the host
};

}  // namespace
}  // namespace mpi_backend

const devmesh_backend_v1_t& mpi_table() { return mpi_backend::table.v3.v2.v1; }

}  // namespace devmesh::backends
