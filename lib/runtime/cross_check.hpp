// The cross-check of collective calls: every rank learns, in one small
// reduction of argument digests, whether all passed the same arguments and
// whether all succeeded, so that differing arguments or a local failure are
// an error on every rank instead of a hang. (Not MPIX_Comm_agree: "agree"
// in devmesh means only that, and the public Mesh::agree.)
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/status.hpp"
#include "hash.hpp"

namespace devmesh::detail {

// One argument that every rank must pass alike: what it is called in
// messages ("different <what> on rank 0 and rank 3"), and its digest.
struct Field {
  const char* what;
  std::uint64_t digest;
};

// The longest message a rank's failure may carry to the other ranks (and
// the longest a plugin's last_error() may give): longer ones are cut, with
// cut_message's mark.
constexpr std::size_t max_message = 4096;
std::string cut_message(std::string_view message);

// Collective over comm; every rank passes the same number of fields.
// `local` is this rank's validation result (success or the status of the
// error `message`), `counter` a number to share (the result is its
// maximum over the ranks). Throws, on every rank alike:
//   - Error(inconsistent) when some field differs between ranks, naming the
//     field(s) and the lowest rank that differs from rank 0 in each, and,
//     on a rank whose own validation failed, that rank's `message` too;
//   - else, when some rank failed, Error(worst status): a rank that failed
//     with it keeps its own message, the others get that of the lowest
//     rank that did (with that rank's number).
// One MPI_Allreduce of 4 words when all match and succeed; two to four more
// collectives only on the error paths.
std::uint64_t cross_check(MPI_Comm comm, std::string_view call, std::span<const Field> fields, Status local,
                          const std::string& message, std::uint64_t counter = 0);

}  // namespace devmesh::detail
