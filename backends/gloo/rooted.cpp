// The Gloo backend's gatherv and scatterv: Gloo has neither, so the root
// and each member with a non-empty segment exchange it as one unbound-buffer
// transfer, on a slot prefix of their own (apart from the collectives'
// prefixes of gloo/types.h, 0x01 .. 0x08, and point to point's, 0x40).
// Like every collective they run through launch() (gloo_comm.hpp), in order
// with the others; transfers between two ranks on one slot match in order.
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "gloo_comm.hpp"
#include "mpi_context.hpp"

namespace devmesh::gloo_backend {
namespace {

using Body = std::function<void()>;
using Counts = std::vector<std::size_t>;
using Buffer = std::unique_ptr<gloo::transport::UnboundBuffer>;

constexpr uint8_t kRootedSlotPrefix = 0x41;

uint64_t rooted_slot() { return gloo::Slot::build(kRootedSlotPrefix, 0); }

Counts copy_of(const std::size_t* a, std::size_t n) { return a ? Counts(a, a + n) : Counts(n, 0); }

// Waits for every transfer started; send: the buffers sent, else received.
void wait_all(Comm& c, std::vector<Buffer>& buffers, bool send) {
  for (Buffer& b : buffers) {
    const bool done = send ? b->waitSend(c.timeout) : b->waitRecv(c.timeout);
    if (!done) devmesh::gloo_mpi::backend_error("aborted");
  }
}

// The root receives segment r at recv + rdispls[r] from every other rank r.
void gatherv_root(Comm& c, const char* send, std::size_t sendcount, char* recv, const Counts& rc, const Counts& rd,
                  std::size_t es, int root) {
  char* own = recv + rd[static_cast<std::size_t>(root)] * es;
  if (sendcount > 0 && own != send) std::memmove(own, send, sendcount * es);
  std::vector<Buffer> in;
  for (std::size_t r = 0; r < rc.size(); ++r) {
    if (static_cast<int>(r) == root || rc[r] == 0) continue;
    in.push_back(c.context->createUnboundBuffer(recv + rd[r] * es, rc[r] * es));
    in.back()->recv(static_cast<int>(r), rooted_slot());
  }
  wait_all(c, in, false);
}

// The root sends segment r (sendcounts[r] at sdispls[r]) to every other
// rank r.
void scatterv_root(Comm& c, const char* send, const Counts& sc, const Counts& sd, char* recv, std::size_t recvcount,
                   std::size_t es, int root) {
  const char* own = send + sd[static_cast<std::size_t>(root)] * es;
  if (recvcount > 0 && own != recv) std::memmove(recv, own, recvcount * es);
  std::vector<Buffer> out;
  for (std::size_t r = 0; r < sc.size(); ++r) {
    if (static_cast<int>(r) == root || sc[r] == 0) continue;
    out.push_back(c.context->createUnboundBuffer(const_cast<char*>(send) + sd[r] * es, sc[r] * es));
    out.back()->send(static_cast<int>(r), rooted_slot());
  }
  wait_all(c, out, true);
}

// A member's one transfer with the root.
void with_root(Comm& c, void* buffer, std::size_t bytes, int root, bool send) {
  if (bytes == 0) return;
  std::vector<Buffer> one;
  one.push_back(c.context->createUnboundBuffer(buffer, bytes));
  if (send)
    one.back()->send(root, rooted_slot());
  else
    one.back()->recv(root, rooted_slot());
  wait_all(c, one, send);
}

}  // namespace

int gloo_gatherv(void* comm, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
                 const std::size_t rdispls[], int datatype, int root, void*, void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    const std::size_t es = element_size(datatype), n = static_cast<std::size_t>(c.context->size);
    bytes_of(sendcount, es);
    if (c.context->rank != root) {
      if (sendcount == 0) return {};
      return [&c, send, bytes = sendcount * es, root] {
        run(c, "gatherv", [&] { with_root(c, const_cast<void*>(send), bytes, root, true); });
      };
    }
    return [&c, send, sendcount, recv, rc = copy_of(recvcounts, n), rd = copy_of(rdispls, n), es, root] {
      run(c, "gatherv", [&] {
        gatherv_root(c, static_cast<const char*>(send), sendcount, static_cast<char*>(recv), rc, rd, es, root);
      });
    };
  });
}

int gloo_scatterv(void* comm, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
                  std::size_t recvcount, int datatype, int root, void*, void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    const std::size_t es = element_size(datatype), n = static_cast<std::size_t>(c.context->size);
    bytes_of(recvcount, es);
    if (c.context->rank != root) {
      if (recvcount == 0) return {};
      return [&c, recv, bytes = recvcount * es, root] {
        run(c, "scatterv", [&] { with_root(c, recv, bytes, root, false); });
      };
    }
    return [&c, send, sc = copy_of(sendcounts, n), sd = copy_of(sdispls, n), recv, recvcount, es, root] {
      run(c, "scatterv", [&] {
        scatterv_root(c, static_cast<const char*>(send), sc, sd, static_cast<char*>(recv), recvcount, es, root);
      });
    };
  });
}

}  // namespace devmesh::gloo_backend
