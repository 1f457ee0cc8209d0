/* libdevmesh_bench_repair_profile.so: loaded with LD_PRELOAD into
 * bench_repair (run-repair --profile), it times the MPI calls a repair makes
 * (through the PMPI names) and writes one line per call,
 * "NAME START_MS END_MS COMM_SIZE", to $DEVMESH_BENCH_PROFILE/<pid>.calls, on
 * the monotonic clock bench_repair marks its phases with. Profiling only:
 * each line costs a write. */
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static FILE* out;
static int tried;

static double clock_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static void note(const char* name, double t0, MPI_Comm c) {
  const double t1 = clock_ms();
  if (!tried) {
    tried = 1;
    const char* dir = getenv("DEVMESH_BENCH_PROFILE");
    if (dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%d.calls", dir, (int)getpid());
      out = fopen(path, "w");
    }
  }
  if (!out) return;
  int n = -1;
  if (c != MPI_COMM_NULL) PMPI_Comm_size(c, &n);
  fprintf(out, "%s %.4f %.4f %d\n", name, t0, t1, n);
  fflush(out);
}

#define TIMED(name, comm, call)   \
  do {                            \
    const double t0 = clock_ms(); \
    const int rc = (call);        \
    note(name, t0, comm);         \
    return rc;                    \
  } while (0)

int MPIX_Comm_shrink(MPI_Comm c, MPI_Comm* o) { TIMED("shrink", c, PMPIX_Comm_shrink(c, o)); }
int MPIX_Comm_agree(MPI_Comm c, int* f) { TIMED("agree", c, PMPIX_Comm_agree(c, f)); }
int MPIX_Comm_revoke(MPI_Comm c) { TIMED("revoke", c, PMPIX_Comm_revoke(c)); }
int MPI_Bcast(void* b, int n, MPI_Datatype t, int r, MPI_Comm c) { TIMED("bcast", c, PMPI_Bcast(b, n, t, r, c)); }
int MPI_Comm_split(MPI_Comm c, int color, int key, MPI_Comm* o) {
  TIMED("split", c, PMPI_Comm_split(c, color, key, o));
}
int MPI_Comm_create(MPI_Comm c, MPI_Group g, MPI_Comm* o) { TIMED("create", c, PMPI_Comm_create(c, g, o)); }
int MPI_Comm_dup(MPI_Comm c, MPI_Comm* o) { TIMED("dup", c, PMPI_Comm_dup(c, o)); }
int MPI_Comm_free(MPI_Comm* c) { TIMED("free", MPI_COMM_NULL, PMPI_Comm_free(c)); }
int MPI_Allreduce(const void* s, void* r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c) {
  TIMED("allreduce", c, PMPI_Allreduce(s, r, n, t, op, c));
}
int MPI_Allgather(const void* s, int sn, MPI_Datatype st, void* r, int rn, MPI_Datatype rt, MPI_Comm c) {
  TIMED("allgather", c, PMPI_Allgather(s, sn, st, r, rn, rt, c));
}
int MPI_Comm_spawn(const char* cmd, char* argv[], int n, MPI_Info info, int root, MPI_Comm c, MPI_Comm* o, int errs[]) {
  TIMED("spawn", c, PMPI_Comm_spawn(cmd, argv, n, info, root, c, o, errs));
}
int MPI_Intercomm_merge(MPI_Comm c, int high, MPI_Comm* o) {
  TIMED("merge", MPI_COMM_NULL, PMPI_Intercomm_merge(c, high, o));
}
int MPI_Comm_group(MPI_Comm c, MPI_Group* g) { TIMED("comm_group", c, PMPI_Comm_group(c, g)); }
int MPI_Group_translate_ranks(MPI_Group a, int n, const int r[], MPI_Group b, int o[]) {
  TIMED("translate", MPI_COMM_NULL, PMPI_Group_translate_ranks(a, n, r, b, o));
}
int MPI_Group_incl(MPI_Group g, int n, const int r[], MPI_Group* o) {
  TIMED("group_incl", MPI_COMM_NULL, PMPI_Group_incl(g, n, r, o));
}
int MPI_Comm_set_name(MPI_Comm c, const char* s) { TIMED("set_name", c, PMPI_Comm_set_name(c, s)); }
int MPI_Comm_set_attr(MPI_Comm c, int k, void* v) { TIMED("set_attr", c, PMPI_Comm_set_attr(c, k, v)); }
int MPI_Comm_set_errhandler(MPI_Comm c, MPI_Errhandler e) {
  TIMED("set_errhandler", c, PMPI_Comm_set_errhandler(c, e));
}
int MPI_Barrier(MPI_Comm c) { TIMED("barrier", c, PMPI_Barrier(c)); }
int MPI_Iprobe(int s, int t, MPI_Comm c, int* f, MPI_Status* st) { TIMED("iprobe", c, PMPI_Iprobe(s, t, c, f, st)); }
