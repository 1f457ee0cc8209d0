#!/usr/bin/env python3
"""Generates the C side of the Fortran module devmesh from the C headers.

Reads include/devmesh/devmesh.h, include/devmesh/backend_plugin.h and
lib/fortran/devmesh_fortran.h (the MPI_Fint twins) and writes:

  devmesh_c_interface.f90  module devmesh_c_interface: the integer enum and
                           #define constants, devmesh_config_t as a bind(C)
                           type (c_config), and a bind(C) interface c_<name>
                           for every DEVMESH_C_API function that Fortran can
                           call (those taking MPI_Comm/MPI_Group are reached
                           through their _f twins), each with the
                           collectiveness line of the function's comment.
  devmesh_public.inc       `public ::` statements of the module devmesh for
                           the constants and the generated wrappers
                           (included in its specification part).
  devmesh_wrappers.inc     ierr-last subroutines of the module devmesh for the
                           functions whose arguments map mechanically
                           (WRAPPED below; included after `contains`).

The hand-written lib/fortran/devmesh.f90 (and the devmesh_*.f90 it
includes) holds what a C prototype does not say: names as Fortran strings, mpi_f08 and integer communicator generics,
optional arguments with defaults, logical results.

usage: gen_fortran_interface.py OUTDIR DEVMESH_F90 HEADER...
Also imported by tests/docs/check_fortran_parity.py and
check_collectiveness.py (parse_functions, collectiveness).
Python 3 standard library only.
"""
import os
import re
import sys

# Parsing the headers (c_headers.py); parse_functions and collectiveness are
# also used from here by tests/docs.
sys.dont_write_bytecode = True  # nothing written into the source tree
from c_headers import collectiveness, parse_config, parse_constants, parse_functions  # noqa: E402,F401


# ---- the interface module --------------------------------------------------------------

MPI_HANDLES = {"MPI_Comm", "MPI_Group", "MPI_Info"}


def fortran_dummy(p):
    """The declaration of a C parameter in a bind(C) interface."""
    b, s, arr = p.base, p.stars, p.array
    if b in MPI_HANDLES:
        return None
    if b in ("int", "MPI_Fint"):
        if s == 0 and not arr:
            return "integer(c_int), value"
        if arr and s == 0:
            return f"integer(c_int), intent({'in' if p.const else 'inout'})", "(*)"
        if s == 1 and not arr:
            return "integer(c_int), intent(inout)"
    if b == "size_t" and s == 0 and not arr:
        return "integer(c_size_t), value"
    if b == "size_t" and s == 0 and arr and p.const:
        # counts or displacements; absent (an unallocated actual): NULL
        return "integer(c_size_t), intent(in), optional", "(*)"
    if b == "devmesh_p2p_t" and s == 0 and arr:
        return "type(c_ptr), value"  # c_loc of an array of type(devmesh_p2p_t)
    if b == "devmesh_t":
        if s == 0 and not arr:
            return "type(c_ptr), value"
        if s == 0 and arr:
            return "type(c_ptr), intent(in)", "(*)"
        if s == 1:
            return "type(c_ptr), intent(inout)"
    if b == "devmesh_request_t":
        if s == 1 and not arr:
            return "type(c_ptr), intent(inout)"
        if arr:
            return "type(c_ptr), intent(inout)", "(*)"
    if b == "char":
        if s == 1 and not arr:
            return "type(c_ptr), value"  # a C string, or c_null_ptr
        if s == 1 and arr:
            return "type(c_ptr), intent(in)", "(*)"  # const char *const names[]
        if s == 2:
            return "type(c_ptr), intent(inout)"  # const char **: a borrowed string
    if b == "void":
        if s == 1:
            return "type(c_ptr), value"
        if s == 2:
            return "type(c_ptr), intent(inout)"
    if b == "devmesh_config_t" and s == 1:
        return "type(c_config), intent(in)"
    if b == "devmesh_backend_v1_t" and s == 1:
        return "type(c_ptr), value"
    raise ValueError(f"no Fortran mapping for C parameter '{p}'")


