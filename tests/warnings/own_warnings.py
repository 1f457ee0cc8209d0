#!/usr/bin/env python3
"""Lists the compiler warnings of a build log that come from devmesh's own
files: its sources, and what its build generates (the Fortran interface).
A warning located in any other file (an MPI, Boost or Gloo header, however
it was included) is not counted, so a new system header cannot fail the
check; a warning in one of devmesh's files always does.

Usage: own_warnings.py SOURCE_DIR BUILD_DIR LOG
  LOG: what `ninja -C BUILD_DIR` printed (its paths are relative to
  BUILD_DIR). Prints each own warning with its text; exit status 1 if there
  is any, 0 if none.

Recognised: gcc/g++/clang ("FILE:LINE:COL: warning: ..."), and gfortran,
which prints "FILE:LINE:COL:" and, a few lines later, "Warning: ...".
A warning located in another file counts when gcc says it is about own
code inlined there ("inlined from ... at tests/x.cpp").
"""
import os
import re
import sys

PROGRESS = re.compile(r"^\[\d+/\d+\] ")
INLINED = re.compile(r"^\s*inlined from .* at (?P<file>[^\s:][^:]*):\d+")
LOCATED = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<rest>.*)$")


def own(path, src, build):
    full = os.path.realpath(os.path.join(build, path))
    return any(full == root or full.startswith(root + os.sep) for root in (src, build))


def warnings(log_lines, src, build):
    out = []
    pending = None  # gfortran: the location line before its "Warning:" line
    inlined_own = False  # the context so far inlines code of an own file
    for raw in log_lines:
        line = raw.rstrip("\n")
        if PROGRESS.match(line) or line.startswith("In file included from"):
            inlined_own = False  # a new command's output, or a new diagnostic
            pending = None
            continue
        i = INLINED.match(line)
        if i:
            inlined_own = inlined_own or own(i.group("file"), src, build)
            continue
        m = LOCATED.match(line)
        if m:
            rest = m.group("rest")
            if rest.startswith("warning:"):
                # A warning located in a system header counts when it is
                # about own code inlined there (gcc's flow warnings); one
                # there merely because an own file included the header
                # does not.
                if own(m.group("file"), src, build) or inlined_own:
                    out.append(line)
                pending = None
                inlined_own = False
            elif rest == "":
                pending = m.group("file") + ":" + m.group("line") + ":" + (m.group("col") or "") + ":"
            else:
                pending = None
            continue
        if pending and line.startswith("Warning:"):
            if own(pending.split(":", 1)[0], src, build):
                out.append(pending + " " + line)
            pending = None
        elif pending and line.startswith("Error:"):
            pending = None
    return out


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, build = (os.path.realpath(p) for p in sys.argv[1:3])
    with open(sys.argv[3], errors="replace") as f:
        found = warnings(f, src, build)
    for w in found:
        print(w)
    if found:
        print(f"own_warnings: {len(found)} warning(s) from devmesh's own files", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
