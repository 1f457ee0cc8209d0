#!/usr/bin/env python3
"""devmesh-plan end to end: exit codes, JSON shape, every error status, --rank,
the text picture, and agreement with the reference vectors.

usage: test_plan.py DEVMESH_PLAN VECTORS_JSON
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import time

TOOL, VECTORS = sys.argv[1], sys.argv[2]
ERROR_STATUSES = {"invalid_argument", "shape_mismatch", "unknown_dim", "duplicate_name", "overlap"}
failures = []
checks = 0


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def check(cond, what):
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def ok_json(*args):
    """Runs the tool with --json, expects success, returns the parsed output."""
    p = run(*args, "--json")
    check(p.returncode == 0, f"{args}: exit {p.returncode}, stderr {p.stderr!r}")
    check(p.stderr == "", f"{args}: unexpected stderr {p.stderr!r}")
    return json.loads(p.stdout) if p.returncode == 0 else None


def groups_of(out):
    return {d["name"]: d["groups"] for d in out["dims"]} if out else {}


def test_json_shape():
    out = ok_json("--shape", "2,2,2", "--names", "dp,cp,tp")
    check(list(out) == ["world", "dims"], f"top-level keys {list(out)}")
    check(out["world"] == 8, "world 8")
    for d in out["dims"]:
        check(list(d) == ["name", "size", "layout", "groups"], f"dim keys {list(d)}")
    check([d["layout"] for d in out["dims"]] == ["2:4", "2:2", "2:1"], "root layouts")
    one = ok_json("--shape", "2,2,2", "--names", "dp,cp,tp", "--rank", "6")
    check(list(one) == ["rank", "coordinate", "dims"], f"--rank keys {list(one)}")
    for d in one["dims"]:
        check(list(d) == ["name", "size", "local_rank", "group"], f"--rank dim keys {list(d)}")


def test_worked_examples():
    # SEMANTICS.md section 4, groups copied from the text.
    g = groups_of(ok_json("--shape", "2,4", "--names", "dp,tp"))
    check(g == {"tp": [[0, 1, 2, 3], [4, 5, 6, 7]], "dp": [[0, 4], [1, 5], [2, 6], [3, 7]]}, "(2,4) dp,tp")
    g = groups_of(ok_json("--shape", "2,2,2", "--names", "replicate,shard,tp"))
    check(g == {"tp": [[0, 1], [2, 3], [4, 5], [6, 7]], "shard": [[0, 2], [1, 3], [4, 6], [5, 7]],
                "replicate": [[0, 4], [1, 5], [2, 6], [3, 7]]}, "(2,2,2) replicate,shard,tp")
    base = ["--shape", "2,2,2", "--names", "dp,cp,tp"]
    g = groups_of(ok_json(*base, "--slice", "dp,cp", "--flatten", "-"))
    check(g == {"dp_cp": [[0, 2, 4, 6], [1, 3, 5, 7]]}, "flatten(dp,cp)")
    g = groups_of(ok_json(*base, "--slice", "dp,tp", "--flatten", "-"))
    check(g == {"dp_tp": [[0, 1, 4, 5], [2, 3, 6, 7]]}, "flatten(dp,tp)")
    out = ok_json(*base, "--slice", "tp,dp")
    check([d["name"] for d in out["dims"]] == ["tp", "dp"], "slice(tp,dp) order")
    check(groups_of(out) == {"tp": [[0, 1], [2, 3], [4, 5], [6, 7]], "dp": [[0, 4], [1, 5], [2, 6], [3, 7]]},
          "slice(tp,dp) groups")
    g = groups_of(ok_json("--shape", "4,2", "--names", "dp,tp", "--unflatten", "dp:2,2:dp_shard,dp_rep"))
    check(g["dp_shard"] == [[0, 4], [1, 5], [2, 6], [3, 7]] and g["dp_rep"] == [[0, 2], [1, 3], [4, 6], [5, 7]],
          "unflatten(dp,(2,2))")
    # (2,4):(1,2): a (4,2) root sliced (b,a) and flattened.
    out = ok_json("--shape", "4,2", "--names", "a,b", "--slice", "b,a", "--flatten", "t")
    check(out["dims"][0]["layout"] == "(2,4):(1,2)", f"transposed layout {out['dims'][0]['layout']}")
    check(out["dims"][0]["groups"] == [[0, 2, 4, 6, 1, 3, 5, 7]], "transposed groups")
    # Registered names slice from the root; --root in the middle of a chain.
    g = groups_of(ok_json(*base, "--slice", "dp,cp", "--flatten", "-", "--root", "--slice", "tp,dp_cp"))
    check(g == {"tp": [[0, 1], [2, 3], [4, 5], [6, 7]], "dp_cp": [[0, 2, 4, 6], [1, 3, 5, 7]]},
          "slice of a registered name after --root")
    # A 0 in the shape is filled as MPI_Dims_create does.
    out = ok_json("--shape", "0,0", "--names", "a,b", "--world", "12")
    check([d["size"] for d in out["dims"]] == [4, 3], "dims_create(12,{0,0})")


def test_rank_query():
    base = ["--shape", "2,3,2", "--names", "x,y,z"]
    whole = ok_json(*base, "--slice", "z,x")
    for r in range(12):
        one = ok_json(*base, "--slice", "z,x", "--rank", str(r))
        check(one["rank"] == r, f"rank {r}")
        for d, wd in zip(one["dims"], whole["dims"]):
            group = next(g for g in wd["groups"] if r in g)
            check(d["group"] == group and d["local_rank"] == group.index(r), f"rank {r} dim {d['name']}")
        check(one["coordinate"] == [d["local_rank"] for d in one["dims"]], f"rank {r} coordinate")
    # With a rank list: parent ranks in, parent ranks out.
    ranked = ["--shape", "2,2", "--names", "a,b", "--ranks", "7,3,5,1", "--world", "9"]
    out = ok_json(*ranked)
    check(out["world"] == 9 and groups_of(out) == {"a": [[7, 5], [3, 1]], "b": [[7, 3], [5, 1]]}, "rank list groups")
    one = ok_json(*ranked, "--rank", "5")
    check(one["coordinate"] == [1, 0] and one["dims"][0]["group"] == [7, 5] and one["dims"][1]["group"] == [5, 1],
          f"rank list --rank 5: {one}")
    # A 2^30 mesh answers one rank quickly and without listing anything.
    start = time.monotonic()
    one = ok_json("--shape", "1024,1024,1024", "--names", "a,b,c", "--slice", "c,a", "--rank", "123456789")
    elapsed = time.monotonic() - start
    check(one["coordinate"] == [277, 117], f"2^30 coordinate {one['coordinate']}")
    check(one["dims"][0]["group"] == list(range(123456512, 123456512 + 1024)), "2^30 group along c")
    check(one["dims"][1]["group"] == [773397 + k * 2**20 for k in range(1024)], "2^30 group along a")
    check(elapsed < 5, f"2^30 --rank took {elapsed:.2f} s")


def expect_error(status, *args, text=True):
    for json_flag in (True, False) if text else (True,):
        p = run(*args, *(["--json"] if json_flag else []))
        what = f"{args} json={json_flag}"
        check(p.returncode == 2, f"{what}: exit {p.returncode}")
        lines = p.stderr.splitlines()
        check(len(lines) == 1 and lines[0].strip(), f"{what}: stderr not one line: {p.stderr!r}")
        if json_flag:
            try:
                out = json.loads(p.stdout)
            except json.JSONDecodeError:
                check(False, f"{what}: stdout is not JSON: {p.stdout!r}")
                continue
            check(list(out) == ["error", "message"], f"{what}: keys {list(out)}")
            check(out.get("error") == status, f"{what}: status {out.get('error')}, expected {status}")
            check(out.get("error") in ERROR_STATUSES, f"{what}: status outside the allowed set")
        else:
            check(p.stdout == "", f"{what}: stdout not empty: {p.stdout!r}")


def test_errors():
    ia, sm, ud, dn, ov = "invalid_argument", "shape_mismatch", "unknown_dim", "duplicate_name", "overlap"
    base = ["--shape", "2,2,2", "--names", "dp,cp,tp"]
    # Command-line syntax.
    expect_error(ia, "--shape", "2,x", "--names", "a,b")
    expect_error(ia, "--shape", "2,,2", "--names", "a,b,c")
    expect_error(ia, "--shape", "2", "--names", "a", "--rank", "1.5")
    expect_error(ia, "--shape", "2", "--names", "a", "--world", "9999999999999999999999")
    expect_error(ia, "--names", "a")
    expect_error(ia, *base, "--bogus")
    expect_error(ia, "--shape", "", "--names", "a")
    expect_error(ia, *base, "--unflatten", "dp:2")
    expect_error(ia, *base, "--unflatten", "dp:2,x:a,b")
    # The model's errors.
    expect_error(ia, "--shape", "2,2", "--names", "a")
    expect_error(ia, "--shape", "2,-2", "--names", "a,b")
    expect_error(ia, "--shape", "2,2", "--names", "a,")
    expect_error(ia, "--shape", "0,2", "--names", "a,b")
    expect_error(ia, "--shape", "2,2", "--names", "a,b", "--ranks", "0,1,1,2")
    expect_error(ia, "--shape", "2,2", "--names", "a,b", "--ranks", "0,1,2,3", "--world", "3")
    expect_error(ia, *base, "--rank", "8")
    expect_error(ia, *base, "--rank", "-1")
    expect_error(ia, "--shape", "2", "--names", "a", "--ranks", "4,2", "--rank", "3")
    expect_error(ia, *base, "--flatten", "")
    # Too big to list every group in JSON (the text picture summarises instead).
    expect_error(ia, "--shape", "1024,1024,1024", "--names", "a,b,c", text=False)
    expect_error(sm, "--shape", "2,2", "--names", "a,b", "--world", "5")
    expect_error(sm, "--shape", "2,2", "--names", "a,b", "--ranks", "0,1,2")
    expect_error(sm, "--shape", "0,3", "--names", "a,b", "--world", "8")
    expect_error(sm, *base, "--unflatten", "dp:3:x")
    expect_error(sm, "--shape", "3,4", "--names", "a,b", "--slice", "b,a", "--flatten", "t",
                 "--unflatten", "t:6,2:u,v")  # (4,3):(1,4) cut into non-dividing pieces
    expect_error(ud, *base, "--slice", "dp,xx")
    expect_error(ud, *base, "--slice", "tp", "--slice", "dp")
    expect_error(ud, *base, "--unflatten", "xx:2:a")
    expect_error(dn, "--shape", "2,2", "--names", "a,a")
    expect_error(dn, *base, "--slice", "dp,dp")
    expect_error(dn, *base, "--flatten", "cp")
    expect_error(dn, *base, "--slice", "dp,cp", "--flatten", "x", "--root", "--slice", "dp,tp", "--flatten", "x")
    expect_error(dn, *base, "--unflatten", "dp:1,2:a,tp")
    expect_error(ov, *base, "--slice", "dp,cp", "--flatten", "-", "--root", "--slice", "dp_cp,dp")
    # The first failing op stops the chain: a later valid op does not run.
    p = run(*base, "--slice", "xx", "--root", "--json")
    check(p.returncode == 2 and json.loads(p.stdout)["error"] == ud, "chain stops at the first error")


GOLDEN_222 = """\
root mesh replicate=2 shard=2 tp=2 (8 ranks, world 8)
                    tp=0 tp=1
