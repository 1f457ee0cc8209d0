#include "comm_counter.hpp"

#include <mpi.h>

#include <atomic>

namespace {
std::atomic<long> made{0};
std::atomic<long> gone{0};
std::atomic<long> on_world{0};
std::atomic<long> data{0};
// Time inside the collective calls below, in nanoseconds.
std::atomic<long long> inside_ns{0};
// Runs one wrapped collective call, adding its time to inside_ns.
template <class Call>
int timed(Call call) {
  const double t0 = PMPI_Wtime();
  const int rc = call();
  inside_ns += static_cast<long long>((PMPI_Wtime() - t0) * 1e9);
  return rc;
}
int world(int rc, MPI_Comm c) {
  if (c == MPI_COMM_WORLD) ++on_world;
  return rc;
}
// A collective or point-to-point call on the data path (data_calls()).
int moved(int rc) {
  ++data;
  return rc;
}
int count(int rc, MPI_Comm* out) {
  if (rc == MPI_SUCCESS && *out != MPI_COMM_NULL) ++made;
  return rc;
}
}  // namespace

namespace comm_counter {
long created() { return made.load(); }
long freed() { return gone.load(); }
long world_collectives() { return on_world.load(); }
long data_calls() { return data.load(); }
double seconds_in_collectives() { return static_cast<double>(inside_ns.load()) * 1e-9; }
}  // namespace comm_counter

