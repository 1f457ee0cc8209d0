// The backend collectives of a mesh dim, for C++ callers.
//
// The mesh runtime always builds the dim's MPI sub-communicator first (it
// is the bootstrap every backend can use); the dim's backend then
// *upgrades* that group to its own communicator. Backends are plugins
// behind the C interface of devmesh/backend_plugin.h ("mpi" built in, any
// other name loaded as libdevmesh-backend-<name>.so); Communicator is how
// C++ code calls whichever one a dim has.
#pragma once

#include "devmesh/export.hpp"  // first: it stops a compile below C++20
#if DEVMESH_CXX20              // below C++20, export.hpp's #error is the only message

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "devmesh/status.hpp"

extern "C" {
typedef struct devmesh_backend_v1_s devmesh_backend_v1_t;  // devmesh/backend_plugin.h
}

namespace devmesh {

namespace detail {
// A loaded backend's table, as the core calls it (opaque here).
struct PluginTable;
// What a Request shares with its communicator (opaque here).
class RequestHost;
}  // namespace detail

enum class DataType : int {
  int8,
  uint8,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
};
enum class ReduceOp : int { sum, prod, min, max };

DEVMESH_API std::size_t size_of(DataType t) noexcept;

// Registers a backend plugin table linked into the program, found by its
// name before any file search (devmesh_register_backend in C; the rules
// and errors are in devmesh/backend_plugin.h). Not collective.
DEVMESH_API void register_backend(const devmesh_backend_v1_t* table);

template <class T>
constexpr DataType datatype_of();
template <>
constexpr DataType datatype_of<std::int8_t>() {
  return DataType::int8;
}
template <>
constexpr DataType datatype_of<std::uint8_t>() {
  return DataType::uint8;
}
template <>
constexpr DataType datatype_of<std::int32_t>() {
  return DataType::int32;
}
template <>
constexpr DataType datatype_of<std::uint32_t>() {
  return DataType::uint32;
}
template <>
constexpr DataType datatype_of<std::int64_t>() {
  return DataType::int64;
}
template <>
constexpr DataType datatype_of<std::uint64_t>() {
  return DataType::uint64;
}
template <>
constexpr DataType datatype_of<float>() {
  return DataType::float32;
}
template <>
constexpr DataType datatype_of<double>() {
  return DataType::float64;
}

// A non-blocking operation of a Communicator (MPI_Request's counterpart):
// an isend or irecv, or a started collective (iallreduce, ialltoallv, ...,
// batch); move-only. Not collective: it concerns the calling rank. An
// empty Request (default-constructed, moved from, or of a transfer with
// MPI_PROC_NULL) is complete. While pending, the caller does not touch the
// buffers it writes nor change those it reads.
//
// Its waits keep the mesh's fault state as a blocking call does: a wait is
// a wait of the mesh (its deadline revokes the mesh, and the wait it cut
// reports TIMEOUT), a failure revokes the communicator and the mesh
// (PROC_FAILED where a member died), and a wait on a revoked mesh reports
// REVOKED once the backend ended the operation.
//
// Destroying (or assigning over) a pending Request waits for it, so the
// buffer is never written after its owner moved on (MPI leaks the request
// instead); a failure there is swallowed, so call wait() to see it.
// Destroying the mesh (its communicator) ends every pending Request of it
// first, the same way; a Request that outlives its mesh is then ended, and
// its wait() and test() throw Error(invalid_argument).
class DEVMESH_API Request {
 public:
  Request() noexcept = default;
  // A pending request of a backend on its communicator's request host,
  // of which it holds one reference; made by the Communicator, two
  // pointers and no allocation.
  Request(detail::RequestHost* host, void* request) noexcept : host_(host), request_(request) {}
  Request(Request&& other) noexcept
      : host_(std::exchange(other.host_, nullptr)), request_(std::exchange(other.request_, nullptr)) {}
  Request& operator=(Request&& other) noexcept;
  ~Request();

  // Blocks until the operation is done (host backends) or has run on its
  // stream (NCCL), then the Request is empty. Failures throw Error (backend,
  // or as above PROC_FAILED, REVOKED, TIMEOUT); the Request is empty
  // afterwards all the same.
  void wait();
  // True (and the Request becomes empty) when the operation is done; never
  // blocks, except on a revoked mesh, where it waits for the backend to end
  // the operation and throws Error(revoked). Failures as wait().
  bool test();
  // wait() on each in turn, as one wait of the mesh (the deadline bounds
  // the whole call); the first failure is thrown after every request has
  // ended.
  static void wait_all(std::span<Request> requests);
  bool pending() const noexcept { return request_ != nullptr; }

 private:
  void release() noexcept;  // the host's reference, request_ already ended

