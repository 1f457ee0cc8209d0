// PluginCommunicator's version 4 operations: the variable-size and rooted
// collectives, the started (non-blocking) form of every collective, and
// batch. Each checks its arguments through the gate, then calls the
// plugin's member once; a blocking form passes request null.
#include <string>
#include <vector>

#include "plugin_communicator_impl.hpp"

namespace devmesh::detail {
namespace {

using Counts = std::span<const std::size_t>;

// An array as the plugin gets it: NULL when the caller gave none.
const std::size_t* array(Counts a) { return a.empty() ? nullptr : a.data(); }

// p + n elements of type, as the in-place rules compare pointers.
const void* at(const void* p, std::size_t n, DataType type) {
  return static_cast<const char*>(p) + n * element_bytes(type);
}

}  // namespace

void PluginCommunicator::alltoallv_(const void* send, Counts sendcounts, Counts sdispls, void* recv, Counts recvcounts,
                                    Counts rdispls, DataType type, void* stream, void** request, const char* what) {
  const auto fn = member(t_.alltoallv, request, what);
  gate_.datatype(type);
  const std::size_t* rd = gate_.segments(recv, recvcounts, rdispls, type, "recvbuf", "recvcounts", "rdispls");
  const bool in_place = send == recv;
  const std::size_t* sc = nullptr;
  const std::size_t* sd = nullptr;
  if (!in_place) {
    sd = gate_.segments(send, sendcounts, sdispls, type, "sendbuf", "sendcounts", "sdispls");
    sc = sendcounts.data();
    gate_.same(sendcounts[rank_], recvcounts[rank_], "sendcounts[rank]", "recvcounts[rank]");
  }
  call([&] { return fn(comm_, send, sc, sd, recv, recvcounts.data(), rd, static_cast<int>(type), stream, request); },
       what);
}

void PluginCommunicator::allgatherv_(const void* send, std::size_t sendcount, void* recv, Counts recvcounts,
                                     Counts rdispls, DataType type, void* stream, void** request, const char* what) {
  const auto fn = member(t_.allgatherv, request, what);
  gate_.datatype(type);
  const std::size_t* rd = gate_.segments(recv, recvcounts, rdispls, type, "recvbuf", "recvcounts", "rdispls");
  gate_.same(sendcount, recvcounts[rank_], "sendcount", "recvcounts[rank]");
  gate_.buffer(send, sendcount, type, 1, "sendbuf");
  call([&] { return fn(comm_, send, sendcount, recv, recvcounts.data(), rd, static_cast<int>(type), stream, request); },
       what);
}

void PluginCommunicator::reduce_scatterv_(const void* send, void* recv, Counts recvcounts, DataType type, ReduceOp op,
                                          void* stream, void** request, const char* what) {
  const auto fn = member(t_.reduce_scatterv, request, what);
  gate_.reduction(type, op, what);
  const std::size_t total = gate_.packed(recvcounts, "recvcounts");
  gate_.buffer(send, total, type, 1, "sendbuf");
  gate_.buffer(recv, recvcounts[rank_], type, 1, "recvbuf");
  call(
      [&] {
        return fn(comm_, send, recv, recvcounts.data(), static_cast<int>(type), static_cast<int>(op), stream, request);
      },
      what);
}

void PluginCommunicator::gather_(const void* send, void* recv, std::size_t count, DataType type, int root, void* stream,
                                 void** request, const char* what) {
  const auto fn = member(t_.gather, request, what);
  gate_.datatype(type);
  gate_.group_rank(root, "root");
  gate_.buffer(send, count, type, 1, "sendbuf");
  if (rank_ == root) gate_.buffer(recv, count, type, gate_.blocks(), "recvbuf");
  call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), root, stream, request); }, what);
}

void PluginCommunicator::gatherv_(const void* send, std::size_t sendcount, void* recv, Counts recvcounts,
                                  Counts rdispls, DataType type, int root, void* stream, void** request,
                                  const char* what) {
  const auto fn = member(t_.gatherv, request, what);
  gate_.datatype(type);
  gate_.group_rank(root, "root");
  const std::size_t* rd = array(rdispls);
  if (rank_ == root) {
    rd = gate_.segments(recv, recvcounts, rdispls, type, "recvbuf", "recvcounts", "rdispls");
    if (send != at(recv, rdispls[root], type)) gate_.same(sendcount, recvcounts[root], "sendcount", "recvcounts[root]");
  }
  gate_.buffer(send, sendcount, type, 1, "sendbuf");
  call(
      [&] {
        return fn(comm_, send, sendcount, recv, array(recvcounts), rd, static_cast<int>(type), root, stream, request);
      },
      what);
}

