// What a mesh's communicator actually connects, for the fault tests.
#pragma once

#include <cstdint>
#include <vector>

#include "devmesh/mesh.hpp"

// The group along `dim`, as each member's `id` (e.g. its old root index),
// in local-rank order: every member contributes id + 1 at its local rank
// (an allreduce of a one-hot vector over the dim's communicator), so a
// member missing shows as -1.
inline std::vector<int> group_by_comm(const devmesh::Mesh& m, const char* dim, int id) {
  auto& c = m.communicator(dim);
  std::vector<std::int64_t> v(static_cast<std::size_t>(c.size()), 0), out(v.size());
  v[static_cast<std::size_t>(c.rank())] = id + 1;
  c.allreduce(v.data(), out.data(), v.size(), devmesh::DataType::int64, devmesh::ReduceOp::sum);
  std::vector<int> g;
  for (auto x : out) g.push_back(static_cast<int>(x) - 1);
  return g;
}
