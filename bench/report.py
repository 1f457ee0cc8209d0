#!/usr/bin/env python3
"""Turns the records of bench/run-all into docs/BENCHMARKS.md and its plots.

    python3 bench/report.py DATA_DIR OUTPUT_MD PLOT_DIR

DATA_DIR holds conditions.txt, creation.tsv, collectives.tsv, optionally
creation_1rank.tsv, creation_shared.tsv and collectives_shared.tsv and, when the
bookkeeping benchmark ran, bookkeeping.txt; gloo.tsv and gloo_conditions.txt
when bench/run-gloo ran (a build with the Gloo plugin); alltoallv.tsv,
gloo_alltoallv.tsv, overlap.tsv and vcoll_conditions.txt for the variable-size
and started collectives (bench/report_vcoll.py); placement.tsv and
placement_conditions.txt for creation with a placement
(bench/report_placement.py). Plots are drawn by gnuplot
(pngcairo, else png). Standard library only.
"""
import math
import os
import subprocess
import sys
import tempfile

import report_placement
import report_vcoll

# --------------------------------------------------------------------------
# records


def read_records(path, kind):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if not parts or parts[0] != kind:
                continue
            row = {}
            for p in parts[1:]:
                k, _, v = p.partition("=")
                try:
                    row[k] = float(v) if k in ("median", "q1", "q3", "min", "max") else v
                except ValueError:
                    row[k] = v
            for k in ("ranks", "comms", "n", "bytes", "iters"):
                if k in row:
                    row[k] = int(row[k])
            rows.append(row)
    return rows


def read_conditions(path):
    c = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            c[k] = v
    return c


# --------------------------------------------------------------------------
# formatting


def ms(us):
    v = us / 1000.0
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def us(v):
    """Microseconds, 3 significant digits at most."""
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def fmt_time(us):
    """Microseconds, printed in the unit that suits them."""
    if us >= 1000:
        return ms(us) + " ms"
    if us >= 1:
        return "%.1f µs" % us
    return "%.0f ns" % (us * 1000)


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------
# creation

METHODS = [
    ("hand_split", "hand-written MPI_Comm_split, one per dim (the seed tutorial)"),
    ("hand_cart", "hand-written MPI_Cart_create + MPI_Cart_sub per dim"),
    ("hand_create_group", "hand-written MPI_Comm_create_group per dim (the target's reference)"),
    ("hand_create_from_group", "hand-written MPI_Comm_create_from_group per dim (MPI 4; the call devmesh makes)"),
    ("devmesh", "**devmesh**: Mesh::create + comm(dim) per dim (default path)"),
    ("devmesh_create_group", "devmesh: create + create_comms(CommPath::create_group)"),
    ("devmesh_split", "devmesh: create + create_comms(CommPath::split)"),
    ("devmesh_cart_sub", "devmesh: create + create_comms(CommPath::cart_sub)"),
]
PARTS = [
    ("part_mesh_create", "Mesh::create alone (the argument check; no communicator)"),
    ("part_allreduce32", "its MPI call alone: MPI_Allreduce of 32 bytes"),
    ("part_check_from_group", "devmesh's MPI calls in sequence, without devmesh: the 32-byte "
     "MPI_Allreduce, then MPI_Comm_create_from_group per dim"),
    ("part_idup_iallreduce", "what the previous design's Mesh::create cost in MPI: MPI_Comm_idup ∥ "
     "MPI_Iallreduce of 24 bytes (root communicator made at creation)"),
]
FAMILIES = {2: "2-D (2, P/2)", 3: "3-D (P/4, 2, 2)", 4: "4-D (P/8, 2, 2, 2)"}


def ndim(row):
    return len(row["shape"].split("x"))


def creation_index(rows):
    idx = {}
    for r in rows:
        idx[(ndim(r), r["ranks"], r["method"])] = r
    return idx


