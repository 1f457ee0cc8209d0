#!/usr/bin/env python3
"""devmesh-plan end to end: exit codes, JSON shape, every error status, --rank,
the text picture, hosts (--ranks-per-host), the SVG picture, and agreement
with the reference vectors.

usage: test_plan.py DEVMESH_PLAN VECTORS_JSON
"""
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import plan_checks
from plan_checks import SVG, by_class, box, check, failures, inside

TOOL, VECTORS = sys.argv[1], sys.argv[2]
ERROR_STATUSES = {"invalid_argument", "shape_mismatch", "unknown_dim", "duplicate_name", "overlap"}


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


TMP = tempfile.mkdtemp(prefix="devmesh-plan-test-")


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
    # Slicing every dim of the root in its own order is the root itself, so
    # registered names stay sliceable (PyTorch gives [1,3,5,7] at rank 7).
    g = groups_of(ok_json(*base, "--slice", "dp,cp", "--flatten", "-", "--root", "--slice", "dp,cp,tp",
                          "--slice", "dp_cp"))
    check(g == {"dp_cp": [[0, 2, 4, 6], [1, 3, 5, 7]]}, "slice of all dims in order keeps the root")
    # A flattened 1-D view flattened into its own name is that view.
    g = groups_of(ok_json(*base, "--slice", "dp,cp", "--flatten", "-", "--flatten", "dp_cp"))
    check(g == {"dp_cp": [[0, 2, 4, 6], [1, 3, 5, 7]]}, "flatten of a 1-D view into its own name")
    # A name reused for the very layout it names is that dim again, as in
    # PyTorch: a registered name, and a root dim, unflattened back.
    root = groups_of(ok_json("--shape", "2", "--names", "gpu", "--ranks", "1,0"))
    g = groups_of(ok_json("--shape", "2", "--names", "gpu", "--ranks", "1,0", "--flatten", "n0",
                          "--unflatten", "n0:2:n0"))
    check(g == {"n0": root["gpu"]}, f"a registered name unflattened into itself: {g}")
    root = groups_of(ok_json("--shape", "3", "--names", "pp", "--ranks", "1,0,2"))
    g = groups_of(ok_json("--shape", "3", "--names", "pp", "--ranks", "1,0,2", "--flatten", "n2",
                          "--unflatten", "n2:3:pp"))
    check(g == root, f"a flattened root dim unflattened back into its name: {g}")
    g = groups_of(ok_json(*base, "--slice", "cp,tp", "--flatten", "ct", "--unflatten", "ct:2,2:cp,tp"))
    check(g == {k: v for k, v in groups_of(ok_json(*base)).items() if k in ("cp", "tp")},
          f"two root dims back from their flattened pair: {g}")
    # --flatten without a NAME means the default name (dim names joined by _),
    # wherever it stands: last, before another option, or given twice.
    g = groups_of(ok_json(*base, "--slice", "dp,cp", "--flatten"))
    check(g == {"dp_cp": [[0, 2, 4, 6], [1, 3, 5, 7]]}, "--flatten alone, last")
    p = run(*base, "--slice", "dp,tp", "--flatten")
    check(p.returncode == 0 and "dp_tp = (2,2):(4,1)" in p.stdout, f"--flatten alone in text: {p.stdout!r} {p.stderr!r}")
    g = groups_of(ok_json(*base, "--slice", "dp,cp", "--flatten", "--root", "--slice", "cp,tp", "--flatten"))
    check(g == {"cp_tp": [[0, 1, 2, 3], [4, 5, 6, 7]]}, "--flatten alone, twice")
    g = groups_of(ok_json(*base, "--slice", "dp,cp", "--flatten", "--root", "--slice", "tp,dp_cp"))
    check(g == {"tp": [[0, 1], [2, 3], [4, 5], [6, 7]], "dp_cp": [[0, 2, 4, 6], [1, 3, 5, 7]]},
          "--flatten alone registers the default name")
    # Concatenation: dims of several views of one root, in turn (SEMANTICS.md
    # section 3): a flattened dp_cp with the root's tp, and an unflattened
    # dim (not registered, so no slice reaches it) with tp.
    out = ok_json(*base, "--slice", "dp,cp", "--flatten", "--push", "--root", "--slice", "tp", "--concatenate")
    check(groups_of(out) == {"dp_cp": [[0, 2, 4, 6], [1, 3, 5, 7]], "tp": [[0, 1], [2, 3], [4, 5], [6, 7]]}
          and [d["name"] for d in out["dims"]] == ["dp_cp", "tp"], "concatenate(dp_cp, tp)")
    out = ok_json("--shape", "4,2", "--names", "dp,tp", "--slice", "tp", "--push", "--root",
                  "--unflatten", "dp:2,2:dp_shard,dp_rep", "--slice", "dp_rep", "--concatenate")
    check(groups_of(out) == {"tp": [[0, 1], [2, 3], [4, 5], [6, 7]], "dp_rep": [[0, 2], [1, 3], [4, 6], [5, 7]]}
          and [d["name"] for d in out["dims"]] == ["tp", "dp_rep"], "concatenate(tp, unflattened dp_rep)")
    g = groups_of(ok_json(*base, "--slice", "cp", "--concatenate"))
    check(g == {"cp": [[0, 2], [1, 3], [4, 6], [5, 7]]}, "--concatenate of one view is that view")
    expect_error("overlap", *base, "--slice", "dp,cp", "--flatten", "--push", "--root", "--slice", "dp",
                 "--concatenate")
    expect_error("duplicate_name", *base, "--slice", "tp", "--push", "--concatenate")
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
    # The chain's steps take no value (CLI11 would add it to their count).
    expect_error(ia, *base, "--root=3")
    expect_error(ia, *base, "--push=1", "--concatenate")
    expect_error(ia, *base, "--slice", "dp", "--push", "--concatenate=2")
    expect_error(ia, *base, "--root=7766279631452241918", "--root=7766279631452241918")
    expect_error(ia, *base, "--root=99999999999999999999")
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
    # A different layout under an existing name stays an error.
    expect_error(dn, *base, "--slice", "cp,tp", "--flatten", "ct", "--unflatten", "ct:2,2:tp,cp")
    expect_error(dn, "--shape", "2", "--names", "gpu", "--flatten", "n0", "--unflatten", "n0:2,1:x,n0")
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


# --- hosts (--ranks-per-host K: parent rank r is on host r // K) ----------

# Worked out by hand: hosts are ranks 0-3, 4-7, 8-11, 12-15, one grid row
# each. tp groups are rows: one host. cp groups [x, x+4] pair a row with the
# next one: 2 hosts. dp groups [x, x+8]: 2 hosts.
GOLDEN_224_K4 = """\
root mesh dp=2 cp=2 tp=4 (16 ranks, world 16)
hosts: 4 hosts of 4 ranks, block placement (rank r on host r / 4)
  host 0: ranks 0-3
  host 1: ranks 4-7
  host 2: ranks 8-11
  host 3: ranks 12-15
          tp=0 tp=1 tp=2 tp=3
dp=0 cp=0    0    1    2    3  host 0
dp=0 cp=1    4    5    6    7  host 1
dp=1 cp=0    8    9   10   11  host 2
dp=1 cp=1   12   13   14   15  host 3

view: dp=2 cp=2 tp=4
dp = 2:8  cross-host, each group spans 2 hosts
  [0,8] [1,9] [2,10] [3,11] [4,12] [5,13] [6,14] [7,15]
cp = 2:4  cross-host, each group spans 2 hosts
  [0,4] [1,5] [2,6] [3,7] [8,12] [9,13] [10,14] [11,15]
tp = 4:1  intra-host
  [0,1,2,3] [4,5,6,7] [8,9,10,11] [12,13,14,15]
"""

