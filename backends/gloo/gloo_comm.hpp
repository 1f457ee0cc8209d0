// The Gloo backend's state shared by its files (gloo_backend.cpp: the ops
// table and the collectives; reductions.cpp: the element-wise reductions;
// point_to_point.cpp: send, recv and their requests). Internal: not
// installed.
#pragma once

#include <gloo/context.h>
#include <gloo/transport/device.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "common/plugin_support.hpp"
#include "worker.hpp"

namespace devmesh::gloo_backend {

struct Instance {
  std::string hostname;
  std::string iface;
  std::chrono::milliseconds timeout{std::chrono::seconds(1800)};
  // One TCP device (listening socket and event loop thread) per instance,
  // shared by its communicators; made by the first comm_create.
  std::shared_ptr<gloo::transport::Device> device;
  bool loopback_fallback = false;
  std::string fallback_reason;
};

struct Comm {
  std::shared_ptr<Instance> instance;
  std::shared_ptr<gloo::transport::Device> device;  // outlives the context
  std::shared_ptr<gloo::Context> context;
  std::chrono::milliseconds timeout;
  // After a failure or a revoke the context's connections are closed (so
  // that the peers waiting on this rank fail at once too); later calls fail
  // at once. Read by the caller's thread and the worker, hence the lock.
  std::mutex state;
  std::atomic<bool> is_broken{false};
  std::string broken;     // why; under `state`
  int revoke_status = 0;  // the status revoke() carried (0: not revoked); under `state`
  // The started operations, run in order on one thread (worker.hpp); last,
  // so that it stops before the context goes.
  Worker worker;
};

inline Comm& comm_arg(void* comm) {
  if (comm == nullptr) throw Error(Status::invalid_argument, "NULL communicator");
  return *static_cast<Comm*>(comm);
}

inline std::size_t element_size(int datatype) {
  switch (datatype) {
    case DEVMESH_INT8:
    case DEVMESH_UINT8:
      return 1;
    case DEVMESH_FLOAT16:
    case DEVMESH_BFLOAT16:
      return 2;
    case DEVMESH_INT32:
    case DEVMESH_UINT32:
    case DEVMESH_FLOAT32:
      return 4;
    default:
      return 8;
  }
}

inline std::size_t bytes_of(std::size_t count, std::size_t elsize, std::size_t times = 1) {
  if (times != 0 && count > std::numeric_limits<std::size_t>::max() / elsize / times)
    throw Error(Status::invalid_argument, "count " + std::to_string(count) + " overflows the address space");
  return count * elsize * times;
}

// Data types, reductions, buffers, roots and peers arrive checked (the
// core's argument gate, backend_plugin.h): they are not checked again here.

// Runs one Gloo operation; Gloo's exceptions (IoException on a closed
// connection or a timeout, EnforceNotMet) become DEVMESH_ERR_BACKEND.
// A failure closes the context's connections, so that the peers waiting on
// this rank fail at once too (what revoke() does on purpose); a wait past
// the timeout option is DEVMESH_ERR_TIMEOUT.
// Safe from any thread; status is what a revoke carries (0 for a failure
// of this rank's own). Every pair is failed first, so that an operation
// waiting on this rank (the worker's) fails at once too (worker.cpp).
void close_connections(Comm& c, std::string why, int status = 0);

// The error of an operation on a broken communicator: the status a revoke
// carried (REVOKED when it carried none, or after a failure).
[[noreturn]] inline void throw_broken(Comm& c, const char* op) {
  std::lock_guard<std::mutex> lock(c.state);
  const auto status = c.revoke_status > 0 ? static_cast<Status>(c.revoke_status) : Status::revoked;
  throw Error(status, std::string(op) + ": the communicator was revoked (" + c.broken + ")");
}

template <class F>
void run(Comm& c, const char* op, F&& f) {
  if (c.is_broken.load()) throw_broken(c, op);
  try {
    f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    // Revoked while the operation ran: it failed because of the revoke.
    if (c.is_broken.load()) throw_broken(c, op);
    close_connections(c, e.what());
    const bool timed_out = std::string_view(e.what()).find("Timed out") != std::string_view::npos;
    throw Error(timed_out ? Status::timeout : Status::backend, std::string("Gloo's ") + op + " failed: " + e.what());
  }
}

// Allreduce of count elements of datatype with reduction op, in place when
// send == recv (reductions.cpp).
void allreduce_bytes(Comm& c, const void* send, void* recv, std::size_t count, int datatype, int op);
// Reduce to root: recv (count elements) written at the root only; send ==
// recv (or send == NULL) reduces in place. recv must be count elements on
// every rank (Gloo uses it as scratch).
void reduce_bytes(Comm& c, const void* send, void* recv, std::size_t count, int datatype, int op, int root);

// Point to point (point_to_point.cpp), as the ops table names them.
int gloo_send(void* comm, const void* buffer, std::size_t count, int datatype, int peer, void*);
int gloo_recv(void* comm, void* buffer, std::size_t count, int datatype, int peer, void*);
int gloo_isend(void* comm, const void* buffer, std::size_t count, int datatype, int peer, void*, void** request);
int gloo_irecv(void* comm, void* buffer, std::size_t count, int datatype, int peer, void*, void** request);
int gloo_wait(void* request);
int gloo_test(void* request, int* done);
int gloo_sendrecv(void* comm, const void* sendbuf, std::size_t sendcount, int sendtype, int dest, void* recvbuf,
                  std::size_t recvcount, int recvtype, int source, void*);
int gloo_batch(void* comm, const devmesh_backend_p2p_t ops[], std::size_t n, void*, void** request);

// Version 1's collectives and their started forms (collectives.cpp).
int gloo_allreduce(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void*);
int gloo_allgather(void* comm, const void* send, void* recv, std::size_t count, int datatype, void*);
int gloo_reduce_scatter(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void*);
int gloo_broadcast(void* comm, void* buffer, std::size_t count, int datatype, int root, void*);
int gloo_alltoall(void* comm, const void* send, void* recv, std::size_t count, int datatype, void*);
int gloo_barrier(void* comm, void*);
int gloo_iallreduce(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void*,
                    void** request);
int gloo_iallgather(void* comm, const void* send, void* recv, std::size_t count, int datatype, void*, void** request);
int gloo_ireduce_scatter(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, void*,
                         void** request);
int gloo_ibroadcast(void* comm, void* buffer, std::size_t count, int datatype, int root, void*, void** request);
int gloo_ialltoall(void* comm, const void* send, void* recv, std::size_t count, int datatype, void*, void** request);
int gloo_ibarrier(void* comm, void*, void** request);
// Version 4's variable-size and rooted collectives (vcollectives.cpp,
// rooted.cpp).
int gloo_alltoallv(void* comm, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[],
                   void* recv, const std::size_t recvcounts[], const std::size_t rdispls[], int datatype, void*,
                   void** request);
int gloo_allgatherv(void* comm, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
                    const std::size_t rdispls[], int datatype, void*, void** request);
int gloo_reduce_scatterv(void* comm, const void* send, void* recv, const std::size_t recvcounts[], int datatype, int op,
                         void*, void** request);
int gloo_gather(void* comm, const void* send, void* recv, std::size_t count, int datatype, int root, void*,
                void** request);
int gloo_gatherv(void* comm, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
                 const std::size_t rdispls[], int datatype, int root, void*, void** request);
int gloo_scatter(void* comm, const void* send, void* recv, std::size_t count, int datatype, int root, void*,
                 void** request);
int gloo_scatterv(void* comm, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
                  std::size_t recvcount, int datatype, int root, void*, void** request);
int gloo_reduce(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, int root, void*,
                void** request);

// Starts (request != NULL) or runs one collective through the worker
// (worker.hpp): make(c) checks the arguments and returns the body, which
// owns copies of what it needs past the call; an empty body has nothing to
// do (the request is then NULL).
template <class Make>
int launch(void* comm, void** request, Make&& make) {
  return plugin::guarded([&] {
    Comm& c = comm_arg(comm);
    std::function<void()> body = make(c);
    if (!body) {
      if (request != nullptr) *request = nullptr;
      return;
    }
    issue(c, request, std::move(body));
  });
}

// A pointer Gloo may wrap in a buffer for an empty segment (it refuses
// NULL).
inline char* nonnull(const void* p) {
  static char none = 0;
  return p != nullptr ? static_cast<char*>(const_cast<void*>(p)) : &none;
}

}  // namespace devmesh::gloo_backend
