// NCCL communicators for mesh dims, bootstrapped over the dims' MPI groups.
//
// The plugin libdevmesh-backend-nccl.so (devmesh/backend_plugin.h).
// Options (key=value): init=unique_id|split, split_share=0|1,
// scalable_from=N, timeout=SECONDS, device=N (per rank); docs/BACKENDS.md.
//
// Every wait of creation and finalisation in here is bounded by the
// timeout option: communicators are created non-blocking
// (ncclConfig_t.blocking = 0) and polled with ncclCommGetAsyncError; the
// MPI exchanges around them are non-blocking requests polled against the
// same deadline. A creation that fails or times out on any member aborts
// the NCCL communicator on every member and throws Error(backend).
// Collectives poll an ncclInProgress enqueue against it too, and a
// request's wait polls its event against it (TIMEOUT) and the revoke; the
// GPU work of a blocking form, which returns once enqueued, and barrier's
// stream synchronisation are not bounded (docs/ERRORS.md, "Waits: which
// are bounded").
//
// revoke() is local: it stops the communicator's work in flight on this
// rank (ncclCommRevoke from NCCL 2.28, ncclCommAbort before) and keeps the
// status, which the operations under way and every later one fail with.
#include "nccl_backend.hpp"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/plugin_support.hpp"
#include "nccl_comm.hpp"

namespace devmesh::backends {
namespace {

// How a group's communicator is created.
enum class Init {
  // A unique id from the group's rank 0, broadcast over the group's MPI
  // communicator, into ncclCommInitRankConfig (ncclCommInitRankScalable
  // for groups of at least scalable_from ranks). Collective over the group
  // only, so it also serves lazy comm(dim) calls. The default.
  unique_id,
  // ncclCommSplit of one root NCCL communicator (created on first use over
  // all root members). Collective over all root members, so used by
  // create_comms() only; lazy creation falls back to unique_id.
  split,
};

struct Options {
  int device = -1;  // -1: automatic (the caller's current device, else host-local rank % visible)
  Init init = Init::unique_id;
  bool split_share = false;  // ncclConfig_t.splitShare for the split path
  int scalable_from = 1024;  // group size from which InitRankScalable is used
  double timeout = 120.0;    // deadline of one creation, seconds
};

// CUDA context through the driver, only if the driver is already loaded
// (no context can exist otherwise), so no CUDA state is created here.
int caller_device() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return -1;
  using GetCurrent = int (*)(void**);
  auto get = reinterpret_cast<GetCurrent>(dlsym(lib, "cuCtxGetCurrent"));
  void* ctx = nullptr;
  int device = -1;
  if (get && get(&ctx) == 0 && ctx && cudaGetDevice(&device) != cudaSuccess) device = -1;
  dlclose(lib);
  return ctx ? device : -1;
}

// Two members of one NCCL communicator may not share a GPU: every member
// learns every member's (host, PCI bus id) and all fail alike on a repeat.
void check_distinct_gpus(MPI_Comm group, int device, const Deadline& d) {
  struct Id {
    char host[MPI_MAX_PROCESSOR_NAME];
    char bus[32];
  } mine{};
  int len = 0;
  check_mpi(MPI_Get_processor_name(mine.host, &len), "MPI_Get_processor_name");
  DEVMESH_CUDA(cudaDeviceGetPCIBusId(mine.bus, sizeof mine.bus, device));
  int n = 0;
  check_mpi(MPI_Comm_size(group, &n), "MPI_Comm_size");
  std::vector<Id> all(static_cast<std::size_t>(n));
  MPI_Request req;
  check_mpi(MPI_Iallgather(&mine, sizeof(Id), MPI_BYTE, all.data(), sizeof(Id), MPI_BYTE, group, &req),
            "MPI_Iallgather");
  wait_mpi(req, d, "exchanging GPU ids");
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < i; ++j)
      if (std::strcmp(all[i].host, all[j].host) == 0 && std::strcmp(all[i].bus, all[j].bus) == 0)
        fail(Status::invalid_argument, "ranks " + std::to_string(j) + " and " + std::to_string(i) +
                                           " of one NCCL group both use GPU " + all[i].bus + " on host " + all[i].host +
                                           " (one NCCL communicator needs one GPU per rank)");
}

// One instance per root mesh and option set.
class Instance {
 public:
  explicit Instance(const Options& options, int visible) : options_(options), visible_(visible) {}
  ~Instance() {
    if (root_) close_comm(root_, options_.timeout);
  }

