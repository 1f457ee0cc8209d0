#!/usr/bin/env python3
"""The held-out placement checker: random topologies (hosts of different
sizes, domains of different numbers of hosts, 1-3 levels outside the host,
ranks in block or scattered order), random shapes and random --place
requests through devmesh-plan --topology FILE --json, every answer checked
here from the topology file alone, never from the planner's other answers:

* placed: "world" is the number of ranks, "levels" the file's; the parent
  ranks are distinct and in range, the leftovers are the rest, sorted; the
  sizes are the shape (a 0 filled so that the mesh takes every rank); every
  dim's groups are the row-major groups of those parent ranks; every group
  of a placed dim lies within one instance of its level; in every group of
  every dim the members in one instance of any level are consecutive;
  every dim's "within" is the levels its groups lie within;
* refused: exit 2, one line on stderr naming a dim or saying the shape
  "cannot be tiled", the same message as the JSON error, nothing else on
  stdout (text mode: nothing at all);
* and a tiling of whole, equal subtrees (docs/TOPOLOGY.md: u_0 ranks of
  each used host, u_1 hosts of each used domain, ..., each dim's size split
  over the tiers, a placed dim only in the tiers inside its level) exists,
  by exhaustive search here, exactly when the planner places the mesh.

usage: check_placement.py DEVMESH_PLAN [CASES [SEED]]   (default 400 cases)
"""
import json
import math
import os
import random
import subprocess
import sys
import tempfile

import plan_checks
from plan_checks import check, failures

TOOL = None  # devmesh-plan, from the command line (main)
MAX_RANKS = 64
OUTER = ["domain", "switch", "switch2", "block"]


# --- random topologies --------------------------------------------------------

def random_topology(rng):
    """(level names innermost first, rows: each rank's instance names)."""
    outer = rng.randint(1, 3)
    names = ["host"] + OUTER[:outer] if rng.random() < 0.7 else ["host"] + sorted(rng.sample(OUTER, outer),
                                                                                  key=OUTER.index)
    # A typical fan-out per level, which some instances miss (uneven sizes).
    typical = [rng.choice([1, 2, 2, 3, 4, 4, 6, 8])] + [rng.choice([1, 2, 2, 3, 4]) for _ in names[1:]]
    tops = rng.choice([1, 2, 2, 3, 4])
    uneven = rng.choice([0.0, 0.15, 0.3, 0.5])
    reuse_names = rng.random() < 0.3  # "n0" in every domain: different hosts

    def fan(level):
        n = typical[level]
        return max(1, n + rng.choice([-2, -1, 1, 2])) if rng.random() < uneven else n

    rows = []

    def grow(level, path):
        count = tops if level == len(names) else fan(level)
        for k in range(count):
            if len(rows) >= MAX_RANKS:
                return
            if level == 0:
                rows.append(list(path))
                continue
            own = f"{names[level - 1][0]}{k}" if reuse_names else f"{names[level - 1][0]}{len(rows)}_{k}"
            grow(level - 1, [own] + path)

    grow(len(names), [])
    order = rng.random()
    if order < 0.2:
        rng.shuffle(rows)  # ranks scattered over the instances
    elif order < 0.35:
        # Round robin over the hosts, as srun --distribution=cyclic places.
        by_host = {}
        for r in rows:
            by_host.setdefault(tuple(r), []).append(r)
        queues = list(by_host.values())
        rows = []
        while any(queues):
            for q in queues:
                if q:
                    rows.append(q.pop())
    return names, rows


def write_topology(path, names, rows, rng):
    with open(path, "w") as f:
        f.write("# random topology\n")
        for i, row in enumerate(rows):
            if rng.random() < 0.05:
                f.write("\n")
            sep = "\t" if rng.random() < 0.1 else " "
            f.write(sep.join(f"{n}={v}" for n, v in zip(names, row)))
            f.write(f"  # rank {i}\n" if rng.random() < 0.1 else "\n")


def instances(names, rows):
    """inst[l][r]: rank r's instance of level l, as a key: its name with every outer one's."""
    return [[tuple(row[l:]) for row in rows] for l in range(len(names))]


# --- the reference: does a tiling of whole, equal subtrees exist? ------------

