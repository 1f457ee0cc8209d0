#!/usr/bin/env python3
"""Plots the cost rows of a GPU run (run-gpu-checks.sh's log or GPU-RESULTS.md):
per operation, devmesh's time per call minus raw NCCL's on the same
communicator (the row's paired difference), against the message size, with the bounds the rows are held to.

    python3 tests/gpu/plot_cost.py docs/GPU-RESULTS.md docs/gpu-cost.png [SECTION]

SECTION: only the rows under the heading that starts with it (e.g.
"## Round two"); the first leg's rows when several legs have them."""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROW = re.compile(r"RESULT cost (\w+) (\d+) B: devmesh ([\d.]+) us, raw NCCL ([\d.]+) us")
DIFF = re.compile(r"difference ([-+][\d.]+) us")


def rows(path, section):
    on = section is None
    seen = {}
    for line in open(path):
        if section is not None and line.startswith("## "):
            on = line.startswith(section)
        m = ROW.search(line) if on else None
        if m:
            op, size, dev, raw = m.group(1), int(m.group(2)), float(m.group(3)), float(m.group(4))
            d = DIFF.search(line)  # the median of the paired differences, where the row has it
            seen.setdefault(op, {}).setdefault(size, (float(d.group(1)) if d else dev - raw, raw))  # the first leg's
    return seen


def main():
    src, png = sys.argv[1], sys.argv[2]
    data = rows(src, sys.argv[3] if len(sys.argv) > 3 else None)
    if not data:
        sys.exit(f"plot_cost.py: no cost rows in {src}")
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for op, by_size in data.items():
        sizes = sorted(by_size)
        ax.plot(sizes, [by_size[s][0] for s in sizes], marker="o", label=op)
    sizes = sorted({s for d in data.values() for s in d})
    raw = {s: min(d[s][1] for d in data.values() if s in d) for s in sizes}
    ax.plot(sizes, [1.0 if s < 1 << 20 else max(1.0, 0.03 * raw[s]) for s in sizes], "k--",
            label="bound: 1 us below 1 MiB, max(1 us, 3%) from 1 MiB")
    ax.axhline(0, color="grey", linewidth=0.5)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("devmesh minus raw NCCL, us per call")
    ax.set_title("Cost of a call through devmesh (1 rank, same NCCL communicator and stream)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == "__main__":
    main()
