// The factory of PluginCommunicator, and the checks that the C API's enums
// and the C++ ones agree.
#include "plugin_communicator.hpp"

#include "plugin_communicator_impl.hpp"

namespace devmesh::detail {
namespace {

static_assert(DEVMESH_INT8 == static_cast<int>(DataType::int8));
static_assert(DEVMESH_UINT8 == static_cast<int>(DataType::uint8));
static_assert(DEVMESH_INT32 == static_cast<int>(DataType::int32));
static_assert(DEVMESH_UINT32 == static_cast<int>(DataType::uint32));
static_assert(DEVMESH_INT64 == static_cast<int>(DataType::int64));
static_assert(DEVMESH_UINT64 == static_cast<int>(DataType::uint64));
static_assert(DEVMESH_FLOAT16 == static_cast<int>(DataType::float16));
static_assert(DEVMESH_BFLOAT16 == static_cast<int>(DataType::bfloat16));
static_assert(DEVMESH_FLOAT32 == static_cast<int>(DataType::float32));
static_assert(DEVMESH_FLOAT64 == static_cast<int>(DataType::float64));
static_assert(DEVMESH_SUM == static_cast<int>(ReduceOp::sum));
static_assert(DEVMESH_PROD == static_cast<int>(ReduceOp::prod));
static_assert(DEVMESH_MIN == static_cast<int>(ReduceOp::min));
static_assert(DEVMESH_MAX == static_cast<int>(ReduceOp::max));
static_assert(DEVMESH_ERR_TIMEOUT == static_cast<int>(Status::timeout));

}  // namespace

std::unique_ptr<Communicator> plugin_communicator(const PluginTable& t, void* comm, int rank, int size,
                                                  std::uint64_t reduce_mask, Fault* fault, MPI_Comm group) {
  return std::make_unique<PluginCommunicator>(t, comm, rank, size, reduce_mask, fault, group);
}

}  // namespace devmesh::detail
