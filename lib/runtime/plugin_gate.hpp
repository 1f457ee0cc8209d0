// The argument gate of every collective and point-to-point call
// (PluginCommunicator's), apart so that a fuzzer can reach it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugin_communicator.hpp"

namespace devmesh::detail {

// The argument gate. On the path of every call: a few compares and one
// multiplication checked for overflow, inline; every refusal is built in a
// cold function out of line (refuse_*), so that it costs nothing until it
// happens.
class Gate {
 public:
  Gate(const PluginTable& t, int size, std::uint64_t reduce_mask) : t_(t), size_(size), reduce_mask_(reduce_mask) {}
  void datatype(DataType type) const {
    const int t = static_cast<int>(type);
    if (t < 0 || t >= datatypes) [[unlikely]]
      refuse_datatype(t);
  }
  void reduction(DataType type, ReduceOp op, std::string_view what) const {
    datatype(type);
    const int o = static_cast<int>(op);
    if (o < 0 || o >= reductions) [[unlikely]]
      refuse_op(o);
    if (!(reduce_mask_ >> (static_cast<int>(type) * reductions + o) & 1)) [[unlikely]]
      refuse_reduction(type, o, what);
  }
  // A buffer of count elements, times blocks: NULL only when empty, and a
  // byte size that fits in size_t.
  void buffer(const void* p, std::size_t count, DataType type, std::size_t blocks, const char* what) const {
    if (count == 0) return;
    std::size_t bytes = 0;  // es * blocks cannot overflow: es <= 8, blocks a group size
    if (p == nullptr || __builtin_mul_overflow(count, element_bytes(type) * blocks, &bytes)) [[unlikely]]
      refuse_buffer(p, count, blocks, what);
  }
  std::size_t blocks() const { return static_cast<std::size_t>(size_); }
  // An array of one entry per group rank (counts, displacements).
  void entries(std::span<const std::size_t> a, const char* name) const {
    if (a.size() != blocks()) [[unlikely]]
      refuse_entries(a.size(), name);
  }
  // A buffer's segments, counts[r] elements at displs[r] for each group
  // rank r (any order, gaps allowed): each array has an entry per rank, the
  // end of every non-empty segment fits in size_t bytes and in ptrdiff_t
  // elements, and the buffer is not NULL when a segment is not empty.
  // Returns the displacements to hand the plugin: displs, or (rare) a copy
  // where the displacement of an empty segment, which nothing reads, is 0
  // if it was past PTRDIFF_MAX, so that every entry a plugin gets fits
  // ptrdiff_t (backend_plugin.h). One pass over the group: with every entry
  // below `small` none of that can happen, so only a NULL buffer or a large
  // entry needs the exact pass, which names what is wrong.
  const std::size_t* segments(const void* p, std::span<const std::size_t> counts, std::span<const std::size_t> displs,
                              DataType type, const char* buffer_name, const char* counts_name,
                              const char* displs_name) const {
    entries(counts, counts_name);
    entries(displs, displs_name);
    constexpr std::size_t small = SIZE_MAX / max_element_bytes / 2 + 1;  // a power of two
    static_assert((small & (small - 1)) == 0);
    const std::size_t n = blocks();
    std::size_t x = 0, y = 0, r = 0;
    for (; r + 4 <= n; r += 4) {  // four at a time: the loop's own cost is most of it
      x |= counts[r] | displs[r] | counts[r + 1] | displs[r + 1];
      y |= counts[r + 2] | displs[r + 2] | counts[r + 3] | displs[r + 3];
    }
    for (; r < n; ++r) x |= counts[r] | displs[r];
    if (p == nullptr || (x | y) >= small) [[unlikely]]
      return exact_segments(p, counts, displs, type, buffer_name, counts_name, displs_name);
    return displs.data();
  }
  // The same checks, segment by segment (the out-of-line rare case).
  [[gnu::noinline]] const std::size_t* exact_segments(const void* p, std::span<const std::size_t> counts,
                                                      std::span<const std::size_t> displs, DataType type,
                                                      const char* buffer_name, const char* counts_name,
                                                      const char* displs_name) const {
    constexpr std::size_t largest = PTRDIFF_MAX;
    std::size_t end = 0;
    bool far_empty = false;
    for (std::size_t r = 0; r < blocks(); ++r) {
      std::size_t e = 0;
      if (counts[r] == 0) {
        far_empty = far_empty || displs[r] > largest;
        continue;
      }
      if (__builtin_add_overflow(displs[r], counts[r], &e) || e > largest) [[unlikely]]
        refuse_segment(r, displs[r], counts[r], displs_name, counts_name);
      end = e > end ? e : end;
    }
    buffer(p, end, type, 1, buffer_name);
    if (!far_empty) return displs.data();
    // Two copies per thread, used in turn: a call checks at most two
    // buffers' segments (send and receive) before the plugin reads them.
    thread_local std::vector<std::size_t> copies[2];
    thread_local unsigned turn = 0;
    std::vector<std::size_t>& c = copies[turn++ % 2];
    c.assign(displs.begin(), displs.end());
    for (std::size_t r = 0; r < blocks(); ++r)
      if (counts[r] == 0 && c[r] > largest) c[r] = 0;
    return c.data();
  }
  // The sum of counts (a packed buffer's length), checked not to overflow
  // size_t nor to pass PTRDIFF_MAX elements.
  std::size_t packed(std::span<const std::size_t> counts, const char* name) const {
    entries(counts, name);
    std::size_t total = 0;
    for (std::size_t c : counts)
      if (__builtin_add_overflow(total, c, &total) || total > std::size_t{PTRDIFF_MAX}) [[unlikely]]
        refuse_sum(name);
    return total;
  }
  // What this rank alone can see of the counts' agreement: its own block's
  // count on both sides.
  void same(std::size_t a, std::size_t b, const char* a_name, const char* b_name) const {
    if (a != b) [[unlikely]]
      refuse_same(a, b, a_name, b_name);
  }
  void group_rank(int r, const char* what) const {
    if (r < 0 || r >= size_) [[unlikely]]
      refuse_rank(r, what, "");
  }
  // False for MPI_PROC_NULL (nothing to do, as in MPI); throws for a peer
  // outside the group or a bad buffer, which a plugin is never given.
  bool point_to_point(const void* p, std::size_t count, DataType type, int peer, const char* what,
                      const char* buffer_name) const {
    datatype(type);
    if (peer == MPI_PROC_NULL) return false;
    if (peer < 0 || peer >= size_) [[unlikely]]
      refuse_rank(peer, what, " (nor MPI_PROC_NULL)");
    buffer(p, count, type, 1, buffer_name);
    return true;
  }

