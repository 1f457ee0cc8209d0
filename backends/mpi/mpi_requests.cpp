// The MPI backend's started operations: isend and irecv, the started forms
// of version 1's collectives, batch, and test and wait, which end them all
// (on an interruptible communicator as run() waits: polled, and REVOKED
// once the communicator is revoked).
#include <string>

#include "mpi_comm.hpp"

namespace devmesh::backends::mpi_backend {
namespace {

// r's MPI requests complete (true) or some are pending (false: test only).
bool finish(Request& r, bool block) {
  if (r.comm.interruptible) {
    if (!block) return poll_interruptible(r.comm, r.data(), r.count(), r.name, r.on);
    wait_interruptible(r.comm, r.data(), r.count(), r.name, r.on);
    return true;
  }
  if (block) {
    plugin::check_mpi(MPI_Waitall(r.count(), r.data(), MPI_STATUSES_IGNORE), r.name);
    return true;
  }
  int done = 0;
  plugin::check_mpi(MPI_Testall(r.count(), r.data(), &done, MPI_STATUSES_IGNORE), r.name);
  return done != 0;
}

// Frees r, which ended; or, when a failure left some of its MPI requests
// pending (a revoke cut the wait: MPI cannot cancel them), keeps its count
// arrays for good, since MPI may still read them.
void end(Request* r) {
  for (int i = 0; i < r->count(); ++i)
    if (r->data()[i] != MPI_REQUEST_NULL) return;
  delete r;
}

template <bool Send>
int start(void* c, void* buffer, std::size_t count, int type, int peer, void** request) {
  return plugin::guarded([&] {
    Comm& comm = *static_cast<Comm*>(c);
    auto r = std::make_unique<Request>(comm, comm.comm, Send ? "MPI_Isend" : "MPI_Irecv");
    const count_t n = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    if constexpr (Send)
      plugin::check_mpi(DEVMESH_MPI_COUNTED(MPI_Isend)(buffer, n, t, peer, p2p_tag, comm.comm, &r->one), r->name);
    else
      plugin::check_mpi(DEVMESH_MPI_COUNTED(MPI_Irecv)(buffer, n, t, peer, p2p_tag, comm.comm, &r->one), r->name);
    *request = r.release();
  });
}

}  // namespace

int isend(void* c, const void* buffer, std::size_t count, int type, int peer, void*, void** request) {
  return start<true>(c, const_cast<void*>(buffer), count, type, peer, request);
}

int irecv(void* c, void* buffer, std::size_t count, int type, int peer, void*, void** request) {
  return start<false>(c, buffer, count, type, peer, request);
}

int test(void* request, int* done) {
  auto* r = static_cast<Request*>(request);
  *done = 0;
  const int rc = plugin::guarded([&] { *done = finish(*r, false) ? 1 : 0; });
  if (rc != DEVMESH_SUCCESS || *done) end(r);
  return rc;
}

int wait(void* request) {
  auto* r = static_cast<Request*>(request);
  const int rc = plugin::guarded([&] { finish(*r, true); });
  end(r);
  return rc;
}

// Sends and receives on the dim's communicator with the point-to-point tag,
// as isend and irecv, so that they match those in order; one Request for
// all. A start that fails leaves the ones before it to the host as never
// completing.
int batch(void* c, const devmesh_backend_p2p_t ops[], std::size_t n, void*, void** request) {
  return plugin::guarded([&] {
    Comm& comm = *static_cast<Comm*>(c);
    auto r = std::make_unique<Request>(comm, comm.comm, "MPI_Isend and MPI_Irecv of batch");
    r->many.assign(n, MPI_REQUEST_NULL);
    for (std::size_t i = 0; i < n; ++i) {
      const devmesh_backend_p2p_t& op = ops[i];
      const count_t k = counted<count_t>(op.count, "ops", i);
      const MPI_Datatype t = mpi_datatype(type_of(op.datatype));
      MPI_Request* q = &r->many[i];
      const int rc = op.send ? DEVMESH_MPI_COUNTED(MPI_Isend)(op.buffer, k, t, op.peer, p2p_tag, comm.comm, q)
                             : DEVMESH_MPI_COUNTED(MPI_Irecv)(op.buffer, k, t, op.peer, p2p_tag, comm.comm, q);
      if (rc != MPI_SUCCESS && i > 0) {
        plugin::host()->leave_unfreed(comm.comm);
        r.release();  // MPI may still use the requests started
      }
      plugin::check_mpi(rc, op.send ? "MPI_Isend" : "MPI_Irecv");
    }
    if (request) {
      *request = r.release();
      return;
    }
    Request* kept = r.release();
    try {
      finish(*kept, true);
    } catch (...) {
      end(kept);
      throw;
    }
    end(kept);
  });
}

// --- version 1's collectives, started (the same MPI calls as their
// blocking forms, on the same communicator) ---

int iallreduce(void* c, const void* send, void* recv, std::size_t count, int type, int op, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Iallreduce));
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const count_t n = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const MPI_Op m = mpi_op(op_of(op));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Allreduce)(in, recv, n, t, m, k); },
         [&](MPI_Comm k, MPI_Request* r) { return DEVMESH_MPI_COUNTED(MPI_Iallreduce)(in, recv, n, t, m, k, r); });
  });
}

int iallgather(void* c, const void* send, void* recv, std::size_t count, int type, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Iallgather));
    const int rank = o.comm().rank;
    const bool in_place = send == static_cast<const char*>(recv) + rank * count * size_of(type_of(type));
    const void* in = in_place ? MPI_IN_PLACE : send;
    const count_t n = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Allgather)(in, n, t, recv, n, t, k); },
         [&](MPI_Comm k, MPI_Request* r) { return DEVMESH_MPI_COUNTED(MPI_Iallgather)(in, n, t, recv, n, t, k, r); });
  });
}

int ireduce_scatter(void* c, const void* send, void* recv, std::size_t count, int type, int op, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Ireduce_scatter_block));
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const count_t n = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const MPI_Op m = mpi_op(op_of(op));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Reduce_scatter_block)(in, recv, n, t, m, k); },
         [&](MPI_Comm k, MPI_Request* r) {
           return DEVMESH_MPI_COUNTED(MPI_Ireduce_scatter_block)(in, recv, n, t, m, k, r);
         });
  });
}

int ibroadcast(void* c, void* buffer, std::size_t count, int type, int root, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Ibcast));
    const count_t n = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Bcast)(buffer, n, t, root, k); },
         [&](MPI_Comm k, MPI_Request* r) { return DEVMESH_MPI_COUNTED(MPI_Ibcast)(buffer, n, t, root, k, r); });
  });
}

int ialltoall(void* c, const void* send, void* recv, std::size_t count, int type, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Ialltoall));
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const count_t n = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Alltoall)(in, n, t, recv, n, t, k); },
         [&](MPI_Comm k, MPI_Request* r) { return DEVMESH_MPI_COUNTED(MPI_Ialltoall)(in, n, t, recv, n, t, k, r); });
  });
}

int ibarrier(void* c, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, "MPI_Ibarrier");
    o.go([&](MPI_Comm k) { return MPI_Barrier(k); }, [&](MPI_Comm k, MPI_Request* r) { return MPI_Ibarrier(k, r); });
  });
}

}  // namespace devmesh::backends::mpi_backend
