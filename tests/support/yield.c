/* Test-only LD_PRELOAD shim: MPICH's ch4:ucx busy-polls, so with more ranks
 * than cores an idle rank starves the one it waits for. This wraps UCX's
 * progress function and yields the core whenever a poll made no progress.
 * Used for tests and oversubscribed benchmarks only (see ENVIRONMENT.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>

typedef unsigned (*progress_fn)(void *);

unsigned ucp_worker_progress(void *worker) {
  static progress_fn real;
  if (!real) *(void **)&real = dlsym(RTLD_NEXT, "ucp_worker_progress");
  unsigned n = real(worker);
  if (n == 0) sched_yield();
  return n;
}
