#!/usr/bin/env bash
# The installed documentation: after `meson install --destdir`, every C
# function of devmesh.h has its man page under share/man/man3 (plus
# devmesh.3), `man devmesh_create` finds it by name there, every page
# renders without a warning, devmesh_create's says its collectiveness,
# errors and waits, and docs/*.md, README.md and CHANGELOG.md are under
# share/doc/devmesh.
#
# Usage: check_installed_docs.sh BUILD_DIR SOURCE_DIR
# Rendering needs man (man-db) or groff; without either only the files are
# checked.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/devmesh-docs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/stage" >/dev/null
read -r prefix mandir datadir < <(meson introspect "$build" --buildoptions | python3 -c '
import json, sys, os
o = {x["name"]: x["value"] for x in json.load(sys.stdin)}
print(o["prefix"], os.path.join(o["prefix"], o["mandir"]), os.path.join(o["prefix"], o["datadir"]))')
man3=$tmp/stage$mandir/man3
docdir=$tmp/stage$datadir/doc/devmesh

functions=$(sed -n 's/^DEVMESH_C_API[^(]*[ *]\(devmesh_[a-z0-9_]*\)(.*/\1/p' "$src/include/devmesh/devmesh.h")
[ -n "$functions" ] || fail "no DEVMESH_C_API function found in devmesh.h"
n=0
for f in devmesh $functions; do
  [ -s "$man3/$f.3" ] || fail "no man page $man3/$f.3"
  n=$((n + 1))
done
echo "$n man pages installed in $man3"

render() {  # render PAGE: the page as text; its warnings on stderr
  if command -v man >/dev/null; then
    MANWIDTH=80 man --warnings -l "$1"
  else
    groff -man -Tascii -ww "$1"
  fi
}
if command -v man >/dev/null || command -v groff >/dev/null; then
  for f in devmesh $functions; do
    render "$man3/$f.3" >"$tmp/page" 2>"$tmp/warnings" || fail "$f.3 does not render: $(cat "$tmp/warnings")"
    [ ! -s "$tmp/warnings" ] || fail "$f.3 renders with warnings: $(cat "$tmp/warnings")"
  done
  text=$(render "$man3/devmesh_create.3" 2>/dev/null)
  for needle in NAME SYNOPSIS COLLECTIVENESS ERRORS WAITS "Collective over parent" INCONSISTENT \
                "waits without a deadline" "#include <devmesh/devmesh.h>"; do
    grep -qF -- "$needle" <<<"$text" || fail "devmesh_create.3 does not say '$needle'"
  done
  if command -v man >/dev/null; then
    # By name, as a user would with the prefix's man directory on MANPATH.
    MANWIDTH=80 man -M "$tmp/stage$mandir" devmesh_create 2>/dev/null | grep -q "Collective over parent" ||
      fail "man -M ... devmesh_create does not find the page"
  fi
  echo "every page renders; man devmesh_create finds the page"
else
  echo "neither man nor groff: pages not rendered"
fi

for d in $(cd "$src" && ls docs/*.md README.md CHANGELOG.md); do
  [ -s "$docdir/$(basename "$d")" ] || fail "$d is not installed in $docdir"
done
[ -d "$docdir/img" ] || fail "docs/img is not installed"
echo "documents installed in $docdir"
