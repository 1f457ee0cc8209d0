// The Gloo backend's collectives of version 1 and their started forms of
// version 4 (iallreduce ...): one body each, run on the caller's thread or
// the communicator's worker (worker.hpp, launch() in gloo_comm.hpp).
#include <gloo/allgather.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <vector>

#include "gloo_comm.hpp"

namespace devmesh::gloo_backend {
namespace {

using Body = std::function<void()>;

Body allreduce_body(Comm& c, const void* send, void* recv, std::size_t count, int datatype, int op) {
  bytes_of(count, element_size(datatype));
  if (count == 0) return {};
  return [&c, send, recv, count, datatype, op] {
    run(c, "allreduce", [&] { allreduce_bytes(c, send, recv, count, datatype, op); });
  };
}

Body allgather_body(Comm& c, const void* send, void* recv, std::size_t count, int datatype) {
  const std::size_t es = element_size(datatype);
  const std::size_t total = bytes_of(count, es, static_cast<std::size_t>(c.context->size));
  if (count == 0) return {};
  auto* mine = static_cast<char*>(recv) + bytes_of(count, es, static_cast<std::size_t>(c.context->rank));
  return [&c, send, recv, mine, total, bytes = count * es] {
    run(c, "allgather", [&] {
      // Gloo's allgather copies the input to the caller's block itself;
      // in place, that block already holds it.
      if (send != mine) std::memmove(mine, send, bytes);
      gloo::AllgatherOptions opts(c.context);
      opts.setOutput(static_cast<char*>(recv), total);
      opts.setTimeout(c.timeout);
      gloo::allgather(opts);
    });
  };
}

// Emulated (gloo_backend.cpp, "What Gloo lacks"): an allreduce of
// everything into a temporary, then the caller's block (in place, send ==
// recv, it goes to the start of the buffer, as MPI_IN_PLACE).
Body reduce_scatter_body(Comm& c, const void* send, void* recv, std::size_t count, int datatype, int op) {
  const std::size_t es = element_size(datatype);
  const std::size_t total = bytes_of(count, es, static_cast<std::size_t>(c.context->size));
  if (count == 0) return {};
  return [&c, send, recv, count, datatype, op, es, total] {
    std::vector<char> all(total);
    const auto n = static_cast<std::size_t>(c.context->size);
    run(c, "reduce_scatter", [&] { allreduce_bytes(c, send, all.data(), count * n, datatype, op); });
    std::memcpy(recv, all.data() + count * es * static_cast<std::size_t>(c.context->rank), count * es);
  };
}

Body broadcast_body(Comm& c, void* buffer, std::size_t count, int datatype, int root) {
  const std::size_t bytes = bytes_of(count, element_size(datatype));
  if (count == 0) return {};
  return [&c, buffer, bytes, root] {
    run(c, "broadcast", [&] {
      gloo::BroadcastOptions opts(c.context);
      opts.setOutput(static_cast<char*>(buffer), bytes);
      opts.setRoot(root);
      opts.setTimeout(c.timeout);
      gloo::broadcast(opts);
    });
  };
}

// With send == recv the send data is copied to a temporary first.
Body alltoall_body(Comm& c, const void* send, void* recv, std::size_t count, int datatype) {
  const std::size_t total = bytes_of(count, element_size(datatype), static_cast<std::size_t>(c.context->size));
  if (count == 0) return {};
  return [&c, send, recv, total] {
    std::vector<char> copy;
    const char* in = static_cast<const char*>(send);
    if (send == recv) {
      copy.assign(in, in + total);
      in = copy.data();
    }
    run(c, "alltoall", [&] {
      gloo::AlltoallOptions opts(c.context);
      opts.setInput(const_cast<char*>(in), total);
      opts.setOutput(static_cast<char*>(recv), total);
      opts.setTimeout(c.timeout);
      gloo::alltoall(opts);
    });
  };
}

Body barrier_body(Comm& c) {
  return [&c] {
    run(c, "barrier", [&] {
      gloo::BarrierOptions opts(c.context);
      opts.setTimeout(c.timeout);
      gloo::barrier(opts);
    });
  };
}

}  // namespace

int gloo_iallreduce(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void*,
                    void** request) {
  return launch(comm, request, [&](Comm& c) { return allreduce_body(c, send, recv, count, datatype, op); });
}
int gloo_iallgather(void* comm, const void* send, void* recv, std::size_t count, int datatype, void*, void** request) {
  return launch(comm, request, [&](Comm& c) { return allgather_body(c, send, recv, count, datatype); });
}
int gloo_ireduce_scatter(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void*,
                         void** request) {
  return launch(comm, request, [&](Comm& c) { return reduce_scatter_body(c, send, recv, count, datatype, op); });
}
int gloo_ibroadcast(void* comm, void* buffer, std::size_t count, int datatype, int root, void*, void** request) {
  return launch(comm, request, [&](Comm& c) { return broadcast_body(c, buffer, count, datatype, root); });
}
int gloo_ialltoall(void* comm, const void* send, void* recv, std::size_t count, int datatype, void*, void** request) {
  return launch(comm, request, [&](Comm& c) { return alltoall_body(c, send, recv, count, datatype); });
}
int gloo_ibarrier(void* comm, void*, void** request) {
  return launch(comm, request, [&](Comm& c) { return barrier_body(c); });
}

// Version 1's blocking forms: the same bodies, in order with the started
// ones.
int gloo_allreduce(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void* s) {
  return gloo_iallreduce(comm, send, recv, count, datatype, op, s, nullptr);
}
int gloo_allgather(void* comm, const void* send, void* recv, std::size_t count, int datatype, void* s) {
  return gloo_iallgather(comm, send, recv, count, datatype, s, nullptr);
}
int gloo_reduce_scatter(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void* s) {
  return gloo_ireduce_scatter(comm, send, recv, count, datatype, op, s, nullptr);
}
int gloo_broadcast(void* comm, void* buffer, std::size_t count, int datatype, int root, void* s) {
  return gloo_ibroadcast(comm, buffer, count, datatype, root, s, nullptr);
}
int gloo_alltoall(void* comm, const void* send, void* recv, std::size_t count, int datatype, void* s) {
  return gloo_ialltoall(comm, send, recv, count, datatype, s, nullptr);
}
int gloo_barrier(void* comm, void* s) { return gloo_ibarrier(comm, s, nullptr); }

}  // namespace devmesh::gloo_backend