def fortran_name(c_name):
    return "c_" + c_name[len("devmesh_"):]


def wrap(line, indent):
    """Free-form lines of at most 110 characters, broken after commas."""
    out = []
    while len(line) > 110:
        cut = line.rfind(", ", 0, 108)
        if cut < 0:
            break
        out.append(line[:cut + 1] + " &")
        line = " " * (indent + 4) + line[cut + 2:]
    out.append(line)
    return out


def wrap_comment(prefix, text):
    """A comment of lines of at most 100 characters, each starting with prefix."""
    out, line = [], prefix
    for word in text.split():
        if len(line) + 1 + len(word) > 100 and line != prefix:
            out.append(line)
            line = prefix
        line += " " + word
    return out + [line]


def interface(fn):
    lines = []
    decls = []
    for p in fn.params:
        d = fortran_dummy(p)
        if d is None:
            return None
        decls.append((p.name, d) if isinstance(d, str) else (p.name + d[1], d[0]))
    if fn.ret == "int":
        kind = "integer(c_int) function"
    elif fn.ret.replace(" ", "").endswith("*"):  # a string or a struct: c_ptr
        kind = "type(c_ptr) function"
    else:
        raise ValueError(f"{fn.name}: no Fortran mapping for its result '{fn.ret}'")
    args = ", ".join(p.name for p in fn.params)
    lines += wrap_comment("    !", f"{fn.name} ({fn.header}): {fn.note}")
    lines += wrap(f"    {kind} {fortran_name(fn.name)}({args}) bind(C, name='{fn.name}')", 4)
    lines.append("      import :: c_int, c_size_t, c_ptr, c_config")
    for name, decl in decls:
        lines.append(f"      {decl} :: {name}")
    lines.append(f"    end function {fortran_name(fn.name)}")
    return lines


def interface_module(functions, constants, config):
    out = ["! Generated by lib/fortran/gen_fortran_interface.py from the C headers;",
           "! do not edit. The C side of the module devmesh: constants, devmesh_config_t",
           "! and a bind(C) interface per C function (c_<name> binds devmesh_<name>).",
           "module devmesh_c_interface",
           "  use, intrinsic :: iso_c_binding, only: c_int, c_size_t, c_ptr, c_null_ptr, c_double",
           "  implicit none",
           "  public", ""]
    for name, value in constants:
        if value == -2**31:
            expr = "ibset(0_c_int, 31)"  # -2**31 as a literal is outside Fortran's symmetric range
        elif value >= 2**31:
            expr = f"int(z'{value:08x}', c_int)"  # unsigned in C, same bits
        else:
            expr = f"{value}_c_int"
        out.append(f"  integer(c_int), parameter :: {name} = {expr}")
    out += ["", "  ! devmesh_config_t (devmesh.h), field for field.", "  type, bind(C) :: c_config"]
    for f in config:
        if f.stars:
            out.append(f"    type(c_ptr) :: {f.name} = c_null_ptr")
        elif f.base == "size_t":
            out.append(f"    integer(c_size_t) :: {f.name}")
        elif f.base in ("int", "unsigned"):
            out.append(f"    integer(c_int) :: {f.name}")
        elif f.base == "double":
            out.append(f"    real(c_double) :: {f.name}")
        else:
            raise ValueError(f"devmesh_config_t field '{f}' has no Fortran mapping")
    out += ["  end type c_config", "", "  interface"]
    skipped = []
    for fn in functions:
        lines = interface(fn)
        if lines is None:
            skipped.append(fn.name)
            continue
        out += lines + [""]
    out += ["    integer(c_size_t) function c_strlen(s) bind(C, name='strlen')",
            "      import :: c_size_t, c_ptr",
            "      type(c_ptr), value :: s",
            "    end function c_strlen",
            "  end interface"]
    if skipped:
        out += wrap_comment("  !", "Reached through their MPI_Fint twins (<name>_f): " + ", ".join(skipped))
    out.append("end module devmesh_c_interface")
    return out, skipped


