// A gloo::Context connected over an MPI communicator: the bootstrap of the
// Gloo backend (gloo_backend.cpp), shared with programs that need a raw Gloo
// context over the same group (bench/gloo compares the two). Internal: not
// installed.
//
// Each rank creates one pair per peer, the pair addresses are exchanged with
// one MPI_Alltoall, and the pairs connect in rank order, as Gloo's own
// gloo::rendezvous::Context::connectFullMesh does through a store; so no file
// system, Redis or environment rendezvous is involved.
#pragma once

#include <gloo/context.h>
#include <gloo/transport/context.h>
#include <gloo/transport/device.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "devmesh/backend_plugin.h"
#include "devmesh/status.hpp"

namespace devmesh::gloo_mpi {

[[noreturn]] inline void backend_error(const std::string& what) { throw Error(Status::backend, what); }

// The core's services (devmesh_backend_host_t), once the plugin's init_host
// was given them; nullptr in programs that use this header alone.
inline const devmesh_backend_host_t*& host_services() {
  static const devmesh_backend_host_t* host = nullptr;
  return host;
}

// One line of the core's log (DEVMESH_LOG) when the level is wanted;
// nothing in programs that use this header alone.
inline void log(int level, const std::string& message) {
  if (const devmesh_backend_host_t* h = host_services(); h && level <= h->log_level)
    h->log("gloo", level, message.c_str());
}

// An MPI call's failure as Error(backend) with the code and class kept; the
// text from the core's routine (safe on every MPI), else the code alone.
inline void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[1024] = "";
  int cls = 0;
  if (const devmesh_backend_host_t* h = host_services())
    h->mpi_error(rc, text, sizeof text, &cls);
  else
    std::snprintf(text, sizeof text, "MPI error code %d", rc);
  throw Error(Status::backend, std::string("gloo: ") + call + " failed: " + text, rc, cls);
}

class MpiBootstrappedContext : public gloo::Context {
 public:
  MpiBootstrappedContext(int rank, int size) : gloo::Context(rank, size) {}

  // Collective over comm (whose rank and size this context has). Throws on
  // failure; the caller decides how ranks learn of it.
  void connect(MPI_Comm comm, const std::shared_ptr<gloo::transport::Device>& dev, std::chrono::milliseconds timeout) {
    setTimeout(timeout);
    auto tc = dev->createContext(rank, size);
    tc->setTimeout(timeout);
    std::vector<std::vector<char>> mine(static_cast<std::size_t>(size));
    std::size_t len = 0;
    for (int i = 0; i < size; ++i) {
      if (i == rank) continue;
      mine[i] = tc->createPair(i)->address().bytes();
      len = std::max(len, mine[i].size());
    }
    // Every TCP address has the same length; take the maximum all the same, so
    // that one rank's surprise cannot desynchronise the exchange.
    unsigned long long mylen = len, maxlen = 0;
    check_mpi(MPI_Allreduce(&mylen, &maxlen, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm), "MPI_Allreduce");
    if (maxlen > static_cast<unsigned long long>(INT_MAX) / static_cast<unsigned>(size))
      backend_error("gloo: pair addresses too long");
    const int block = static_cast<int>(maxlen);
    std::vector<char> out(static_cast<std::size_t>(block) * size), in(out.size());
    for (int i = 0; i < size; ++i)
      if (i != rank) std::copy(mine[i].begin(), mine[i].end(), out.begin() + std::ptrdiff_t(i) * block);
    check_mpi(MPI_Alltoall(out.data(), block, MPI_BYTE, in.data(), block, MPI_BYTE, comm), "MPI_Alltoall");
    // In rank order, as connectFullMesh: each pair's listening side accepts
    // on the device's event loop, so this order cannot deadlock.
    for (int i = 0; i < size; ++i) {
      if (i == rank) continue;
      std::vector<char> peer(in.begin() + std::ptrdiff_t(i) * block,
                             in.begin() + std::ptrdiff_t(i) * block + static_cast<std::ptrdiff_t>(mine[i].size()));
      tc->getPair(i)->connect(peer);
    }
    device_ = dev;
    transportContext_ = std::move(tc);
  }
};

}  // namespace devmesh::gloo_mpi
