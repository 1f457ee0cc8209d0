#!/usr/bin/env bash
# The installed package works for its consumers.
#
# Installs the build into a staging directory (meson install --destdir, so
# any --prefix works and nothing outside the staging directory is touched),
# then, using only the staged files:
#   * checks the layout: every public header, the libraries, the Fortran
#     module, pkg-config files, the CMake package; the shared library
#     exports the whole C API and nothing outside devmesh's names;
#   * builds a C program with `mpicc $(pkg-config --cflags --libs devmesh)`
#     and a Fortran one with `mpifort $(pkg-config ... devmesh-fortran)`,
#     the wrappers named by the .pc files (the MPI devmesh was built with);
#   * builds C, C++ (and Fortran) programs with CMake's find_package(devmesh),
#     no MPI named: the package must lead FindMPI to devmesh's MPI;
#   * checks that every program loads the same MPI library as libdevmesh,
#     runs each on 4 ranks and checks what they print.
# The pkg-config files are relocated by rewriting their prefix= line (they
# use ${prefix}); the CMake package finds its prefix by itself.
#
# Usage: test_install.sh BUILD_DIR SOURCE_DIR FORTRAN_BUILT(true|false) LAUNCHER
# (LAUNCHER: the tests' mpiexec, tests/support/mpiexec.in)
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
fortran=$3
launcher=$4

