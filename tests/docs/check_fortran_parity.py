#!/usr/bin/env python3
"""Every C function of include/devmesh/devmesh.h has its Fortran form.

A function added to the C API must be reachable from Fortran too: for each
DEVMESH_C_API function of devmesh.h, lib/fortran/devmesh.f90 must make a
procedure of the same name public, or the function must be one of the C
helpers that exist only for the Fortran module (HELPERS below), which the
module must then actually bind. Every C name the module binds must exist in
the header, so that a renamed or removed C function cannot leave a stale
binding behind. Fails naming each function that breaks this.

usage: check_fortran_parity.py SOURCE_ROOT
"""
import os
import re
import sys

ROOT = sys.argv[1]

# C functions that take or return a Fortran MPI handle (MPI_Fint) for the
# module's integer/type(MPI_Comm) procedures; they have no Fortran name of
# their own. Each maps to the public Fortran generic that calls it.
HELPERS = {
    "devmesh_create_f": "devmesh_create",
    "devmesh_create_ex_f": "devmesh_create_ex",  # also devmesh_create_from_ranks
    "devmesh_create_hosts_f": "devmesh_create_hosts",
    "devmesh_comm_f": "devmesh_comm",
    "devmesh_cart_comm_f": "devmesh_cart_comm",
    "devmesh_cart_comm_periodic_f": "devmesh_cart_comm_periodic",
    "devmesh_all_groups_comm_f": "devmesh_all_groups_comm",
    "devmesh_create_from_comms_f": "devmesh_create_from_comms",
    "devmesh_create_from_group_f": "devmesh_create_from_group",
}

with open(os.path.join(ROOT, "include", "devmesh", "devmesh.h"), encoding="utf-8") as f:
    header = re.sub(r"/\*.*?\*/", " ", f.read(), flags=re.S)
c_functions = re.findall(r"DEVMESH_C_API\s+(?:const\s+)?\w+\s*\*?\s*(devmesh_\w+)\s*\(", header)
if not c_functions:
    sys.exit("no DEVMESH_C_API function found in include/devmesh/devmesh.h")

with open(os.path.join(ROOT, "lib", "fortran", "devmesh.f90"), encoding="utf-8") as f:
    lines = [line.split("!", 1)[0] for line in f.read().splitlines()]
# Join continuation lines, then take the names of the bare `public ::`
# statements (not `integer, parameter, public ::` constants).
source = re.sub(r"&\s*\n\s*&?", " ", "\n".join(lines))
public = set()
for stmt in re.findall(r"^\s*public\s*::\s*(.+)$", source, flags=re.M | re.I):
    public.update(name.strip().lower() for name in stmt.split(","))
bound = set(re.findall(r"bind\s*\(\s*C\s*,\s*name\s*=\s*'(\w+)'\s*\)", source, flags=re.I))

failures = []
for name in c_functions:
    if name in HELPERS:
        if name not in bound:
            failures.append(f"{name} is listed as a Fortran helper but lib/fortran/devmesh.f90 does not bind it")
        if HELPERS[name] not in public:
            failures.append(f"{name}: its Fortran procedure {HELPERS[name]} is not public in lib/fortran/devmesh.f90")
    elif name not in public:
        failures.append(f"{name} (include/devmesh/devmesh.h) has no public Fortran procedure "
                        f"of that name in lib/fortran/devmesh.f90")
for name in sorted(HELPERS):
    if name not in c_functions:
        failures.append(f"HELPERS names {name}, which include/devmesh/devmesh.h does not declare")
for name in sorted(bound):
    if name.startswith("devmesh_") and name not in c_functions:
        failures.append(f"lib/fortran/devmesh.f90 binds {name}, which include/devmesh/devmesh.h does not declare")

for f in failures:
    print("FAIL:", f)
print(f"{len(c_functions)} C functions, {len(HELPERS)} Fortran helpers, {len(failures)} failures")
sys.exit(1 if failures else 0)
