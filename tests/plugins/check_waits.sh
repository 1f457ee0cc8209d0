#!/usr/bin/env bash
# A v2 plugin's comm_create that fails on one member before its collective
# part, with nothing bounding the others' wait (docs/BACKENDS.md, "What
# older plugins get"): every member enters the creation, none comes back,
# and the job does not end by itself (no MPI error ends it) until the
# timeout here ends it.
#
# Usage: check_waits.sh MPIEXEC TEST_FAULTY
set -u
mpiexec=$1 prog=$2
fail() { echo "FAIL: $*"; exit 1; }
out=$(timeout 8 "$mpiexec" -n 4 "$prog" --color_output=no --run_test=v2_create_failing_early_unbounded 2>&1)
rc=$?
[ "$rc" = 124 ] || { echo "$out"; fail "the job ended by itself (exit status $rc), not by the timeout"; }
for r in 0 1 2 3; do
  grep -q "^rank $r: creating$" <<<"$out" || { echo "$out"; fail "rank $r did not enter the creation"; }
done
! grep -q "returned" <<<"$out" || { echo "$out"; fail "a member came back from the creation"; }
! grep -qi "fatal error\|message truncated" <<<"$out" || { echo "$out"; fail "an MPI error ended the job"; }
echo "v2 comm_create failing early on one rank: every member waits, no MPI error"