def children(names, inst):
    """kids[t]: {instance of tier t: its children}; tier 0 holds ranks, tier L the whole."""
    n, levels = len(inst[0]), len(names)
    kids = [dict() for _ in range(levels + 1)]
    for r in range(n):
        kids[0].setdefault(inst[0][r], set()).add(r)
        for t in range(1, levels):
            kids[t].setdefault(inst[t][r], set()).add(inst[t - 1][r])
        kids[levels].setdefault("all", set()).add(inst[levels - 1][r])
    return kids


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def split_exists(shape, bound, u):
    """Each dim's size as a product of tier factors, a placed dim only in tiers
    0..its level, the factors of tier t multiplying to u[t]."""
    tiers = len(u)

    def go(k, cap):
        if k == len(order):
            return all(c == 1 for c in cap)
        d = order[k]
        top = tiers - 1 if bound[d] is None else bound[d]

        def spread(t, rest, cap):
            if t > top:
                return rest == 1 and go(k + 1, cap)
            for f in divisors(math.gcd(rest, cap[t])):
                if spread(t + 1, rest // f, cap[:t] + [cap[t] // f] + cap[t + 1:]):
                    return True
            return False

        return spread(0, shape[d], cap)

    order = sorted(range(len(shape)), key=lambda d: (bound[d] is None, bound[d] or 0))
    return go(0, list(u))


def tiling_exists(names, inst, shape, bound):
    w = math.prod(shape)
    kids = children(names, inst)
    levels = len(names)

    def tier(t, usable, remaining, u):
        # usable: the children of tier t that can still be used (ranks for t = 0).
        counts = {i: len(c & usable) for i, c in kids[t].items()}
        if t == levels:
            return counts["all"] >= remaining and split_exists(shape, bound, u + [remaining])
        for v in divisors(remaining):
            if v > max(counts.values()):
                break
            if tier(t + 1, {i for i, c in counts.items() if c >= v}, remaining // v, u + [v]):
                return True
        return False

    return w <= len(inst[0]) and tier(0, set(range(len(inst[0]))), w, [])


# --- checking one answer -------------------------------------------------------

def row_major_groups(sizes, ranks, d):
    """The groups of dim d over root indices, as parent ranks, by smallest root index."""
    stride = math.prod(sizes[d + 1:])
    out = []
    for x in range(len(ranks)):
        if (x // stride) % sizes[d] == 0:
            out.append([ranks[x + k * stride] for k in range(sizes[d])])
    return out


def consecutive(keys):
    seen, last = set(), object()
    for k in keys:
        if k != last and k in seen:
            return False
        seen.add(k)
        last = k
    return True


def check_placed(what, out, names, inst, shape, dims, bound, within_field=True):
    """within_field=False: out has no "within" per dim (example_placement's form)."""
    n = len(inst[0])
    check(out.get("world") == n, f"{what}: world {out.get('world')}, {n} ranks in the file")
    check(out.get("levels") == names, f"{what}: levels {out.get('levels')}")
    sizes = [d["size"] for d in out["dims"]]
    check([d["name"] for d in out["dims"]] == dims, f"{what}: dims {[d['name'] for d in out['dims']]}")
    check(all(s == q for s, q in zip(sizes, shape) if q), f"{what}: sizes {sizes} for shape {shape}")
    if 0 in shape:
        check(math.prod(sizes) == n, f"{what}: a 0 filled to {sizes}, not all {n} ranks")
    ranks = out["parent_ranks"]
    check(len(ranks) == math.prod(sizes), f"{what}: {len(ranks)} parent ranks for sizes {sizes}")
    check(len(set(ranks)) == len(ranks) and all(0 <= r < n for r in ranks), f"{what}: parent ranks {ranks}")
    check(out["leftovers"] == sorted(set(range(n)) - set(ranks)), f"{what}: leftovers {out['leftovers']}")
    if failures and failures[-1].startswith(what):
        return
    for d, dim in enumerate(out["dims"]):
        groups = row_major_groups(sizes, ranks, d)
        check(dim["groups"] == groups, f"{what}: {dim['name']} groups {dim['groups']}, row-major {groups}")
        within = []
        for l, level in enumerate(names):
            at = [[inst[l][r] for r in g] for g in groups]
            if all(len(set(a)) == 1 for a in at):
                within.append(level)
            check(all(consecutive(a) for a in at), f"{what}: a {dim['name']} group not consecutive in a {level}")
            if bound[d] == l:
                check(level in within, f"{what}: a {dim['name']} group leaves its {level}: {groups}")
        check(not within_field or dim.get("within") == within,
              f"{what}: {dim['name']} within {dim.get('within')}, found {within}")


def check_message(what, message, dims, bound, names):
    """A refusal's message names a placed dim and its level or says that the
    shape cannot be tiled, and gives the ranks per instance of every level."""
    placed = [(dims[d], names[bound[d]]) for d in range(len(dims)) if bound[d] is not None]
    names_dim = any((f"dim '{d}'" in message and level in message) or f"{d}={level}" in message
                    for d, level in placed)
    check(names_dim or "cannot be tiled" in message, f"{what}: the message names no dim: {message!r}")
    check(all(f"per {level}: " in message for level in names), f"{what}: the message lacks the sizes: {message!r}")


def check_refused(what, p, text, dims, bound, names):
    """Exit 2 and one line on stderr, a message as check_message wants it
    ("dim 'tp' ... host", "dims tp=host, ep=domain ...", "cannot be tiled")."""
    check(p.returncode == 2, f"{what}: exit {p.returncode}, stderr {p.stderr!r}")
    lines = p.stderr.splitlines()
    if not check(len(lines) == 1 and lines[0].startswith("devmesh-plan: "), f"{what}: stderr {p.stderr!r}"):
        return
    message = lines[0][len("devmesh-plan: "):]
    check_message(what, message, dims, bound, names)
    if text:
        check(p.stdout == "", f"{what}: stdout {p.stdout!r}")
    else:
        check(json.loads(p.stdout) == {"error": "shape_mismatch", "message": message}, f"{what}: stdout {p.stdout!r}")


# --- the cases -------------------------------------------------------------------

def random_request(rng, names, inst):
    n = len(inst[0])
    ndim = rng.randint(1, 4)
    dims = rng.sample(["dp", "pp", "cp", "ep", "tp", "sp", "fsdp"], ndim)
    # The mesh size: any up to the ranks, or a product of fan-outs the
    # topology has, so that many cases can be placed.
    sizes = [len({k for k in inst[0]})] + [len(set(inst[l])) for l in range(1, len(names))]
    host_sizes = sorted({inst[0].count(h) for h in set(inst[0])})
    if rng.random() < 0.5:
        w = rng.randint(1, n)
    else:
        w = rng.choice(host_sizes) * rng.randint(1, max(1, min(sizes[0], n // max(host_sizes))))
        w = max(1, min(w, n))
    shape = [1] * ndim
    for p in factor(w):
        shape[rng.randrange(ndim)] *= p
    if ndim > 1 and rng.random() < 0.1 and n % (math.prod(shape) // shape[0]) == 0:
        shape[0] = 0  # filled from the ranks
    bound = [None] * ndim
    for d in range(ndim):
        if rng.random() < 0.45:
            bound[d] = rng.randrange(len(names))
    if all(b is None for b in bound):  # without --place nothing is placed
        bound[rng.randrange(ndim)] = rng.randrange(len(names))
    return dims, shape, bound


def factor(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def fill(shape, n):
    """dims_create for one 0: the rest of n."""
    if 0 not in shape:
        return shape
    return [n // math.prod(s for s in shape if s) if s == 0 else s for s in shape]


def run_case(i, rng, tmp):
    names, rows = random_topology(rng)
    inst = instances(names, rows)
    path = os.path.join(tmp, f"topology{i}.txt")
    write_topology(path, names, rows, rng)
    dims, shape, bound = random_request(rng, names, inst)
    place = ",".join(f"{dims[d]}={names[bound[d]]}" for d in range(len(dims)) if bound[d] is not None)
    args = ["--topology", path, "--shape", ",".join(map(str, shape)), "--names", ",".join(dims)]
    if place:
        args += ["--place", place]
    what = f"case {i}: {' '.join(args[2:])} over {len(rows)} ranks {names}"
    expect = tiling_exists(names, inst, fill(shape, len(rows)), bound)
    p = subprocess.run([TOOL, *args, "--json"], capture_output=True, text=True, timeout=60)
    if p.returncode == 0:
        check(expect, f"{what}: placed where no tiling exists")
        check(p.stderr == "", f"{what}: stderr {p.stderr!r}")
        check_placed(what, json.loads(p.stdout), names, inst, shape, dims, bound)
        return "placed"
    check(not expect, f"{what}: refused where a tiling exists: {p.stderr!r}")
    check_refused(what, p, False, dims, bound, names)
    if i % 4 == 0:
        check_refused(what + " (text)", subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60),
                      True, dims, bound, names)
    return "refused"


def main():
    global TOOL
    TOOL = sys.argv[1]
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 46
    rng = random.Random(seed)
    outcomes = {"placed": 0, "refused": 0}
    with tempfile.TemporaryDirectory(prefix="devmesh-place-") as tmp:
        for i in range(cases):
            outcomes[run_case(i, rng, tmp)] += 1
    print(f"{cases} cases (seed {seed}): {outcomes['placed']} placed, {outcomes['refused']} refused")
    check(cases < 300 or outcomes["placed"] >= cases // 3, f"too few placed cases: {outcomes}")
    check(cases < 300 or outcomes["refused"] >= cases // 10, f"too few refused cases: {outcomes}")
    print(plan_checks.tally())
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
