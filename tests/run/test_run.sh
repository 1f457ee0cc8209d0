#!/usr/bin/env bash
# What ./run demo and ./run test do, phase by phase (DEVMESH_RUN_PLAN=1:
# ./run prints its phases and does none of them): the demo installs only a
# compiler, MPI, meson and ninja (no Slurm, clang, valgrind, Boost or
# Fortran), configures a build without tests, builds only its example and
# the launcher's shim, and says each phase; ./run test still installs and
# builds everything.
#
# Usage: test_run.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devmesh-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
plan() { env -u DEVMESH_MPI DEVMESH_RUN_PLAN=1 DEVMESH_BUILD_DIR="$tmp/build" "$src/run" "$@" 2>&1; }
line() { grep "^run: $2" <<<"$1" || fail "no '$2' phase in: $1"; }

demo=$(plan demo)
echo "$demo"
packages=" $(line "$demo" "packages: ") "
for p in g++ mpich libmpich-dev meson ninja-build; do
  grep -q " $p " <<<"$packages" || fail "the demo does not install $p"
done
for p in munge slurmctld slurmd slurm-client valgrind clang-14 libclang-rt-14-dev libboost-test-dev gfortran; do
  ! grep -q " $p " <<<"$packages" || fail "the demo installs $p, which it does not need"
done
configure=$(line "$demo" "configure ")
grep -q -- "-Dtests=false" <<<"$configure" || fail "the demo's build has tests: $configure"
build=$(line "$demo" "build: ")
[ "$build" = "run: build: examples/example_3d tests/support/libdevmesh_test_yield.so" ] ||
  fail "the demo builds more or less than its example and the shim: $build"
line "$demo" "run examples/example_3d on 8 local ranks" >/dev/null
[ ! -e "$tmp/build" ] || fail "the plan made $tmp/build"

all=$(plan test)
echo "$all"
packages=" $(line "$all" "packages: ") "
for p in munge slurmctld slurmd slurm-client valgrind clang-14 libboost-test-dev gfortran libcli11-dev; do
  grep -q " $p " <<<"$packages" || fail "./run test does not install $p"
done
grep -q -- "-Dtests=true" <<<"$(line "$all" "configure ")" || fail "./run test builds no tests"
[ "$(line "$all" "build: ")" = "run: build: all" ] || fail "./run test does not build everything"

# The MPI 5 standard ABI leg: MPICH 5's ABI wrappers, no Fortran module.
abi=$(env DEVMESH_MPI=mpich5abi DEVMESH_RUN_PLAN=1 DEVMESH_BUILD_DIR="$tmp/build" "$src/run" test 2>&1)
echo "$abi"
abi_configure=$(line "$abi" "configure ")
grep -q -- "-Dmpicc=.*/bin/mpicc_abi" <<<"$abi_configure" || fail "the ABI leg does not build with mpicc_abi: $abi_configure"
grep -q -- "-Dmpicxx=.*/bin/mpicxx_abi" <<<"$abi_configure" || fail "the ABI leg does not build with mpicxx_abi"
grep -q -- "-Dfortran=disabled" <<<"$abi_configure" || fail "the ABI leg builds a Fortran module"

# The meson side: a build configured as the demo's has the shim and the
# launcher, but no test.
meson setup "$tmp/demo-build" "$src" -Dtests=false -Dtools=disabled -Dfortran=disabled -Dnccl=disabled >/dev/null
ninja -C "$tmp/demo-build" -t targets all >"$tmp/targets"
grep -q '^examples/example_3d:' "$tmp/targets" || fail "no examples/example_3d target"
grep -q '^tests/support/libdevmesh_test_yield.so:' "$tmp/targets" || fail "no yield shim target"
[ -f "$tmp/demo-build/tests/support/mpirun-local" ] || fail "no launcher"
! grep -qE '^tests/(mpi|capi|unit)/' "$tmp/targets" || fail "the demo's build has test programs"
echo "./run demo and ./run test do what they say"
