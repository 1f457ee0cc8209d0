// The Gloo backend's collectives of version 4: variable-size and rooted.
//
//   alltoallv, allgatherv  Gloo's own, which take packed segments: the
//                          caller's buffers directly when the displacements
//                          are the packed prefix sums, else the send
//                          segments packed into a temporary and the result
//                          unpacked by rdispls (gaps untouched); in place,
//                          the input is copied first.
//   reduce_scatterv        as reduce_scatter: an allreduce of the sum of
//                          the counts into a temporary, then the caller's
//                          block.
//   gather, scatter,       Gloo's own (the root's own block copied through
//   reduce                 a temporary in place; reduce uses a temporary of
//                          count elements on the other ranks as Gloo's
//                          scratch).
//   gatherv, scatterv      unbound-buffer transfers between the root and
//                          each member with a segment, on a slot prefix of
//                          their own (rooted.cpp).
// Every one runs through launch() (blocking, or started on the worker); the
// bodies own copies of the counts and displacements.
#include <gloo/allgatherv.h>
#include <gloo/alltoallv.h>
#include <gloo/gather.h>
#include <gloo/scatter.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "gloo_comm.hpp"

namespace devmesh::gloo_backend {
namespace {

using Body = std::function<void()>;
using Counts = std::vector<std::size_t>;

Counts copy_of(const std::size_t* a, std::size_t n) { return a ? Counts(a, a + n) : Counts(n, 0); }

std::size_t sum_of(const Counts& counts) {
  std::size_t s = 0;
  for (std::size_t x : counts) s += x;
  return s;
}

// Whether the non-empty segments follow each other from 0 in rank order.
bool packed(const Counts& counts, const Counts& displs) {
  std::size_t at = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] == 0) continue;
    if (displs[r] != at) return false;
    at += counts[r];
  }
  return true;
}

// Packs the segments of base (by displs) into out, or unpacks out into them.
void pack(const char* base, const Counts& counts, const Counts& displs, std::size_t es, char* out) {
  for (std::size_t r = 0; r < counts.size(); ++r) {
    std::memcpy(out, base + displs[r] * es, counts[r] * es);
    out += counts[r] * es;
  }
}
void unpack(const char* in, const Counts& counts, const Counts& displs, std::size_t es, char* base) {
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > 0) std::memmove(base + displs[r] * es, in, counts[r] * es);
    in += counts[r] * es;
  }
}

std::vector<int64_t> bytes_per_rank(const Counts& counts, std::size_t es) {
  std::vector<int64_t> out(counts.size());
  for (std::size_t r = 0; r < counts.size(); ++r) out[r] = static_cast<int64_t>(counts[r] * es);
  return out;
}

std::size_t group_size(Comm& c) { return static_cast<std::size_t>(c.context->size); }
std::size_t my_rank(Comm& c) { return static_cast<std::size_t>(c.context->rank); }

struct AlltoallvArgs {
  const char* send;
  char* recv;
  Counts sc, sd, rc, rd;
  std::size_t es;
  bool in_place;
};

void alltoallv_run(Comm& c, const AlltoallvArgs& a) {
  std::vector<char> in_copy, out_copy;
  const char* in = a.send;
  if (a.in_place || !packed(a.sc, a.sd)) {
    in_copy.resize(sum_of(a.sc) * a.es);
    pack(a.send, a.sc, a.sd, a.es, in_copy.data());
    in = in_copy.data();
  }
  char* out = a.recv;
  const bool direct = packed(a.rc, a.rd);
  if (!direct) {
    out_copy.resize(sum_of(a.rc) * a.es);
    out = out_copy.data();
  }
  run(c, "alltoallv", [&] {
    gloo::AlltoallvOptions opts(c.context);
    opts.setInput(nonnull(in), bytes_per_rank(a.sc, a.es));
    opts.setOutput(nonnull(out), bytes_per_rank(a.rc, a.es));
    opts.setTimeout(c.timeout);
    gloo::alltoallv(opts);
  });
  if (!direct) unpack(out_copy.data(), a.rc, a.rd, a.es, a.recv);
}

}  // namespace

int gloo_alltoallv(void* comm, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[],
                   void* recv, const std::size_t recvcounts[], const std::size_t rdispls[], int datatype, void*,
                   void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    const std::size_t n = group_size(c);
    AlltoallvArgs a{static_cast<const char*>(send),
                    static_cast<char*>(recv),
                    {},
                    {},
                    copy_of(recvcounts, n),
                    copy_of(rdispls, n),
                    element_size(datatype),
                    send == recv};
    // In place, block r of recv goes to rank r and is replaced by rank r's.
    a.sc = a.in_place ? a.rc : copy_of(sendcounts, n);
    a.sd = a.in_place ? a.rd : copy_of(sdispls, n);
    if (a.in_place) a.send = a.recv;
    return [&c, a = std::move(a)] { alltoallv_run(c, a); };
  });
}

