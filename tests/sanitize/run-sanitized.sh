#!/usr/bin/env bash
# tests/sanitize/run-sanitized.sh BUILD [--build-only]: the unit tests, the MPI tests at 2
# and 3 ranks, the lifetime tests (2 to 4 ranks) and the C API tests (2 and
# 3 ranks; its error matrix at 2), built with AddressSanitizer and
# UndefinedBehaviorSanitizer (gcc) in their own build directory BUILD
# (configured on first use). Any report fails the run. Called by
# `./run test` after the normal suite; see docs/RELIABILITY.md.
#
# The build is -O0 (buildtype debug): at -O2, gcc takes minutes over the
# larger Boost.Test files with ASan (test_view.cpp alone: 10 s at -O0, a
# minute at -O1, several at -O2). Only the targets of the selected tests
# are built (meson test builds what they need). --build-only: configure and
# build them, run nothing (./run test builds them beside its last leg's
# tests; DEVMESH_BUILD_JOBS: ninja's -j).
#
# Under mpiexec the MPI tests preload the yield shim; gcc's ASan runtime
# must come first in the library list, so for this build the tests'
# LD_PRELOAD is "libasan.so:shim" (tests/meson.build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$1

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$root" -Dmpi=mpich -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug \
    -Dtools=disabled -Dfortran=disabled -Dnccl=disabled -Dexamples=false >/dev/null
fi

# Which tests: by name, so that new unit tests and C API programs join.
pattern='^devmesh:(unit / .*|mpi / (mesh|dims|creation|cart)-np[23]|mpi / (adopt|sessions)-np4|collectives / (collectives-mpi-np3|vcollectives-mpi-np3|c-collectives-tp-mpi-dp-mpi-np3)|reliability / (lifetime-np[234]|finalize-alive-np3)|capi / (capi(-options)?|capi-v|capi-requests|c-adopt|c-stale-handle)-np[234]|errors / errors-capi-np2)$'
mapfile -t tests < <(meson test -C "$build" --list 2>/dev/null | grep -E "$pattern" | sed 's|.* / ||')
[ ${#tests[@]} -gt 0 ] || { echo "run-sanitized: no tests selected in $build" >&2; exit 1; }

if [ "${2:-}" = --build-only ]; then
  # What meson test would build for them: every target in their depends.
  mapfile -t targets < <(meson introspect "$build" --tests --targets | python3 -c '
import json, os, sys
d = json.load(sys.stdin)
root, names = sys.argv[1], set(sys.argv[2:])
files = {t["id"]: t["filename"] for t in d["targets"]}
for test in d["tests"]:
    if test["name"] in names:
        for dep in test["depends"]:
            for f in files.get(dep, []):
                print(os.path.relpath(f, root))' "$(cd "$build" && pwd)" "${tests[@]}" | sort -u)
  ninja -C "$build" ${DEVMESH_BUILD_JOBS:+-j "$DEVMESH_BUILD_JOBS"} "${targets[@]}" \
    tests/support/libdevmesh_test_yield.so test-plugins
  exit 0
fi

# shellcheck source=../support/checker-env.sh
source "$root/tests/support/checker-env.sh"
export ASAN_OPTIONS=halt_on_error=1:print_stacktrace=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1
export LSAN_OPTIONS=suppressions=$root/tests/sanitize/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
start=$(date +%s)
# The yield shim the MPI tests preload and the plugins they load by name
# are no test's dependency: build them.
ninja -C "$build" tests/support/libdevmesh_test_yield.so test-plugins >/dev/null
meson test -C "$build" --print-errorlogs "${tests[@]}"
echo "run-sanitized: ${#tests[@]} tests clean under ASan+UBSan in $(( $(date +%s) - start ))s (build included)"
