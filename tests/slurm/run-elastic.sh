#!/usr/bin/env bash
# The elastic HSDP job of examples/slurm/ulfm/elastic.sbatch on a private
# one-node Slurm cluster started here (cluster.sh): Open MPI 5's mpirun
# inside the allocation with ULFM, rank 5 killed mid-run. Judged by what
# the survivors print (tests/fault/run_fault.py judge-elastic): after a death
# the job may stay in MPI_Finalize (docs/RELIABILITY.md), so it is
# cancelled once all 7 survivors have printed, or after 90 s. A job whose
# mpirun did not start (status 213) is submitted again, twice at most.
# With SCRIPT elastic-repair.sbatch, the repair mode with 2 spares (10
# tasks): cancelled once the 8 members and the released spare have
# printed, judged by run_fault.py judge-elastic-repair.
#
#   run-elastic.sh SOURCE_DIR BUILD_DIR MPIRUN [SCRIPT]
#
# Exit 77 (skipped) when the Slurm or munge programs are missing.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
mpirun=$3
script=${4:-elastic.sbatch}
# What the job's processes print when they are done, how many such lines
# end it, its judge, and the node's CPUs to Slurm (one per task: Slurm
# refuses more tasks per node than CPUs, --overcommit or not).
case $script in
  elastic.sbatch)
    done_lines='^rank [0-9]*: \(finished\|spare\)' want=7 judge=(judge-elastic) cpus=8 ;;
  elastic-repair.sbatch)
    done_lines='^\(member\|spare\|spawned\) [0-9]*: \(finished\|released\)' want=9
    judge=(judge-elastic-repair 10) cpus=10 ;;
  *) echo "FAIL: unknown script $script" >&2; exit 1 ;;
esac
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=cluster.sh
. "$here/cluster.sh"
slurm_require
slurm_scratch
scratch=$slurm_dir

slurm_munge_start "$scratch"
read -r ctld_port port1 < <(slurm_free_ports 2)
host=$(hostname -s)
slurm_write_conf "$scratch" "$host" 127.0.0.1 "$ctld_port" \
  "NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$port1 CPUs=$cpus State=UNKNOWN"
slurmctld -f "$SLURM_CONF" -c -i
slurmd -f "$SLURM_CONF" -N n1
slurm_wait_idle 1
slurm_log "cluster up: node n1 idle"

# What the job inherits (sbatch passes the environment on): the build, the
# launcher, and what Open MPI needs here: root; no binding (the node has
# $cpus CPUs to Slurm, 2 cores to hwloc); ranks that yield the cores.
export DEVMESH_BUILD=$build MPIRUN=$mpirun
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PRTE_MCA_hwloc_default_binding_policy=none
export OMPI_MCA_mpi_yield_when_idle=1
# Open MPI 5.0.11's mpirun can fail to start its PMIx server on a loaded
# machine ("The PMIx server's listener thread failed to start", status 213,
# before any rank runs): such a job is submitted again, twice at most, as
# tests/support/mpiexec does for a local launch; any other outcome is the
# job's.
for attempt in 1 2 3; do
  job=$(slurm_cli sbatch --parsable --output="$scratch/out/job-%j.out" --chdir="$scratch/out" \
        "$src/examples/slurm/ulfm/$script")
  job=${job%%;*}
  out=$scratch/out/job-$job.out
  slurm_log "job $job submitted"
  for _ in $(seq 900); do
    [ -f "$out" ] && [ "$(grep -c "$done_lines" "$out")" -ge "$want" ] && break
    [ -n "$(slurm_cli squeue -h -j "$job" 2>/dev/null)" ] || break
    sleep 0.1
  done
  sleep 0.5
  slurm_cli scancel "$job" 2>/dev/null || true
  reported=$(grep -c '^\(rank\|member\|spare\|spawned\) [0-9]*: ' "$out" 2>/dev/null || true)
  slurm_log "job $job: $(grep -c "$done_lines" "$out" 2>/dev/null || true) survivors reported"
  if [ "$attempt" -eq 3 ] || [ "${reported:-0}" -ne 0 ] ||
     ! grep -q '^devmesh-slurm: exit status 213$' "$out" 2>/dev/null; then
    break
  fi
  cat "$out"
  slurm_log "mpirun did not start (status 213), submitting the job again"
done
cat "$out" 2>/dev/null || { echo "FAIL: job $job wrote no output" >&2; exit 1; }
python3 "$src/tests/fault/run_fault.py" "${judge[0]}" "$out" "${judge[@]:1}"
