"""What the planner's test scripts share: check() with its tally, and the
SVG helpers that find elements of devmesh-plan's drawings by class and
compare their boxes. The scripts import it from their own folder."""
import sys

SVG = "{http://www.w3.org/2000/svg}"
failures = []
checks = 0


def check(cond, what):
    """Counts a check; a failing one is kept in failures and printed."""
    global checks
    checks += 1
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def tally():
    return f"{checks} checks, {len(failures)} failures"


def by_class(root, tag, cls):
    return [e for e in root.iter(SVG + tag) if cls in e.get("class", "").split()]


def box(e):
    return tuple(float(e.get(a)) for a in ("x", "y", "width", "height"))


def inside(inner, outer):
    x, y, w, h = inner
    ox, oy, ow, oh = outer
    return ox <= x and oy <= y and x + w <= ox + ow and y + h <= oy + oh