 private:
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_datatype(int t) {
    throw Error(Status::invalid_argument, "unknown datatype " + std::to_string(t));
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_op(int o) {
    throw Error(Status::invalid_argument, "unknown reduction op " + std::to_string(o));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_reduction(DataType type, int o, std::string_view what) const {
    static constexpr const char* type_names[datatypes] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                                          "uint64", "float16", "bfloat16", "float32", "float64"};
    static constexpr const char* op_names[reductions] = {"sum", "prod", "min", "max"};
    throw Error(Status::unsupported, "backend '" + std::string(t_.name) + "', " + std::string(what) +
                                         ": cannot reduce " + type_names[static_cast<int>(type)] + " data with " +
                                         op_names[o]);
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_buffer(const void* p, std::size_t count, std::size_t blocks,
                                                                   const char* what) {
    if (p == nullptr) throw Error(Status::invalid_argument, std::string(what) + " is NULL with count > 0");
    throw Error(Status::invalid_argument, "count " + std::to_string(count) + " x " + std::to_string(blocks) +
                                              " elements overflow the byte size of " + what);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_entries(std::size_t n, const char* name) const {
    if (n == 0)
      throw Error(Status::invalid_argument, std::string(name) +
                                                " is NULL (or empty): it needs one entry per rank of the group of " +
                                                std::to_string(size_));
    throw Error(Status::invalid_argument, std::string(name) + " has " + std::to_string(n) +
                                              " entries but the group has " + std::to_string(size_) + " ranks");
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_segment(std::size_t r, std::size_t displ, std::size_t count,
                                                                    const char* displs_name, const char* counts_name) {
    throw Error(Status::invalid_argument, std::string(displs_name) + "[" + std::to_string(r) + "] " +
                                              std::to_string(displ) + " + " + counts_name + "[" + std::to_string(r) +
                                              "] " + std::to_string(count) + " pass PTRDIFF_MAX elements");
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_sum(const char* name) {
    throw Error(Status::invalid_argument, "the sum of " + std::string(name) + " passes PTRDIFF_MAX elements");
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void refuse_same(std::size_t a, std::size_t b, const char* a_name,
                                                                 const char* b_name) {
    throw Error(Status::invalid_argument, std::string(a_name) + " " + std::to_string(a) + " differs from " + b_name +
                                              " " + std::to_string(b) + " (this rank's own block)");
  }
  [[noreturn, gnu::cold, gnu::noinline]] void refuse_rank(int r, const char* what, const char* also) const {
    throw Error(Status::invalid_argument, std::string(what) + " " + std::to_string(r) + " is outside the group of " +
                                              std::to_string(size_) + " ranks" + also);
  }

  const PluginTable& t_;
  int size_;
  std::uint64_t reduce_mask_;  // bit t*4+op: the backend reduces data type t with op
};

}  // namespace devmesh::detail
