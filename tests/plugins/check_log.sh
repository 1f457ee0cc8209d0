#!/usr/bin/env bash
# The host services' log (DEVMESH_LOG): at info, loading a v3 plugin writes
# one line per event, prefixed with the world rank and the backend; at the
# default (warn) it writes none; an unknown level says so once and logs at
# warn.
#
# With the Gloo plugin's conformance program and the plugin, also Gloo's
# own line when it connects a group.
#
# Usage: check_log.sh MPIEXEC TEST_FAULTY [PLUGIN_CONFORMANCE GLOO_PLUGIN]
set -u
mpiexec=$1 prog=$2 conformance=${3:-} gloo=${4:-}
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
if [ -n "$conformance" ]; then
  out=$(DEVMESH_LOG=info "$mpiexec" -n 2 "$conformance" --color_output=no --run_test=barrier_and_send_recv -- \
    "$gloo" timeout=60 2>&1) || { echo "$out"; fail "the Gloo conformance program failed at DEVMESH_LOG=info"; }
  grep -q "^devmesh\[1\] backend 'gloo' info: connected a group of 2 ranks (rank 1)$" <<<"$out" ||
    { echo "$out"; fail "no line from Gloo when it connected a group"; }
fi
echo "DEVMESH_LOG: info lines per rank and backend, none at warn, unknown levels named"
