#!/usr/bin/env bash
# The installed package works for its consumers.
#
# Installs the build into a staging directory (meson install --destdir, so
# any --prefix works and nothing outside the staging directory is touched),
# then, using only the staged files:
#   * checks the layout: every public header, the libraries, the Fortran
#     module, pkg-config files, the CMake package; the shared library
#     exports the whole C API and nothing outside devmesh's names;
#   * builds a C program with `mpicc $(pkg-config --cflags --libs devmesh)`,
#     a C++ one with mpicxx and $(pkg-config --variable=cxxflags devmesh),
#     and a Fortran one with `mpifort $(pkg-config ... devmesh-fortran)`,
#     the wrappers named by the .pc files (the MPI devmesh was built with);
#     they run without LD_LIBRARY_PATH (devmesh.pc's rpath), unless the
#     prefix is /usr (no rpath there: the loader's own directories);
#   * builds C, C++ (and Fortran) programs with CMake's find_package(devmesh),
#     no MPI named (the package must lead FindMPI to devmesh's MPI), and
#     installs them with CMAKE_INSTALL_RPATH_USE_LINK_PATH as the README
#     says: the installed programs run without LD_LIBRARY_PATH too;
#   * checks that every program loads the same MPI library as libdevmesh,
#     runs each on 4 ranks and checks what they print;
#   * with another MPI's wrappers (mpicc.openmpi for a build with MPICH, and
#     so on) and the same pkg-config line, the C and C++ programs do not
#     build: one #error names both MPIs (devmesh/mpi_check.h); nor does the
#     Fortran one (use mpi_f08: gfortran's mismatch of the mpi_f08 types).
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
  env ${2:+LD_LIBRARY_PATH="$2"} ldd "$1" | awk '$1 ~ /^libmpi(ch|_abi)?\.so/ {print $3; exit}' | xargs -r readlink -f
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
for h in "$src"/include/devmesh/*.h "$src"/include/devmesh/*.hpp mpi_family.h; do
  [ -f "$sinc/devmesh/$(basename "$h")" ] || fail "public header $(basename "$h") is not installed"
done
for f in meson.build mpi_family.h.in; do
  [ ! -e "$sinc/devmesh/$f" ] || fail "include/devmesh/$f is installed with the headers"
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
# This minor version (as X.Y and X.Y.Z), a major above, the next and the
# previous minor.
IFS=. read -r vmaj vmin _ <<<"$version"
same="$vmaj.$vmin" next="$vmaj.$((vmin + 1))" prev="$vmaj.$((vmin > 0 ? vmin - 1 : 0))"
cat > "$tmp/version.cmake" <<CMAKE
foreach(want $same $version $((vmaj + 1)).0 $next $prev)
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
[ "$compat" = "$same TRUE $version TRUE $((vmaj + 1)).0 FALSE $next FALSE $prev FALSE " ] ||
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
# A build for the MPI 5 standard ABI links libmpi_abi and no
# implementation's own libmpi.
if [ "$(pc --variable=mpi devmesh)" = abi ]; then
  needed=$(readelf -d "$slib/libdevmesh.so" | awk '/NEEDED/ {print $5}' | tr -d '[]')
  grep -qx 'libmpi_abi.so.1' <<<"$needed" || fail "the ABI build's libdevmesh.so does not link libmpi_abi.so.1: $needed"
  ! grep -qE '^libmpi(ch)?\.so' <<<"$needed" || fail "the ABI build's libdevmesh.so links an implementation's libmpi: $needed"
  echo "libdevmesh.so links libmpi_abi.so.1 and no implementation's libmpi"
fi
mpicc=$(pc --variable=mpicc devmesh)
mpicxx=$(pc --variable=mpicxx devmesh)
echo "devmesh.pc: mpi=$(pc --variable=mpi devmesh), mpicc=$mpicc; libdevmesh loads $devmesh_mpi"
[ -x "$mpicc" ] || fail "devmesh.pc names no usable mpicc ('$mpicc')"

# Programs linked through devmesh.pc find the library by its rpath, except
# with prefix /usr, where the loader looks anyway (once really installed).
pc_libpath=
if [ "$prefix" = /usr ]; then
  pc_libpath=$slib
else
  grep -q -- "-Wl,-rpath,$slib" <<<"$(pc --libs devmesh)" || fail "devmesh.pc's Libs carry no rpath to $slib: $(pc --libs devmesh)"
fi
run_pc() {
  if [ -n "$pc_libpath" ]; then LD_LIBRARY_PATH=$pc_libpath "$@"; else "$@"; fi
}

step "C with mpicc and pkg-config: $(pc --cflags --libs devmesh)"
# shellcheck disable=SC2046
"$mpicc" -o app_c_pc "$src/tests/install/consumer/app.c" $(pc --cflags --libs devmesh)
uses_staged ./app_c_pc "$pc_libpath"
same_mpi ./app_c_pc "$pc_libpath"
out=$(run_pc mpirun4 ./app_c_pc)
echo "$out"
grep -q "c consumer: devmesh $version, tp group of rank 0 has 2 ranks: ok" <<<"$out" || fail "C program output"

step "C++ with mpicxx and pkg-config: $(pc --variable=cxxflags devmesh) $(pc --cflags --libs devmesh)"
# shellcheck disable=SC2046
"$mpicxx" -o app_cpp_pc "$src/tests/install/consumer/app.cpp" $(pc --variable=cxxflags devmesh) \
  $(pc --cflags --libs devmesh)
uses_staged ./app_cpp_pc "$pc_libpath"
out=$(run_pc mpirun4 ./app_cpp_pc)
echo "$out"
grep -q "c++ consumer: dp_tp over 4 ranks: ok" <<<"$out" || fail "C++ program output"

if [ "$fortran" = true ]; then
  step "Fortran with mpifort and pkg-config: $(pc --cflags --libs devmesh-fortran)"
  mpifort=$(pc --variable=mpifort devmesh-fortran)
  [ -x "$mpifort" ] || fail "devmesh-fortran.pc names no usable mpifort ('$mpifort')"
  # shellcheck disable=SC2046
  "$mpifort" -o app_f_pc "$src/tests/install/consumer/app.f90" $(pc --cflags --libs devmesh-fortran)
  uses_staged ./app_f_pc "$pc_libpath"
  same_mpi ./app_f_pc "$pc_libpath"
  out=$(run_pc mpirun4 ./app_f_pc)
  echo "$out"
  grep -q "fortran consumer: tp group of rank 0 has 2 ranks: ok" <<<"$out" || fail "Fortran program output"
fi

step "another MPI's wrappers with devmesh.pc: refused at compile time"
# devmesh.pc hands out no MPI include directory: a wrapper puts its own -I
# after the program's, so one there would give another MPI's wrapper
# devmesh's mpi.h, and the program would link both MPIs.
for flag in $(pc --cflags devmesh) $(if [ "$fortran" = true ]; then pc --cflags devmesh-fortran; fi); do
  case "$flag" in -I*) [ ! -e "${flag#-I}/mpi.h" ] || fail "pkg-config --cflags names ${flag#-I}, which holds an mpi.h" ;; esac
done
# The wrappers of every other MPI at hand: the Debian MPIs of the other
# family, and beside a wheel's wrapper the same wheel's other interface
# (mpicc_abi beside MPICH 5's mpicc, and the reverse).
family=$(pc --variable=mpi devmesh)
case $family in
  mpich) built="devmesh was built with MPICH" others=(/usr/bin/mpicc.openmpi "$(dirname "$mpicc")/mpicc_abi") ;;
  openmpi) built="devmesh was built with Open MPI" others=(/usr/bin/mpicc.mpich) ;;
  abi) built="devmesh was built for the MPI standard ABI"
    others=(/usr/bin/mpicc.mpich /usr/bin/mpicc.openmpi "$(dirname "$mpicc")/mpicc") ;;
  *) fail "devmesh.pc names MPI '$family'" ;;
esac
# refused WRAPPER SOURCE FLAGS...: no program, and exactly one error, the
# #error of mpi_check.h naming devmesh's MPI and the one of the wrapper.
refused() {
  local wrapper=$1 source=$2 errors
  shift 2
  rm -f wrong_mpi_app
  if "$wrapper" -o wrong_mpi_app "$source" "$@" >wrong_mpi.log 2>&1; then
    fail "$wrapper $(basename "$source") with devmesh.pc builds (devmesh: $family)"
  fi
  [ ! -e wrong_mpi_app ] || fail "$wrapper left a program behind"
  errors=$(grep -E '(error|fatal error):' wrong_mpi.log || true)
  if [ "$(grep -c . <<<"$errors")" != 1 ] || ! grep -q 'devmesh/mpi_check.h:.*#error' <<<"$errors"; then
    cat wrong_mpi.log
    fail "$wrapper: not mpi_check.h's one #error"
  fi
  grep -qF "$built" <<<"$errors" || fail "$wrapper: the error does not name devmesh's MPI: $errors"
  grep -qE "$other_re" <<<"$errors" || fail "$wrapper: the error does not name the wrapper's MPI: $errors"
  echo "$wrapper $(basename "$source"): ${errors#*error: }"
}
tried=0
for other in "${others[@]}"; do
  [ -x "$other" ] && [ "$(readlink -f "$other")" != "$(readlink -f "$mpicc")" ] || continue
  case "$other" in
    *.openmpi) other_re="Open MPI's" ;;
    *.mpich) other_re="MPICH's" ;;
    *_abi) other_re="standard ABI" ;;
    *) other_re="MPICH's|Open MPI's" ;;
  esac
  # shellcheck disable=SC2046
  refused "$other" "$src/tests/install/consumer/app.c" $(pc --cflags --libs devmesh)
  other_cxx=$(dirname "$other")/$(basename "$other" | sed 's/^mpicc/mpicxx/')
  if [ -x "$other_cxx" ]; then
    # shellcheck disable=SC2046
    refused "$other_cxx" "$src/tests/install/consumer/app.cpp" $(pc --variable=cxxflags devmesh) \
      $(pc --cflags --libs devmesh)
  fi
  # Fortran (use mpi_f08): gfortran itself refuses the other MPI's mpi_f08
  # types beside those devmesh.mod holds.
  other_fort=$(dirname "$other")/$(basename "$other" | sed 's/^mpicc/mpifort/')
  if [ "$fortran" = true ] && [ -x "$other_fort" ]; then
    rm -f wrong_mpi_app
    # shellcheck disable=SC2046
    if "$other_fort" -o wrong_mpi_app "$src/tests/install/consumer/app.f90" \
        $(pc --cflags --libs devmesh-fortran) >wrong_mpi.log 2>&1; then
      fail "$other_fort app.f90 with devmesh-fortran.pc builds (devmesh: $family)"
    fi
    grep -q "Mismatch in components of derived type" wrong_mpi.log || { cat wrong_mpi.log; fail "$other_fort: another error"; }
    echo "$other_fort app.f90: $(grep -m1 'Error:' wrong_mpi.log)"
  fi
  tried=$((tried + 1))
done
[ "$tried" -gt 0 ] || echo "no other MPI's wrapper here: the refusal is not exercised"

step "the core library links no CUDA or NCCL"
if ldd "$slib/libdevmesh.so" | grep -Ei "cuda|nccl"; then fail "libdevmesh.so links CUDA or NCCL"; fi
if [ -f "$build/backends/nccl/libdevmesh-backend-nccl.so" ]; then
  [ -f "$slib/devmesh/libdevmesh-backend-nccl.so" ] || fail "the NCCL plugin is not installed in <libdir>/devmesh"
  # ldd first, then grep: a grep -q that ends the pipe early can kill ldd
  # with SIGPIPE, which pipefail reports as a failure.
  nccl_deps=$(ldd "$slib/devmesh/libdevmesh-backend-nccl.so")
  grep -q "libnccl" <<<"$nccl_deps" || fail "the NCCL plugin does not link NCCL"
  [ -f "$sinc/devmesh/devmesh_nccl.h" ] || fail "devmesh_nccl.h is not installed with the NCCL plugin"
fi

step "a backend plugin built against the installed headers (tests/install/backend)"
# shellcheck disable=SC2046
"$mpicc" -shared -fPIC -std=c11 -o libdevmesh-backend-example.so "$src/tests/install/backend/devmesh_backend_example.c" \
  $(pc --cflags devmesh)
# shellcheck disable=SC2046
"$mpicxx" -std=c++20 -o app_backend "$src/tests/install/backend/app_backend.cpp" $(pc --cflags --libs devmesh)
out=$(DEVMESH_BACKEND_PATH=$PWD LD_LIBRARY_PATH=$slib mpirun4 ./app_backend)
echo "$out"
[ "$(grep -c "tp on example: ok" <<<"$out")" = 4 ] || fail "the example backend plugin"
# Without DEVMESH_BACKEND_PATH the name is unknown, and creation says where it looked.
if out=$(LD_LIBRARY_PATH=$slib bash "$launcher" -n 1 ./app_backend 2>&1); then fail "found a plugin that is not there"; fi
grep -q "unknown backend 'example'" <<<"$out" || { echo "$out"; fail "the message for a missing plugin"; }

step "the plugin author's kit: share/doc/devmesh/examples/plugin, built with its own Makefile"
kit=$tmp/stage$prefix/share/doc/devmesh/examples/plugin
[ -f "$kit/Makefile" ] && [ -f "$kit/devmesh-backend-example.c" ] || fail "the example plugin is not installed in $kit"
plugindir=$(pc --variable=plugindir devmesh)
[ "$plugindir" = "$staged/${libdir#"$prefix"/}/devmesh" ] || fail "plugindir is '$plugindir'"
# As version 4 (as built by default, with its v3 and v2 tables; the core
# takes its newest table) and as version 2 alone, each checked against
# MPI's own results at 8 ranks by the collective suite's program (every
# operation x type x reduction it claims).
for abi in 4 2; do
  mkdir -p "kit$abi"
  cp "$kit/Makefile" "$kit/devmesh-backend-example.c" "kit$abi/"
  extra=$([ "$abi" = 2 ] && echo -DEXAMPLE_V2_ONLY || true)
  make -s -C "kit$abi" EXTRA_CFLAGS="$extra -Werror" >/dev/null || fail "the kit's Makefile (v$abi)"
  kit_symbols=$(nm -D --defined-only "kit$abi/libdevmesh-backend-example.so" | awk '{print $3}' | grep devmesh_backend_ | sort | tr '\n' ' ')
  kit_want=$([ "$abi" = 4 ] && echo "devmesh_backend_v2 devmesh_backend_v3 devmesh_backend_v4 " || echo "devmesh_backend_v2 ")
  [ "$kit_symbols" = "$kit_want" ] || fail "the kit's v$abi plugin exports '$kit_symbols'"
  DEVMESH_BACKEND_PATH=$PWD/kit$abi bash "$launcher" -n 8 "$build/tests/collectives/test_collectives" \
    --color_output=no -- example timeout=120 || fail "the kit's plugin (v$abi) at 8 ranks"
done

if command -v cmake >/dev/null; then
  step "CMake find_package(devmesh)"
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  with_fortran=OFF
  [ "$fortran" = true ] && with_fortran=ON
  cmake -S "$src/tests/install/consumer" -B cmake-build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$staged" -DWITH_FORTRAN=$with_fortran \
    -DCMAKE_INSTALL_PREFIX="$tmp/consumer" -DCMAKE_INSTALL_RPATH_USE_LINK_PATH=ON \
    >cmake.log 2>&1 || { cat cmake.log; fail "cmake configure"; }
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
  # Installed, the build tree's RPATH is gone: what the README says to set
  # (CMAKE_INSTALL_RPATH_USE_LINK_PATH) keeps the one to libdevmesh.
  cmake --install cmake-build >>cmake.log 2>&1 || { cat cmake.log; fail "cmake install"; }
  uses_staged "$tmp/consumer/bin/app_cpp"
  out=$(mpirun4 "$tmp/consumer/bin/app_cpp")
  echo "$out"
  grep -q "c++ consumer: dp_tp over 4 ranks: ok" <<<"$out" || fail "installed CMake C++ program"
else
  echo "cmake not found: CMake package not exercised"
fi
echo "installed package OK"
