/* The repair calls of the C API where they cannot run, and their bad
 * input: devmesh_config_t.spares (unset: none, also from an older caller's
 * shorter config; refused alike on every rank where it cannot apply),
 * devmesh_repair, devmesh_repair_ex and devmesh_release_spares of a mesh
 * without fault_tolerance, devmesh_standby and devmesh_join without ULFM
 * (UNSUPPORTED) or, under ULFM, in a process that is no spare and was not
 * spawned (INVALID_ARGUMENT); NULL output pointers. Every refusal leaves the
 * output alone. Under ULFM also a repair with no death, of a mesh whose
 * shape is chosen (0): the spare stays in standby, released by the
 * repaired mesh. Runs on every MPI, and under ULFM.
 * Prints "FAIL ..." lines and exits non-zero on any mismatch. */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "c_check.h"
#include "devmesh/devmesh.h"

static int n = 1;
static devmesh_t const sentinel = (devmesh_t)(void *)&n; /* never a handle devmesh gives */

static int same_everywhere(int v) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

/* rc is want on every rank, the message names `words`, out is the sentinel. */
static void refused(int rc, int want, const char *words, devmesh_t out, int line) {
  if (rc != want) {
    ++failures;
    fprintf(stderr, "FAIL rank %d line %d: status %d, expected %d [%s]\n", me, line, rc, want, devmesh_last_error());
  } else if (words && !strstr(devmesh_last_error(), words)) {
    ++failures;
    fprintf(stderr, "FAIL rank %d line %d: '%s' does not say '%s'\n", me, line, devmesh_last_error(), words);
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

static int create_over(MPI_Comm parent, const devmesh_config_t *c, devmesh_t *m) {
  const int shape[] = {0};
  const char *names[] = {"x"};
  return devmesh_create_ex(parent, 1, shape, names, c, m);
}

static int create(const devmesh_config_t *c, devmesh_t *m) { return create_over(MPI_COMM_WORLD, c, m); }

/* spares unset is none: the mesh holds every rank, from a config of today's
 * size and from an older caller's that ends before spares (whatever lies
 * past its size). */
static void spares_unset_is_none(void) {
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  CHECK(c.spares == DEVMESH_CONFIG_UNSET, "the initializer leaves spares unset (%d)", c.spares);
  devmesh_config_t older = c;
  older.size = offsetof(devmesh_config_t, spares);
  older.spares = 1; /* past the older caller's size: never read */
  const devmesh_config_t *configs[] = {&c, &older};
  for (int i = 0; i < 2; ++i) {
    devmesh_t m = NULL;
    int size = -1, root = -1;
    CHECK(create(configs[i], &m) == DEVMESH_SUCCESS && m, "create with spares unset (config %d)", i);
    if (!m) continue;
    CHECK(devmesh_size(m, NULL, &size) == DEVMESH_SUCCESS && size == n, "every rank a member: size %d of %d", size,
          n);
    CHECK(devmesh_root_index(m, &root) == DEVMESH_SUCCESS && root == me, "root index %d, rank %d", root, me);
    devmesh_destroy(&m);
  }
}

/* Refused on every MPI, before ULFM is asked for. */
static void spares_refused(void) {
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  devmesh_t m = sentinel;
  c.spares = -1;
  refused(create(&c, &m), DEVMESH_ERR_INVALID_ARGUMENT, "spares is -1", m, __LINE__);
  c.spares = 1;
  refused(create(&c, &m), DEVMESH_ERR_INVALID_ARGUMENT, "spares needs fault_tolerance", m, __LINE__);
  c.fault_tolerance = 1;
  c.spares = n;
  refused(create(&c, &m), DEVMESH_ERR_INVALID_ARGUMENT, "spares leave no member", m, __LINE__);
  c.spares = 1;
  c.host_aware = 1;
  refused(create(&c, &m), DEVMESH_ERR_INVALID_ARGUMENT, "host_aware", m, __LINE__);
  c.host_aware = DEVMESH_CONFIG_UNSET;
  int ranks[1] = {0};
  c.nranks = 1;
  c.ranks = ranks;
  refused(create(&c, &m), DEVMESH_ERR_INVALID_ARGUMENT, "rank list", m, __LINE__);
}

/* The calls of a mesh without fault_tolerance, and NULL outputs. */
static void mesh_without_fault_tolerance(void) {
  devmesh_t h = NULL, r = sentinel;
  CHECK(create(NULL, &h) == DEVMESH_SUCCESS && h, "create");
  char arg[] = "x";
  char *argv[] = {arg, NULL};
  refused(devmesh_repair(h, NULL, NULL, &r), DEVMESH_ERR_UNSUPPORTED, "fault_tolerance", r, __LINE__);
  refused(devmesh_repair(h, "/bin/true", argv, &r), DEVMESH_ERR_UNSUPPORTED, "fault_tolerance", r, __LINE__);
  refused(devmesh_repair_ex(h, "/bin/true", argv, MPI_INFO_NULL, &r), DEVMESH_ERR_UNSUPPORTED, "devmesh_repair_ex",
          r, __LINE__);
  refused(devmesh_release_spares(h), DEVMESH_ERR_UNSUPPORTED, "release_spares needs", r, __LINE__);
  refused(devmesh_repair(h, NULL, NULL, NULL), DEVMESH_ERR_INVALID_ARGUMENT, "repaired output pointer is NULL", r,
          __LINE__);
  refused(devmesh_repair_ex(h, NULL, NULL, MPI_INFO_NULL, NULL), DEVMESH_ERR_INVALID_ARGUMENT,
          "repaired output pointer is NULL", r, __LINE__);
  refused(devmesh_repair(NULL, NULL, NULL, &r), DEVMESH_ERR_INVALID_ARGUMENT, "handle is NULL", r, __LINE__);
  refused(devmesh_release_spares(NULL), DEVMESH_ERR_INVALID_ARGUMENT, "handle is NULL", r, __LINE__);
  refused(devmesh_standby(MPI_COMM_WORLD, NULL), DEVMESH_ERR_INVALID_ARGUMENT, "mesh output pointer is NULL", r,
          __LINE__);
  refused(devmesh_join(NULL), DEVMESH_ERR_INVALID_ARGUMENT, "mesh output pointer is NULL", r, __LINE__);
  /* The mesh still works: nothing was revoked. */
  int one = 1, sum = 0;
  CHECK(devmesh_allreduce(h, "x", &one, &sum, 1, DEVMESH_INT32, DEVMESH_SUM, NULL) == DEVMESH_SUCCESS && sum == n,
        "allreduce after the refusals: %d", sum);
  devmesh_destroy(&h);
}

/* Under ULFM, with no death: a repair by the members of a mesh with one
 * spare fills nothing (every member keeps its root index, no index filled),
 * leaves the spare in standby for the repaired mesh, whose
 * devmesh_release_spares ends the standby (*mesh = NULL); the old mesh is
 * refused a second repair and a release. */
static void repair_without_a_death(MPI_Comm parent) {
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  c.fault_tolerance = 1;
  c.spares = 1;
  devmesh_t m = sentinel;
  CHECK(create_over(parent, &c, &m) == DEVMESH_SUCCESS, "create with a spare");
  if (me == n - 1) {
    CHECK(m == NULL, "the spare gets no mesh");
    devmesh_t s = sentinel;
    CHECK(devmesh_standby(parent, &s) == DEVMESH_SUCCESS && s == NULL, "the spare is released");
    return;
  }
  int size = -1, root = -1, nfailed = -1, failed[4];
  devmesh_t r = sentinel, again = sentinel;
  CHECK(devmesh_size(m, NULL, &size) == DEVMESH_SUCCESS && size == n - 1, "members: %d of %d", size, n);
  CHECK(devmesh_repair(m, NULL, NULL, &r) == DEVMESH_SUCCESS && r != sentinel && r != NULL, "repair");
  if (r == sentinel || r == NULL) return;
  CHECK(devmesh_size(r, NULL, &size) == DEVMESH_SUCCESS && size == n - 1, "repaired size %d", size);
  CHECK(devmesh_root_index(r, &root) == DEVMESH_SUCCESS && root == me, "root index %d kept (rank %d)", root, me);
  CHECK(devmesh_failed_ranks(r, 4, failed, &nfailed) == DEVMESH_SUCCESS && nfailed == 0, "filled: %d", nfailed);
  int one = 1, sum = 0;
  CHECK(devmesh_allreduce(r, "x", &one, &sum, 1, DEVMESH_INT32, DEVMESH_SUM, NULL) == DEVMESH_SUCCESS &&
            sum == n - 1,
        "allreduce over the repaired mesh: %d", sum);
  CHECK(devmesh_repair(m, NULL, NULL, &again) == DEVMESH_ERR_INVALID_ARGUMENT && again == sentinel,
        "a second repair of the old mesh");
  CHECK(devmesh_release_spares(m) == DEVMESH_ERR_INVALID_ARGUMENT, "release through the old mesh");
  CHECK(devmesh_release_spares(r) == DEVMESH_SUCCESS, "release through the repaired mesh");
  devmesh_destroy(&r);
  devmesh_destroy(&m);
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  /* ULFM on (Open MPI 5 with --with-ft ulfm): a fault-tolerant mesh can be
   * made (over a duplicate of the world that returns errors, as
   * fault_tolerance needs). */
  devmesh_config_t ft = DEVMESH_CONFIG_INITIALIZER;
  ft.fault_tolerance = 1;
  devmesh_t probe = NULL;
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  const int ulfm = create_over(dup, &ft, &probe) == DEVMESH_SUCCESS;
  devmesh_destroy(&probe);
  CHECK(same_everywhere(ulfm), "ULFM on some ranks only");

  spares_unset_is_none();
  spares_refused();
  mesh_without_fault_tolerance();
  devmesh_t r = sentinel;
  if (ulfm) {
    refused(devmesh_standby(MPI_COMM_WORLD, &r), DEVMESH_ERR_INVALID_ARGUMENT, "no spare", r, __LINE__);
    refused(devmesh_join(&r), DEVMESH_ERR_INVALID_ARGUMENT, "not started by a repair", r, __LINE__);
    if (n > 1) repair_without_a_death(dup);
  } else {
    ft.spares = n > 1 ? 1 : 0;
    refused(create(&ft, &r), DEVMESH_ERR_UNSUPPORTED, "fault_tolerance", r, __LINE__);
    refused(devmesh_standby(MPI_COMM_WORLD, &r), DEVMESH_ERR_UNSUPPORTED, "devmesh_standby: ", r, __LINE__);
    refused(devmesh_join(&r), DEVMESH_ERR_UNSUPPORTED, "devmesh_join: ", r, __LINE__);
  }

  MPI_Comm_free(&dup);
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("%s: %d failures (ULFM %s)\n", all ? "FAIL" : "OK", all, ulfm ? "on" : "off");
  MPI_Finalize();
  return all ? 1 : 0;
}
