#!/usr/bin/env bash
# Each public C++ header, compiled as C++17, gives exactly one error, the
# #error of include/devmesh/export.hpp that names C++20, instead of errors
# from deep inside the headers; the same program compiles as C++20.
#
# Usage: expect_cxx17_refused.sh CXX SOURCE_DIR  (CXX: an MPI C++ wrapper, e.g. mpicxx)
set -euo pipefail
cxx=$1
inc=$(cd "$2" && pwd)/include
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devmesh-cxx17.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
for header in "$inc"/devmesh/*.hpp; do
  name=devmesh/$(basename "$header")
  printf '#include <%s>\nint main() { return 0; }\n' "$name" >"$tmp/app.cpp"
  if "$cxx" -std=c++17 -I"$inc" -fsyntax-only "$tmp/app.cpp" >"$tmp/log" 2>&1; then
    fail "$name compiles as C++17"
  fi
  errors=$(grep -E '(error|fatal error):' "$tmp/log" || true)
  first=$(head -n 1 <<<"$errors")
  grep -q 'needs C++20' <<<"$first" || { cat "$tmp/log"; fail "$name: the first error does not name C++20: $first"; }
  # Exactly one error, export.hpp's #error: no second one (a fatal stop, a
  # missing header) and none from the headers' bodies.
  count=$(grep -c . <<<"$errors" || true)
  if [ "$count" -ne 1 ] || ! grep -q 'devmesh/export.hpp:.*error: ' <<<"$errors"; then
    cat "$tmp/log"
    fail "$name: $count errors as C++17, not export.hpp's one #error"
  fi
  "$cxx" -std=c++20 -I"$inc" -fsyntax-only "$tmp/app.cpp" || fail "$name does not compile as C++20"
  echo "$name: refused as C++17 with: ${first#*error: }"
done
