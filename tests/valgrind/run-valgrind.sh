#!/usr/bin/env bash
# tests/valgrind/run-valgrind.sh BUILD: the C API tests (tests/capi: every
# function of devmesh.h) under valgrind memcheck at 2 ranks, from an
# ordinary (not sanitized) build. Called by `./run test` after the normal
# suite; see docs/RELIABILITY.md.
#
# A memcheck error, or memory definitely or indirectly lost, in any rank
# fails the run (exit 1). Third-party noise is suppressed by
# tests/valgrind/devmesh.supp, whose entries explain themselves. Logs (with
# ready-made suppressions for anything new) stay in BUILD/valgrind/.
# Without the C API tests it falls back to the MPI mesh tests.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
ranks=${DEVMESH_VALGRIND_RANKS:-2}

programs=()
for p in tests/capi/test_capi tests/capi/test_capi_options tests/capi/c_stale_handle; do
  ninja -C "$build" -t query "$p" >/dev/null 2>&1 && programs+=("$p")
done
[ ${#programs[@]} -gt 0 ] || programs=(tests/mpi/test_mpi_mesh)
ninja -C "$build" "${programs[@]}" tests/support/libdevmesh_test_yield.so test-plugins >/dev/null
# The plugins the tests load by name (tests/plugins/meson.build writes where).
DEVMESH_BACKEND_PATH=$(cat "$build/tests/plugins/backend-path")
export DEVMESH_BACKEND_PATH

# shellcheck source=../support/checker-env.sh
source "$root/tests/support/checker-env.sh"
logs="$build/valgrind"
rm -rf "$logs"
mkdir -p "$logs"
# As the MPI tests run (tests/support/meson.build): the yield shim, and every
# rank a node of its own.
export MPIR_CVAR_NOLOCAL=1
export LD_PRELOAD="$build/tests/support/libdevmesh_test_yield.so"
failed=()
for p in "${programs[@]}"; do
  name=$(basename "$p")
  start=$(date +%s)
  rc=0
  timeout 600 bash "$build/tests/support/mpiexec" -n "$ranks" \
    valgrind --tool=memcheck --error-exitcode=97 --num-callers=30 \
      --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
      --suppressions="$root/tests/valgrind/devmesh.supp" --gen-suppressions=all \
      --log-file="$logs/$name.%p.log" \
      "$build/$p" --color_output=no >"$logs/$name.out" 2>&1 || rc=$?
  summary=$({ grep -h 'ERROR SUMMARY' "$logs/$name".*.log || true; } | sed 's/.*ERROR SUMMARY: //' | sort | uniq -c | sed 's/^ *//' | paste -sd ';' -)
  if [ "$rc" -ne 0 ]; then
    echo "run-valgrind: $name at $ranks ranks FAILED (exit $rc): $summary" >&2
    cat "$logs/$name.out" >&2
    for log in "$logs/$name".*.log; do
      grep -q 'ERROR SUMMARY: 0 errors' "$log" || cat "$log" >&2
    done
    failed+=("$name")
  else
    echo "run-valgrind: $name at $ranks ranks clean in $(( $(date +%s) - start ))s ($summary)"
  fi
done
[ ${#failed[@]} -eq 0 ] || exit 1