def fit(xs, ys):
    """Least squares y = a + b x; returns a, b, R^2."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return my, 0.0, 0.0
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys))
    return a, b, (1 - ss_res / ss_tot) if ss_tot > 0 else 1.0


# --------------------------------------------------------------------------
# the on-paper model (see the section's text for every assumption)

ALPHA_US = 2.0     # one small-message step between hosts (µs)
BETA_US_PER_B = 1e-4  # 10 GB/s per rank for the allgather's payload
GAMMA_US = 0.002   # 2 ns per table entry scanned or group entry built
SORT_US = 0.005    # 5 ns per element-comparison level of a sort


def model_split(P, g):
    """One MPICH MPI_Comm_split over P ranks giving groups of size g."""
    allgather = ALPHA_US * math.log2(P) + BETA_US_PER_B * 8 * P
    scan = GAMMA_US * P + SORT_US * g * math.log2(max(g, 2))
    context_id = ALPHA_US * math.log2(P)
    return allgather + scan + context_id


def model_create_group(g):
    """One MPI_Comm_create_group over a group of g (context id over the group only)."""
    return ALPHA_US * math.log2(max(g, 2)) + GAMMA_US * g


def model_check(P):
    """Mesh::create: the argument check (one small allreduce over P), plus MPI_Comm_group of the parent."""
    return ALPHA_US * math.log2(P) + GAMMA_US * P


def model_paths(P, groups):
    d = len(groups)
    create = model_check(P)  # no communicator made
    split = sum(model_split(P, g) for g in groups)
    dup = ALPHA_US * math.log2(P)
    # create_comms (split and cart_sub paths) checks its arguments in one
    # small allreduce over the parent (alive, all of it members), then
    # splits it; cart_sub makes the Cartesian communicator over it first.
    check = ALPHA_US * math.log2(P)
    return {
        "hand_split": split,
        "hand_cart": dup + split,
        # one MPI_Comm_create_from_group per dim, modelled as create_group
        "devmesh": create + sum(model_create_group(g) for g in groups),
        "devmesh_split": create + check + split,
        "devmesh_cart_sub": create + check + dup + split,
        "steps": d,
    }


# --------------------------------------------------------------------------
# plots


def gnuplot(script, workdir):
    terminals = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    term = "pngcairo noenhanced size 960,600 font ',11'" \
        if "pngcairo" in (terminals.stdout + terminals.stderr) else "png noenhanced size 960,600"
    path = os.path.join(workdir, "plot.gp")
    with open(path, "w") as f:
        f.write("set terminal %s\n" % term)
        f.write(script)
    subprocess.run(["gnuplot", path], check=True)


SHORT = {
    "hand_split": "hand-written MPI_Comm_split",
    "hand_cart": "hand-written MPI_Cart_create + MPI_Cart_sub",
    "hand_create_group": "hand-written MPI_Comm_create_group",
    "hand_create_from_group": "hand-written MPI_Comm_create_from_group",
    "devmesh": "devmesh (default: create + comm(dim))",
    "devmesh_create_group": "devmesh create_comms(create_group)",
    "devmesh_split": "devmesh create_comms(split)",
    "devmesh_cart_sub": "devmesh create_comms(cart_sub)",
}


def xrange_of(ranks):
    return "set xrange [%g:%g]\n" % (min(ranks) / 1.25, max(ranks) * 1.25)


def plot_creation(idx, plot_dir, work, note):
    script = []
    all_ranks = sorted({p for (d, p, m) in idx})
    for nd, label in FAMILIES.items():
        ranks = sorted({p for (d, p, m) in idx if d == nd})
        if not ranks:
            continue
        series = []
        for key, _ in METHODS:
            dat = os.path.join(work, "creation_%d_%s.dat" % (nd, key))
            rows = 0
            with open(dat, "w") as f:
                for p in ranks:
                    r = idx.get((nd, p, key))
                    if r:
                        f.write("%d %g %g %g\n" % (p, r["median"], r["q1"], r["q3"]))
                        rows += 1
            if rows:
                series.append("'%s' using 1:2:3:4 with yerrorlines lw 2 title '%s'" % (dat, SHORT[key]))
        script.append(
            "set output '%s'\n"
            "set title \"Creating every communicator of a %s mesh: median, IQR bars\\n%s\"\n"
            "set logscale xy 2\nset xlabel 'ranks P'\nset ylabel 'microseconds (slowest rank)'\n"
            "set key below font ',10' maxrows 4\nset grid\nset xtics (%s)\n%s"
            "plot %s\nunset logscale\nset autoscale\n"
            % (os.path.join(plot_dir, "creation_%dd.png" % nd), label, note,
               ", ".join("'%d' %d" % (p, p) for p in ranks), xrange_of(ranks), ", \\\n  ".join(series)))
    # Ratio to the hand-written split.
    series = []
    for nd, label in FAMILIES.items():
        keys = ("devmesh",) + (("hand_create_group", "hand_create_from_group", "devmesh_split",
                                "devmesh_cart_sub", "hand_cart") if nd == 3 else ())
        for key in keys:
            dat = os.path.join(work, "ratio_%d_%s.dat" % (nd, key))
            rows = 0
            with open(dat, "w") as f:
                for p in sorted({p for (d, p, m) in idx if d == nd}):
                    a, b = idx.get((nd, p, key)), idx.get((nd, p, "hand_split"))
                    if a and b:
                        f.write("%d %g\n" % (p, a["median"] / b["median"]))
                        rows += 1
            if rows:
                series.append("'%s' using 1:2 with linespoints lw 2 title '%s, %s'"
                              % (dat, SHORT[key], label.split(" ")[0]))
    if series and all_ranks:
        script.append(
            "set output '%s'\n"
            "set title \"Creation time divided by the hand-written MPI_Comm_split's (medians)\\n%s\"\n"
            "set logscale x 2\nset xlabel 'ranks P'\nset ylabel 'time / hand-written split time'\n"
            "set key below font ',10' maxrows 4\nset grid\nset yrange [0:*]\nset xtics (%s)\n%s"
            "plot %s, 0.5 with lines dt 2 lw 2 lc rgb 'red' title 'target 0.5', "
            "1 with lines dt 3 lc rgb 'gray' title 'equal'\n"
            "unset logscale\nset autoscale\n"
            % (os.path.join(plot_dir, "creation_ratio.png"), note,
               ", ".join("'%d' %d" % (p, p) for p in all_ranks), xrange_of(all_ranks), ", \\\n  ".join(series)))
    return "".join(script)


def plot_collectives(series_in, plot_dir, work, ranks):
    """Bars of the paired ratio per (op, size), one colour per series."""
    labels = []
    for _, records in series_in:
        for r in records:
            if r["ranks"] == ranks and r["method"] == "paired_ratio":
                label = "%s %s" % (r["op"].replace("_", "-"), size_text(r["bytes"]))
                if label not in labels:
                    labels.append(label)
    n = max(len(series_in), 1)
    width = 0.8 / n
    plots = []
    for k, (name, records) in enumerate(series_in):
        dat = os.path.join(work, "coll_%d.dat" % k)
        rows = 0
        with open(dat, "w") as f:
            for r in records:
                if r["ranks"] != ranks or r["method"] != "paired_ratio":
                    continue
                label = "%s %s" % (r["op"].replace("_", "-"), size_text(r["bytes"]))
                x = labels.index(label) - 0.4 + width * (k + 0.5)
                # paired ratios were printed as "µs" = ratio (see collectives.cpp)
                f.write('%g %g %g %g\n' % (x, r["median"], r["q1"], r["q3"]))
                rows += 1
        if rows:
            plots.append("'%s' using 1:2 with boxes title '%s'" % (dat, name))
            plots.append("'%s' using 1:2:3:4 with yerrorbars lc rgb 'black' pt 0 notitle" % dat)
    xtics = ", ".join("'%s' %d" % (l, i) for i, l in enumerate(labels))
    return (
        "set output '%s'\n"
        "set title 'Collectives through Communicator& against raw MPI, %d ranks: paired per-batch ratio, median and IQR'\n"
        "set style fill solid 0.5\nset boxwidth %g\n"
        "set xlabel ''\nunset logscale\nset key below font ',10'\n"
        "set ylabel 'devmesh time / MPI time'\nset xtics rotate by -30 font ',9' (%s)\nset grid y\n"
        "set xrange [-0.6:%g]\nset yrange [0.8:1.25]\n"
        "plot %s, 1.02 with lines dt 2 lc rgb 'red' title 'target +2%%', 1 with lines lc rgb 'gray' title 'equal'\n"
        % (os.path.join(plot_dir, "collectives.png"), ranks, width * 0.9, xtics, len(labels) - 0.4,
           ", ".join(plots)))


def size_text(b):
    if b >= 1 << 20:
        return "%d MiB" % (b >> 20)
    if b >= 1024:
        return "%d KiB" % (b >> 10)
    return "%d B" % b


# --------------------------------------------------------------------------
# the document


def target_rows_creation(ix, regime):
    h = ix.get((3, 8, "devmesh")), ix.get((3, 8, "hand_split")), ix.get((3, 8, "hand_create_group"))
    if not all(h):
        return []
    ratio = h[0]["median"] / h[1]["median"]
    fg = ix.get((3, 8, "hand_create_from_group"))
    return [["creation of a (2,2,2) mesh at 8 ranks in at most half the hand-written time; " + regime,
             "devmesh %s vs hand-written split %s: **%.2fx** (three bare MPI_Comm_create_group calls: "
             "%.2fx%s; the target was set from 0.43-0.46x measured for create_group)"
             % (fmt_time(h[0]["median"]), fmt_time(h[1]["median"]), ratio, h[2]["median"] / h[1]["median"],
                "" if not fg else ", three MPI_Comm_create_from_group calls, the ones devmesh makes: %.2fx"
                % (fg["median"] / h[1]["median"])),
             "**met**" if ratio <= 0.5 else "**missed** (see [why](#why-the-creation-target-is-missed))"]]


def target_rows_collective(records, regime):
    rows = []
    for r in records:
        if r["ranks"] == 8 and r["method"] == "paired_ratio" and r["bytes"] == 8 and r["op"] == "allreduce":
            within = r["median"] <= 1.02
            resolved = r["q3"] - r["q1"] <= 0.04
            verdict = ("**met**" if within else "**missed**") if resolved else \
                "**not resolved** (the spread is wider than the 2% to resolve)"
            rows.append(["allreduce of 8 B through the backend interface within 2% of raw MPI_Allreduce, "
                         "8 ranks; " + regime,
                         "paired ratio %.3f (IQR %.3f to %.3f), %d batches" % (r["median"], r["q1"], r["q3"], r["n"]),
                         verdict])
    return rows


def creation_1rank(data):
    """devmesh's default path and the same MPI calls at 1 rank: (devmesh µs, MPI µs) or None."""
    ix = {r["method"]: r for r in read_records(os.path.join(data, "creation_1rank.tsv"), "creation")}
    d, m = ix.get("devmesh"), ix.get("part_check_from_group")
    if not (d and m):
        return None
    return d["median"], m["median"]


def breakdown_table(ix):
    split = ix.get((3, 8, "hand_split"))
    rows = []
    for key, name in METHODS + PARTS:
        r = ix.get((3, 8, key))
        if r and split:
            rows.append([name, str(r["comms"]),
                         "%s [%s–%s]" % (fmt_time(r["median"]), fmt_time(r["q1"]), fmt_time(r["q3"])),
                         "%.2f" % (r["median"] / split["median"])])
    return table(["method", "comms", "median [IQR]", "÷ hand-written split"], rows)


def collective_table(records, ranks):
    by = {}
    for r in records:
        if r["ranks"] == ranks:
            by[(r["op"], r["bytes"], r["method"])] = r
    rows = []
    for (op, b, m), r in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if m != "devmesh":
            continue
        mp, pr = by.get((op, b, "mpi")), by.get((op, b, "paired_ratio"))
        if not (mp and pr):
            continue
        cells = [op, size_text(b), str(r["iters"]) + " × " + str(r["n"]),
                 "%s [%s–%s]" % (fmt_time(r["median"]), fmt_time(r["q1"]), fmt_time(r["q3"])),
                 "%s [%s–%s]" % (fmt_time(mp["median"]), fmt_time(mp["q1"]), fmt_time(mp["q3"])),
                 "%.3f" % (r["median"] / mp["median"]),
                 "%.3f [%.3f–%.3f]" % (pr["median"], pr["q1"], pr["q3"])]
        if ranks == 1:
            cells.append("%+.0f ns" % ((r["min"] - mp["min"]) * 1000))
        rows.append(cells)
    if not rows:
        return ""
    header = ["op", "size", "calls × batches", "devmesh median [IQR]", "MPI median [IQR]",
              "ratio of medians", "paired ratio [IQR]"] + (["min − min"] if ranks == 1 else [])
    return table(header, rows)


PAIRED_MPIS = [("mpich4", "MPICH %s (Debian, ch4:ucx, yield shim)"),
               ("mpich5", "MPICH 5.0.2 (PyPI wheel, yield shim)"),
               ("openmpi4", "Open MPI %s (Debian)"),
               ("openmpi5", "Open MPI 5.0.11 (PyPI wheel)")]
PAIRED_METHODS = [("devmesh", "**devmesh**: Mesh::create + comm(dim) per dim (default path)"),
                  ("create_comms", "devmesh: Mesh::create + create_comms()"),
                  ("floor", "the floor: every MPI call of the default path (the 32-byte MPI_Allreduce, the group creation per dim, the local calls around them), without devmesh"),
                  ("groups", "the group creations alone: the floor without the argument check and the local calls"),
                  ("split", "hand-written MPI_Comm_split, one per dim")]


def paired_index(data):
    """{mpi: {method: record}} of creation_paired.tsv."""
    out = {}
    for r in read_records(os.path.join(data, "creation_paired.tsv"), "creation_paired"):
        out.setdefault(r["mpi"], {})[r["method"]] = r
    return out


def paired_name(mpi, cond):
    for key, text in PAIRED_MPIS:
        if key == mpi:
            return text % cond.get("mpich" if key == "mpich4" else "openmpi", "?") if "%s" in text else text
    return mpi


