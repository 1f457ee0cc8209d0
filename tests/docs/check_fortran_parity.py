#!/usr/bin/env python3
"""Every C function of include/devmesh/devmesh.h has its Fortran form.

Runs lib/fortran/gen_fortran_interface.py into a temporary directory and
reads what it generates (the module devmesh_c_interface, the public names
and wrappers it adds to the module devmesh) together with the hand-written
lib/fortran/devmesh.f90 and the parts it includes. For each DEVMESH_C_API
function of devmesh.h the module devmesh must make a procedure of the same
name public and, where the function takes or returns an MPI handle
(MPI_Comm, MPI_Group), the generated interface must bind its MPI_Fint twin
<name>_f from lib/fortran/devmesh_fortran.h, else the function itself.
Every twin must have its C function, and every bound C name must exist.
Fails naming each function that breaks this.

usage: check_fortran_parity.py SOURCE_ROOT
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = sys.argv[1]
FORTRAN = os.path.join(ROOT, "lib", "fortran")
sys.path.insert(0, FORTRAN)
sys.dont_write_bytecode = True  # nothing written into the source tree
import gen_fortran_interface as gen  # noqa: E402

headers = [os.path.join(ROOT, "include", "devmesh", "devmesh.h"),
           os.path.join(ROOT, "include", "devmesh", "backend_plugin.h"),
           os.path.join(FORTRAN, "devmesh_fortran.h")]
hand_written = os.path.join(FORTRAN, "devmesh.f90")
c_functions = [f.name for f in gen.parse_functions(headers[0])]
all_functions = {f.name: f for h in headers for f in gen.parse_functions(h)}
twins = [f.name for f in gen.parse_functions(headers[2])]
if not c_functions:
    sys.exit("no DEVMESH_C_API function found in include/devmesh/devmesh.h")


def fortran_statements(path, text=None):
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    lines = [line.split("!", 1)[0] for line in text.splitlines()]
    return re.sub(r"&\s*\n\s*&?", " ", "\n".join(lines))


with tempfile.TemporaryDirectory() as out:
    subprocess.run([sys.executable, os.path.join(FORTRAN, "gen_fortran_interface.py"), out, hand_written]
                   + headers, check=True)
    source = "\n".join(fortran_statements(os.path.join(out, name))
                       for name in ("devmesh_c_interface.f90", "devmesh_public.inc", "devmesh_wrappers.inc"))
source += "\n" + fortran_statements(hand_written, gen.hand_written_text(hand_written))

# The names of the bare `public ::` statements (not `integer, parameter,
# public ::` constants) and the C names bound.
public = set()
for stmt in re.findall(r"^\s*public\s*::\s*(.+)$", source, flags=re.M | re.I):
    public.update(name.strip().lower() for name in stmt.split(","))
bound = set(re.findall(r"bind\s*\(\s*C\s*,\s*name\s*=\s*'(\w+)'\s*\)", source, flags=re.I))

failures = []
for name in c_functions:
    fn = all_functions[name]
    handles = any(p.base in gen.MPI_HANDLES for p in fn.params)
    via = name + "_f" if handles else name
    if handles and via not in twins:
        failures.append(f"{name} takes an MPI handle but lib/fortran/devmesh_fortran.h has no {via}")
    elif via not in bound:
        failures.append(f"{name}: the generated interface does not bind {via}")
    if name not in public:
        failures.append(f"{name} (include/devmesh/devmesh.h) has no public Fortran procedure of that name")
for name in twins:
    if name[:-2] not in c_functions:
        failures.append(f"lib/fortran/devmesh_fortran.h declares {name}, but devmesh.h has no {name[:-2]}")
for name in sorted(bound):
    if name.startswith("devmesh_") and name not in all_functions:
        failures.append(f"the Fortran module binds {name}, which no header declares")

for f in failures:
    print("FAIL:", f)
print(f"{len(c_functions)} C functions, {len(twins)} MPI_Fint twins, {len(failures)} failures")
sys.exit(1 if failures else 0)