  // The local step: the device, chosen once per instance and made current.
  void prepare(const devmesh_backend_group_t& ctx) {
    if (device_ < 0) {
      device_ = detail::select_device(options_.device, caller_device(), ctx.host_local_rank, visible_);
      if (host->log_level >= DEVMESH_LOG_INFO)
        host->log("nccl", DEVMESH_LOG_INFO,
                  ("device " + std::to_string(device_) + " of " + std::to_string(visible_) + " (host-local rank " +
                   std::to_string(ctx.host_local_rank) + ")")
                      .c_str());
    }
    DEVMESH_CUDA(cudaSetDevice(device_));
  }

  // The device prepare() picks for a group with this host-local rank (the
  // one it picked, once it has), or -1 where no GPU is visible. Makes
  // nothing current.
  int device_for(int host_local_rank) const {
    if (device_ >= 0) return device_;
    if (visible_ < 1) return -1;
    return detail::select_device(options_.device, caller_device(), host_local_rank, visible_);
  }

  // The collective step (after the core cross-checked every member's
  // prepare); the core cross-checks its outcome too, so a member whose
  // creation failed fails every member's call.
  Comm* connect(const devmesh_backend_group_t& ctx) {
    const Deadline d(options_.timeout);
    DEVMESH_CUDA(cudaSetDevice(device_));
    check_distinct_gpus(ctx.group, device_, d);
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    std::string error;
    try {
      if (options_.init == Init::split && ctx.all_root_members) {
        if (!root_) root_ = init_from_id(ctx.root, d);
        config.splitShare = options_.split_share ? 1 : 0;
        check_nccl(ncclCommSplit(root_, ctx.color, ctx.key, &comm, &config), "ncclCommSplit", root_);
        finish_split(comm, d);
      } else {
        comm = init_from_id(ctx.group, d);
      }
    } catch (const Error& e) {
      error = e.what();
    }
    if (!error.empty()) {
      if (comm) ncclCommAbort(comm);
      fail(Status::backend, error);
    }
    return new Comm(comm, device_, options_.timeout);
  }

 private:
  // Finishes a non-blocking split. NCCL writes the new communicator into
  // `comm` only when the split is complete, and reports its progress on the
  // parent, which is polled. At the deadline the parent is aborted, which
  // ends the split too (it could otherwise write `comm` after this returns);
  // a later split makes a new parent.
  void finish_split(ncclComm_t& comm, const Deadline& d) {
    const ncclResult_t r = wait_nccl(root_, d);
    if (r == ncclSuccess && comm) return finish(comm, d, "ncclCommSplit");
    ncclCommAbort(root_);
    root_ = nullptr;
    if (comm) ncclCommAbort(comm);
    comm = nullptr;
    if (r == ncclInProgress)
      fail(Status::backend,
           "ncclCommSplit did not finish within " + std::to_string(d.seconds) + " s; the communicators were aborted");
    check_nccl(r == ncclSuccess ? ncclInternalError : r, "ncclCommSplit");
  }

  // Finishes a non-blocking creation; aborts it at the deadline.
  void finish(ncclComm_t& comm, const Deadline& d, const char* call) {
    const ncclResult_t r = wait_nccl(comm, d);
    if (r == ncclSuccess) return;
    ncclCommAbort(comm);
    comm = nullptr;
    if (r == ncclInProgress)
      fail(Status::backend, std::string(call) + " did not finish within " + std::to_string(d.seconds) +
                                " s; the communicator was aborted");
    check_nccl(r, call);
  }

