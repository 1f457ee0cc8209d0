// A plugin's communicator as devmesh::Communicator: the one door of every
// collective and point-to-point call, with the argument gate.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>

#include "devmesh/backend.hpp"
#include "plugin_table.hpp"

namespace devmesh::detail {

class Fault;

constexpr int datatypes = DEVMESH_FLOAT64 + 1, reductions = DEVMESH_MAX + 1;
static_assert(datatypes * reductions <= 64, "one bit per (data type, reduction) pair");

// Bytes per element; size_of's value, inline on the call path (size_of is
// exported, so a call to it from here goes through the PLT).
constexpr std::size_t element_bytes(DataType t) noexcept {
  constexpr std::size_t bytes[datatypes] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8};
  return bytes[static_cast<int>(t)];
}
static_assert(element_bytes(DataType::bfloat16) == 2 && element_bytes(DataType::float64) == 8);
// The largest element (Gate::segments relies on it).
constexpr std::size_t max_element_bytes = 8;
static_assert([] {
  for (int t = 0; t < datatypes; ++t)
    if (element_bytes(static_cast<DataType>(t)) > max_element_bytes) return false;
  return true;
}());

// The communicator `comm` of table t (owned: comm_destroy when it goes), of
// `size` members of which this rank is `rank`. reduce_mask: bit t*4+op when
// the backend reduces data type t with op. fault: the mesh's fault state
// (fault_tolerance), or null. group: the dim's MPI communicator (the group's
// members, for asking MPI which of them failed).
std::unique_ptr<Communicator> plugin_communicator(const PluginTable& t, void* comm, int rank, int size,
                                                  std::uint64_t reduce_mask, Fault* fault, MPI_Comm group);

}  // namespace devmesh::detail