tmp=$(mktemp -d "${TMPDIR:-/tmp}/devmesh-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

# Only the staged files may be used: drop the build tree's library path
# (meson test sets it); the launcher adds what its MPI needs to the runs.
unset LD_LIBRARY_PATH LD_PRELOAD
mpirun4() { bash "$launcher" -n 4 "$@"; }
# The MPI library a program loads (resolved path).
mpi_lib() {
  env ${2:+LD_LIBRARY_PATH="$2"} ldd "$1" | awk '$1 ~ /^libmpi(ch)?\.so/ {print $3; exit}' | xargs -r readlink -f
}
same_mpi() {
  local got
  got=$(mpi_lib "$1" "${2:-}")
  [ "$got" = "$devmesh_mpi" ] || fail "$1 loads MPI '$got', libdevmesh loads '$devmesh_mpi'"
}
# Checks that a program resolves libdevmesh from the staging directory.
uses_staged() {
  local lib
  lib=$(env ${2:+LD_LIBRARY_PATH="$2"} ldd "$1" | awk '/libdevmesh\.so/ {print $3}')
  case "$lib" in "$slib"/*) ;; *) fail "$1 uses '$lib', not the staged library in $slib" ;; esac
}

step "meson install --destdir"
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/stage" >/dev/null
read -r prefix libdir includedir version < <(
  { meson introspect "$build" --buildoptions; echo; meson introspect "$build" --projectinfo; } |
  python3 -c '
import json, sys, os
opts, info = [json.loads(l) for l in sys.stdin.read().split("\n") if l.strip()][:2]
o = {x["name"]: x["value"] for x in opts}
p = o["prefix"]
print(p, os.path.join(p, o["libdir"]), os.path.join(p, o["includedir"]), info["version"])')
staged=$tmp/stage$prefix
slib=$tmp/stage$libdir
sinc=$tmp/stage$includedir
echo "prefix $prefix staged at $staged"

step "layout"
for h in "$src"/include/devmesh/*; do
  [ -f "$sinc/devmesh/$(basename "$h")" ] || fail "public header $(basename "$h") is not installed"
done
for f in "$slib/libdevmesh.so" "$slib/pkgconfig/devmesh.pc" "$slib/cmake/devmesh/devmeshConfig.cmake" \
         "$slib/cmake/devmesh/devmeshConfigVersion.cmake"; do
  [ -e "$f" ] || fail "$f is not installed"
done
if [ "$fortran" = true ]; then
  for f in "$slib/libdevmesh_fortran.so" "$slib/pkgconfig/devmesh-fortran.pc" "$sinc/devmesh/fortran/devmesh.mod"; do
    [ -e "$f" ] || fail "$f is not installed"
  done
fi
exported=$(nm -D --defined-only "$slib/libdevmesh.so" | awk '$2 == "T" {print $3}')
for fn in $(grep -oE '\bdevmesh_[a-z0-9_]+\(' "$src/include/devmesh/devmesh.h" | tr -d '(' | sort -u); do
  grep -qx "$fn" <<<"$exported" || fail "libdevmesh.so does not export $fn"
done
stray=$(grep -vE '^(devmesh_|_ZN7devmesh|_ZNK7devmesh|_init$|_fini$)' <<<"$exported" || true)
[ -z "$stray" ] || fail "libdevmesh.so exports functions outside the API: $stray"
grep -q '^libdir=${prefix}/' "$slib/pkgconfig/devmesh.pc" || [[ "$libdir" != "$prefix"/* ]] ||
  fail "devmesh.pc does not derive libdir from \${prefix}"

step "CMake package version"
cat > "$tmp/version.cmake" <<CMAKE
foreach(want 0.1 0.1.0 1.0 0.2 0.0)
  string(REPLACE "." ";" parts "\${want}")
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
  set(PACKAGE_FIND_VERSION "\${want}")
  include("$slib/cmake/devmesh/devmeshConfigVersion.cmake")
  message("\${want} \${PACKAGE_VERSION_COMPATIBLE}")
endforeach()
CMAKE
# While the major version is 0, minor versions are incompatible with each other.
compat=$(cmake -P "$tmp/version.cmake" 2>&1 | tr '\n' ' ')
[ "$compat" = "0.1 TRUE 0.1.0 TRUE 1.0 FALSE 0.2 FALSE 0.0 FALSE " ] ||
  [ "${version%%.*}" != 0 ] || fail "devmeshConfigVersion.cmake answers: $compat"

# devmesh's own .pc files, relocated to the staging directory (only their
# prefix: the MPI's .pc files they require stay where they are).
mkdir -p "$tmp/pkgconfig"
for f in "$slib"/pkgconfig/devmesh*.pc; do
  sed "s|^prefix=.*|prefix=$staged|" "$f" > "$tmp/pkgconfig/$(basename "$f")"
done
export PKG_CONFIG_PATH=$tmp/pkgconfig
pc() { pkg-config "$@"; }
cd "$tmp"
devmesh_mpi=$(mpi_lib "$slib/libdevmesh.so")
[ -n "$devmesh_mpi" ] || fail "libdevmesh.so loads no MPI library"
mpicc=$(pc --variable=mpicc devmesh)
echo "devmesh.pc: mpi=$(pc --variable=mpi devmesh), mpicc=$mpicc; libdevmesh loads $devmesh_mpi"
[ -x "$mpicc" ] || fail "devmesh.pc names no usable mpicc ('$mpicc')"

step "C with mpicc and pkg-config: $(pc --cflags --libs devmesh)"
# shellcheck disable=SC2046
"$mpicc" -o app_c_pc "$src/tests/install/consumer/app.c" $(pc --cflags --libs devmesh)
uses_staged ./app_c_pc "$slib"
same_mpi ./app_c_pc "$slib"
out=$(LD_LIBRARY_PATH=$slib mpirun4 ./app_c_pc)
echo "$out"
grep -q "c consumer: devmesh $version, tp group of rank 0 has 2 ranks: ok" <<<"$out" || fail "C program output"

if [ "$fortran" = true ]; then
  step "Fortran with mpifort and pkg-config: $(pc --cflags --libs devmesh-fortran)"
  mpifort=$(pc --variable=mpifort devmesh-fortran)
  [ -x "$mpifort" ] || fail "devmesh-fortran.pc names no usable mpifort ('$mpifort')"
  # shellcheck disable=SC2046
  "$mpifort" -o app_f_pc "$src/tests/install/consumer/app.f90" $(pc --cflags --libs devmesh-fortran)
  same_mpi ./app_f_pc "$slib"
  out=$(LD_LIBRARY_PATH=$slib mpirun4 ./app_f_pc)
  echo "$out"
  grep -q "fortran consumer: tp group of rank 0 has 2 ranks: ok" <<<"$out" || fail "Fortran program output"
fi

if command -v cmake >/dev/null; then
  step "CMake find_package(devmesh)"
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  with_fortran=OFF
  [ "$fortran" = true ] && with_fortran=ON
  cmake -S "$src/tests/install/consumer" -B cmake-build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$staged" -DWITH_FORTRAN=$with_fortran >cmake.log 2>&1 || { cat cmake.log; fail "cmake configure"; }
  grep "devmesh $version" cmake.log
  cmake --build cmake-build >>cmake.log 2>&1 || { cat cmake.log; fail "cmake build"; }
  # Run through the build tree's RPATH, which points into the staging directory.
  uses_staged cmake-build/app_c
  for app in app_c app_cpp $([ "$fortran" = true ] && echo app_f); do same_mpi "cmake-build/$app"; done
  out=$(mpirun4 cmake-build/app_c)
  echo "$out"
  grep -q "c consumer: devmesh $version, tp group of rank 0 has 2 ranks: ok" <<<"$out" || fail "CMake C program"
  out=$(mpirun4 cmake-build/app_cpp)
  echo "$out"
  grep -q "c++ consumer: dp_tp over 4 ranks: ok" <<<"$out" || fail "CMake C++ program"
  if [ "$fortran" = true ]; then
    out=$(mpirun4 cmake-build/app_f)
    echo "$out"
    grep -q "fortran consumer: tp group of rank 0 has 2 ranks: ok" <<<"$out" || fail "CMake Fortran program"
  fi
else
  echo "cmake not found: CMake package not exercised"
fi
echo "installed package OK"
