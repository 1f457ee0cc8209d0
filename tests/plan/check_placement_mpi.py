#!/usr/bin/env python3
"""The placement checker on real MPI: the library's placed meshes against
devmesh-plan's and against check_placement.py's rules. Random topology
files of 8-16 ranks (check_placement.py's generator: uneven hosts and
domains, scattered and round-robin rank orders), random shapes and --place
requests, each case run as

  MPIEXEC -n N EXAMPLE_PLACEMENT --topology FILE --shape S --names D [--place P] --out OUT.json
  DEVMESH_PLAN --topology FILE --shape S --names D [--place P] --json

(example_placement sets each rank's DEVMESH_HOST_ID and DEVMESH_TOPOLOGY from
its line of FILE, makes the mesh with MeshOptions::placement and writes the
groups of every dim's communicator). Half the cases can be placed, by
check_placement.py's exhaustive reference (every fourth of them without
--place); a quarter are refused because no tiling exists; the rest are bad
requests (a dim or level that does not exist, a dim placed twice, more
ranks than the world).

* placed: the example exits 0 (its own checks: dim_within, collectives over
  every dim) and its answer passes check_placement.py's rule checks from the
  file alone (row-major groups of the parent ranks, placed dims within
  their level, members of one instance consecutive); world, levels,
  parent_ranks and leftovers are the planner's, and every dim's groups are
  the planner's as a set of ordered lists;
* refused: the example exits 1 and writes every rank's message: all the
  same, the status that of the kind of request (a refusal for want of a
  tiling names the dim or says that the shape cannot be tiled, with the
  sizes), and equal to the planner's stderr line (after "devmesh-plan: ")
  and JSON "error".

With DEVMESH_PLAN "-" (a build without the planner) the library is judged
by the reference and the rules alone. Every launch is bounded (a timeout,
then its process group killed).

usage: check_placement_mpi.py MPIEXEC EXAMPLE_PLACEMENT DEVMESH_PLAN|- [CASES [SEED]]   (default 32 cases)
"""
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import check_placement as rules

MIN_RANKS, MAX_RANKS = 8, 16
LAUNCH_TIMEOUT = 60  # seconds for one mpiexec (a launch takes 1-3 s)
BAD_KINDS = ["unknown_dim", "unknown_level", "twice", "too_large"]


def uneven(inst):
    """Some level whose instances hold different numbers of ranks."""
    return any(len({lv.count(k) for k in set(lv)}) > 1 for lv in inst)


def draw_case(rng, placeable, want_uneven, cover, free):
    """A topology of 8-16 ranks and a request that the reference places (or
    refuses), uneven or not, whose mesh takes at least that part of the
    ranks (cover), with no dim placed where free (else some): drawn again
    until it is so."""
    for _ in range(100000):
        names, rows = rules.random_topology(rng)
        if not MIN_RANKS <= len(rows) <= MAX_RANKS:
            continue
        if rng.random() < 0.15:  # the host alone: no DEVMESH_TOPOLOGY
            names, rows = ["host"], [["_".join(r)] for r in rows]
        inst = rules.instances(names, rows)
        if uneven(inst) != want_uneven:
            continue
        dims, shape, bound = rules.random_request(rng, names, inst)
        if math.prod(rules.fill(shape, len(rows))) < cover * len(rows):
            continue
        if free:
            bound = [None] * len(bound)
        elif bound.count(None) == len(bound):
            continue
        if rules.tiling_exists(names, inst, rules.fill(shape, len(rows)), bound) == placeable:
            return names, rows, inst, dims, shape, bound
    sys.exit(f"no case drawn: placeable {placeable}, uneven {want_uneven}, cover {cover}, free {free}")


def bad_request(kind, names, n, dims, shape, bound):
    """--place and --shape of a request refused before any tiling is tried."""
    place = [f"{dims[d]}={names[bound[d]]}" for d in range(len(dims)) if bound[d] is not None]
    if kind == "unknown_dim":
        place.append(f"nosuchdim={names[0]}")
    elif kind == "unknown_level":
        place = [p for p in place if not p.startswith(dims[0] + "=")] + [f"{dims[0]}=rack"]
    elif kind == "twice":
        place = [f"{dims[0]}={names[0]}", f"{dims[0]}={names[-1]}"]
    else:  # more ranks than the world
        shape = [s or 1 for s in shape]
        shape[0] *= n // max(1, math.prod(shape)) + 1
    return ",".join(place), shape


