// The Gloo backend: libdevmesh-backend-gloo.so, Gloo's collectives over its
// TCP transport behind backend_plugin.h.
//
// Bootstrap: a group's Gloo context is connected from addresses exchanged
// over the group's MPI communicator (one MPI_Alltoall of pair addresses),
// so no file system, Redis or environment rendezvous is involved
// (mpi_context.hpp, shared with bench/gloo).
//
// Options (key=value through open()):
//   hostname=NAME   the host name or address whose interface to listen on
//                   (may differ per rank);
//   iface=NAME      the network interface to listen on, e.g. eth0 (may
//                   differ per rank; not together with hostname);
//   timeout=SECONDS how long an operation (connecting included) may wait for
//                   a peer before failing with DEVMESH_ERR_BACKEND; the same
//                   on every rank. Default 1800 s, as PyTorch's process
//                   groups: a peer that dies closes its connections and is
//                   noticed at once, the timeout only bounds a peer that
//                   stops responding.
// Without hostname and iface: the address of this host's name
// (gethostname), and the loopback address when that name does not resolve
// or cannot be bound; the loopback fallback is refused (UNSUPPORTED) when
// the group spans several hosts, since peers could not reach it.
//
// What Gloo lacks and how it is served:
//   reduce_scatter  emulated: an allreduce of all size*count elements into a
//                   temporary buffer of that size, of which the caller's
//                   block is copied out; about twice the traffic of a ring
//                   reduce-scatter ((n-1)/n * 2 * size*count elements sent
//                   per rank instead of (n-1)/n * size*count).
//   reductions      Gloo takes the element-wise function from the caller;
//                   this backend supplies sum, prod, min and max for every
//                   data type, float16 and bfloat16 computed in float and
//                   rounded back after each step (as Gloo's own float16).
//   alltoall with send == recv: the send data is copied to a temporary
//                   first (count*size elements).
//   isend/irecv     Gloo unbound buffers (send/recv, then waitSend/waitRecv);
//                   Gloo has no non-blocking probe (a wait with a short
//                   timeout fails the whole context when it expires), so the
//                   first test() of a request hands its wait to a thread and
//                   later tests ask that thread; wait() alone needs none.
//   sendrecv        irecv, isend, then both waits.
//   non-blocking collectives (version 4's i-forms): Gloo has none; each
//                   communicator runs its started operations in order on a
//                   thread of its own (worker.hpp), and its blocking ones
//                   behind them when any are pending.
//   alltoallv, allgatherv with displacements other than the packed prefix
//                   sums, gatherv, scatterv, reduce_scatterv: see
//                   vcollectives.cpp and rooted.cpp.
#include <gloo/common/error.h>
#include <gloo/context.h>
#include <gloo/transport/context.h>
#include <gloo/transport/device.h>
#include <gloo/transport/tcp/device.h>
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/plugin_support.hpp"
#include "gloo_comm.hpp"
#include "mpi_context.hpp"

namespace {

using devmesh::Error;
using devmesh::Status;
namespace plugin = devmesh::plugin;

constexpr const char* kName = "gloo";

using namespace devmesh::gloo_backend;  // the members of the table
using devmesh::gloo_mpi::check_mpi;
using devmesh::gloo_mpi::MpiBootstrappedContext;

// ---- the ops table -----------------------------------------------------

const char* const per_rank_keys[] = {"hostname", "iface", nullptr};

// Gloo writes to its sockets with write(2): a peer that died would make the
// write raise SIGPIPE, whose default action ends this process too, before
// Gloo can report the closed connection. So a process that has not chosen
// a SIGPIPE action of its own ignores it (as network libraries commonly
// do); a handler the application installed is left alone.
void ignore_sigpipe() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      sigemptyset(&ignore.sa_mask);
      sigaction(SIGPIPE, &ignore, nullptr);
    }
  });
}

int gloo_init_host(const devmesh_backend_host_t* host) {
  devmesh::gloo_mpi::host_services() = host;
  return plugin::guarded([] { ignore_sigpipe(); });
}

int gloo_open(int n, const char* const keys[], const char* const values[], void** instance) {
  return plugin::guarded([&] {
    if (instance == nullptr || (n > 0 && (keys == nullptr || values == nullptr)) || n < 0)
      throw Error(Status::invalid_argument, "bad arguments to open");
    auto inst = std::make_unique<std::shared_ptr<Instance>>(std::make_shared<Instance>());
    Instance& in = **inst;
    for (int i = 0; i < n; ++i) {
      if (keys[i] == nullptr || values[i] == nullptr) throw Error(Status::invalid_argument, "NULL option key or value");
      std::string key = keys[i];
      if (key == "hostname" || key == "iface") {
        if (values[i][0] == '\0') throw Error(Status::invalid_argument, "option " + key + " is empty");
        (key == "hostname" ? in.hostname : in.iface) = values[i];
      } else if (key == "timeout") {
        double s = plugin::seconds_option(key, values[i]);
        if (s > 1e8) throw Error(Status::invalid_argument, "option timeout too large");
        in.timeout = std::chrono::milliseconds(std::max<long long>(1, static_cast<long long>(s * 1000)));
      } else {
        throw Error(Status::invalid_argument, "unknown option '" + key + "' (known: hostname, iface, timeout)");
      }
    }
    if (!in.hostname.empty() && !in.iface.empty())
      throw Error(Status::invalid_argument, "options hostname and iface exclude each other");
    *instance = inst.release();
  });
}

