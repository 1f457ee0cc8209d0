#!/usr/bin/env bash
# Zero warnings from devmesh's own files at warning_level=3 (C, C++,
# Fortran, the generated Fortran interface included): configures DIR afresh
# with the options given, builds everything, and fails if the log has a
# warning located in (or inlined from) a file of this repository or of its
# build (tests/warnings/own_warnings.py). Warnings of system headers (MPI,
# Boost, Gloo) do not count, so a new distribution's headers cannot fail it.
#
# Usage: check-fresh-build.sh DIR [meson options...]   (./run test runs it)
#        check-fresh-build.sh --log LOG DIR: checks LOG, the output of a
#        fresh build of everything in DIR made already (./run test's first
#        build in a directory it configured), instead of building again.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "$1" = --log ]; then
  python3 tests/warnings/own_warnings.py . "$3" "$2"
  echo "warnings: none from devmesh's own files (the fresh build of $3)" >&2
  exit 0
fi
dir=$1
shift
rm -rf "$dir"
log=$(mktemp "${TMPDIR:-/tmp}/devmesh-warnings.XXXXXX")
trap 'rm -f "$log"' EXIT
echo "warnings: a fresh build in $dir (meson setup $*)" >&2
meson setup "$dir" "$@" >/dev/null
ninja -C "$dir" >"$log" 2>&1 || { tail -n 40 "$log" >&2; echo "warnings: the build failed" >&2; exit 1; }
python3 tests/warnings/own_warnings.py . "$dir" "$log"
echo "warnings: none from devmesh's own files" >&2
rm -rf "$dir"
