#!/usr/bin/env bash
# Submits the batch scripts of examples/slurm/ to a private Slurm cluster
# started here, waits for each job and checks its exit code and output.
#
# The cluster runs on this machine: munged (as the munge user, own key and
# socket), slurmctld and two slurmd daemons, nodes n1 and n2 of 8 CPUs each,
# all in a scratch folder on free ports, each node under a leaf switch of its
# own (s1, s2; spine s0: topology/tree). Two slurmd on one machine are two
# nodes to Slurm and to MPICH (PMI-2 reports the node of every rank), so
# multi-node and round-robin placement are tested; the same cases on two
# hosts of their own are tests/multihost/run-bed.sh slurm. Daemons are stopped
# by PID on exit, also on failure. See docs/TOPOLOGY.md.
#
#   run-batch-scripts.sh SOURCE_DIR BUILD_DIR
#
# Exit 77 (skipped) when the Slurm or munge programs are missing.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=cluster.sh
. "$here/cluster.sh"
slurm_require
slurm_scratch
scratch=$slurm_dir

slurm_munge_start "$scratch"
read -r ctld_port port1 port2 < <(slurm_free_ports 3)
host=$(hostname -s)
slurm_write_conf "$scratch" "$host" 127.0.0.1 "$ctld_port" \
  "NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$port1 CPUs=8 State=UNKNOWN" \
  "NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$port2 CPUs=8 State=UNKNOWN"
slurm_write_topology "$scratch" s1=n1 s2=n2
slurmctld -f "$SLURM_CONF" -c -i
for n in n1 n2; do slurmd -f "$SLURM_CONF" -N "$n"; done
slurm_wait_idle 2
slurm_log "cluster up: nodes n1 n2 idle (ports $ctld_port, $port1, $port2)"

slurm_job_env "$build"
slurm_run_cases "$src" "$scratch"
if [ "$slurm_failures" -ne 0 ]; then
  echo "FAIL: $slurm_failures of $slurm_ncases jobs failed"
  exit 1
fi
slurm_log "all $slurm_ncases jobs passed"
