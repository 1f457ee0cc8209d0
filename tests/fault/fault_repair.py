"""The `repair` kind of run_fault.py: kill-and-repair runs of
repair_fault.cpp (HSDP replicate=4 x shard=2 over the first 8 ranks of the
job), judged against a reference of who must hold each root index.

    run_fault.py repair MPIEXEC N PROGRAM [--runs R] [--gloo]

N picks the plans:
  10  2 spares, no spawn: one death at a random step; two deaths at
      different steps; a death, then another during the repair; a spare
      dying in standby, then a death.
   8  no spare, spawn: a death at a random step; in every other run the
      spawned process that took its place dies too.
   9  1 spare and spawn: two deaths in turn, the second possibly the
      promoted spare (filled by a spawned process); two deaths at one step
      (the spare and a spawned process); 1 spare, no spawn: two deaths at
      one step, a refused repair (too few spares), the spare released.
Victims and steps come from DEVMESH_FAULT_SEED (default 27). With --gloo
every other run puts the shard dim on Gloo (the repaired mesh makes new
Gloo communicators for it, spawned processes included).

The reference: every survivor keeps its root index; the indices a repair
filled are those whose holders died (the kill claims say which); each
repair's filled indices go, lowest first, to the spares alive in standby
in ascending world rank, then to spawned processes; the last holder of
each index finishes, with shape (4, 2), the closed-form parameters, and
groups whose root-index sums are those of its coordinate (replicate
group of index x: sum over r of 2r + x % 2; shard group: 2 (x // 2) * 2
+ 1); spares no repair took are released. A refused repair: every
survivor reports invalid_argument naming the spawn, the spares released.
"""
import glob
import json
import os
import random
import signal
import subprocess
import tempfile
import time

STEPS = 10
BOUND = float(os.environ.get("DEVMESH_FAULT_BOUND", "60"))


def plans(ranks, runs, rng):
    out = []
    for i in range(runs):
        a, b = rng.sample(range(8), 2)
        s1 = rng.randrange(1, STEPS - 3)
        s2 = rng.randrange(s1 + 1, STEPS - 1)
        if ranks == 10:
            kind = i % 4
            kills = [[f"{a}@{s1}"], [f"{a}@{s1}", f"{b}@{s2}"], [f"{a}@{s1}", f"{b}@r1"],
                     ["w8@0", f"{a}@{s1}"]][kind]
            out.append((2, 0, kills))
        elif ranks == 8:
            # Every other run, the spawned process dies too (replaced like any member).
            out.append((0, 1, [f"{a}@{s1}"] + ([f"{a}@{s2}"] if i % 2 else [])))
        elif ranks == 9:
            kind = i % 4
            if kind == 2:  # too few spares, no spawn: refused
                out.append((1, 0, [f"{a}@{s1}", f"{b}@{s1}"]))
            elif kind == 3:  # two at once: the spare takes one, a spawned process the other
                out.append((1, 1, [f"{a}@{s1}", f"{b}@{s1}"]))
            else:
                second = a if kind == 0 else b  # the promoted spare, or another rank
                out.append((1, 1, [f"{a}@{s1}", f"{second}@{s2}"]))
        else:
            raise SystemExit(f"repair: no plans for {ranks} ranks (10, 8 or 9)")
    return out


def run_job(mpiexec, ranks, program, spares, spawn, kills, d, backend):
    """Runs one job until every live process reported (or BOUND); returns
    the reports by id and the stderr tail."""
    args = ["bash", mpiexec, "-ft", "-n", str(ranks), os.path.abspath(program), d, str(STEPS), str(spares),
            str(spawn), ",".join(kills) or "-"]
    env = dict(os.environ)
    if backend:
        env["DEVMESH_TEST_SHARD_BACKEND"] = backend
    job = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           start_new_session=True, env=env)
    start = time.monotonic()
    reports = {}
    while time.monotonic() - start < BOUND:
        reports = {}
        for p in glob.glob(os.path.join(d, "*.json")):
            with open(p) as f:
                reports[os.path.basename(p)[:-5]] = json.load(f)
        gone = {who for _, who in claims(d).values()}
        originals = all(f"w{w}" in reports for w in range(ranks) if f"w{w}" not in gone)
        ends = [r["end"] for r in reports.values()]
        if job.poll() is not None or (originals and ("refused" in ends or ends.count("finished") >= 8)):
            break
        time.sleep(0.05)
    time.sleep(0.3)
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    job.wait()
    return reports, job.stderr.read().decode(errors="replace")[-600:], time.monotonic() - start


def claims(d):
    """(root index held, process id) of each kill's victim, by kill number."""
    out = {}
    for p in glob.glob(os.path.join(d, "kill-*")):
        with open(p) as f:
            fields = f.read().split()
        if len(fields) == 2:
            out[int(p.rsplit("-", 1)[1])] = (int(fields[0]), fields[1])
    return out