  detail::RequestHost* host_ = nullptr;
  void* request_ = nullptr;
};

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
  // The address of the backend's own handle: MPI_Comm* for "mpi",
  // ncclComm_t* for "nccl" (see the backend's documentation).
  virtual void* native_handle() noexcept = 0;

  // recv[i] = op over ranks of send[i], i < count.
  virtual void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                         void* stream = nullptr) = 0;
  // recv[r*count + i] = send[i] of rank r.
  virtual void allgather(const void* send, void* recv, std::size_t count, DataType type, void* stream = nullptr) = 0;
  // recv[i] = op over ranks of send[rank*count + i], i < count.
  virtual void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                              void* stream = nullptr) = 0;
  virtual void broadcast(void* buffer, std::size_t count, DataType type, int root, void* stream = nullptr) = 0;
  // recv[r*count + i] = send[rank*count + i] of rank r.
  virtual void alltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream = nullptr) = 0;
  virtual void barrier(void* stream = nullptr) = 0;
  // Point to point with a group rank; blocking for MPI, stream-ordered for
  // NCCL. A peer of MPI_PROC_NULL does nothing (the buffer is untouched), on
  // every backend, as in MPI.
  virtual void send(const void* buffer, std::size_t count, DataType type, int peer, void* stream = nullptr) = 0;
  virtual void recv(void* buffer, std::size_t count, DataType type, int peer, void* stream = nullptr) = 0;

  // Non-blocking point to point with a group rank (MPI_Isend/MPI_Irecv;
  // NCCL: enqueued on stream, the Request completing when the stream ran
  // it). Not collective: between the two ranks. A peer of MPI_PROC_NULL
  // does nothing and returns an empty Request, on every backend, as in
  // MPI; another peer outside [0, size()) throws Error(invalid_argument).
  // Messages between two ranks, blocking or not, match in the order they
  // were started. A backend without them (one built for version 1 of the
  // plugin interface) throws Error(unsupported) naming it.
  virtual Request isend(const void* buffer, std::size_t count, DataType type, int peer, void* stream = nullptr) = 0;
  virtual Request irecv(void* buffer, std::size_t count, DataType type, int peer, void* stream = nullptr) = 0;
  // Sends to dest and receives from source at once (MPI_Sendrecv), so that a
  // ring shift cannot deadlock; returns when both are done (NCCL: enqueued
  // as one group on stream). Either peer may be MPI_PROC_NULL (that side
  // does nothing). Not collective: between the ranks named.
  virtual void sendrecv(const void* sendbuf, std::size_t sendcount, DataType sendtype, int dest, void* recvbuf,
                        std::size_t recvcount, DataType recvtype, int source, void* stream = nullptr) = 0;

  // --- Variable-size and rooted collectives (collective over the group) ---
  // Counts and displacements are elements, one entry per group rank (a
  // span of size() entries, else Error(invalid_argument) naming it);
  // segments may come in any order, with gaps the call leaves untouched.
  // An array that is not read (the send side of an in-place alltoallv, a
  // root-only array on another rank) may be empty. Roots are group ranks.
  // In place as MPI_IN_PLACE allows: alltoallv send == recv (each block r
  // is recvcounts[r] at rdispls[r]); allgatherv send == recv +
  // rdispls[rank]; gather(v) at the root send == recv + root*count
  // (rdispls[root]); scatter(v) at the root recv == send + root*count
  // (sdispls[root]); reduce at the root send == recv; reduce_scatterv
  // send == recv. Whether counts agree across ranks (sendcounts[j] on i ==
  // recvcounts[i] on j) is not checked: that needs communication; the
  // backend reports what it sees (MPI: a truncation error, Error(backend)
  // under a parent whose handler returns errors). A count the backend cannot
  // pass on (MPI without large-count calls: over 2^31-1) is refused on the
  // rank that has it alone (Error(unsupported)); its peers wait, as for any
  // collective a member does not enter (bounded by the mesh's deadline).
  // A backend without the operation throws Error(unsupported) naming it.

  // Block r of send (sendcounts[r] elements at sdispls[r]) goes to rank r,
  // landing at recv + rdispls[rank] there; sendcounts[rank] must equal
  // recvcounts[rank].
  virtual void alltoallv(const void* send, std::span<const std::size_t> sendcounts,
                         std::span<const std::size_t> sdispls, void* recv, std::span<const std::size_t> recvcounts,
                         std::span<const std::size_t> rdispls, DataType type, void* stream = nullptr) = 0;
  // send (sendcount elements) of rank r lands at recv + rdispls[r];
  // recvcounts[rank] must equal sendcount.
  virtual void allgatherv(const void* send, std::size_t sendcount, void* recv, std::span<const std::size_t> recvcounts,
                          std::span<const std::size_t> rdispls, DataType type, void* stream = nullptr) = 0;
  // MPI_Reduce_scatter: send holds the blocks packed (block r has
  // recvcounts[r] elements); recv (recvcounts[rank]) = op over ranks of
  // block rank.
  virtual void reduce_scatterv(const void* send, void* recv, std::span<const std::size_t> recvcounts, DataType type,
                               ReduceOp op, void* stream = nullptr) = 0;
  // At root: recv[r*count + i] = send[i] of rank r (recv unused elsewhere).
  virtual void gather(const void* send, void* recv, std::size_t count, DataType type, int root,
                      void* stream = nullptr) = 0;
  // At root: send of rank r (sendcount elements, recvcounts[r] at the root)
  // lands at recv + rdispls[r].
  virtual void gatherv(const void* send, std::size_t sendcount, void* recv, std::span<const std::size_t> recvcounts,
                       std::span<const std::size_t> rdispls, DataType type, int root, void* stream = nullptr) = 0;
  // recv[i] = send[rank*count + i] of root (send unused elsewhere).
  virtual void scatter(const void* send, void* recv, std::size_t count, DataType type, int root,
                       void* stream = nullptr) = 0;
  // recv (recvcount elements) = root's block rank (sendcounts[rank] at
  // sdispls[rank]).
  virtual void scatterv(const void* send, std::span<const std::size_t> sendcounts, std::span<const std::size_t> sdispls,
                        void* recv, std::size_t recvcount, DataType type, int root, void* stream = nullptr) = 0;
  // At root: recv[i] = op over ranks of send[i] (recv unused elsewhere).
  virtual void reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                      void* stream = nullptr) = 0;

  // --- Non-blocking collectives: the blocking form's arguments, started ---
  // Collective over the group, as the blocking form; every member starts
  // the same collectives in the same order. The Request ends the operation
  // (wait, test); until then the buffers are the operation's, while count
  // and displacement arrays may be reused as soon as the call returns.
  // NCCL: enqueued on stream; the Request completes when the stream has run
  // it. Results equal the blocking form's. A backend without non-blocking
  // collectives throws Error(unsupported) naming the operation.
  virtual Request iallreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                             void* stream = nullptr) = 0;
  virtual Request iallgather(const void* send, void* recv, std::size_t count, DataType type,
                             void* stream = nullptr) = 0;
  virtual Request ireduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                                  void* stream = nullptr) = 0;
  virtual Request ibroadcast(void* buffer, std::size_t count, DataType type, int root, void* stream = nullptr) = 0;
  virtual Request ialltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream = nullptr) = 0;
  virtual Request ibarrier(void* stream = nullptr) = 0;
  virtual Request ialltoallv(const void* send, std::span<const std::size_t> sendcounts,
                             std::span<const std::size_t> sdispls, void* recv, std::span<const std::size_t> recvcounts,
                             std::span<const std::size_t> rdispls, DataType type, void* stream = nullptr) = 0;
  virtual Request iallgatherv(const void* send, std::size_t sendcount, void* recv,
                              std::span<const std::size_t> recvcounts, std::span<const std::size_t> rdispls,
                              DataType type, void* stream = nullptr) = 0;
  virtual Request ireduce_scatterv(const void* send, void* recv, std::span<const std::size_t> recvcounts, DataType type,
                                   ReduceOp op, void* stream = nullptr) = 0;
  virtual Request igather(const void* send, void* recv, std::size_t count, DataType type, int root,
                          void* stream = nullptr) = 0;
  virtual Request igatherv(const void* send, std::size_t sendcount, void* recv, std::span<const std::size_t> recvcounts,
                           std::span<const std::size_t> rdispls, DataType type, int root, void* stream = nullptr) = 0;
  virtual Request iscatter(const void* send, void* recv, std::size_t count, DataType type, int root,
                           void* stream = nullptr) = 0;
  virtual Request iscatterv(const void* send, std::span<const std::size_t> sendcounts,
                            std::span<const std::size_t> sdispls, void* recv, std::size_t recvcount, DataType type,
                            int root, void* stream = nullptr) = 0;
  virtual Request ireduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                          void* stream = nullptr) = 0;

  // One send or receive of batch().
  struct P2P {
    bool send;  // true: send buffer to peer; false: receive buffer from peer
    int peer;   // a group rank, or MPI_PROC_NULL (the entry does nothing)
    void* buffer;
    std::size_t count;
    DataType type;
  };
  // Starts the sends and receives of ops together (NCCL: one group; a
  // pipeline stage's exchange with its neighbours), ended by one Request.
  // Not collective: between the ranks named. Entries with one peer match in
  // order, as isend/irecv's; a bad entry throws Error(invalid_argument)
  // naming its index before anything starts.
  virtual Request batch(std::span<const P2P> ops, void* stream = nullptr) = 0;
};

}  // namespace devmesh

#endif  // DEVMESH_CXX20
