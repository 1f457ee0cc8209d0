#!/usr/bin/env bash
# README's "Building by hand" is complete and light: it names every option
# of meson_options.txt, shows --prefix and a library-only build
# (-Dtests=false -Dexamples=false); that meson setup line, run as written
# (its build directory and $HOME in a scratch directory), configures a
# build without test or example targets whose configure summary lists what
# will be built and what each part needs at run time.
#
# Usage: check_building_by_hand.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devmesh-by-hand.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

section=$(cd "$src" && sed -n '/^## Building by hand/,/^## /p' README.md)
[ -n "$section" ] || fail "README.md has no section 'Building by hand'"
for opt in $(sed -n "s/^option('\([a-z_]*\)'.*/\1/p" "$src/meson_options.txt"); do
  grep -q -- "-D$opt=" <<<"$section" || fail "README's Building by hand does not name option -D$opt"
done
setup=$(grep -m1 '^meson setup .*-Dtests=false -Dexamples=false' <<<"$section") ||
  fail "README's Building by hand shows no library-only 'meson setup ... -Dtests=false -Dexamples=false'"
grep -q -- '--prefix' <<<"$setup" || fail "the library-only line does not show --prefix: $setup"
echo "README: every option, --prefix, a library-only build: $setup"

# As written, from a scratch directory standing in for the source tree's
# parent: "meson setup build" -> "meson setup <tmp>/build <src>".
read -r -a words <<<"$setup"
[ "${words[0]} ${words[1]} ${words[2]}" = "meson setup build" ] || fail "unexpected setup line: $setup"
args=()
for w in "${words[@]:3}"; do args+=("$(HOME=$tmp eval "printf '%s' $w")"); done
(cd "$tmp" && HOME=$tmp meson setup "$tmp/build" "$src" "${args[@]}") >"$tmp/setup.log" 2>&1 ||
  { tail -n 30 "$tmp/setup.log"; fail "the README's library-only meson setup failed"; }
summary=$(sed -n '/What is built/,/^ *$/p' "$tmp/setup.log")
[ -n "$summary" ] || { cat "$tmp/setup.log"; fail "the configure summary has no 'What is built' section"; }
echo "$summary"
for part in library "C API" "Fortran module" devmesh-plan "NCCL backend plugin" "Gloo backend plugin" \
            "man pages" tests examples; do
  grep -q "^ *$part.*:" <<<"$summary" || fail "the summary does not say whether '$part' is built"
done
grep -q "^ *library.*run time: " <<<"$summary" || fail "the summary does not say what the library needs at run time"
grep -q "^ *tests *: no" <<<"$summary" || fail "the library-only build builds tests"
grep -q "^ *examples *: no" <<<"$summary" || fail "the library-only build builds examples"
ninja -C "$tmp/build" -t targets all >"$tmp/targets"
! grep -qE '^(tests|examples|bench)/' "$tmp/targets" || fail "the library-only build has test, example or benchmark targets"
grep -q '^lib/libdevmesh.so' "$tmp/targets" || fail "the library-only build has no libdevmesh"
grep -q "$tmp/.local" "$tmp/build/meson-info/intro-buildoptions.json" || fail "--prefix was not taken"
echo "the README's library-only build configures as it says"