void gloo_close(void* instance) { delete static_cast<std::shared_ptr<Instance>*>(instance); }

// The device to listen on; see the defaults at the top of this file.
std::shared_ptr<gloo::transport::Device> make_device(Instance& in) {
  gloo::transport::tcp::attr attr;
  if (!in.iface.empty()) {
    attr.iface = in.iface;
    return gloo::transport::tcp::CreateDevice(attr);
  }
  if (!in.hostname.empty()) {
    attr.hostname = in.hostname;
    return gloo::transport::tcp::CreateDevice(attr);
  }
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') {
    try {
      attr.hostname = host;
      return gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception& e) {
      in.fallback_reason = std::string("host name '") + host + "': " + e.what();
    }
  } else {
    in.fallback_reason = "gethostname failed";
  }
  in.loopback_fallback = true;
  gloo::transport::tcp::attr lo;
  lo.hostname = "127.0.0.1";
  return gloo::transport::tcp::CreateDevice(lo);
}

// What comm_prepare made: the instance (its device made) and the group.
struct Prepared {
  std::shared_ptr<Instance> instance;
  MPI_Comm group;
  double deadline;  // the mesh's deadline in seconds, 0: none
};

// Local: the instance's device (listening socket), made once. The core
// cross-checks every member's result before comm_connect.
int gloo_comm_prepare(void* instance, const devmesh_backend_group_t* group, void** prepared) {
  return plugin::guarded([&] {
    auto& inst = *static_cast<std::shared_ptr<Instance>*>(instance);
    ignore_sigpipe();
    if (!inst->device) {
      try {
        inst->device = make_device(*inst);
      } catch (const std::exception& e) {
        throw Error(Status::backend,
                    std::string("cannot listen (") +
                        (inst->iface.empty() ? "hostname '" + inst->hostname + "'" : "iface '" + inst->iface + "'") +
                        "): " + e.what());
      }
    }
    // The group's deadline: read only when the core's struct has it.
    const bool has_deadline = group->size >= offsetof(devmesh_backend_group_t, deadline) + sizeof group->deadline;
    *prepared = new Prepared{inst, group->group, has_deadline ? group->deadline : 0.0};
  });
}

void gloo_comm_abandon(void* prepared) { delete static_cast<Prepared*>(prepared); }

// Collective over the group: the loopback fallback checked, then the full
// mesh of pairs connected.
int gloo_comm_connect(void* prepared, void** comm) {
  const std::unique_ptr<Prepared> p(static_cast<Prepared*>(prepared));
  return plugin::guarded([&] {
    const std::shared_ptr<Instance>& inst = p->instance;
    MPI_Comm mc = p->group;
    int rank = 0, size = 0;
    check_mpi(MPI_Comm_rank(mc, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(mc, &size), "MPI_Comm_size");
    // 1. The loopback fallback only serves a group on one host.
    MPI_Comm local = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split_type(mc, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
    int local_size = 0;
    int rc = MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
    check_mpi(rc, "MPI_Comm_size");
    int mine = inst->loopback_fallback ? 1 : 0, any = 0;
    check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, mc), "MPI_Allreduce");
    if (any && local_size != size)
      throw Error(Status::unsupported,
                  "the group spans several hosts but " +
                      (mine ? "this rank's " + inst->fallback_reason : std::string("another rank's host name")) +
                      " gave no address but loopback; set the option hostname= or iface=");

    // 2. Connect the full mesh of pairs (bounded by the timeout option); the
    // core cross-checks every member's outcome afterwards.
    auto c = std::make_unique<Comm>();
    c->instance = inst;
    c->device = inst->device;
    c->timeout = inst->timeout;
    // The mesh's deadline bounds every wait too (DEVMESH_BACKEND_CAP_DEADLINE).
    if (p->deadline > 0)
      c->timeout = std::min(
          c->timeout, std::chrono::milliseconds(std::max<long long>(1, static_cast<long long>(p->deadline * 1000))));
    auto ctx = std::make_shared<MpiBootstrappedContext>(rank, size);
    try {
      ctx->connect(mc, inst->device, c->timeout);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      throw Error(Status::backend, std::string("connecting the group failed: ") + e.what());
    }
    c->context = std::move(ctx);
    devmesh::gloo_mpi::log(DEVMESH_LOG_INFO, "connected a group of " + std::to_string(size) + " ranks (rank " +
                                                 std::to_string(rank) + ")");
    *comm = c.release();
  });
}

