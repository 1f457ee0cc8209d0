#!/usr/bin/env python3
"""Man pages (section 3) for the C API, from include/devmesh/devmesh.h.

One page per DEVMESH_C_API function, named after it (devmesh_create.3),
plus devmesh.3: the header's opening comment (its conventions and the
collectiveness summary) and the list of functions. A function's page is
made of its comment, the one right before its declaration:

  DESCRIPTION     the comment, less what the sections below take; a
                  comment opening a group of functions (one not followed
                  by a declaration, e.g. the collectives') comes after it
  COLLECTIVENESS  the comment's line starting "Collective" or "Not
                  collective", up to the end of that sentence group
  ERRORS          from the line starting "Errors" to the end of the
                  comment (plus the group comment's), and the rules every
                  function shares (the header's conventions)
  WAITS           for a collective function, the header's rule on waits,
                  and the comment's sentences that speak of waiting

so that the pages say what the header says, no more. Python 3 standard
library only.

usage: gen_man_pages.py --list HEADER            the page names, one a line
       gen_man_pages.py HEADER OUTDIR VERSION    writes OUTDIR/<name>.3
"""
import os
import re
import sys

TITLE = "devmesh C API"
DECL = re.compile(r"DEVMESH_C_API\s+((?:const\s+)?\w+\s*\**)\s*(devmesh_\w+)\s*\(([^)]*)\)\s*;")


def comment_lines(comment):
    body = comment.strip()[2:-2]
    lines = [re.sub(r"^\s*\* ?", "", line).rstrip() for line in body.splitlines()]
    if lines:
        lines[0] = lines[0].strip()  # the text right after "/*"
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


class Function:
    def __init__(self, name, ret, params, comment, group):
        self.name, self.ret, self.comment, self.group = name, " ".join(ret.split()), comment, group
        self.params = ", ".join(" ".join(p.split()) for p in params.split(",")) or "void"


