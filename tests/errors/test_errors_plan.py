#!/usr/bin/env python3
"""The bad-input matrix through devmesh-plan (docs/ERRORS.md): the cases that
tests/plan/test_plan.py does not check already. Each case: exit status 2,
one line on stderr naming the offending value, stdout empty (text mode) or
exactly {"error": <status name>, "message": ...} (--json), and the same
status in both modes.

usage: test_errors_plan.py DEVMESH_PLAN
"""
import json
import subprocess
import sys

TOOL = sys.argv[1]
failures = []
checks = 0

IA, SM, UD, DN, OV = "invalid_argument", "shape_mismatch", "unknown_dim", "duplicate_name", "overlap"
BASE = ["--shape", "2,2,2", "--names", "dp,cp,tp"]
LONG = "q" * 257       # one byte past devmesh::max_name_length
LONGEST = "n" * 256    # exactly max_name_length


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def expect_error(status, needle, *args):
    """The case fails with `status` in JSON and text mode, naming `needle`."""
    what = " ".join(a if len(a) < 40 else a[:12] + "..." for a in args)
    p = run(*args, "--json")
    check(p.returncode == 2, f"{what} --json: exit {p.returncode}")
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        check(False, f"{what} --json: stdout is not JSON: {p.stdout!r}")
        out = {}
    check(list(out) == ["error", "message"], f"{what} --json: keys {list(out)}")
    check(out.get("error") == status, f"{what} --json: status {out.get('error')}, expected {status}")
    check(needle in out.get("message", ""), f"{what} --json: message {out.get('message')!r} lacks {needle!r}")
    t = run(*args)
    check(t.returncode == 2, f"{what}: exit {t.returncode}")
    check(t.stdout == "", f"{what}: stdout not empty: {t.stdout!r}")
    lines = t.stderr.splitlines()
    check(len(lines) == 1 and needle in lines[0], f"{what}: stderr {t.stderr!r} is not one line naming {needle!r}")


def expect_ok(*args):
    p = run(*args, "--json")
    check(p.returncode == 0, f"{args}: exit {p.returncode}, stderr {p.stderr!r}")
    return json.loads(p.stdout) if p.returncode == 0 else None


def test_names():
    # Over-long names, wherever a name is given; 256 bytes are fine.
    expect_error(IA, "longer than 256 bytes", "--shape", "2,2", "--names", f"a,{LONG}")
    expect_error(IA, "longer than 256 bytes", *BASE, "--flatten", LONG)
    expect_error(IA, "longer than 256 bytes", *BASE, "--unflatten", f"dp:2,1:x,{LONG}")
    out = expect_ok("--shape", "2", "--names", LONGEST, "--slice", LONGEST, "--flatten", LONGEST)
    check(out and out["dims"][0]["name"] == LONGEST, "a 256-byte name works everywhere")
    # Empty names: in a slice no dim has that name; as a new name it is invalid.
    expect_error(UD, "unknown dim ''", *BASE, "--slice", "")
    expect_error(UD, "unknown dim ''", *BASE, "--slice", "dp,")
    expect_error(UD, "unknown dim ''", *BASE, "--unflatten", ":2:x")
    expect_error(IA, "unflatten name is empty", *BASE, "--unflatten", "dp:2,1:x,")


def test_shapes_and_ranks():
    expect_error(SM, "overflows", "--shape", "65536,65536,65536,65536", "--names", "a,b,c,d")
    expect_error(SM, "does not divide 3", "--shape", "0,2", "--names", "a,b", "--ranks", "0,1,2")
    expect_error(IA, "rank -1", "--shape", "2,2", "--names", "a,b", "--ranks=-1,0,1,2")
    expect_error(IA, "world size -1", "--shape", "2", "--names", "a", "--world=-1")


def test_unflatten():
    expect_error(IA, "unflatten size 0", *BASE, "--unflatten", "dp:0,2:x,y")
    expect_error(IA, "unflatten size -2", *BASE, "--unflatten", "dp:-1,-2:x,y")
    expect_error(SM, "more than one size -1", *BASE, "--unflatten", "dp:-1,-1:x,y")
    expect_error(IA, "2 sizes but 1 names", *BASE, "--unflatten", "dp:2,1:x")
    expect_error(IA, "1 sizes but 2 names", *BASE, "--unflatten", "dp:2:x,y")
    expect_error(SM, "overflow", *BASE, "--unflatten", "dp:65536,65536,65536,65536:w,x,y,z")
    expect_error(DN, "'x' is given twice", *BASE, "--unflatten", "dp:2,1:x,x")
    # A root dim outside the view, and a registered flattened name.
    expect_error(DN, "'tp' is a dim of the root mesh", *BASE, "--slice", "dp", "--unflatten", "dp:2,1:x,tp")
    expect_error(DN, "'reg' is a registered flattened name", *BASE, "--slice", "cp,tp", "--flatten", "reg",
                 "--root", "--unflatten", "dp:2:reg")


def test_flatten_and_slice():
    # The default name clashes like any other: dp_cp registered from (dp, cp), then asked of (cp, tp).
    expect_error(DN, "'dp_cp' is already registered", *BASE, "--slice", "dp,cp", "--flatten", "-", "--root",
                 "--slice", "tp", "--flatten", "dp_cp")
    # Registered names slice from a root view only.
    expect_error(UD, "unknown dim 'dp_tp'", *BASE, "--slice", "dp,tp", "--flatten", "-", "--root", "--slice", "cp",
                 "--slice", "dp_tp")
    expect_error(OV, "cover the same ranks", *BASE, "--slice", "cp,tp", "--flatten", "-", "--root",
                 "--slice", "tp,cp_tp")


if __name__ == "__main__":
    for test in (test_names, test_shapes_and_ranks, test_unflatten, test_flatten_and_slice):
        before = len(failures)
        test()
        print(f"{test.__name__}: {'ok' if len(failures) == before else 'FAILED'}")
    print(f"{checks} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)
