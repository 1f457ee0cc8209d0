#!/usr/bin/env python3
"""run_fault.py: the fault suite's one harness. It starts a job whose ranks
die (SIGKILL) or stop (SIGSTOP) at planned points, under the tests'
launcher with ULFM (`mpiexec -ft`), and judges it by what the survivors
report. A job with a dead rank may stay in MPI_Finalize (ULFM): it is ended
once every survivor has reported, or after a bound. The test table
(tests/meson.build, launcher 'ulfm' with 'kill') starts it as

    run_fault.py KIND MPIEXEC N PROGRAM [ARGS...]

KIND:
  hsdp          PROGRAM is hsdp_fault.cpp; ARGS: [--gloo] [--local-revoke]
                [--runs R]. Kills ranks of an HSDP mesh of N ranks
                (replicate=N/2, shard=2, fault_tolerance; N even, at least 4)
                at chosen points, R times (default DEVMESH_FAULT_RUNS, else
                50): every survivor ends (no hang), its operations failed
                with PROC_FAILED or REVOKED, it agreed on the failed set, and
                the mesh it shrank to along replicate has the groups a
                brute-force reference gives (where no replicate slice is
                left, at N = 4, the same invalid_argument). Then deadlines:
                a rank stops instead of dying, on a mesh with a 2 s deadline;
                every other rank must fail with TIMEOUT or REVOKED within the
                deadline plus one second of entering the operation it was cut
                from. With --gloo the shard dim also runs on Gloo, with
                --local-revoke on the test plugin localrevoke3, whose revoke
                stays on the calling rank as NCCL's does.
  create-fails  PROGRAM is create_fails.cpp, ARGS WHERE WHEN (see there), N
                = 4: every first call failed (rank 1 with the failure it was
                given, the others with REVOKED where rank 1 revoked a
                communicator of devmesh's, with rank 1's failure where it is
                shared over MPI_COMM_WORLD), and every second call made the
                right mesh.
  requests      PROGRAM is request_fault.cpp, ARGS kill, N at least 3: the
                last rank dies while the others wait on an irecv from it and
                on the started collectives the backend has; every survivor
                reports, each wait ended with proc_failed or revoked within
                10 s.
  repair        PROGRAM is repair_fault.cpp, N 10, 8 or 9: kill-and-repair
                runs judged against a reference of who holds each root
                index (fault_repair.py says which runs and what is judged).
  elastic       an elastic example (HSDP replicate=4 x shard=2, rank 5 killed
                mid-run), N = 8: the 6 ranks of the 3 whole replicas finish
                with correct parameters on a (3, 2) mesh, rank 4 (the dead
                rank's partner) reports itself a spare.

    run_fault.py judge-elastic FILE

judges FILE, the output of an elastic run made elsewhere (a Slurm job, the
two-host bed), as `elastic` does.
"""
import json
import re
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

import fault_repair

RANKS, SHAPE = 8, (4, 2)  # set by hsdp (N)
POINTS = ["creation", "first_comm", "shard_allreduce", "replicate_allreduce", "p2p", "agree"]
BOUND = float(os.environ.get("DEVMESH_FAULT_BOUND", "60"))
DEADLINE = 2.0
STOPS = ["stop_shard_allreduce", "stop_replicate_allreduce", "stop_p2p"]


