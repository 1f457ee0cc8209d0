// The backend interface: what a communication library (MPI, NCCL) provides
// to a mesh dim.
//
// The mesh runtime always builds the dim's MPI sub-communicator first (it
// is the bootstrap every backend can use); a backend then *upgrades* that
// group to its own Communicator. Adding a backend means implementing these
// two classes in backends/<name>/ and one registration line in
// lib/runtime/backends.cpp.
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "devmesh/status.hpp"

namespace devmesh {

enum class DataType : int {
  int8, uint8, int32, uint32, int64, uint64, float16, bfloat16, float32, float64,
};
enum class ReduceOp : int { sum, prod, min, max };

DEVMESH_API std::size_t size_of(DataType t) noexcept;

template <class T> constexpr DataType datatype_of();
template <> constexpr DataType datatype_of<std::int8_t>() { return DataType::int8; }
template <> constexpr DataType datatype_of<std::uint8_t>() { return DataType::uint8; }
template <> constexpr DataType datatype_of<std::int32_t>() { return DataType::int32; }
template <> constexpr DataType datatype_of<std::uint32_t>() { return DataType::uint32; }
template <> constexpr DataType datatype_of<std::int64_t>() { return DataType::int64; }
template <> constexpr DataType datatype_of<std::uint64_t>() { return DataType::uint64; }
template <> constexpr DataType datatype_of<float>() { return DataType::float32; }
template <> constexpr DataType datatype_of<double>() { return DataType::float64; }

// One group's communicator in one backend. Every collective is collective
// over the group; counts are elements, buffers contiguous. `stream` is the
// backend's stream (cudaStream_t for NCCL; nullptr: the communicator's
// own), ignored by MPI. Failures throw Error(backend); an operation a
// backend lacks throws Error(unsupported) naming the backend.
class DEVMESH_API Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string_view backend() const noexcept = 0;
  virtual int rank() const noexcept = 0;
  virtual int size() const noexcept = 0;
  // The backend's own handle: MPI_Comm* for "mpi", ncclComm_t* for "nccl".
  virtual void* native_handle() noexcept = 0;

  // recv[i] = op over ranks of send[i], i < count.
  virtual void allreduce(const void* send, void* recv, std::size_t count, DataType type,
                         ReduceOp op, void* stream = nullptr) = 0;
  // recv[r*count + i] = send[i] of rank r.
  virtual void allgather(const void* send, void* recv, std::size_t count, DataType type,
                         void* stream = nullptr) = 0;
  // recv[i] = op over ranks of send[rank*count + i], i < count.
  virtual void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type,
                              ReduceOp op, void* stream = nullptr) = 0;
  virtual void broadcast(void* buffer, std::size_t count, DataType type, int root,
                         void* stream = nullptr) = 0;
  // recv[r*count + i] = send[rank*count + i] of rank r.
  virtual void alltoall(const void* send, void* recv, std::size_t count, DataType type,
                        void* stream = nullptr) = 0;
  virtual void barrier(void* stream = nullptr) = 0;
  // Point to point with a group rank; blocking for MPI, stream-ordered for NCCL.
  virtual void send(const void* buffer, std::size_t count, DataType type, int peer,
                    void* stream = nullptr) = 0;
  virtual void recv(void* buffer, std::size_t count, DataType type, int peer,
                    void* stream = nullptr) = 0;
};

// How the NCCL backend creates a group's communicator.
enum class NcclInit : int {
  // A unique id from the group's rank 0, broadcast over the group's MPI
  // communicator, into ncclCommInitRankConfig (ncclCommInitRankScalable
  // for groups of at least scalable_from ranks). Collective over the group
  // only, so it also serves lazy comm(dim) calls. The default.
  unique_id = 0,
  // ncclCommSplit of one root NCCL communicator (created on first use over
  // all root members). Collective over all root members, so used by
  // create_comms() only; lazy creation falls back to unique_id.
  split = 1,
};

// Settings of the backends, part of MeshOptions (same on every rank).
struct BackendOptions {
  // CUDA device of the caller: -1 = automatic (keep the device the caller
  // already made current, else the node-local rank modulo the visible
  // devices), >= 0 = that device.
  int device = -1;
  NcclInit nccl_init = NcclInit::unique_id;
  bool nccl_split_share = false;  // ncclConfig_t.splitShare for the split path
  int nccl_scalable_from = 1024;  // group size from which InitRankScalable is used
  // NCCL only: the deadline of one NCCL communicator's creation (and of its
  // finalisation); past it the creation is aborted and fails with
  // Error(backend) on every member that takes part. It bounds no MPI wait:
  // the dim's MPI communicator, made first, and every MPI collective wait
  // as long as MPI does (docs/ERRORS.md, "Waits: which are bounded").
  double init_timeout_seconds = 120.0;
};

// What a backend gets to build a group's communicator from.
struct GroupContext {
  MPI_Comm group = MPI_COMM_NULL;  // the group's MPI communicator, owned by the mesh
  MPI_Comm root = MPI_COMM_NULL;   // all members of the root mesh, owned by the mesh
  int host_local_rank = 0;         // the caller's rank among root members on its host
  // True when every member of the root creates this layout in the same call
  // (create_comms), so root-collective paths such as ncclCommSplit may be
  // used; color/key then identify the group (its smallest root index) and
  // the caller's rank in it.
  bool all_root_members = false;
  int color = 0;
  int key = 0;
};

// One backend instance per root mesh (it may hold per-root state, such as a
// root NCCL communicator to split from).
class DEVMESH_API Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const noexcept = 0;
  // Collective over the members of ctx.group. The returned communicator is
  // destroyed before ctx.group is freed.
  virtual std::unique_ptr<Communicator> create(const GroupContext& ctx) = 0;
};

// The backend registered under `name`, for one root mesh.
// Errors: an unknown name -> invalid_argument; a backend this build or
// machine cannot run -> unsupported, saying why.
DEVMESH_API std::unique_ptr<Backend> make_backend(std::string_view name,
                                                  const BackendOptions& options = {});

// Throws Error(invalid_argument) unless `name` is a registered backend
// (whether or not this build or machine can run it).
DEVMESH_API void check_backend_name(std::string_view name);

}  // namespace devmesh
