#!/usr/bin/env bash
# bed_mpirun's restart of a launch whose daemon failed to start (bed.sh),
# with a stand-in mpirun on this host (bed_on runs the command here): a
# launch is started again only when mpirun printed both "A daemon failed to
# report back" and "Daemon exit status: 213", at most three launches in all;
# any other outcome, a failure included, is the job's.
set -uo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=bed.sh
. "$here/bed.sh"
bed_on() { shift; "$@"; }
BED_PRTE_AGENT=agent
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# A stand-in mpirun: its first FAILS launches print MESSAGE and exit 1 (or
# STATUS), later ones run "the job" (print its arguments, exit 0).
cat >"$dir/mpirun" <<'FAKE'
#!/usr/bin/env bash
n=$(( $(cat "$COUNT" 2>/dev/null || echo 0) + 1 ))
echo "$n" >"$COUNT"
if [ "$n" -le "$FAILS" ]; then printf '%b\n' "$MESSAGE"; exit "${STATUS:-1}"; fi
echo "job ran: $*"
FAKE
chmod +x "$dir/mpirun"
daemon213='A daemon failed to report back after being spawned.\n  Daemon exit status: 213'

# case NAME FAILS MESSAGE STATUS -> sets rc, launches, out
case_run() {
  local name=$1
  export COUNT="$dir/$name.count" FAILS=$2 MESSAGE=$3 STATUS=$4
  out="$dir/$name.out"
  rc=0
  bed_mpirun "$out" "$dir/mpirun" -n 8 prog >/dev/null || rc=$?
  launches=$(cat "$COUNT")
}

case_run once 1 "$daemon213" 1
[ "$rc" -eq 0 ] && [ "$launches" -eq 2 ] || fail "daemon 213 once: rc $rc after $launches launches (expected 0 after 2)"
grep -q '^job ran: .*-n 8 prog$' "$out" || fail "daemon 213 once: the job's output is not the second launch's: $(cat "$out")"
grep -q 'Daemon exit status: 213' "$out.launch-1" || fail "daemon 213 once: the first launch's output was not kept"

case_run always 9 "$daemon213" 1
[ "$rc" -eq 1 ] && [ "$launches" -eq 3 ] || fail "daemon 213 always: rc $rc after $launches launches (expected 1 after 3)"
grep -q 'Daemon exit status: 213' "$out" || fail "daemon 213 always: the last launch's message is not the output"
[ -e "$out.launch-2" ] && [ ! -e "$out.launch-3" ] || fail "daemon 213 always: kept launches $(ls "$dir" | grep -c 'always.out.launch')"

case_run other-status 1 'A daemon failed to report back after being spawned.\n  Daemon exit status: 1' 1
[ "$rc" -eq 1 ] && [ "$launches" -eq 1 ] || fail "another daemon status: rc $rc after $launches launches (expected 1 after 1)"

case_run job-fails 1 'the job failed' 3
[ "$rc" -eq 3 ] && [ "$launches" -eq 1 ] || fail "a failing job: rc $rc after $launches launches (expected 3 after 1)"

case_run clean 0 '' 0
[ "$rc" -eq 0 ] && [ "$launches" -eq 1 ] && [ ! -e "$out.launch-1" ] ||
  fail "a clean launch: rc $rc after $launches launches (expected 0 after 1)"

[ "$failures" -eq 0 ] || exit 1
echo "bed_mpirun: 5 cases as expected"