def ratio_text(r):
    return "%.3f [%.3f–%.3f]" % (r["median"], r["q1"], r["q3"]) if r else "—"


def below(gs, limit):
    """Where a target of devmesh ÷ split lies below what the group creations
    alone cost on that MPI (no check, no local call), says so."""
    if not gs or gs["median"] <= limit:
        return ""
    return "; the group creations alone, without the argument check: %s ÷ split, above the target" % ratio_text(gs)


def paired_target_rows(px, cond):
    """Targets of the default path and create_comms, one row per MPI and target."""
    rows = []
    when = "paired, 8 ranks, (2,2,2), normal priority"
    for mpi, _ in PAIRED_MPIS:
        ix = px.get(mpi)
        if not ix:
            continue
        name = paired_name(mpi, cond)
        ds, df = ix.get("paired_devmesh_over_split"), ix.get("paired_devmesh_over_floor")
        cd = ix.get("paired_create_comms_over_devmesh")
        gs = ix.get("paired_groups_over_split")
        if df:
            rows.append(["%s: default path within 10%% of the floor; %s" % (name, when),
                         "devmesh ÷ floor %s" % ratio_text(df),
                         "**met**" if df["median"] <= 1.10 else "**missed**"])
        if ds:
            limit, what = (1.0, "never slower than the hand-written split") if mpi == "openmpi4" else \
                (0.6, "at most 0.6x of the hand-written split")
            rows.append(["%s: default path %s; %s" % (name, what, when),
                         "devmesh ÷ split %s%s" % (ratio_text(ds), below(gs, limit)),
                         "**met**" if ds["median"] <= limit else "**missed**"])
            if mpi in ("mpich4", "openmpi5"):
                rows.append(["%s: paired ratio at most 0.75x; %s" % (name, when),
                             "devmesh ÷ split %s%s" % (ratio_text(ds), below(gs, 0.75)),
                             "**met**" if ds["median"] <= 0.75 else "**missed**"])
        if cd:
            rows.append(["%s: create_comms() no slower than comm(dim) per dim; %s" % (name, when),
                         "create_comms ÷ devmesh %s" % ratio_text(cd),
                         "**met**" if cd["median"] <= 1.0 else "**missed**"])
    return rows


# Measured by hand for the paragraph on the gap to the floor (see
# paired_section): the 1-D mesh at 2 ranks (devmesh, floor), allocations
# per creation now (callgrind), and devmesh ÷ floor and the time per
# creation before and after the creation changes listed in the CHANGELOG,
# alternated (twice).
GAP_FIGURES = ("3.65 µs", "3.0 µs", "26", "1.225-1.228", "1.142-1.162", "115-121 µs", "109-115 µs")


# Measured by hand with the paired method (quiet machine, 2026-11-27, not by
# this run): the gap to the floor under Open MPI 5.0.11, by phase.
GAP_OPENMPI5 = (
    "The same gap under Open MPI 5.0.11 (measured by hand, quiet machine, 2026-11-27, not by this run; "
    "8 ranks, (2,2,2), paired over 30 rounds, two runs each). There the floor itself is 0.73-0.82x of the "
    "split (six runs that day), so the 0.75x target asks devmesh to add next to nothing to its MPI calls. "
    "No other creation call is cheaper there (by hand, the three communicators of (2,2,2) made 200-300 times, "
    "three rounds, two runs; the best round of each): MPI_Comm_create_group took 262 µs over MPI_COMM_WORLD, "
    "269 µs over a communicator from MPI_Comm_create_from_group (whose context ids Open MPI 5 takes from PMIx) "
    "and 292 µs over a duplicate of MPI_COMM_WORLD; MPI_Comm_create 350-357 µs and MPI_Comm_split 409-443 µs "
    "over any of the three. "
    "Timed apart, `Mesh::create` takes 40-44 µs against 24-26 µs for its allreduce alone (three runs), and the three "
    "`comm(dim)` calls 311-313 µs against 268-277 µs for the same group creations alone. devmesh's time "
    "outside the collective calls (between them, with the local MPI calls) is 10.4-12.7 µs per rank per "
    "creation against the floor's 3.6-4.2 µs (MPICH 4.0.2: 6.0-6.9 against 1.7-1.9), and the creation takes "
    "40-51 µs longer: each µs of it costs several at 8 ranks on 2 cores. Timed by part (TSC stamps in the "
    "library, per creation of the mesh and its three communicators), no part stands out: `View::create` "
    "0.8 µs, the three handouts' map entries 0.5-0.7 µs, loading the backends the options name 0.4 µs, "
    "the parent's watch 0.25-0.47 µs, the rest 0.1-0.4 µs each. Work that only spins costs next to nothing "
    "there (one run): 2 µs of busy waiting before the floor's allreduce made it 1.004x [0.983-1.030] as long, while "
    "devmesh's 4 µs of real work in `Mesh::create` (allocations, code and data touched anew on a core that "
    "switches among four ranks) cost 16-18 µs. Overlapping work with the argument check does not help: an "
    "MPI_Iallreduce with the same 2 µs of work in flight made the floor 1.06x as long (MPICH 4.0.2: "
    "1.16x), and the MPI_Iallreduce alone 1.02x (1.12x). Since then a dim's member list is on the stack and "
    "options that name the default backends share one list: 4 fewer allocations per rank, devmesh's time "
    "between its collective calls 6.1-6.5 µs against 6.4-7.1 µs on MPICH 4.0.2 (three runs alternated with "
    "the library before), and devmesh ÷ floor 1.18-1.27 against 1.24-1.29 there, 1.14-1.15 against "
    "1.14-1.16 on Open MPI 5.0.11: within the spread.\n")


def paired_section(data, cond, px):
    """One paired creation table per MPI, or "" when not run."""
    if not px:
        return ""
    out = ["### Paired, per MPI: the default path against the hand-written splits and the floor\n",
           "The (2,2,2) mesh at 8 ranks, at **normal priority** (load "
           "average %s before these runs, %s after; %s), by `bench/creation/paired.cpp`: batches of "
           "%s creations of one method each, the five methods' batches alternating in a rotating "
           "order; each creation starts after a barrier and only the creation is timed (freeing is "
           "not); a batch's time is the slowest rank's mean per creation. The *paired ratio* of A "
           "over B is the median over rounds of A's batch time over B's batch time in the same round "
           "(IQR in brackets), as for the collectives. The floor is every MPI call the default path "
           "makes, in its order, without devmesh: the argument check's 32-byte MPI_Allreduce over the "
           "parent, then one group creation per dim, first dim first as the devmesh method asks for "
           "them, by the call devmesh makes on that MPI "
           "(MPI_Comm_create_from_group with MPICH; MPI_Comm_create_group over the parent with Open "
           "MPI, see `lib/runtime/mpi_features.hpp`), and the local calls around them (the parent's "
           "group, attribute and error handler; per dim the group, the name, the attribute that sees "
           "the program free it, the error handler). The group creations alone are the floor without the "
           "argument check and without those local calls, in the same order: the least these communicators "
           "cost by that call; a creation that makes ranks passing different arguments fail instead of hang "
           "adds at least the check to it. MPICH's ranks run with the yield shim, Open MPI's with "
           "`mpi_yield_when_idle`.\n" % (cond.get("load_paired_start", "?"), cond.get("load_paired_end", "?"),
                                            cond.get("date_paired", cond.get("date", "?")),
                                            next((ix["split"]["iters"] for ix in px.values() if "split" in ix), "?"))]
    for mpi, _ in PAIRED_MPIS:
        ix = px.get(mpi)
        if not ix:
            continue
        split = ix.get("split")
        batches = split["n"] if split else "?"
        iters = split.get("iters", "?") if split else "?"
        rows = []
        for key, label in PAIRED_METHODS:
            r = ix.get(key)
            if not r:
                continue
            pair = ix.get("paired_%s_over_split" % key) if key != "split" else None
            rows.append([label, "%s × %s" % (iters, batches),
                         "%s [%s–%s]" % (fmt_time(r["median"]), fmt_time(r["q1"]), fmt_time(r["q3"])),
                         ratio_text(pair) if key != "split" else "1"])
        out.append("#### %s\n" % paired_name(mpi, cond))
        out.append(table(["method", "creations × batches", "per creation, median [IQR]",
                          "paired ratio ÷ split [IQR]"], rows))
        out.append("")
        out.append("devmesh ÷ floor (paired): %s; create_comms ÷ devmesh (paired): %s.\n"
                   % (ratio_text(ix.get("paired_devmesh_over_floor")),
                      ratio_text(ix.get("paired_create_comms_over_devmesh"))))
        if mpi == "openmpi5":  # measured by hand, 2026-11-27, not by this run
            out.append("Why the group creations here are `MPI_Comm_create_group` over the parent, not "
                       "`MPI_Comm_create_from_group`: Open MPI 5.0.11 has `MPI_Comm_create_from_group` but "
                       "builds it on a PMIx group construction. Three 2-rank groups took 96 ms that way against "
                       "0.37 ms for `MPI_Comm_create_group` over `MPI_COMM_WORLD` (8 ranks, `bench/creation`), "
                       "and its UCX PML refuses it (\"does not support MPI sessions related features\", "
                       "`MPI_ERR_UNSUPPORTED_OPERATION`). Under Open MPI, dims therefore take the parent's path, "
                       "as with an MPI that lacks the function (`dims_from_group` in "
                       "lib/runtime/mpi_features.hpp).\n")
        between = [(label, ix.get("outside_" + key)) for key, label in
                   (("devmesh", "devmesh"), ("floor", "the floor"), ("split", "the split"))]
        if all(r for _, r in between):
            out.append("Time between the collective calls per creation (each rank's time outside "
                       "MPI_Allreduce and the communicator creations, as the tests' PMPI layer times them, "
                       "with the local MPI calls; the mean over ranks, median [IQR] over batches): %s.\n"
                       % "; ".join("%s %s [%s–%s]" % (label, fmt_time(r["median"]), fmt_time(r["q1"]),
                                                      fmt_time(r["q3"])) for label, r in between))
    out.append("Where the gap to the floor comes from (measured by hand, MPICH 4.0.2, quiet machine, "
               "2026-11-27, not by this run). devmesh makes exactly the floor's MPI calls; the rest is "
               "its own work between them, which 8 ranks on 2 cores pay several times over: a core runs "
               "four ranks in turn, and each collective waits for the last of them. Timed per phase on "
               "the slowest rank (PMPI timestamps around MPI_Allreduce and MPI_Comm_create_from_group), "
               "devmesh works 1.1 µs before the argument check's allreduce (the floor 0.1 µs), 0.8 µs "
               "after it (0.2 µs) and 1.4 µs around its three group creations (0.8 µs), and the "
               "allreduce and the first group creation take 4-5 µs longer, waiting for the other ranks' "
               "work. Busy work added to the floor (2.8 µs per rank) costs the same wherever it goes, "
               "before the allreduce or after it, and about what devmesh's own work costs. Without oversubscription the work is a larger "
               "share of a smaller floor: a 1-D mesh at 2 ranks, one per core, takes %s against %s for "
               "its MPI calls, so within 10%% would take devmesh's own work per creation below about "
               "0.3 µs. The creation changes in the CHANGELOG (Unreleased, Changed) took a creation of the "
               "(2,2,2) mesh with its three communicators from 50 to %s allocations per rank; alternated "
               "with the library just before them (25 runs each, twice, the floor as now), devmesh ÷ floor went from %s "
               "to %s and the creation from %s to %s. Until then the floor made its groups last dim first, "
               "while the devmesh method asks first dim first: on this machine that order alone made "
               "the floor about 7%% faster (devmesh ÷ floor 1.232 against 1.146 with devmesh asking in "
               "the floor's order, 12 runs of one binary). `create_comms` adds its consistency check "
               "over all members (one 32-byte allreduce) to the same creations: that check is what "
               "turns members passing different views or paths into an error on every member instead "
               "of a hang.\n" % GAP_FIGURES)
    out.append(GAP_OPENMPI5)
    return "\n".join(out)



