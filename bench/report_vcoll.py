"""The variable-size and started collectives' part of docs/BENCHMARKS.md
(bench/alltoallv, bench/gloo/alltoallv.cpp, bench/overlap), for
bench/report.py: its targets' rows and its section. Reads alltoallv.tsv,
gloo_alltoallv.tsv, overlap.tsv and vcoll_conditions.txt of DATA_DIR;
each part is left out when its records are missing. Standard library only.
"""
import os


def _records(read_records, data, name, kind):
    return read_records(os.path.join(data, name), kind)


def read(data, read_records, read_conditions):
    path = os.path.join(data, "vcoll_conditions.txt")
    return {
        "alltoallv": _records(read_records, data, "alltoallv.tsv", "alltoallv"),
        "instructions": _records(read_records, data, "alltoallv_instructions.tsv", "alltoallv_instructions"),
        "gloo": _records(read_records, data, "gloo_alltoallv.tsv", "gloo_alltoallv"),
        "overlap": _records(read_records, data, "overlap.tsv", "overlap"),
        "cond": read_conditions(path) if os.path.exists(path) else {},
    }


def _index(rows, *keys):
    return {tuple(r.get(k) for k in keys): r for r in rows}


def _verdict(ratio, diff, b):
    """The target: ratio <= 1.02 from 4 KiB per peer, within 1 us a call
    below. A median past it whose interquartile range still reaches it is
    not resolved: the rounds scatter more than the margin."""
    r, limit, margin = (ratio, 1.02, 0.04) if b >= 4096 else (diff, 1.0, 2.0)
    wide = r["q3"] - r["q1"] > margin
    if r["median"] <= limit:
        return "**met** (at the median; the IQR is wider than the margin)" if wide else "**met**"
    return "**not resolved** (the IQR reaches the target)" if r["q1"] <= limit else "**missed**"


def target_rows(v, size_text):
    by = _index(v["alltoallv"], "bytes", "method")
    rows = []
    for b in sorted({r["bytes"] for r in v["alltoallv"]}):
        ratio, diff = by.get((b, "paired_ratio")), by.get((b, "paired_diff"))
        if not (ratio and diff):
            continue
        goal = "≤ 1.02x" if b >= 4096 else "within 1 µs a call"
        rows.append(["alltoallv of %s per peer through devmesh %s of MPI_Alltoallv on the same communicator, "
                     "%d ranks" % (size_text(b), goal, ratio["ranks"]),
                     "paired ratio %.3f (IQR %.3f to %.3f), difference %+.2f µs (IQR %+.2f to %+.2f), %d rounds"
                     % (ratio["median"], ratio["q1"], ratio["q3"], diff["median"], diff["q1"], diff["q3"],
                        ratio["n"]),
                     _verdict(ratio, diff, b)])
    return rows


def _ratio(r):
    return "%.3f [%.3f–%.3f]" % (r["median"], r["q1"], r["q3"]) if r else "–"


def _alltoallv_part(v, size_text, fmt_time, table):
    rows_in = v["alltoallv"]
    if not rows_in:
        return []
    by = _index(rows_in, "bytes", "method")
    ranks = max(r["ranks"] for r in rows_in)
    cell = lambda r: fmt_time(r["median"]) if r else "–"
    rows = []
    for b in sorted({r["bytes"] for r in rows_in}):
        g = lambda m: by.get((b, m))
        diff = g("paired_diff")
        rows.append([size_text(b), "%d × %d" % (g("mpi")["iters"], g("mpi")["n"]), cell(g("devmesh")),
                     cell(g("mpi")), _ratio(g("paired_ratio")),
                     "%+.2f µs" % diff["median"] if diff else "–", _ratio(g("c_paired_ratio")),
                     _ratio(g("capi_paired_ratio")),
                     cell(g("devmesh_i")), cell(g("mpi_i")), _ratio(g("i_paired_ratio")),
                     _verdict(g("paired_ratio"), diff, b) if g("paired_ratio") and diff else "–"])
    out = ["### alltoallv against MPI_Alltoallv\n",
           "`bench/alltoallv`: %d ranks, float64, the same number of bytes to every peer (itself included), "
           "packed in rank order, on the MPI communicator of one flattened dim and the same buffers for every "
           "method: `Communicator::alltoallv` (the gate's one pass over four arrays of %d counts and displacements, "
           "the virtual call, and the MPI backend, which hands MPI the `size_t` arrays as they are: `MPI_Count` and "
           "`MPI_Aint` are their signed twins here, and no plugin gets an entry past `PTRDIFF_MAX`), "
           "`devmesh_alltoallv` through a C "
           "mesh adopting that communicator (the handle and dim look-ups on top), `MPI_Alltoallv` with `int` "
           "arrays, `MPI_Alltoallv_c` with "
           "`MPI_Count` and `MPI_Aint` arrays (the large-count call the MPI backend makes where the MPI has it), "
           "and the started forms "
           "`ialltoallv` + `wait` against `MPI_Ialltoallv` + `MPI_Wait`. No PMPI layer wraps the raw calls. "
           "Rounds of one batch per method (about "
           "10 ms each, order rotating every round); the paired ratio is the median over rounds of devmesh's "
           "batch time over MPI's batch of the same round, the difference likewise in µs per call. Target: "
           "≤ 1.02x from 4 KiB per peer, within 1 µs a call below.\n" % (ranks, ranks),
           table(["per peer", "calls × rounds", "devmesh", "MPI_Alltoallv", "paired ratio [IQR]",
                  "difference", "devmesh ÷ MPI_Alltoallv_c [IQR]", "C API ÷ MPI [IQR]", "ialltoallv+wait", "MPI_Ialltoallv+Wait",
                  "started ÷ MPI [IQR]", "target"], rows), ""]
    return out + _instructions_part(v)