def launch(cmd, timeout):
    """(exit status, stdout, stderr, seconds); on a timeout the process group
    is ended (TERM, then KILL) and the status is None."""
    t0 = time.monotonic()
    # The file's levels alone: none from a Slurm job this runs in.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_TOPOLOGY_ADDR")}
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env=env)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)  # the launcher ends its ranks
        try:
            out, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
        rc = None
    return rc, out, err, time.monotonic() - t0


def by_root_index(out):
    """The library's answer in the planner's form: each dim's size (its
    communicator's) and groups ordered by their first member's root index."""
    root = {r: x for x, r in enumerate(out.get("parent_ranks", []))}
    dims = [{"name": d["name"], "size": len(d["groups"][0]) if d["groups"] else 0,
             "groups": sorted(d["groups"], key=lambda g: root.get(g[0], -1) if g else -1)} for d in out["dims"]]
    return dict(out, dims=dims)


# The status of each kind of refusal.
STATUS = {"refused": "shape_mismatch", "unknown_dim": "unknown_dim", "unknown_level": "invalid_argument",
          "twice": "invalid_argument", "too_large": "shape_mismatch"}


def judge_library(what, kind, rc, so, se, mesh, n, request):
    """The library's answer alone: placed by the rules, or refused with one
    message on every rank and the status of its kind. Returns the message."""
    check = rules.check
    names, inst, shape, dims, bound = request
    if kind == "placed":
        if check(rc == 0 and "error" not in mesh, f"{what}: example_placement exit {rc}, refused a mesh the "
                 f"reference places: {mesh.get('error')}: {(mesh.get('messages') or [''])[0]!r} {(so + se)[-2000:]!r}"):
            rules.check_placed(what + " (library)", by_root_index(mesh), names, inst, shape, dims, bound,
                               within_field=False)
        return None
    check(rc == 1, f"{what}: example_placement exit {rc} on a mesh the reference refuses")
    if not check("error" in mesh, f"{what}: the library placed a mesh the reference refuses: {mesh}"):
        return None
    msgs = mesh.get("messages", [])
    check(len(msgs) == n, f"{what}: {len(msgs)} ranks' messages of {n}")
    check(all(m == msgs[0] for m in msgs), f"{what}: the ranks' messages differ: {msgs}")
    check(mesh["error"] == STATUS[kind], f"{what}: library status {mesh['error']}, not {STATUS[kind]}: {msgs[:1]}")
    if kind == "refused" and msgs:
        rules.check_message(what + " (library)", msgs[0], dims, bound, names)
    return msgs[0] if msgs else None


def judge_planner(what, kind, p, mesh, message, request):
    """devmesh-plan's answer against the library's: the same parent ranks,
    leftovers and groups, or the same refusal."""
    check = rules.check
    names, inst, shape, dims, bound = request
    if p.returncode == 0:
        plan = json.loads(p.stdout)
        check(kind == "placed", f"{what}: devmesh-plan placed a mesh the reference refuses: {plan}")
        rules.check_placed(what + " (devmesh-plan)", plan, names, inst, shape, dims, bound)
        if "error" in mesh:
            return
        for key in ["world", "levels", "parent_ranks", "leftovers"]:
            check(mesh.get(key) == plan.get(key),
                  f"{what}: {key}: library {mesh.get(key)}, devmesh-plan {plan.get(key)}")
        check([d["name"] for d in mesh["dims"]] == [d["name"] for d in plan["dims"]], f"{what}: dims {mesh['dims']}")
        for dm, dp in zip(mesh["dims"], plan["dims"]):
            check(sorted(dm["groups"]) == sorted(dp["groups"]),
                  f"{what}: {dm['name']} groups: library {dm['groups']}, devmesh-plan {dp['groups']}")
        return
    lines = p.stderr.splitlines()
    if not check(p.returncode == 2 and len(lines) == 1 and lines[0].startswith("devmesh-plan: "),
                 f"{what}: devmesh-plan exit {p.returncode}, stderr {p.stderr!r}"):
        return
    said = lines[0][len("devmesh-plan: "):]
    try:
        status = json.loads(p.stdout)
    except ValueError:
        status = {}
    check(status == {"error": status.get("error"), "message": said}, f"{what}: devmesh-plan JSON {p.stdout!r}")
    check(kind != "placed", f"{what}: devmesh-plan refused a mesh the reference places: {said!r}")
    if "error" in mesh:
        check(message == said, f"{what}: message: library {message!r}, devmesh-plan {said!r}")
        check(mesh["error"] == status.get("error"), f"{what}: status: library {mesh['error']}, devmesh-plan {status}")