  // Unique ids from the group's first ranks, broadcast over its MPI
  // communicator, then ncclCommInitRankConfig (or InitRankScalable).
  ncclComm_t init_from_id(MPI_Comm group, const Deadline& d) {
    int n = 0, r = 0;
    check_mpi(MPI_Comm_size(group, &n), "MPI_Comm_size");
    check_mpi(MPI_Comm_rank(group, &r), "MPI_Comm_rank");
    const bool scalable = n >= options_.scalable_from;
    // One id per 1024 ranks for InitRankScalable, generated by ranks 0..nid-1.
    const int nid = scalable ? (n + 1023) / 1024 : 1;
    struct Slot {
      int ok;
      ncclUniqueId id;
    };
    Slot mine{1, {}};
    if (r < nid) mine.ok = ncclGetUniqueId(&mine.id) == ncclSuccess;
    std::vector<Slot> ids(static_cast<std::size_t>(nid));
    std::vector<int> counts(static_cast<std::size_t>(n), 0), displs(static_cast<std::size_t>(n), 0);
    for (int i = 0; i < nid; ++i) {
      counts[static_cast<std::size_t>(i)] = sizeof(Slot);
      displs[static_cast<std::size_t>(i)] = i * static_cast<int>(sizeof(Slot));
    }
    MPI_Request req;
    check_mpi(MPI_Iallgatherv(&mine, r < nid ? sizeof(Slot) : 0, MPI_BYTE, ids.data(), counts.data(), displs.data(),
                              MPI_BYTE, group, &req),
              "MPI_Iallgatherv");
    wait_mpi(req, d, "broadcasting the NCCL unique id");
    std::vector<ncclUniqueId> raw;
    for (const Slot& s : ids) {
      if (!s.ok) fail(Status::backend, "ncclGetUniqueId failed on the group's first rank");
      raw.push_back(s.id);
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    if (scalable) {
      check_nccl(ncclCommInitRankScalable(&comm, n, r, nid, raw.data(), &config), "ncclCommInitRankScalable");
      finish(comm, d, "ncclCommInitRankScalable");
    } else {
      check_nccl(ncclCommInitRankConfig(&comm, n, raw[0], r, &config), "ncclCommInitRankConfig");
      finish(comm, d, "ncclCommInitRankConfig");
    }
    return comm;
  }

  Options options_;
  int visible_ = 0;
  int device_ = -1;
  ncclComm_t root_ = nullptr;
};

int visible_devices = 0;

int init_host(const devmesh_backend_host_t* h) {
  host = h;
  return plugin::guarded([] {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1)
      fail(Status::unsupported, std::string("needs a CUDA device: none is usable (") +
                                    (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices visible") + ")");
    visible_devices = n;
  });
}

int open(int n, const char* const keys[], const char* const values[], void** instance) {
  return plugin::guarded([&] {
    Options o;
    for (int i = 0; i < n; ++i) {
      const std::string k = keys[i];
      const char* v = values[i];
      if (k == "init") {
        if (std::strcmp(v, "unique_id") == 0)
          o.init = Init::unique_id;
        else if (std::strcmp(v, "split") == 0)
          o.init = Init::split;
        else
          fail(Status::invalid_argument, "option init=" + std::string(v) + ": expected unique_id or split");
      } else if (k == "split_share") {
        o.split_share = plugin::integer_option(k, v, 0, 1) != 0;
      } else if (k == "scalable_from") {
        o.scalable_from = static_cast<int>(plugin::integer_option(k, v, 1, 1L << 30));
      } else if (k == "timeout") {
        o.timeout = plugin::seconds_option(k, v);
      } else if (k == "device") {
        o.device = static_cast<int>(plugin::integer_option(k, v, -1, 1L << 20));
      } else {
        fail(Status::invalid_argument,
             "no option '" + k + "' (known: init, split_share, scalable_from, timeout, device)");
      }
    }
    detail::select_device(o.device, -1, 0, visible_devices);  // validates the request
    *instance = new Instance(o, visible_devices);
  });
}

void close(void* instance) { delete static_cast<Instance*>(instance); }

// The NVLink domain of the instance's device for this host-local rank, as
// "domain=<cluster UUID>.<clique id>" (backend_plugin.h); none without a
// GPU, NVML or a fabric.
int topology(void* instance, int host_local_rank, char* buf, std::size_t size, std::size_t* written) {
  *written = 0;
  return plugin::guarded([&] {
    const int device = static_cast<const Instance*>(instance)->device_for(host_local_rank);
    const detail::NvlinkDomain domain =
        device < 0 ? detail::NvlinkDomain{"", "no CUDA device is visible"} : detail::nvlink_domain(device);
    if (host && host->log_level >= DEVMESH_LOG_INFO)
      host->log("nccl", DEVMESH_LOG_INFO,
                ("NVLink domain of device " + std::to_string(device) + ": " +
                 (domain.id.empty() ? "none (" + domain.why + ")" : domain.id))
                    .c_str());
    const std::string text = domain.id.empty() ? "" : "domain=" + domain.id;
    if (text.size() >= size) {
      *written = text.size();
      fail(Status::invalid_argument,
           "the levels take " + std::to_string(text.size() + 1) + " bytes, the buffer has " + std::to_string(size));
    }
    std::memcpy(buf, text.c_str(), text.size() + 1);
    *written = text.size();
  });
}

// What comm_prepare made: the instance (its device chosen) and the group.
struct Prepared {
  Instance* instance;
  devmesh_backend_group_t group;
};

int comm_prepare(void* instance, const devmesh_backend_group_t* group, void** prepared) {
  return plugin::guarded([&] {
    auto* inst = static_cast<Instance*>(instance);
    inst->prepare(*group);
    devmesh_backend_group_t g{};
    std::memcpy(&g, group, std::min(sizeof g, group->size));
    *prepared = new Prepared{inst, g};
  });
}

void comm_abandon(void* prepared) { delete static_cast<Prepared*>(prepared); }

int comm_connect(void* prepared, void** comm) {
  const std::unique_ptr<Prepared> p(static_cast<Prepared*>(prepared));
  return plugin::guarded([&] { *comm = p->instance->connect(p->group); });
}

int revoke(void* comm, int status) {
  return plugin::guarded([&] { comm_of(comm).revoke(status); });
}

void comm_destroy(void* comm) { delete static_cast<Comm*>(comm); }

int comm_native(void* comm, void** handle) {
  *handle = &comm_of(comm).comm;
  return DEVMESH_SUCCESS;
}

// The device is each rank's own choice; everything else must match.
constexpr const char* per_rank_keys[] = {"device", nullptr};

// The version 3 table, exported as version abi (3, or 4 inside version
// 4's) with capabilities caps.
constexpr devmesh_backend_v3_t v3_table(unsigned abi, unsigned long long caps) {
  return {
      {
          {
              abi,
              "nccl",
              per_rank_keys,
              nullptr,  // init: init_host
              nullptr,
              plugin::last_error,
              open,
              close,
              nullptr,  // comm_create: comm_prepare and comm_connect
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
      caps,
      init_host,
      nullptr,  // reduce_supported: every type and reduction
      comm_prepare,
      comm_connect,
      comm_abandon,
      revoke,
  };
}

// A device per rank by its host-local rank; CUDA streams; creation and
// enqueue waits, and a request's wait, bounded by the timeout option.
// revoke() is local, not REVOKE_SPREADS: NCCL tells no other member (they
// learn of a failure through the core: a fault-tolerant mesh's MPI root
// communicator). It may run beside an operation on another thread only
// through ncclCommRevoke (NCCL >= 2.28): ncclCommAbort frees the
// communicator under that operation.
constexpr unsigned long long v3_caps = DEVMESH_BACKEND_CAP_HOST_LOCAL_RANK | DEVMESH_BACKEND_CAP_STREAMS |
                                       DEVMESH_BACKEND_CAP_NONBLOCKING | DEVMESH_BACKEND_CAP_DEADLINE |
                                       (DEVMESH_NCCL_HAS_REVOKE ? DEVMESH_BACKEND_CAP_REVOKE_ANY_THREAD : 0);
// Every member of version 4.
constexpr unsigned long long v4_caps =
    v3_caps | DEVMESH_BACKEND_CAP_ALLTOALLV | DEVMESH_BACKEND_CAP_ALLGATHERV | DEVMESH_BACKEND_CAP_REDUCE_SCATTERV |
    DEVMESH_BACKEND_CAP_GATHER | DEVMESH_BACKEND_CAP_GATHERV | DEVMESH_BACKEND_CAP_SCATTER |
    DEVMESH_BACKEND_CAP_SCATTERV | DEVMESH_BACKEND_CAP_REDUCE | DEVMESH_BACKEND_CAP_NONBLOCKING_COLLECTIVES |
    DEVMESH_BACKEND_CAP_BATCH | DEVMESH_BACKEND_CAP_TOPOLOGY;

}  // namespace
}  // namespace devmesh::backends

// Version 4, and version 3 for cores that know no newer one (the plugin
// uses the core's host services, which cores before version 3 do not give).
DEVMESH_BACKEND_EXPORT_V4 = {
    devmesh::backends::v3_table(DEVMESH_BACKEND_ABI_VERSION_4, devmesh::backends::v4_caps),
    devmesh::backends::alltoallv,
    devmesh::backends::allgatherv,
    devmesh::backends::reduce_scatterv,
    devmesh::backends::gather,
    devmesh::backends::gatherv,
    devmesh::backends::scatter,
    devmesh::backends::scatterv,
    devmesh::backends::reduce,
    devmesh::backends::iallreduce,
    devmesh::backends::iallgather,
    devmesh::backends::ireduce_scatter,
    devmesh::backends::ibroadcast,
    devmesh::backends::ialltoall,
    devmesh::backends::ibarrier,
    devmesh::backends::batch,
    devmesh::backends::topology,
};
DEVMESH_BACKEND_EXPORT_V3 = devmesh::backends::v3_table(DEVMESH_BACKEND_ABI_VERSION_3, devmesh::backends::v3_caps);
