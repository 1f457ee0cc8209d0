#!/usr/bin/env bash
# A peer killed during backend allreduces on two real hosts
# (tests/multihost/bed.sh), REPEAT times (default 20): every survivor must
# either get devmesh's error (Error(backend), exit status 3 after writing it
# down) or be stopped by the launcher, never die of a signal of its own
# (SIGSEGV, SIGABRT). hydra runs with -disable-auto-cleanup so that the
# survivors really meet the dead peer instead of being killed at once.
#
#   run-peer-dies.sh SOURCE_DIR BUILD_DIR MPI_NAME [REPEAT] [PHASE] [API]
set -euo pipefail
build=$(cd "$2" && pwd)
if [ "$3" != mpich ]; then echo "SKIP: the bed launches with MPICH's hydra; this build uses MPI '$3'"; exit 77; fi
repeat=${4:-20}
phase=${5:-collective}
api=${6:-devmesh}
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=bed.sh
. "$here/bed.sh"
bed_require
bed_require_hydra
unset DEVMESH_HOST_ID MPIR_CVAR_NOLOCAL
BED_YIELD="$build/tests/support/libdevmesh_test_yield.so"
prog=$build/tests/multihost/peer_dies
bed_up

ranks=4
bound=${DEVMESH_PEER_DIES_BOUND:-2}  # seconds a run may take before the launcher is stopped
failures=0
errors=0 killed=0 finished=0 latencies=()
for run in $(seq "$repeat"); do
  dir=$BED_DIR/run-$run
  mkdir -p "$dir"
  # hydra prints each rank's exit status or signal when it does not exit
  # with 0 ("EXIT STATUS" / "KILLED BY SIGNAL").
  bed_mpiexec -disable-auto-cleanup ${DEVMESH_PEER_DIES_GENV:-} -hosts host0:2,host1:2 -n $ranks "$prog" "$dir" "$phase" "$api" >"$dir/hydra.txt" 2>&1 &
  pid=$!
  ticks=0
  while kill -0 $pid 2>/dev/null && [ $ticks -lt $((bound * 10)) ]; do sleep 0.1; ticks=$((ticks + 1)); done
  stopped=0
  if kill -0 $pid 2>/dev/null; then stopped=1; bed_reap; fi
  wait $pid 2>/dev/null || true
  bed_reap
  died=""
  for r in $(seq 0 $((ranks - 1))); do
    f=$dir/rank-$r
    if [ ! -s "$f" ]; then
      echo "FAIL: run $run: rank $r wrote nothing (it did not get through MPI_Init)" >&2
      failures=$((failures + 1))
      continue
    fi
    last=$(tail -n 1 "$f")
    case "$last" in
      died*) died=${last#died } ;;
    esac
  done
  for r in $(seq 0 $((ranks - 1))); do
    f=$dir/rank-$r
    [ -s "$f" ] || continue
    last=$(tail -n 1 "$f")
    case "$last" in
      died*) ;;
      error*)
        errors=$((errors + 1))
        if ! grep -q 'status=backend\|status=mpi' <<<"$last"; then
          echo "FAIL: run $run: rank $r: an error other than backend: $last" >&2
          failures=$((failures + 1))
        fi
        t=$(awk '{print $2}' <<<"$last")
        [ -n "$died" ] && latencies+=("$(awk -v a="$t" -v b="$died" 'BEGIN{printf "%d", a-b}')")
        ;;
      started*) killed=$((killed + 1)) ;;
      done*) finished=$((finished + 1)) ;;
      *) echo "FAIL: run $run: rank $r: $last" >&2; failures=$((failures + 1)) ;;
    esac
  done
  # Signals a process died of, as hydra saw them: only SIGKILL (the victim,
  # or the launcher's) and SIGTERM (the launcher's) are expected.
  if grep -E 'KILLED BY SIGNAL: ([0-9]+)' "$dir/hydra.txt" | grep -Evq 'SIGNAL: (9|15) '; then
    echo "FAIL: run $run: a process died of a signal of its own:" >&2
    grep -E 'KILLED BY SIGNAL|signal' "$dir/hydra.txt" >&2
    failures=$((failures + 1))
  fi
  if grep -Eq 'Segmentation|SIGSEGV|core dumped|Aborted|terminate called' "$dir/hydra.txt"; then
    echo "FAIL: run $run: a crash:" >&2
    cat "$dir/hydra.txt" >&2
    failures=$((failures + 1))
  fi
  [ $stopped -eq 1 ] && note=" (stopped after ${bound} s)" || note=""
  bed_log "run $run: $(for r in $(seq 0 $((ranks - 1))); do printf '%s ' "$(tail -n 1 "$dir/rank-$r" 2>/dev/null | cut -d' ' -f1)"; done)$note"
done
survivors=$((repeat * (ranks - 1)))
lat=""
if [ ${#latencies[@]} -gt 0 ]; then
  lat=$(printf '%s\n' "${latencies[@]}" | sort -n | awk '{a[NR]=$1} END{printf "error after the death: min %d ms, median %d ms, max %d ms", a[1], a[int((NR+1)/2)], a[NR]}')
fi
bed_log "$phase/$api: $repeat runs, $survivors survivors: $errors got the error, $killed stopped by the launcher, $finished finished; $lat"
if [ $failures -ne 0 ]; then
  echo "FAIL: $failures problem(s)"
  exit 1
fi
