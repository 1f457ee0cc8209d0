# A private Slurm cluster for tests, and the batch-script cases run on it:
# sourced by tests/slurm/run-batch-scripts.sh (two slurmd on this machine)
# and tests/multihost/run-bed.sh slurm (one slurmd per namespace host).
# See docs/TOPOLOGY.md, "The Slurm test".
#
#   slurm_require             exit 77 (skip) unless the Slurm and munge
#                             programs are installed
#   slurm_scratch             as root, a scratch folder in $slurm_dir,
#                             daemons stopped and folder removed on exit
#   slurm_free_ports N        N free TCP ports on 127.0.0.1, on one line
#   slurm_munge_start DIR     munged as the munge user, own key and socket
#                             in DIR/munge (the clients and daemons find it
#                             through AuthInfo, so through the file system)
#   slurm_write_conf DIR CTLD_HOST CTLD_ADDR CTLD_PORT NODE_LINE...
#                             DIR/slurm.conf, everything in DIR; exports
#                             SLURM_CONF
#   slurm_write_topology DIR LEAF=NODE[,NODE...]...
#                             DIR/topology.conf: a tree of those leaf
#                             switches under one spine s0, and
#                             TopologyPlugin=topology/tree in DIR/slurm.conf
#                             (after slurm_write_conf, before the daemons)
#   slurm_wait_idle N         until sinfo shows N idle nodes (30 s)
#   slurm_stop DIR [RC]       cancel the jobs, stop the daemons by the PIDs
#                             in their pid files; with RC != 0 print their logs
#   slurm_job_env BUILD       the environment the jobs inherit (sbatch
#                             passes it on): programs, launcher, yield shim
#   slurm_run_cases SRC DIR   submit examples/slurm/*.sbatch as the case table
#                             says, check each job; sets slurm_failures,
#                             slurm_ncases and slurm_finalize_hangs. Scripts
#                             named in DEVMESH_SLURM_SKIP ("SCRIPT:REASON",
#                             separated by ';') are skipped with REASON
#
# Slurm's client programs run as "${SLURM_CLIENT[@]}" PROGRAM ARGS: empty
# on this machine, a prefix that runs them on a host of the bed there.

SLURM_CLIENT=()
slurm_log_t0=${EPOCHREALTIME/[.,]/}
slurm_log() {
  local us=$(( ${EPOCHREALTIME/[.,]/} - slurm_log_t0 ))
  printf '[%3d.%02ds] %s\n' $((us / 1000000)) $((us % 1000000 / 10000)) "$*"
}

slurm_cli() {
  "${SLURM_CLIENT[@]}" "$@"
}

slurm_require() {
  export PATH="$PATH:/usr/sbin:/sbin"
  local prog
  for prog in munged slurmctld slurmd sbatch squeue scontrol sinfo scancel srun; do
    if ! command -v "$prog" >/dev/null; then
      echo "SKIP: $prog not found (install munge slurmctld slurmd slurm-client)"
      exit 77
    fi
  done
}

# slurm_scratch: as root (FAIL otherwise; SKIP without python3, which
# picks the ports), a scratch folder for a cluster in $slurm_dir, and a
# trap that stops its daemons (their logs printed on failure) and removes
# it on exit.
slurm_scratch() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "FAIL: this test starts munged and slurmd and must run as root" >&2
    exit 1
  fi
  command -v python3 >/dev/null || { echo "SKIP: python3 not found (picks free ports)"; exit 77; }
  slurm_dir=$(mktemp -d /tmp/devmesh-slurm.XXXXXX)
  chmod 755 "$slurm_dir"
  trap slurm_scratch_down EXIT
  trap 'exit 130' INT TERM
}

slurm_scratch_down() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  trap '' PIPE  # a closed output pipe must not cut the cleanup short
  slurm_stop "$slurm_dir" $rc
  rm -rf "$slurm_dir"
  slurm_log "daemons stopped"
  exit $rc
}

# slurm_free_ports N: N free TCP ports on 127.0.0.1, on one line.
slurm_free_ports() {
  python3 - "$1" <<'PY'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
PY
}

