// The MPI backend's variable-size and rooted collectives (version 4): one
// MPI call each (the `_c` large-count call where the MPI has it), blocking
// or started as Operation decides, in place as backend_plugin.h lists
// (MPI_IN_PLACE). A blocking call hands MPI the caller's size_t counts and
// displacements themselves where MPI's types are size_t's signed twins
// (the `_c` calls of an LP64 MPI); otherwise they are converted into the
// communicator's kept arrays (blocking) or the request's own (started,
// since MPI reads them until the request completes): O(group) work and no
// allocation per blocking call once the arrays have grown.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "mpi_comm.hpp"

namespace devmesh::backends::mpi_backend {
namespace {

// p is base + n elements of type (as the in-place rules compare pointers;
// integers, so that a NULL base with empty segments is no arithmetic on
// NULL).
bool is_at(const void* p, const void* base, std::size_t n, int type) {
  return reinterpret_cast<std::uintptr_t>(p) == reinterpret_cast<std::uintptr_t>(base) + n * size_of(type_of(type));
}

// MPI's count and displacement types are size_t's signed twins (the `_c`
// calls of an LP64 MPI): the same representation, and the two may alias.
constexpr bool twins = std::is_same_v<count_t, std::make_signed_t<std::size_t>> && std::is_same_v<displ_t, count_t>;

// Whether the call hands MPI the caller's arrays themselves: it is blocking
// (MPI reads them only until it returns) and the types are twins. Every
// entry fits them: the core hands a plugin none past PTRDIFF_MAX
// (backend_plugin.h).
bool as_is(const Operation& o) { return twins && !o.started(); }

// The caller's array as MPI's T (keep: as_is()), else NULL.
template <class T>
const T* caller_s(bool keep, const std::size_t* in) {
  if constexpr (twins) return keep ? reinterpret_cast<const T*>(in) : nullptr;
  return nullptr;
}

// The counts of slot 0 or 1 (send side, receive side) converted into o's
// arrays.
[[gnu::noinline]] const count_t* convert_counts(Operation& o, int slot, const std::size_t* in, int n,
                                                const char* name) {
  Arrays& a = o.arrays();
  a.fit(n);
  return converted(a.counts.data() + static_cast<std::size_t>(slot * n), in, n, name);
}
// The displacements likewise; that of an empty block, which MPI does not
// read, passes as 0, so that only what MPI uses must fit its integer.
[[gnu::noinline]] const displ_t* convert_displs(Operation& o, int slot, const std::size_t* in, const std::size_t* sizes,
                                                int n, const char* name) {
  Arrays& a = o.arrays();
  a.fit(n);
  displ_t* out = a.displs.data() + static_cast<std::size_t>(slot * n);
  for (int i = 0; i < n; ++i) out[i] = sizes[i] == 0 ? 0 : counted<displ_t>(in[i], name, static_cast<std::size_t>(i));
  return out;
}

// The counts and displacements as MPI reads them: the caller's (keep) or
// converted.
const count_t* counts(Operation& o, bool keep, int slot, const std::size_t* in, int n, const char* name) {
  const count_t* same = caller_s<count_t>(keep, in);
  return same ? same : convert_counts(o, slot, in, n, name);
}
const displ_t* displs(Operation& o, bool keep, int slot, const std::size_t* in, const std::size_t* sizes, int n,
                      const char* name) {
  const displ_t* same = caller_s<displ_t>(keep, in);
  return same ? same : convert_displs(o, slot, in, sizes, n, name);
}

// allgatherv on a group of one: MPICH 4.0 writes the block at recv,
// ignoring rdispls[0] (blocking and started alike), so the backend copies
// it itself; complete at once (request NULL).
void copy_own_block(const void* send, std::size_t count, void* recv, std::size_t displ, int type, void** request) {
  const std::size_t es = size_of(type_of(type));
  char* to = static_cast<char*>(recv) + displ * es;
  if (count > 0 && to != send) std::memmove(to, send, count * es);
  if (request) *request = nullptr;
}

}  // namespace

int alltoallv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
              const std::size_t recvcounts[], const std::size_t rdispls[], int type, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Alltoallv));
    const int n = o.comm().size;
    bool in_place = send == recv;  // the send side is then unread
    const void* in = in_place ? MPI_IN_PLACE : send;
