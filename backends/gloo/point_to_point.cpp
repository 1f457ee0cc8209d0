// The Gloo backend's point to point: Gloo unbound buffers (send/recv, then
// waitSend/waitRecv). Gloo has no non-blocking probe (a wait with a short
// timeout fails the whole context when it expires), so the first test() of
// a request hands its wait to a thread and later tests ask that thread;
// wait() alone needs none. sendrecv is irecv, isend, then both waits;
// batch starts each of its transfers in order and ends them together.
// test() and wait() end the worker's requests too (worker.hpp).
#include <gloo/transport/context.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "gloo_comm.hpp"
#include "mpi_context.hpp"

namespace devmesh::gloo_backend {
namespace {

using devmesh::gloo_mpi::backend_error;

// Point-to-point messages use their own slot prefix, apart from the
// collectives' prefixes of gloo/types.h (0x01 .. 0x08).
constexpr uint8_t kSendRecvSlotPrefix = 0x40;

// One pending isend/irecv: the unbound buffer lives until the transfer ends.
struct Request final : PendingOp {
  Request(Comm* c, bool s) : comm(c), send(s) {}
  bool ready() override;
  void finish() override;
  Comm* comm;
  bool send;
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  std::future<bool> waiter;  // the wait, on its own thread once test() ran
};

// Starts a transfer; nullptr when there is nothing to move.
template <bool Send>
std::unique_ptr<Request> start(Comm& c, void* buffer, std::size_t count, int datatype, int peer) {
  const std::size_t bytes = bytes_of(count, element_size(datatype));
  // Gloo's TCP context has no pair to its own rank.
  if (peer == c.context->rank)
    throw Error(Status::unsupported, std::string(Send ? "send to" : "recv from") + " the caller's own rank " +
                                         std::to_string(peer) + " is not supported");
  if (count == 0) return nullptr;
  auto r = std::make_unique<Request>(&c, Send);
  run(c, Send ? "send" : "recv", [&] {
    r->buffer = c.context->createUnboundBuffer(buffer, bytes);
    const uint64_t slot = gloo::Slot::build(kSendRecvSlotPrefix, 0);
    if constexpr (Send)
      r->buffer->send(peer, slot);
    else
      r->buffer->recv(peer, slot);
  });
  return r;
}

bool wait_buffer(gloo::transport::UnboundBuffer& b, bool send, std::chrono::milliseconds timeout) {
  return send ? b.waitSend(timeout) : b.waitRecv(timeout);
}

// Waits (or collects the waiting thread's answer); failures mark the
// communicator broken as any other operation's.
void Request::finish() {
  run(*comm, send ? "send" : "recv", [&] {
    const bool done = waiter.valid() ? waiter.get() : wait_buffer(*buffer, send, comm->timeout);
    if (!done) backend_error("aborted");
  });
}

bool Request::ready() {
  if (!waiter.valid()) {
    gloo::transport::UnboundBuffer* b = buffer.get();
    const auto timeout = comm->timeout;
    waiter = std::async(std::launch::async, [b, s = send, timeout] { return wait_buffer(*b, s, timeout); });
  }
  return waiter.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

void finish(Request& r) { r.finish(); }

template <bool Send>
int point_to_point(void* comm, void* buffer, std::size_t count, int datatype, int peer) {
  return plugin::guarded([&] {
    if (auto r = start<Send>(comm_arg(comm), buffer, count, datatype, peer)) finish(*r);
  });
}

// The transfers of one batch, ended together: the first failure is
// reported after every transfer has ended.
struct Batch final : PendingOp {
  bool ready() override {
    for (auto& r : parts)
      if (!r->ready()) return false;
    return true;
  }
  void finish() override {
    std::exception_ptr first;
    for (auto& r : parts) {
      try {
        r->finish();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }
  std::vector<std::unique_ptr<Request>> parts;
};

}  // namespace

int gloo_send(void* comm, const void* buffer, std::size_t count, int datatype, int peer, void*) {
  return point_to_point<true>(comm, const_cast<void*>(buffer), count, datatype, peer);
}
int gloo_recv(void* comm, void* buffer, std::size_t count, int datatype, int peer, void*) {
  return point_to_point<false>(comm, buffer, count, datatype, peer);
}

int gloo_isend(void* comm, const void* buffer, std::size_t count, int datatype, int peer, void*, void** request) {
  return plugin::guarded([&] {
    *request = static_cast<PendingOp*>(
        start<true>(comm_arg(comm), const_cast<void*>(buffer), count, datatype, peer).release());
  });
}
int gloo_irecv(void* comm, void* buffer, std::size_t count, int datatype, int peer, void*, void** request) {
  return plugin::guarded([&] {
    *request = static_cast<PendingOp*>(start<false>(comm_arg(comm), buffer, count, datatype, peer).release());
  });
}
int gloo_batch(void* comm, const devmesh_backend_p2p_t ops[], std::size_t n, void*, void** request) {
  return plugin::guarded([&] {
    Comm& c = comm_arg(comm);
    if (n > 0 && ops == nullptr) throw Error(Status::invalid_argument, "batch: NULL ops with n > 0");
    auto b = std::make_unique<Batch>();
    b->parts.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const devmesh_backend_p2p_t& o = ops[i];
      auto r = o.send ? start<true>(c, o.buffer, o.count, o.datatype, o.peer)
                      : start<false>(c, o.buffer, o.count, o.datatype, o.peer);
      if (r) b->parts.push_back(std::move(r));
    }
    if (request == nullptr) {
      b->finish();
      return;
    }
    *request = b->parts.empty() ? nullptr : static_cast<PendingOp*>(b.release());
  });
}
int gloo_wait(void* request) {
  const std::unique_ptr<PendingOp> r(static_cast<PendingOp*>(request));
  return plugin::guarded([&] {
    if (r) r->finish();
  });
}
int gloo_test(void* request, int* done) {
  auto* r = static_cast<PendingOp*>(request);
  int rc = plugin::guarded([&] { *done = !r || r->ready() ? 1 : 0; });
  if (rc == DEVMESH_SUCCESS && *done) return gloo_wait(request);
  if (rc != DEVMESH_SUCCESS) delete r;
  return rc;
}
int gloo_sendrecv(void* comm, const void* sendbuf, std::size_t sendcount, int sendtype, int dest, void* recvbuf,
                  std::size_t recvcount, int recvtype, int source, void*) {
  return plugin::guarded([&] {
    Comm& c = comm_arg(comm);
    if (dest == c.context->rank && source == c.context->rank) {  // a shift by 0: a copy
      const std::size_t out = bytes_of(sendcount, element_size(sendtype));
      const std::size_t in = bytes_of(recvcount, element_size(recvtype));
      if (out > in)
        throw Error(Status::invalid_argument, "sendrecv sends " + std::to_string(out) +
                                                  " bytes to itself but receives only " + std::to_string(in));
      if (out > 0) std::memmove(recvbuf, sendbuf, out);
      return;
    }
    auto in = start<false>(c, recvbuf, recvcount, recvtype, source);
    auto out = start<true>(c, const_cast<void*>(sendbuf), sendcount, sendtype, dest);
    if (in) finish(*in);
    if (out) finish(*out);
  });
}

}  // namespace devmesh::gloo_backend
