/* Handles that are no longer live: a stale copy of a destroyed handle, a
 * handle destroyed twice, and values devmesh never returned give
 * DEVMESH_ERR_INVALID_ARGUMENT ("not a live devmesh handle") from every
 * call, never a crash, and are told apart from a new handle that takes the
 * destroyed one's place. Run under valgrind and AddressSanitizer too
 * (docs/RELIABILITY.md): no call reads memory through such a handle.
 * Prints "FAIL ..." lines and exits non-zero on any mismatch. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "c_check.h"
#include "devmesh/devmesh.h"

/* `rc` is INVALID_ARGUMENT naming a handle that is not live. */
static void refused(int rc, const char *what) {
  CHECK(rc == DEVMESH_ERR_INVALID_ARGUMENT, "%s: status %d", what, rc);
  CHECK(strstr(devmesh_last_error(), "not a live devmesh handle") != NULL, "%s: message", what);
}

/* Every kind of call on handle h. */
static void every_call_refuses(devmesh_t h, const char *what) {
  int v = -7, arr[2] = {-7, -7};
  const char *name = "untouched";
  MPI_Comm c = MPI_COMM_SELF;
  devmesh_t out = NULL;
  const char *dims[1] = {"x"};
  refused(devmesh_ndim(h, &v), what);
  refused(devmesh_size(h, NULL, &v), what);
  refused(devmesh_shape(h, 2, arr), what);
  refused(devmesh_dim_name(h, 0, &name), what);
  refused(devmesh_local_rank(h, NULL, &v), what);
  refused(devmesh_comm(h, NULL, &c), what);
  refused(devmesh_slice(h, 1, dims, &out), what);
  refused(devmesh_flatten(h, NULL, &out), what);
  refused(devmesh_flatten_ex(h, NULL, NULL, &out), what);
  refused(devmesh_concatenate(1, &h, &out), what);
  refused(devmesh_barrier(h, NULL, NULL), what);
  CHECK(v == -7 && arr[0] == -7 && strcmp(name, "untouched") == 0 && c == MPI_COMM_SELF && out == NULL,
        "%s: an output was written", what);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const int shape[1] = {n};
  const char *names[1] = {"x"};

  /* The program: a copy, the original destroyed, then the copy. */
  devmesh_t m = NULL;
  CHECK(devmesh_create(MPI_COMM_WORLD, 1, shape, names, &m) == DEVMESH_SUCCESS, "create");
  devmesh_t copy = m;
  CHECK(devmesh_destroy(&m) == DEVMESH_SUCCESS && m == NULL, "first destroy");
  devmesh_t kept = copy;
  refused(devmesh_destroy(&copy), "destroy of a stale copy");
  CHECK(copy == kept, "a refused destroy left *mesh alone");
  every_call_refuses(copy, "stale copy");

  /* A new handle may take the old one's place: the stale copy stays stale. */
  devmesh_t fresh = NULL;
  CHECK(devmesh_create(MPI_COMM_WORLD, 1, shape, names, &fresh) == DEVMESH_SUCCESS, "create again");
  CHECK(fresh != copy, "a new handle has a token of its own");
  every_call_refuses(copy, "stale copy beside a new handle");
  int v = 0;
  CHECK(devmesh_size(fresh, NULL, &v) == DEVMESH_SUCCESS && v == n, "the new handle works");
  MPI_Comm c = MPI_COMM_NULL;
  CHECK(devmesh_comm(fresh, NULL, &c) == DEVMESH_SUCCESS && c != MPI_COMM_NULL, "the new handle's comm");
  int sum = 0, one = 1;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
  CHECK(sum == n, "allreduce over the new handle's comm: %d", sum);

  /* Values devmesh never returned: small integers, an address of the
   * program's own, a pointer-like value with every bit set. */
  int local = 0;
  devmesh_t made_up[4] = {(devmesh_t)(uintptr_t)1, (devmesh_t)(uintptr_t)0x12345678u, (devmesh_t)(void *)&local,
                          (devmesh_t)(uintptr_t)UINTPTR_MAX};
  for (int i = 0; i < 4; ++i) {
    every_call_refuses(made_up[i], "made-up handle");
    devmesh_t h = made_up[i];
    refused(devmesh_destroy(&h), "destroy of a made-up handle");
    CHECK(h == made_up[i], "a refused destroy left *mesh alone");
  }
  CHECK(local == 0, "the program's memory was not written");
  CHECK(devmesh_destroy(&fresh) == DEVMESH_SUCCESS && fresh == NULL, "destroy");

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("%s: %d failures\n", all ? "FAIL" : "OK", all);
  MPI_Finalize();
  return all ? 1 : 0;
}
