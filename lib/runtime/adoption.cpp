#include "adoption.hpp"

#include <algorithm>

#include "mpi_check.hpp"

namespace devmesh::detail {
namespace {

std::string list(const std::vector<int>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

}  // namespace

Adopting read_comms(MPI_Comm parent, const std::vector<MPI_Comm>& comms, const std::vector<std::string>& names) {
  Adopting a;
  if (comms.empty()) throw Error(Status::invalid_argument, "no communicators: a mesh needs at least one dim");
  if (comms.size() != names.size())
    throw Error(Status::invalid_argument,
                std::to_string(comms.size()) + " communicators but " + std::to_string(names.size()) + " dim names");
  const auto nulls = std::count(comms.begin(), comms.end(), MPI_COMM_NULL);
  if (nulls == static_cast<long>(comms.size())) return a;  // not a member
  if (nulls != 0) {
    const auto at = std::find(comms.begin(), comms.end(), MPI_COMM_NULL) - comms.begin();
    throw Error(Status::invalid_argument, "the communicator of dim '" + names[static_cast<std::size_t>(at)] +
                                              "' is MPI_COMM_NULL but others are not: a member passes one "
                                              "communicator per dim, a non-member MPI_COMM_NULL for all");
  }
  MPI_Group parent_group = MPI_GROUP_NULL;
  DEVMESH_MPI(MPI_Comm_group(parent, &parent_group));
  try {
    for (MPI_Comm c : comms) {
      int n = 0, r = 0;
      DEVMESH_MPI(MPI_Comm_size(c, &n));
      DEVMESH_MPI(MPI_Comm_rank(c, &r));
      MPI_Group g = MPI_GROUP_NULL;
      DEVMESH_MPI(MPI_Comm_group(c, &g));
      std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
      for (int k = 0; k < n; ++k) in[static_cast<std::size_t>(k)] = k;
      const int rc = MPI_Group_translate_ranks(g, n, in.data(), parent_group, out.data());
      MPI_Group_free(&g);
      check_mpi(rc, "MPI_Group_translate_ranks");
      a.sizes.push_back(n);
      a.coords.push_back(r);
      a.groups.push_back(std::move(out));
    }
  } catch (...) {
    MPI_Group_free(&parent_group);
    throw;
  }
  MPI_Group_free(&parent_group);
  a.member = 1;
  return a;
}

std::vector<int> adoption_record(const Adopting& a, std::size_t ndim) {
  std::vector<int> mine{a.member};
  for (std::size_t d = 0; d < ndim; ++d) mine.push_back(a.member ? a.sizes[d] : 0);
  for (std::size_t d = 0; d < ndim; ++d) mine.push_back(a.member ? a.coords[d] : 0);
  return mine;
}

std::pair<std::vector<int>, std::vector<int>> adopted_layout(const std::vector<int>& table, int world, int n) {
  const std::size_t rec = 1 + 2 * static_cast<std::size_t>(n);
  std::vector<int> shape;
  int first = -1, w = 0;
  for (int r = 0; r < world; ++r) {
    const int* t = &table[r * rec];
    if (!t[0]) continue;
    ++w;
    if (first < 0) {
      first = r;
      shape.assign(t + 1, t + 1 + n);
      continue;
    }
    for (int d = 0; d < n; ++d)
      if (t[1 + d] != shape[static_cast<std::size_t>(d)])
        throw Error(Status::invalid_argument,
                    "the communicators of dim " + std::to_string(d) + " have different sizes: " +
                        std::to_string(shape[static_cast<std::size_t>(d)]) + " at parent rank " +
                        std::to_string(first) + ", " + std::to_string(t[1 + d]) + " at parent rank " +
                        std::to_string(r) + "; the communicators of one dim must all be alike in size");
  }
  if (first < 0) throw Error(Status::invalid_argument, "no rank of the parent passed communicators");
  long product = 1;
  for (int s : shape) product *= s;
  if (product != w)
    throw Error(Status::invalid_argument, "the communicators' sizes " + list(shape) + " multiply to " +
                                              std::to_string(product) + " but " + std::to_string(w) +
                                              " ranks passed communicators");
  std::vector<int> ranks(static_cast<std::size_t>(w), -1);
  for (int r = 0; r < world; ++r) {
    const int* t = &table[r * rec];
    if (!t[0]) continue;
    long x = 0;
    for (int d = 0; d < n; ++d) x = x * shape[static_cast<std::size_t>(d)] + t[1 + n + d];
    int& at = ranks[static_cast<std::size_t>(x)];
    if (at >= 0)
      throw Error(Status::invalid_argument,
                  "parent ranks " + std::to_string(at) + " and " + std::to_string(r) +
                      " have the same coordinate (their ranks in the communicators): the communicators do "
                      "not form a mesh");
    at = r;
  }
  return {shape, ranks};
}

void check_adopted_groups(const View& view, const Adopting& a, int parent_rank, const std::vector<std::string>& names) {
  if (!a.member) return;
  const index_t x = *view.root_index(parent_rank);
  for (std::size_t d = 0; d < names.size(); ++d) {
    const std::vector<index_t> wide = view.group(d, x);
    const std::vector<int> want(wide.begin(), wide.end());
    const std::vector<int>& got = a.groups[d];
    if (got != want)
      throw Error(Status::invalid_argument, "the communicator of dim '" + names[d] + "' at parent rank " +
                                                std::to_string(parent_rank) + " holds parent ranks " + list(got) +
                                                " but the mesh its coordinates give needs " + list(want) +
                                                ": the communicators do not form a mesh");
  }
}

}  // namespace devmesh::detail
