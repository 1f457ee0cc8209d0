"""devmesh's C headers as gen_fortran_interface.py reads them: the
DEVMESH_C_API functions (their parameters, and the collectiveness line of
each one's comment), the integer constants, and the fields of
devmesh_config_t. Python 3 standard library only.
"""
import os
import re


class Param:
    def __init__(self, text):
        text = " ".join(text.split())
        m = re.match(r"(.*?)(\w+)\s*(\[\s*\])?$", text)
        if not m:
            raise ValueError(f"cannot parse parameter '{text}'")
        self.name = m.group(2)
        self.array = bool(m.group(3))
        self.ctype = " ".join(m.group(1).replace("*", " * ").split())  # e.g. "const char * const"
        self.base = re.sub(r"\b(const)\b|\*", " ", self.ctype).split()[0]
        self.stars = self.ctype.count("*")
        self.const = self.ctype.startswith("const")

    def __repr__(self):
        return f"{self.ctype} {self.name}{'[]' if self.array else ''}"


class Function:
    def __init__(self, ret, name, params, comment, header):
        self.ret = " ".join(ret.split())
        self.name = name
        self.params = [Param(p) for p in params] if params else []
        self.comment = comment
        self.header = header
        self.note = collectiveness(comment)


def comment_lines(comment):
    """The text lines of a /* ... */ comment, without the markers."""
    body = comment.strip()[2:-2]
    return [re.sub(r"^\s*\*?\s?", "", line).rstrip() for line in body.splitlines()]


def collectiveness(comment):
    """The sentence starting a line with "Collective" or "Not collective"."""
    lines = comment_lines(comment) if comment else []
    for i, line in enumerate(lines):
        if line.startswith("Collective") or line.startswith("Not collective"):
            text = " ".join([line] + lines[i + 1:])
            m = re.match(r"(.*?\.)(\s|$)", text)
            return (m.group(1) if m else text).strip()
    return None


def parse_functions(path):
    """The DEVMESH_C_API functions of a header, in order, with the comment
    immediately before each (None when there is none)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for m in re.finditer(r"DEVMESH_C_API\s+((?:const\s+)?\w+\s*\**)\s*(devmesh_\w+)\s*\(([^)]*)\)\s*;", text):
        before = text[:m.start()].rstrip()
        comment = None
        if before.endswith("*/"):
            comment = before[before.rindex("/*"):]
        params = [p for p in m.group(3).split(",") if p.strip() and p.strip() != "void"]
        out.append(Function(m.group(1), m.group(2), params, comment, os.path.basename(path)))
    return out


def parse_constants(path):
    """(name, value, comment) of the integer enum members and #defines."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    known = {}
    out = []
    for m in re.finditer(r"^#define\s+(DEVMESH_\w+)[ \t]+((?:\\\n|[^\n])+)", text, flags=re.M):
        expr = m.group(2).replace("\\\n", " ")
        expr = re.sub(r"/\*.*?\*/", "", expr).strip()
        expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)[uUlL]+\b", r"\1", expr)
        if not re.fullmatch(r"[\w\s()+\-*]+", expr):
            continue  # strings, casts, initializers
        try:
            value = eval(expr, {"__builtins__": {}}, dict(known))  # names checked above: constants only
        except Exception:
            continue
        if isinstance(value, int):
            known[m.group(1)] = value
            out.append((m.group(1), value))
    for body in re.findall(r"\benum\s+\w+\s*\{(.*?)\}", text, flags=re.S):
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        for item in body.split(","):
            im = re.match(r"\s*(DEVMESH_\w+)\s*=\s*(-?\d+)\s*$", item)
            if im:
                out.append((im.group(1), int(im.group(2))))
    return out


def parse_config(path):
    """The fields of devmesh_config_t: (ctype, name)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"typedef struct devmesh_config_s\s*\{(.*?)\}\s*devmesh_config_t;", text, flags=re.S)
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    return [Param(f) for f in body.split(";") if f.strip()]
