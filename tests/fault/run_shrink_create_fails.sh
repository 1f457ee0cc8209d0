#!/usr/bin/env bash
# run_shrink_create_fails.sh MPIEXEC PROGRAM WHEN: runs shrink_create_fails
# WHEN (before, after) on 4 ranks with ULFM and judges what the 3 survivors
# print: every first shrink failed (rank 1 with the failure it was given,
# ranks 0 and 2 with REVOKED, none waiting for ever), every second shrink
# made the (1, 2) mesh of root indices 0 and 1, rank 2 a spare, each
# survivor having agreed that rank 3 failed.
set -u
mpiexec=$1
program=$2
when=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/survivors.sh"
run_survivors "$out" 3 '^rank [0-2]: ' "$mpiexec" -n 4 "$program" "$when"
cat "$out"
fail=0
for want in \
  'rank 0: first shrink revoked, second shrink ok, shape 1 2, shard group 0 1, failed 3' \
  'rank 1: first shrink backend, second shrink ok, shape 1 2, shard group 0 1, failed 3' \
  'rank 2: first shrink revoked, second shrink ok, spare, failed 3'; do
  grep -qxF "$want" "$out" || { echo "FAIL: missing '$want'"; fail=1; }
done
[ "$fail" = 0 ] && echo "ok: the shrink failed on every survivor, and the second made the right mesh"
exit "$fail"