// Closes the context's connections: this rank's pending started operations
// fail with the status the revoke carried (REVOKED when none), its later
// operations with REVOKED, and every peer's pending or later operation with
// this rank fails at once (its connection is gone: BACKEND, Gloo's closed
// connection; TCP closes carry no status). Local and idempotent.
int gloo_revoke(void* comm, int status) {
  return plugin::guarded([&] {
    // Pending started operations fail with the status the revoke carried.
    const bool known = status > DEVMESH_SUCCESS && status <= DEVMESH_ERR_TIMEOUT;
    close_connections(comm_arg(comm), "revoked", known ? status : static_cast<int>(Status::revoked));
    devmesh::gloo_mpi::log(DEVMESH_LOG_INFO, "communicator revoked: its connections are closed");
  });
}

// The worker ends first (its requests have ended: requests end before
// comm_destroy), then the context.
void gloo_comm_destroy(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (c != nullptr) c->worker.stop();
  delete c;
}

int gloo_comm_native(void* comm, void** handle) {
  return plugin::guarded([&] {
    if (handle == nullptr) throw Error(Status::invalid_argument, "NULL handle pointer");
    *handle = &comm_arg(comm).context;  // std::shared_ptr<gloo::Context>*
  });
}

}  // namespace

// The table of version 4, and of version 3 for cores that know no newer
// one (both need the core's host services: cross-check, MPI error text,
// which older cores do not give).
namespace {

constexpr devmesh_backend_v2_t v2_table(unsigned abi) {
  return {
      {
          abi,
          kName,
          per_rank_keys,
          nullptr,  // init: init_host
          nullptr,  // finalize
          plugin::last_error,
          gloo_open,
          gloo_close,
          nullptr,  // comm_create: comm_prepare and comm_connect
          gloo_comm_destroy,
          gloo_comm_native,
          gloo_allreduce,
          gloo_allgather,
          gloo_reduce_scatter,
          gloo_broadcast,
          gloo_alltoall,
          gloo_barrier,
          gloo_send,
          gloo_recv,
          plugin::last_mpi_error,
      },
      gloo_isend,
      gloo_irecv,
      gloo_test,
      gloo_wait,
      gloo_sendrecv,
  };
}

}  // namespace

// The timeout option bounds every wait; a revoke closes the connections,
// which the peers see at once.
constexpr unsigned long long kCaps3 =
    DEVMESH_BACKEND_CAP_NONBLOCKING | DEVMESH_BACKEND_CAP_REVOKE_SPREADS | DEVMESH_BACKEND_CAP_DEADLINE;
// Every member of version 4; the started ones run on the communicator's
// worker thread (worker.hpp).
constexpr unsigned long long kCaps4 = kCaps3 | DEVMESH_BACKEND_CAP_ALLTOALLV | DEVMESH_BACKEND_CAP_ALLGATHERV |
                                      DEVMESH_BACKEND_CAP_REDUCE_SCATTERV | DEVMESH_BACKEND_CAP_GATHER |
                                      DEVMESH_BACKEND_CAP_GATHERV | DEVMESH_BACKEND_CAP_SCATTER |
                                      DEVMESH_BACKEND_CAP_SCATTERV | DEVMESH_BACKEND_CAP_REDUCE |
                                      DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES | DEVMESH_BACKEND_CAP_BATCH;

DEVMESH_BACKEND_EXPORT_V4 = {
    {
        v2_table(DEVMESH_BACKEND_ABI_VERSION_4),
        DEVMESH_BACKEND_MPI,
        kCaps4,
        gloo_init_host,
        nullptr,  // reduce_supported: every type and reduction
        gloo_comm_prepare,
        gloo_comm_connect,
        gloo_comm_abandon,
        gloo_revoke,
    },
    gloo_alltoallv,
    gloo_allgatherv,
    gloo_reduce_scatterv,
    gloo_gather,
    gloo_gatherv,
    gloo_scatter,
    gloo_scatterv,
    gloo_reduce,
    gloo_iallreduce,
    gloo_iallgather,
    gloo_ireduce_scatter,
    gloo_ibroadcast,
    gloo_ialltoall,
    gloo_ibarrier,
    gloo_batch,
    nullptr,  // topology: Gloo sees no level outside the host
};

DEVMESH_BACKEND_EXPORT_V3 = {
    v2_table(DEVMESH_BACKEND_ABI_VERSION_3),
    DEVMESH_BACKEND_MPI,
    kCaps3,
    gloo_init_host,
    nullptr,  // reduce_supported: every type and reduction
    gloo_comm_prepare,
    gloo_comm_connect,
    gloo_comm_abandon,
    gloo_revoke,
};