# Hosts of 2 split every row, so each cell carries its host.
GOLDEN_24_K2 = """\
root mesh dp=2 tp=4 (8 ranks, world 8)
hosts: 4 hosts of 2 ranks, block placement (rank r on host r / 2)
  host 0: ranks 0-1
  host 1: ranks 2-3
  host 2: ranks 4-5
  host 3: ranks 6-7
     tp=0 tp=1 tp=2 tp=3
dp=0 0@h0 1@h0 2@h1 3@h1
dp=1 4@h2 5@h2 6@h3 7@h3

view: dp=2 tp=4
dp = 2:4  cross-host, each group spans 2 hosts
  [0,4] [1,5] [2,6] [3,7]
tp = 4:1  cross-host, each group spans 2 hosts
  [0,1,2,3] [4,5,6,7]
"""

# Ranks 0,1,2,5 of a world of 6 in hosts of 3: host 1 holds only rank 5, and
# the groups [0,2] and [0,1] stay on host 0 while [1,5] and [2,5] do not.
GOLDEN_RANKLIST_K3 = """\
root mesh a=2 b=2 (4 ranks, world 6)
hosts: 2 hosts of 3 ranks, block placement (rank r on host r / 3)
  host 0: ranks 0-2
  host 1: ranks 3-5 (in the mesh: 5)
     b=0  b=1
a=0 0@h0 1@h0
a=1 2@h0 5@h1

view: a=2 b=2
a = 2:2  cross-host, groups span up to 2 hosts
  [0,2] [1,5]
b = 2:1  cross-host, groups span up to 2 hosts
  [0,1] [2,5]
"""

# Hosts of 8: rank 5 is on host 0 with 0-7; its dp partner 13 is on host 1.
GOLDEN_224_K8_RANK5 = """\
rank 5 (root index 5, host 0) in view: dp=2 cp=2 tp=4
coordinate [0,1,1]
dp = 2:8  local rank 0  group [5,13]  cross-host, 2 hosts
cp = 2:4  local rank 1  group [1,5]  intra-host
tp = 4:1  local rank 1  group [4,5,6,7]  intra-host
"""


def test_hosts_text():
    base = ["--shape", "2,2,4", "--names", "dp,cp,tp"]
    for args, golden in (([*base, "--ranks-per-host", "4"], GOLDEN_224_K4),
                         (["--shape", "2,4", "--names", "dp,tp", "--ranks-per-host", "2"], GOLDEN_24_K2),
                         (["--shape", "2,2", "--names", "a,b", "--ranks", "0,1,2,5", "--world", "6",
                           "--ranks-per-host", "3"], GOLDEN_RANKLIST_K3),
                         ([*base, "--ranks-per-host", "8", "--rank", "5"], GOLDEN_224_K8_RANK5)):
        p = run(*args)
        check(p.returncode == 0 and p.stdout == golden, f"{args}: text differs:\n{p.stdout}{p.stderr}")
    # Placement of derived views, by hand: flatten(cp,tp) = ranks 0-7 and 8-15.
    p = run(*base, "--ranks-per-host", "8", "--slice", "cp,tp", "--flatten", "-")
    check(p.returncode == 0 and "cp_tp = (2,4):(4,1)  intra-host\n" in p.stdout, f"flatten(cp,tp) K=8:\n{p.stdout}")
    p = run(*base, "--ranks-per-host", "8", "--slice", "dp,tp", "--flatten", "-")
    check(p.returncode == 0 and "dp_tp = (2,4):(8,1)  cross-host, each group spans 2 hosts\n" in p.stdout,
          f"flatten(dp,tp) K=8:\n{p.stdout}")
    # Past the drawing limit the placement still comes, from the modes alone
    # (no counts) for a 2^30 mesh: c groups are 1024 consecutive ranks.
    big = ["--shape", "1024,1024,1024", "--names", "a,b,c"]
    start = time.monotonic()
    p = run(*big, "--ranks-per-host", "2048")
    check(p.returncode == 0 and "c = 1024:1  intra-host\n" in p.stdout and "b = 1024:1024  cross-host\n" in p.stdout
          and "a = 1024:1048576  cross-host\n" in p.stdout, f"2^30 placement:\n{p.stdout}{p.stderr}")
    p = run(*big, "--ranks-per-host", "1048576", "--slice", "c,b", "--flatten", "-")
    check(p.returncode == 0 and "c_b = (1024,1024):(1,1024)  intra-host\n" in p.stdout,
          f"2^30 transposed flatten intra-host:\n{p.stdout}")
    check(time.monotonic() - start < 5, "2^30 placement is not O(W)")


