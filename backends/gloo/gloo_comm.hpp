// The Gloo backend's state shared by its files (gloo_backend.cpp: the ops
// table and the collectives; reductions.cpp: the element-wise reductions;
// point_to_point.cpp: send, recv and their requests). Internal: not
// installed.
#pragma once

#include <gloo/context.h>
#include <gloo/transport/device.h>

#include <chrono>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "common/plugin_support.hpp"

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
  // After a failure the context's connections are closed (so that the
  // peers waiting on this rank fail at once too); later calls fail at once.
  std::string broken;
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
inline void close_connections(Comm& c, std::string why) {
  if (!c.broken.empty()) return;
  c.broken = std::move(why);
  try {
    c.context->closeConnections();
  } catch (...) {
  }
}

template <class F>
void run(Comm& c, const char* op, F&& f) {
  if (!c.broken.empty())
    throw Error(Status::revoked, std::string(op) + ": the communicator was revoked (" + c.broken + ")");
  try {
    f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    close_connections(c, e.what());
    const bool timed_out = std::string_view(e.what()).find("Timed out") != std::string_view::npos;
    throw Error(timed_out ? Status::timeout : Status::backend, std::string("Gloo's ") + op + " failed: " + e.what());
  }
}

// Allreduce of count elements of datatype with reduction op, in place when
// send == recv (reductions.cpp).
void allreduce_bytes(Comm& c, const void* send, void* recv, std::size_t count, int datatype, int op);

// Point to point (point_to_point.cpp), as the ops table names them.
int gloo_send(void* comm, const void* buffer, std::size_t count, int datatype, int peer, void*);
int gloo_recv(void* comm, void* buffer, std::size_t count, int datatype, int peer, void*);
int gloo_isend(void* comm, const void* buffer, std::size_t count, int datatype, int peer, void*, void** request);
int gloo_irecv(void* comm, void* buffer, std::size_t count, int datatype, int peer, void*, void** request);
int gloo_wait(void* request);
int gloo_test(void* request, int* done);
int gloo_sendrecv(void* comm, const void* sendbuf, std::size_t sendcount, int sendtype, int dest, void* recvbuf,
                  std::size_t recvcount, int recvtype, int source, void*);

}  // namespace devmesh::gloo_backend