slurm_munge_start() {
  local m=$1/munge
  mkdir -p "$m"
  dd if=/dev/urandom of="$m/munge.key" bs=1024 count=1 status=none
  chown -R munge:munge "$m"
  chmod 711 "$m"
  chmod 400 "$m/munge.key"
  runuser -u munge -- munged --force \
    --key-file="$m/munge.key" --socket="$m/munge.socket" \
    --pid-file="$m/munged.pid" --log-file="$m/munged.log" \
    --seed-file="$m/munged.seed"
}

slurm_write_conf() {
  local dir=$1 ctld_host=$2 ctld_addr=$3 ctld_port=$4
  shift 4
  mkdir -p "$dir/state" "$dir/out"
  {
    cat <<CONF
ClusterName=devmesh-test
SlurmctldHost=$ctld_host($ctld_addr)
SlurmctldPort=$ctld_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool-%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
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
CONF
    printf '%s\n' "$@"
    echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
  } >"$dir/slurm.conf"
  export SLURM_CONF="$dir/slurm.conf"
}

# slurm_write_topology DIR LEAF=NODES...: the network as Slurm's
# topology/tree plugin sees it (Slurm 22.05 has no topology/block), read from
# topology.conf beside slurm.conf. slurmd then exports every task's place in
# it: SLURM_TOPOLOGY_ADDR=s0.s1.host0, SLURM_TOPOLOGY_ADDR_PATTERN=
# switch.switch.node (the spine first, the node last).
slurm_write_topology() {
  local dir=$1 leaf leaves=()
  shift
  for leaf in "$@"; do
    echo "SwitchName=${leaf%%=*} Nodes=${leaf#*=}"
    leaves+=("${leaf%%=*}")
  done >"$dir/topology.conf"
  (IFS=,; echo "SwitchName=s0 Switches=${leaves[*]}") >>"$dir/topology.conf"
  echo "TopologyPlugin=topology/tree" >>"$dir/slurm.conf"
}

