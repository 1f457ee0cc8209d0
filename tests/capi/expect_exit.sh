#!/usr/bin/env bash
# expect_exit.sh CODE TEXT COMMAND...: passes when COMMAND exits with CODE
# and prints TEXT.
want=$1 text=$2; shift 2
out=$("$@" 2>&1); rc=$?
echo "$out"
[ "$rc" -eq "$want" ] || { echo "expected exit $want, got $rc"; exit 1; }
grep -q -- "$text" <<<"$out" || { echo "expected output containing '$text'"; exit 1; }
