/* Test-only LD_PRELOAD shim: MPICH's ch4:ucx busy-polls, so with more ranks
 * than cores an idle rank starves the one it waits for. This wraps UCX's
 * progress function and yields the core whenever a poll made no progress.
 * Together with MPIR_CVAR_NOLOCAL=1 (tests/support/mpirun-local.in sets
 * both) it took 1000 allreduces on 2 cores from 24 s to 0.18 s at 8 ranks
 * and from 75 s to 0.4 s at 16; no MPICH or UCX setting alone helped
 * (NOLOCAL alone, ASYNC_PROGRESS, POLLS_BEFORE_YIELD, binding, UCX_TLS=sm).
 * Used for tests and oversubscribed benchmarks only: figures measured with
 * it say so (docs/BENCHMARKS.md). */
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