def run_case(i, kind, rng, tmp, tools):
    mpiexec, example, plan = tools
    # A bad request spoils one the reference places.
    # Meshes of all the ranks (i % 8 == 2, and every other case of i % 8 ==
    # 6) or at least half of them (i % 8 == 0: uneven), and of any size.
    # Every case places a dim: without --place neither the library nor
    # devmesh-plan places anything (root index = parent rank).
    cover = {0: 0.5, 2: 1, 6: 1 if i % 16 == 6 else 0}.get(i % 8, 0)
    names, rows, inst, dims, shape, bound = draw_case(rng, kind != "refused", want_uneven=i % 4 < 2, cover=cover,
                                                      free=False)
    n = len(rows)
    path = os.path.join(tmp, f"topology{i}.txt")
    rules.write_topology(path, names, rows, rng)
    place = ",".join(f"{dims[d]}={names[bound[d]]}" for d in range(len(dims)) if bound[d] is not None)
    if kind in BAD_KINDS:
        place, shape = bad_request(kind, names, n, dims, shape, bound)
    args = ["--shape", ",".join(map(str, shape)), "--names", ",".join(dims)] + (["--place", place] if place else [])
    what = f"case {i} ({kind}): {' '.join(args)} over {n} ranks {names}" + (" uneven" if uneven(inst) else "")
    tags = {kind, "uneven" if uneven(inst) else "even", "no --place" if not place else "--place"}
    out = os.path.join(tmp, f"mesh{i}.json")
    rc, so, se, secs = launch([mpiexec, "-n", str(n), example, "--topology", path, *args, "--out", out],
                              LAUNCH_TIMEOUT)
    if not rules.check(rc is not None, f"{what}: example_placement still running after {LAUNCH_TIMEOUT} s"):
        return what, "timed out", secs, tags
    try:
        with open(out) as f:
            mesh = json.load(f)
    except (OSError, ValueError) as e:
        rules.check(False, f"{what}: example_placement exit {rc}, no answer ({e}): {(so + se)[-2000:]!r}")
        return what, "no answer from example_placement", secs, tags
    request = (names, inst, shape, dims, bound)
    message = judge_library(what, kind, rc, so, se, mesh, n, request)
    if "error" in mesh:
        outcome = f"library refused ({mesh['error']})"
    else:
        outcome = f"library placed ({len(mesh.get('leftovers', []))} left over)"
        tags.add("leftovers" if mesh.get("leftovers") else "no leftovers")
    if plan != "-":
        p = subprocess.run([plan, "--topology", path, *args, "--json"], capture_output=True, text=True, timeout=60)
        judge_planner(what, kind, p, mesh, message, request)
        outcome += ", devmesh-plan " + ("placed" if p.returncode == 0 else "refused")
    return what, outcome, secs, tags


def main():
    tools = sys.argv[1:4]
    cases = int(sys.argv[4]) if len(sys.argv) > 4 else 32
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 46
    rng = random.Random(seed)
    # Even cases placeable, odd ones refused: every other refusal for want
    # of a tiling, the rest bad requests of each kind in turn.
    kinds = ["placed" if i % 2 == 0 else "refused" if i % 4 == 1 else BAD_KINDS[(i // 4) % len(BAD_KINDS)]
             for i in range(cases)]
    t0 = time.monotonic()
    seen, failed = {}, {}
    with tempfile.TemporaryDirectory(prefix="devmesh-place-mpi-") as tmp:
        for i, kind in enumerate(kinds):
            before = len(rules.failures)
            what, outcome, secs, tags = run_case(i, kind, rng, tmp, tools)
            ok = len(rules.failures) == before
            print(f"{'ok  ' if ok else 'FAIL'} {what}: {outcome}, {secs:.1f} s", flush=True)
            for t in tags:
                seen[t] = seen.get(t, 0) + 1
                failed[t] = failed.get(t, 0) + (0 if ok else 1)
    print(f"{cases} cases (seed {seed}) in {time.monotonic() - t0:.0f} s: " +
          ", ".join(f"{t} {seen[t]} ({failed[t]} failed)" for t in sorted(seen)))
    print(rules.plan_checks.tally())
    sys.exit(1 if rules.failures else 0)


if __name__ == "__main__":
    main()
