// The C API's requests (include/devmesh/devmesh.h): devmesh_isend,
// devmesh_irecv, devmesh_batch, and devmesh_wait, devmesh_test and
// devmesh_waitall, which end the requests of every started operation.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capi/capi.hpp"

using namespace devmesh::capi;

namespace devmesh::capi {
namespace {

// The process's pending requests. Never destroyed: a request still pending
// at exit is left alone (its communicator went with MPI_Finalize).
RequestTable& live_requests() {
  static RequestTable* table = new RequestTable;
  return *table;
}

const char* ended_text() {
  return "request already ended (waited or tested to completion before, a stale copy of one that was, "
         "or not made by devmesh)";
}

// The pending request of a token, taken out of the table; *request is set
// to DEVMESH_REQUEST_NULL only when the token was live (a bad token leaves
// it as it was).
std::unique_ptr<PendingRequest> take(devmesh_request_t* request) {
  std::unique_ptr<PendingRequest> r = live_requests().remove(*request);
  if (!r) invalid(ended_text());
  *request = DEVMESH_REQUEST_NULL;
  return r;
}

// Ends *request (DEVMESH_REQUEST_NULL: nothing to do); the request is
// ended and *request NULL whatever its wait reports.
void end(devmesh_request_t* request) {
  if (*request == DEVMESH_REQUEST_NULL) return;
  take(request)->request.wait();
}

template <bool Send, class Buffer>
int start(const char* fn, devmesh_t m, const char* dim, Buffer buffer, size_t count, int datatype, int peer,
          void* stream, devmesh_request_t* request) {
  return guard(fn, [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    const auto t = datatype_arg(datatype);
    need(request, "request");
    devmesh::Communicator& c = mesh.communicator(d);
    give_request(Send ? c.isend(buffer, count, t, peer, stream)
                      : c.irecv(const_cast<void*>(static_cast<const void*>(buffer)), count, t, peer, stream),
                 request);
  });
}

}  // namespace

void give_request(devmesh::Request r, devmesh_request_t* out) {
  if (!r.pending()) {
    *out = DEVMESH_REQUEST_NULL;
    return;
  }
  auto pending = std::make_unique<PendingRequest>();
  pending->request = std::move(r);
  const devmesh_request_t token = live_requests().add(std::move(pending));
  *out = token;
}

}  // namespace devmesh::capi

extern "C" {

int devmesh_isend(devmesh_t m, const char* dim, const void* buffer, size_t count, int datatype, int peer, void* stream,
                  devmesh_request_t* request) {
  return start<true>("devmesh_isend", m, dim, buffer, count, datatype, peer, stream, request);
}

int devmesh_irecv(devmesh_t m, const char* dim, void* buffer, size_t count, int datatype, int peer, void* stream,
                  devmesh_request_t* request) {
  return start<false>("devmesh_irecv", m, dim, buffer, count, datatype, peer, stream, request);
}

int devmesh_batch(devmesh_t m, const char* dim, const devmesh_p2p_t ops[], int n, void* stream,
                  devmesh_request_t* request) {
  return guard("devmesh_batch", [&] {
    const Mesh& mesh = mesh_of(m);
    const auto d = dim_arg(dim);
    need(request, "request");
    if (n < 0) invalid("n " + std::to_string(n) + " is negative");
    if (n > 0) need(ops, "ops");
    std::vector<devmesh::Communicator::P2P> v(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < v.size(); ++i)
      v[i] = {ops[i].send != 0, ops[i].peer, ops[i].buffer, ops[i].count, datatype_arg(ops[i].datatype)};
    give_request(mesh.communicator(d).batch(v, stream), request);
  });
}

int devmesh_wait(devmesh_request_t* request) {
  return guard("devmesh_wait", [&] { end(need(request, "request")); });
}

int devmesh_test(devmesh_request_t* request, int* done) {
  return guard("devmesh_test", [&] {
    need(request, "request");
    need(done, "done");
    if (*request == DEVMESH_REQUEST_NULL) {
      *done = 1;
      return;
    }
    PendingRequest* r = live_requests().find(*request);
    if (!r) invalid(ended_text());
    bool finished = false;
    try {
      finished = r->request.test();
    } catch (...) {
      take(request);  // ended by the failure: the token goes
      throw;
    }
    if (finished) take(request);
    *done = finished ? 1 : 0;
  });
}

int devmesh_waitall(int n, devmesh_request_t requests[]) {
  const int checked = guard("devmesh_waitall", [&] {
    if (n < 0) invalid("n " + std::to_string(n) + " is negative");
    if (n > 0) need(requests, "requests");
  });
  if (checked != DEVMESH_SUCCESS) return checked;
  int first = DEVMESH_SUCCESS;
  std::string message;
  for (int i = 0; i < n; ++i) {
    const int rc = guard("devmesh_waitall", [&] {
      try {
        end(&requests[i]);
      } catch (const devmesh::Error& e) {
        throw devmesh::Error(e.status(), "requests[" + std::to_string(i) + "]: " + e.what());
      }
    });
    if (rc != DEVMESH_SUCCESS && first == DEVMESH_SUCCESS) {
      first = rc;
      message = last_error_text;
    }
  }
  if (first != DEVMESH_SUCCESS) last_error_text = message;
  return first;
}

}  // extern "C"
