#!/usr/bin/env bash
# Host discovery, host meshes and the backend's collectives on two real
# hosts (tests/multihost/bed.sh): no DEVMESH_HOST_ID, no MPIR_CVAR_NOLOCAL;
# MPI_COMM_TYPE_SHARED sees two nodes because the launcher placed ranks on
# two hostnames, and the data crosses the link over TCP.
#
#   run-hosts.sh SOURCE_DIR BUILD_DIR MPI_NAME
#
# MPI_NAME is the build's MPI as meson found it; the bed uses MPICH's hydra,
# so anything else is skipped (exit 77), as is a machine without root or
# network namespaces.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
if [ "$3" != mpich ]; then echo "SKIP: the bed launches with MPICH's hydra; this build uses MPI '$3'"; exit 77; fi
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=bed.sh
. "$here/bed.sh"
bed_require
bed_require_hydra
unset DEVMESH_HOST_ID MPIR_CVAR_NOLOCAL
BED_YIELD="$build/tests/support/libdevmesh_test_yield.so"
bed_up

# run_case LABEL SUCCESS_REGEX [REGEX...] -- MPIEXEC_ARGS...
# One launch, bounded in time. MPICH 4.0.2 with UCX 1.13 over TCP here hangs
# in MPI_Finalize in 1 launch in 5 or more once three or more ranks span the
# link (a plain MPI program as much as devmesh; docs/RELIABILITY.md). A
# launch still running 3 s after it printed its success line is stopped and
# launched again, at most 10 times (on a loaded machine the uneven 2+1 case
# has hung in 5 launches in a row, its checks passed each time); it passes
# only when hydra exits with 0.
failures=0
finalize_hangs=0
run_case() {
  local label=$1
  shift
  local want=()
  while [ "$1" != -- ]; do want+=("$1"); shift; done
  shift
  local attempt rc out="$BED_DIR/out.txt" ok p pid ticks since
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    bed_mpiexec "$@" >"$out" 2>&1 &
    pid=$!
    ticks=0
    since=-1
    while kill -0 $pid 2>/dev/null && [ $ticks -lt 300 ] && { [ $since -lt 0 ] || [ $((ticks - since)) -lt 30 ]; }; do
      sleep 0.1
      ticks=$((ticks + 1))
      [ $since -lt 0 ] && grep -Eq -- "${want[0]}" "$out" && since=$ticks
    done
    if kill -0 $pid 2>/dev/null; then
      bed_reap
      wait $pid || true
      rc=124
    else
      rc=0
      wait $pid || rc=$?
    fi
    bed_reap
    ok=1
    for p in "${want[@]}"; do grep -Eq -- "$p" "$out" || ok=0; done
    if [ $rc -eq 124 ] && [ $since -ge 0 ] && [ $attempt -lt 10 ]; then
      finalize_hangs=$((finalize_hangs + 1))
      bed_log "$label: checks passed, then no exit (MPI_Finalize over TCP); launching again"
      continue
    fi
    break
  done
  if [ $rc -ne 0 ] || [ $ok -eq 0 ]; then
    echo "FAIL: $label: exit $rc" >&2
    for p in "${want[@]}"; do grep -Eq -- "$p" "$out" || echo "FAIL: $label: output lacks /$p/" >&2; done
    echo "--- output"; tail -n 60 "$out"
    failures=$((failures + 1))
  else
    bed_log "$label: passed"
  fi
}

hosts=$build/tests/mpi/test_mpi_hosts
mesh=$build/tests/mpi/test_mpi_mesh
example=$build/examples/example_hosts
passed='\*\*\* No errors detected'
# Host tests at block, round-robin and uneven placements; the test checks
# discovery against MPI_Comm_split_type and the expected host count.
run_case "test_mpi_hosts, block 4+4" "$passed" -- \
  -genv DEVMESH_TEST_EXPECT_HOSTS 2 -hosts host0:4,host1:4 -n 8 "$hosts" --color_output=no
run_case "test_mpi_hosts, round robin 2+2" "$passed" -- \
  -genv DEVMESH_TEST_EXPECT_HOSTS 2 -hosts host0,host1 -n 4 "$hosts" --color_output=no
run_case "test_mpi_hosts, uneven 2+1" "$passed" -- \
  -genv DEVMESH_TEST_EXPECT_HOSTS 2 -hosts host0:2,host1:1 -n 3 "$hosts" --color_output=no
# The hosts example: shape from discovery, groups verified by allgather.
run_case "example_hosts, block 4+4" 'all groups verified' \
  '8 ranks on 2 host\(s\) x 4 rank\(s\) per host \(host identity from MPI_COMM_TYPE_SHARED\)' \
  'local +size 4 +groups \[0,1,2,3\] \[4,5,6,7\]' 'intra-host dims: shard, tp' -- \
  -hosts host0:4,host1:4 -n 8 "$example"
run_case "example_hosts, round robin (-ppn 1)" 'all groups verified' \
  '8 ranks on 2 host\(s\) x 4 rank\(s\) per host \(host identity from MPI_COMM_TYPE_SHARED\)' \
  'local +size 4 +groups \[0,2,4,6\] \[1,3,5,7\]' 'tp +intra-host +across hosts' -- \
  -hosts host0,host1 -ppn 1 -n 8 "$example"
# The backend's collectives with groups across the link, over TCP: the
# bytes host0 sent over the veth show that the data crossed it.
before=$(bed_tx_bytes)
run_case "backend collectives, 2+2" "$passed" -- \
  -hosts host0:2,host1:2 -n 4 "$mesh" --run_test=backend_collectives --color_output=no
run_case "backend collectives, round robin 3+3" "$passed" -- \
  -hosts host0,host1 -n 6 "$mesh" --run_test=backend_collectives --color_output=no
sent=$(( $(bed_tx_bytes) - before ))
if [ $sent -lt 10000 ]; then
  echo "FAIL: host0 sent only $sent bytes over the link: the collectives did not cross it" >&2
  failures=$((failures + 1))
else
  bed_log "the collectives sent $sent bytes from host0 over the link"
fi

[ $finalize_hangs -gt 0 ] && bed_log "launches relaunched after a hang in MPI_Finalize: $finalize_hangs"
if [ $failures -ne 0 ]; then
  echo "FAIL: $failures case(s) failed"
  exit 1
fi
bed_log "all cases passed"