slurm_wait_idle() {
  local want="idle $1" deadline=$(( $(date +%s) + 30 ))
  until [ "$(slurm_cli sinfo -h -o '%T %D' 2>/dev/null)" = "$want" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "FAIL: the Slurm nodes did not become idle in 30 s: $(slurm_cli sinfo -h -o '%N %T %E' 2>&1)" >&2
      return 1
    fi
    sleep 0.1
  done
}

slurm_stop() {
  local dir=$1 rc=${2:-0}
  [ -f "$dir/slurm.conf" ] && SLURM_CONF="$dir/slurm.conf" slurm_cli scancel --quiet --user=root 2>/dev/null
  # By PID, never by name: other clusters may run on this machine.
  local pids=() p f alive
  for f in "$dir"/slurmd-*.pid "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -s "$f" ] && pids+=("$(cat "$f")")
  done
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  for _ in $(seq 150); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && kill -9 "$p" 2>/dev/null; done
  if [ "$rc" -ne 0 ]; then
    for f in "$dir"/*.log "$dir"/munge/munged.log; do
      [ -f "$f" ] && { echo "--- $f (last 30 lines)"; tail -n 30 "$f"; }
    done
  fi
  return 0
}

slurm_job_env() {
  # The scripts find the programs through DEVMESH_BUILD. The yield shim
  # keeps 8 busy-polling ranks on 2 cores fast (tests/support/yield.c).
  export DEVMESH_BUILD=$1
  # MPICH's hydra by name: the unsuffixed mpiexec may be Open MPI's.
  MPIEXEC=$(command -v mpiexec.hydra || command -v mpiexec.mpich || echo mpiexec)
  export MPIEXEC
  local yield="$1/tests/support/libdevmesh_test_yield.so"
  [ -f "$yield" ] && export LD_PRELOAD="$yield${LD_PRELOAD:+:$LD_PRELOAD}"
  # NOLOCAL makes every rank a node of its own; host discovery must find
  # the nodes by itself.
  unset MPIR_CVAR_NOLOCAL DEVMESH_HOST_ID
}

# Cases: script | extra sbatch options [-- the script's arguments] |
# regexes its output must match (separated by ';;'), besides "all groups
# verified" and exit status 0. Scripts not listed run once as they are.
slurm_one='8 ranks on 1 host\(s\) x 8 rank\(s\) per host \(host identity from MPI_COMM_TYPE_SHARED\)'
slurm_two='8 ranks on 2 host\(s\) x 4 rank\(s\) per host \(host identity from MPI_COMM_TYPE_SHARED\)'
# What slurmd exported to the first two tasks (topology/tree).
slurm_addr='task 0 [^ ]+ s0\.s1\.[^ ]+ switch\.switch\.node;;task 1 [^ ]+ s0\.s2\.[^ ]+ switch\.switch\.node'
slurm_cases=(
  "hosts_srun.sbatch||$slurm_one;;1 node\(s\) x 8 task\(s\) per node: matches host discovery;;intra-host dims: replicate, shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_srun.sbatch|--nodes=2 --ntasks-per-node=4|$slurm_two;;2 node\(s\) x 4 task\(s\) per node: matches host discovery;;local +size 4 +groups \[0,1,2,3\] \[4,5,6,7\];;intra-host dims: shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_mpiexec.sbatch||$slurm_one;;1 node\(s\) x 8 task\(s\) per node: matches host discovery;;intra-host dims: replicate, shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_mpiexec.sbatch|--nodes=2 --ntasks-per-node=4|$slurm_two;;2 node\(s\) x 4 task\(s\) per node: matches host discovery;;local +size 4 +groups \[0,1,2,3\] \[4,5,6,7\];;intra-host dims: shard, tp;;^mesh \(replicate, shard, tp\):"
  "hosts_cyclic.sbatch||$slurm_two;;2 node\(s\) x 4 task\(s\) per node: matches host discovery;;local +size 4 +groups \[0,2,4,6\] \[1,3,5,7\];;tp +intra-host +across hosts;;intra-host dims: shard, tp"
  "hosts_cyclic.sbatch|--nodes=1 --ntasks-per-node=8|\(host identity from DEVMESH_HOST_ID\);;local +size 4 +groups \[0,2,4,6\] \[1,3,5,7\];;tp +intra-host +across hosts;;intra-host dims: shard, tp"
  # 2 nodes x 4 round-robin, one leaf switch per node (slurm_write_topology).
  "placement.sbatch||$slurm_addr;;levels host, switch, switch2; placement tp=host;;parent ranks \[0,2,4,6,1,3,5,7\], leftovers \[\]: as devmesh-plan;;tp groups \[0,2,4,6\] \[1,3,5,7\] \(each within one host\)"
  "placement.sbatch|-- 2,4 dp,tp dp=switch|$slurm_addr;;parent ranks \[0,2,1,3,4,6,5,7\], leftovers \[\]: as devmesh-plan;;dp groups \[0,4\] \[1,5\] \[2,6\] \[3,7\] \(each within one switch\);;tp groups \[0,2,1,3\] \[4,6,5,7\]$"
)

# slurm_run_job LABEL SCRIPT OPTS DIR: submits (OPTS: sbatch options, then
# optionally "--" and the script's arguments), waits (120 s), checks state
# and exit code; sets slurm_job, slurm_out (its output file, empty when
# sbatch refused it) and slurm_hangs, returns 1 on failure.
#
# SLURM_FINALIZE_HANG_S=S (default 0, off): a job step whose output ends
# with a program's success line ("all groups verified", printed after the
# last collective) and then stays silent for S seconds is hung in
# MPI_Finalize (MPICH 4.0.2 + UCX over TCP, docs/RELIABILITY.md): the step
# is killed and counted in slurm_hangs, and the job may then end with a
# non-zero status; every other check stays.
slurm_run_job() {
  local label=$1 script=$2 opts=$3 dir=$4 args="" job info state code
  opts=" $opts "
  case $opts in *" -- "*) args=${opts#*" -- "}; opts=${opts%%" -- "*} ;; esac
  slurm_job=""
  slurm_out=""
  slurm_hangs=0
  # shellcheck disable=SC2086  # opts and args are lists of words
  if ! job=$(slurm_cli sbatch --parsable --output="$dir/out/job-%j.out" --chdir="$dir/out" $opts \
             "$script" $args 2>&1); then
    echo "FAIL: $label: sbatch refused it: $job" >&2
    return 1
  fi
  job=${job%%;*}
  slurm_job=$job
  slurm_out="$dir/out/job-$job.out"
  slurm_log "$label: job $job submitted"
  local deadline=$(( $(date +%s) + 120 )) timed_out=0 hang_ticks=$(( ${SLURM_FINALIZE_HANG_S:-0} * 10 ))
  local ticks=0 size=-1 since=0 now step
  while [ -n "$(slurm_cli squeue -h -j "$job" 2>/dev/null)" ]; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      timed_out=1
      break
    fi
    sleep 0.1
    ticks=$((ticks + 1))
    [ $hang_ticks -gt 0 ] && [ -f "$slurm_out" ] || continue
    now=$(stat -c %s "$slurm_out")
    [ "$now" != "$size" ] && { size=$now; since=$ticks; continue; }
    if [ $((ticks - since)) -ge $hang_ticks ] && [ "$(tail -n 1 "$slurm_out")" = "all groups verified" ]; then
      for step in $(slurm_cli squeue -h -s -j "$job" -o %i 2>/dev/null | grep -E "^$job\.[0-9]+\$"); do
        slurm_log "$label: step $step silent ${SLURM_FINALIZE_HANG_S} s after its success line (hung in MPI_Finalize): killed"
        slurm_cli scancel --signal=KILL "$step" || true
        slurm_hangs=$((slurm_hangs + 1))
      done
      since=$ticks
    fi
  done
  info=$(slurm_cli scontrol show job "$job" 2>&1)
  if [ $timed_out -eq 1 ]; then
    echo "FAIL: $label: job $job still queued or running after 120 s" >&2
    echo "$info" >&2
    slurm_cli scancel "$job" || true
    return 1
  fi
  state=$(grep -o 'JobState=[A-Z_]*' <<<"$info" | cut -d= -f2)
  code=$(grep -o ' ExitCode=[0-9:]*' <<<"$info" | cut -d= -f2)
  if [ $slurm_hangs -gt 0 ] && [ "$state" = FAILED ]; then
    return 0
  fi
  if [ "$state" != COMPLETED ] || [ "$code" != 0:0 ]; then
    echo "FAIL: $label: job $job ended $state with exit code $code" >&2
    return 1
  fi
}

slurm_run_cases() {
  local src=$1 dir=$2 cases=("${slurm_cases[@]}") scripts script name listed c
  scripts=("$src"/examples/slurm/*.sbatch)
  [ -e "${scripts[0]}" ] || { echo "FAIL: no batch scripts in $src/examples/slurm" >&2; return 1; }
  for script in "${scripts[@]}"; do
    name=$(basename "$script")
    listed=0
    for c in "${cases[@]}"; do [ "${c%%|*}" = "$name" ] && listed=1; done
    [ $listed -eq 1 ] || cases+=("$name||")
  done
  slurm_failures=0
  slurm_finalize_hangs=0
  slurm_ncases=0
  local opts want label ok job out rest p patterns skip why
  for c in "${cases[@]}"; do
    IFS='|' read -r name opts want <<<"$c"
    why=""
    IFS=';' read -ra skip <<<"${DEVMESH_SLURM_SKIP:-}"
    for p in "${skip[@]}"; do [ "${p%%:*}" = "$name" ] && why=${p#*:}; done
    if [ -n "$why" ]; then
      slurm_log "$name${opts:+ $opts}: skipped ($why)"
      continue
    fi
    slurm_ncases=$((slurm_ncases + 1))
    label="$name${opts:+ $opts}"
    if [ ! -f "$src/examples/slurm/$name" ]; then
      echo "FAIL: $name: no such script" >&2
      slurm_failures=$((slurm_failures + 1))
      continue
    fi
    ok=1
    slurm_run_job "$label" "$src/examples/slurm/$name" "$opts" "$dir" || ok=0
    job=$slurm_job
    out=$slurm_out
    if [ -z "$out" ] || [ ! -f "$out" ]; then
      echo "FAIL: $label: no output file ${out:-(no job)}" >&2
      ok=0
    else
      patterns=("all groups verified" "devmesh-slurm: exit status 0")
      # A step killed in MPI_Finalize leaves its non-zero status.
      [ "$slurm_hangs" -gt 0 ] && patterns[1]="devmesh-slurm: exit status [0-9]+"
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
      slurm_failures=$((slurm_failures + 1))
      [ -f "$out" ] && { echo "--- $out"; cat "$out"; }
    else
      if [ "$slurm_hangs" -gt 0 ]; then
        slurm_finalize_hangs=$((slurm_finalize_hangs + slurm_hangs))
        slurm_log "$label: job $job output as expected; $slurm_hangs step(s) killed in MPI_Finalize"
      else
        slurm_log "$label: job $job COMPLETED, exit code 0:0, output as expected"
      fi
    fi
  done
}
