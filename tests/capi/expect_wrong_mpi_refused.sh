#!/usr/bin/env bash
# A program compiled against another MPI's mpi.h than the one devmesh was
# built with stops at compile time with exactly one error, the #error of
# include/devmesh/mpi_check.h naming both MPIs; with devmesh's own MPI the
# same program compiles. C (devmesh.h) and C++ (mesh.hpp, hosts.hpp), with
# the other Debian MPI's headers, and in C with stand-in mpi.h files for
# the MPI standard ABI and for an MPI of neither family. Then the same
# without devmesh/mpi_family.h, where only the link-time check of
# mpi_check.h is left: the programs compile, and their link against the
# build's libdevmesh stops with one undefined reference naming their MPI.
#
# Usage: expect_wrong_mpi_refused.sh FAMILY MPICC MPICXX CC CXX SOURCE_DIR BUILD_DIR
#   FAMILY  the build's MPI, mpich, openmpi or abi (devmesh/mpi_family.h)
#   MPICC, MPICXX  its wrappers (the positive case); CC, CXX plain compilers
# Exit 77 (skipped) when the other MPI's headers are not installed.
set -euo pipefail
family=$1 mpicc=$2 mpicxx=$3 cc=$4 cxx=$5
inc=(-I"$(cd "$6" && pwd)/include" -I"$(cd "$7" && pwd)/include")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devmesh-wrong-mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

case $family in
  mpich) own="MPICH" own_pc=mpich built="devmesh was built with MPICH" other="Open MPI" other_pc=ompi-c other_said="Open MPI's mpi.h" ;;
  openmpi) own="Open MPI" own_pc=ompi-c built="devmesh was built with Open MPI" other="MPICH" other_pc=mpich other_said="MPICH's mpi.h" ;;
  abi) own="the MPI standard ABI" own_pc= built="devmesh was built for the MPI standard ABI" ;;
  *) fail "unknown family $family" ;;
esac

# expect_unlinked WHAT FAMILY COMPILER ARGS...: compiles, and the link
# stops with exactly one undefined reference, to devmesh_built_for_FAMILY__
# (mpi_check.h's symbol for the mpi.h included), which libdevmesh lacks.
expect_unlinked() {
  local what=$1 family=$2
  shift 2
  if "$@" -o "$tmp/linked" -L"$lib" -ldevmesh -Wl,--allow-shlib-undefined >"$tmp/log" 2>&1; then
    fail "$what links"
  fi
  local undefined count
  undefined=$(grep -o 'undefined reference to .*' "$tmp/log" || true)
  count=$(grep -c . <<<"$undefined" || true)
  if [ "$count" -ne 1 ] || ! grep -qF "devmesh_built_for_${family}__" <<<"$undefined"; then
    cat "$tmp/log"
    fail "$what: $count undefined references, not the one to devmesh_built_for_${family}__..."
  fi
  echo "$what: refused at link time with: $undefined"
}

# expect_refused WHAT NEEDLE COMPILER ARGS...: exactly one error, the #error
# of mpi_check.h, naming devmesh's MPI and NEEDLE (the MPI included).
expect_refused() {
  local what=$1 needle=$2
  shift 2
  if "$@" -fsyntax-only >"$tmp/log" 2>&1; then
    fail "$what compiles"
  fi
  local errors count
  errors=$(grep -E '(error|fatal error):' "$tmp/log" || true)
  count=$(grep -c . <<<"$errors" || true)
  if [ "$count" -ne 1 ] || ! grep -q 'devmesh/mpi_check.h:.*#error' <<<"$errors"; then
    cat "$tmp/log"
    fail "$what: $count errors, not mpi_check.h's one #error"
  fi
  grep -qF "$built" <<<"$errors" || fail "$what: the error does not name $own: $errors"
  grep -qF "$needle" <<<"$errors" || fail "$what: the error does not name $needle: $errors"
  echo "$what: refused with: ${errors#*error: }"
}

printf '#include <devmesh/devmesh.h>\nint main(void) { devmesh_t m = NULL; return devmesh_destroy(&m); }\n' >"$tmp/app.c"
printf '#include <devmesh/mesh.hpp>\n#include <devmesh/hosts.hpp>\nint main() { devmesh::Mesh m; return 0; }\n' >"$tmp/app.cpp"

# devmesh's own MPI: no error.
lib=$(cd "$7" && pwd)/lib
"$mpicc" "${inc[@]}" -fsyntax-only "$tmp/app.c" || fail "devmesh.h does not compile with $mpicc"
"$mpicxx" -std=c++20 "${inc[@]}" -fsyntax-only "$tmp/app.cpp" || fail "mesh.hpp does not compile with $mpicxx"
echo "$own ($mpicc, $mpicxx): compiles"

