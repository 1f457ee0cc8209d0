# Two hosts on one machine, for tests: sourced by the tests/multihost and
# tests/slurm runners. (docs/TOPOLOGY.md and docs/RELIABILITY.md)
#
# Each host is a network namespace of its own (ip netns), joined to the
# other by one veth pair with addresses of the test's own (10.231.N.1 and
# .2/24, nothing else routed), names resolved through /etc/netns/<ns>/hosts
# (the machine's /etc/hosts untouched). Processes of a host run as
#   ip netns exec <ns> unshare -u sh -c "hostname <host>; exec ..."
# so each host also has its own hostname. MPICH's hydra crosses the hosts
# through `-launcher ssh -launcher-exec $BED_LAUNCHER`, a script that drops
# ssh's options and starts hydra's proxy on the named host that way.
#
#   bed_require          exit 77 (skip) with the reason unless a bed can run
#   bed_up               make the hosts (names in BED_HOSTS, namespaces in
#                        BED_NS) and $BED_DIR; bed_down on EXIT undoes it,
#                        after calling $BED_BEFORE_DOWN EXIT_STATUS if set
#   bed_on HOST CMD...   run CMD on HOST (its namespace and hostname)
#   bed_link up|down     the link between the hosts
#   bed_mpiexec ARGS...  hydra started on the first host, across the bed,
#                        UCX over TCP (so data crosses the veth), yield shim
#   bed_mpirun OUT MPIRUN ARGS...
#                        Open MPI 5's mpirun (prterun) on the first host,
#                        its daemons started on the hosts through
#                        $BED_PRTE_AGENT, UCX over TCP, ranks that yield;
#                        its output in OUT
#
# Names are unique per run (the PID), so runs on one machine do not meet.

bed_log_t0=${EPOCHREALTIME/[.,]/}
bed_log() {
  local us=$(( ${EPOCHREALTIME/[.,]/} - bed_log_t0 ))
  printf '[%3d.%02ds] %s\n' $((us / 1000000)) $((us % 1000000 / 10000)) "$*"
}

bed_require() {
  export PATH="$PATH:/usr/sbin:/sbin"
  if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the multi-host bed needs root (network namespaces)"; exit 77; fi
  local p
  for p in ip unshare hostname; do
    command -v "$p" >/dev/null || { echo "SKIP: $p not found"; exit 77; }
  done
  local probe="dmprobe$$"
  if ! ip netns add "$probe" 2>/dev/null; then
    echo "SKIP: 'ip netns add' does not work here (no network namespaces)"
    exit 77
  fi
  if ! ip netns exec "$probe" unshare -u sh -c 'hostname dmprobe' 2>/dev/null; then
    ip netns del "$probe" 2>/dev/null
    echo "SKIP: 'ip netns exec' or 'unshare -u' does not work here"
    exit 77
  fi
  ip netns del "$probe"
}

# hydra looks for hydra_pmi_proxy beside the path it was started as, so it
# is called by its own name (ENVIRONMENT: not through mpiexec symlinks).
bed_require_hydra() {
  BED_HYDRA=$(command -v mpiexec.hydra || true)
  [ -n "$BED_HYDRA" ] || { echo "SKIP: mpiexec.hydra (MPICH's launcher) not found"; exit 77; }
}

bed_down() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  trap '' PIPE
  [ -n "${BED_BEFORE_DOWN:-}" ] && $BED_BEFORE_DOWN $rc
  bed_reap
  local ns
  for ns in "${BED_NS[@]}"; do
    ip netns del "$ns" 2>/dev/null
    rm -rf "/etc/netns/$ns"
  done
  [ -n "${BED_DIR:-}" ] && [ "${BED_KEEP:-0}" = 0 ] && rm -rf "$BED_DIR"
  bed_log "bed down"
  exit $rc
}

# bed_agent FILE PREFIX: an ssh stand-in, "FILE [options] HOST COMMAND...",
# that runs COMMAND on HOST (its namespace and hostname) through sh -c,
# after PREFIX ("exec " or "").
bed_agent() {
  cat >"$1" <<AGENT
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1; shift
case "\$host" in
  host0) ns=${BED_NS[0]} ;;
  host1) ns=${BED_NS[1]} ;;
  *) echo "\$0: unknown host \$host" >&2; exit 1 ;;
esac
exec ip netns exec "\$ns" unshare -u sh -c "hostname \$host; $2\$*"
AGENT
  chmod 755 "$1"
}

