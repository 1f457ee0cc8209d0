#!/usr/bin/env bash
# Submits the batch scripts of examples/slurm/ to a private Slurm cluster
# started here, waits for each job and checks its exit code and output.
#
# The cluster runs on this machine: munged (as the munge user, own key and
# socket), slurmctld and two slurmd daemons, nodes n1 and n2 of 8 CPUs each,
# all in a scratch folder on free ports. Two slurmd on one machine are two
# nodes to Slurm and to MPICH (PMI-2 reports the node of every rank), so
# multi-node and round-robin placement are tested for real. Daemons are
# stopped by PID on exit, also on failure. See docs/TOPOLOGY.md.
#
#   run-batch-scripts.sh SOURCE_DIR BUILD_DIR
#
# Exit 77 (skipped) only when the Slurm or munge programs are missing.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
export PATH="$PATH:/usr/sbin:/sbin"

for prog in munged slurmctld slurmd sbatch squeue scontrol sinfo scancel srun python3; do
  if ! command -v "$prog" >/dev/null; then
    echo "SKIP: $prog not found (install munge slurmctld slurmd slurm-client)"
    exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  echo "FAIL: this test starts munged and slurmd and must run as root" >&2
  exit 1
fi

t0=${EPOCHREALTIME/[.,]/}
log() {
  local us=$(( ${EPOCHREALTIME/[.,]/} - t0 ))
  printf '[%3d.%02ds] %s\n' $((us / 1000000)) $((us % 1000000 / 10000)) "$*"
}

scratch=$(mktemp -d /tmp/devmesh-slurm.XXXXXX)
chmod 755 "$scratch"
nodes=(n1 n2)