def judge(ranks, spares, spawn, kills, reports, d):
    problems = []
    killed = claims(d)
    dead_spares = {int(k[1:].split("@")[0]) for n, k in enumerate(kills) if k.startswith("w") and n in killed}
    died = {killed[n][0] for n, k in enumerate(kills) if not k.startswith("w") and n in killed}
    died_originals = {killed[n][1] for n, k in enumerate(kills) if not k.startswith("w") and n in killed}
    survivors = {f"w{x}": x for x in range(8) if f"w{x}" not in died_originals}
    refused = [r for r in reports.values() if r["end"] == "refused"]
    if refused:
        for i, x in survivors.items():
            r = reports.get(i)
            if not r or r["end"] != "refused" or "spawn" not in r["message"]:
                problems.append(f"{i}: {r} (want a refused repair naming the spawn)")
        for w in range(8, ranks):
            if w not in dead_spares and reports.get(f"w{w}", {}).get("end") != "released":
                problems.append(f"spare w{w}: {reports.get(f'w{w}')} (want released)")
        return problems
    for i, x in survivors.items():
        r = reports.get(i)
        if not r:
            problems.append(f"survivor {i} did not report")
        elif r["end"] != "finished" or r["index"] != x:
            problems.append(f"survivor {i}: ended {r['end']} at index {r['index']} (want finished at {x}): "
                            f"{r['message']}")
    fills = [r["filled"] for i, r in reports.items() if i in survivors and r["end"] == "finished"]
    if fills and any(f != fills[0] for f in fills):
        problems.append(f"the survivors saw different repairs: {fills}")
    rounds = fills[0] if fills else []
    if sorted(set(x for f in rounds for x in f)) != sorted(died):
        problems.append(f"repairs filled {rounds}, but the holders of {sorted(died)} died")
    # Who must hold each index: the rule, over the spares alive in standby.
    standby = [w for w in range(8, ranks) if w not in dead_spares]
    holder = {x: f"w{x}" for x in range(8)}
    for f in rounds:
        for x in sorted(f):
            holder[x] = f"w{standby.pop(0)}" if standby else "spawned"
    for x in range(8):
        want = holder[x]
        got = [i for i, r in reports.items() if r["end"] == "finished" and r["index"] == x]
        if len(got) != 1 or (want != "spawned" and got[0] != want) or (want == "spawned" and not got[0].startswith("n")):
            problems.append(f"index {x}: held by {got} (want {want})")
    for i, r in reports.items():
        if r["end"] != "finished":
            continue
        x = r["index"]
        want_groups = {"replicate": sum(2 * q + x % 2 for q in range(4)), "shard": (x // 2) * 4 + 1}
        if r["shape"] != [4, 2] or r["names"] != "replicate,shard" or not r["params_ok"] or r["groups"] != want_groups:
            problems.append(f"{i} at index {x}: shape {r['shape']}, names {r['names']}, parameters "
                            f"{'correct' if r['params_ok'] else 'WRONG'}, groups {r['groups']} (want {want_groups})")
    for w in standby:
        if reports.get(f"w{w}", {}).get("end") != "released":
            problems.append(f"spare w{w} no repair took: {reports.get(f'w{w}')} (want released)")
    return problems


def repair(mpiexec, ranks, program, flags):
    runs = int(flags[flags.index("--runs") + 1]) if "--runs" in flags[:-1] else 4
    rng = random.Random(int(os.environ.get("DEVMESH_FAULT_SEED", "27")))
    bad = 0
    times = []
    for n, (spares, spawn, kills) in enumerate(plans(ranks, runs, rng)):
        backend = "gloo" if "--gloo" in flags and n % 2 else None
        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as d:
            reports, stderr, took = run_job(mpiexec, ranks, program, spares, spawn, kills, d, backend)
            problems = judge(ranks, spares, spawn, kills, reports, d)
            ms = [t for r in reports.values() for t in r.get("repair_ms", [])]
        what = (f"run {n}: {ranks} ranks, {spares} spare(s), spawn {'on' if spawn else 'off'}, kills {','.join(kills)}"
                + (f", shard on {backend}" if backend else ""))
        if problems:
            bad += 1
            print(f"FAIL {what}:\n  " + "\n  ".join(problems) + f"\n  stderr: {stderr}", flush=True)
        else:
            print(f"ok   {what} ({took:.1f} s; repairs {min(ms, default=0):.0f}-{max(ms, default=0):.0f} ms)",
                  flush=True)
            times += ms
    print(f"{runs - bad} of {runs} runs as required")
    return 1 if bad else 0
