#!/usr/bin/env python3
"""devmesh-plan's placement (--topology, --ranks-per-host with
--hosts-per-domain and --domains-per-switch, --place): parent ranks worked
out by hand, the JSON fields, the text picture, the SVG picture, the
errors and the help. check_placement.py checks random cases.

usage: test_place.py DEVMESH_PLAN
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import plan_checks
from plan_checks import SVG, by_class, box, check, failures, inside

TOOL = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="devmesh-place-test-")


def run(*args):
    return subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)


def topology(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def ok_json(*args):
    p = run(*args, "--json")
    check(p.returncode == 0 and p.stderr == "", f"{args}: exit {p.returncode}, stderr {p.stderr!r}")
    return json.loads(p.stdout) if p.returncode == 0 else {}


# Hosts of 4, 4, 3 and 4 ranks (ranks 0-3, 4-7, 8-10, 11-14).
UNEVEN = "".join(f"host={h}\n" for h, n in (("a", 4), ("b", 4), ("c", 3), ("d", 4)) for _ in range(n))
# Two hosts, ranks dealt round robin (srun --distribution=cyclic).
CYCLIC = "# rank r on host r % 2\n" + "".join(f"host={'ab'[r % 2]}\n" for r in range(8))
# Domain d0 holds three hosts of 2 ranks, d1 two; names reused across domains
# are other hosts.
DOMAINS = ("host=n0 domain=d0\nhost=n0 domain=d0\n\nhost=n1 domain=d0\nhost=n1 domain=d0\n"
           "host=n2 domain=d0   # a third host\nhost=n2 domain=d0\n"
           "host=n0 domain=d1\nhost=n0 domain=d1\nhost=n1\tdomain=d1\nhost=n1 domain=d1\n")


def test_fixed():
    # dp within a host of 2, tp across the 4 hosts: root index (dp, tp) is
    # parent rank 2 tp + dp.
    out = ok_json("--ranks-per-host", "2", "--shape", "2,4", "--names", "dp,tp", "--place", "dp=host")
    check(list(out) == ["world", "levels", "placement", "parent_ranks", "leftovers", "dims"], f"keys {list(out)}")
    check(out.get("parent_ranks") == [0, 2, 4, 6, 1, 3, 5, 7], f"dp=host parent ranks {out.get('parent_ranks')}")
    check(out.get("world") == 8 and out.get("leftovers") == [] and out.get("levels") == ["host"]
          and out.get("placement") == {"dp": "host"}, f"dp=host fields {out}")
    check([d.get("within") for d in out.get("dims", [])] == [["host"], []], "dp=host within")
    check([list(d) for d in out.get("dims", [])] == [["name", "size", "layout", "groups", "within"]] * 2,
          "dim keys")
    check(out["dims"][0]["groups"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
          and out["dims"][1]["groups"] == [[0, 2, 4, 6], [1, 3, 5, 7]], "dp=host groups as parent ranks")
    # Uneven hosts: tp=4 takes the three hosts of 4, the host of 3 is left over.
    uneven = topology("uneven.txt", UNEVEN)
    out = ok_json("--topology", uneven, "--shape", "3,4", "--names", "a,tp", "--place", "tp=host")
    check(out.get("parent_ranks") == [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 14], f"uneven {out.get('parent_ranks')}")
    check(out.get("leftovers") == [8, 9, 10] and out.get("world") == 15, f"uneven leftovers {out}")
    check(out["dims"][1]["groups"] == [[0, 1, 2, 3], [4, 5, 6, 7], [11, 12, 13, 14]], "uneven tp groups")
    # Round robin: tp=host takes each host's ranks in order.
    out = ok_json("--topology", topology("cyclic.txt", CYCLIC), "--shape", "2,4", "--names", "dp,tp",
                  "--place", "tp=host")
    check(out.get("parent_ranks") == [0, 2, 4, 6, 1, 3, 5, 7], f"cyclic {out.get('parent_ranks')}")
    # Uneven domains: 2 hosts of each domain (the first two of d0), tp=4
    # within a domain, 2 ranks of each host.
    out = ok_json("--topology", topology("domains.txt", DOMAINS), "--shape", "2,4", "--names", "dp,tp",
                  "--place", "tp=domain")
    check(out.get("parent_ranks") == [0, 1, 2, 3, 6, 7, 8, 9] and out.get("leftovers") == [4, 5],
          f"uneven domains {out}")
    check(out.get("levels") == ["host", "domain"] and [d["within"] for d in out["dims"]] == [[], ["domain"]],
          f"uneven domains within {out}")
    # Blocks of 2 ranks, 2 hosts per domain: dp fills a host, ep the
    # domain's two hosts, tp the two domains: rank 4 tp + 2 ep + dp.
    out = ok_json("--ranks-per-host", "2", "--hosts-per-domain", "2", "--world", "8", "--shape", "2,2,2",
                  "--names", "dp,ep,tp", "--place", "ep=domain,dp=host")
    check(out.get("parent_ranks") == [0, 4, 2, 6, 1, 5, 3, 7], f"blocks {out.get('parent_ranks')}")
    check([d["within"] for d in out["dims"]] == [["host", "domain"], ["domain"], []], f"blocks within {out}")
    # A switch level: 2 switches of 2 domains of 2 hosts of 2 ranks; tp=4
    # within a domain, the rest over the switches: the identity.
    out = ok_json("--ranks-per-host", "2", "--hosts-per-domain", "2", "--domains-per-switch", "2", "--shape",
                  "4,4", "--names", "dp,tp", "--place", "tp=domain")
    check(out.get("levels") == ["host", "domain", "switch"] and out.get("parent_ranks") == list(range(16)),
          f"switches {out}")
    check([d["within"] for d in out["dims"]] == [[], ["domain", "switch"]], f"switches within {out}")
    # Blocks need not fill the last host: 14 ranks on hosts of 4.
    out = ok_json("--ranks-per-host", "4", "--world", "14", "--shape", "3,4", "--names", "a,tp", "--place", "tp=host")
    check(out.get("parent_ranks") == list(range(12)) and out.get("leftovers") == [12, 13] and out.get("world") == 14,
          f"a last host of 2 {out}")
    # A 0 in the shape is filled from the topology's ranks.
    out = ok_json("--ranks-per-host", "4", "--world", "8", "--shape", "0,4", "--names", "a,b", "--place", "b=host")
    check([d["size"] for d in out.get("dims", [])] == [2, 4] and out.get("parent_ranks") == list(range(8)),
          f"filled 0 {out}")
    # --topology without --place: nothing placed, as the library without a
    # placement: root index = parent rank over every rank, the levels shown.
    out = ok_json("--topology", uneven, "--shape", "0", "--names", "x")
    check(out.get("parent_ranks") == list(range(15)) and out.get("leftovers") == [] and out.get("placement") == {}
          and out["dims"][0].get("within") == [], f"no --place {out}")


def test_member():
    uneven = topology("uneven.txt", UNEVEN)
    base = ["--topology", uneven, "--shape", "3,4", "--names", "a,tp", "--place", "tp=host"]
    one = ok_json(*base, "--rank", "12")
    check(one.get("levels") == ["host"] and one.get("instances") == ["d"] and one.get("coordinate") == [2, 1]
          and one["dims"][1]["group"] == [11, 12, 13, 14], f"--rank 12 {one}")
    p = run(*base, "--rank", "9")
    check(p.returncode == 2 and "placement leaves it over" in p.stderr and "8,9,10" in p.stderr,
          f"--rank of a leftover: {p.stderr!r}")
    # A shrink after the placement: the kept ranks are parent ranks.
    out = ok_json(*base, "--failed", "5", "--shrink", "a")
    check(out.get("parent_ranks") == [0, 1, 2, 3, 11, 12, 13, 14] and out.get("leftovers") == [8, 9, 10]
          and [d["within"] for d in out["dims"]] == [[], ["host"]], f"placed and shrunk {out}")


def test_text():
    uneven = topology("uneven.txt", UNEVEN)
    p = run("--topology", uneven, "--shape", "3,4", "--names", "a,tp", "--place", "tp=host")
    check(p.returncode == 0, f"text exit {p.returncode} {p.stderr!r}")
    for line in ("root mesh a=3 tp=4 (12 ranks, world 15)",
                 f"placed over 15 parent ranks, levels host (--topology {uneven}), placement tp=host",
                 "parent ranks by root index: 0,1,2,3,4,5,6,7,11,12,13,14", "leftovers: 8,9,10",
                 "  host c: ranks 8-10 (in the mesh: none)", "  host d: ranks 11-14",
                 "a=2   11   12   13   14", "tp = 4:1  within host", "a = 3:4  within no level",
                 "  [0,1,2,3] [4,5,6,7] [11,12,13,14]"):
        check(line in p.stdout.splitlines(), f"text lacks {line!r}:\n{p.stdout}")
    # Instances nested outermost first, each host under its domain.
    p = run("--topology", topology("domains.txt", DOMAINS), "--shape", "2,4", "--names", "dp,tp", "--place",
            "tp=domain")
    want = ["level instances, outermost first:", "  domain d0: ranks 0-5 (in the mesh: 0-3)",
            "    host n0: ranks 0-1", "    host n1: ranks 2-3", "    host n2: ranks 4-5 (in the mesh: none)",
            "  domain d1: ranks 6-9", "    host n0: ranks 6-7", "    host n1: ranks 8-9"]
    lines = p.stdout.splitlines()
    at = lines.index(want[0]) if want[0] in lines else -1
    check(at >= 0 and lines[at:at + len(want)] == want, f"instance tree:\n{p.stdout}")
    one = run("--topology", uneven, "--shape", "3,4", "--names", "a,tp", "--place", "tp=host", "--rank", "12")
    check("on host d" in one.stdout.splitlines(), f"--rank text {one.stdout!r}")


def svg_of(*args):
    path = os.path.join(TMP, "placed.svg")
    if os.path.exists(path):
        os.remove(path)
    p = run(*args, "--svg", path)
    if not check(p.returncode == 0, f"{args} --svg: exit {p.returncode} {p.stderr!r}"):
        return ET.Element("svg")
    return ET.parse(path).getroot()


def test_svg():
    path = topology("domains.txt", DOMAINS)
    args = ["--topology", path, "--shape", "2,4", "--names", "dp,tp", "--place", "tp=domain"]
    out = ok_json(*args)
    root = svg_of(*args)
    panels = {g.get("data-dim"): g for g in by_class(root, "g", "panel")}
    check(list(panels) == ["dp", "tp"], f"SVG panels {list(panels)}")
    notes = {t.get("data-note"): "".join(t.itertext()) for t in by_class(root, "text", "note")}
    check(notes.get("leftovers") == "leftovers: 4,5" and "placement tp=domain" in notes.get("placement", ""),
          f"SVG notes {notes}")
    dims = {t.get("data-dim"): t.get("data-within") for t in by_class(root, "text", "dim")}
    check(dims == {"dp": "", "tp": "domain"}, f"SVG dim lines {dims}")
    # Host r // 2 of domain r < 6 ? d0 : d1, as the file says.
    host_of = {r: ("d0" if r < 6 else "d1", f"n{(r if r < 6 else r - 6) // 2}") for r in range(10)}
    for dim, groups in ((d["name"], d["groups"]) for d in out.get("dims", [])):
        p = panels.get(dim, ET.Element("g"))
        cells = {}
        for g in by_class(p, "g", "rank") + by_class(p, "g", "leftover"):
            cells[int(g.get("data-rank"))] = (g, by_class(g, "rect", "cell")[0])
        check(sorted(cells) == list(range(10)), f"{dim}: cells {sorted(cells)}")
        check(sorted(int(g.get("data-rank")) for g in by_class(p, "g", "leftover")) == [4, 5], f"{dim}: leftovers")
        domains = [e for e in by_class(p, "rect", "level") if e.get("data-level") == "domain"]
        hosts = [e for e in by_class(p, "rect", "level") if e.get("data-level") == "host"]
        check(len(domains) == 2 and len(hosts) == 5, f"{dim}: {len(domains)} domains, {len(hosts)} hosts")
        for r, (g, cell) in cells.items():
            d, h = host_of[r]
            dom = [e for e in domains if e.get("data-instance") == d]
            inner = [e for e in hosts if e.get("data-instance") == h and inside(box(e), box(dom[0]))] if dom else []
            check(len(inner) == 1 and inside(box(cell), box(inner[0])), f"{dim}: rank {r} not in host {h} of {d}")
        # One colour per group, and the groups' colours differ.
        fills = [{cells[r][1].get("fill") for r in grp} for grp in groups]
        check(all(len(f) == 1 for f in fills) and len({min(f) for f in fills}) == len(groups),
              f"{dim}: group colours {fills}")
        check(all(cells[r][0].get("data-group") == str(k) for k, grp in enumerate(groups) for r in grp),
              f"{dim}: data-group")
    # --color-by draws one panel; a topology too large to draw is refused.
    root = svg_of(*args, "--color-by", "tp")
    check([g.get("data-dim") for g in by_class(root, "g", "panel")] == ["tp"], "SVG --color-by")
    p = run("--ranks-per-host", "8", "--world", "5000", "--shape", "8", "--names", "x", "--place", "x=host",
            "--svg", os.path.join(TMP, "big.svg"))
    check(p.returncode == 2 and "too many to draw" in p.stderr, f"big topology SVG: {p.stderr!r}")


def expect_error(status, words, *args):
    p = run(*args, "--json")
    what = " ".join(args)
    check(p.returncode == 2, f"{what}: exit {p.returncode}")
    lines = p.stderr.splitlines()
    check(len(lines) == 1 and lines[0].startswith("devmesh-plan: "), f"{what}: stderr {p.stderr!r}")
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        out = {}
    message = lines[0][len("devmesh-plan: "):] if lines else None
    check(out == {"error": status, "message": message}, f"{what}: JSON {p.stdout!r}, expected {status}")
    check(all(w in p.stderr for w in words), f"{what}: message {p.stderr!r} lacks {words}")
    t = run(*args)
    check(t.returncode == 2 and t.stdout == "" and t.stderr == p.stderr, f"{what}: text mode {t.stdout!r} {t.stderr!r}")


def test_errors():
    ia, sm, ud = "invalid_argument", "shape_mismatch", "unknown_dim"
    uneven = topology("uneven.txt", UNEVEN)
    base = ["--shape", "2,4", "--names", "dp,tp"]
    # The model's messages, word for word.
    expect_error(sm, ["devmesh-plan: dim 'tp' (size 4) is larger than its level 'host': the largest holds 2 ranks "
                      "(ranks per host: 2, 2, 2, 2)\n"], *base, "--ranks-per-host", "2", "--place", "tp=host")
    expect_error(sm, ["devmesh-plan: shape (5, 3) cannot be tiled over 15 ranks (ranks per host: 4, 4, 3, 4): it "
                      "needs equal parts of equal instances at every level\n"],
                 "--topology", uneven, "--shape", "0,3", "--names", "a,b", "--place", "b=host")
    expect_error(sm, ["dims dp=host, tp=host cannot all stay within their levels"],
                 *base, "--ranks-per-host", "4", "--place", "dp=host,tp=host")
    expect_error(sm, ["shape (2, 4) has 8 ranks, the parent 6"], *base, "--ranks-per-host", "2", "--world", "6",
                 "--place", "tp=host")
    expect_error(ia, ["no level 'rack'", "host, domain"], *base, "--ranks-per-host", "2", "--hosts-per-domain", "2",
                 "--place", "tp=rack")
    expect_error(ud, ["placement 'ep=host' names no dim", "dp, tp"], *base, "--ranks-per-host", "2", "--place",
                 "ep=host")
    expect_error(ia, ["placement gives dim 'tp' twice"], *base, "--ranks-per-host", "4", "--place", "tp=host,tp=host")
    expect_error(ia, ["placement item 'tp'"], *base, "--ranks-per-host", "4", "--place", "tp")
    # The options.
    expect_error(ia, ["--place needs", "--topology FILE", "--ranks-per-host K"], *base, "--place", "tp=host")
    expect_error(ia, ["--hosts-per-domain requires --ranks-per-host"], *base, "--hosts-per-domain", "2")
    expect_error(ia, ["--domains-per-switch requires --hosts-per-domain"], *base, "--ranks-per-host", "2",
                 "--domains-per-switch", "2")
    expect_error(ia, ["excludes", "--topology", "--ranks-per-host"], *base, "--topology", uneven, "--ranks-per-host", "2")
    expect_error(ia, ["excludes"], *base, "--topology", uneven, "--world", "15")
    expect_error(ia, ["excludes"], *base, "--ranks", "0,1,2,3,4,5,6,7", "--ranks-per-host", "4", "--place",
                 "tp=host")
    expect_error(ia, ["--repair excludes --place"], *base, "--ranks-per-host", "4", "--place", "tp=host",
                 "--failed", "1", "--repair")
    expect_error(ia, ["--world"], "--shape", "0,4", "--names", "a,b", "--ranks-per-host", "4", "--place", "b=host")
    expect_error(ia, ["ranks per host 0 is below 1"], *base, "--ranks-per-host", "0", "--place", "tp=host")
    expect_error(ia, ["--hosts-per-domain", "'x'"], *base, "--ranks-per-host", "2", "--hosts-per-domain", "x")
    expect_error(ia, ["places at most 1048576"], "--shape", "2097152", "--names", "a", "--ranks-per-host", "8",
                 "--place", "a=host")
    # The shape and names as without a placement.
    expect_error("duplicate_name", ["'tp'"], "--shape", "2,4", "--names", "tp,tp", "--ranks-per-host", "2",
                 "--place", "tp=host")
    expect_error(ia, ["-4"], "--shape", "2,-4", "--names", "dp,tp", "--ranks-per-host", "2", "--place", "tp=host")
    # Topology files.
    for name, text, words in (
            ("mixed.txt", "host=a domain=x\nhost=a domain=x\n# the next line lacks the domain\nhost=b\n",
             ["line 4 names the levels host, line 1 host, domain"]),
            ("order.txt", "host=a domain=x\ndomain=x host=b\n", ["line 2 starts with level 'domain'"]),
            ("outer.txt", "domain=x host=a\n", ["line 1 starts with level 'domain'", "host"]),
            ("twice.txt", "host=a host=b\n", ["line 1 gives level 'host' twice"]),
            ("item.txt", "host=a\nhost=b domain\n", ["line 2 item 'domain' is not of the form key=value"]),
            ("empty.txt", "# nothing\n\n", ["lists no ranks"]),
            ("badname.txt", "host=a " + "q" * 300 + "=b\n", ["level name"])):
        path = topology(name, text)
        expect_error(ia, [f"topology file '{path}'"] * (name != "badname.txt") + words,
                     "--topology", path, *base)
    expect_error(ia, ["cannot read the topology file"], "--topology", os.path.join(TMP, "missing.txt"), *base)
    expect_error(ia, ["line 2 is longer than 65536 bytes"], "--topology",
                 topology("long.txt", "host=a\nhost=" + "b" * 70000 + "\n"), *base)


def test_help():
    p = run("--help")
    for word in ("--topology FILE", "--hosts-per-domain H", "--domains-per-switch D", "--place LIST",
                 "tp=host,ep=domain", "host=n17 domain=nvl2 switch=s0", "leftovers", '"parent_ranks"', '"within"',
                 '"leftovers"', '"levels"', "0,2,4,6,1,3,5,7"):
        check(word in p.stdout, f"--help lacks {word!r}")


if __name__ == "__main__":
    for test in (test_fixed, test_member, test_text, test_svg, test_errors, test_help):
        before = len(failures)
        test()
        print(f"{test.__name__}: {'ok' if len(failures) == before else 'FAILED'}")
    shutil.rmtree(TMP, ignore_errors=True)
    print(plan_checks.tally())
    sys.exit(1 if failures else 0)
