#!/usr/bin/env bash
# run_elastic.sh MPIEXEC PROGRAM [ARGS...]: runs an elastic example (HSDP
# replicate=4 x shard=2, rank 5 killed mid-run) on 8 ranks with ULFM and
# judges it by what the survivors print: the 6 ranks of the 3 whole
# replicas finish with correct parameters on a (3, 2) mesh, rank 4 (the
# dead rank's partner) reports itself a spare. The job may stay in
# MPI_Finalize after a death: it is ended once all 7 have printed, or
# after 60 s.
#
# run_elastic.sh --judge FILE: judges FILE, the output of such a run made
# elsewhere (the Slurm job of tests/slurm/run-elastic.sh), the same way.
set -u
judge() {
  local correct spare
  correct=$(grep -c '^rank [0-9]*: finished 10 steps on a (3, 2) mesh after 1 shrink(s), parameters correct$' "$1")
  spare=$(grep -c '^rank 4: spare after the shrink (failed root indices: 5)$' "$1")
  if [ "$correct" -ne 6 ] || [ "$spare" -ne 1 ]; then
    echo "FAIL: $correct of 6 survivors finished correctly, $spare of 1 spare reported"
    exit 1
  fi
  echo "ok: 6 survivors finished with correct parameters, rank 4 became a spare"
}
if [ "${1:-}" = --judge ]; then
  judge "$2"
  exit 0
fi
mpiexec=$1
shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/survivors.sh"
run_survivors "$out" 7 '^rank [0-9]*: \(finished\|spare\)' "$mpiexec" -n 8 "$@"
cat "$out"
judge "$out"
