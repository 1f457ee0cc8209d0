#!/usr/bin/env python3
"""No file in lib/ or backends/ over MAX_FILE_LINES lines, no function over
MAX_FUNCTION_LINES lines (C, C++, Fortran and Python; templates with a `.in`
suffix are generated files' sources and do not count).

    python3 tests/style/check_sizes.py [SOURCE_ROOT]         # the test
    python3 tests/style/check_sizes.py --list [SOURCE_ROOT]  # every offender, exit 0

A function is counted from the line of its signature's first token to the
line of its closing brace (C, C++), its `end subroutine`/`end function`
(Fortran) or its block's last line (Python); a lambda or internal procedure
counts as part of the function around it. KNOWN_OFFENDERS lists what is
tolerated while it is split; an entry that is no longer over the limit fails
the test, so the list only shrinks.
"""
import ast
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 70
# Folders whose files are held to the limits.
CHECKED_DIRS = ('lib', 'backends')
# (path, None) tolerates a file's length, (path, name) the functions of that
# name in it; each is tolerated only while it is over the limit.
KNOWN_OFFENDERS = {
}

C_SUFFIXES = ('.c', '.cpp', '.h', '.hpp')
FORTRAN_SUFFIXES = ('.f90',)
PYTHON_SUFFIXES = ('.py',)


def is_generated(path):
    """A file with a `.in` suffix is a template configure_file fills in."""
    return path.endswith('.in')


def list_files(root):
    """The git-tracked files under CHECKED_DIRS, or a walk outside git."""
    try:
        out = subprocess.run(['git', '-C', root, 'ls-files', '--', *CHECKED_DIRS], check=True,
                             capture_output=True, text=True).stdout
        files = [f for f in out.splitlines() if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for top in CHECKED_DIRS:
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith('.'))
                for name in sorted(filenames):
                    files.append(os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, '/'))
    return sorted(f for f in files if not is_generated(f) and os.path.isfile(os.path.join(root, f)))


# ---------------------------------------------------------------- C and C++


_PREPROCESSOR = re.compile(r'[ \t]*#')


