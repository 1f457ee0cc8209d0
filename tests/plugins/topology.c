/* A version 4 plugin that states DEVMESH_BACKEND_CAP_TOPOLOGY, built from
 * the example plugin (examples/plugin): its topology member answers what
 * the environment says, so that tests give ranks the levels a backend
 * would see (an NVLink domain) without a GPU. Built as
 * libdevmesh-backend-topology.so (the backend "topology").
 *
 *   DEVMESH_TEST_PLUGIN_DOMAIN  unset or "": none ("", *written = 0).
 *       Else items separated by ','; the rank r of MPI_COMM_WORLD takes
 *       item r % (number of items) and answers "domain=<item>" ("" for an
 *       empty item): "nvl0" puts every rank in one domain, "a,a,b,b" ranks
 *       0-1 (4-5, ...) in a and 2-3 in b.
 *   DEVMESH_TEST_PLUGIN_LEVELS  where set and not "", instead of the
 *       above: the item is the whole answer ("domain=a;switch=s1"),
 *       answered as it is, malformed or not.
 * In an item, "%l" becomes the host-local rank the core passed, and an
 * item "!N" fails with status N (message "topology failed on rank R, as
 * the environment asks"). An answer that does not fit the buffer is
 * INVALID_ARGUMENT with *written = its length, as the interface says.
 * topology_plugin_calls() counts the calls of this process. */
/* It uses part of what it includes. */
#pragma GCC diagnostic ignored "-Wunused-function"
#define EXAMPLE_NO_EXPORT
#define EXAMPLE_NAME "topology"
#include "../../examples/plugin/devmesh-backend-example.c"

static int topology_calls;

__attribute__((visibility("default"))) int topology_plugin_calls(void) { return topology_calls; }

/* Item r % n of the ','-separated list, in a new string (NULL: no memory). */
static char *rank_item(const char *list, int rank) {
  size_t n = 1;
  for (const char *p = list; *p; ++p) n += *p == ',';
  const char *start = list;
  for (size_t k = (size_t)rank % n; k > 0; --k) start = strchr(start, ',') + 1;
  const char *end = strchr(start, ',');
  const size_t len = end ? (size_t)(end - start) : strlen(start);
  char *item = malloc(len + 1);
  if (!item) return NULL;
  memcpy(item, start, len);
  item[len] = '\0';
  return item;
}

/* prefix, then item with each "%l" replaced by local, in a new string. */
static char *expand(const char *prefix, const char *item, int local) {
  char number[16];
  snprintf(number, sizeof number, "%d", local);
  size_t len = strlen(prefix) + 1;
  for (const char *p = item; *p; ++p) len += (p[0] == '%' && p[1] == 'l') ? strlen(number) : 1;
  char *text = malloc(len);
  if (!text) return NULL;
  strcpy(text, prefix);
  char *out = text + strlen(prefix);
  for (const char *p = item; *p; ++p) {
    if (p[0] == '%' && p[1] == 'l') {
      out += sprintf(out, "%s", number);
      ++p;
    } else {
      *out++ = *p;
    }
  }
  *out = '\0';
  return text;
}

static int topology(void *instance, int host_local_rank, char *buf, size_t size, size_t *written) {
  (void)instance;
  ++topology_calls;
  *written = 0;
  if (host_local_rank < 0)
    return fail(DEVMESH_ERR_INVALID_ARGUMENT, "host-local rank %d is negative", host_local_rank);
  const char *levels = getenv("DEVMESH_TEST_PLUGIN_LEVELS"), *domain = getenv("DEVMESH_TEST_PLUGIN_DOMAIN");
  const int whole = levels && *levels;
  const char *list = whole ? levels : (domain ? domain : "");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *item = rank_item(list, rank);
  if (!item) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  if (item[0] == '!') {
    const int status = atoi(item + 1);
    free(item);
    return fail(status, "topology failed on rank %d, as the environment asks", rank);
  }
  char *text = expand(whole || !*item ? "" : "domain=", item, host_local_rank);
  free(item);
  if (!text) return fail(DEVMESH_ERR_INTERNAL, "out of memory");
  const size_t n = strlen(text);
  if (n >= size) {
    free(text);
    *written = n;
    return fail(DEVMESH_ERR_INVALID_ARGUMENT, "the levels take %zu bytes, the buffer has %zu", n + 1, size);
  }
  memcpy(buf, text, n + 1);
  *written = n;
  free(text);
  return DEVMESH_SUCCESS;
}

DEVMESH_BACKEND_EXPORT_V4 = {
    .v3 = EXAMPLE_V3_MEMBERS(DEVMESH_BACKEND_ABI_VERSION_4,
                             EXAMPLE_CAPS | DEVMESH_BACKEND_CAP_ALLTOALLV | DEVMESH_BACKEND_CAP_TOPOLOGY),
    .alltoallv = alltoallv,
    .topology = topology,
};
