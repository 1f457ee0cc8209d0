#!/usr/bin/env python3
"""The placement checker on real MPI: the library's placed meshes against
devmesh-plan's. Random topology files of 8-16 ranks (check_placement.py's
generator: uneven hosts and domains, scattered and round-robin rank orders),
random shapes and --place requests, each case run twice:

  MPIEXEC -n N EXAMPLE_PLACEMENT --topology FILE --shape S --names D [--place P] --out OUT.json
  DEVMESH_PLAN --topology FILE --shape S --names D [--place P] --json

(example_placement sets each rank's DEVMESH_HOST_ID and DEVMESH_TOPOLOGY from
its line of FILE, makes the mesh with MeshOptions::placement and writes the
groups of every dim's communicator). Half the cases can be placed, by
check_placement.py's exhaustive reference; a quarter are refused because no
tiling exists; the rest are bad requests (a dim or level that does not
exist, a dim placed twice, more ranks than the world).

* placed: the example exits 0 (its own checks: dim_within, collectives over
  every dim); world, levels, parent_ranks and leftovers are the planner's;
  every dim's groups are the planner's as a set of ordered lists; and the
  library's answer passes check_placement.py's rule checks from the file
  alone (row-major groups of the parent ranks, placed dims within their
  level, members of one instance consecutive);
* refused: the example exits 1 and writes every rank's message; all are the
  same and equal to the planner's stderr line (after "devmesh-plan: "), the
  status is the planner's JSON "error", and a refusal for want of a tiling
  names the dim or says that the shape cannot be tiled, with the sizes.

Every launch is bounded (a timeout, then its process group killed).

usage: check_placement_mpi.py MPIEXEC EXAMPLE_PLACEMENT DEVMESH_PLAN [CASES [SEED]]   (default 32 cases)
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
    ranks (cover), with no dim placed where free (else some): drawn until
    it is so."""
    while True:
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
    is killed and the status is None."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
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


def compare_placed(what, mesh, plan, names, inst, shape, dims, bound):
    check = rules.check
    for key in ["world", "levels", "parent_ranks", "leftovers"]:
        check(mesh.get(key) == plan.get(key), f"{what}: {key}: library {mesh.get(key)}, devmesh-plan {plan.get(key)}")
    check([d["name"] for d in mesh["dims"]] == [d["name"] for d in plan["dims"]], f"{what}: dims {mesh['dims']}")
    for dm, dp in zip(mesh["dims"], plan["dims"]):
        check(sorted(dm["groups"]) == sorted(dp["groups"]),
              f"{what}: {dm['name']} groups: library {dm['groups']}, devmesh-plan {dp['groups']}")
    rules.check_placed(what + " (library)", by_root_index(mesh), names, inst, shape, dims, bound, within_field=False)
    rules.check_placed(what + " (devmesh-plan)", plan, names, inst, shape, dims, bound)


def compare_refused(what, rc, mesh, plan_rc, plan_err, plan_out, n, tiling):
    check = rules.check
    lines = plan_err.splitlines()
    if not check(plan_rc == 2 and len(lines) == 1 and lines[0].startswith("devmesh-plan: "),
                 f"{what}: devmesh-plan exit {plan_rc}, stderr {plan_err!r}"):
        return None, None
    message = lines[0][len("devmesh-plan: "):]
    try:
        status = json.loads(plan_out)
    except ValueError:
        status = {}
    check(status.get("message") == message, f"{what}: devmesh-plan JSON {status}, stderr {message!r}")
    check(rc == 1, f"{what}: example_placement exit {rc} on a refused mesh")
    if not check("error" in mesh, f"{what}: the library placed the mesh the planner refused ({message!r}): {mesh}"):
        return None, message
    msgs = mesh.get("messages", [])
    check(len(msgs) == n, f"{what}: {len(msgs)} ranks' messages of {n}")
    for r, m in enumerate(msgs):
        if not check(m == message, f"{what}: rank {r}'s message {m!r}, devmesh-plan's {message!r}"):
            break
    check(mesh["error"] == status.get("error"), f"{what}: library status {mesh['error']}, devmesh-plan {status}")
    if tiling:
        check(status.get("error") == "shape_mismatch", f"{what}: status {status} where no tiling exists")
    return status.get("error"), message


def run_case(i, kind, rng, tmp, tools):
    mpiexec, example, plan = tools
    # A bad request spoils one the reference places.
    # Every fourth placeable case has no --place: devmesh-plan places it
    # over the topology all the same (no dim bound), and so must the library.
    # Meshes of all the ranks (i % 8 == 2) or at least half of them
    # (i % 8 == 0: uneven), and of any size.
    cover = {0: 0.5, 2: 1}.get(i % 8, 0)
    names, rows, inst, dims, shape, bound = draw_case(rng, kind != "refused", want_uneven=i % 4 < 2, cover=cover,
                                                      free=i % 8 == 6)
    placeable = kind == "placed"
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
    p = subprocess.run([plan, "--topology", path, *args, "--json"], capture_output=True, text=True, timeout=60)
    try:
        with open(out) as f:
            mesh = json.load(f)
    except (OSError, ValueError) as e:
        rules.check(False, f"{what}: example_placement exit {rc}, no answer ({e}); stderr {se[-2000:]!r}")
        return what, "no answer from example_placement", secs, tags
    lib = f"refused ({mesh['error']})" if "error" in mesh else f"placed ({len(mesh.get('leftovers', []))} left over)"
    if p.returncode == 0:
        tags.add("leftovers" if json.loads(p.stdout).get("leftovers") else "no leftovers")
        rules.check(placeable, f"{what}: devmesh-plan placed a mesh the reference refuses")
        rules.check(rc == 0, f"{what}: example_placement exit {rc}: {(so + se)[-2000:]!r}")
        if rules.check("error" not in mesh, f"{what}: the library refused what devmesh-plan placed: {mesh}"):
            compare_placed(what, mesh, json.loads(p.stdout), names, inst, shape, dims, bound)
        return what, f"library {lib}, devmesh-plan placed", secs, tags
    rules.check(not placeable, f"{what}: devmesh-plan refused a mesh the reference places: {p.stderr!r}")
    status, message = compare_refused(what, rc, mesh, p.returncode, p.stderr, p.stdout, n, kind == "refused")
    if kind == "refused" and message is not None:
        rules.check_message(what, message, dims, bound, names)
    return what, f"library {lib}, devmesh-plan refused ({status})", secs, tags


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
    print(f"{rules.checks} checks, {len(rules.failures)} failures")
    sys.exit(1 if rules.failures else 0)


if __name__ == "__main__":
    main()