extern "C" {
int MPI_Comm_dup(MPI_Comm c, MPI_Comm* out) {
  return count(timed([&] { return PMPI_Comm_dup(c, out); }), out);
}
int MPI_Comm_idup(MPI_Comm c, MPI_Comm* out, MPI_Request* r) {
  int rc = PMPI_Comm_idup(c, out, r);
  if (rc == MPI_SUCCESS) ++made;
  return rc;
}
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* out) {
  return count(timed([&] { return PMPI_Comm_split(c, color, key, out); }), out);
}
int MPI_Comm_split_type(MPI_Comm c, int type, int key, MPI_Info info, MPI_Comm* out) {
  return world(count(timed([&] { return PMPI_Comm_split_type(c, type, key, info, out); }), out), c);
}
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return moved(world(timed([&] { return PMPI_Allreduce(s, r, n, t, op, c); }), c));
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  return moved(world(timed([&] { return PMPI_Allgather(s, sn, st, r, rn, rt, c); }), c));
}
int MPI_Allgatherv(const void* s, int sn, MPI_Datatype st, void* r, const int rn[], const int displs[], MPI_Datatype rt,
                   MPI_Comm c) {
  return moved(world(timed([&] { return PMPI_Allgatherv(s, sn, st, r, rn, displs, rt, c); }), c));
}
int MPI_Bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  return moved(world(timed([&] { return PMPI_Bcast(b, n, t, root, c); }), c));
}
// The other collectives and point to point: counted only.
int MPI_Alltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  return moved(PMPI_Alltoall(s, sn, st, r, rn, rt, c));
}
int MPI_Alltoallv(const void* s, const int sn[], const int sd[], MPI_Datatype st, void* r, const int rn[],
                  const int rd[], MPI_Datatype rt, MPI_Comm c) {
  return moved(PMPI_Alltoallv(s, sn, sd, st, r, rn, rd, rt, c));
}
int MPI_Gather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c) {
  return moved(PMPI_Gather(s, sn, st, r, rn, rt, root, c));
}
int MPI_Gatherv(const void* s, int sn, MPI_Datatype st, void* r, const int rn[], const int rd[], MPI_Datatype rt,
                int root, MPI_Comm c) {
  return moved(PMPI_Gatherv(s, sn, st, r, rn, rd, rt, root, c));
}
int MPI_Scatter(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c) {
  return moved(PMPI_Scatter(s, sn, st, r, rn, rt, root, c));
}
int MPI_Scatterv(const void* s, const int sn[], const int sd[], MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                 int root, MPI_Comm c) {
  return moved(PMPI_Scatterv(s, sn, sd, st, r, rn, rt, root, c));
}
int MPI_Reduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c) {
  return moved(PMPI_Reduce(s, r, n, t, op, root, c));
}
int MPI_Reduce_scatter(const void* s, void* r, const int rn[], MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return moved(PMPI_Reduce_scatter(s, r, rn, t, op, c));
}
int MPI_Reduce_scatter_block(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  return moved(PMPI_Reduce_scatter_block(s, r, n, t, op, c));
}
int MPI_Barrier(MPI_Comm c) { return moved(PMPI_Barrier(c)); }
int MPI_Iallreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Iallreduce(s, r, n, t, op, c, q));
}
int MPI_Iallgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c,
                   MPI_Request* q) {
  return moved(PMPI_Iallgather(s, sn, st, r, rn, rt, c, q));
}
int MPI_Iallgatherv(const void* s, int sn, MPI_Datatype st, void* r, const int rn[], const int rd[], MPI_Datatype rt,
                    MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Iallgatherv(s, sn, st, r, rn, rd, rt, c, q));
}
int MPI_Ialltoall(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c,
                  MPI_Request* q) {
  return moved(PMPI_Ialltoall(s, sn, st, r, rn, rt, c, q));
}
int MPI_Ialltoallv(const void* s, const int sn[], const int sd[], MPI_Datatype st, void* r, const int rn[],
                   const int rd[], MPI_Datatype rt, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Ialltoallv(s, sn, sd, st, r, rn, rd, rt, c, q));
}
int MPI_Ibcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Ibcast(b, n, t, root, c, q));
}
int MPI_Igather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c,
                MPI_Request* q) {
  return moved(PMPI_Igather(s, sn, st, r, rn, rt, root, c, q));
}
int MPI_Igatherv(const void* s, int sn, MPI_Datatype st, void* r, const int rn[], const int rd[], MPI_Datatype rt,
                 int root, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Igatherv(s, sn, st, r, rn, rd, rt, root, c, q));
}
int MPI_Iscatter(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, int root, MPI_Comm c,
                 MPI_Request* q) {
  return moved(PMPI_Iscatter(s, sn, st, r, rn, rt, root, c, q));
}
int MPI_Iscatterv(const void* s, const int sn[], const int sd[], MPI_Datatype st, void* r, int rn, MPI_Datatype rt,
                  int root, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Iscatterv(s, sn, sd, st, r, rn, rt, root, c, q));
}
int MPI_Ireduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Ireduce(s, r, n, t, op, root, c, q));
}
int MPI_Ireduce_scatter(const void* s, void* r, const int rn[], MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Ireduce_scatter(s, r, rn, t, op, c, q));
}
int MPI_Ireduce_scatter_block(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Ireduce_scatter_block(s, r, n, t, op, c, q));
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request* q) { return moved(PMPI_Ibarrier(c, q)); }
int MPI_Send(const void* b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  return moved(PMPI_Send(b, n, t, dest, tag, c));
}
int MPI_Ssend(const void* b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c) {
  return moved(PMPI_Ssend(b, n, t, dest, tag, c));
}
int MPI_Recv(void* b, int n, MPI_Datatype t, int source, int tag, MPI_Comm c, MPI_Status* st) {
  return moved(PMPI_Recv(b, n, t, source, tag, c, st));
}
int MPI_Isend(const void* b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Isend(b, n, t, dest, tag, c, q));
}
int MPI_Irecv(void* b, int n, MPI_Datatype t, int source, int tag, MPI_Comm c, MPI_Request* q) {
  return moved(PMPI_Irecv(b, n, t, source, tag, c, q));
}
int MPI_Sendrecv(const void* s, int sn, MPI_Datatype st, int dest, int stag, void* r, int rn, MPI_Datatype rt,
                 int source, int rtag, MPI_Comm c, MPI_Status* status) {
  return moved(PMPI_Sendrecv(s, sn, st, dest, stag, r, rn, rt, source, rtag, c, status));
}
int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm* out) {
  return count(timed([&] { return PMPI_Comm_create(c, g, out); }), out);
}
int MPI_Comm_create_group(MPI_Comm c, MPI_Group g, int tag, MPI_Comm* out) {
  return count(timed([&] { return PMPI_Comm_create_group(c, g, tag, out); }), out);
}
#if DEVMESH_HAVE_MPI_COMM_CREATE_FROM_GROUP
int MPI_Comm_create_from_group(MPI_Group g, const char* tag, MPI_Info info, MPI_Errhandler eh, MPI_Comm* out) {
  return count(timed([&] { return PMPI_Comm_create_from_group(g, tag, info, eh, out); }), out);
}
#endif
int MPI_Cart_create(MPI_Comm c, int n, const int dims[], const int periods[], int reorder, MPI_Comm* out) {
  return count(timed([&] { return PMPI_Cart_create(c, n, dims, periods, reorder, out); }), out);
}
int MPI_Cart_sub(MPI_Comm c, const int remain[], MPI_Comm* out) {
  return count(timed([&] { return PMPI_Cart_sub(c, remain, out); }), out);
}
int MPI_Comm_free(MPI_Comm* c) {
  const bool real = c && *c != MPI_COMM_NULL;
  int rc = PMPI_Comm_free(c);
  if (rc == MPI_SUCCESS && real) ++gone;
  return rc;
}
}