def openmpi_section(data, cond, idx, coll, regime):
    """The headline comparisons under Open MPI beside MPICH's, or "" when not run."""
    oix = creation_index(read_records(os.path.join(data, "openmpi_creation.tsv"), "creation"))
    ocoll = read_records(os.path.join(data, "openmpi_collectives.tsv"), "collective")
    if not oix and not ocoll:
        return ""
    out = ["## Under Open MPI\n",
           "Open MPI %s against MPICH %s, same machine, same run, %s; Open MPI's ranks started by "
           "`mpiexec.openmpi --oversubscribe --mca mpi_yield_when_idle 1` (no yield shim). Open MPI 4.1 "
           "implements MPI 3.1 and has no MPI_Comm_create_from_group: each dim's communicator is "
           "MPI_Comm_create_group over the parent (`Mesh::create` makes no communicator either), and "
           "the MPI-4 rows (MPI_Comm_create_from_group) do not exist. "
           "Each ratio divides by the hand-written MPI_Comm_split code of the same MPI in the same run.\n"
           % (cond.get("openmpi", "?"), cond.get("mpich", "?"), regime)]
    ms_, os_ = idx.get((3, 8, "hand_split")), oix.get((3, 8, "hand_split"))
    rows = []
    for key, name in METHODS + PARTS:
        a, b = idx.get((3, 8, key)), oix.get((3, 8, key))
        if not (a or b):
            continue
        cell = lambda r, s: "%s, %.2fx" % (fmt_time(r["median"]), r["median"] / s["median"]) if r and s else "—"
        rows.append([name, cell(a, ms_), cell(b, os_)])
    if rows:
        out.append("Creation of a (2,2,2) mesh at 8 ranks (median, ÷ hand-written split):\n")
        out.append(table(["method", "MPICH", "Open MPI"], rows))
        out.append("")
    by = {(r["op"], r["bytes"]): r for r in coll if r["ranks"] == 8 and r["method"] == "paired_ratio"}
    rows = []
    for r in sorted((r for r in ocoll if r["ranks"] == 8 and r["method"] == "paired_ratio"),
                    key=lambda r: (r["bytes"], r["op"])):
        m = by.get((r["op"], r["bytes"]))
        rows.append([r["op"], size_text(r["bytes"]),
                     "%.3f [%.3f–%.3f]" % (m["median"], m["q1"], m["q3"]) if m else "—",
                     "%.3f [%.3f–%.3f]" % (r["median"], r["q1"], r["q3"])])
    if rows:
        out.append("Collectives through the backend interface against the raw MPI call, 8 ranks "
                   "(paired ratio devmesh ÷ MPI, median [IQR]):\n")
        out.append(table(["op", "size", "MPICH", "Open MPI"], rows))
        out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------
# Gloo (bench/gloo, bench/run-gloo)


def gloo_verdict(r):
    if r["q3"] - r["q1"] > 0.04:
        return "**not resolved** (the spread is wider than the 2% to resolve)"
    return "**met**" if r["median"] <= 1.02 else "**missed**"


def gloo_target_rows(records):
    rows = []
    for r in sorted((r for r in records if r.get("kind") == "gloo_overhead" and r["method"] == "paired_ratio"),
                    key=lambda r: r["bytes"]):
        rows.append(["allreduce of %s through devmesh's Gloo dim within 2%% of a raw Gloo context on the same "
                     "group, %d ranks" % (size_text(r["bytes"]), r["ranks"]),
                     "paired ratio %.3f (IQR %.3f to %.3f), %d batches" % (r["median"], r["q1"], r["q3"], r["n"]),
                     gloo_verdict(r)])
    return rows


def gloo_section(records, gcond, cond):
    """The Gloo section, or "" when bench/run-gloo did not run."""
    if not records:
        return ""
    by = {(r["kind"], r["op"], r["bytes"], r["method"]): r for r in records}
    ranks = max(r["ranks"] for r in records)
    cell = lambda r: "%s [%s–%s]" % (fmt_time(r["median"]), fmt_time(r["q1"]), fmt_time(r["q3"]))
    ratio = lambda r: "%.3f [%.3f–%.3f]" % (r["median"], r["q1"], r["q3"])
    out = ["## Gloo\n",
           "The Gloo backend (`libdevmesh-backend-gloo.so`, Gloo %s from Debian, TCP transport) measured by "
           "`bench/gloo` through `bench/run-gloo`: %d ranks on %s cores, oversubscribed; every Gloo context "
           "listens on 127.0.0.1; MPI's ranks run with the yield shim and MPIR_CVAR_NOLOCAL=%s as everywhere "
           "in this report (Gloo's ranks need no shim: they wait in the kernel, on sockets and condition "
           "variables); priority %s; buildtype %s; measured %s, load average %s at the start and %s at the end. "
           "float64 sum, sizes per rank; batches of about 50 ms alternate between the two methods of a "
           "comparison (order flipped every batch), and the paired ratio is the median over batches of one "
           "method's batch time over the adjacent batch of the other.\n"
           % (gcond.get("gloo", "?"), ranks, cond.get("nproc", "?"), cond.get("nolocal", "?"),
              "real-time (`%s`)" % gcond["priority"] if gcond.get("priority", "").startswith("chrt")
              else gcond.get("priority", "?"), gcond.get("buildtype", "?"), gcond.get("date", "?"),
              gcond.get("load_start", "?"), gcond.get("load_end", "?"))]
    rows = []
    for b in sorted({r["bytes"] for r in records if r["kind"] == "gloo_overhead"}):
        d, g, p = (by.get(("gloo_overhead", "allreduce", b, m)) for m in ("devmesh_gloo", "raw_gloo", "paired_ratio"))
        if d and g and p:
            rows.append([size_text(b), "%d × %d" % (d["iters"], d["n"]), cell(d), cell(g), ratio(p), gloo_verdict(p)])
    if rows:
        out.append("### devmesh's Gloo dim against a raw Gloo context\n")
        out.append("The same allreduce on the same buffers: through `Communicator&` of a mesh dim whose backend "
                   "is `gloo` (virtual call, the plugin's argument checks, its own reduction function), and "
                   "through a `gloo::Context` over the same ranks, connected by the plugin's own bootstrap "
                   "(`backends/gloo/mpi_context.hpp`: pair addresses exchanged with one MPI_Alltoall), calling "
                   "`gloo::allreduce` with `gloo::sum<double>` as PyTorch's Gloo process group does.\n")
        out.append(table(["size", "calls × batches", "devmesh median [IQR]", "raw Gloo median [IQR]",
                          "paired ratio [IQR]", "within 2%"], rows))
        out.append("")
    rows = []
    for (kind, op, b, m), r in sorted(by.items(), key=lambda kv: (kv[0][2], kv[0][1])):
        if kind != "gloo_vs_mpi" or m != "gloo":
            continue
        mp, p = by.get((kind, op, b, "mpi")), by.get((kind, op, b, "paired_ratio"))
        if mp and p:
            rows.append([op, size_text(b), cell(r), cell(mp), ratio(p)])
    if rows:
        out.append("### Gloo against MPI, both through devmesh\n")
        out.append("Two meshes over the same %d ranks, one with every dim on `gloo`, one on `mpi` (MPICH %s, "
                   "%s), the same call through each one's `Communicator&`. reduce_scatter on Gloo is emulated "
                   "(an allreduce of all P·S bytes, then the caller's block: docs/BACKENDS.md), so it costs "
                   "what an allreduce of P·S bytes costs.\n" % (ranks, cond.get("mpich", "?"), cond.get("mpich_device", "?")))
        out.append(table(["op", "size", "Gloo median [IQR]", "MPI median [IQR]", "paired ratio Gloo ÷ MPI [IQR]"], rows))
        out.append("")
        out.append("On one machine MPICH (through UCX) moves messages between ranks through shared memory, while every Gloo "
                   "message is a TCP exchange over loopback that wakes the receiver's event-loop thread and "
                   "then the waiting caller: small Gloo calls cost what those wake-ups cost on %s oversubscribed "
                   "cores, and the gap narrows as the size grows and copying dominates. Across hosts both go "
                   "over the network and these ratios do not carry over.\n" % cond.get("nproc", "?"))
    return "\n".join(out)


