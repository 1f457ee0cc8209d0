// The NCCL backend's variable-size and rooted collectives (version 4 of the
// plugin interface): each one operation on one communicator, enqueued on the
// caller's stream and started as started() does (nccl_comm.hpp). Counts,
// displacements and roots arrive checked by the core's gate; the arrays are
// read during the call only (NCCL copies what it needs when it enqueues).
//
// Which NCCL call serves a collective is decided from arguments every member
// passes alike (count, root), never from one member's own counts: members
// that chose differently would enqueue different operations. So alltoallv
// is always grouped ncclSend/ncclRecv (a member sees only its own row and
// column of the count matrix), while gather and scatter use ncclGather and
// ncclScatter where NCCL has them (2.28).
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "nccl_comm.hpp"

namespace devmesh::backends {
namespace {

std::size_t element(int t) { return size_of(static_cast<DataType>(t)); }

// The elements a layout of n blocks reaches: the largest end of a non-empty
// block (the core checked that it fits in size_t bytes).
std::size_t extent(const std::size_t counts[], const std::size_t displs[], int n) {
  std::size_t end = 0;
  for (int r = 0; r < n; ++r)
    if (counts[r] > 0) end = std::max(end, displs[r] + counts[r]);
  return end;
}

// Blocks of one buffer: block r is counts[r] elements at displs[r].
struct Blocks {
  const char* base;
  const std::size_t* counts;
  const std::size_t* displs;
  std::size_t es;  // bytes per element
  const char* at(int r) const { return base + displs[r] * es; }
};

// Block r of out to member r and block r of in from member r, for every
// member, in one group; empty blocks are skipped (their peer skips them
// too: the counts agree across members).
void exchange(Comm& k, cudaStream_t st, ncclDataType_t type, const Blocks& out, const Blocks& in) {
  Group g;
  for (int r = 0; r < k.size && !g.failed(); ++r) {
    if (out.counts[r] > 0) g.add(ncclSend(out.at(r), out.counts[r], type, r, k.comm, st), "ncclSend");
    if (in.counts[r] > 0 && !g.failed())
      g.add(ncclRecv(const_cast<char*>(in.at(r)), in.counts[r], type, r, k.comm, st), "ncclRecv");
  }
  g.end(k);
}

// In place: the copy is what the sends read, the caller's buffer what the
// receives write (a send and a receive of one block run at once).
void alltoallv_on(Comm& k, cudaStream_t st, const void* send, const std::size_t sc[], const std::size_t sd[],
                  void* recv, const std::size_t rc[], const std::size_t rd[], int t) {
  const std::size_t es = element(t);
  const bool in_place = send == recv;
  if (in_place) DEVMESH_CUDA(cudaSetDevice(k.device));
  const StreamScratch copy(in_place ? recv : nullptr, in_place ? extent(rc, rd, k.size) * es : 0, st);
  const Blocks out = in_place ? Blocks{copy.get(), rc, rd, es} : Blocks{static_cast<const char*>(send), sc, sd, es};
  exchange(k, st, nccl_type(t), out, Blocks{static_cast<const char*>(recv), rc, rd, es});
}

// Gatherv at the root: every member's send to the root, the root's receives
// at the displacements; the root's own block stays where it is in place.
void gatherv_on(Comm& k, cudaStream_t st, const void* send, std::size_t sendcount, void* recv, const std::size_t rc[],
                const std::size_t rd[], int t, int root) {
  const ncclDataType_t type = nccl_type(t);
  const std::size_t es = element(t);
  const bool root_here = k.rank == root;
  const bool in_place = root_here && send == static_cast<char*>(recv) + rd[root] * es;
  Group g;
  if (sendcount > 0 && !in_place) g.add(ncclSend(send, sendcount, type, root, k.comm, st), "ncclSend");
  for (int r = 0; root_here && r < k.size && !g.failed(); ++r)
    if (rc[r] > 0 && !(in_place && r == root))
      g.add(ncclRecv(static_cast<char*>(recv) + rd[r] * es, rc[r], type, r, k.comm, st), "ncclRecv");
  g.end(k);
}

// Scatterv from the root: its sends from the displacements, every member's
// receive; the root's own block stays where it is in place.
void scatterv_on(Comm& k, cudaStream_t st, const void* send, const std::size_t sc[], const std::size_t sd[], void* recv,
                 std::size_t recvcount, int t, int root) {
  const ncclDataType_t type = nccl_type(t);
  const std::size_t es = element(t);
  const bool root_here = k.rank == root;
  const bool in_place = root_here && recv == static_cast<const char*>(send) + sd[root] * es;
  Group g;
  for (int r = 0; root_here && r < k.size && !g.failed(); ++r)
    if (sc[r] > 0 && !(in_place && r == root))
      g.add(ncclSend(static_cast<const char*>(send) + sd[r] * es, sc[r], type, r, k.comm, st), "ncclSend");
  if (recvcount > 0 && !in_place && !g.failed()) g.add(ncclRecv(recv, recvcount, type, root, k.comm, st), "ncclRecv");
  g.end(k);
}

}  // namespace

int alltoallv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
              const std::size_t recvcounts[], const std::size_t rdispls[], int t, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    alltoallv_on(k, st, send, sendcounts, sdispls, recv, recvcounts, rdispls, t);
  });
}

