#!/usr/bin/env bash
# run_create_fails.sh MPIEXEC PROGRAM WHERE WHEN: runs create_fails WHERE
# WHEN (see create_fails.cpp) on 4 ranks with ULFM and judges what the
# members print: every first call failed (rank 1 with the failure it was
# given, the others with REVOKED where rank 1 revoked a communicator of
# devmesh's, with rank 1's failure where it is shared over
# MPI_COMM_WORLD), none waiting for ever, and every second call made the
# right mesh, its groups as its communicators connect them.
set -u
mpiexec=$1
program=$2
where=$3
when=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/survivors.sh"
if [ "$where" = shrink ]; then
  # Rank 3 dies; the shrink along replicate leaves the (1, 2) mesh of old
  # root indices 0 and 1, rank 2 a spare.
  members=3
  wants=(
    'rank 0: first shrink revoked, second shrink ok, shape 1 2, shard group 0 1, failed 3'
    'rank 1: first shrink backend, second shrink ok, shape 1 2, shard group 0 1, failed 3'
    'rank 2: first shrink revoked, second shrink ok, spare, failed 3')
elif [ "$where" = shrink-all ]; then
  # Rank 3 dies; the shrink keeps every survivor: the 1-D mesh of 0, 1, 2.
  members=3
  wants=()
  for r in 0 1 2; do
    if [ "$r" = 1 ]; then first=backend; else first=revoked; fi
    wants+=("rank $r: first shrink $first, second shrink ok, shape 3, replicate_shard group 0 1 2, failed 3")
  done
else
  # The (2, 2) mesh of ranks 0-3 in rank order: rank r's replicate group
  # is {r mod 2, r mod 2 + 2}, its shard group {r - r mod 2, r - r mod 2 + 1}.
  members=4
  wants=()
  for r in 0 1 2 3; do
    if [ "$r" = 1 ] || [ "$where" = root ]; then first=backend; else first=revoked; fi
    wants+=("rank $r: first create $first, second create ok, replicate group $((r % 2)) $((r % 2 + 2)), shard group $((r - r % 2)) $((r - r % 2 + 1))")
  done
fi
run_survivors "$out" "$members" "^rank [0-$((members - 1))]: " "$mpiexec" -n 4 "$program" "$where" "$when"
cat "$out"
fail=0
for want in "${wants[@]}"; do
  grep -qxF "$want" "$out" || { echo "FAIL: missing '$want'"; fail=1; }
done
[ "$fail" = 0 ] && echo "ok: the first call failed on every member, and the second made the right mesh"
exit "$fail"