# Stand-ins for mpi.h: the MPI 5 standard ABI's (MPI_ABI_VERSION), and an
# MPI of neither family; each declares what devmesh.h uses.
stand_in() {
  mkdir -p "$tmp/$1"
  { printf '%s\n' "$2"
    printf 'typedef struct mpi_comm_t *MPI_Comm;\ntypedef struct mpi_group_t *MPI_Group;\n'
    printf 'typedef struct mpi_info_t *MPI_Info;\n'; } >"$tmp/$1/mpi.h"
}
stand_in abi '#define MPI_ABI_VERSION 1'
stand_in unknown '#define MPI_VERSION 4'
# The link-time check, alone: devmesh's public headers without
# devmesh/mpi_family.h (so no #error), an mpi.h of each other family, and
# the build's libdevmesh. The program compiles and does not link; with
# devmesh's own MPI it links.
mkdir -p "$tmp/headers/devmesh"
cp "$6"/include/devmesh/*.h "$6"/include/devmesh/*.hpp "$tmp/headers/devmesh/"
bare=(-I"$tmp/headers")
"$mpicc" "${bare[@]}" "$tmp/app.c" -o "$tmp/linked" -L"$lib" -ldevmesh || fail "devmesh.h does not link with $mpicc"
"$mpicc" "${inc[@]}" "$tmp/app.c" -o "$tmp/linked" -L"$lib" -ldevmesh || fail "devmesh.h does not link with $mpicc"
echo "$own ($mpicc): links"
if [ "$family" = abi ]; then
  "$cc" -I"$tmp/abi" "${bare[@]}" "$tmp/app.c" -o "$tmp/linked" -L"$lib" -ldevmesh -Wl,--allow-shlib-undefined ||
    fail "devmesh.h with another mpi.h for the standard ABI does not link"
else
  expect_unlinked "devmesh.h with an mpi.h for the standard ABI" the_MPI_standard_ABI \
    "$cc" -I"$tmp/abi" "${bare[@]}" "$tmp/app.c"
fi
expect_unlinked "devmesh.h with an mpi.h of neither family" an_MPI_neither_MPICH_nor_Open_MPI \
  "$cc" -I"$tmp/unknown" "${bare[@]}" "$tmp/app.c"
for pc in mpich ompi-c; do
  [ "$pc" != "$own_pc" ] || continue
  flags=$(pkg-config --cflags "$pc" 2>/dev/null) || continue
  read -r -a flags <<<"$flags"
  name=$([ "$pc" = mpich ] && echo MPICH || echo "Open MPI")
  expect_unlinked "devmesh.h with $name's mpi.h (no mpi_family.h)" "${name/ /_}" \
    "$cc" "${flags[@]}" "${bare[@]}" "$tmp/app.c"
  expect_unlinked "mesh.hpp and hosts.hpp with $name's mpi.h (no mpi_family.h)" "${name/ /_}" \
    "$cxx" -std=c++20 -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX "${flags[@]}" "${bare[@]}" "$tmp/app.cpp"
done

if [ "$family" = abi ]; then
  # A build for the standard ABI takes any mpi.h for it, and refuses an
  # implementation's own (the Debian MPIs', where installed).
  "$cc" -I"$tmp/abi" "${inc[@]}" -fsyntax-only "$tmp/app.c" || fail "devmesh.h does not compile with another standard-ABI mpi.h"
  echo "another mpi.h for the standard ABI: compiles"
  expect_refused "devmesh.h with an mpi.h of neither family" "not for the standard ABI" \
    "$cc" -I"$tmp/unknown" "${inc[@]}" "$tmp/app.c"
  for pc in mpich ompi-c; do
    flags=$(pkg-config --cflags "$pc" 2>/dev/null) || continue
    read -r -a flags <<<"$flags"
    said=$([ "$pc" = mpich ] && echo "MPICH's own mpi.h" || echo "Open MPI's own mpi.h")
    expect_refused "devmesh.h with $said" "$said" "$cc" "${flags[@]}" "${inc[@]}" "$tmp/app.c"
  done
  exit 0
fi
expect_refused "devmesh.h with an mpi.h for the standard ABI" "standard ABI" \
  "$cc" -I"$tmp/abi" "${inc[@]}" "$tmp/app.c"
expect_refused "devmesh.h with an mpi.h of neither family" "another MPI" \
  "$cc" -I"$tmp/unknown" "${inc[@]}" "$tmp/app.c"

# The other Debian MPI's headers.
if ! other_flags=$(pkg-config --cflags "$other_pc" 2>/dev/null); then
  echo "SKIP: $other is not installed (pkg-config $other_pc), its headers cannot be tried"
  exit 77
fi
read -r -a other_flags <<<"$other_flags"
expect_refused "devmesh.h with $other's mpi.h" "$other_said" "$cc" "${other_flags[@]}" "${inc[@]}" "$tmp/app.c"
expect_refused "mesh.hpp and hosts.hpp with $other's mpi.h" "$other_said" \
  "$cxx" -std=c++20 "${other_flags[@]}" "${inc[@]}" "$tmp/app.cpp"