# ---- the mechanical wrappers ---------------------------------------------------------

# Functions whose Fortran form is generated: every parameter is one of the
# kinds handled in `wrapper`. The others are written by hand in devmesh.f90.
# A _f twin gives the `use mpi` procedure <name>_int of the generic
# devmesh_<name>; its mpi_f08 procedure comes from `twin`.
WRAPPED = [
    "devmesh_destroy", "devmesh_root", "devmesh_slice", "devmesh_concatenate",
    "devmesh_ndim", "devmesh_size", "devmesh_shape", "devmesh_local_rank", "devmesh_coordinate",
    "devmesh_group_ranks", "devmesh_all_groups", "devmesh_root_size", "devmesh_parent_rank",
    "devmesh_comm_count", "devmesh_dim_backend", "devmesh_dim_within_hosts", "devmesh_dim_within",
    "devmesh_comm_f", "devmesh_cart_comm_f", "devmesh_all_groups_comm_f",
    "devmesh_allreduce", "devmesh_allgather", "devmesh_reduce_scatter", "devmesh_broadcast",
    "devmesh_alltoall", "devmesh_barrier", "devmesh_send", "devmesh_recv",
    "devmesh_isend", "devmesh_irecv", "devmesh_wait", "devmesh_sendrecv",
    "devmesh_alltoallv", "devmesh_allgatherv", "devmesh_reduce_scatterv", "devmesh_gather", "devmesh_gatherv",
    "devmesh_scatter", "devmesh_scatterv", "devmesh_reduce",
    "devmesh_iallreduce", "devmesh_iallgather", "devmesh_ireduce_scatter", "devmesh_ibroadcast",
    "devmesh_ialltoall", "devmesh_ibarrier", "devmesh_ialltoallv", "devmesh_iallgatherv",
    "devmesh_ireduce_scatterv", "devmesh_igather", "devmesh_igatherv", "devmesh_iscatter", "devmesh_iscatterv",
    "devmesh_ireduce",
    "devmesh_revoke", "devmesh_is_revoked", "devmesh_failed_ranks", "devmesh_agree", "devmesh_shrink",
    "devmesh_root_index", "devmesh_shrunk_index",
    "devmesh_release_spares", "devmesh_join", "devmesh_standby_f",
]
ASYNCHRONOUS = {"devmesh_isend", "devmesh_irecv", "devmesh_iallreduce", "devmesh_iallgather",
                "devmesh_ireduce_scatter", "devmesh_ibroadcast", "devmesh_ialltoall", "devmesh_ialltoallv",
                "devmesh_iallgatherv", "devmesh_ireduce_scatterv", "devmesh_igather", "devmesh_igatherv",
                "devmesh_iscatter", "devmesh_iscatterv", "devmesh_ireduce"}
# (buffer, counts, displacements) whose extent the wrapper checks: every
# block that counts > 0 inside size(buffer) elements. The rooted forms'
# arrays are the root's only, so not checked here (the C gate checks
# what it can).
EXTENTS = {
    "alltoallv": [("sendbuf", "sendcounts", "sdispls"), ("recvbuf", "recvcounts", "rdispls")],
    "allgatherv": [("recvbuf", "recvcounts", "rdispls")],
    "reduce_scatterv": [("sendbuf", "recvcounts", None)],  # the blocks packed
}
# int * outputs that C documents as 1 or 0: logical in Fortran.
LOGICAL_OUT = {"within", "revoked"}
# int * arguments read and written, C's 0 or nonzero: logical in Fortran.
LOGICAL_INOUT = {"flag"}
# Dummy arguments holding MPI handles in the `use mpi` procedures (integers)
# and their mpi_f08 types.
HANDLES = {"comm": "MPI_Comm", "parent": "MPI_Comm", "comms": "MPI_Comm", "group": "MPI_Group",
           "info": "MPI_Info"}


