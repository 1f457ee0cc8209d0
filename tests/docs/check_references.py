#!/usr/bin/env python3
"""Every document the sources and docs point at exists in the repository.

Scans the project's text files (sources, headers, build files, scripts,
docs) for names ending in .md and checks that each names a file of the
repository: as a path from the repository root or from the citing file's
directory, or, for a bare name, a file in the root or in docs/. Reports
written by the project's scripts (not kept in the repository) are listed
in GENERATED.

usage: check_references.py SOURCE_ROOT
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1])
# tests/gpu/run-gpu-checks.sh writes GPU-RESULTS.md; bench/traffic/model.py
# writes traffic.md into the data folder of the report (docs/bench/data).
GENERATED = {"GPU-RESULTS.md", "traffic.md"}
TEXT = (".c", ".h", ".cpp", ".hpp", ".f90", ".py", ".sh", ".md", ".build", ".txt", ".in", ".cmake", ".supp")
SCRIPTS = {"run", "run-all", "mpirun-local.in"}
REFERENCE = re.compile(r"[A-Za-z0-9_./-]*[A-Za-z0-9_]\.md\b")

missing = []
count = 0
for top, dirs, files in os.walk(ROOT):
    rel_top = os.path.relpath(top, ROOT)
    # Build directories, VCS data, downloaded packages: not the project's text.
    dirs[:] = [d for d in dirs if not d.startswith((".", "build")) and d != "subprojects"]
    for name in files:
        if not (name.endswith(TEXT) or name in SCRIPTS):
            continue
        path = os.path.join(top, name)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for ref in REFERENCE.findall(line):
                if os.path.basename(ref) in GENERATED:
                    continue
                count += 1
                candidates = [os.path.join(ROOT, ref), os.path.join(top, ref)]
                if "/" not in ref:
                    candidates.append(os.path.join(ROOT, "docs", ref))
                if not any(os.path.isfile(c) for c in candidates):
                    missing.append(f"{os.path.join(rel_top, name)}:{lineno}: {ref} does not exist")

for m in missing:
    print(m)
print(f"{count} references to documents, {len(missing)} to documents that do not exist")
sys.exit(1 if missing else 0)
