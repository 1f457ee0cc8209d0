// The cross-rank agreement of collective calls: every rank learns, in one
// small reduction, whether all passed the same arguments and whether all
// succeeded, so that a disagreement or a local failure is an error on
// every rank instead of a hang.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "devmesh/status.hpp"

namespace devmesh::detail {

// A 64-bit digest of arguments, a word at a time: each word is xored in
// and the state mixed by MurmurHash3's finalizer (a bijection, so two
// sequences that differ in one word never meet at that word); bytes go in
// eight at a time, then the rest one by one. Strings go in after their
// length, so that no two sequences of strings give the same words.
struct Hash {
  std::uint64_t h = 1469598103934665603ull;
  void word(std::uint64_t v) {
    std::uint64_t x = h ^ v;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    h = x;
  }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (; n >= 8; b += 8, n -= 8) {
      std::uint64_t v;
      std::memcpy(&v, b, 8);
      word(v);
    }
    std::uint64_t tail = 0;
    for (std::size_t i = 0; i < n; ++i) tail |= static_cast<std::uint64_t>(b[i]) << (8 * i);
    if (n) word(tail);
  }
  void add(std::int64_t v) { word(static_cast<std::uint64_t>(v)); }
  void add(std::string_view s) {
    add(static_cast<std::int64_t>(s.size()));
    bytes(s.data(), s.size());
  }
};

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
// error `message`), `counter` a number to agree on (the result is its
// maximum over the ranks). Throws, on every rank alike:
//   - Error(inconsistent) when some field differs between ranks, naming the
//     field(s) and the lowest rank that differs from rank 0 in each, and,
//     on a rank whose own validation failed, that rank's `message` too;
//   - else, when some rank failed, Error(worst status): a rank that failed
//     with it keeps its own message, the others get that of the lowest
//     rank that did (with that rank's number).
// One MPI_Allreduce of 4 words when all agree and succeed; two to four more
// collectives only on the error paths.
std::uint64_t agree(MPI_Comm comm, std::string_view call, std::span<const Field> fields, Status local,
                    const std::string& message, std::uint64_t counter = 0);

}  // namespace devmesh::detail