def strip_c(text):
    """The text with comments, string and char literals and preprocessor lines
    blanked (newlines kept, so that offsets keep their line numbers)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and _PREPROCESSOR.match(text, i):
            # A preprocessor line, with its continuations.
            j = i
            while j < n and not (text[j] == '\n' and text[j - 1] != '\\'):
                j += 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
            continue
        if c == '\n':
            out.append(c)
            line_start = True
            i += 1
            continue
        if c not in ' \t':
            line_start = False
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'R' and text.startswith('"', i + 1) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == '_')):
            m = re.match(r'R"([^ ()\\\t\n]{0,16})\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(')' + m.group(1) + '"', i + m.end())
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + re.sub(r'[^\n]', ' ', text[i + 2:end]))
            i = end
        elif c == '"' or (c == "'" and not _is_digit_separator(text, i)):
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j = min(j + 1, n)
            out.append(c + ' ' * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def _is_digit_separator(text, i):
    """Whether the quote at i separates digits (C++14's 1'000'000)."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "'."):
        j -= 1
    return j < i and text[j].isdigit()


_LABEL = re.compile(r'^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+')
_ATTRIBUTES = re.compile(r'\[\[.*?\]\]|__attribute__\s*\(\(.*?\)\)|alignas\s*\([^)]*\)', re.S)
_CONTROL = re.compile(r'^(?:if|else|for|while|do|switch|try|catch|return|case|default)\b')
_TRAILER = re.compile(r'^\s*(?:(?:const|volatile|noexcept|override|final|mutable|&&|&|throw\s*\(\s*\))\s*)*'
                      r'(?:->.*|:.*|requires.*)?$', re.S)


def _strip_template_prefix(decl):
    """decl without its leading `template <...>` clauses."""
    while True:
        m = re.match(r'\s*template\s*<', decl)
        if not m:
            return decl
        depth, i = 1, m.end()
        while i < len(decl) and depth:
            depth += {'<': 1, '>': -1}.get(decl[i], 0)
            i += 1
        decl = decl[i:]


def _top_level(decl):
    """decl with every parenthesised group's contents blanked out."""
    out, depth = [], 0
    for c in decl:
        if c == '(':
            depth += 1
            out.append(c if depth == 1 else ' ')
        elif c == ')':
            out.append(c if depth == 1 else ' ')
            depth = max(depth - 1, 0)
        else:
            out.append(c if depth == 0 else ' ')
    return ''.join(out)


def classify_brace(decl):
    """What a `{` at namespace or class scope opens, from the declaration text
    before it: 'namespace', 'class', 'function', 'init' (a member's brace
    initializer inside a constructor's initializer list) or 'other'."""
    decl = _LABEL.sub('', decl)
    body = _strip_template_prefix(_ATTRIBUTES.sub(' ', decl)).strip()
    if re.match(r'^(?:inline\s+)?namespace\b', body) or re.match(r'^extern\s*"\s*"$', body):
        return 'namespace'
    if _CONTROL.match(body) or re.match(r'^(?:typedef\s+)?enum\b', body):
        return 'other'
    if re.match(r'^(?:typedef\s+)?(?:class|struct|union)\b', body) and ')' not in body:
        return 'class'
    if ')' not in body:
        return 'other'
    top = _top_level(body)
    if re.search(r'(?<![=!<>+\-*/%&|^])=(?!=)', re.sub(r'operator\s*\S*=', 'operator', top)):
        return 'other'
    first = top.find('(')
    rest = top[top.find(')', first) + 1:] if first >= 0 else ''
    if re.search(r'(?<!:):(?!:)', rest):
        # A constructor's initializer list: the body follows a `)` or `}`.
        return 'function' if re.search(r'[)}]\s*$', body) else 'init'
    last = top.rfind(')')
    if not _TRAILER.match(top[last + 1:]):
        return 'other'
    return 'function'


def function_name(decl):
    """The name a function's declaration gives it (qualified as written)."""
    body = _strip_template_prefix(_ATTRIBUTES.sub(' ', _LABEL.sub('', decl)))
    m = re.search(r'((?:[\w~]+\s*::\s*)*(?:operator\s*(?:\(\s*\)|[^\s(]+)|~?\w+))\s*\(', body)
    return re.sub(r'\s+', '', m.group(1)) if m else '?'


def c_functions(text):
    """(line, name, length) of each function body in C or C++ source text."""
    code = strip_c(text)
    found = []
    # Each scope: [kind, decl start offset of the enclosing declaration].
    stack = [['namespace', 0]]
    decl_start = 0
    line_of = _line_index(code)
    for i, c in enumerate(code):
        if c in ';{}':
            kind = stack[-1][0]
            inside = kind == 'other' or any(s[0] == 'function' for s in stack)
            if c == ';':
                if kind in ('namespace', 'class'):
                    decl_start = i + 1
            elif c == '{':
                if inside:
                    stack.append(['other', decl_start])
                    continue
                what = classify_brace(code[decl_start:i]) if kind != 'init' else 'other'
                stack.append([what, decl_start])
                if what != 'init':
                    decl_start = i + 1
            else:
                if len(stack) == 1:
                    continue
                what, start = stack.pop()
                if what == 'function':
                    first = start + len(code[start:]) - len(code[start:].lstrip())
                    label = _LABEL.match(code[first:])
                    first += label.end() if label else 0
                    first_line = line_of(first)
                    found.append((first_line, function_name(code[start:i]), line_of(i) - first_line + 1))
                if what != 'init' and stack[-1][0] in ('namespace', 'class'):
                    decl_start = i + 1
    return found


def _line_index(text):
    starts = [0] + [m.end() for m in re.finditer('\n', text)]

    def line_of(offset):
        lo, hi = 0, len(starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1

    return line_of


# ------------------------------------------------------------------ Fortran

_F_START = re.compile(r'^(?:(?!end\b)[\w\s(),=*]*?\s)?(subroutine|function)\s+(\w+)', re.I)
_F_MODULE_PROCEDURE = re.compile(r'^module\s+procedure\s+(\w+)\s*$', re.I)
_F_END = re.compile(r'^end\s*(subroutine|function|procedure)\b', re.I)
_F_INTERFACE = re.compile(r'^(?:abstract\s+)?interface\b', re.I)
_F_END_INTERFACE = re.compile(r'^end\s*interface\b', re.I)


def _fortran_statements(text):
    """(line, statement) of each free-form Fortran statement, its comments
    and strings blanked and its continuation lines joined."""
    statements, pending, pending_line = [], '', 0
    for number, raw in enumerate(text.splitlines(), 1):
        line, quote = [], None
        for c in raw:
            if quote:
                if c == quote:
                    quote = None
                    line.append(c)
                continue
            if c == '!':
                break
            if c in '"\'':
                quote = c
            line.append(c)
        stmt = ''.join(line).strip()
        if pending:
            stmt = stmt[1:] if stmt.startswith('&') else stmt
        else:
            pending_line = number
        if stmt.endswith('&'):
            pending += stmt[:-1] + ' '
            continue
        full = (pending + stmt).strip()
        pending = ''
        for part in full.split(';'):
            if part.strip():
                statements.append((pending_line, part.strip()))
    return statements


def fortran_functions(text):
    """(line, name, length) of each subroutine and function in Fortran text
    (their declarations in interface blocks aside)."""
    found, stack, interface_depth = [], [], 0
    for line, stmt in _fortran_statements(text):
        if _F_INTERFACE.match(stmt):
            interface_depth += 1
        elif _F_END_INTERFACE.match(stmt):
            interface_depth = max(interface_depth - 1, 0)
        elif interface_depth:
            continue
        elif _F_END.match(stmt):
            if stack:
                name, start = stack.pop()
                found.append((start, name, line - start + 1))
        elif '::' not in stmt and (_F_START.match(stmt) or _F_MODULE_PROCEDURE.match(stmt)):
            m = _F_START.match(stmt) or _F_MODULE_PROCEDURE.match(stmt)
            stack.append((m.group(m.lastindex), line))
    return found


# ------------------------------------------------------------------- Python


def python_functions(text):
    """(line, name, length) of each def block in Python text."""
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.lineno, node.name, node.end_lineno - node.lineno + 1))
    return sorted(found)