bed_up() {
  BED_HOSTS=(host0 host1)
  BED_NS=("dm$$h0" "dm$$h1")
  BED_NET=10.231.$(( $$ % 250 + 1 ))
  BED_DIR=$(mktemp -d /tmp/devmesh-bed.XXXXXX)
  chmod 755 "$BED_DIR"
  trap bed_down EXIT
  trap 'exit 130' INT TERM
  local i
  for i in 0 1; do
    ip netns add "${BED_NS[$i]}"
    ip -n "${BED_NS[$i]}" link set lo up
  done
  # Both ends are made inside the namespaces: no name in the machine's own.
  ip link add dm0 netns "${BED_NS[0]}" type veth peer name dm1 netns "${BED_NS[1]}"
  for i in 0 1; do
    ip -n "${BED_NS[$i]}" addr add "$BED_NET.$((i + 1))/24" dev "dm$i"
    ip -n "${BED_NS[$i]}" link set "dm$i" up
    mkdir -p "/etc/netns/${BED_NS[$i]}"
    {
      echo "127.0.0.1 localhost"
      echo "$BED_NET.1 host0"
      echo "$BED_NET.2 host1"
    } >"/etc/netns/${BED_NS[$i]}/hosts"
  done
  # hydra's launcher runs its proxy in place of the shell; prterun's ssh
  # agent gets a shell command line (variables set, then the daemon), which
  # the shell runs.
  BED_LAUNCHER=$BED_DIR/launch-on-host
  bed_agent "$BED_LAUNCHER" "exec "
  BED_PRTE_AGENT=$BED_DIR/prte-on-host
  bed_agent "$BED_PRTE_AGENT" ""
  # UCX leaves out an interface that is not running yet: wait for both.
  local tries=0
  until [ "$(ip netns exec "${BED_NS[0]}" cat /sys/class/net/dm0/operstate)" = up ] &&
        [ "$(ip netns exec "${BED_NS[1]}" cat /sys/class/net/dm1/operstate)" = up ]; do
    tries=$((tries + 1))
    [ $tries -gt 100 ] && { echo "FAIL: the link did not come up in 10 s" >&2; exit 1; }
    sleep 0.1
  done
  bed_log "bed up: host0 ($BED_NET.1, ${BED_NS[0]}) <-> host1 ($BED_NET.2, ${BED_NS[1]})"
}

bed_on() {
  local host=$1
  shift
  local i ns=""
  for i in 0 1; do [ "${BED_HOSTS[$i]}" = "$host" ] && ns=${BED_NS[$i]}; done
  [ -n "$ns" ] || { echo "bed_on: unknown host $host" >&2; return 1; }
  # "$@" reaches the inner shell as its positional parameters, unsplit.
  ip netns exec "$ns" unshare -u sh -c 'h=$1; shift; hostname "$h"; exec "$@"' sh "$host" "$@"
}

# Kills what still runs in the hosts (all of it started by this run), and
# waits (2 s at most) until it is gone, so that the next job meets none of it.
bed_reap() {
  local ns p tries left
  for tries in $(seq 20); do
    left=0
    for ns in "${BED_NS[@]}"; do
      for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; left=1; done
    done
    [ $left -eq 0 ] && break
    sleep 0.1
  done
  return 0
}

# Bytes sent by host0 over the link so far.
bed_tx_bytes() {
  ip netns exec "${BED_NS[0]}" cat /sys/class/net/dm0/statistics/tx_bytes
}

bed_link() {
  ip -n "${BED_NS[1]}" link set dm1 "$1"
}

# bed_mpiexec ARGS...: hydra on host0; BED_YIELD names the yield shim.
bed_mpiexec() {
  bed_on host0 "$BED_HYDRA" -launcher ssh -launcher-exec "$BED_LAUNCHER" \
    -genv UCX_TLS tcp,self ${BED_YIELD:+-genv LD_PRELOAD "$BED_YIELD"} "$@"
}

# bed_mpirun OUT MPIRUN ARGS...: Open MPI 5's mpirun on host0 across the
# bed (give --host), as root, binding off (the hosts share the machine's 2
# cores), ranks yielding the cores when idle; stdout and stderr in OUT.
# A daemon of Open MPI 5.0.11 can fail to start its PMIx server when many
# jobs start and end on a loaded machine: mpirun then says "A daemon failed
# to report back" with "Daemon exit status: 213" before any rank runs. Such
# a launch is tried again, twice at most, as tests/support/mpiexec does for
# a local launch; any other outcome is the job's.
bed_mpirun() {
  local out=$1 mpirun=$2 attempt rc
  shift 2
  for attempt in 1 2 3; do
    rc=0
    bed_on host0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      "$mpirun" --prtemca plm_ssh_agent "$BED_PRTE_AGENT" --bind-to none \
      -x UCX_TLS=tcp,self -x OMPI_MCA_mpi_yield_when_idle=1 "$@" >"$out" 2>&1 || rc=$?
    if [ "$attempt" -eq 3 ] || ! grep -q 'A daemon failed to report back' "$out" ||
       ! grep -q 'Daemon exit status: 213' "$out"; then
      return "$rc"
    fi
    cp "$out" "$out.launch-$attempt"
    bed_log "mpirun: a daemon did not start (status 213), starting the job again"
  done
}
