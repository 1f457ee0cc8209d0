#!/usr/bin/env python3
"""own_warnings.py on a made-up build log: which warnings are devmesh's."""
import os
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "own_warnings.py")

LOG = """\
[1/9] Compiling C++ object lib/a.p/a.cpp.o
In file included from ../lib/a.cpp:3:
/usr/include/mpich/mpi.h:10:5: warning: a system header's own warning [-Wpedantic]
[2/9] Compiling C++ object examples/p.p/p.cpp.o
../examples/p.cpp:120:111: warning: missing initializer for member 'Stage::acts' [-Wmissing-field-initializers]
[3/9] Compiling C++ object tests/unit/v.p/v.cpp.o
In file included from ../include/devmesh/view.hpp:16,
                 from ../tests/unit/v.cpp:15:
In function 'constexpr bool std::operator==(const optional<_Tp>&, const optional<_Up>&)',
    inlined from 'void t::test_method()' at ../tests/unit/v.cpp:218:11:
/usr/include/c++/12/optional:1226:25: warning: 'want' may be used uninitialized [-Wmaybe-uninitialized]
../tests/unit/v.cpp:216:40: note: 'want' declared here
[4/9] Compiling C++ object x.p/x.cpp.o
In function 'f',
    inlined from 'g' at /usr/include/boost/x.hpp:3:1:
/usr/include/c++/12/bits/y.h:9:9: warning: a library's inlined warning [-Wstringop-overflow=]
[5/9] Compiling Fortran object examples/e.p/e.f90.o
../examples/fortran/e.f90:38:2:

   38 |   integer function verify(m, dim) result(total)
      |  1
Warning: 'verify' declared at (1) may shadow the intrinsic of the same name [-Wintrinsic-shadow]
[6/9] Compiling Fortran object lib/fortran/g.p/g.f90.o
lib/fortran/devmesh_c_interface.f90:12:3:

Warning: Unused dummy argument 'x' at (1) [-Wunused-dummy-argument]
/usr/lib/mod/mpi.f90:1:1:

Warning: not ours [-Wsurprising]
[7/9] Linking target x
/usr/bin/ld: warning: libfoo.so.1, needed by x, may conflict with libfoo.so.2
[8/9] Compiling C object c.p/c.c.o
../examples/c/c.c:5:1: error: an error is not a warning
"""

WANT = [
    "../examples/p.cpp:120:111",
    "/usr/include/c++/12/optional:1226:25",
    "../examples/fortran/e.f90:38:2",
    "lib/fortran/devmesh_c_interface.f90:12:3",
]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        build = os.path.join(src, "build")
        os.makedirs(build)
        log = os.path.join(tmp, "log")
        with open(log, "w") as f:
            f.write(LOG)
        p = subprocess.run([sys.executable, script, src, build, log], capture_output=True, text=True)
        got = [line.split(": ", 1)[0].rstrip(":") for line in p.stdout.splitlines()]
        want = [w.rstrip(":") for w in WANT]
        if p.returncode != 1 or got != want:
            print(f"exit {p.returncode}, found:\n{p.stdout}{p.stderr}\nwanted locations {want}, got {got}")
            return 1
        with open(log, "w") as f:
            f.write("[1/1] Compiling C++ object lib/a.p/a.cpp.o\n")
        p = subprocess.run([sys.executable, script, src, build, log], capture_output=True, text=True)
        if p.returncode != 0 or p.stdout:
            print(f"a clean log: exit {p.returncode}: {p.stdout}{p.stderr}")
            return 1
    print("own_warnings.py: the 4 own warnings of the made-up log, none of the others")
    return 0


if __name__ == "__main__":
    sys.exit(main())
