#include "cross_check.hpp"

#include <climits>

#include "mpi_check.hpp"

namespace devmesh::detail {
namespace {

// The lowest rank for which `mine` holds (INT_MAX when none).
int lowest(MPI_Comm comm, bool mine, int me) {
  int in = mine ? me : INT_MAX, out = INT_MAX;
  DEVMESH_MPI(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm));
  return out;
}

[[noreturn]] void inconsistent(MPI_Comm comm, std::string_view call, std::span<const Field> fields,
                               const std::vector<bool>& differs, int me, Status local, const std::string& message) {
  // Rank 0's digests, then per differing field the lowest rank whose digest
  // is not rank 0's.
  std::vector<std::uint64_t> first(fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) first[i] = fields[i].digest;
  DEVMESH_MPI(MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_UINT64_T, 0, comm));
  std::vector<int> in(fields.size(), INT_MAX), out(fields.size(), INT_MAX);
  for (std::size_t i = 0; i < fields.size(); ++i)
    if (fields[i].digest != first[i]) in[i] = me;
  DEVMESH_MPI(MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_INT, MPI_MIN, comm));
  std::string text = "ranks passed different arguments to " + std::string(call) + ":";
  const char* sep = " ";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (!differs[i]) continue;
    text += sep;
    text += "different " + std::string(fields[i].what);
    if (out[i] != INT_MAX) text += " on rank 0 and rank " + std::to_string(out[i]);
    sep = "; ";
  }
  text += " (each time the lowest rank that differs from rank 0)";
  // A rank whose own arguments fail too learns why, as it would alone.
  if (local != Status::success) text += "; on this rank: " + message;
  throw Error(Status::inconsistent, text);
}

}  // namespace

std::string cut_message(std::string_view message) {
  if (message.size() <= max_message) return std::string(message);
  return std::string(message.substr(0, max_message)) + " [cut at 4 KiB]";
}

std::uint64_t cross_check(MPI_Comm comm, std::string_view call, std::span<const Field> fields, Status local,
                          const std::string& message, std::uint64_t counter) {
  int me = 0;
  DEVMESH_MPI(MPI_Comm_rank(comm, &me));
  // max(d) == d and max(~d) == ~d on every rank exactly when all d match,
  // so every rank sees the same outcome. The success path reduces one
  // digest of all fields (4 words, as small as a message gets: MPI's
  // shortest protocol); only when it differs do the fields' own digests
  // follow, to name them. The worst status and the counter ride along.
  const std::size_t n = fields.size();
  Hash combined;
  for (const Field& f : fields) combined.add(static_cast<std::int64_t>(f.digest));
  const std::uint64_t mine[4] = {combined.h, ~combined.h, static_cast<std::uint64_t>(local), counter};
  std::uint64_t all[4] = {0, 0, 0, 0};
  DEVMESH_MPI(MPI_Allreduce(mine, all, 4, MPI_UINT64_T, MPI_MAX, comm));
  if (all[0] != mine[0] || all[1] != mine[1]) {
    std::vector<std::uint64_t> each(2 * n), max(2 * n);
    for (std::size_t i = 0; i < n; ++i) {
      each[2 * i] = fields[i].digest;
      each[2 * i + 1] = ~fields[i].digest;
    }
    DEVMESH_MPI(MPI_Allreduce(each.data(), max.data(), static_cast<int>(each.size()), MPI_UINT64_T, MPI_MAX, comm));
    std::vector<bool> differs(n);
    for (std::size_t i = 0; i < n; ++i) differs[i] = max[2 * i] != each[2 * i] || max[2 * i + 1] != each[2 * i + 1];
    inconsistent(comm, call, fields, differs, me, local, message);
  }
  const auto worst = static_cast<Status>(all[2]);
  if (worst != Status::success) {
    // A rank that failed that way keeps its own message; the others get
    // that of the lowest rank that did.
    const int from = lowest(comm, local == worst, me);
    std::string text = local == worst ? cut_message(message) : std::string();
    int len = static_cast<int>(text.size());
    DEVMESH_MPI(MPI_Bcast(&len, 1, MPI_INT, from, comm));
    text.resize(static_cast<std::size_t>(len));
    DEVMESH_MPI(MPI_Bcast(text.data(), len, MPI_CHAR, from, comm));
    if (local == worst) throw Error(worst, message);
    throw Error(worst, text + " (on rank " + std::to_string(from) + ")");
  }
  return all[3];
}

}  // namespace devmesh::detail
