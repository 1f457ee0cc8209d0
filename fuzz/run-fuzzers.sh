#!/usr/bin/env bash
# fuzz/run-fuzzers.sh [SECONDS]: builds the libFuzzer targets of fuzz/ with
# clang (AddressSanitizer + UndefinedBehaviorSanitizer) and runs each for
# SECONDS (default 20), starting from its committed seeds in
# fuzz/corpus/<target>/. Called by `./run test`; see docs/RELIABILITY.md.
#
#   fuzz_view        view operations against a brute-force reference
#   fuzz_layout      the layout algebra against brute force
#   fuzz_plan_args   devmesh-plan's command line, in-process
#   fuzz_gate        the C API's variable-size collectives against a
#                    brute-force reference of the argument gate; it links
#                    libdevmesh and MPI (MPICH's pkg-config), so it runs only
#                    with DEVMESH_FUZZ_CAPI_BUILD set to a meson build
#                    directory holding lib/libdevmesh.so (also run as seeded
#                    random inputs by the test capi-fuzz-gate)
#
# Every committed seed runs first (regression inputs of fixed bugs are among
# them). A crash, sanitizer report, reference mismatch, leak, timeout
# (-timeout, seconds per input) or out-of-memory fails the script; the input
# is left in BUILD/artifacts/<target>/ (fix the bug, then commit the input
# to fuzz/corpus/<target>/ as a regression seed). Inputs found along the way
# go to BUILD/corpus/<target>/, never into the repository.
#
# Environment: DEVMESH_FUZZ_BUILD (default build-fuzz), CXX (default
# clang++-14, else clang++), DEVMESH_FUZZ_JOBS (compile jobs, default nproc).
# To reproduce a finding: BUILD/fuzz_view INPUT (DEVMESH_FUZZ_TRACE=1 makes
# fuzz_view print each operation).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${DEVMESH_FUZZ_BUILD:-build-fuzz}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
seconds=${1:-20}
targets=(fuzz_view fuzz_layout fuzz_plan_args)

cxx=${CXX:-}
if [ -z "$cxx" ]; then
  if command -v clang++-14 >/dev/null; then cxx=clang++-14; else cxx=clang++; fi
fi
mkdir -p "$build"

# --- build: a generated ninja file, so that re-runs rebuild only what changed.
flags="-std=c++20 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
{
  echo "cxx = $cxx"
  echo "flags = $flags -I$root/include -I$root/fuzz -I$root/tests/support"
  echo "rule cxx"
  echo "  command = \$cxx \$flags \$extra -fsanitize=fuzzer-no-link -MD -MF \$out.d -c \$in -o \$out"
  echo "  depfile = \$out.d"
  echo "  deps = gcc"
  echo "  description = CXX \$out"
  echo "rule link"
  echo "  command = \$cxx \$flags -fsanitize=fuzzer \$in -o \$out"
  echo "  description = LINK \$out"
  model=()
  for src in "$root"/lib/model/*.cpp; do
    obj="obj/model/$(basename "$src" .cpp).o"
    echo "build $obj: cxx $src"
    model+=("$obj")
  done
  plan=()
  # The whole planner, main.cpp's main() left out (DEVMESH_PLAN_NO_MAIN).
  for src in "$root"/tools/plan/*.cpp; do
    obj="obj/plan/$(basename "$src" .cpp).o"
    echo "build $obj: cxx $src"
    echo "  extra = -DDEVMESH_PLAN_NO_MAIN -I$root/tools/plan"
    plan+=("$obj")
  done
  for t in "${targets[@]}"; do
    echo "build obj/$t.o: cxx $root/fuzz/$t.cpp"
    [ "$t" = fuzz_plan_args ] && echo "  extra = -I$root/tools/plan"
    if [ "$t" = fuzz_plan_args ]; then
      echo "build $t: link obj/$t.o ${plan[*]} ${model[*]}"
    else
      echo "build $t: link obj/$t.o ${model[*]}"
    fi
  done
} > "$build/build.ninja"
start=$(date +%s)
ninja -C "$build" -j "${DEVMESH_FUZZ_JOBS:-$(nproc)}" "${targets[@]}" >/dev/null
echo "run-fuzzers: built ${targets[*]} in $(( $(date +%s) - start ))s"

# --- run -----------------------------------------------------------------------
# In a scratch directory: whatever a target might write lands there.
failed=()
for t in "${targets[@]}"; do
  work="$build/corpus/$t" artifacts="$build/artifacts/$t" scratch="$build/scratch/$t"
  mkdir -p "$work" "$artifacts" "$scratch"
  log="$build/$t.log"
  rc=0
  (cd "$scratch" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
     "$build/$t" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$artifacts/" "$work" "$root/fuzz/corpus/$t" >"$log" 2>&1) || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  seeds=$(find "$root/fuzz/corpus/$t" -type f | wc -l)
  if [ "$rc" -ne 0 ]; then
    echo "run-fuzzers: $t FAILED (exit $rc); log $log; input in $artifacts/" >&2
    grep -E 'reference mismatch|ERROR:|SUMMARY:|runtime error|Test unit written' "$log" | head -20 >&2 || tail -30 "$log" >&2
    failed+=("$t")
  else
    echo "run-fuzzers: $t ok: ${execs:-?} executions in ${seconds}s ($seeds seeds, ${cov:-cov: ?} edges)"
  fi
done
# --- fuzz_gate, over a built libdevmesh (optional) ---------------------------------
if [ -n "${DEVMESH_FUZZ_CAPI_BUILD:-}" ]; then
  lib=$(cd "$DEVMESH_FUZZ_CAPI_BUILD" && pwd)
  t=fuzz_gate
  mkdir -p "$build/corpus/$t" "$build/artifacts/$t" "$build/scratch/$t" "$root/fuzz/corpus/$t"
  # shellcheck disable=SC2046,SC2086
  $cxx $flags -fsanitize=fuzzer -I"$root/include" -I"$lib/include" $(pkg-config --cflags mpich) \
    "$root/fuzz/$t.cpp" -o "$build/$t" -L"$lib/lib" -ldevmesh $(pkg-config --libs mpich) -Wl,-rpath,"$lib/lib"
  rc=0
  # Leaks are MPI's (MPI_Init without MPI_Finalize in a fuzz target).
  (cd "$build/scratch/$t" && ASAN_OPTIONS=detect_leaks=0:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
     "$build/$t" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$t/" "$build/corpus/$t" "$root/fuzz/corpus/$t" >"$build/$t.log" 2>&1) || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "run-fuzzers: $t FAILED (exit $rc); log $build/$t.log" >&2
    grep -E 'reference mismatch|ERROR:|SUMMARY:|runtime error' "$build/$t.log" | head -20 >&2 || true
    failed+=("$t")
  else
    echo "run-fuzzers: $t ok: $(sed -n 's/^stat::number_of_executed_units: *//p' "$build/$t.log" | tail -1) executions"
  fi
fi
[ ${#failed[@]} -eq 0 ] || { echo "run-fuzzers: failed: ${failed[*]}" >&2; exit 1; }
