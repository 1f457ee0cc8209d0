#!/usr/bin/env python3
"""docs/ERRORS.md's "Waits" table covers every collective call of the C API.

A collective call waits for the other ranks of its group; whether that wait
is bounded is stated once, in the "Waits: which are bounded" section of
docs/ERRORS.md, which the headers point at. Every function of
include/devmesh/devmesh.h and devmesh_nccl.h whose documentation says
"Collective over ..." (or that shares such a comment) must be named there,
so that a collective call added later cannot go undocumented.

usage: check_waits.py SOURCE_ROOT
"""
import os
import re
import sys

ROOT = sys.argv[1]
HEADING = "## Waits: which are bounded"
failures = []

with open(os.path.join(ROOT, "docs", "ERRORS.md"), encoding="utf-8") as f:
    errors = f.read()
if HEADING not in errors:
    sys.exit(f"docs/ERRORS.md has no section '{HEADING}'")
section = errors.split(HEADING, 1)[1].split("\n## ", 1)[0]
named = set(re.findall(r"`(devmesh_[a-z0-9_]+)`", section))

collective = []
for header in ("include/devmesh/devmesh.h", "backends/nccl/devmesh_nccl.h"):
    with open(os.path.join(ROOT, header), encoding="utf-8") as f:
        text = f.read()
    # Each declaration with the comment right before it (declarations that
    # follow one comment share it).
    comment = ""
    for chunk in re.split(r"(/\*.*?\*/)", text, flags=re.S):
        if chunk.startswith("/*"):
            comment = chunk
            continue
        for name in re.findall(r"DEVMESH_C_API\s+\w+\s*\*?\s*(devmesh_\w+)\s*\(", chunk):
            if re.search(r"(?<!Not )[Cc]ollective over", comment):
                collective.append((header, name))

print("collective:", ", ".join(name for _, name in collective))
for header, name in collective:
    if name not in named:
        failures.append(f"{header}: {name} is collective but not in docs/ERRORS.md '{HEADING}'")
# The headers' pointers at the section name it as it is.
for header in ("include/devmesh/devmesh.h", "backends/nccl/devmesh_nccl.h", "include/devmesh/mesh.hpp",
               "include/devmesh/backend.hpp"):
    with open(os.path.join(ROOT, header), encoding="utf-8") as f:
        text = " ".join(f.read().replace("//", " ").replace("*", " ").split())
    for ref in re.findall(r'"(Waits[^"]*)"', text):
        if not HEADING.endswith(ref) and not HEADING[3:].startswith(ref):
            failures.append(f"{header} points at section \"{ref}\", which docs/ERRORS.md does not have")

for f in failures:
    print("FAIL:", f)
print(f"{len(collective)} collective functions, {len(failures)} failures")
sys.exit(1 if failures else 0)