replicate=0 shard=0    0    1
replicate=0 shard=1    2    3
replicate=1 shard=0    4    5
replicate=1 shard=1    6    7

view: replicate=2 shard=2 tp=2
replicate = 2:4
  [0,4] [1,5] [2,6] [3,7]
shard = 2:2
  [0,2] [1,3] [4,6] [5,7]
tp = 2:1
  [0,1] [2,3] [4,5] [6,7]
"""

GOLDEN_222_RANK5 = """\
rank 5 (root index 5) in view: tp=2 replicate=2
coordinate [1,1]
tp = 2:1  local rank 1  group [4,5]
replicate = 2:4  local rank 1  group [1,5]
"""


def test_text():
    p = run("--shape", "2,2,2", "--names", "replicate,shard,tp")
    check(p.returncode == 0 and p.stdout == GOLDEN_222, f"text picture differs:\n{p.stdout}")
    p = run("--shape", "2,2,2", "--names", "replicate,shard,tp", "--slice", "tp,replicate", "--rank", "5")
    check(p.returncode == 0 and p.stdout == GOLDEN_222_RANK5, f"text --rank differs:\n{p.stdout}")
    p = run("--shape", "2,2", "--names", "a,b", "--ranks", "3,2,1,0")
    check(p.returncode == 0 and "a=0   3   2\na=1   1   0\n" in p.stdout, f"grid shows parent ranks:\n{p.stdout}")


def op_args(op):
    kind, _, rest = op.partition(":")
    return {"S": ["--slice", rest], "F": ["--flatten", rest], "U": ["--unflatten", rest], "R": ["--root"]}[kind]


def replay_step(case, i, prefix):
    """Runs ops `prefix` (the successful earlier ops plus op i) and compares step i."""
    args = ["--shape", ",".join(map(str, case["shape"])), "--names", ",".join(case["names"]),
            "--world", str(case["world"])]
    if case["ranks"] is not None:
        args += ["--ranks", ",".join(map(str, case["ranks"]))]
    for op in prefix:
        args += op_args(op)
    p = run(*args, "--json")
    step = case["steps"][i]
    where = f"case {case['shape']} {case['names']} ops {prefix}"
    if step["status"] != "ok":
        if p.returncode != 2:
            return f"{where}: expected {step['status']}, exit {p.returncode}"
        got = json.loads(p.stdout)["error"]
        return None if got == step["status"] else f"{where}: expected {step['status']}, got {got}"
    if p.returncode != 0:
        return f"{where}: expected ok, got {p.stdout.strip()}"
    out = json.loads(p.stdout)
    want = [{"name": d["name"], "size": d["size"], "groups": d["groups"]} for d in step["dims"]]
    got = [{"name": d["name"], "size": d["size"], "groups": d["groups"]} for d in out["dims"]]
    return None if got == want and out["world"] == case["world"] else f"{where}: dims differ"


def test_vectors():
    with open(VECTORS) as f:
        cases = json.load(f)["cases"]
    jobs = []
    for case in cases:
        done = []  # ops that succeeded so far: a failed op leaves the view unchanged
        for i, op in enumerate(case["ops"]):
            jobs.append((case, i, done + [op]))
            if case["steps"][i]["status"] == "ok":
                done = done + [op]
    with concurrent.futures.ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) * 2) as pool:
        results = list(pool.map(lambda job: replay_step(*job), jobs))
    for r in results:
        check(r is None, r)
    print(f"replayed {len(jobs)} steps of {len(cases)} reference cases")


if __name__ == "__main__":
    start = time.monotonic()
    for test in (test_json_shape, test_worked_examples, test_rank_query, test_errors, test_text, test_vectors):
        before = len(failures)
        test()
        print(f"{test.__name__}: {'ok' if len(failures) == before else 'FAILED'}")
    print(f"{checks} checks, {len(failures)} failures, {time.monotonic() - start:.1f} s")
    sys.exit(1 if failures else 0)