stop_daemons() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  trap '' PIPE  # a closed output pipe must not cut the cleanup short
  [ -f "$scratch/slurm.conf" ] && SLURM_CONF="$scratch/slurm.conf" scancel --quiet --user=root 2>/dev/null
  # By PID, never by name: other clusters may run on this machine.
  local pids=() p f
  for f in "$scratch"/slurmd-*.pid "$scratch/slurmctld.pid" "$scratch/munge/munged.pid"; do
    [ -s "$f" ] && pids+=("$(cat "$f")")
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for _ in $(seq 150); do
    local alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null; done
  if [ $rc -ne 0 ]; then
    for f in "$scratch"/*.log "$scratch"/munge/munged.log; do
      [ -f "$f" ] && { echo "--- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
  fi
  rm -rf "$scratch"
  log "daemons stopped"
  exit $rc
}
trap stop_daemons EXIT
trap 'exit 130' INT TERM

# --- munge: our own key, socket and daemon, running as the munge user -----
mkdir -p "$scratch/munge"
dd if=/dev/urandom of="$scratch/munge/munge.key" bs=1024 count=1 status=none
chown -R munge:munge "$scratch/munge"
chmod 711 "$scratch/munge"
chmod 400 "$scratch/munge/munge.key"
runuser -u munge -- munged --force \
  --key-file="$scratch/munge/munge.key" --socket="$scratch/munge/munge.socket" \
  --pid-file="$scratch/munge/munged.pid" --log-file="$scratch/munge/munged.log" \
  --seed-file="$scratch/munge/munged.seed"

# --- slurm.conf: nodes n1 and n2 on this machine, free ports --------------
read -r ctld_port port1 port2 < <(python3 - <<'PY'
import socket
socks = [socket.socket() for _ in range(3)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
PY
)
host=$(hostname -s)
mkdir -p "$scratch/state" "$scratch/out" "$scratch"/spool-n1 "$scratch"/spool-n2
cat > "$scratch/slurm.conf" <<CONF
ClusterName=devmesh-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$scratch/munge/munge.socket
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/spool-%n
SlurmctldPidFile=$scratch/slurmctld.pid
SlurmdPidFile=$scratch/slurmd-%n.pid
SlurmctldLogFile=$scratch/slurmctld.log
SlurmdLogFile=$scratch/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=pmi2
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=600
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$port1 CPUs=8 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$port2 CPUs=8 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$scratch/slurm.conf"

slurmctld -f "$SLURM_CONF" -c -i
for n in "${nodes[@]}"; do slurmd -f "$SLURM_CONF" -N "$n"; done
deadline=$(( $(date +%s) + 30 ))
until [ "$(sinfo -h -o '%T %D')" = "idle 2" ]; do
  if [ "$(date +%s)" -ge "$deadline" ]; then
    echo "FAIL: the Slurm nodes did not become idle in 30 s: $(sinfo -h -o '%N %T %E' 2>&1)" >&2
    exit 1
  fi
  sleep 0.1
done
log "cluster up: nodes n1 n2 idle (ports $ctld_port, $port1, $port2)"

# --- the jobs ----------------------------------------------------------------
# The scripts find the programs through DEVMESH_BUILD. The yield shim keeps
# 8 busy-polling ranks on 2 cores fast (see tests/support/yield.c); sbatch passes
# the environment on to the job (--export=ALL).
export DEVMESH_BUILD="$build"
# MPICH's hydra by name: the unsuffixed mpiexec may be Open MPI's.
MPIEXEC=$(command -v mpiexec.hydra || command -v mpiexec.mpich || echo mpiexec)
export MPIEXEC
yield="$build/tests/support/libdevmesh_test_yield.so"
[ -f "$yield" ] && export LD_PRELOAD="$yield${LD_PRELOAD:+:$LD_PRELOAD}"
unset MPIR_CVAR_NOLOCAL DEVMESH_HOST_ID  # NOLOCAL makes every rank a node of its own

# Cases: script | extra sbatch options | regexes its output must match
# (separated by ';;'), besides "all groups verified" and exit status 0.
# Scripts not listed run once as they are.
one='8 ranks on 1 host\(s\) x 8 rank\(s\) per host \(host identity from MPI_COMM_TYPE_SHARED\)'
two='8 ranks on 2 host\(s\) x 4 rank\(s\) per host \(host identity from MPI_COMM_TYPE_SHARED\)'
cases=(
  "hosts_srun.sbatch||$one;;1 node\(s\) x 8 task\(s\) per node: matches host discovery;;intra-host dims: replicate, shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_srun.sbatch|--nodes=2 --ntasks-per-node=4|$two;;2 node\(s\) x 4 task\(s\) per node: matches host discovery;;local +size 4 +groups \[0,1,2,3\] \[4,5,6,7\];;intra-host dims: shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_mpiexec.sbatch||$one;;1 node\(s\) x 8 task\(s\) per node: matches host discovery;;intra-host dims: replicate, shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_mpiexec.sbatch|--nodes=2 --ntasks-per-node=4|$two;;2 node\(s\) x 4 task\(s\) per node: matches host discovery;;local +size 4 +groups \[0,1,2,3\] \[4,5,6,7\];;intra-host dims: shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_cyclic.sbatch||$two;;2 node\(s\) x 4 task\(s\) per node: matches host discovery;;local +size 4 +groups \[0,2,4,6\] \[1,3,5,7\];;tp +intra-host +across hosts;;intra-host dims: shard, tp"
  "hosts_cyclic.sbatch|--nodes=1 --ntasks-per-node=8|\(host identity from DEVMESH_HOST_ID\);;local +size 4 +groups \[0,2,4,6\] \[1,3,5,7\];;tp +intra-host +across hosts;;intra-host dims: shard, tp"
)
scripts=("$src"/examples/slurm/*.sbatch)
[ -e "${scripts[0]}" ] || { echo "FAIL: no batch scripts in $src/examples/slurm" >&2; exit 1; }
for script in "${scripts[@]}"; do
  name=$(basename "$script")
  listed=0
  for c in "${cases[@]}"; do [ "${c%%|*}" = "$name" ] && listed=1; done
  [ $listed -eq 1 ] || cases+=("$name||")
done

failures=0
for c in "${cases[@]}"; do
  IFS='|' read -r name opts want <<<"$c"
  label="$name${opts:+ $opts}"
  if [ ! -f "$src/examples/slurm/$name" ]; then
    echo "FAIL: $name: no such script" >&2
    failures=$((failures + 1))
    continue
  fi
  # shellcheck disable=SC2086  # opts is a list of options
  if ! job=$(sbatch --parsable --output="$scratch/out/%x-%j.out" --chdir="$scratch/out" $opts \
             "$src/examples/slurm/$name" 2>&1); then
    echo "FAIL: $label: sbatch refused it: $job" >&2
    failures=$((failures + 1))
    continue
  fi
  job=${job%%;*}
  log "$label: job $job submitted"
  deadline=$(( $(date +%s) + 120 ))
  timed_out=0
  while [ -n "$(squeue -h -j "$job" 2>/dev/null)" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      timed_out=1
      break
    fi
    sleep 0.1
  done
  info=$(scontrol show job "$job" 2>&1)
  out="$scratch/out/$(grep -o 'JobName=[^ ]*' <<<"$info" | cut -d= -f2)-$job.out"
  ok=1
  if [ $timed_out -eq 1 ]; then
    echo "FAIL: $label: job $job still queued or running after 120 s" >&2
    echo "$info" >&2
    scancel "$job" || true
    ok=0
  else
    state=$(grep -o 'JobState=[A-Z_]*' <<<"$info" | cut -d= -f2)
    code=$(grep -o ' ExitCode=[0-9:]*' <<<"$info" | cut -d= -f2)
    if [ "$state" != COMPLETED ] || [ "$code" != 0:0 ]; then
      echo "FAIL: $label: job $job ended $state with exit code $code" >&2
      ok=0
    fi
  fi
  if [ ! -f "$out" ]; then
    echo "FAIL: $label: no output file $out" >&2
    ok=0
  else
    patterns=("all groups verified" "devmesh-slurm: exit status 0")
    rest=$want
    while [ -n "$rest" ]; do
      patterns+=("${rest%%;;*}")
      [ "$rest" = "${rest#*;;}" ] && break
      rest=${rest#*;;}
    done
    for p in "${patterns[@]}"; do
      if ! grep -Eq -- "$p" "$out"; then
        echo "FAIL: $label: output lacks /$p/" >&2
        ok=0
      fi
    done
  fi
  if [ $ok -eq 0 ]; then
    failures=$((failures + 1))
    [ -f "$out" ] && { echo "--- $out"; cat "$out"; }
  else
    log "$label: job $job COMPLETED, exit code 0:0, output as expected"
  fi
done

if [ $failures -ne 0 ]; then
  echo "FAIL: $failures of ${#cases[@]} jobs failed"
  exit 1
fi
log "all ${#cases[@]} jobs passed (${#scripts[@]} scripts)"