def parse(path):
    """(opening comment lines, functions) of the header."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    tokens = re.split(r"(/\*.*?\*/)", text, flags=re.S)
    opening = comment_lines(tokens[1])
    functions, group, last = [], [], None
    for i, tok in enumerate(tokens):
        if i == 1:
            continue  # the opening comment
        if tok.startswith("/*"):
            lines = comment_lines(tok)
            follower = tokens[i + 1] if i + 1 < len(tokens) else ""
            last = None
            if lines and lines[0].startswith("----"):
                group = []  # a new section of the header
            elif follower.strip().startswith("DEVMESH_C_API"):
                last = lines  # the comment of the declaration after it
            elif not follower.strip():
                group = lines  # a comment of its own: for the rest of its section
            continue
        for m in DECL.finditer(tok):
            own = last if not tok[:m.start()].strip() else None
            functions.append(Function(m.group(2), m.group(1), m.group(3), own or [], group))
            last = None
    return opening, functions


def starts_note(line):
    return line.startswith("Collective") or line.startswith("Not collective")


def split_comment(lines):
    """(description, collectiveness, errors) line lists of a comment."""
    desc, note, errors = [], [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        if starts_note(line):
            note.append(line)
            while not note[-1].rstrip().endswith(".") and i + 1 < len(lines) and lines[i + 1].strip() \
                    and not lines[i + 1].startswith(" ") and not lines[i + 1].startswith("Errors"):
                i += 1
                note.append(lines[i])
        elif line.startswith("Errors"):
            while i < len(lines) and not starts_note(lines[i]):
                errors.append(lines[i])
                i += 1
            continue
        else:
            desc.append(line)
        i += 1
    return desc, note, errors


def esc(text):
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return text


def roff_block(lines):
    """Plain lines become filled paragraphs, indented ones keep their layout."""
    out, pre = [], False
    for line in lines:
        if not line.strip():
            if pre:
                out.append(".fi")
                pre = False
            out.append(".PP")
            continue
        indented = line.startswith(" ")
        if indented and not pre:
            out += [".nf"]
            pre = True
        elif not indented and pre:
            out.append(".fi")
            pre = False
        body = esc(line)
        if body.startswith((".", "'")):
            body = "\\&" + body
        out.append(body)
    if pre:
        out.append(".fi")
    return out


def first_sentence(lines):
    """Up to the first '.' or ';' that ends a clause outside parentheses."""
    text = " ".join(l.strip() for l in lines if l.strip())
    depth, end = 0, len(text)
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if depth == 0 and ch in ".;" and i > 0 and (text[i - 1].isalnum() or text[i - 1] in ")]'\"") \
                and (i + 1 == len(text) or text[i + 1] == " "):
            end = i
            break
    s = text[:end]
    return s if len(s) < 160 else s[:157] + "..."


def header_rules(opening):
    """The sentences of the opening comment every page repeats."""
    text = " ".join(l.strip() for l in opening)
    waits = re.search(r"\((a collective call waits[^)]*)\)", text)
    if not waits:
        sys.exit("devmesh.h's opening comment no longer says how collective calls wait")
    handles = re.search(r"(A NULL handle means.*?through it\.)", text)
    failing = re.search(r"(A failing call never writes.*?behind\.)", text)
    if not handles or not failing:
        sys.exit("devmesh.h's opening comment no longer states the rules on handles and failing calls")
    return waits.group(1), handles.group(1), failing.group(1)


def page(fn, names, version, rules):
    waits, handles, failing = rules
    desc, note, errors = split_comment(fn.comment)
    gdesc, gnote, gerrors = split_comment(fn.group)
    out = [f'.TH {fn.name.upper()} 3 "" "devmesh {version}" "{TITLE}"',
           ".nh", ".SH NAME", f"{esc(fn.name)} \\- {esc(first_sentence(desc or gdesc))}",
           ".SH SYNOPSIS", ".nf", ".B #include <devmesh/devmesh.h>", ".PP",
           esc(f"{fn.ret} {fn.name}({fn.params});").replace(" *", " *"), ".fi",
           ".SH DESCRIPTION"]
    out += roff_block(desc)
    if gdesc:
        out += [".PP"] + roff_block(gdesc)
    out += [".SH COLLECTIVENESS"] + roff_block(note or gnote or ["(not stated)"])
    if note and gnote and starts_note(note[0]) and note[0].split()[0] == gnote[0].split()[0]:
        out += [".PP"] + roff_block(gnote)  # the group's rule, where it is of the same kind
    collective = bool(re.match(r"Collective", " ".join(note or gnote)))
    out += [".SH ERRORS", "Returns DEVMESH_SUCCESS (0) or a DEVMESH_ERR_* status;",
            ".BR devmesh_last_error (3)", "gives the detail.", ".PP"]
    if errors:
        out += roff_block(errors) + [".PP"]
    if gerrors:
        out += roff_block(gerrors) + [".PP"]
    out += roff_block([handles]) + [".PP"] + roff_block([failing])
    wait_lines = [s for s in re.split(r"(?<=\.)\s+", " ".join(l.strip() for l in desc + gdesc + gnote))
                  if re.search(r"\bwait|bounded|deadline|timeout", s)]
    if collective or wait_lines:
        out.append(".SH WAITS")
        if collective:
            out += roff_block([waits[0].upper() + waits[1:] + "."])
        for s in wait_lines:
            out += [".PP"] + roff_block([s])
    seen = sorted(set(re.findall(r"\bdevmesh_\w+", " ".join(fn.comment + fn.group))) & set(names) - {fn.name})
    out += [".SH SEE ALSO", ",\n".join([".BR devmesh (3)"] + [f".BR {esc(n)} (3)" for n in seen])]
    return "\n".join(out) + "\n"


def overview(opening, functions, version):
    out = [f'.TH DEVMESH 3 "" "devmesh {version}" "{TITLE}"', ".nh", ".SH NAME",
           "devmesh \\- N\\-D meshes of MPI ranks with their communicators (C API)",
           ".SH SYNOPSIS", ".nf", ".B #include <devmesh/devmesh.h>", ".fi", ".SH DESCRIPTION"]
    out += roff_block(opening)
    out += [".SH FUNCTIONS", "Each has its own page:"]
    for fn in functions:
        desc = split_comment(fn.comment)[0] or split_comment(fn.group)[0]
        out += [".TP", f".BR {esc(fn.name)} (3)", esc(first_sentence(desc))]
    out += [".SH FILES", "Documentation: share/doc/devmesh (SEMANTICS.md, ERRORS.md, FORTRAN.md, ...)."]
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        _, functions = parse(argv[2])
        print("\n".join(["devmesh"] + [f.name for f in functions]))
        return
    if len(argv) != 4:
        sys.exit(__doc__)
    header, outdir, version = argv[1:]
    opening, functions = parse(header)
    missing = [f.name for f in functions if not f.comment and not f.group]
    if missing:
        sys.exit("no comment to make a man page of: " + ", ".join(missing))
    rules = header_rules(opening)
    names = [f.name for f in functions]
    with open(os.path.join(outdir, "devmesh.3"), "w", encoding="utf-8") as f:
        f.write(overview(opening, functions, version))
    for fn in functions:
        with open(os.path.join(outdir, fn.name + ".3"), "w", encoding="utf-8") as f:
            f.write(page(fn, names, version, rules))


if __name__ == "__main__":
    main(sys.argv)
