#!/usr/bin/env bash
# rank_dies.sh MPIRUN_LOCAL PROGRAM: a rank dying during mesh creation or
# during a collective must end the job with a non-zero status within 30 s.
set -u
launcher=$1 prog=$2
for phase in create collective; do
  start=$(date +%s)
  timeout 30 bash "$launcher" 4 "$prog" "$phase" >/dev/null 2>&1
  rc=$?
  took=$(( $(date +%s) - start ))
  if [ $rc -eq 124 ]; then echo "FAIL: job hung ($phase)"; exit 1; fi
  if [ $rc -eq 0 ]; then echo "FAIL: job succeeded although a rank died ($phase)"; exit 1; fi
  echo "$phase: job ended with status $rc after ${took}s"
done