void PluginCommunicator::scatter_(const void* send, void* recv, std::size_t count, DataType type, int root,
                                  void* stream, void** request, const char* what) {
  const auto fn = member(t_.scatter, request, what);
  gate_.datatype(type);
  gate_.group_rank(root, "root");
  if (rank_ == root) gate_.buffer(send, count, type, gate_.blocks(), "sendbuf");
  gate_.buffer(recv, count, type, 1, "recvbuf");
  call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), root, stream, request); }, what);
}

void PluginCommunicator::scatterv_(const void* send, Counts sendcounts, Counts sdispls, void* recv,
                                   std::size_t recvcount, DataType type, int root, void* stream, void** request,
                                   const char* what) {
  const auto fn = member(t_.scatterv, request, what);
  gate_.datatype(type);
  gate_.group_rank(root, "root");
  const std::size_t* sd = array(sdispls);
  if (rank_ == root) {
    sd = gate_.segments(send, sendcounts, sdispls, type, "sendbuf", "sendcounts", "sdispls");
    if (recv != at(send, sdispls[root], type)) gate_.same(recvcount, sendcounts[root], "recvcount", "sendcounts[root]");
  }
  gate_.buffer(recv, recvcount, type, 1, "recvbuf");
  call(
      [&] {
        return fn(comm_, send, array(sendcounts), sd, recv, recvcount, static_cast<int>(type), root, stream, request);
      },
      what);
}

void PluginCommunicator::reduce_(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                                 void* stream, void** request, const char* what) {
  const auto fn = member(t_.reduce, request, what);
  gate_.reduction(type, op, what);
  gate_.group_rank(root, "root");
  gate_.buffer(send, count, type, 1, "sendbuf");
  if (rank_ == root) gate_.buffer(recv, count, type, 1, "recvbuf");
  call(
      [&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), root, stream, request); },
      what);
}

// --- the blocking forms ------------------------------------------------------

void PluginCommunicator::alltoallv(const void* send, Counts sendcounts, Counts sdispls, void* recv, Counts recvcounts,
                                   Counts rdispls, DataType type, void* stream) {
  alltoallv_(send, sendcounts, sdispls, recv, recvcounts, rdispls, type, stream, nullptr, "alltoallv");
}
void PluginCommunicator::allgatherv(const void* send, std::size_t sendcount, void* recv, Counts recvcounts,
                                    Counts rdispls, DataType type, void* stream) {
  allgatherv_(send, sendcount, recv, recvcounts, rdispls, type, stream, nullptr, "allgatherv");
}
void PluginCommunicator::reduce_scatterv(const void* send, void* recv, Counts recvcounts, DataType type, ReduceOp op,
                                         void* stream) {
  reduce_scatterv_(send, recv, recvcounts, type, op, stream, nullptr, "reduce_scatterv");
}
void PluginCommunicator::gather(const void* send, void* recv, std::size_t count, DataType type, int root,
                                void* stream) {
  gather_(send, recv, count, type, root, stream, nullptr, "gather");
}
void PluginCommunicator::gatherv(const void* send, std::size_t sendcount, void* recv, Counts recvcounts, Counts rdispls,
                                 DataType type, int root, void* stream) {
  gatherv_(send, sendcount, recv, recvcounts, rdispls, type, root, stream, nullptr, "gatherv");
}
void PluginCommunicator::scatter(const void* send, void* recv, std::size_t count, DataType type, int root,
                                 void* stream) {
  scatter_(send, recv, count, type, root, stream, nullptr, "scatter");
}
void PluginCommunicator::scatterv(const void* send, Counts sendcounts, Counts sdispls, void* recv,
                                  std::size_t recvcount, DataType type, int root, void* stream) {
  scatterv_(send, sendcounts, sdispls, recv, recvcount, type, root, stream, nullptr, "scatterv");
}
void PluginCommunicator::reduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op, int root,
                                void* stream) {
  reduce_(send, recv, count, type, op, root, stream, nullptr, "reduce");
}

// --- the started forms -------------------------------------------------------

