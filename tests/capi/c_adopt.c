/* devmesh_create_from_comms(_f): a mesh over the program's own
 * MPI_Comm_split communicators, checked against a brute force over the
 * world's ranks and against MPI (MPI_Comm_compare, MPI_Allreduce); every
 * error with the same status on every rank and the output untouched.
 * Prints "FAIL ..." lines and exits non-zero on any mismatch. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "c_check.h"
#include "devmesh/devmesh.h"

static int n = 1;

static int same_everywhere(int v) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

static int ident(MPI_Comm x, MPI_Comm y) {
  int r = MPI_UNEQUAL;
  MPI_Comm_compare(x, y, &r);
  return r == MPI_IDENT;
}

/* The call `rc` failed with `want` on every rank and left *out alone. */
static void fails_alike(int rc, int want, devmesh_t out, devmesh_t sentinel, int line) {
  if (rc != want) {
    ++failures;
    fprintf(stderr, "FAIL rank %d line %d: status %d, expected %d [%s]\n", me, line, rc, want, devmesh_last_error());
  }
  if (!same_everywhere(rc)) {
    ++failures;
    fprintf(stderr, "FAIL rank %d line %d: status differs between ranks\n", me, line);
  }
  if (out != sentinel) {
    ++failures;
    fprintf(stderr, "FAIL rank %d line %d: output changed\n", me, line);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int b = n == 8 ? 4 : n % 2 == 0 ? 2 : n, a = n / b;
  MPI_Comm dp, tp;
  MPI_Comm_split(MPI_COMM_WORLD, me / b, me, &tp);
  MPI_Comm_split(MPI_COMM_WORLD, me % b, me, &dp);
  const char *names[] = {"dp", "tp"};

  /* Twice: a second mesh over the same communicators behaves alike. */
  for (int pass = 0; pass < 2; ++pass) {
    devmesh_t m = NULL;
    MPI_Comm comms[2] = {dp, tp};
    int rc = devmesh_create_from_comms(MPI_COMM_WORLD, 2, comms, names, NULL, &m);
    CHECK(rc == DEVMESH_SUCCESS && m, "create_from_comms (pass %d) returned %d", pass, rc);
    if (!m) continue;
    int coord[2] = {-1, -1}, shape[2] = {0, 0};
    devmesh_coordinate(m, 2, coord);
    devmesh_shape(m, 2, shape);
    CHECK(coord[0] == me / b && coord[1] == me % b, "coordinate (%d,%d)", coord[0], coord[1]);
    CHECK(shape[0] == a && shape[1] == b, "shape (%d,%d)", shape[0], shape[1]);
    int ranks[16];
    devmesh_group_ranks(m, "dp", 16, ranks);
    for (int k = 0; k < a; ++k) CHECK(ranks[k] == k * b + me % b, "dp group[%d] = %d", k, ranks[k]);
    MPI_Comm c = MPI_COMM_NULL;
    devmesh_comm(m, "dp", &c);
    CHECK(ident(c, dp), "devmesh_comm(dp) is not the program's dp");
    if (b > 1) {
      devmesh_comm(m, "tp", &c);
      CHECK(ident(c, tp), "devmesh_comm(tp) is not the program's tp");
    }
    int count = -1;
    devmesh_comm_count(m, &count);
    CHECK(count == 0, "comm_count %d", count);
    /* A transposed slice flattened: its communicator over the world in
     * dp-major order, by MPI. */
    devmesh_t s = NULL, f = NULL;
    const char *order[] = {"tp", "dp"};
    devmesh_slice(m, 2, order, &s);
    devmesh_flatten(s, "td", &f);
    devmesh_comm(f, "td", &c);
    int pos = -1, sum = -1;
    MPI_Comm_rank(c, &pos);
    CHECK(pos == (me % b) * a + me / b, "rank %d in the flattened (tp, dp)", pos);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
    CHECK(sum == n * (n - 1) / 2, "allreduce %d", sum);
    devmesh_destroy(&f);
    devmesh_destroy(&s);
    devmesh_destroy(&m);
  }
  /* The program's communicators outlive the mesh. */
  int sum = -1;
  CHECK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, tp) == MPI_SUCCESS, "tp after destroy");

  /* Errors: every rank alike, the output untouched. */
  devmesh_t sentinel = (devmesh_t)&failures, out = sentinel;
  MPI_Comm comms[2] = {dp, me == 0 ? MPI_COMM_NULL : tp};
  fails_alike(devmesh_create_from_comms(MPI_COMM_WORLD, 2, comms, names, NULL, &out), DEVMESH_ERR_INVALID_ARGUMENT,
              out, sentinel, __LINE__);
  comms[1] = tp;
  fails_alike(devmesh_create_from_comms(MPI_COMM_WORLD, 0, comms, names, NULL, &out), DEVMESH_ERR_INVALID_ARGUMENT,
              out, sentinel, __LINE__);
  fails_alike(devmesh_create_from_comms(MPI_COMM_WORLD, 2, NULL, names, NULL, &out), DEVMESH_ERR_INVALID_ARGUMENT,
              out, sentinel, __LINE__);
  devmesh_config_t cfg = DEVMESH_CONFIG_INITIALIZER;
  cfg.host_aware = 1;
  fails_alike(devmesh_create_from_comms(MPI_COMM_WORLD, 2, comms, names, &cfg, &out), DEVMESH_ERR_INVALID_ARGUMENT,
              out, sentinel, __LINE__);
  devmesh_config_t listed = DEVMESH_CONFIG_INITIALIZER;
  int all = 0;
  listed.nranks = 1;
  listed.ranks = &all;
  fails_alike(devmesh_create_from_comms(MPI_COMM_WORLD, 2, comms, names, &listed, &out),
              DEVMESH_ERR_INVALID_ARGUMENT, out, sentinel, __LINE__);
  const char *other[] = {"dp", me == 0 ? "tp" : "pt"};
  fails_alike(devmesh_create_from_comms(MPI_COMM_WORLD, 2, comms, other, NULL, &out),
              n > 1 ? DEVMESH_ERR_INCONSISTENT : DEVMESH_SUCCESS, out, n > 1 ? sentinel : out, __LINE__);
  if (n == 1) devmesh_destroy(&out);
  out = sentinel;
  if (a > 1 && b > 1) {
    MPI_Comm diag;
    MPI_Comm_split(MPI_COMM_WORLD, (me % b + me / b) % b, me, &diag);
    MPI_Comm wrong[2] = {diag, tp};
    fails_alike(devmesh_create_from_comms(MPI_COMM_WORLD, 2, wrong, names, NULL, &out),
                DEVMESH_ERR_INVALID_ARGUMENT, out, sentinel, __LINE__);
    CHECK(strstr(devmesh_last_error(), "do not form a mesh") != NULL, "message");
    MPI_Comm_free(&diag);
  }

  MPI_Comm_free(&dp);
  MPI_Comm_free(&tp);
  int worst = 0;
  MPI_Allreduce(&failures, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst == 0 ? 0 : 1;
}
