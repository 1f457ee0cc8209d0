"""The part of docs/BENCHMARKS.md on creation with a placement
(bench/placement/placement.cpp), for bench/report.py: its target's rows and
its section. Reads placement.tsv and placement_conditions.txt of DATA_DIR;
left out when the records are missing. Standard library only.
"""
import os

METHODS = [
    ("plain", "plain `Mesh::create`, then comm(dim) per dim"),
    ("host_aware", "with `host_aware`, then comm(dim) per dim"),
    ("placement", "**with `placement`**, then comm(dim) per dim"),
    ("create_plain", "plain `Mesh::create` alone"),
    ("create_host_aware", "`Mesh::create` with `host_aware` alone"),
    ("create_placement", "**`Mesh::create` with `placement` alone**"),
]
LEVELS = [
    ("ids", "levels from DEVMESH_HOST_ID (hosts of 2 ranks) and DEVMESH_TOPOLOGY (domains of 4, switches of 8)"),
    ("shared", "hosts by MPI_COMM_TYPE_SHARED (no DEVMESH_HOST_ID; one host, this machine), no other level"),
]


def read(data, read_records, read_conditions):
    path = os.path.join(data, "placement_conditions.txt")
    rows = read_records(os.path.join(data, "placement.tsv"), "placement")
    for r in rows:
        for k in ("colls", "calls", "counts_vary"):
            if k in r:
                r[k] = int(r[k])
    return {"rows": rows, "cond": read_conditions(path) if os.path.exists(path) else {}}


def _runs(p):
    """{(levels, ranks): {method: record}}, in the order of LEVELS then ranks."""
    runs = {}
    for r in p["rows"]:
        runs.setdefault((r["levels"], r["ranks"]), {})[r["method"]] = r
    order = [k for k, _ in LEVELS]
    return dict(sorted(runs.items(), key=lambda kv: (order.index(kv[0][0]) if kv[0][0] in order else 99, kv[0][1])))


def _ratio(r):
    return "%.3f [%.3f–%.3f]" % (r["median"], r["q1"], r["q3"]) if r else "–"


def _extra(ix, full):
    """Collectives over the parent placement makes beyond host_aware, or None."""
    pre = "" if full else "create_"
    a, b = ix.get(pre + "placement"), ix.get(pre + "host_aware")
    if not (a and b) or a.get("counts_vary") or b.get("counts_vary"):
        return None
    return a["colls"] - b["colls"]


def target_rows(p):
    rows = []
    runs = _runs(p)
    for levels, text in LEVELS:
        mine = [(ranks, ix) for (lv, ranks), ix in runs.items() if lv == levels]
        if not mine:
            continue
        extras = [_extra(ix, False) for _, ix in mine] + [_extra(ix, True) for _, ix in mine]
        counted = "; ".join(
            "%d ranks: %d (placement) against %d (host_aware) and %d (plain)"
            % (ranks, ix["create_placement"]["colls"], ix["create_host_aware"]["colls"], ix["create_plain"]["colls"])
            for ranks, ix in mine if all(("create_" + m) in ix for m in ("placement", "host_aware", "plain")))
        ok = all(e is not None and e <= 1 for e in extras)
        rows.append(["creation with a placement makes at most one collective over the parent (the allgather of "
                     "the level strings) more than with host_aware; " + text,
                     "collective calls over the parent per creation, counted by the tests' PMPI layer: " + counted,
                     "**met**" if ok else "**missed**"])
    return rows


def _table(ix, fmt_time, table):
    rows = []
    for key, label in METHODS:
        r = ix.get(key)
        if not r:
            continue
        base = "" if key in ("plain", "host_aware", "placement") else "create_"
        name = key[len(base):]
        over_aware = ix.get("paired_%s_over_%shost_aware" % (key, base)) if name == "placement" else None
        over_plain = ix.get("paired_%s_over_%splain" % (key, base)) if name != "plain" else None
        o = ix.get("outside_" + key)
        rows.append([label, "%s [%s–%s]" % (fmt_time(r["median"]), fmt_time(r["q1"]), fmt_time(r["q3"])),
                     _ratio(over_aware) if name == "placement" else ("1" if name == "host_aware" else ""),
                     _ratio(over_plain) if name != "plain" else "1",
                     "%d%s" % (r["colls"], " (varies)" if r.get("counts_vary") else ""), str(r["calls"]),
                     str(r["comms"]), fmt_time(o["median"]) if o else "–"])
    return table(["method", "per creation, median [IQR]", "÷ host_aware, paired [IQR]", "÷ plain, paired [IQR]",
                  "collectives over the parent", "data calls", "comms made", "outside the collective calls"],
                 rows)


