// The backend collectives of a mesh dim, for C++ callers.
//
// The mesh runtime always builds the dim's MPI sub-communicator first (it
// is the bootstrap every backend can use); the dim's backend then
// *upgrades* that group to its own communicator. Backends are plugins
// behind the C interface of devmesh/backend_plugin.h ("mpi" built in, any
// other name loaded as libdevmesh-backend-<name>.so); Communicator is how
// C++ code calls whichever one a dim has.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "devmesh/export.hpp"
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
  // The address of the backend's own handle: MPI_Comm* for "mpi",
  // ncclComm_t* for "nccl" (see the backend's documentation).
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

}  // namespace devmesh
