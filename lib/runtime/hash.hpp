// The digest devmesh compares arguments and names by (no MPI).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

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

}  // namespace devmesh::detail