def _dims_note(runs):
    """What comm(dim) adds, from the counts: the same in every method, or ""."""
    added = set()
    for ix in runs.values():
        for m in ("plain", "host_aware", "placement"):
            a, b = ix.get(m), ix.get("create_" + m)
            if not (a and b):
                return ""
            added.add((a["colls"] - b["colls"], a["comms"] - b["comms"], ix["plain"]["ranks"]))
    per_run = {}
    for colls, comms, ranks in added:
        per_run.setdefault(ranks, set()).add((colls, comms))
    if any(len(v) != 1 for v in per_run.values()):
        return ""
    colls = {next(iter(v))[0] for v in per_run.values()}
    if colls != {0}:
        return ""
    return (" The dims' communicators cost the same in all three methods: `comm(dim)` for every dim adds no "
            "collective over the parent and one communicator per dim (%s), whatever the creation's options."
            % ", ".join("%d at %d ranks" % (next(iter(v))[1], r) for r, v in sorted(per_run.items())))


def _time_note(runs, fmt_time):
    """Placement's time beyond host_aware's, `Mesh::create` alone, and how much of it is outside the
    collective calls, per run; or "" without the records."""
    parts = []
    texts = {"ids": "host ids", "shared": "hosts by MPI_COMM_TYPE_SHARED"}
    for (levels, ranks), ix in runs.items():
        a, b = ix.get("create_placement"), ix.get("create_host_aware")
        oa, ob = ix.get("outside_create_placement"), ix.get("outside_create_host_aware")
        if not all((a, b, oa, ob)):
            return ""
        d, o = a["median"] - b["median"], oa["median"] - ob["median"]
        parts.append("%d ranks, %s: %s%s per creation, of which %s%s per rank outside the collective calls "
                     "(%s against %s)" % (ranks, texts.get(levels, levels), "+" if d >= 0 else "−", fmt_time(abs(d)),
                                          "+" if o >= 0 else "−", fmt_time(abs(o)), fmt_time(oa["median"]),
                                          fmt_time(ob["median"])))
    return ("Placement's time beyond host_aware's (`Mesh::create` alone, difference of the medians): %s. "
            "Outside the collective calls each rank reads every rank's levels and tiles them (`levels_of`, "
            "`place()`). The rest of the difference is spent inside the collective calls: with host ids the "
            "same calls as host_aware's, the allgatherv carrying the level strings beside the host strings; "
            "with hosts by MPI_COMM_TYPE_SHARED one allgatherv of the level reports more; and, with 4 or 8 "
            "ranks sharing a core, waiting there for the ranks still at that work (as devmesh's own work "
            "costs several times its length in \"Paired, per MPI\" above). This run does not separate the "
            "two.\n"
            % "; ".join(parts))