def _instructions_part(v):
    by = {r["method"]: r for r in v["instructions"]}
    if "devmesh" not in by or "capi" not in by:
        return []
    d, c = by["devmesh"], by["capi"]
    return ["Instructions devmesh adds to a call, counted by callgrind (`bench/alltoallv/instructions.sh`: rank 0 "
            "of %d under valgrind, %s calls of %d B per peer; per call, the inclusive count of devmesh's function "
            "less that of the MPI call it makes, so that MPI's own work and polling cancel out): "
            "`Communicator::alltoallv` **%s**, `devmesh_alltoallv` **%s**. On 2 cores shared by 8 ranks a call's "
            "time is mostly the ranks' CPU work one after another, so every instruction a rank adds shows in "
            "the small sizes' difference several times over.\n" % (d["ranks"], d["calls"], d["bytes"],
                                                                       d["added"], c["added"])]


def _gloo_part(v, size_text, fmt_time, table):
    rows_in = v["gloo"]
    if not rows_in:
        return []
    by = _index(rows_in, "bytes", "method")
    ranks = max(r["ranks"] for r in rows_in)
    rows = []
    for b in sorted({r["bytes"] for r in rows_in}):
        d, g, p, diff = (by.get((b, m)) for m in ("devmesh_gloo", "raw_gloo", "paired_ratio", "paired_diff"))
        if d and g and p:
            rows.append([size_text(b), "%d × %d" % (d["iters"], d["n"]), fmt_time(d["median"]),
                         fmt_time(g["median"]), _ratio(p), "%+.1f µs" % diff["median"] if diff else "–"])
    return ["### alltoallv on a Gloo dim against gloo::alltoallv\n",
            "`bench/gloo/alltoallv.cpp`: %d ranks, a mesh whose only dim is on `gloo` (TCP over 127.0.0.1). "
            "devmesh's `Communicator::alltoallv` against `gloo::alltoallv` called on **the dim's own** "
            "`gloo::Context` (from `native_handle()`) with the same buffers, as PyTorch's Gloo process group "
            "calls it (`AlltoallvOptions` with elements per rank). The displacements are the packed prefix "
            "sums, the case where the plugin passes the caller's buffers to Gloo without packing. Rounds of "
            "two batches of about 50 ms.\n" % ranks,
            table(["per peer", "calls × rounds", "devmesh (Gloo dim)", "raw gloo::alltoallv",
                   "paired ratio [IQR]", "difference"], rows), ""]


