#!/usr/bin/env bash
# peer_dies.sh MPIEXEC PROGRAM PLUGIN [RANKS]: a Gloo peer that dies
# (or stops) during an allreduce makes every other rank fail with
# DEVMESH_ERR_BACKEND (8), or DEVMESH_ERR_TIMEOUT (13) where it waited out
# the timeout option, within that timeout (plus 2 s for starting and
# reporting) instead of hanging. The dead peer's neighbours
# notice its closed connections at once; a rank waiting for a send to a
# live neighbour is not woken by Gloo and waits for the timeout, as do all
# ranks when a peer stops. The survivors report in files.
set -u
# MPIEXEC is the tests' launcher (tests/support/mpiexec), which sets what
# its MPI needs for oversubscribed runs.
# RANKS (default "3 4"): the world sizes. At 3 every survivor neighbours
# the victim in Gloo's ring; at 4 rank 1 does not and waits out the timeout,
# which is Gloo's behaviour whatever MPI started it: a build without
# -Dmpi_independent_tests runs 3 alone.
mpiexec=$1 prog=$2 plugin=$3 ranks=${4:-3 4}
timeout_s=4
fail=0
for n in $ranks; do
  for mode in kill stop; do
    dir=$(mktemp -d)
    timeout 60 "$mpiexec" -n "$n" \
      "$prog" "$plugin" "$mode" "$timeout_s" "$dir" >/dev/null 2>&1
    rc=$?
    # Complete reports only (peer_dies renames rank.R.part to rank.R when written).
    out=$(find "$dir" -name 'rank.*' ! -name '*.part' -exec cat {} + 2>/dev/null)
    rm -rf "$dir"
    if [ $rc -eq 124 ]; then echo "FAIL: hung (np $n, $mode)"; fail=1; continue; fi
    echo "$out" | sed "s/^/np$n $mode: /"
    # Every survivor (every rank but the victim, the last) reports BACKEND
    # or TIMEOUT,
    # and within the bound. A stopped victim may be continued by the
    # launcher (Open MPI's does) and report too: it is not counted.
    limit=$((timeout_s + 2))
    got=$(echo "$out" | awk -v lim="$limit" -v victim=$((n - 1)) \
      '/^rank [0-9]+: status (8|13) after/ { if ($2 + 0 != victim && $6 + 0 < lim) ok++ } END { print ok + 0 }')
    if [ "$got" -ne $((n - 1)) ]; then
      echo "FAIL: np $n $mode: $got of $((n - 1)) survivors failed with status 8 or 13 within ${limit}s"
      fail=1
    fi
  done
done
exit $fail