// One ncclBroadcast per member r into recv + rdispls[r], in one group; in
// place, the caller's own block is the broadcast's source and target.
int allgatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
               const std::size_t rdispls[], int t, void* s, void** request) {
  (void)sendcount;  // == recvcounts[rank] (the core checked)
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    const std::size_t es = element(t);
    Group g;
    for (int r = 0; r < k.size && !g.failed(); ++r) {
      char* to = static_cast<char*>(recv) + rdispls[r] * es;  // also the (unread) source off root r
      if (recvcounts[r] > 0)
        g.add(ncclBroadcast(r == k.rank ? send : to, to, recvcounts[r], nccl_type(t), r, k.comm, st), "ncclBroadcast");
    }
    g.end(k);
  });
}

// One ncclReduce per member r of its block of the packed input, in one
// group. In place the input is read from a copy: member `rank`'s result, at
// the start of recv, overlaps the blocks of the members before it.
int reduce_scatterv(void* c, const void* send, void* recv, const std::size_t recvcounts[], int t, int op, void* s,
                    void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    const std::size_t es = element(t);
    std::size_t total = 0;
    for (int r = 0; r < k.size; ++r) total += recvcounts[r];
    const bool in_place = send == recv;
    if (in_place) DEVMESH_CUDA(cudaSetDevice(k.device));
    const StreamScratch copy(in_place ? recv : nullptr, in_place ? total * es : 0, st);
    const char* from = in_place ? copy.get() : static_cast<const char*>(send);
    Group g;
    std::size_t at = 0;  // block r's first element
    for (int r = 0; r < k.size && !g.failed(); at += recvcounts[r], ++r)
      if (recvcounts[r] > 0)
        g.add(ncclReduce(from + at * es, r == k.rank ? recv : nullptr, recvcounts[r], nccl_type(t), nccl_op(op), r,
                         k.comm, st),
              "ncclReduce");
    g.end(k);
  });
}

int gather(void* c, const void* send, void* recv, std::size_t count, int t, int root, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
#if DEVMESH_NCCL_HAS_ALLTOALL_GATHER_SCATTER
    k.done(ncclGather(send, recv, count, nccl_type(t), root, k.comm, st), "ncclGather");
#else
    std::vector<std::size_t> counts(static_cast<std::size_t>(k.size), count), displs(counts.size());
    for (std::size_t r = 0; r < displs.size(); ++r) displs[r] = r * count;
    gatherv_on(k, st, send, count, recv, counts.data(), displs.data(), t, root);
#endif
  });
}

int gatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
            const std::size_t rdispls[], int t, int root, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    gatherv_on(k, st, send, sendcount, recv, recvcounts, rdispls, t, root);
  });
}

int scatter(void* c, const void* send, void* recv, std::size_t count, int t, int root, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
#if DEVMESH_NCCL_HAS_ALLTOALL_GATHER_SCATTER
    k.done(ncclScatter(send, recv, count, nccl_type(t), root, k.comm, st), "ncclScatter");
#else
    std::vector<std::size_t> counts(static_cast<std::size_t>(k.size), count), displs(counts.size());
    for (std::size_t r = 0; r < displs.size(); ++r) displs[r] = r * count;
    scatterv_on(k, st, send, counts.data(), displs.data(), recv, count, t, root);
#endif
  });
}

int scatterv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
             std::size_t recvcount, int t, int root, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    scatterv_on(k, st, send, sendcounts, sdispls, recv, recvcount, t, root);
  });
}

// In place at the root (send == recv) as NCCL's own; recv NULL elsewhere.
int reduce(void* c, const void* send, void* recv, std::size_t count, int t, int op, int root, void* s, void** request) {
  return started(c, s, request, [&](Comm& k, cudaStream_t st) {
    k.done(ncclReduce(send, recv, count, nccl_type(t), nccl_op(op), root, k.comm, st), "ncclReduce");
  });
}

}  // namespace devmesh::backends
