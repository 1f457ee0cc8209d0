#!/usr/bin/env bash
# The host services' log (DEVMESH_LOG): at info, loading a v3 plugin writes
# one line per event, prefixed with the world rank and the backend; at the
# default (warn) it writes none; an unknown level says so once and logs at
# warn.
#
# Usage: check_log.sh MPIEXEC TEST_FAULTY
set -u
mpiexec=$1 prog=$2
fail() { echo "FAIL: $*"; exit 1; }
run() { env "$@" "$mpiexec" -n 2 "$prog" --color_output=no --run_test=host_discovery_only_when_asked 2>&1; }
out=$(run DEVMESH_LOG=info) || { echo "$out"; fail "the program failed at DEVMESH_LOG=info"; }
for r in 0 1; do
  grep -q "^devmesh\[$r\] backend 'example-v3' info: loaded .*libdevmesh-backend-example-v3.so (ABI v3)$" <<<"$out" ||
    { echo "$out"; fail "no load line for rank $r at info"; }
done
out=$(run DEVMESH_LOG=warn) || { echo "$out"; fail "the program failed at DEVMESH_LOG=warn"; }
! grep -q "^devmesh\[" <<<"$out" || { echo "$out"; fail "lines below warn were written at warn"; }
out=$(run DEVMESH_LOG=loud) || { echo "$out"; fail "the program failed at DEVMESH_LOG=loud"; }
grep -q "DEVMESH_LOG=loud is none of warn, info, debug; logging at warn" <<<"$out" || { echo "$out"; fail "no word on the unknown level"; }
echo "DEVMESH_LOG: info lines per rank and backend, none at warn, unknown levels named"