def subroutine(name, dummies, decls, body):
    """decls: (declaration type, name, dims) per dummy and local."""
    out = wrap(f"  subroutine {name}({', '.join(dummies)})", 2)
    out += [f"    {t} :: {n}{d}" for t, n, d in decls]
    out += [f"    {line}" for line in body]
    return out + [f"  end subroutine {name}"]


# Element counts (size_t) are accepted as default INTEGER and as
# INTEGER(int64) (what size(x, kind=8) gives): a function with a count gets
# one specific procedure per kind, <name>_count_default and
# <name>_count_int64, behind the generic devmesh_<name>.
COUNT_KINDS = {"default": "integer", "int64": "integer(int64)"}


class Pieces:
    """What one wrapper is made of: its dummy arguments and their
    declarations, its locals, the lines before and after the C call, and
    the C call's actual arguments."""

    def __init__(self):
        self.dummies, self.decls, self.locs, self.pre, self.actual, self.post = [], [], [], [], [], []
        self.stream = False
        self.checks = []  # after pre: the group's size known


def paired_param(w, p, nxt):
    """(int n, X[]) of names or meshes, (int maxX, int X[]) -> X(:); whether
    p and nxt were such a pair."""
    if not (p.base == "int" and p.stars == 0 and nxt is not None and nxt.array):
        return False
    if p.name == "n" and nxt.base == "char":
        w.dummies.append(nxt.name)
        w.decls.append(("character(len=*), intent(in)", nxt.name, "(:)"))
        w.locs.append(("type(c_strings), target", f"cs_{nxt.name}", ""))
        w.pre.append(f"call to_c_strings({nxt.name}, size({nxt.name}), cs_{nxt.name})")
        w.actual += [f"int(size({nxt.name}), c_int)", f"cs_{nxt.name}%ptr"]
    elif p.name == "n" and nxt.base == "devmesh_t":
        w.dummies.append(nxt.name)
        w.decls.append(("type(devmesh_t), intent(in)", nxt.name, "(:)"))
        w.locs.append(("type(c_ptr)", f"v_{nxt.name}", f"(max(1, size({nxt.name})))"))
        w.pre += [f"v_{nxt.name} = c_null_ptr", f"v_{nxt.name}(1:size({nxt.name})) = {nxt.name}(:)%ptr"]
        w.actual += [f"int(size({nxt.name}), c_int)", f"v_{nxt.name}"]
    elif p.name.startswith("max"):
        w.dummies.append(nxt.name)
        w.decls.append(("integer, intent(inout)", nxt.name, "(:)"))
        w.locs.append(("integer(c_int)", f"v_{nxt.name}", f"(max(size({nxt.name}), 1))"))
        w.pre.append(f"v_{nxt.name}(1:size({nxt.name})) = int({nxt.name}, c_int)")
        w.actual += [f"int(size({nxt.name}), c_int)", f"v_{nxt.name}"]
        w.post.append(f"{nxt.name} = int(v_{nxt.name}(1:size({nxt.name})))")
    else:
        return False
    return True


def mesh_or_string_param(w, p):
    """devmesh_t -> type(devmesh_t), devmesh_t * and devmesh_request_t * ->
    intent(inout), a C string -> character(len=*) (blank: NULL), const char
    ** -> an allocatable string; whether p was one of them."""
    b, s = p.base, p.stars
    if b == "devmesh_t" and s == 0 and not p.array:
        w.dummies.append("mesh")
        w.decls.append(("type(devmesh_t), intent(in)", "mesh", ""))
        w.actual.append("mesh%ptr")
    elif b in ("devmesh_t", "devmesh_request_t") and s == 1:
        w.dummies.append(p.name)
        w.decls.append((f"type({b}), intent(inout)", p.name, ""))
        w.actual.append(f"{p.name}%ptr")  # C writes it only on success
    elif b == "char" and s == 1 and not p.array:
        w.dummies.append(p.name)
        w.decls.append(("character(len=*), intent(in)", p.name, ""))
        w.locs += [("type(c_strings), target", f"cs_{p.name}", ""), ("type(c_ptr)", f"p_{p.name}", "")]
        w.pre.append(f"call to_c_name({p.name}, cs_{p.name}, p_{p.name})")
        w.actual.append(f"p_{p.name}")
    elif b == "char" and s == 2:
        w.dummies.append(p.name)
        w.decls.append(("character(len=:), allocatable, intent(inout)", p.name, ""))
        w.locs.append(("type(c_ptr)", f"v_{p.name}", ""))
        w.pre.append(f"v_{p.name} = c_null_ptr")
        w.actual.append(f"v_{p.name}")
        w.post.append(f"{p.name} = from_c_string(v_{p.name})")
    else:
        return False
    return True