# -------------------------------------------------------------------- check


def functions_of(path, text):
    lower = path.lower()
    if lower.endswith(C_SUFFIXES):
        return c_functions(text)
    if lower.endswith(FORTRAN_SUFFIXES):
        return fortran_functions(text)
    if lower.endswith(PYTHON_SUFFIXES):
        return python_functions(text)
    return []


def offenders(path, text):
    """[(key, message)] for the file and each function over its limit; key is
    (path, None) or (path, function name), as in KNOWN_OFFENDERS."""
    result = []
    lines = text.count('\n') + (0 if text.endswith('\n') or not text else 1)
    if lines > MAX_FILE_LINES:
        result.append(((path, None), f'{path}: {lines} lines (limit {MAX_FILE_LINES})'))
    for line, name, length in functions_of(path, text):
        if length > MAX_FUNCTION_LINES:
            result.append(((path, name), f'{path}:{line}: {name}: {length} lines (limit {MAX_FUNCTION_LINES})'))
    return result


def check(sources, known):
    """sources: {path: text}. Returns (failures, tolerated) as message lists."""
    failures, tolerated, seen = [], [], set()
    for path in sorted(sources):
        for key, message in offenders(path, sources[path]):
            if key in known:
                seen.add(key)
                tolerated.append(f'{message}: tolerated, {known[key]}')
            else:
                failures.append(message)
    for key in sorted(set(known) - seen, key=lambda k: (k[0], k[1] or '')):
        what = key[0] if key[1] is None else f'{key[0]}: {key[1]}'
        failures.append(f'{what}: listed in KNOWN_OFFENDERS but within the limits; remove it from the list')
    return failures, tolerated


def main(argv):
    args = [a for a in argv if a != '--list']
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    sources = {}
    for path in list_files(root):
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            sources[path] = f.read()
    if '--list' in argv:
        for path in sorted(sources):
            for _, message in offenders(path, sources[path]):
                print(message)
        return 0
    failures, tolerated = check(sources, KNOWN_OFFENDERS)
    for message in tolerated:
        print(message)
    for message in failures:
        print('error: ' + message)
    if failures:
        return 1
    print(f'{len(sources)} files in {", ".join(CHECKED_DIRS)}: none over {MAX_FILE_LINES} lines, '
          f'no function over {MAX_FUNCTION_LINES} lines (beside the {len(tolerated)} tolerated above)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