def section(p, fmt_time, table):
    """The section, or "" when bench/placement did not run."""
    runs = _runs(p)
    if not runs:
        return ""
    c = p["cond"]
    first = next(iter(runs.values()))
    any_row = next(iter(first.values()))
    out = ["## Creation with a placement\n",
           "What `MeshOptions::placement` adds to creation, measured by `bench/placement/placement.cpp` against "
           "the same creation with `host_aware` and against plain creation (row-major over the parent), each "
           "as a program writes it (`Mesh::create`, then `comm(dim)` for every dim: the mesh with all its "
           "dims' communicators) and `Mesh::create` alone. The six methods run in batches of %s creations of one "
           "method, the batches alternating in one run, their order rotating every round; each creation "
           "starts after a barrier and only the creation is timed (freeing is not); a batch's time is the "
           "slowest rank's mean per creation. The *paired ratio* of A over B is the median over rounds of "
           "A's batch time over B's in the same round, IQR in brackets. Shapes: (dp, ep, tp) = (2, 2, 2) at 8 "
           "ranks, (pp, dp, ep, tp) = (2, 2, 2, 2) at 16. Each rank sets its levels from its rank before "
           "any creation. *Collectives over the parent*: the collective calls over MPI_COMM_WORLD "
           "(allreduce, allgather(v), bcast, comm_split_type) during one creation, counted by the tests' PMPI "
           "layer (`tests/support/comm_counter`); *data calls*: every collective call other than a communicator's "
           "creation, and every point-to-point call, on any communicator (the node communicator's included); "
           "*comms made*: communicators created, freed or not. Counts are rank 0's, the same for every "
           "creation of a method (marked where not). *Outside the collective calls*: a creation's time less "
           "the time inside the collective calls and communicator creations the same layer times, the mean "
           "over ranks (median over rounds): the creation's own work between them, with its local MPI "
           "calls.\n"
           % any_row.get("iters", "?"),
           "Conditions: %s cores (%s), one machine, oversubscribed; MPICH %s (%s), yield shim %s, "
           "MPIR_CVAR_NOLOCAL=%s but 0 for the runs with hosts by MPI_COMM_TYPE_SHARED (with 1, MPICH makes "
           "every rank a node of its own; with 0, starting and ending the 16-rank jobs takes seconds, outside every "
           "figure); priority %s; buildtype %s; measured %s, load average %s at the start and %s at "
           "the end (other users' jobs), %s s for the section.\n"
           % (c.get("nproc", "?"), c.get("cpu", "?"), c.get("mpich", "?"), c.get("mpich_device", "?"),
              c.get("yield_shim", "?"), c.get("nolocal", "?"),
              "real-time (`%s`)" % c["priority"] if c.get("priority", "").startswith("chrt") else c.get("priority", "?"),
              c.get("buildtype", "?"), c.get("date", "?"), c.get("load_start", "?"), c.get("load_end", "?"),
              c.get("run_seconds", "?"))]
    texts = dict(LEVELS)
    for (levels, ranks), ix in runs.items():
        r = next(iter(ix.values()))
        out.append("### %d ranks, %s\n" % (ranks, texts.get(levels, levels)))
        out.append("Shape (%s) = (%s), placement `%s`, %s rounds, MPIR_CVAR_NOLOCAL=%s.\n"
                   % (r["names"].replace(",", ", "), r["shape"].replace("x", ", "), r["place"],
                      ix["plain"]["n"] if "plain" in ix else "?", r.get("nolocal", "?")))
        out.append(_table(ix, fmt_time, table))
        out.append("")
    notes = []
    for levels, _ in LEVELS:
        extra = sorted({e for (lv, _), ix in runs.items() if lv == levels for e in (_extra(ix, True), _extra(ix, False))
                        if e is not None})
        if extra:
            notes.append("%s: %s" % ("with DEVMESH_HOST_ID and DEVMESH_TOPOLOGY" if levels == "ids"
                                     else "with hosts by MPI_COMM_TYPE_SHARED",
                                     " or ".join("%+d" % e for e in extra)))
    if notes:
        out.append("Collective calls over the parent that placement makes beyond host_aware, per creation: %s. "
                   "With host ids the level strings travel in the allgatherv of the host strings that host_aware "
                   "makes anyway; with hosts by MPI_COMM_TYPE_SHARED, host_aware gathers only each rank's node "
                   "leader (after MPI_Comm_split_type and an allreduce over the node communicator, which is "
                   "the communicator *comms made* counts for `Mesh::create` alone), and placement gathers the "
                   "level reports in one allgatherv more (`gather_places`, lib/runtime/levels.cpp).%s\n"
                   % ("; ".join(notes), _dims_note(runs)))
    out.append(_time_note(runs, fmt_time))
    return "\n".join(out)