int gloo_allgatherv(void* comm, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
                    const std::size_t rdispls[], int datatype, void*, void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    const std::size_t n = group_size(c), es = element_size(datatype);
    Counts rc = copy_of(recvcounts, n), rd = copy_of(rdispls, n);
    if (sum_of(rc) == 0) return {};
    auto* base = static_cast<char*>(recv);
    return [&c, send, sendcount, base, rc = std::move(rc), rd = std::move(rd), es] {
      const bool direct = packed(rc, rd);
      std::vector<char> copy(direct ? 0 : sum_of(rc) * es);
      char* out = direct ? base : copy.data();
      std::size_t mine = rd[my_rank(c)];  // the caller's block's offset in out, elements
      if (!direct) {                      // packed in the temporary
        mine = 0;
        for (std::size_t r = 0; r < my_rank(c); ++r) mine += rc[r];
      }
      if (sendcount > 0 && send != out + mine * es) std::memmove(out + mine * es, send, sendcount * es);
      run(c, "allgatherv", [&] {
        gloo::AllgathervOptions opts(c.context);
        std::vector<std::size_t> bytes(rc.size());
        for (std::size_t r = 0; r < rc.size(); ++r) bytes[r] = rc[r] * es;
        opts.setOutput(out, bytes);
        opts.setTimeout(c.timeout);
        gloo::allgatherv(opts);
      });
      if (!direct) unpack(copy.data(), rc, rd, es, base);
    };
  });
}

int gloo_reduce_scatterv(void* comm, const void* send, void* recv, const std::size_t recvcounts[], int datatype, int op,
                         void*, void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    Counts rc = copy_of(recvcounts, group_size(c));
    const std::size_t total = sum_of(rc), es = element_size(datatype);
    bytes_of(total, es);
    if (total == 0) return {};
    return [&c, send, recv, rc = std::move(rc), total, es, datatype, op] {
      std::vector<char> all(total * es);
      run(c, "reduce_scatterv", [&] { allreduce_bytes(c, send, all.data(), total, datatype, op); });
      std::size_t at = 0;
      for (std::size_t r = 0; r < my_rank(c); ++r) at += rc[r];
      if (rc[my_rank(c)] > 0) std::memcpy(recv, all.data() + at * es, rc[my_rank(c)] * es);
    };
  });
}

int gloo_gather(void* comm, const void* send, void* recv, std::size_t count, int datatype, int root, void*,
                void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    const std::size_t bytes = bytes_of(count, element_size(datatype));
    bytes_of(bytes, 1, group_size(c));
    if (count == 0) return {};
    return [&c, send, recv, bytes, root] {
      const bool at_root = c.context->rank == root;
      std::vector<char> copy;
      const char* in = static_cast<const char*>(send);
      if (at_root && in == static_cast<char*>(recv) + bytes * static_cast<std::size_t>(root)) {
        copy.assign(in, in + bytes);  // in place
        in = copy.data();
      }
      run(c, "gather", [&] {
        gloo::GatherOptions opts(c.context);
        opts.setInput(const_cast<char*>(in), bytes);
        if (at_root) opts.setOutput(static_cast<char*>(recv), bytes * group_size(c));
        opts.setRoot(root);
        opts.setTimeout(c.timeout);
        gloo::gather(opts);
      });
    };
  });
}

int gloo_scatter(void* comm, const void* send, void* recv, std::size_t count, int datatype, int root, void*,
                 void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    const std::size_t bytes = bytes_of(count, element_size(datatype));
    bytes_of(bytes, 1, group_size(c));
    if (count == 0) return {};
    return [&c, send, recv, bytes, root] {
      const bool at_root = c.context->rank == root;
      std::vector<char> scratch;
      char* out = static_cast<char*>(recv);
      const char* base = static_cast<const char*>(send);
      if (at_root && out == base + bytes * static_cast<std::size_t>(root)) {
        scratch.resize(bytes);  // in place: the root's block is there already
        out = scratch.data();
      }
      run(c, "scatter", [&] {
        gloo::ScatterOptions opts(c.context);
        if (at_root) {
          std::vector<char*> blocks(group_size(c));
          for (std::size_t r = 0; r < blocks.size(); ++r) blocks[r] = const_cast<char*>(base) + r * bytes;
          opts.setInputs(blocks, bytes);
        }
        opts.setOutput(out, bytes);
        opts.setRoot(root);
        opts.setTimeout(c.timeout);
        gloo::scatter(opts);
      });
    };
  });
}

int gloo_reduce(void* comm, const void* send, void* recv, std::size_t count, int datatype, int op, int root, void*,
                void** request) {
  return launch(comm, request, [&](Comm& c) -> Body {
    const std::size_t es = element_size(datatype);
    bytes_of(count, es);
    if (count == 0) return {};
    return [&c, send, recv, count, es, datatype, op, root] {
      std::vector<char> scratch;
      void* out = recv;
      if (c.context->rank != root) {
        scratch.resize(count * es);
        out = scratch.data();
      }
      run(c, "reduce", [&] { reduce_bytes(c, send, out, count, datatype, op, root); });
    };
  });
}

}  // namespace devmesh::gloo_backend