Request PluginCommunicator::iallreduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                                       void* stream) {
  const auto fn = member(t_.iallreduce, "iallreduce");
  check_allreduce(send, recv, count, type, op, "iallreduce");
  return started([&](void** r) {
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream, r); },
         "iallreduce");
  });
}
Request PluginCommunicator::iallgather(const void* send, void* recv, std::size_t count, DataType type, void* stream) {
  const auto fn = member(t_.iallgather, "iallgather");
  check_allgather(send, recv, count, type);
  return started([&](void** r) {
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), stream, r); }, "iallgather");
  });
}
Request PluginCommunicator::ireduce_scatter(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                                            void* stream) {
  const auto fn = member(t_.ireduce_scatter, "ireduce_scatter");
  check_reduce_scatter(send, recv, count, type, op, "ireduce_scatter");
  return started([&](void** r) {
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), static_cast<int>(op), stream, r); },
         "ireduce_scatter");
  });
}
Request PluginCommunicator::ibroadcast(void* buffer, std::size_t count, DataType type, int root, void* stream) {
  const auto fn = member(t_.ibroadcast, "ibroadcast");
  check_broadcast(buffer, count, type, root);
  return started([&](void** r) {
    call([&] { return fn(comm_, buffer, count, static_cast<int>(type), root, stream, r); }, "ibroadcast");
  });
}
Request PluginCommunicator::ialltoall(const void* send, void* recv, std::size_t count, DataType type, void* stream) {
  const auto fn = member(t_.ialltoall, "ialltoall");
  check_alltoall(send, recv, count, type);
  return started([&](void** r) {
    call([&] { return fn(comm_, send, recv, count, static_cast<int>(type), stream, r); }, "ialltoall");
  });
}
Request PluginCommunicator::ibarrier(void* stream) {
  const auto fn = member(t_.ibarrier, "ibarrier");
  return started([&](void** r) { call([&] { return fn(comm_, stream, r); }, "ibarrier"); });
}
Request PluginCommunicator::ialltoallv(const void* send, Counts sendcounts, Counts sdispls, void* recv,
                                       Counts recvcounts, Counts rdispls, DataType type, void* stream) {
  return started([&](void** r) {
    alltoallv_(send, sendcounts, sdispls, recv, recvcounts, rdispls, type, stream, r, "ialltoallv");
  });
}
Request PluginCommunicator::iallgatherv(const void* send, std::size_t sendcount, void* recv, Counts recvcounts,
                                        Counts rdispls, DataType type, void* stream) {
  return started(
      [&](void** r) { allgatherv_(send, sendcount, recv, recvcounts, rdispls, type, stream, r, "iallgatherv"); });
}
Request PluginCommunicator::ireduce_scatterv(const void* send, void* recv, Counts recvcounts, DataType type,
                                             ReduceOp op, void* stream) {
  return started([&](void** r) { reduce_scatterv_(send, recv, recvcounts, type, op, stream, r, "ireduce_scatterv"); });
}
Request PluginCommunicator::igather(const void* send, void* recv, std::size_t count, DataType type, int root,
                                    void* stream) {
  return started([&](void** r) { gather_(send, recv, count, type, root, stream, r, "igather"); });
}
Request PluginCommunicator::igatherv(const void* send, std::size_t sendcount, void* recv, Counts recvcounts,
                                     Counts rdispls, DataType type, int root, void* stream) {
  return started(
      [&](void** r) { gatherv_(send, sendcount, recv, recvcounts, rdispls, type, root, stream, r, "igatherv"); });
}
Request PluginCommunicator::iscatter(const void* send, void* recv, std::size_t count, DataType type, int root,
                                     void* stream) {
  return started([&](void** r) { scatter_(send, recv, count, type, root, stream, r, "iscatter"); });
}
Request PluginCommunicator::iscatterv(const void* send, Counts sendcounts, Counts sdispls, void* recv,
                                      std::size_t recvcount, DataType type, int root, void* stream) {
  return started(
      [&](void** r) { scatterv_(send, sendcounts, sdispls, recv, recvcount, type, root, stream, r, "iscatterv"); });
}
Request PluginCommunicator::ireduce(const void* send, void* recv, std::size_t count, DataType type, ReduceOp op,
                                    int root, void* stream) {
  return started([&](void** r) { reduce_(send, recv, count, type, op, root, stream, r, "ireduce"); });
}

// Every entry checked before anything starts (an entry with MPI_PROC_NULL
// dropped, as in MPI); nothing to do at all is an empty Request.
Request PluginCommunicator::batch(std::span<const P2P> ops, void* stream) {
  const auto fn = member(t_.batch, "batch");
  std::vector<devmesh_backend_p2p_t> kept;
  kept.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const P2P& op = ops[i];
    bool active = false;
    try {
      active = gate_.point_to_point(op.buffer, op.count, op.type, op.peer, "peer", "buffer");
    } catch (const Error& e) {
      throw Error(e.status(), "ops[" + std::to_string(i) + "]: " + e.what());
    }
    if (active) kept.push_back({op.send ? 1 : 0, op.peer, op.buffer, op.count, static_cast<int>(op.type)});
  }
  if (kept.empty()) return {};
  return started([&](void** r) { call([&] { return fn(comm_, kept.data(), kept.size(), stream, r); }, "batch"); });
}

}  // namespace devmesh::detail
