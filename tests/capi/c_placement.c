/* Placement through the C API (devmesh_config_t.placement,
 * devmesh_dim_within) over levels each rank gives itself before creation:
 * hosts of 2 ranks (DEVMESH_HOST_ID "h<r/2>"), domains of 2 hosts
 * (DEVMESH_TOPOLOGY "domain=d<r/4>"). Every group is read from the dim's
 * communicator (an allgather of world ranks) and judged with those levels,
 * never with the library's tables: a (0,4) mesh (dp,tp) with "tp=domain"
 * keeps every tp group within one domain, and in every group of every dim
 * the members of one host and of one domain are consecutive;
 * devmesh_dim_within agrees with what the groups show. A (1,4) mesh leaves
 * the other ranks over: *mesh = NULL and DEVMESH_SUCCESS there. Bad
 * placements (malformed, unknown dim or level, impossible, with host_aware
 * or a rank list) give the same status and message on every rank and leave
 * the output alone; devmesh_dim_within's bad input likewise. An older
 * caller's config, which ends before placement, makes an unplaced mesh.
 * Runs on a world of whole domains (a multiple of 4 ranks).
 * Prints "FAIL ..." lines and exits non-zero on any mismatch. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_check.h"
#include "devmesh/devmesh.h"

static int n = 1;
static devmesh_t const sentinel = (devmesh_t)(void *)&n; /* never a handle devmesh gives */

enum { LEVELS = 2, MAX_GROUP = 64 };
static const char *const level_names[LEVELS] = {"host", "domain"};

static int instance_of(int level, int rank) { return level == 0 ? rank / 2 : rank / 4; }

static void play_machine(void) {
  char v[32];
  snprintf(v, sizeof v, "h%d", instance_of(0, me));
  setenv("DEVMESH_HOST_ID", v, 1);
  snprintf(v, sizeof v, "domain=d%d", instance_of(1, me));
  setenv("DEVMESH_TOPOLOGY", v, 1);
}

static int same_everywhere(int v) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&v, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&v, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return lo == hi;
}

