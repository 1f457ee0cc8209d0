#include "mpi_backend.hpp"

#include <cstring>
#include <limits>

#include "runtime/mpi_check.hpp"

namespace devmesh::backends {

MPI_Datatype mpi_datatype(DataType type) {
  switch (type) {
    case DataType::int8: return MPI_INT8_T;
    case DataType::uint8: return MPI_UINT8_T;
    case DataType::int32: return MPI_INT32_T;
    case DataType::uint32: return MPI_UINT32_T;
    case DataType::int64: return MPI_INT64_T;
    case DataType::uint64: return MPI_UINT64_T;
    case DataType::float16:
    case DataType::bfloat16: return MPI_UINT16_T;
    case DataType::float32: return MPI_FLOAT;
    case DataType::float64: return MPI_DOUBLE;
  }
  throw Error(Status::invalid_argument, "unknown data type " + std::to_string(static_cast<int>(type)));
}

MPI_Op mpi_op(ReduceOp op, DataType type) {
  if (type == DataType::float16 || type == DataType::bfloat16)
    throw Error(Status::unsupported, "backend 'mpi' cannot reduce float16/bfloat16 data");
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::prod: return MPI_PROD;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::max: return MPI_MAX;
  }
  throw Error(Status::invalid_argument, "unknown reduction " + std::to_string(static_cast<int>(op)));
}

namespace {

int count_of(std::size_t count) {
  if (count > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error(Status::unsupported, "backend 'mpi' takes at most 2^31-1 elements per call, got " +
                                         std::to_string(count));
  return static_cast<int>(count);
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    DEVMESH_MPI(MPI_Comm_rank(comm_, &rank_));
    DEVMESH_MPI(MPI_Comm_size(comm_, &size_));
  }
  std::string_view backend() const noexcept override { return "mpi"; }
  int rank() const noexcept override { return rank_; }
  int size() const noexcept override { return size_; }
  void* native_handle() noexcept override { return &comm_; }

  void allreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                 void*) override {
    DEVMESH_MPI(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, count_of(count),
                              mpi_datatype(type), mpi_op(op, type), comm_));
  }
  void allgather(const void* send, void* recv, std::size_t count, DataType type, void*) override {
    const MPI_Datatype t = mpi_datatype(type);
    // In place (backend_plugin.h): send is the caller's block of recv.
    const bool in_place =
        send == static_cast<const char*>(recv) + static_cast<std::size_t>(rank()) * count * size_of(type);
    DEVMESH_MPI(MPI_Allgather(in_place ? MPI_IN_PLACE : send, count_of(count), t, recv, count_of(count), t,
                              comm_));
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                      void*) override {
    // In place (backend_plugin.h): recv is the caller's block of send. MPI's
    // in-place form leaves the result at the start of the buffer, moved to
    // the caller's block here (the other blocks of send are undefined after).
    const std::size_t block = count * size_of(type);
    if (recv == static_cast<const char*>(send) + static_cast<std::size_t>(rank()) * block) {
      void* all = const_cast<void*>(send);
      DEVMESH_MPI(MPI_Reduce_scatter_block(MPI_IN_PLACE, all, count_of(count), mpi_datatype(type),
                                           mpi_op(op, type), comm_));
      if (all != recv) std::memmove(recv, all, block);
      return;
    }
    DEVMESH_MPI(MPI_Reduce_scatter_block(send, recv, count_of(count), mpi_datatype(type),
                                         mpi_op(op, type), comm_));
  }
  void broadcast(void* buffer, std::size_t count, DataType type, int root, void*) override {
    DEVMESH_MPI(MPI_Bcast(buffer, count_of(count), mpi_datatype(type), root, comm_));
  }
  void alltoall(const void* send, void* recv, std::size_t count, DataType type, void*) override {
    const MPI_Datatype t = mpi_datatype(type);
    DEVMESH_MPI(MPI_Alltoall(send == recv ? MPI_IN_PLACE : send, count_of(count), t, recv, count_of(count), t,
                             comm_));
  }
  void barrier(void*) override { DEVMESH_MPI(MPI_Barrier(comm_)); }
  void send(const void* buffer, std::size_t count, DataType type, int peer, void*) override {
    DEVMESH_MPI(MPI_Send(buffer, count_of(count), mpi_datatype(type), peer, tag, comm_));
  }
  void recv(void* buffer, std::size_t count, DataType type, int peer, void*) override {
    DEVMESH_MPI(MPI_Recv(buffer, count_of(count), mpi_datatype(type), peer, tag, comm_,
                         MPI_STATUS_IGNORE));
  }

 private:
  static constexpr int tag = 0x6d73;
  MPI_Comm comm_;  // owned by the mesh
  int rank_ = 0;
  int size_ = 0;
};

class MpiBackend final : public Backend {
 public:
  std::string_view name() const noexcept override { return "mpi"; }
  std::unique_ptr<Communicator> create(const GroupContext& ctx) override {
    return std::make_unique<MpiCommunicator>(ctx.group);
  }
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend() { return std::make_unique<MpiBackend>(); }

}  // namespace devmesh::backends
