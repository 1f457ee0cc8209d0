# Sourced by the fault tests' runners.
# run_survivors OUT WANT PATTERN MPIEXEC ARGS...: runs MPIEXEC -ft ARGS in a
# session of its own, its output to OUT, until WANT lines of OUT match the
# grep PATTERN (every survivor has reported), the job ends, or 60 s pass;
# then ends the job (after a death it may stay in MPI_Finalize, ULFM).
run_survivors() {
  local out=$1 want=$2 pattern=$3 mpiexec=$4
  shift 4
  setsid bash "$mpiexec" -ft "$@" > "$out" 2>&1 &
  local job=$!
  for _ in $(seq 600); do
    [ "$(grep -c "$pattern" "$out")" -ge "$want" ] && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
  done
  sleep 0.5
  kill -KILL -- "-$job" 2>/dev/null
  wait "$job" 2>/dev/null
}