static int all_true(int v) {
  int all = 0;
  MPI_Allreduce(&v, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all;
}

static int text_hash(const char *s) {
  unsigned h = 5381u;
  for (; *s; ++s) h = h * 33u + (unsigned char)*s;
  return (int)(h & 0x7fffffffu);
}

/* rc is want on every rank, the message names `words` and is the same on
 * every rank, out is the sentinel. */
static void refused(int rc, int want, const char *words, devmesh_t out, const char *what) {
  if (rc != want) {
    ++failures;
    fprintf(stderr, "FAIL rank %d %s: status %d, expected %d [%s]\n", me, what, rc, want, devmesh_last_error());
  } else if (words && !strstr(devmesh_last_error(), words)) {
    ++failures;
    fprintf(stderr, "FAIL rank %d %s: '%s' does not say '%s'\n", me, what, devmesh_last_error(), words);
  }
  if (!same_everywhere(rc) || !same_everywhere(text_hash(devmesh_last_error()))) {
    ++failures;
    fprintf(stderr, "FAIL rank %d %s: status or message differs between ranks\n", me, what);
  }
  if (out != sentinel) {
    ++failures;
    fprintf(stderr, "FAIL rank %d %s: output changed\n", me, what);
  }
}

static const char *const names[] = {"dp", "tp"};

static int create(int dp, const devmesh_config_t *c, devmesh_t *m) {
  const int shape[] = {dp, 4};
  return devmesh_create_ex(MPI_COMM_WORLD, 2, shape, names, c, m);
}

static devmesh_config_t placed(const char *placement) {
  devmesh_config_t c = DEVMESH_CONFIG_INITIALIZER;
  c.placement = placement;
  return c;
}

/* Dim dim's group as its communicator has it, in local-rank order; its
 * size, or -1. */
static int real_group(devmesh_t m, const char *dim, int group[MAX_GROUP]) {
  MPI_Comm comm = MPI_COMM_NULL;
  int size = 0;
  if (devmesh_comm(m, dim, &comm) != DEVMESH_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS || size > MAX_GROUP) {
    CHECK(0, "the communicator of %s", dim);
    return -1;
  }
  MPI_Allgather(&me, 1, MPI_INT, group, 1, MPI_INT, comm);
  int listed[MAX_GROUP];
  CHECK(devmesh_group_ranks(m, dim, MAX_GROUP, listed) == DEVMESH_SUCCESS &&
            memcmp(listed, group, sizeof(int) * (size_t)size) == 0,
        "devmesh_group_ranks of %s differs from its communicator's ranks", dim);
  return size;
}

/* This rank's groups against the rules (so every group is checked by its
 * members): the members of one instance of each level consecutive; tp
 * within its bound level when bound >= 0. devmesh_dim_within of each dim
 * and level against whether every group (an allreduce over the world)
 * lies in one instance. A non-member (m NULL) takes part in the
 * allreduces only. */
static void check_rules(devmesh_t m, int bound) {
  for (int d = 0; d < 2; ++d) {
    int g[MAX_GROUP];
    const int size = m ? real_group(m, names[d], g) : 0;
    for (int l = 0; l < LEVELS; ++l) {
      int instances = 0, consecutive = 1;
      for (int k = 0; k < size; ++k) {
        const int i = instance_of(l, g[k]);
        if (k > 0 && i == instance_of(l, g[k - 1])) continue;
        ++instances;
        for (int j = 0; j < k; ++j) consecutive &= instance_of(l, g[j]) != i;
      }
      CHECK(consecutive, "a group of %s is not consecutive in a %s", names[d], level_names[l]);
      if (d == 1 && l == bound && m) CHECK(instances == 1, "a group of tp leaves its %s", level_names[l]);
      const int within = all_true(instances <= 1);
      int w = -1;
      if (m)
        CHECK(devmesh_dim_within(m, names[d], level_names[l], &w) == DEVMESH_SUCCESS && w == within,
              "devmesh_dim_within(%s, %s) = %d, the groups say %d", names[d], level_names[l], w, within);
    }
  }
}

/* (0,4) with tp=domain: every rank a member, tp a whole domain. */
static void tp_within_domains(void) {
  devmesh_config_t c = placed("tp=domain");
  devmesh_t m = sentinel;
  const int rc = create(0, &c, &m);
  CHECK(all_true(rc == DEVMESH_SUCCESS && m != NULL && m != sentinel), "create (0,4) with tp=domain");
  if (rc != DEVMESH_SUCCESS || m == NULL || m == sentinel) return;
  check_rules(m, 1);
  int w = -1;
  CHECK(devmesh_dim_within(m, "tp", "domain", &w) == DEVMESH_SUCCESS && w == 1, "tp within domains: %d", w);
  CHECK(devmesh_dim_within(m, "tp", "host", &w) == DEVMESH_SUCCESS && w == 0, "tp within hosts: %d", w);

  /* devmesh_dim_within's bad input: INVALID_ARGUMENT, within untouched. */
  w = 7;
  CHECK(devmesh_dim_within(m, "tp", NULL, &w) == DEVMESH_ERR_INVALID_ARGUMENT && w == 7, "level NULL");
  CHECK(strstr(devmesh_last_error(), "level"), "level NULL: message");
  CHECK(devmesh_dim_within(m, "tp", "rack", &w) == DEVMESH_ERR_INVALID_ARGUMENT && w == 7, "level rack");
  CHECK(strstr(devmesh_last_error(), "'rack'") && strstr(devmesh_last_error(), "domain"),
        "level rack: the message names it and the levels there are");
  CHECK(devmesh_dim_within(m, "tp", "domain", NULL) == DEVMESH_ERR_INVALID_ARGUMENT, "within NULL");
  CHECK(devmesh_dim_within(m, "pp", "domain", &w) == DEVMESH_ERR_UNKNOWN_DIM && w == 7, "unknown dim pp");
  CHECK(devmesh_dim_within(NULL, "tp", "domain", &w) == DEVMESH_ERR_INVALID_ARGUMENT && w == 7, "mesh NULL");
  devmesh_destroy(&m);
}

/* (1,4) with tp=domain: 4 members in one domain, the others over. */
static void leftovers_get_no_mesh(void) {
  devmesh_config_t c = placed("tp=domain");
  devmesh_t m = sentinel;
  const int rc = create(1, &c, &m);
  CHECK(rc == DEVMESH_SUCCESS && m != sentinel, "create (1,4) with tp=domain: status %d", rc);
  if (m == sentinel) return;
  int members = 0, mine = m != NULL;
  MPI_Allreduce(&mine, &members, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(members == 4, "%d members, expected 4 (the others left over with the null mesh)", members);
  check_rules(m, 1);
  devmesh_destroy(&m);
}

/* Refused alike on every rank, the output untouched. */
static void bad_placements(void) {
  struct {
    const char *placement;
    int dp, host_aware, want;
    const char *words;
  } bad[] = {
      {"tp", 0, 0, DEVMESH_ERR_INVALID_ARGUMENT, "'tp' is not of the form dim=level"},
      {"tp=", 0, 0, DEVMESH_ERR_INVALID_ARGUMENT, "'tp=' is not of the form dim=level"},
      {"tp=domain,", 0, 0, DEVMESH_ERR_INVALID_ARGUMENT, "empty entry"},
      {"pp=host", 0, 0, DEVMESH_ERR_UNKNOWN_DIM, "'pp=host' names no dim"},
      {"tp=rack", 0, 0, DEVMESH_ERR_INVALID_ARGUMENT, "'rack'"},
      {"tp=host", 0, 0, DEVMESH_ERR_SHAPE_MISMATCH, "'tp' (size 4) is larger than its level 'host'"},
      {"tp=domain,tp=host", 0, 0, DEVMESH_ERR_INVALID_ARGUMENT, "twice"},
      {"tp=domain", 0, 1, DEVMESH_ERR_INVALID_ARGUMENT, "host_aware"},
      {"tp=domain", 2 * n, 0, DEVMESH_ERR_SHAPE_MISMATCH, "the parent"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    devmesh_config_t c = placed(bad[i].placement);
    if (bad[i].host_aware) c.host_aware = 1;
    devmesh_t m = sentinel;
    char what[64];
    snprintf(what, sizeof what, "case %d: '%s'", (int)i, bad[i].placement);
    refused(create(bad[i].dp, &c, &m), bad[i].want, bad[i].words, m, what);
  }
  devmesh_config_t c = placed("tp=domain");
  int ranks[4] = {0, 1, 2, 3};
  c.nranks = 4;
  c.ranks = ranks;
  devmesh_t m = sentinel;
  refused(create(1, &c, &m), DEVMESH_ERR_INVALID_ARGUMENT, "rank list", m, "tp=domain with a rank list");
}

/* No placement: an empty string, and an older caller's config that ends
 * before placement (whatever lies past its size is never read). Both make
 * the mesh in parent rank order. */
static void unplaced(void) {
  devmesh_config_t empty = placed("");
  devmesh_config_t older = placed("tp=host"); /* impossible, if it were read */
  older.size = offsetof(devmesh_config_t, placement);
  const devmesh_config_t *configs[] = {&empty, &older};
  for (int i = 0; i < 2; ++i) {
    devmesh_t m = sentinel;
    int root = -1;
    CHECK(create(0, configs[i], &m) == DEVMESH_SUCCESS && m && m != sentinel, "create without placement (%d)", i);
    if (!m || m == sentinel) continue;
    CHECK(devmesh_root_index(m, &root) == DEVMESH_SUCCESS && root == me, "root index %d, rank %d", root, me);
    devmesh_destroy(&m);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n % 4 != 0) {
    if (me == 0) fprintf(stderr, "FAIL: %d ranks; this program plays whole domains of 4 ranks\n", n);
    MPI_Finalize();
    return 1;
  }
  play_machine();
  tp_within_domains();
  leftovers_get_no_mesh();
  bad_placements();
  unplaced();

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("%s: %d failures over %d ranks\n", all ? "FAIL" : "OK", all, n);
  MPI_Finalize();
  return all ? 1 : 0;
}