def integer_param(w, p, count_kind):
    """int * of LOGICAL_INOUT and LOGICAL_OUT -> logical, int * and MPI_Fint
    * -> integer written on success, int and MPI_Fint -> integer, size_t -> integer of
    the kind COUNT_KINDS[count_kind] (negative refused); whether p was one
    of them."""
    b, s = p.base, p.stars
    if b == "int" and s == 1 and p.name in LOGICAL_INOUT:
        w.dummies.append(p.name)
        w.decls.append(("logical, intent(inout)", p.name, ""))
        w.locs.append(("integer(c_int)", f"v_{p.name}", ""))
        w.pre.append(f"v_{p.name} = merge(1_c_int, 0_c_int, {p.name})")
        w.actual.append(f"v_{p.name}")
        w.post.append(f"{p.name} = v_{p.name} /= 0")
    elif b == "int" and s == 1 and p.name in LOGICAL_OUT:
        w.dummies.append(p.name)
        w.decls.append(("logical, intent(inout)", p.name, ""))
        w.locs.append(("integer(c_int)", f"v_{p.name}", ""))
        w.pre.append(f"v_{p.name} = 0")
        w.actual.append(f"v_{p.name}")
        w.post.append(f"{p.name} = v_{p.name} /= 0")
    elif b in ("int", "MPI_Fint") and s == 1:
        w.dummies.append(p.name)
        w.decls.append(("integer, intent(inout)", p.name, ""))
        w.locs.append(("integer(c_int)", f"v_{p.name}", ""))
        w.actual.append(f"v_{p.name}")
        w.post.append(f"{p.name} = int(v_{p.name})")
    elif b in ("int", "MPI_Fint") and s == 0 and not p.array:
        w.dummies.append(p.name)
        w.decls.append(("integer, intent(in)", p.name, ""))
        w.actual.append(f"int({p.name}, c_int)")
    elif b == "size_t" and s == 0 and p.array:
        # count or displacement array: size(dim) entries or none (NULL)
        w.dummies.append(p.name)
        w.decls.append((f"{COUNT_KINDS[count_kind or 'default']}, intent(in)", p.name, "(:)"))
        w.locs.append(("integer(c_size_t), allocatable", f"v_{p.name}", "(:)"))
        w.checks.append(f"if (bad_counts({p.name}, group, '{p.name}', ierr)) return")
        w.checks.append(f"if (size({p.name}) > 0) v_{p.name} = int({p.name}, c_size_t)")
        w.actual.append(f"v_{p.name}")
    elif b == "size_t" and s == 0:
        w.dummies.append(p.name)
        w.decls.append((f"{COUNT_KINDS[count_kind or 'default']}, intent(in)", p.name, ""))
        w.pre.insert(0, f"if (bad_count({p.name}, ierr)) return")
        w.actual.append(f"int({p.name}, c_size_t)")
    else:
        return False
    return True


def pointer_param(w, fn, p):
    """stream -> an optional c_ptr (moved before ierr), buffers ->
    assumed-rank arrays; whether p was one of them."""
    if not (p.base == "void" and p.stars == 1):
        return False
    if p.name == "stream":
        w.stream = True
        w.actual.append("stream_arg(stream)")
    else:
        w.dummies.append(p.name)
        intent = "in" if p.const else "inout"
        extra = ", asynchronous" if fn.name in ASYNCHRONOUS else ""
        w.decls.append((f"type(*), dimension(..), intent({intent}), target, contiguous{extra}", p.name, ""))
        w.actual.append(f"addr({p.name})")
    return True