#if defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION < 5
    // Open MPI 4.1's in-place MPI_Ialltoallv leaves the communicator's next
    // nonblocking collective hanging: the blocks go from a copy instead.
    if (in_place) {
      std::size_t end = 0;
      for (int r = 0; r < n; ++r)
        if (recvcounts[r] > 0) end = std::max(end, rdispls[r] + recvcounts[r]);
      const char* from = static_cast<const char*>(recv);
      std::vector<char>& copy = o.arrays().copy;
      copy.assign(from, from + end * size_of(type_of(type)));
      in = copy.data();
      in_place = false;
      sendcounts = recvcounts;
      sdispls = rdispls;
    }
#endif
    const bool keep = as_is(o);
    const count_t* rc = counts(o, keep, 1, recvcounts, n, "recvcounts");
    const displ_t* rd = displs(o, keep, 1, rdispls, recvcounts, n, "rdispls");
    const count_t* sc = in_place ? rc : counts(o, keep, 0, sendcounts, n, "sendcounts");
    const displ_t* sd = in_place ? rd : displs(o, keep, 0, sdispls, sendcounts, n, "sdispls");
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Alltoallv)(in, sc, sd, t, recv, rc, rd, t, k); },
         [&](MPI_Comm k, MPI_Request* r) {
           return DEVMESH_MPI_COUNTED(MPI_Ialltoallv)(in, sc, sd, t, recv, rc, rd, t, k, r);
         });
  });
}

int allgatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
               const std::size_t rdispls[], int type, void*, void** request) {
  return plugin::guarded([&] {
    if (static_cast<Comm*>(c)->size == 1) return copy_own_block(send, sendcount, recv, rdispls[0], type, request);
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Allgatherv));
    const int n = o.comm().size;
    const bool keep = as_is(o);
    const count_t* rc = counts(o, keep, 1, recvcounts, n, "recvcounts");
    const displ_t* rd = displs(o, keep, 1, rdispls, recvcounts, n, "rdispls");
    const void* in = is_at(send, recv, rdispls[o.comm().rank], type) ? MPI_IN_PLACE : send;
    const count_t sc = counted<count_t>(sendcount);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Allgatherv)(in, sc, t, recv, rc, rd, t, k); },
         [&](MPI_Comm k, MPI_Request* r) {
           return DEVMESH_MPI_COUNTED(MPI_Iallgatherv)(in, sc, t, recv, rc, rd, t, k, r);
         });
  });
}

int reduce_scatterv(void* c, const void* send, void* recv, const std::size_t recvcounts[], int type, int op, void*,
                    void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Reduce_scatter));
    const int n = o.comm().size;
    const count_t* rc = counts(o, as_is(o), 1, recvcounts, n, "recvcounts");
    const void* in = send == recv ? MPI_IN_PLACE : send;
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const MPI_Op m = mpi_op(op_of(op));
    o.go(
        [&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Reduce_scatter)(in, recv, rc, t, m, k); },
        [&](MPI_Comm k, MPI_Request* r) { return DEVMESH_MPI_COUNTED(MPI_Ireduce_scatter)(in, recv, rc, t, m, k, r); });
  });
}

int gather(void* c, const void* send, void* recv, std::size_t count, int type, int root, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Gather));
    const bool in_place = o.comm().rank == root && is_at(send, recv, static_cast<std::size_t>(root) * count, type);
    const void* in = in_place ? MPI_IN_PLACE : send;
    const count_t k = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go(
        [&](MPI_Comm m) { return DEVMESH_MPI_COUNTED(MPI_Gather)(in, k, t, recv, k, t, root, m); },
        [&](MPI_Comm m, MPI_Request* r) { return DEVMESH_MPI_COUNTED(MPI_Igather)(in, k, t, recv, k, t, root, m, r); });
  });
}