def read_gloo(data):
    rows = []
    for kind in ("gloo_overhead", "gloo_vs_mpi"):
        for r in read_records(os.path.join(data, "gloo.tsv"), kind):
            r["kind"] = kind
            rows.append(r)
    path = os.path.join(data, "gloo_conditions.txt")
    return rows, (read_conditions(path) if os.path.exists(path) else {})


def main():
    data, out_md, plot_dir = sys.argv[1:4]
    cond = read_conditions(os.path.join(data, "conditions.txt"))
    creation = read_records(os.path.join(data, "creation.tsv"), "creation")
    coll = read_records(os.path.join(data, "collectives.tsv"), "collective")
    idx = creation_index(creation)
    # The headline comparisons repeated at normal priority (only when the
    # main runs used real-time priority).
    idx_alt = creation_index(read_records(os.path.join(data, "creation_shared.tsv"), "creation"))
    coll_alt = read_records(os.path.join(data, "collectives_shared.tsv"), "collective")
    gloo, gcond = read_gloo(data)
    vcoll = report_vcoll.read(data, read_records, read_conditions)
    px = paired_index(data)
    pl = report_placement.read(data, read_records, read_conditions)
    realtime = cond.get("priority", "").startswith("real-time")
    regime = "real-time priority (quiet machine)" if realtime else "normal priority"
    alt_regime = "normal priority"
    rel = os.path.relpath(plot_dir, os.path.dirname(out_md))
    all_ranks = sorted({r["ranks"] for r in creation})

    with tempfile.TemporaryDirectory() as work:
        series = [(regime, coll)] + ([(alt_regime, coll_alt)] if coll_alt else [])
        note = "oversubscribed on %s cores, yield shim, %s" % (cond.get("nproc", "?"), regime)
        gnuplot(plot_creation(idx, plot_dir, work, note) + plot_collectives(series, plot_dir, work, 8), work)

    md = []
    w = md.append
    w("# devmesh benchmarks\n")
    w("Generated by `./run bench` (`bench/run-all BUILD`, then `bench/report.py`); do not edit by "
      "hand. Raw records: [`%s/data/`](%s/data/). Every comparison below was measured side by side "
      "in one run, alternating between the methods (their order rotates every repetition), and "
      "every time is the **slowest rank's** (each rank times itself, the times are MPI_MAX-reduced).\n"
      % (rel, rel))

    # --- conditions
    w("## Conditions\n")
    w(table(["", ""], [
        ["date", cond.get("date", "?")],
        ["machine", "%s cores, %s, %s RAM" % (cond.get("nproc", "?"), cond.get("cpu", "?"), cond.get("memory", "?"))],
        ["MPI", "MPICH %s (%s), MPIR_CVAR_NOLOCAL=%s" % (cond.get("mpich", "?"), cond.get("mpich_device", "?"), cond.get("nolocal", "?"))],
        ["ranks", ", ".join(str(p) for p in all_ranks) + " for creation; 8 and 1 for collectives; all on this one machine"],
        ["yield shim", "%s (every MPI run went through `tests/support/mpirun-local`)" % cond.get("yield_shim", "?")],
        ["priority", "%s%s" % (cond.get("priority", "?"),
                               "; the headline comparisons repeated at normal priority" if idx_alt else "")],
        ["compiler, build", "%s, buildtype %s" % (cond.get("compiler", "?"), cond.get("buildtype", "?"))],
        ["load average (1, 5, 15 min)", "%s at the start, %s at the end (other users' jobs)" % (cond.get("load_start", "?"), cond.get("load_end", "?"))],
        ["run time", "%s s for the whole of bench/run-all" % cond.get("run_seconds", "?")],
    ]))
    w("")
    w("**Read every figure with the conditions in mind.** With up to %s ranks on %s cores, MPI runs "
      "oversubscribed: a message between two ranks costs a scheduling round, not a network hop, so "
      "absolute times are hundreds of microseconds where a cluster takes a few. %s Ratios between "
      "methods measured in the same run are the meaningful figures; absolute times and their growth "
      "with P describe this machine, not a cluster.\n"
      % (max(all_ranks) if all_ranks else "?", cond.get("nproc", "?"),
         "The machine is shared: at normal priority other jobs interleave with the ranks and a message "
         "can wait for someone else's time slice, so the main runs use real-time priority (`chrt -r 1`), "
         "which makes the ranks own the cores for the few seconds each run takes; the same comparisons "
         "at normal priority are shown too." if realtime else
         "Other work on the machine (see the load average) adds noise."))

    # --- targets
    w("## Targets\n")
    rows = target_rows_creation(idx, regime) + target_rows_creation(idx_alt, alt_regime)
    rows += target_rows_collective(coll, regime) + target_rows_collective(coll_alt, alt_regime)
    rows += gloo_target_rows(gloo)
    rows += report_vcoll.target_rows(vcoll, size_text)
    rows += paired_target_rows(px, cond)
    rows += report_placement.target_rows(pl)
    r1 = {(r["op"], r["bytes"], r["method"]): r for r in coll if r["ranks"] == 1}
    d1, m1 = r1.get(("allreduce", 8, "devmesh")), r1.get(("allreduce", 8, "mpi"))
    if d1 and m1:
        rows.append(["(what the interface itself costs, 1 rank)",
                     "%+.0f ns per 8-byte allreduce (fastest batches: devmesh %s, MPI %s)"
                     % ((d1["min"] - m1["min"]) * 1000, fmt_time(d1["min"]), fmt_time(m1["min"])), ""])
    w(table(["target", "measured", "verdict"], rows))
    w("")

    # --- creation
    w("## Communicator creation\n")
    w("What is timed: from the call until the caller holds the communicator of every dim of the mesh. "
      "devmesh's creation is `Mesh::create` (its argument check, one allreduce over the parent; it "
      "makes no communicator) plus one MPI_Comm_create_from_group per dim over that dim's group; the "
      "`create_comms` paths first run their own consistency check over all members (over the parent "
      "while the program keeps it and all its ranks are members, else over a root communicator made "
      "for it). The hand-written codes make one communicator per dim from "
      "`MPI_COMM_WORLD` (MPI_Cart_create also makes the Cartesian communicator). The *comms* column "
      "counts the communicators each method made, by the tests' PMPI layer "
      "(`tests/support/comm_counter`) in the same run. Three mesh families, each at the rank counts "
      "its shape fits: %s. The target shapes are (2,4) and (2,2,2) at 8 ranks and (2,2,2,2) at 16. "
      "All at %s.\n" % ("; ".join(FAMILIES.values()), regime))

    if px:
        w(paired_section(data, cond, px))

    if (3, 8, "hand_split") in idx:
        w("### The (2,2,2) mesh at 8 ranks\n")
        w(breakdown_table(idx))
        w("")
        sp, d, cg, fg, mc, ar, old = (idx.get((3, 8, k)) for k in (
            "hand_split", "devmesh", "hand_create_group", "hand_create_from_group", "part_mesh_create",
            "part_allreduce32", "part_idup_iallreduce"))
        if all((sp, d, cg, mc, ar)):
            S = sp["median"]
            alt_mc, alt_old = idx_alt.get((3, 8, "part_mesh_create")), idx_alt.get((3, 8, "part_idup_iallreduce"))
            w("What changed in `Mesh::create`: it makes no communicator any more. Its only MPI call is "
              "the cross-rank argument check, one MPI_Allreduce of 32 bytes over the parent (it also "
              "agrees on a per-root sequence number used in the creation tags); every rank makes it "
              "whatever its arguments, so ranks that disagree all get `inconsistent` and never hang "
              "(tests/mpi/test_creation.cpp). Each dim's communicator is made, when first asked for, "
              "with MPI-4's MPI_Comm_create_from_group over the dim's group: collective over that "
              "group only, no parent communicator involved (the parent may even be freed by then). "
              "The root communicator (all members in root order) is made the same way, lazily, by "
              "the operations that are collective over all root members anyway and cannot run over "
              "the parent (freed by the program, or with ranks that are not members): `cart_comm()` "
              "of the root view, `create_comms()`, NCCL's split initialisation and "
              "`record_hosts()`; `comm_count()` counts it only once it is made. With an MPI without "
              "MPI_Comm_create_from_group, and with Open MPI, each dim's communicator is "
              "MPI_Comm_create_group over the parent, and the parent's MPI_Comm_free makes the root "
              "communicator first (see include/devmesh/mesh.hpp): no MPI makes one at creation any "
              "more. In this run `Mesh::create` took %s (its allreduce alone %s)%s%s.\n"
              % (fmt_time(mc["median"]), fmt_time(ar["median"]),
                 "" if not old else
                 "; the previous design's `Mesh::create`, MPI_Comm_idup of the parent overlapped with "
                 "the check as an MPI_Iallreduce, costs %s in MPI calls alone" % fmt_time(old["median"]),
                 "" if not (alt_mc and alt_old) else
                 "; at normal priority, under load, %s against %s" % (
                     fmt_time(alt_mc["median"]), fmt_time(alt_old["median"]))))
            if d["median"] / S > 0.5:
                seq = idx.get((3, 8, "part_check_from_group"))
                groups = fg or cg  # the group creations devmesh makes (from_group with MPI 4)
                apart = (ar["median"] + groups["median"]) / S
                floor = seq["median"] / S if seq else apart
                bare = (ar["median"] + cg["median"]) / S
                own = d["median"] - (seq["median"] if seq else ar["median"] + groups["median"])
                w("#### Why the creation target is missed\n")
                w("Oversubscribed, a collective call costs a few scheduling rounds of all 8 ranks almost "
                  "whatever it does: here the check's 32-byte allreduce alone is %.2fx of the three "
                  "splits, three MPI_Comm_create_group calls %.2fx%s. devmesh's default path makes "
                  "exactly the check and then one group creation per dim. From the parts of this run:\n"
                  % (ar["median"] / S, cg["median"] / S,
                     "" if not fg else " and three MPI_Comm_create_from_group calls %.2fx" % (fg["median"] / S)))
                w("* the floor, the consistency check that SEMANTICS.md §5 requires before any group is "
                  "made (else disagreeing ranks hang) + the three group creations devmesh makes%s: "
                  "**%.2fx**%s;"
                  % (" (MPI_Comm_create_from_group)" if fg else "", floor,
                     " for the same MPI calls in sequence without devmesh (%.2fx measured apart and added)"
                     % apart if seq else " (measured apart and added)"))
                one = creation_1rank(data)
                w("* devmesh reaches **%.2fx**, %s %s those MPI calls; `Mesh::create` alone is %s "
                  "against %s for its allreduce alone.%s"
                  % (d["median"] / S, fmt_time(abs(own)), "above" if own >= 0 else "below",
                     fmt_time(mc["median"]), fmt_time(ar["median"]),
                     "" if not one else
                     " At 1 rank, where no rank waits for a core, devmesh's default path for a 1-rank "
                     "mesh (create + one communicator) costs %s against %s for the same MPI calls: its "
                     "own work is about %s per creation, so most of the gap at 8 ranks is how that work "
                     "and its memory traffic play out with 8 ranks time-sharing %s cores, not the work "
                     "itself;" % (fmt_time(one[0]), fmt_time(one[1]), fmt_time(max(one[0] - one[1], 0)),
                                  cond.get("nproc", "?"))))
                w("* with bare MPI_Comm_create_group instead, which needs a parent communicator over "
                  "the group's members (the root communicator the design no longer makes at creation): "
                  "check + groups = **%.2fx** (measured apart and added);" % bare)
                if fg:
                    overlap = fg["q1"] <= cg["q3"] and cg["q1"] <= fg["q3"]
                    qs = sorted(idx[(n_, p_, "hand_create_from_group")]["median"] / idx[(n_, p_, "hand_create_group")]["median"]
                                for (n_, p_, m_) in idx if m_ == "hand_create_from_group" and (n_, p_, "hand_create_group") in idx)
                    w("* MPI_Comm_create_from_group's extra cost over MPI_Comm_create_group in MPICH %s, "
                      "for the three groups: %s%s (%.2fx against %.2fx of the splits, %+.0f%%%s); across "
                      "all %d measured (family, P) points from_group took %.2fx to %.2fx of create_group's "
                      "time."
                      % (cond.get("mpich", "?"), "+" if fg["median"] >= cg["median"] else "−",
                         fmt_time(abs(fg["median"] - cg["median"])), fg["median"] / S,
                         cg["median"] / S, 100.0 * (fg["median"] / cg["median"] - 1),
                         "; their IQRs overlap, so the difference is within this run's noise" if overlap else "",
                         len(qs), qs[0], qs[-1]))
                w("")
                if floor > 0.5:
                    verdict = ("So the 0.5x target is missed by a measured limit, not by a design choice: "
                               "the check plus the group creations devmesh makes already come to %.2fx%s, "
                               "and creation makes no communicator beyond the dims' own. The %.2fx between "
                               "that floor and devmesh is its own work as it plays out at 8 oversubscribed "
                               "ranks (above)."
                               % (floor, "" if bare <= 0.5 else
                                  " (%.2fx even with bare MPI_Comm_create_group)" % bare,
                                  d["median"] / S - floor))
                else:
                    verdict = ("Here the check plus the group creations devmesh makes come to %.2fx, within "
                               "0.5x: creation makes no communicator beyond the dims' own, so the design is "
                               "no longer what misses the target; the measured limit is that floor plus "
                               "what devmesh's own work costs at 8 oversubscribed ranks (%s)."
                               % (floor, fmt_time(max(own, 0))))
                w("The target's estimate counted only the three group creations (0.43-0.46x). The "
                  "argument check is a collective over all ranks: alone it costs %.0f%% of one "
                  "split's share of the hand-written time. %s%s\n"
                  % (100.0 * ar["median"] / (S / 3), verdict,
                     "" if not idx_alt.get((3, 8, "devmesh")) else
                     " At normal priority with other jobs running the ratio was %.2fx (table below)."
                     % (idx_alt[(3, 8, "devmesh")]["median"] / idx_alt[(3, 8, "hand_split")]["median"])))
        if idx_alt:
            w("#### The same at %s\n" % alt_regime)
            w(breakdown_table(idx_alt))
            w("")

    for nd, label in FAMILIES.items():
        ranks = sorted({p for (d, p, m) in idx if d == nd})
        if not ranks:
            continue
        w("### %s\n" % label)
        header = ["method", "comms"] + ["P=%d (%s)" % (p, idx[(nd, p, "hand_split")]["shape"].replace("x", ","))
                                        for p in ranks if (nd, p, "hand_split") in idx]
        body = []
        for key, name in METHODS:
            cells = [name, str(idx[(nd, ranks[-1], key)]["comms"]) if (nd, ranks[-1], key) in idx else "?"]
            for p in ranks:
                r = idx.get((nd, p, key))
                cells.append("%s [%s–%s]" % (us(r["median"]), us(r["q1"]), us(r["q3"])) if r else "")
            body.append(cells)
        reps = sorted({idx[(nd, p, "hand_split")]["n"] for p in ranks if (nd, p, "hand_split") in idx})
        w("Median µs [IQR] over %s repetitions.\n"
          % (str(reps[0]) if len(reps) == 1 else "%d to %d" % (reps[0], reps[-1])))
        w(table(header, body))
        w("")
        ratio_rows = []
        for key, name in METHODS:
            if key == "hand_split":
                continue
            cells = [key]
            for p in ranks:
                a, b = idx.get((nd, p, key)), idx.get((nd, p, "hand_split"))
                cells.append("%.2f" % (a["median"] / b["median"]) if a and b else "")
            ratio_rows.append(cells)
        w("Ratio of medians to the hand-written MPI_Comm_split:\n")
        w(table(["method"] + ["P=%d" % p for p in ranks], ratio_rows))
        w("\n![creation time, %s](%s/creation_%dd.png)\n" % (label, rel, nd))
    w("![ratio to hand-written split](%s/creation_ratio.png)\n" % rel)
    spread = [(idx[(nd, p, "devmesh")]["median"] / idx[(nd, p, "hand_split")]["median"], nd, p)
              for (nd, p, m) in idx if m == "devmesh" and (nd, p, "hand_split") in idx]
    if spread:
        lo_, hi_ = min(spread), max(spread)
        fam = {}
        for q, nd, p in spread:
            fam.setdefault(nd, []).append(q)
        fam_med = {nd: sorted(v)[len(v) // 2] if len(v) % 2 else
                   (sorted(v)[len(v) // 2 - 1] + sorted(v)[len(v) // 2]) / 2 for nd, v in fam.items()}
        worst_nd = max(fam_med, key=fam_med.get)
        w("Across all measured points devmesh's default path took %.2fx (%s, P=%d) to %.2fx (%s, P=%d) "
          "of the hand-written splits' time; the median ratio per family was %s. The fixed part of its "
          "cost, the argument check (one allreduce over all ranks), is shared by fewer group creations "
          "in a mesh with fewer dims%s.\n"
          % (lo_[0], FAMILIES[lo_[1]].split(" ")[0], lo_[2], hi_[0], FAMILIES[hi_[1]].split(" ")[0], hi_[2],
             ", ".join("%.2fx (%s)" % (fam_med[nd], FAMILIES[nd].split(" ")[0]) for nd in sorted(fam_med)),
             ", which is where devmesh compared worst in this run" if worst_nd == min(fam_med) else
             "; in this run devmesh compared worst in the %s family nonetheless"
             % FAMILIES[worst_nd].split(" ")[0]))

    # paths and default
    w("### Creation paths and the default\n")
    path_rows = []
    lo, hi = None, None
    for nd, label in FAMILIES.items():
        for p in sorted({p for (d, p, m) in idx if d == nd}):
            cells = [label, str(p)]
            best, best_t = None, None
            for key in ("devmesh_create_group", "devmesh_split", "devmesh_cart_sub"):
                r = idx.get((nd, p, key))
                cells.append(us(r["median"]) if r else "")
                if r and (best_t is None or r["median"] < best_t):
                    best, best_t = key, r["median"]
            cells.append(best.replace("devmesh_", "") if best else "")
            cg_, other = idx.get((nd, p, "devmesh_create_group")), [idx.get((nd, p, k)) for k in ("devmesh_split", "devmesh_cart_sub")]
            if cg_ and all(other):
                q = cg_["median"] / min(o["median"] for o in other)
                lo, hi = (q if lo is None else min(lo, q)), (q if hi is None else max(hi, q))
            path_rows.append(cells)
    w(table(["family", "P", "create_group µs", "split µs", "cart_sub µs", "fastest"], path_rows))
    w("")
    fastest = [r[-1] for r in path_rows]
    w("create_group was fastest in %d of %d measured (family, P) points%s. `CommPath::automatic` "
      "therefore uses create_group (see `CommPath` in include/devmesh/mesh.hpp); the model below finds "
      "no size at which split or cart_sub would win. (With MPI 4 the create_group path makes each "
      "dim's communicator with MPI_Comm_create_from_group, as the default path does.)\n"
      % (fastest.count("create_group"), len(fastest),
         "" if lo is None else ", taking %.2fx to %.2fx of the faster of the other two" % (lo, hi)))
    dcg, dd = idx.get((3, 8, "devmesh_create_group")), idx.get((3, 8, "devmesh"))
    if dcg and dd:
        w("Every `create_comms` path runs its own consistency check over all members, an allreduce "
          "the default path (`comm(dim)` after `Mesh::create`) does not make: for (2,2,2) at 8 ranks, "
          "create_comms(create_group) took %s (%d communicators) against %s (%d) for the default path%s.\n"
          % (fmt_time(dcg["median"]), dcg["comms"], fmt_time(dd["median"]), dd["comms"],
             "" if dcg["comms"] <= dd["comms"] else
             " (the one more is the root communicator, over which create_comms ran its check before "
             "it ran it over the parent: these timings predate that; the section \"Creation traffic\" "
             "measures both)"))

    # growth
    w("### Growth with the rank count\n")
    ranks3 = sorted({p for (d, p, m) in idx if d == 3})
    w("Least-squares fits of the median time (µs) against P for the 3-D family (P = %s). Both models "
      "have two parameters; the one with the higher R² is named.\n" % ", ".join(str(p) for p in ranks3))
    fit_rows = []
    slopes = {}
    for key, name in METHODS:
        pts = [(p, idx[(3, p, key)]["median"]) for p in ranks3 if (3, p, key) in idx]
        if len(pts) < 3:
            continue
        xs = [p for p, _ in pts]
        ys = [t for _, t in pts]
        a1, b1, r1 = fit([math.log2(x) for x in xs], ys)
        a2, b2, r2 = fit(xs, ys)
        slopes[key] = b2
        fit_rows.append([key, "%.0f + %.0f·log2 P (R² %.3f)" % (a1, b1, r1),
                         "%.0f + %.1f·P (R² %.3f)" % (a2, b2, r2), "a + b·log2 P" if r1 > r2 else "a + b·P"])
    w(table(["method", "a + b·log2 P", "a + b·P", "fits better"], fit_rows))
    w("")
    if "hand_split" in slopes and "devmesh" in slopes and slopes["devmesh"] > 0:
        w("Every rank added shares the same %s cores, so on this machine each collective round also "
          "grows with P: linear growth is what oversubscription alone produces, whatever the algorithm, "
          "and the fits say more about the machine than about the algorithms. The slopes still rank "
          "the methods: per added rank the hand-written splits grow %.1fx as fast as devmesh's default "
          "path (b = %.1f against %.1f µs per rank).\n"
          % (cond.get("nproc", "?"), slopes["hand_split"] / slopes["devmesh"], slopes["hand_split"], slopes["devmesh"]))

    # --- creation with a placement
    w(report_placement.section(pl, fmt_time, table))

    # --- collectives
    w("## Collective overhead\n")
    w("allreduce, allgather and reduce_scatter of float64 through `Communicator&` (virtual call, "
      "datatype and count translation, return-code check) against the raw MPI call on the same MPI "
      "communicator (the flattened 8-rank mesh). Sizes are per rank: allreduce reduces S bytes, "
      "allgather sends S bytes per rank, reduce_scatter leaves S bytes per rank. Each batch repeats "
      "one call for about 10 ms (the count is calibrated on the raw call); the two alternate batch by "
      "batch, and the *paired ratio* is the median over batches of devmesh's batch time over the "
      "adjacent MPI batch.\n")
    for records, ranks, title, note in (
            (coll, 8, "### 8 ranks, %s\n" % regime, ""),
            (coll_alt, 8, "### 8 ranks, %s\n" % alt_regime, ""),
            (coll, 1, "### 1 rank: what the interface itself costs\n",
             "With one rank, MPI's collectives are local copies, so the difference between the two is "
             "what the interface adds per call. The last column compares the fastest batches (min per "
             "call), the ones least disturbed by anything else.\n")):
        t = collective_table(records, ranks)
        if t:
            w(title)
            if note:
                w(note)
            w(t)
            w("")
    pr8 = [r for r in coll if r["ranks"] == 8 and r["method"] == "paired_ratio"]
    one = {(r["op"], r["bytes"], r["method"]): r for r in coll if r["ranks"] == 1}
    cost = [one[(o, b, "devmesh")]["min"] - one[(o, b, "mpi")]["min"]
            for (o, b, m) in one if m == "devmesh" and (o, b, "mpi") in one]
    if pr8:
        worst = max(pr8, key=lambda r: r["median"])
        within = sum(1 for r in pr8 if r["median"] <= 1.02)
        w("At 8 ranks, %s: %d of %d (op, size) points are within 2%%; the largest paired ratio is "
          "%.3f (%s of %s)%s.\n"
          % (regime, within, len(pr8), worst["median"], worst["op"], size_text(worst["bytes"]),
             "" if not cost else
             ". What the interface adds by itself, measured at 1 rank, is %+.0f to %+.0f ns per call, "
             "under 0.1%% of any 8-rank call here; what the 8-rank ratios show beyond that is most "
             "likely the oversubscribed regime's sensitivity to code and cache layout (every call "
             "switches between 8 processes), not work the interface does" % (min(cost) * 1000, max(cost) * 1000)))
    w("![collective overhead](%s/collectives.png)\n" % rel)

    # --- Open MPI
    w(openmpi_section(data, cond, idx, coll, regime))

    # --- Gloo
    w(gloo_section(gloo, gcond, cond))

    # --- variable-size and started collectives
    w(report_vcoll.section(vcoll, cond, size_text, fmt_time, table))

    # --- bookkeeping
    w("## Bookkeeping: per-rank query cost\n")
    bk = os.path.join(data, "bookkeeping.txt")
    if os.path.exists(bk):
        w("Output of `bench/bookkeeping` (single process, no MPI, normal priority; see its header for "
          "the method):\n")
        with open(bk) as f:
            w("```\n" + f.read().rstrip() + "\n```\n")
    else:
        w("Not measured in this run: `bench/bookkeeping` was not built. `bench/run-all` runs it "
          "whenever `BUILD/bench/bookkeeping/bench_bookkeeping` exists.\n")

    # --- on paper
    w(on_paper(idx, idx_alt, regime, alt_regime))

    # --- creation traffic (bench/traffic/model.py wrote the section)
    traffic = os.path.join(data, "traffic.md")
    if os.path.exists(traffic):
        with open(traffic) as f:
            w(f.read())

    # --- fault tolerance (measured under ULFM by bench/fault and written by
    # hand, with its conditions, into docs/bench/data/fault.txt, a Markdown
    # section: Open MPI 5 with --with-ft ulfm is not a leg of ./run bench)
    fault = os.path.join(data, "fault.txt")
    if os.path.exists(fault):
        with open(fault) as f:
            w(f.read())

    # --- two commits compared (bench/seam/run-seam, written by hand with
    # its conditions into docs/bench/data/seam.txt, Markdown as fault.txt
    # is: it measures two builds, not the one ./run bench makes)
    seam = os.path.join(data, "seam.txt")
    if os.path.exists(seam):
        with open(seam) as f:
            w(f.read())

    # --- GPU
    w("## GPU figures\n")
    w("Not part of `./run bench` (its machine has no GPU). The NCCL backend's checks and figures on a GPU "
      "machine (one H100: creation per path, allreduce through the backend against raw ncclAllReduce) come "
      "from tests/gpu/run-gpu-checks.sh and are in [GPU-RESULTS.md](GPU-RESULTS.md), with their summary in "
      "[NCCL.md](NCCL.md), \"Checks on a GPU\".\n")

    with open(out_md, "w") as f:
        f.write("\n".join(md).rstrip() + "\n")


def on_paper(idx, idx_alt, regime, alt_regime):
    md = []
    w = md.append
    w("## On paper, to 100k ranks\n")
    w("What a (dp, cp, tp) mesh with tp = 8 and cp = 4 (dp = P/32) costs to set up at P = 1k, 10k and "
      "100k (1024, 10240, 102400) ranks, from a step-count model of MPICH's algorithms and the "
      "constants below. **Every constant is an assumption**, not a measurement; the model's value is "
      "in how each path grows, and it is checked against this machine only through ratios.\n")
    w("What the model relies on:\n")
    w("* **MPI_Comm_split (MPICH, `MPIR_Comm_split_impl`)**: every rank allgathers (colour, key), "
      "2 ints, over the whole parent into a table of P entries, scans it, sorts its own colour's "
      "entries, then agrees on a context id with an allreduce of the context mask over the whole "
      "parent. Per call: 2·α·log2 P latency + 8·P bytes + O(P) local work on every rank, whatever "
      "the group size. MPI_Cart_sub is implemented with the same split; MPI_Cart_create without "
      "reordering costs a duplicate (one context id over P).")
    w("* **MPI_Comm_create_group (MPICH, `MPIR_Get_contextid_sparse_group`)**: the context id is "
      "agreed by an allreduce over the group's members only, by point-to-point with the given tag; "
      "the rank mapping is O(g) for groups of a communicator whose ranks are a subset of "
      "MPI_COMM_WORLD. Per call: α·log2 g + O(g). Assumed: one round of context-id agreement (more "
      "when many communicators are alive and the masks are fragmented).")
    w("* **MPI_Comm_create_from_group (MPICH 4.0, `MPIR_Comm_create_from_group_impl`)**: hashes the "
      "string tag to an integer tag and runs MPI_Comm_create_group's algorithm over MPICH's internal "
      "world communicator, then attaches the error handler; modelled with create_group's cost (the "
      "constant difference measured here is in the creation section).")
    w("* **devmesh**: `Mesh::create` makes no communicator; it costs the argument check, one small "
      "allreduce over P, α·log2 P, plus an O(P) local MPI_Comm_group of the parent (the only O(P) "
      "term; views are O(ndim)). Then one MPI_Comm_create_from_group per dim over its group: "
      "Σ α·log2 g_i = α·log2 P for a mesh whose dims multiply to P. The `create_comms` paths add "
      "their consistency check, one small allreduce over the parent (α·log2 P; over a root "
      "communicator made from a group over all P, α·log2 P + O(P) more, once the program freed the "
      "parent); split then splits the parent per dim, cart_sub makes the Cartesian communicator "
      "over it first.")
    w("* Constants (assumptions): α = %.0f µs per small-message step between hosts (InfiniBand-class "
      "MPI latency); 10 GB/s per rank for the split's allgather payload; %.0f ns per table entry "
      "scanned or group entry built; %.0f ns per comparison level of a sort.\n"
      % (ALPHA_US, GAMMA_US * 1000, SORT_US * 1000))
    m8 = model_paths(8, [2, 2, 2])
    measured = []
    for reg, ix in ((regime, idx), (alt_regime, idx_alt)):
        h = ix.get((3, 8, "hand_split")), ix.get((3, 8, "devmesh")), ix.get((3, 8, "hand_create_group"))
        if all(h):
            measured.append("%.2f and %.2f at %s" % (h[1]["median"] / h[0]["median"],
                                                       h[2]["median"] / h[0]["median"], reg))
    sp8, seq8 = idx.get((3, 8, "hand_split")), idx.get((3, 8, "part_check_from_group"))
    w("What this machine can and cannot check: for (2,2,2) at 8 ranks the model's latency steps give "
      "devmesh %.2fx and three bare MPI_Comm_create_group calls %.2fx of the hand-written split; "
      "measured: %s%s. Neither regime here is a network: oversubscribed, a collective call costs "
      "scheduling rounds of all ranks almost whatever it does, however few ranks it involves, and "
      "devmesh's own work between its calls costs more than it does alone (see "
      "[why](#why-the-creation-target-is-missed)). So the machine confirms the ordering of the paths, "
      "not the model's constants.\n"
      % (m8["devmesh"] / m8["hand_split"], 3 * model_create_group(2) / m8["hand_split"],
         "; ".join(measured) if measured else "not available",
         "" if not (sp8 and seq8) else
         " (devmesh's MPI calls alone, in sequence: %.2fx at %s; the model gives them %.2fx)"
         % (seq8["median"] / sp8["median"], regime, m8["devmesh"] / m8["hand_split"])))
    rows = []
    for P in (1024, 10240, 102400):
        groups = [P // 32, 4, 8]
        m = model_paths(P, groups)
        rows.append(["%dk" % (P // 1024), "(%d, 4, 8)" % (P // 32),
                     "%.2f" % (m["hand_split"] / 1000), "%.2f" % (m["hand_cart"] / 1000),
                     "%.2f" % (m["devmesh_split"] / 1000), "%.2f" % (m["devmesh_cart_sub"] / 1000),
                     "**%.3f**" % (m["devmesh"] / 1000), "%.0fx" % (m["hand_split"] / m["devmesh"]),
                     "%.0f KB" % (8 * P / 1000.0)])
    w(table(["P", "(dp, cp, tp)", "hand split ms", "hand cart ms", "devmesh split ms",
             "devmesh cart_sub ms", "devmesh default ms (from_group per dim)", "split / default",
             "split's table per call, per rank"], rows))
    w("")
    w("The split-based paths carry an O(P) term per dim (the allgathered table and its scan) that "
      "create_group does not have, so the gap widens with P and there is no crossover: devmesh uses "
      "create_group at every size (`CommPath::automatic`). The O(P) term is also where real systems "
      "have hurt: on Blue Gene/Q, MPI_Comm_split and MPI_Comm_dup grew about as P² and a multigrid "
      "setup with one split went from 0.06 s on 1 node to 151 s on 46K nodes, 0.05 to 0.06 s without "
      "it (S. Williams, mpich-devel, 17 May 2014, "
      "https://lists.mpich.org/pipermail/devel/2014-May/000391.html); Sack and Gropp's scalable "
      "split cut the worst case they consider from 22 s to 0.37 s (EuroMPI 2010, \"A scalable "
      "MPI_Comm_split algorithm for exascale computing\"). The model above assumes a healthy "
      "O(P log P) implementation; those reports are what an unhealthy one costs.\n")
    w("NCCL at scale: communicator initialisation has O(N²) loops in ncclBuildRing and "
      "initTransportsRank; Meta reports they cost about 26 s (rings, 96K ranks) and 11 s "
      "(transports, 48K ranks) of CPU time (NVIDIA/nccl pull request 1789, 2025). Assuming that "
      "quadratic term dominates, a communicator over a dim's group of g ranks pays (g/N)² of it. "
      "devmesh's NCCL backend by default (option `init=unique_id`) initialises each dim's communicator "
      "over its group only, so at 100k ranks with dp = 3200 the largest one costs about "
      "(3200/102400)² ≈ 0.1% of a world-sized initialisation; `init=split` instead starts from "
      "one world-sized NCCL communicator and pays that cost once. Not measured: no GPU here.\n")
    return "\n".join(md)


if __name__ == "__main__":
    main()