def wrapper(fn, count_kind=None):
    """An ierr-last subroutine: devmesh_t -> type(devmesh_t), a C string
    -> character(len=*) (blank: NULL), const char ** -> an allocatable
    string, int * and MPI_Fint * -> integer written on success, (int maxX,
    int X[]) -> integer X(:) (size(X) the capacity), (int n, X[]) of names or
    meshes -> X(:), buffers -> assumed-rank arrays, size_t -> integer
    (negative refused; of the kind COUNT_KINDS[count_kind], the name then
    suffixed _count_<count_kind>), stream -> an optional c_ptr moved before
    ierr. Returns (name, dummies, dummy declarations, lines)."""
    w = Pieces()
    params = fn.params
    i = 0
    while i < len(params):
        p = params[i]
        nxt = params[i + 1] if i + 1 < len(params) else None
        if paired_param(w, p, nxt):
            i += 1
        elif not (mesh_or_string_param(w, p) or integer_param(w, p, count_kind) or pointer_param(w, fn, p)):
            raise ValueError(f"{fn.name}: parameter '{p}' has no generated Fortran form")
        i += 1
    if w.checks:
        w.locs.append(("integer(c_int)", "group", ""))
        dim = "p_dim" if any(p.name == "dim" for p in params) else "c_null_ptr"
        w.checks.insert(0, f"if (no_group(mesh, {dim}, group, '{fn.name}', ierr)) return")
        base = fn.name[len("devmesh_"):]
        for buf, counts, displs in EXTENTS.get(base[1:] if base not in EXTENTS else base, []):
            d = f"int({displs}, int64)" if displs else f"packed(int({counts}, int64))"
            w.checks.append(f"if (bad_extent(size({buf}, kind=int64), int({counts}, int64), {d}, '{buf}', ierr)) return")
    if w.stream:
        w.dummies.append("stream")
        w.decls.append(("type(c_ptr), intent(in), optional", "stream", ""))
    w.dummies.append("ierr")
    w.decls.append(("integer, intent(out), optional", "ierr", ""))
    public = fn.name[:-2] if fn.name.endswith("_f") else fn.name
    name = public[len("devmesh_"):] + "_int" if fn.name.endswith("_f") else public
    if count_kind:
        name = public[len("devmesh_"):] + "_count_" + count_kind
    body = list(w.pre) + w.checks
    call = f"{fortran_name(fn.name)}({', '.join(w.actual)})"
    if w.post:
        w.locs.append(("integer(c_int)", "st", ""))
        body.append(f"st = {call}")
        body.append("if (st == DEVMESH_SUCCESS) then")
        body += [f"  {line}" for line in w.post]
        body.append("end if")
        body.append(f"call finish(st, '{public}', ierr)")
    else:
        body.append(f"call finish({call}, '{public}', ierr)")
    body = [l for line in body for l in wrap(line, 0)]
    out = wrap_comment("  !>", f"{public}: see {fn.header}. {fn.note}")
    out += subroutine(name, w.dummies, w.decls + w.locs, body)
    return name, w.dummies, w.decls, out


def split_top(text):
    """Splits at the commas outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()] if cur.strip() else parts


def hand_written_text(path):
    """The text of a hand-written Fortran file with each `include` of a file
    beside it replaced by that file's text (the generated includes, which
    are not beside it, stay as they are)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    out = []
    for line in lines:
        m = re.match(r"\s*include\s+'([^']+)'\s*$", line, flags=re.I)
        part = os.path.join(os.path.dirname(path), m.group(1)) if m else None
        out.append(hand_written_text(part) if part and os.path.isfile(part) else line)
    return "\n".join(out)