// recvcounts and rdispls are read at the root only (NULL elsewhere).
int gatherv(void* c, const void* send, std::size_t sendcount, void* recv, const std::size_t recvcounts[],
            const std::size_t rdispls[], int type, int root, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Gatherv));
    const int n = o.comm().size;
    const bool at_root = o.comm().rank == root;
    const bool keep = as_is(o);
    const count_t* rc = at_root ? counts(o, keep, 1, recvcounts, n, "recvcounts") : nullptr;
    const displ_t* rd = at_root ? displs(o, keep, 1, rdispls, recvcounts, n, "rdispls") : nullptr;
    const bool in_place = at_root && is_at(send, recv, rdispls[root], type);
    const void* in = in_place ? MPI_IN_PLACE : send;
    const count_t sc = counted<count_t>(sendcount);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Gatherv)(in, sc, t, recv, rc, rd, t, root, k); },
         [&](MPI_Comm k, MPI_Request* r) {
           return DEVMESH_MPI_COUNTED(MPI_Igatherv)(in, sc, t, recv, rc, rd, t, root, k, r);
         });
  });
}

int scatter(void* c, const void* send, void* recv, std::size_t count, int type, int root, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Scatter));
    const bool in_place = o.comm().rank == root && is_at(recv, send, static_cast<std::size_t>(root) * count, type);
    void* out = in_place ? MPI_IN_PLACE : recv;
    const count_t k = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm m) { return DEVMESH_MPI_COUNTED(MPI_Scatter)(send, k, t, out, k, t, root, m); },
         [&](MPI_Comm m, MPI_Request* r) {
           return DEVMESH_MPI_COUNTED(MPI_Iscatter)(send, k, t, out, k, t, root, m, r);
         });
  });
}

// sendcounts and sdispls are read at the root only (NULL elsewhere).
int scatterv(void* c, const void* send, const std::size_t sendcounts[], const std::size_t sdispls[], void* recv,
             std::size_t recvcount, int type, int root, void*, void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Scatterv));
    const int n = o.comm().size;
    const bool at_root = o.comm().rank == root;
    const bool keep = as_is(o);
    const count_t* sc = at_root ? counts(o, keep, 0, sendcounts, n, "sendcounts") : nullptr;
    const displ_t* sd = at_root ? displs(o, keep, 0, sdispls, sendcounts, n, "sdispls") : nullptr;
    const bool in_place = at_root && is_at(recv, send, sdispls[root], type);
    void* out = in_place ? MPI_IN_PLACE : recv;
    const count_t rc = counted<count_t>(recvcount);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    o.go([&](MPI_Comm k) { return DEVMESH_MPI_COUNTED(MPI_Scatterv)(send, sc, sd, t, out, rc, t, root, k); },
         [&](MPI_Comm k, MPI_Request* r) {
           return DEVMESH_MPI_COUNTED(MPI_Iscatterv)(send, sc, sd, t, out, rc, t, root, k, r);
         });
  });
}

int reduce(void* c, const void* send, void* recv, std::size_t count, int type, int op, int root, void*,
           void** request) {
  return plugin::guarded([&] {
    Operation o(c, request, DEVMESH_MPI_COUNTED_NAME(MPI_Reduce));
    const void* in = o.comm().rank == root && send == recv ? MPI_IN_PLACE : send;
    const count_t k = counted<count_t>(count);
    const MPI_Datatype t = mpi_datatype(type_of(type));
    const MPI_Op m = mpi_op(op_of(op));
    o.go([&](MPI_Comm x) { return DEVMESH_MPI_COUNTED(MPI_Reduce)(in, recv, k, t, m, root, x); },
         [&](MPI_Comm x, MPI_Request* r) { return DEVMESH_MPI_COUNTED(MPI_Ireduce)(in, recv, k, t, m, root, x, r); });
  });
}

}  // namespace devmesh::backends::mpi_backend