def _overlap_part(v, size_text, fmt_time, table):
    rows_in = v["overlap"]
    if not rows_in:
        return []
    by = _index(rows_in, "mpi", "ranks", "bytes", "method")
    labels = {"mpich4": "MPICH", "mpich4_async_progress": "MPICH, MPICH_ASYNC_PROGRESS=1 (MPI_THREAD_MULTIPLE)",
              "openmpi4": "Open MPI"}
    rows = []
    keys = sorted({(r["mpi"], r["ranks"], r["bytes"]) for r in rows_in}, key=lambda k: (-k[1], k[0], k[2]))
    for mpi, ranks, b in keys:
        g = lambda m: by.get((mpi, ranks, b, m))
        if not all(g(m) for m in ("comm", "compute", "sequential", "overlapped", "overlap")):
            continue
        frac = lambda r: "%.2f [%.2f–%.2f]" % (r["median"], r["q1"], r["q3"]) if r else "–"
        rows.append([labels.get(mpi, mpi), str(ranks), size_text(b), fmt_time(g("comm")["median"]),
                     fmt_time(g("compute")["median"]), fmt_time(g("sequential")["median"]),
                     fmt_time(g("overlapped")["median"]), frac(g("overlap")),
                     fmt_time(g("polled")["median"]) if g("polled") else "–", frac(g("polled_overlap")),
                     frac(g("mpi_overlap")), frac(g("mpi_polled_overlap"))])
    return ["### Overlap: iallreduce + compute against allreduce then compute\n",
            "`bench/overlap`: float32 sum over every rank; the compute is a multiply-add sweep over a private "
            "256 KiB array, repeated so that it lasts about as long as the allreduce alone. *overlapped* is "
            "`iallreduce`, the compute, `wait`; *polled* cuts the compute into 16 slices with `test()` between "
            "them; *raw MPI* is `MPI_Iallreduce`, the compute, `MPI_Wait` on the same communicator (*raw MPI "
            "polled*: with `MPI_Test` between the slices). The overlap "
            "obtained is, round by round, (sequential − overlapped) ÷ min(comm, compute): 0 when starting the "
            "operation early gains nothing, 1 when the shorter of the two is hidden entirely (negative: the "
            "started form cost more). At 8 ranks the 2 cores are oversubscribed four times, so compute and "
            "communication compete for the same cores and little can be hidden; 2 ranks have one core each. "
            "The `MPICH_ASYNC_PROGRESS=1` rows ran at normal priority (each rank's progress thread polls "
            "without sleeping, and at real-time priority it keeps the rank's own thread off the core for "
            "whole time slices), with fewer rounds at 8 ranks.\n",
            table(["MPI", "ranks", "size", "comm alone", "compute alone", "sequential", "overlapped",
                   "overlap [IQR]", "polled", "polled overlap", "raw MPI overlap", "raw MPI polled overlap"],
                  rows), "",
            "Without a progress thread MPICH advances a started collective only inside MPI calls: between "
            "`iallreduce` and `wait` nothing moves unless the program calls in, which `test()` does (the "
            "*polled* column). Its progress thread (`MPICH_ASYNC_PROGRESS=1`, which needs "
            "`MPI_THREAD_MULTIPLE`) moves it meanwhile, at the price of one more polling thread per rank "
            "competing for the cores. devmesh's started forms call the MPI's own `MPI_Iallreduce` and "
            "`MPI_Test`: compare the *overlap* and *polled* columns with their *raw MPI* counterparts. %s\n" % _overlap_summary(by, keys)]


def _overlap_summary(by, keys):
    """One sentence on the 2-rank rows (one rank per core), from the medians."""
    parts = []
    for mpi, ranks, b in keys:
        o, po, c = (by.get((mpi, ranks, b, m)) for m in ("overlap", "polled_overlap", "comm"))
        if ranks == 2 and o and po:
            parts.append("%s, %s: %.2f (polled %.2f, comm alone %.2f ms)"
                         % ({"mpich4": "MPICH", "mpich4_async_progress": "progress thread"}.get(mpi, mpi),
                            "%d MiB" % (b >> 20) if b >= 1 << 20 else "%d B" % b, o["median"], po["median"],
                            c["median"] / 1000 if c else float("nan")))
    if not parts:
        return ""
    return ("In this run, at 2 ranks the median overlap obtained was " + "; ".join(parts) + ". A value whose IQR "
            "spans 0 is no overlap this machine can resolve; a negative polled value means the 16 `test()` "
            "calls cost more than they hid.")


def section(v, cond, size_text, fmt_time, table):
    """The section, or "" when none of its benchmarks ran."""
    parts = (_alltoallv_part(v, size_text, fmt_time, table) + _gloo_part(v, size_text, fmt_time, table)
             + _overlap_part(v, size_text, fmt_time, table))
    if not parts:
        return ""
    vc = v["cond"]
    head = ["## Variable-size and started collectives\n",
            "Measured %s on %s cores (%s), MPICH %s with the yield shim and MPIR_CVAR_NOLOCAL=%s, priority %s, "
            "load average %s at the start and %s at the end; every time is the slowest rank's median "
            "(`bench/run-all`, section `vcoll`: `DEVMESH_BENCH_ONLY=vcoll bench/run-all BUILD` refreshes it "
            "alone).\n"
            % (vc.get("date", cond.get("date", "?")), vc.get("nproc", cond.get("nproc", "?")),
               "shared with other jobs, oversubscribed at 8 ranks", vc.get("mpich", cond.get("mpich", "?")),
               cond.get("nolocal", "1"), vc.get("priority", "?"), vc.get("load_start", "?"),
               vc.get("load_end", "?"))]
    return "\n".join(head + parts)
