#!/usr/bin/env python3
"""The collectiveness summaries agree with the per-function notes.

Every DEVMESH_C_API function of include/devmesh/devmesh.h (and
backend_plugin.h) states its collectiveness on a line of its own comment,
starting "Collective" or "Not collective" (PETSc style). The summary tables
(devmesh.h's top comment, the Fortran module's header comment, mesh.hpp's
and hosts.hpp's) repeat it in rows

    <names>        collective ... | not collective ...
    <names, ...,>
    <names>
                   <description on the next lines>

after a line containing "Collectiveness". Names are C names (`*` a
wildcard; "everything else": the functions no other row names) or, in the
C++ headers, C++ names mapped to their C functions below. Fails when a
function lacks its note, when a row names something unknown, or when a
row's class (collective or not) differs from a function's note.

usage: check_collectiveness.py SOURCE_ROOT
"""
import fnmatch
import os
import re
import sys

ROOT = sys.argv[1]
sys.path.insert(0, os.path.join(ROOT, "lib", "fortran"))
sys.dont_write_bytecode = True  # nothing written into the source tree
import gen_fortran_interface as gen  # noqa: E402

QUERIES = ["devmesh_ndim", "devmesh_size", "devmesh_shape", "devmesh_dim_name", "devmesh_local_rank",
           "devmesh_coordinate", "devmesh_group_ranks", "devmesh_all_groups", "devmesh_root_size",
           "devmesh_parent_rank", "devmesh_comm_count", "devmesh_dim_backend"]
# C++ names of the summaries in mesh.hpp and hosts.hpp -> their C functions
# ([]: no C counterpart, nothing to compare).
CPP = {
    "create": ["devmesh_create", "devmesh_create_ex"],
    "adopt": ["devmesh_create_from_comms"],
    "create_from_group": ["devmesh_create_from_group"],
    "slice": ["devmesh_slice"], "flatten": ["devmesh_flatten", "devmesh_flatten_ex"],
    "unflatten": ["devmesh_unflatten", "devmesh_unflatten_ex"],
    "root": ["devmesh_root"], "every query": QUERIES,
    "comm": ["devmesh_comm"], "communicator": ["devmesh_backend_comm"],
    "all_groups_with_comm": ["devmesh_all_groups_comm"],
    "create_comms": ["devmesh_create_comms"],
    "cart_comm": ["devmesh_cart_comm", "devmesh_cart_comm_periodic"],
    "neighbors": ["devmesh_neighbors"],
    "agree": ["devmesh_agree"], "shrink": ["devmesh_shrink"], "revoke": ["devmesh_revoke"],
    "is_revoked": ["devmesh_is_revoked"], "failed_ranks": ["devmesh_failed_ranks"],
    "root_index": ["devmesh_root_index"], "shrunk_index": ["devmesh_shrunk_index"],
    "repair": ["devmesh_repair", "devmesh_repair_ex"], "release_spares": ["devmesh_release_spares"],
    "standby": ["devmesh_standby"], "join": ["devmesh_join"],
    "discover_hosts": [], "create_host_mesh": ["devmesh_create_hosts"], "create_host_aware": [],
    "record_hosts": [], "host_info": [], "dim_within_hosts": ["devmesh_dim_within_hosts"],
    "discover_levels": [], "dim_within": ["devmesh_dim_within"],
}

failures = []
functions = {}
for h in ("devmesh.h", "backend_plugin.h"):
    for f in gen.parse_functions(os.path.join(ROOT, "include", "devmesh", h)):
        functions[f.name] = f
        if not f.note:
            failures.append(f"{h}: {f.name} has no line starting 'Collective' or 'Not collective' in its comment")


def kind(text):
    t = text.strip().lower()
    if t.startswith("not collective"):
        return "not collective"
    if t.startswith("collective"):
        return "collective"
    return None


def table(path, marker):
    """The rows (names, description) of the summary after "Collectiveness"."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    start = next((i for i, line in enumerate(lines) if "Collectiveness" in line), None)
    if start is None:
        failures.append(f"{path}: no collectiveness summary")
        return []
    rows, started = [], False
    for line in lines[start + 1:]:
        m = re.match(r"\s*" + re.escape(marker) + r"( *)(.*)$", line)
        if not m or not m.group(2):
            if started:
                break
            continue
        indent, text = len(m.group(1)), m.group(2)
        if indent < 2:
            if started:
                break
            continue
        started = True
        if indent <= 4:
            # names, then the description after two spaces (or one, before
            # "collective"/"not collective")
            parts = re.split(r" {2,}| (?=(?:not )?collective\b)", text, maxsplit=1)
            names, desc = parts[0], parts[1] if len(parts) > 1 else ""
            if rows and not rows[-1][1] and rows[-1][0].rstrip().endswith(","):
                rows[-1][0] += " " + names.strip()
                rows[-1][1] = desc.strip()
            else:
                rows.append([names.strip(), desc.strip()])
        elif rows:
            rows[-1][1] = (rows[-1][1] + " " + text.strip()).strip()
    return rows


def check(path, marker, cpp):
    rel = os.path.relpath(path, ROOT)
    rows = table(path, marker)
    named, rest_rows = {}, []
    for names, desc in rows:
        k = kind(desc)
        if k is None:
            failures.append(f"{rel}: the row '{names}' does not start 'collective' or 'not collective'")
            continue
        for name in re.split(r"[,/]", re.sub(r"\(.*?\)", "", names)):
            name = name.strip()
            if not name:
                continue
            if name == "everything else":
                rest_rows.append(k)
            elif cpp:
                if name not in CPP:
                    failures.append(f"{rel}: '{name}' is not mapped to C functions in check_collectiveness.py")
                for fn in CPP.get(name, []):
                    named.setdefault(fn, []).append((name, k, 0))
            else:
                matches = fnmatch.filter(functions, name)
                if not matches:
                    failures.append(f"{rel}: '{name}' names no C function")
                for fn in matches:
                    named.setdefault(fn, []).append((name, k, 1 if "*" in name else 0))
    for fn, f in functions.items():
        if not f.note:
            continue
        want = kind(f.note)
        entries = named.get(fn)
        if entries:
            best = min(e[2] for e in entries)  # exact names before wildcards
            for name, k, wild in entries:
                if wild == best and k != want:
                    failures.append(f"{rel}: '{name}' says {k}, but {fn}'s comment says \"{f.note}\"")
        else:
            for k in rest_rows:
                if k != want:
                    failures.append(f"{rel}: 'everything else' says {k}, but {fn}'s comment says \"{f.note}\"")


check(os.path.join(ROOT, "include", "devmesh", "devmesh.h"), "*", False)
check(os.path.join(ROOT, "lib", "fortran", "devmesh.f90"), "!>", False)
check(os.path.join(ROOT, "include", "devmesh", "mesh.hpp"), "//", True)
check(os.path.join(ROOT, "include", "devmesh", "hosts.hpp"), "//", True)

for f in failures:
    print("FAIL:", f)
print(f"{len(functions)} C functions, {len(failures)} failures")
sys.exit(1 if failures else 0)