def int_procedures(path):
    """(name, dummies, dummy declarations) of the subroutines <x>_int of a
    hand-written Fortran file and the files it includes: the `use mpi` forms
    of generics."""
    text = hand_written_text(path)
    text = re.sub(r"&[ \t]*\n[ \t]*&?", " ", "\n".join(l.split("!", 1)[0] for l in text.splitlines()))
    stmts = text.splitlines()
    out = []
    for k, stmt in enumerate(stmts):
        m = re.match(r"\s*subroutine\s+(\w+_int)\s*\((.*)\)\s*$", stmt, flags=re.I)
        if not m:
            continue
        dummies = [d.strip() for d in m.group(2).split(",")]
        decls = {}
        for decl in stmts[k + 1:]:
            dm = re.match(r"\s*(.+?)::(.+)$", decl)
            if not dm:
                break
            for ent in split_top(dm.group(2)):
                em = re.match(r"(\w+)(.*)$", ent)
                if em.group(1) in dummies:
                    decls[em.group(1)] = (dm.group(1).strip(), em.group(1), em.group(2).strip())
        out.append((m.group(1), dummies, [decls[d] for d in dummies]))
    return out


def twin(name, dummies, decls):
    """The mpi_f08 procedure of a `use mpi` one: HANDLES as their types."""
    base = name[:-len("_int")]
    new, args = [], []
    for t, n, d in decls:
        if n in HANDLES:
            t = re.sub(r"^integer", f"type({HANDLES[n]})", t)
            args.append(f"{n}(:)%MPI_VAL" if d else f"{n}%MPI_VAL")
        else:
            args.append(n)
        new.append((t, n, d))
    body = wrap(f"call {name}({', '.join(args)})", 0)
    return base, subroutine(base + "_f08", dummies, new, body)


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    outdir, hand_written, headers = argv[1], argv[2], argv[3:]
    functions, constants, config = [], [], None
    for h in headers:
        functions += parse_functions(h)
        constants += parse_constants(h)
        if os.path.basename(h) == "devmesh.h":
            config = parse_config(h)
    missing = [f.name for f in functions if not f.note]
    if missing:
        sys.exit("no line starting 'Collective' or 'Not collective' in the comment of: " + ", ".join(missing))
    seen = set()
    constants = [c for c in constants if not (c[0] in seen or seen.add(c[0]))]
    module, _ = interface_module(functions, constants, config)
    by_name = {f.name: f for f in functions}
    wrappers, public, ints = ["! Generated by lib/fortran/gen_fortran_interface.py; do not edit."], [], []
    counted = []
    for name in WRAPPED:
        if any(p.base == "size_t" for p in by_name[name].params):
            procs = []
            for kind in COUNT_KINDS:
                proc, dummies, decls, lines = wrapper(by_name[name], kind)
                wrappers += lines + [""]
                procs.append(proc)
            counted.append((name, procs))
            public.append(name)
            continue
        proc, dummies, decls, lines = wrapper(by_name[name])
        wrappers += lines + [""]
        if proc.endswith("_int"):
            ints.append((proc, dummies, decls))
        else:
            public.append(proc)
    pub = ["! Generated by lib/fortran/gen_fortran_interface.py; do not edit."]
    for name, procs in counted:
        pub += [f"  interface {name}", f"    module procedure {', '.join(procs)}", f"  end interface {name}"]
    for proc, dummies, decls in ints + int_procedures(hand_written):
        base, lines = twin(proc, dummies, decls)
        wrappers += lines + [""]
        public.append("devmesh_" + base)
        pub += [f"  interface devmesh_{base}", f"    module procedure {base}_f08, {base}_int",
                f"  end interface devmesh_{base}"]
    for i in range(0, len(constants), 4):
        pub.append("  public :: " + ", ".join(c[0] for c in constants[i:i + 4]))
    for i in range(0, len(public), 4):
        pub.append("  public :: " + ", ".join(public[i:i + 4]))
    for fname, lines in (("devmesh_c_interface.f90", module), ("devmesh_public.inc", pub),
                         ("devmesh_wrappers.inc", wrappers)):
        path = os.path.join(outdir, fname)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv)