def expected_shrink(failed):
    """Brute force: old root index x = 2*replicate + shard; a replicate
    slice with a failed rank is dropped."""
    dropped = {x // SHAPE[1] for x in failed}
    kept = [x for x in range(RANKS) if x // SHAPE[1] not in dropped]
    if not kept:  # no slice left: the same error on every survivor
        return {x: {"error": "invalid_argument"} for x in range(RANKS) if x not in failed}
    out = {}
    for x in range(RANKS):
        if x in failed:
            continue
        if x not in kept:
            out[x] = "spare"
            continue
        out[x] = {
            "index": kept.index(x),
            "shape": [SHAPE[0] - len(dropped), SHAPE[1]],
            "shard": [y for y in kept if y // SHAPE[1] == x // SHAPE[1]],
            "replicate": [y for y in kept if y % SHAPE[1] == x % SHAPE[1]],
        }
    return out


def run_once(mpiexec, program, victim, point, second, backend=None):
    env = dict(os.environ, DEVMESH_TEST_DEADLINE=str(DEADLINE))
    if backend:
        env["DEVMESH_TEST_SHARD_BACKEND"] = backend
    stop = point.startswith("stop_")
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as d:
        args = ["bash", mpiexec, "-ft", "-n", str(RANKS), program, d, str(victim), point]
        if second >= 0:
            args.append(str(second))
        dead = {victim} if point != "none" else set()
        if second >= 0 and point not in ("none", "creation"):
            dead.add(second)
        want = {r for r in range(RANKS) if r not in dead}
        start = time.monotonic()
        job = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True, env=env)
        reports = {}
        while time.monotonic() - start < BOUND:
            for r in want - reports.keys():
                p = os.path.join(d, f"rank-{r}.json")
                if os.path.exists(p):
                    with open(p) as f:
                        reports[r] = json.load(f)
            if reports.keys() == want or (job.poll() is not None and reports.keys() != want
                                          and time.monotonic() - start > 5):
                break
            time.sleep(0.05)
        took = time.monotonic() - start
        try:
            if stop:
                raise subprocess.TimeoutExpired(args, 0)  # the stopped rank never ends
            job.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
        problems = []
        missing = sorted(want - reports.keys())
        if missing:
            problems.append(f"no report from ranks {missing} within {BOUND:.0f} s (hang or crash): "
                            + job.stderr.read().decode(errors="replace")[-800:])
        failed = sorted(dead)
        shrunk = expected_shrink(set(failed)) if point not in ("none", "creation") else None
        for r, rep in sorted(reports.items()):
            if stop:
                if rep["status"] not in ("timeout", "revoked"):
                    problems.append(f"rank {r}: status {rep['status']} (want timeout or revoked)")
                elif rep["op_ms"] > 1000 * (DEADLINE + 1):
                    problems.append(f"rank {r}: its {rep['where']} failed after {rep['op_ms']:.0f} ms, past the "
                                    f"deadline of {DEADLINE:.0f} s plus one second")
                continue
            if point == "none":
                if rep["status"] != "success" or rep["shrunk"] is not None:
                    problems.append(f"rank {r}: {rep} without any death")
                continue
            if rep["status"] not in ("proc_failed", "revoked"):
                problems.append(f"rank {r}: status {rep['status']} (want proc_failed or revoked)")
            if point == "creation":
                if rep["where"] != "creation" or rep["shrunk"] is not None:
                    problems.append(f"rank {r}: a death during creation, yet {rep}")
                continue
            if rep["failed"] != failed:
                problems.append(f"rank {r}: failed set {rep['failed']}, want {failed}")
            want_s = shrunk[r]
            got = rep["shrunk"]
            if want_s == "spare":
                if got != "spare":
                    problems.append(f"rank {r}: want a spare (null mesh), got {got}")
            elif "error" in want_s:
                if got != want_s:
                    problems.append(f"rank {r}: shrink gave {got}, want {want_s} (no slice left)")
            elif not isinstance(got, dict) or "error" in got:
                problems.append(f"rank {r}: shrink gave {got}, want {want_s}")
            else:
                for k, v in want_s.items():
                    if got.get(k) != v:
                        problems.append(f"rank {r}: shrunk {k} = {got.get(k)}, want {v}")
                if got.get("mapped") != got.get("index"):
                    problems.append(f"rank {r}: shrunk_index(old) = {got.get('mapped')}, its index {got.get('index')}")
        if stop and reports and not any(rep["status"] == "timeout" for rep in reports.values()):
            problems.append("no rank reported timeout (its own deadline passing)")
        # Detection latency: from the death to the last survivor's first error.
        detect = None
        death = os.path.join(d, "death")
        errors = [rep["error_us"] for rep in reports.values() if rep.get("error_us", 0) > 0]
        if os.path.exists(death) and errors and not stop:
            with open(death) as f:
                text = f.read().strip()
            if text:
                detect = (max(errors) - int(text)) / 1000.0
        return problems, took, detect


def hsdp(mpiexec, ranks, program, flags):
    global RANKS, SHAPE
    RANKS = ranks
    if RANKS < 4 or RANKS % 2:
        sys.exit(f"{RANKS} ranks: the mesh (P/2, 2) needs an even P of at least 4")
    SHAPE = (RANKS // 2, 2)

    def option(name, default):
        return flags[flags.index(name) + 1] if name in flags[:-1] else default

    gloo = "--gloo" in flags
    local_revoke = "--local-revoke" in flags
    runs = int(option("--runs", os.environ.get("DEVMESH_FAULT_RUNS", "50")))
    rng = random.Random(int(os.environ.get("DEVMESH_FAULT_SEED", "27")))
    plan = [(rng.randrange(RANKS), "none", -1, None)]
    for i in range(runs - 1):
        point = POINTS[i % len(POINTS)]
        victim = rng.randrange(RANKS)
        # Every fourth run past creation, a second rank dies during the shrink.
        second = -1
        if i % 4 == 3 and point != "creation":
            second = rng.choice([r for r in range(RANKS) if r != victim])
        plan.append((victim, point, second, None))
    # Two replicate slices (P = 4): a death in each, the second during the
    # shrink, leaves no slice, whatever the random plan drew.
    if SHAPE[0] == 2:
        plan.append((0, "replicate_allreduce", RANKS - 1, None))
    # Deadlines: a rank stops at each point (each stop costs the deadline;
    # a second stop at the same point, of another rank, checked nothing new).
    for point in STOPS:
        plan.append((rng.randrange(RANKS), point, -1, None))
    # The shard dim on Gloo, or on a backend whose revoke stays local: a
    # death at each point of its collectives, and a stop.
    for backend, wanted in (("gloo", gloo), ("localrevoke3", local_revoke)):
        if wanted:
            for point in ["shard_allreduce", "p2p", "replicate_allreduce", "stop_shard_allreduce", "stop_p2p"]:
                plan.append((rng.randrange(RANKS), point, -1, backend))
    bad = 0
    latencies = []
    for n, (victim, point, second, backend) in enumerate(plan):
        problems, took, detect = run_once(mpiexec, program, victim, point, second, backend)
        verb = "stops" if point.startswith("stop_") else "dies"
        what = (f"run {n}: rank {victim} {verb} at {point.replace('stop_', '')}"
                + (f", rank {second} during the shrink" if second >= 0 else "") + (f" (shard on {backend})" if backend else ""))
        latency = f", last survivor's error {detect:.0f} ms after the death" if detect is not None else ""
        if detect is not None and point not in ("creation", "first_comm", "agree"):
            latencies.append(detect)
        if problems:
            bad += 1
            print(f"FAIL {what}:\n  " + "\n  ".join(problems), flush=True)
        else:
            print(f"ok   {what} ({took:.1f} s{latency})", flush=True)
    if latencies:
        latencies.sort()
        print(f"detection latency, death in an allreduce or point to point, to the last survivor's error: "
              f"median {latencies[len(latencies) // 2]:.0f} ms, max {latencies[-1]:.0f} ms over {len(latencies)} runs")
    print(f"{len(plan) - bad} of {len(plan)} runs as required")
    return 1 if bad else 0



def run_survivors(mpiexec, ranks, args, want, pattern):
    """Runs the job with ULFM in a session of its own until `want` lines of
    its output match `pattern` (every survivor has reported), the job ends,
    or BOUND seconds pass; then ends it. Returns its output."""
    with tempfile.TemporaryFile() as out:
        job = subprocess.Popen(["bash", mpiexec, "-ft", "-n", str(ranks)] + args, stdout=out,
                               stderr=subprocess.STDOUT, start_new_session=True)
        start = time.monotonic()
        text = ""
        while time.monotonic() - start < BOUND:
            out.seek(0)
            text = out.read().decode(errors="replace")
            if len(re.findall(pattern, text, re.M)) >= want or job.poll() is not None:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        try:
            os.killpg(job.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        job.wait()
        out.seek(0)
        return out.read().decode(errors="replace")


def create_fails(mpiexec, ranks, program, args):
    where, when = args
    if where == "shrink":
        # Rank 3 dies; the shrink along replicate leaves the (1, 2) mesh of
        # old root indices 0 and 1, rank 2 a spare.
        members = 3
        wants = ["rank 0: first shrink revoked, second shrink ok, shape 1 2, shard group 0 1, failed 3",
                 "rank 1: first shrink backend, second shrink ok, shape 1 2, shard group 0 1, failed 3",
                 "rank 2: first shrink revoked, second shrink ok, spare, failed 3"]
    elif where == "shrink-all":
        # Rank 3 dies; the shrink keeps every survivor: the 1-D mesh of 0, 1, 2.
        members = 3
        wants = [f"rank {r}: first shrink {'backend' if r == 1 else 'revoked'}, second shrink ok, shape 3, "
                 "replicate_shard group 0 1 2, failed 3" for r in range(3)]
    else:
        # The (2, 2) mesh of ranks 0-3 in rank order: rank r's replicate
        # group is {r mod 2, r mod 2 + 2}, its shard group {r - r mod 2, r - r mod 2 + 1}.
        members = 4
        wants = [f"rank {r}: first create {'backend' if r == 1 or where == 'root' else 'revoked'}, second create "
                 f"ok, replicate group {r % 2} {r % 2 + 2}, shard group {r - r % 2} {r - r % 2 + 1}"
                 for r in range(4)]
    text = run_survivors(mpiexec, ranks, [program, where, when], members, rf"^rank [0-{members - 1}]: ")
    print(text, end="")
    lines = set(text.splitlines())
    missing = [w for w in wants if w not in lines]
    for w in missing:
        print(f"FAIL: missing '{w}'")
    if not missing:
        print("ok: the first call failed on every member, and the second made the right mesh")
    return 1 if missing else 0


def requests(mpiexec, ranks, program, args):
    survivors = ranks - 1
    text = run_survivors(mpiexec, ranks, [program] + args, survivors, r"^rank [0-9]+: .*ended in")
    print(text, end="")
    ok = re.findall(r"^rank ([0-9]+): ((?:[a-z]+ (?:proc_failed|revoked), )+)started [0-9]+ collective\(s\), "
                    r"ended in [0-9.]+ s ok$", text, re.M)
    if len({r for r, _ in ok}) != survivors or "FAIL" in text:
        print(f"FAIL: {len(ok)} of {survivors} survivors reported every wait ended with proc_failed or revoked")
        return 1
    print("ok: every survivor's waits ended with proc_failed or revoked")
    return 0


def judge_elastic(text):
    correct = len(re.findall(r"^rank [0-9]+: finished 10 steps on a \(3, 2\) mesh after 1 shrink\(s\), "
                             r"parameters correct$", text, re.M))
    spare = len(re.findall(r"^rank 4: spare after the shrink \(failed root indices: 5\)$", text, re.M))
    if correct != 6 or spare != 1:
        print(f"FAIL: {correct} of 6 survivors finished correctly, {spare} of 1 spare reported")
        return 1
    print("ok: 6 survivors finished with correct parameters, rank 4 became a spare")
    return 0


def elastic(mpiexec, ranks, program, args):
    text = run_survivors(mpiexec, ranks, [program] + args, 7, r"^rank [0-9]+: (finished|spare)")
    print(text, end="")
    return judge_elastic(text)


REPAIRED = re.compile(r"^(member|spare|spawned) ([0-9]+): finished ([0-9]+) steps on a \(([0-9]+), ([0-9]+)\) mesh "
                      r"at root index ([0-9]+) after ([0-9]+) repair\(s\), parameters (correct|WRONG)$", re.M)


def judge_elastic_repair(text, ranks, steps=10, victim=5):
    """The repair mode's lines against a reference: members 0-7 but the
    victim keep their root index, the victim's index goes to spare 8 (the
    lowest parent rank of the spares) or, with no spare, to spawned process
    0; all 8 on the (4, 2) mesh after one repair with the parameters of a
    run with no failure; spares 9..N-1 released."""
    spares = ranks - 8
    want = {x: ("member", x) for x in range(8) if x != victim}
    want[victim] = ("spare", 8) if spares > 0 else ("spawned", 0)
    problems, held = [], {}
    for who, n, got_steps, rep, shard, index, repairs, params in REPAIRED.findall(text):
        name, index = f"{who} {n}", int(index)
        if (int(got_steps), int(rep), int(shard), int(repairs), params) != (steps, 4, 2, 1, "correct"):
            problems.append(f"{name}: {got_steps} steps on a ({rep}, {shard}) mesh after {repairs} repair(s), "
                            f"parameters {params} (want {steps} steps on (4, 2) after 1 repair, correct)")
        if index in held:
            problems.append(f"root index {index} held by {held[index][0]} {held[index][1]} and by {name}")
        held[index] = (who, int(n))
    for x in range(8):
        if held.get(x) != want[x]:
            who = " ".join(map(str, held[x])) if x in held else "nobody"
            problems.append(f"root index {x} held by {who}, want {want[x][0]} {want[x][1]}")
    released = sorted(int(r) for r in re.findall(r"^spare ([0-9]+): released, no repair needed it$", text, re.M))
    if released != list(range(9, ranks)):
        problems.append(f"spares released: {released}, want {list(range(9, ranks))}")
    if problems:
        print("FAIL: " + "\n  ".join(problems))
        return 1
    newcomer = " ".join(map(str, want[victim]))
    print(f"ok: 8 members finished on a (4, 2) mesh with correct parameters, every survivor at its root index, "
          f"{newcomer} at the dead rank's index {victim}" + (f", spares {released} released" if released else ""))
    return 0


def elastic_repair(mpiexec, ranks, program, args):
    steps, victim = (int(args[1]), int(args[2])) if len(args) > 2 else (10, 5)
    text = run_survivors(mpiexec, ranks, [program] + args, 8 + max(0, ranks - 9),
                         r"^(member|spare|spawned) [0-9]+: (finished|released)")
    print(text, end="")
    return judge_elastic_repair(text, ranks, steps, victim)


def main():
    kinds = {"hsdp": hsdp, "create-fails": create_fails, "requests": requests, "elastic": elastic,
             "repair": fault_repair.repair, "elastic-repair": elastic_repair}
    if len(sys.argv) == 3 and sys.argv[1] == "judge-elastic":
        with open(sys.argv[2], errors="replace") as f:
            sys.exit(judge_elastic(f.read()))
    if len(sys.argv) == 4 and sys.argv[1] == "judge-elastic-repair":
        with open(sys.argv[2], errors="replace") as f:
            sys.exit(judge_elastic_repair(f.read(), int(sys.argv[3])))
    if len(sys.argv) < 5 or sys.argv[1] not in kinds:
        sys.exit("usage: run_fault.py {hsdp|create-fails|requests|elastic|elastic-repair} MPIEXEC N PROGRAM [ARGS...]\n"
                 "       run_fault.py judge-elastic FILE\n"
                 "       run_fault.py judge-elastic-repair FILE N")
    kind, mpiexec, ranks, program, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5:]
    sys.exit(kinds[kind](mpiexec, ranks, program, args))


if __name__ == "__main__":
    main()
