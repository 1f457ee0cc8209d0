#!/usr/bin/env bash
# The uninstalled pkg-config files (BUILD/meson-uninstalled) work for
# in-tree consumers: every include directory they name exists, and the
# Fortran consumer compiles against them without a warning (gfortran warns
# about a missing include directory), with the Fortran wrapper of devmesh's
# MPI: the .pc files name no MPI directory, so the wrapper's modules are the
# ones the program sees (the unsuffixed mpifort may be another MPI's).
#
# Usage: check_uninstalled_pc.sh BUILD_DIR SOURCE_DIR FORTRAN_BUILT(true|false) [MPIFORT]
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
fortran=$3
mpifort=${4:-mpifort}
fail() { echo "FAIL: $*" >&2; exit 1; }
export PKG_CONFIG_PATH=$build/meson-uninstalled
packages=(devmesh)
[ "$fortran" = true ] && packages+=(devmesh-fortran)
for p in "${packages[@]}"; do
  [ -f "$build/meson-uninstalled/$p-uninstalled.pc" ] || fail "$p-uninstalled.pc is missing"
  cflags=$(pkg-config --cflags "$p")
  echo "$p: $cflags"
  for flag in $cflags; do
    case "$flag" in -I*) [ -d "${flag#-I}" ] || fail "$p-uninstalled.pc names ${flag#-I}, which does not exist" ;; esac
  done
done
if [ "$fortran" = true ]; then
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/devmesh-uninstalled.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # shellcheck disable=SC2046
  (cd "$tmp" && "$mpifort" -fsyntax-only "$src/tests/install/consumer/app.f90" $(pkg-config --cflags devmesh-fortran)) \
    2>"$tmp/stderr" || { cat "$tmp/stderr"; fail "the Fortran consumer does not compile"; }
  [ ! -s "$tmp/stderr" ] || { cat "$tmp/stderr"; fail "gfortran warns with devmesh-fortran-uninstalled.pc"; }
fi
echo "uninstalled pkg-config files OK"