def spanned(groups, k):
    return [len({r // k for r in g}) for g in groups]


def test_hosts_json():
    base = ["--shape", "2,2,4", "--names", "dp,cp,tp"]
    out = ok_json(*base, "--ranks-per-host", "4")
    check(list(out) == ["world", "ranks_per_host", "hosts", "dims"], f"keys with hosts {list(out)}")
    check(out["ranks_per_host"] == 4 and out["hosts"] == 4, "ranks_per_host 4, hosts 4")
    for d in out["dims"]:
        check(list(d) == ["name", "size", "layout", "groups", "placement", "hosts_spanned"], f"dim keys {list(d)}")
    got = {d["name"]: (d["placement"], d["hosts_spanned"]) for d in out["dims"]}
    check(got == {"dp": ("cross-host", 2), "cp": ("cross-host", 2), "tp": ("intra-host", 1)}, f"K=4 {got}")
    # By hand: K=8 puts cp pairs [x, x+4] (x < 4 or 8 <= x < 12) on one host.
    out = ok_json(*base, "--ranks-per-host", "8")
    got = {d["name"]: (d["placement"], d["hosts_spanned"]) for d in out["dims"]}
    check(got == {"dp": ("cross-host", 2), "cp": ("intra-host", 1), "tp": ("intra-host", 1)}, f"K=8 {got}")
    out = ok_json(*base, "--ranks-per-host", "1")
    got = {d["name"]: (d["placement"], d["hosts_spanned"]) for d in out["dims"]}
    check(got == {"dp": ("cross-host", 2), "cp": ("cross-host", 2), "tp": ("cross-host", 4)}, f"K=1 {got}")
    out = ok_json(*base, "--ranks-per-host", "16")
    check(all(d["placement"] == "intra-host" and d["hosts_spanned"] == 1 for d in out["dims"]), "K=16 all intra")
    # The fields agree with the groups for views, K and rank lists of every kind.
    cases = [
        (["--shape", "4,6", "--names", "a,b"], [1, 2, 3, 4, 6, 8, 12, 24]),
        (["--shape", "2,3,4", "--names", "x,y,z", "--slice", "z,x"], [2, 3, 4, 6, 12]),
        (["--shape", "2,3,4", "--names", "x,y,z", "--slice", "z,x", "--flatten", "t"], [2, 4, 8]),
        (["--shape", "4,2", "--names", "a,b", "--slice", "b,a", "--flatten", "t", "--unflatten", "t:4,2:u,v"], [2, 4]),
        (["--shape", "2,3", "--names", "a,b", "--ranks", "9,0,4,7,2,5", "--world", "12"], [1, 2, 3, 4, 6, 12]),
    ]
    for args, ks in cases:
        for k in ks:
            out = ok_json(*args, "--ranks-per-host", str(k))
            if not out:
                continue
            for d in out["dims"]:
                want = max(spanned(d["groups"], k))
                check(d["hosts_spanned"] == want and d["placement"] == ("intra-host" if want == 1 else "cross-host"),
                      f"{args} K={k} dim {d['name']}: {d['placement']} {d['hosts_spanned']}, want {want}")
            for r in json.loads(run(*args, "--json").stdout)["dims"][0]["groups"][0][:2]:
                one = ok_json(*args, "--ranks-per-host", str(k), "--rank", str(r))
                check(list(one) == ["rank", "ranks_per_host", "host", "coordinate", "dims"], f"--rank keys {list(one)}")
                check(one["host"] == r // k, f"{args} K={k} rank {r} host {one['host']}")
                for d in one["dims"]:
                    want = spanned([d["group"]], k)[0]
                    check(d["hosts_spanned"] == want and d["placement"] == ("intra-host" if want == 1 else "cross-host"),
                          f"{args} K={k} --rank {r} dim {d['name']}")
    # One rank of a 2^30 mesh: its a group strides 2^20, one rank per host.
    one = ok_json("--shape", "1024,1024,1024", "--names", "a,b,c", "--ranks-per-host", "8", "--rank", "123456789")
    check(one["host"] == 123456789 // 8 and [d["hosts_spanned"] for d in one["dims"]] == [1024, 1024, 128],
          f"2^30 --rank hosts {[d['hosts_spanned'] for d in one['dims']]}")


# --- the SVG picture ----------------------------------------------------------



def svg_of(*args, name="mesh.svg"):
    """Runs the tool with --svg FILE, checks it, returns the parsed root element."""
    path = os.path.join(TMP, name)
    if os.path.exists(path):
        os.remove(path)
    p = run(*args, "--svg", path)
    check(p.returncode == 0, f"{args} --svg: exit {p.returncode}, stderr {p.stderr!r}")
    if p.returncode != 0:
        return None
    try:
        return ET.parse(path).getroot()
    except ET.ParseError as e:
        check(False, f"{args} --svg: not well-formed XML: {e}")
        return None


def ranks_of(root):
    """{parent rank: (cell rect, label text, host or None)} from the rank groups."""
    out = {}
    for g in by_class(root, "g", "rank"):
        rects = by_class(g, "rect", "cell")
        labels = by_class(g, "text", "rank-label")
        check(len(rects) == 1 and len(labels) == 1, "a rank is one cell and one label")
        if rects and labels:
            out[int(g.get("data-rank"))] = (rects[0], labels[0].text, g.get("data-host"))
    return out


def panels(root):
    """{dim: panel element} of a picture, in drawing order."""
    return {g.get("data-dim"): g for g in by_class(root, "g", "panel")}


def panel(root, dim):
    """The panel of dim (a dummy element when missing, after failing)."""
    p = panels(root).get(dim)
    check(p is not None, f"no panel for {dim}: {list(panels(root))}")
    return p if p is not None else ET.Element("g")


def check_colours(root, groups, what):
    cells = ranks_of(root)
    fills = [{cells[r][0].get("fill") for r in g} for g in groups]
    check(all(len(f) == 1 for f in fills), f"{what}: a group has several colours {fills}")
    if len(groups) <= 10:
        check(len({next(iter(f)) for f in fills}) == len(groups), f"{what}: groups share a colour {fills}")


def test_svg():
    base = ["--shape", "2,2,4", "--names", "dp,cp,tp"]
    root = svg_of(*base, "--ranks-per-host", "4")
    if root is None:
        return
    check(root.tag == SVG + "svg", f"root element {root.tag}")
    width, height = float(root.get("width")), float(root.get("height"))
    check(200 <= width <= 2000 and 200 <= height <= 2000, f"16 ranks drawn {width}x{height}")
    # Every dim of the view in one picture: a panel each (checked in
    # test_svg_every_dim); here the tp panel, as one picture used to be.
    check(list(panels(root)) == ["dp", "cp", "tp"], f"a panel per dim: {list(panels(root))}")
    whole, root = root, panel(root, "tp")
    cells = ranks_of(root)
    check(sorted(cells) == list(range(16)), f"one cell per rank: {sorted(cells)}")
    check(all(label == str(r) for r, (_, label, _) in cells.items()), "each cell labelled with its rank")
    check(len(root.findall(f".//{SVG}rect")) >= 16 + 4, "rects")
    hosts = {int(h.get("data-host")): box(h) for h in by_class(root, "rect", "host")}
    check(sorted(hosts) == [0, 1, 2, 3], f"one box per host: {sorted(hosts)}")
    for r, (rect, _, host) in cells.items():
        check(host == str(r // 4) and inside(box(rect), hosts.get(r // 4, (0, 0, 0, 0))), f"rank {r} in host box")
    groups = groups_of(ok_json(*base))
    check_colours(root, groups["tp"], "colour by tp (default: last dim)")
    placement = {t.get("data-dim"): t.get("data-placement") for t in by_class(whole, "text", "dim")}
    check(placement == {"dp": "cross-host", "cp": "cross-host", "tp": "intra-host"}, f"dim labels {placement}")
    texts = " ".join("".join(t.itertext()) for t in whole.iter(SVG + "text"))
    check("intra-host" in texts and "cross-host" in texts and "host 0" in texts, "placement and host words drawn")
    check(len(by_class(root, "rect", "swatch")) == 4, "a legend swatch per tp group")
    legend = [t.text for t in by_class(root, "text", "legend")]
    check(legend[:1] == ["tp group 0: ranks 0,1,2,3  \u00b7  host 0"], f"legend lists the group's ranks {legend[:1]}")

    root = svg_of(*base, "--ranks-per-host", "4", "--color-by", "dp")
    if root is not None:
        check(list(panels(root)) == ["dp"], f"--color-by dp: dp's panel only, {list(panels(root))}")
        check_colours(root, groups["dp"], "colour by dp")
        check(len(by_class(root, "rect", "swatch")) == 8, "a legend swatch per dp group")
    # Colours follow a derived view's groups; no hosts, no host boxes.
    root = svg_of(*base, "--slice", "dp,tp", "--flatten", "-")
    if root is not None:
        check_colours(root, groups_of(ok_json(*base, "--slice", "dp,tp", "--flatten", "-"))["dp_tp"], "dp_tp")
        check(not by_class(root, "rect", "host") and len(ranks_of(root)) == 16, "no hosts: no boxes")
    # More groups than colours: still one colour per group.
    root = svg_of("--shape", "12,2", "--names", "a,b")
    if root is not None:
        check_colours(panel(root, "b"), groups_of(ok_json("--shape", "12,2", "--names", "a,b"))["b"], "12 groups")
    # Hosts that are no rectangle of the grid (6 ranks, rows of 4) get a box
    # each, the ranks inside.
    root = svg_of("--shape", "3,4", "--names", "a,b", "--ranks-per-host", "6")
    if root is not None:
        root = panel(root, "b")
        cells = ranks_of(root)
        hosts = {int(h.get("data-host")): box(h) for h in by_class(root, "rect", "host")}
        check(sorted(cells) == list(range(12)) and sorted(hosts) == [0, 1], "K=6 ranks and hosts")
        for r, (rect, _, _) in cells.items():
            check(inside(box(rect), hosts.get(r // 6, (0, 0, 0, 0))), f"K=6 rank {r} in its host box")
        check(len(by_class(root, "text", "coordinate")) == 12, "K=6 cells show root coordinates")
    # A rank list: cells are labelled with parent ranks.
    root = svg_of("--shape", "2,2", "--names", "a,b", "--ranks", "7,3,5,1", "--ranks-per-host", "2")
    if root is not None:
        root = panel(root, "a")
        cells = ranks_of(root)
        check(sorted(cells) == [1, 3, 5, 7] and all(h == str(r // 2) for r, (_, _, h) in cells.items()),
              "rank list cells")
        check(len(by_class(root, "rect", "host")) == 4, "rank list: a box per host holding members")
    # --rank outlines one cell.
    root = svg_of(*base, "--rank", "6")
    if root is not None:
        outlined = [r for r, (rect, _, _) in ranks_of(root).items() if rect.get("stroke")]
        check(outlined == [6], f"--rank 6 outlines {outlined}")
    # Names with XML specials, control characters and broken UTF-8 still make
    # well-formed XML.
    path = os.path.join(TMP, "names.svg")
    p = subprocess.run([TOOL, "--shape", "2,2", "--names", "a<b&\"c'>,x\x01y", "--svg", path],
                       capture_output=True, timeout=60)
    check(p.returncode == 0, f"odd names: exit {p.returncode}")
    try:
        root = ET.parse(path).getroot()
        check(any("a<b&\"c'>" in (t.text or "") for t in root.iter(SVG + "text")), "names escaped, not lost")
    except (ET.ParseError, OSError) as e:
        check(False, f"odd names: {e}")
    p = subprocess.run([TOOL, "--shape", "2,2", "--names", b"a\xff\xfe,\xc3\xa9\xef\xbf\xbe", "--svg", "-"],
                       capture_output=True, timeout=60)
    try:
        ET.fromstring(p.stdout)
        check(p.returncode == 0, "broken UTF-8 names")
    except ET.ParseError as e:
        check(False, f"broken UTF-8 names: {e}")
    # --svg - writes the picture instead of the text; --json with a file still
    # prints the same JSON.
    p = run(*base, "--svg", "-")
    check(p.returncode == 0 and p.stdout.startswith("<?xml") and "root mesh" not in p.stdout, "--svg -")
    path = os.path.join(TMP, "with-json.svg")
    p = run(*base, "--ranks-per-host", "4", "--json", "--svg", path)
    check(p.returncode == 0 and json.loads(p.stdout) == ok_json(*base, "--ranks-per-host", "4")
          and os.path.getsize(path) > 0, "--json with --svg")
    # The largest drawable mesh, in a sensible size.
    start = time.monotonic()
    root = svg_of("--shape", "64,64", "--names", "a,b", "--ranks-per-host", "64")
    if root is not None:
        one = panel(root, "b")
        check(len(ranks_of(one)) == 4096 and len(by_class(one, "rect", "host")) == 64, "4096 ranks, 64 hosts")
        check(float(root.get("width")) <= 4000, f"4096 ranks: width {root.get('width')}")
    check(time.monotonic() - start < 10, "4096 ranks drawn in time")


def test_svg_every_dim():
    """Every dim of the view in one picture: a panel per dim, each coloured
    by that dim's groups with a legend of them, and the layout notation
    explained in the picture."""
    for args in (["--shape", "2,2,2", "--names", "dp,cp,tp"],
                 ["--shape", "2,2,4", "--names", "dp,cp,tp", "--ranks-per-host", "4", "--slice", "tp,dp"],
                 ["--shape", "4,2", "--names", "dp,tp", "--unflatten", "dp:2,2:dp_shard,dp_rep"],
                 ["--shape", "2,2,2", "--names", "dp,cp,tp", "--slice", "dp,tp", "--flatten", "-", "--push",
                  "--root", "--slice", "cp", "--concatenate"]):
        root = svg_of(*args, name="every-dim.svg")
        if root is None:
            continue
        view = ok_json(*args)
        groups = groups_of(view)
        names = [d["name"] for d in view["dims"]]
        check(list(panels(root)) == names, f"{args}: panels {list(panels(root))}, view dims {names}")
        for name in names:
            p = panel(root, name)
            check(sorted(ranks_of(p)) == sorted(r for g in groups[name] for r in g), f"{args} {name}: every rank")
            check_colours(p, groups[name], f"{args} panel {name}")
            check(len(by_class(p, "rect", "swatch")) == min(len(groups[name]), 32), f"{args} {name}: legend")
            title = "".join("".join(t.itertext()) for t in by_class(p, "text", "panel-title"))
            layout = next(d["layout"] for d in view["dims"] if d["name"] == name)
            check(title.startswith(f"{name} = {layout}"), f"{args} {name}: panel title {title!r}, layout {layout}")
        notation = " ".join("".join(t.itertext()) for t in by_class(root, "text", "notation"))
        for word in ("size:stride", "2:4", "(2,2):(4,2)", "x+2", "first most significant"):
            check(word in notation, f"{args}: the picture's notation note lacks {word!r}: {notation!r}")


def test_hosts_errors():
    ia, sm, ud = "invalid_argument", "shape_mismatch", "unknown_dim"
    base = ["--shape", "2,2,4", "--names", "dp,cp,tp"]
    expect_error(ia, *base, "--ranks-per-host", "0")
    expect_error(ia, *base, "--ranks-per-host", "-4")
    expect_error(ia, *base, "--ranks-per-host", "x")
    expect_error(ia, *base, "--ranks-per-host", "")
    expect_error(sm, *base, "--ranks-per-host", "3")
    expect_error(sm, *base, "--ranks-per-host", "32")
    expect_error(sm, "--shape", "2,2", "--names", "a,b", "--ranks", "0,1,2,5", "--ranks-per-host", "4")  # world 6
    expect_error(sm, *base, "--ranks-per-host", "3", "--rank", "1")
    expect_error(ia, *base, "--color-by", "tp")  # needs --svg
    path = os.path.join(TMP, "refused.svg")
    expect_error(ud, *base, "--svg", path, "--color-by", "xx")
    expect_error(ia, "--shape", "4097", "--names", "a", "--svg", path)
    expect_error(ia, "--shape", "64,65", "--names", "a,b", "--ranks-per-host", "65", "--svg", path)
    expect_error(ia, *base, "--svg", os.path.join(TMP, "no-such-dir", "x.svg"))
    expect_error(ia, *base, "--svg", "-", text=False)  # and --json: both want stdout
    expect_error(ia, *base, "--svg", "")
    expect_error(ud, *base, "--svg", path, "--color-by", "")
    check(not os.path.exists(path), "a refused picture writes no file")
    p = run("--shape", "4097", "--names", "a", "--svg", path)
    check("too many to draw" in p.stderr and "4096" in p.stderr, f"refusal says why: {p.stderr!r}")


def test_help():
    p = run("--help")
    check(p.returncode == 0, "--help exits 0")
    for word in ("--ranks-per-host", "r / K", "intra-host", "--svg", "--color-by"):
        check(word in p.stdout, f"--help mentions {word}")
    # Shrink: the options, the every-survivor spelling, the empty list, and
    # that --failed takes root indices.
    for word in ("--failed LIST", "--shrink DIM", "--shrink - (or --shrink alone)", "--failed '' is the empty list",
                 "root indices", "spare", '"shrink"', "kept_ranks"):
        check(word in p.stdout, f"--help explains --shrink: {word!r} missing")
    for word in ("--repair", "--spares N", "W..W+N-1", "spawned ranks (in", "standby", '"repair"', '"spawn_rank"',
                 "--repair excludes --shrink"):
        check(word in p.stdout, f"--help explains --repair: {word!r} missing")
    # The layout notation, explained with its examples.
    for word in ("size:stride", "2:4", "(2,2):(4,2)", "x, x+2, x+4, x+6", "first most significant",
                 "one panel per dim"):
        check(word in p.stdout, f"--help explains the notation: {word!r} missing")


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


def ref_line(shape, in_dims, x):
    """Brute force: the members of root index x's group along a dim made of
    the root dims in_dims (flattened in that order), in local-rank order."""
    def coords(y):
        c = []
        for n in reversed(shape):
            c.append(y % n)
            y //= n
        return c[::-1]
    world = 1
    for n in shape:
        world *= n
    cx = coords(x)
    keyed = []
    for y in range(world):
        cy = coords(y)
        if all(cy[d] == cx[d] for d in range(len(shape)) if d not in in_dims):
            k = 0
            for d in in_dims:
                k = k * shape[d] + cy[d]
            keyed.append((k, y))
    return [y for _, y in sorted(keyed)]


def ref_neighbors(shape, in_dims, periodic, distance):
    """Per root index: (local rank, prev, next, local prev, local next) as
    MPI_Cart_shift defines them, None at an open edge."""
    world = 1
    for n in shape:
        world *= n
    out = {}
    for x in range(world):
        line = ref_line(shape, in_dims, x)
        n, k = len(line), line.index(x)

        def at(j):
            if periodic:
                j %= n
            return None if j < 0 or j >= n else j
        p, q = at(k - distance), at(k + distance)
        out[x] = (k, None if p is None else line[p], None if q is None else line[q], p, q)
    return out


def test_neighbors():
    shape = [2, 3, 2]
    base = ["--shape", "2,3,2", "--names", "a,b,c"]
    cases = [
        ([], "b", [1], False, 1),
        ([], "b:periodic", [1], True, 1),
        ([], "b:open:2", [1], False, 2),
        ([], "b:periodic:-4", [1], True, -4),
        (["--slice", "c,a"], "a:periodic", [0], True, 1),
        (["--slice", "c,a", "--flatten", "ca"], "ca:periodic:3", [2, 0], True, 3),
        (["--slice", "c,a", "--flatten", "ca"], "ca:open:-1", [2, 0], False, -1),
        (["--slice", "b,c", "--flatten", "bc", "--unflatten", "bc:-1,2:u,v"], "u:periodic", [1], True, 1),
    ]
    for ops, arg, in_dims, periodic, distance in cases:
        ref = ref_neighbors(shape, in_dims, periodic, distance)
        out = ok_json(*base, *ops, "--neighbors", arg)
        if not out:
            continue
        nb = out.get("neighbors", {})
        name = arg.split(":")[0]
        check(nb.get("dim") == name and nb.get("periodic") == periodic and nb.get("distance") == distance,
              f"--neighbors {arg}: header {[nb.get(k) for k in ('dim', 'periodic', 'distance')]}")
        got = {r["rank"]: (r["local_rank"], r["prev"], r["next"], r["local_prev"], r["local_next"])
               for r in nb.get("ranks", [])}
        check(got == ref, f"{ops} --neighbors {arg}: {got} != {ref}")
        check(list(out)[:2] == ["world", "dims"], f"--neighbors {arg}: the view is still printed")
        # The text lists the same, one line per rank.
        p = run(*base, *ops, "--neighbors", arg)
        lines = [line.strip() for line in p.stdout.splitlines() if line.strip().startswith("rank ")]
        want = []
        for x, (k, prev, nxt, lp, ln) in sorted(ref.items()):
            show = lambda r, l: "-" if r is None else f"{r} ({l})"
            want.append(f"rank {x} ({k}): prev {show(prev, lp)}, next {show(nxt, ln)}")
        check(p.returncode == 0 and lines == want, f"{ops} --neighbors {arg} text: {lines} != {want}")
        # --rank: that rank's entry only.
        one = ok_json(*base, *ops, "--neighbors", arg, "--rank", "5")
        if one:
            r = one["neighbors"]["ranks"]
            check(len(r) == 1 and r[0]["rank"] == 5 and
                  (r[0]["local_rank"], r[0]["prev"], r[0]["next"], r[0]["local_prev"], r[0]["local_next"]) == ref[5],
                  f"{ops} --neighbors {arg} --rank 5: {r}")
    ia, ud = "invalid_argument", "unknown_dim"
    expect_error(ud, *base, "--neighbors", "zz")
    expect_error(ud, *base, "--slice", "c,a", "--neighbors", "b")  # b is not in the final view
    expect_error(ia, *base, "--neighbors", "b:cyclic")
    expect_error(ia, *base, "--neighbors", "b:open:x")
    expect_error(ia, *base, "--neighbors", "b:open:1:2")


def test_unflatten_inferred():
    # (4,2) dp,tp: dp split (2,2) row-major; -1 stands for 4 / 2. Groups by
    # brute force from the root coordinates: dp index x // 2 = 2*s + r.
    ref_s = [[x for x in range(8) if (x // 2) % 2 == r and x % 2 == t] for r in range(2) for t in range(2)]
    ref_r = [[x for x in range(8) if (x // 2) // 2 == s and x % 2 == t] for s in range(2) for t in range(2)]
    for sizes in ("-1,2", "2,-1"):
        g = groups_of(ok_json("--shape", "4,2", "--names", "dp,tp", "--unflatten", f"dp:{sizes}:s,r"))
        check(sorted(g.get("s", [])) == sorted(ref_s) and sorted(g.get("r", [])) == sorted(ref_r),
              f"unflatten dp:{sizes}: {g}")
    base = ["--shape", "4,2", "--names", "dp,tp"]
    expect_error("shape_mismatch", *base, "--unflatten", "dp:-1,-1:a,b")
    expect_error("shape_mismatch", *base, "--unflatten", "dp:-1,3:a,b")
    expect_error("invalid_argument", *base, "--unflatten", "dp:-2,2:a,b")
    expect_error("invalid_argument", *base, "--unflatten", "dp:0,-1:a,b")


# --- shrink (--failed LIST --shrink DIM) ----------------------------------------

def ref_shrink(shape, failed, dim):
    """Brute force: (new shape, kept, spares) of shrinking a (rank-list-free)
    root of `shape` after root indices `failed` died, along dim (an index) or
    to every survivor (None); None when nothing is left. A rank is kept iff no
    failed rank shares its coordinate along dim."""
    world = 1
    for n in shape:
        world *= n

    def coords(y):
        c = []
        for n in reversed(shape):
            c.append(y % n)
            y //= n
        return c[::-1]
    dead = set(failed)
    if dim is None:
        kept = [x for x in range(world) if x not in dead]
        return ([len(kept)], kept, []) if kept else None
    gone = {coords(f)[dim] for f in dead}
    kept = [x for x in range(world) if coords(x)[dim] not in gone]
    spares = [x for x in range(world) if coords(x)[dim] in gone and x not in dead]
    new_shape = list(shape)
    new_shape[dim] -= len(gone)
    return (new_shape, kept, spares) if kept else None


def ref_groups(shape, kept, dim):
    """Groups along dim of a root of `shape` whose index i is parent rank
    kept[i], ordered by their smallest index."""
    world = len(kept)
    seen, out = set(), []
    for x in range(world):
        if x in seen:
            continue
        line = ref_line(shape, [dim], x)
        seen.update(line)
        out.append([kept[y] for y in line])
    return out


GOLDEN_SHRINK_42 = """\
shrunk along replicate: dropped replicate=1 replicate=2 (replicate 4 -> 2)
  failed: 3,5
  spares: 2,4
  kept: 0,1,6,7

root mesh replicate=2 shard=2 (4 ranks, world 8)
            shard=0 shard=1
replicate=0       0       1
replicate=1       6       7

view: replicate=2 shard=2
replicate = 2:2
  [0,6] [1,7]
shard = 2:1
  [0,1] [6,7]
"""


def test_shrink():
    hsdp = ["--shape", "4,2", "--names", "replicate,shard"]
    # SEMANTICS.md "Shrink": rank 5 fails, its replicate slice [4,5] goes.
    out = ok_json(*hsdp, "--failed", "5", "--shrink", "replicate")
    if out:
        check(list(out) == ["world", "dims", "shrink"], f"shrink keys {list(out)}")
        check(out["world"] == 8 and [d["size"] for d in out["dims"]] == [3, 2], f"HSDP shape {out['dims']}")
        check(groups_of(out) == {"replicate": [[0, 2, 6], [1, 3, 7]], "shard": [[0, 1], [2, 3], [6, 7]]},
              f"HSDP groups {groups_of(out)}")
        check(out["shrink"] == {"dim": "replicate", "dropped": [2], "failed": [5], "spares": [4],
                                "kept": [0, 1, 2, 3, 6, 7], "failed_ranks": [5], "spare_ranks": [4],
                                "kept_ranks": [0, 1, 2, 3, 6, 7]}, f"HSDP shrink {out['shrink']}")
    p = run(*hsdp, "--failed", "3,5", "--shrink", "replicate")
    check(p.returncode == 0 and p.stdout == GOLDEN_SHRINK_42, f"shrink text differs:\n{p.stdout}{p.stderr}")
    # Against the brute force: shapes, every dim and none, failed sets.
    for shape, names in (([4, 2], "replicate,shard"), ([2, 3, 2], "a,b,c"), ([3, 1, 2], "x,y,z"), ([5], "n"),
                         ([2, 2, 2, 2], "p,q,r,s")):
        world = 1
        for n in shape:
            world *= n
        base = ["--shape", ",".join(map(str, shape)), "--names", names]
        name_list = names.split(",")
        sets = [[], [0], [world - 1], [world // 2, 1, world // 2], list(range(0, world, 3)), list(range(world))]
        for failed in sets:
            for dim in [None, *range(len(shape))]:
                arg = "-" if dim is None else name_list[dim]
                args = [*base, "--failed", ",".join(map(str, failed)), "--shrink", arg]
                want = ref_shrink(shape, failed, dim)
                if want is None:
                    expect_error("invalid_argument", *args, text=False)
                    continue
                out = ok_json(*args)
                if not out:
                    continue
                new_shape, kept, spares = want
                new_names = ["_".join(name_list)] if dim is None else name_list
                what = f"{args}"
                check([d["name"] for d in out["dims"]] == new_names, f"{what}: names")
                check([d["size"] for d in out["dims"]] == new_shape, f"{what}: shape")
                sh = out["shrink"]
                check(sh["kept"] == kept and sh["spares"] == spares and sh["failed"] == sorted(set(failed))
                      and sh["kept_ranks"] == kept and sh["dim"] == (None if dim is None else name_list[dim]),
                      f"{what}: {sh}")
                for i, d in enumerate(out["dims"]):
                    check(d["groups"] == ref_groups(new_shape, kept, i), f"{what}: groups of {d['name']}")
    # Old root indices in, parent ranks out: a reversed rank list.
    out = ok_json(*hsdp, "--ranks", "7,6,5,4,3,2,1,0", "--failed", "5", "--shrink", "replicate")
    if out:
        check(out["shrink"]["kept"] == [0, 1, 2, 3, 6, 7] and out["shrink"]["kept_ranks"] == [7, 6, 5, 4, 1, 0]
              and out["shrink"]["failed_ranks"] == [2] and out["shrink"]["spare_ranks"] == [3], f"rank list {out}")
        check(groups_of(out) == {"replicate": [[7, 5, 1], [6, 4, 0]], "shard": [[7, 6], [5, 4], [1, 0]]},
              f"rank list groups {groups_of(out)}")
    p = run(*hsdp, "--ranks", "7,6,5,4,3,2,1,0", "--failed", "5", "--shrink", "replicate")
    check(p.returncode == 0 and "  failed: 5 (parent ranks 2)\n" in p.stdout and "  spares: 4 (parent ranks 3)\n"
          in p.stdout, f"rank list text:\n{p.stdout}")
    # No failed rank: --failed '' is the empty list; the mesh stays, or is one dim.
    out = ok_json(*hsdp, "--failed", "", "--shrink", "shard")
    check(out and groups_of(out) == groups_of(ok_json(*hsdp)) and out["shrink"]["spares"] == []
          and out["shrink"]["dropped"] == [], "--failed '' along shard")
    out = ok_json(*hsdp, "--failed", "", "--shrink")
    check(out and groups_of(out) == {"replicate_shard": [list(range(8))]} and out["shrink"]["dim"] is None,
          "--failed '' --shrink alone")
    # --shrink alone, or '-': every survivor in one dim, named as --flatten names it.
    for spelling in (["--shrink"], ["--shrink", "-"]):
        out = ok_json(*hsdp, "--failed", "5,0", *spelling)
        check(out and groups_of(out) == {"replicate_shard": [[1, 2, 3, 4, 6, 7]]}, f"{spelling}: {out}")
    # An empty DIM is the only dim of a 1-D root (as for --neighbors).
    out = ok_json("--shape", "4", "--names", "n", "--failed", "2", "--shrink", "")
    check(out and groups_of(out) == {"n": [[0, 1, 3]]}, f"--shrink '' on a 1-D root: {out}")
    # Later options act on the shrunk mesh.
    out = ok_json(*hsdp, "--failed", "5", "--shrink", "replicate", "--slice", "shard", "--ranks-per-host", "2")
    check(out and groups_of(out) == {"shard": [[0, 1], [2, 3], [6, 7]]} and out["dims"][0]["placement"] == "intra-host",
          f"--slice and hosts after --shrink: {out}")
    one = ok_json(*hsdp, "--failed", "5", "--shrink", "replicate", "--rank", "6")
    check(one and one["coordinate"] == [2, 0] and one["dims"][0]["group"] == [0, 2, 6] and "shrink" in one,
          f"--rank after --shrink: {one}")
    out = ok_json(*hsdp, "--failed", "5", "--shrink", "replicate", "--neighbors", "replicate:periodic")
    if out:
        nb = {r["rank"]: (r["prev"], r["next"]) for r in out["neighbors"]["ranks"]}
        check(nb[2] == (0, 6) and nb[6] == (2, 0) and 4 not in nb and 5 not in nb, f"--neighbors after --shrink: {nb}")
    out = ok_json(*hsdp, "--slice", "shard", "--root", "--failed", "5", "--shrink", "replicate")
    check(out and [d["size"] for d in out["dims"]] == [3, 2], "--root before --shrink")
    # The SVG lists the failed, spare and kept ranks and draws the kept ones.
    root = svg_of(*hsdp, "--failed", "3,5", "--shrink", "replicate", name="shrink.svg")
    if root is not None:
        notes = {t.get("data-note"): "".join(t.itertext()) for t in by_class(root, "text", "note")}
        check(notes.get("failed") == "failed: 3,5" and notes.get("spares") == "spares: 2,4"
              and notes.get("kept") == "kept: 0,1,6,7" and "replicate 4 -> 2" in notes.get("shrink", ""),
              f"SVG notes {notes}")
        check(sorted(ranks_of(panel(root, "shard"))) == [0, 1, 6, 7], "SVG cells are the kept ranks")
        sub = "".join("".join(t.itertext()) for t in by_class(root, "text", "subtitle"))
        check("--failed 3,5 --shrink replicate" in sub, f"SVG subtitle {sub!r}")
    # Errors.
    ia, ud = "invalid_argument", "unknown_dim"
    expect_error(ia, *hsdp, "--failed", "5")                       # no --shrink
    expect_error(ia, *hsdp, "--shrink", "replicate")               # no --failed
    expect_error(ia, *hsdp, "--failed", "5", "--shrink", "replicate", "--shrink", "shard")
    expect_error(ia, *hsdp, "--failed", "5", "--failed", "4", "--shrink", "replicate")
    expect_error(ia, *hsdp, "--failed", "8", "--shrink", "replicate")
    expect_error(ia, *hsdp, "--failed", "-1", "--shrink", "replicate")
    expect_error(ia, *hsdp, "--failed", "1,x", "--shrink", "replicate")
    expect_error(ia, *hsdp, "--failed", "1,", "--shrink", "replicate")
    expect_error(ud, *hsdp, "--failed", "1", "--shrink", "zz")
    expect_error(ia, *hsdp, "--failed", "1", "--shrink", "")          # two dims: which?
    expect_error(ia, *hsdp, "--failed", "1,3,5,7", "--shrink", "replicate")
    expect_error(ia, *hsdp, "--failed", "0,1,2,3,4,5,6,7", "--shrink")
    expect_error(ia, *hsdp, "--slice", "shard", "--failed", "1", "--shrink", "replicate")  # not a root
    expect_error(ia, *hsdp, "--failed", "5", "--shrink", "replicate", "--rank", "5")
    expect_error(ia, *hsdp, "--failed", "5", "--shrink", "replicate", "--rank", "4")
    expect_error(ia, "--shape", "4096,1025", "--names", "a,b", "--failed", "0", "--shrink", "a", text=False)
    for args, words in (((*hsdp, "--failed", "1,3,5,7", "--shrink", "replicate"),
                         ("no slice of 'replicate' is left", "4 slices", "1, 3, 5, 7")),
                        ((*hsdp, "--failed", "5", "--shrink", "replicate", "--rank", "5"), ("rank 5 failed",)),
                        ((*hsdp, "--failed", "5", "--shrink", "replicate", "--rank", "4"), ("rank 4 is a spare",)),
                        ((*hsdp, "--failed", "8", "--shrink", "replicate"), ("failed rank 8", "[0, 8)")),
                        ((*hsdp, "--failed", "5"), ("--failed requires --shrink",)),
                        ((*hsdp, "--shrink", "replicate"), ("--shrink requires --failed",))):
        p = run(*args)
        check(all(w in p.stderr for w in words), f"{args}: message {p.stderr!r} lacks {words}")



# --- repair (--failed LIST --repair [--spares N]) -------------------------------

def ref_coords(shape, y):
    c = []
    for n in reversed(shape):
        c.append(y % n)
        y //= n
    return c[::-1]


def ref_repair(shape, failed, spares):
    """Brute force: who holds each root index after a repair of the root of
    `shape` (parent ranks 0..W-1, spares W..W+spares-1) after `failed` died,
    walking the indices in order: a survivor its own, a failed one the next
    unused spare, else the next spawned rank (shown as W+spares+j). None
    when every index failed. Returns (holders, filled, standby, kept)."""
    world = 1
    for n in shape:
        world *= n
    dead = set(failed)
    if len(dead) == world:
        return None
    holders, filled, next_spare, next_spawn = [], [], 0, 0
    for x in range(world):
        if x not in dead:
            holders.append(x)
        elif next_spare < spares:
            holders.append(world + next_spare)
            filled.append({"index": x, "coords": ref_coords(shape, x), "by": "spare",
                           "parent_rank": world + next_spare})
            next_spare += 1
        else:
            holders.append(world + spares + next_spawn)
            filled.append({"index": x, "coords": ref_coords(shape, x), "by": "spawn", "spawn_rank": next_spawn})
            next_spawn += 1
    standby = list(range(world + next_spare, world + spares))
    kept = [x for x in range(world) if x not in dead]
    return holders, filled, standby, kept


def ref_repair_summary(shape, names, failed, spares):
    """The summary lines the text output must start with, from ref_repair."""
    world = 1
    for n in shape:
        world *= n
    holders, filled, standby, kept = ref_repair(shape, failed, spares)
    n_spare = sum(1 for f in filled if f["by"] == "spare")
    n_spawn = len(filled) - n_spare

    def count(n, one, many):
        return f"{n} {one if n == 1 else many}"
    head = f"repaired with {count(spares, 'spare', 'spares')}: "
    if not filled:
        head += "nothing failed, nothing filled"
    else:
        head += (f"{count(len(filled), 'failed index', 'failed indices')} filled, {n_spare} by "
                 f"{'a spare' if n_spare == 1 else 'spares'} and {n_spawn} by "
                 f"{'a spawned rank' if n_spawn == 1 else 'spawned ranks'}")
    head += f"; {count(spares - n_spare, 'spare', 'spares')} left in standby"
    lines = [head, "  failed: " + (",".join(map(str, sorted(set(failed)))) or "none")]
    for f in filled:
        where = " ".join(f"{names[i]}={c}" for i, c in enumerate(f["coords"]))
        who = (f"spare, parent rank {f['parent_rank']}" if f["by"] == "spare" else
               f"spawned rank {f['spawn_rank']}, shown as rank {world + spares + f['spawn_rank']}")
        lines.append(f"  index {f['index']} ({where}): {who}")
    lines.append("  kept: " + ",".join(map(str, kept)) + " (every other rank keeps its root index and coordinate)")
    lines.append("  standby: " + ("none" if not standby else
                                  ("parent rank " if len(standby) == 1 else "parent ranks ") + ",".join(map(str, standby))))
    ranks = f"  (parent ranks: 0-{world - 1} the mesh"
    if spares:
        ranks += f", {world}-{world + spares - 1} its spares"
    if n_spawn:
        ranks += f", spawned rank j shown as {world + spares}+j"
    return lines + [ranks + ")", "", "before the repair:"]


def text_groups(section, names):
    """{dim name: [[parent ranks], ...]} from the 'view:' part of a text picture."""
    lines = section.splitlines()
    out = {}
    for i, line in enumerate(lines):
        for name in names:
            if line.startswith(name + " = ") and i + 1 < len(lines):
                out[name] = [list(map(int, g.strip("[]").split(","))) for g in lines[i + 1].split()]
    return out


GOLDEN_REPAIR_5 = """\
repaired with 2 spares: 1 failed index filled, 1 by a spare and 0 by spawned ranks; 1 spare left in standby
  failed: 5
  index 5 (replicate=2 shard=1): spare, parent rank 8
  kept: 0,1,2,3,4,6,7 (every other rank keeps its root index and coordinate)
  standby: parent rank 9
  (parent ranks: 0-7 the mesh, 8-9 its spares)

before the repair:
root mesh replicate=4 shard=2 (8 ranks, world 10)
            shard=0 shard=1
replicate=0       0       1
replicate=1       2       3
replicate=2       4       5
replicate=3       6       7

view: replicate=4 shard=2
replicate = 4:2
  [0,2,4,6] [1,3,5,7]
shard = 2:1
  [0,1] [2,3] [4,5] [6,7]

after the repair:
root mesh replicate=4 shard=2 (8 ranks, world 10)
            shard=0 shard=1
replicate=0       0       1
replicate=1       2       3
replicate=2       4       8
replicate=3       6       7

view: replicate=4 shard=2
replicate = 4:2
  [0,2,4,6] [1,3,8,7]
shard = 2:1
  [0,1] [2,3] [4,8] [6,7]
"""


def check_repair_case(shape, names, failed, spares):
    """One repair through the tool, text and JSON, against ref_repair."""
    world = 1
    for n in shape:
        world *= n
    name_list = names.split(",")
    args = ["--shape", ",".join(map(str, shape)), "--names", names, "--failed", ",".join(map(str, failed)),
            "--repair", "--spares", str(spares)]
    want = ref_repair(shape, failed, spares)
    if want is None:
        expect_error("invalid_argument", *args)
        p = run(*args)
        check("no rank is left to repair from" in p.stderr, f"{args}: message {p.stderr!r}")
        return
    holders, filled, standby, kept = want
    spawned = sum(1 for f in filled if f["by"] == "spawn")
    what = f"{args}"
    out = ok_json(*args)
    if out:
        check(list(out) == ["world", "dims", "repair"], f"{what}: keys {list(out)}")
        check(out["world"] == world + spares + spawned, f"{what}: world {out['world']}")
        check([d["name"] for d in out["dims"]] == name_list and [d["size"] for d in out["dims"]] == shape,
              f"{what}: same shape and names")
        for i, d in enumerate(out["dims"]):
            check(d["groups"] == ref_groups(shape, holders, i), f"{what}: groups of {d['name']} {d['groups']}")
        rep = dict(out["repair"])
        before = rep.pop("before", None)
        check(rep == {"failed": sorted(set(failed)), "filled": filled, "spares": spares,
                      "spares_left": len(standby), "spawned": spawned, "kept": kept, "standby_ranks": standby},
              f"{what}: repair {rep}")
        check(before is not None and before["world"] == world + spares
              and [d["groups"] for d in before["dims"]] == [ref_groups(shape, list(range(world)), i)
                                                             for i in range(len(shape))],
              f"{what}: before {before}")
    p = run(*args)
    check(p.returncode == 0 and p.stderr == "", f"{what}: text exit {p.returncode} {p.stderr!r}")
    summary = ref_repair_summary(shape, name_list, failed, spares)
    lines = p.stdout.splitlines()
    check(lines[:len(summary)] == summary, f"{what}: summary\n{p.stdout}\nexpected\n" + "\n".join(summary))
    head, _, after = p.stdout.partition("\nafter the repair:\n")
    check(after.startswith(f"root mesh {' '.join(f'{n}={s}' for n, s in zip(name_list, shape))} "
                           f"({world} ranks, world {world + spares + spawned})\n"), f"{what}: after\n{after}")
    check(text_groups(after, name_list) == {n: ref_groups(shape, holders, i) for i, n in enumerate(name_list)},
          f"{what}: groups after the repair\n{after}")
    check(text_groups(head, name_list) == {n: ref_groups(shape, list(range(world)), i)
                                           for i, n in enumerate(name_list)},
          f"{what}: groups before the repair\n{head}")


def test_repair():
    hsdp = ["--shape", "4,2", "--names", "replicate,shard"]
    # SEMANTICS.md "Repair": spares 8 and 9, F = {5}: 8 takes index 5.
    p = run(*hsdp, "--failed", "5", "--repair", "--spares", "2")
    check(p.returncode == 0 and p.stdout == GOLDEN_REPAIR_5, f"repair text differs:\n{p.stdout}{p.stderr}")
    out = ok_json(*hsdp, "--failed", "5", "--repair", "--spares", "2")
    if out:
        check(groups_of(out) == {"replicate": [[0, 2, 4, 6], [1, 3, 8, 7]], "shard": [[0, 1], [2, 3], [4, 8], [6, 7]]},
              f"worked example groups {groups_of(out)}")
        check(out["repair"]["filled"] == [{"index": 5, "coords": [2, 1], "by": "spare", "parent_rank": 8}]
              and out["repair"]["spares_left"] == 1 and out["repair"]["standby_ranks"] == [9],
              f"worked example {out['repair']}")
    # --spares 2 with 1, 2 and 3 failures (the third by a spawned rank).
    for failed in ([5], [7, 2], [6, 1, 4], [3, 3, 0]):
        check_repair_case([4, 2], "replicate,shard", failed, 2)
    out = ok_json(*hsdp, "--failed", "6,1,4", "--repair", "--spares", "2")
    if out:
        check([(f["index"], f["by"], f.get("parent_rank"), f.get("spawn_rank")) for f in out["repair"]["filled"]]
              == [(1, "spare", 8, None), (4, "spare", 9, None), (6, "spawn", None, 0)],
              f"three failures, two spares {out['repair']['filled']}")
    # No --spares: every failed index by a spawned rank.
    out = ok_json(*hsdp, "--failed", "2", "--repair")
    check(out and out["repair"]["filled"] == [{"index": 2, "coords": [1, 0], "by": "spawn", "spawn_rank": 0}]
          and out["world"] == 9 and groups_of(out)["shard"][1] == [8, 3], f"--repair alone {out}")
    # Against the brute force: shapes, failed sets, 0..3 spares.
    for shape, names in (([4, 2], "replicate,shard"), ([2, 3, 2], "a,b,c"), ([5], "n"), ([1, 3], "x,y")):
        world = 1
        for n in shape:
            world *= n
        for failed in ([], [0], [world - 1], [world // 2, 1, world // 2], list(range(0, world, 2)),
                       list(range(1, world)), list(range(world))):
            for spares in range(4):
                check_repair_case(shape, names, failed, spares)
    # A parent given as the spares make it; later options act on the repaired mesh.
    out = ok_json(*hsdp, "--ranks", "0,1,2,3,4,5,6,7", "--world", "10", "--failed", "5", "--repair", "--spares", "2")
    check(out and out["repair"]["standby_ranks"] == [9], f"--world W+spares: {out}")
    out = ok_json(*hsdp, "--failed", "5", "--repair", "--spares", "2", "--slice", "shard", "--ranks-per-host", "2")
    check(out and groups_of(out) == {"shard": [[0, 1], [2, 3], [4, 8], [6, 7]]}
          and out["dims"][0]["placement"] == "cross-host", f"--slice and hosts after --repair: {out}")
    one = ok_json(*hsdp, "--failed", "5", "--repair", "--spares", "2", "--rank", "8")
    check(one and one["coordinate"] == [2, 1] and one["dims"][0]["group"] == [1, 3, 8, 7] and "repair" in one,
          f"--rank of the spare after --repair: {one}")
    out = ok_json(*hsdp, "--slice", "shard", "--root", "--failed", "5", "--repair")
    check(out and [d["size"] for d in out["dims"]] == [4, 2], "--root before --repair")
    # The SVG lists who fills what and draws the repaired mesh.
    root = svg_of(*hsdp, "--failed", "6,1,4", "--repair", "--spares", "2", name="repair.svg")
    if root is not None:
        notes = [(t.get("data-note"), "".join(t.itertext())) for t in by_class(root, "text", "note")]
        check(notes[:2] == [("repair", ref_repair_summary([4, 2], ["replicate", "shard"], [6, 1, 4], 2)[0]),
                            ("failed", "failed: 1,4,6")]
              and [n for k, n in notes if k == "filled"] == ["index 1 (replicate=0 shard=1): spare, parent rank 8",
                                                              "index 4 (replicate=2 shard=0): spare, parent rank 9",
                                                              "index 6 (replicate=3 shard=0): spawned rank 0, shown as "
                                                              "rank 10"]
              and ("standby", "standby: none") in notes, f"SVG notes {notes}")
        check(sorted(ranks_of(panel(root, "shard"))) == [0, 2, 3, 5, 7, 8, 9, 10], "SVG cells are the repaired ranks")
        sub = "".join("".join(t.itertext()) for t in by_class(root, "text", "subtitle"))
        check("--failed 6,1,4 --repair --spares 2" in sub, f"SVG subtitle {sub!r}")
    # Errors: each exits 2, with the model's message or the option's.
    ia = "invalid_argument"
    for args, words in (((*hsdp, "--failed", "8", "--repair"), ("failed rank 8", "[0, 8)")),
                        ((*hsdp, "--failed", "-1", "--repair", "--spares", "2"), ("failed rank -1",)),
                        ((*hsdp, "--failed", "5", "--repair", "--spares", "-1"), ("-1 spares",)),
                        ((*hsdp, "--failed", "0,1,2,3,4,5,6,7", "--repair", "--spares", "3"),
                         ("no rank is left to repair from", "all 8 ranks")),
                        ((*hsdp, "--failed", "5", "--repair", "--shrink", "replicate"), ("excludes",)),
                        ((*hsdp, "--failed", "5", "--shrink", "replicate", "--spares", "1"),
                         ("--spares requires --repair",)),
                        ((*hsdp, "--failed", "5", "--repair", "--repair"), ("--repair is given 2 times",)),
                        ((*hsdp, "--failed", "5"), ("--failed requires --shrink or --repair",)),
                        ((*hsdp, "--repair"), ("--repair requires --failed",)),
                        ((*hsdp, "--failed", "5", "--repair", "--spares", "x"), ("--spares", "'x'")),
                        ((*hsdp, "--failed", "5", "--repair", "--spares", ""), ("--spares",)),
                        ((*hsdp, "--failed", "5,", "--repair"), ("--failed",)),
                        ((*hsdp, "--slice", "shard", "--failed", "5", "--repair"), ("root",)),
                        ((*hsdp, "--ranks", "7,6,5,4,3,2,1,0", "--failed", "5", "--repair"), ("--ranks",)),
                        ((*hsdp, "--ranks", "0,1,2,3,4,5,6,7", "--world", "9", "--failed", "5", "--repair", "--spares",
                          "2"), ("9 ranks", "--world 10")),
                        ((*hsdp, "--failed", "5", "--repair", "--spares", "2", "--rank", "5"),
                         ("rank 5 failed", "spare parent rank 8")),
                        ((*hsdp, "--failed", "5,6", "--repair", "--spares", "1", "--rank", "6"),
                         ("rank 6 failed", "spawned rank 0", "rank 9")),
                        ((*hsdp, "--failed", "5", "--repair", "--spares", "2", "--rank", "9"), ("rank 9 is a spare",)),
                        (("--shape", "4096,1025", "--names", "a,b", "--failed", "0", "--repair"), ("at most",)),
                        ((*hsdp, "--failed", "5", "--repair", "--spares", "9223372036854775807"),
                         ("at most", "spares"))):
        expect_error(ia, *args)
        p = run(*args)
        check(all(w in p.stderr for w in words), f"{args}: message {p.stderr!r} lacks {words}")

if __name__ == "__main__":
    start = time.monotonic()
    for test in (test_json_shape, test_worked_examples, test_rank_query, test_errors, test_text, test_hosts_text,
                 test_hosts_json, test_svg, test_svg_every_dim, test_hosts_errors, test_help, test_vectors, test_neighbors,
                 test_unflatten_inferred, test_shrink, test_repair):
        before = len(failures)
        test()
        print(f"{test.__name__}: {'ok' if len(failures) == before else 'FAILED'}")
    shutil.rmtree(TMP, ignore_errors=True)
    print(f"{plan_checks.tally()}, {time.monotonic() - start:.1f} s")
    sys.exit(1 if failures else 0)
