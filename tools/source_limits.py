#!/usr/bin/env python3
"""Fails when a C/C++ or Python source of pecs is over 600 lines or has a function over 80.

Run it from anywhere: `python3 tools/source_limits.py` (the tree is the one this file sits
in), or as `bazel test //tools:source_limits_test`.

C functions are found the way clang-format lays them out: a definition starts at column 0,
its signature ends with `{` (at the end of a line, or alone on the next one), and its body
ends at the next `}` in column 0. A signature with no return type, such as a
case-declaring macro `PECS_CASE(name, ...) {`, counts as a function named `PECS_CASE(name)`.
Python functions and methods (nested ones too) come from the `ast` module. A function's
length runs from the first line of its signature to its last line.

tools/source_limits_allow.txt lists the offenders tolerated for now, one per line:
`path` (the file may be over 600 lines) or `path:function` (that function may be over 80),
then `#` and the reason. An entry that no longer matches an offender fails the check too,
so the list only shrinks.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from dataclasses import dataclass
from typing import Iterable, Iterator, List, Optional, Sequence, Set, Tuple

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80

# Every top-level folder holds pecs's own code but these: fetched or stand-in code, Bazel's
# output links, hidden folders and what a run writes. A new folder is checked without
# being named here.
NOT_SOURCE = ("third_party", "out")
C_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".hpp")
PY_SUFFIXES = (".py",)
ALLOW_FILE = os.path.join("tools", "source_limits_allow.txt")


@dataclass(frozen=True)
class Function:
    name: str
    line: int    # 1-based first line of the signature
    length: int  # lines from the signature's first line to the body's last


@dataclass(frozen=True)
class Offender:
    path: str            # relative to the tree's root, with '/'
    line: int
    function: Optional[str]  # None: the file itself is too long
    length: int

    @property
    def key(self) -> str:
        return self.path if self.function is None else f"{self.path}:{self.function}"

    def message(self) -> str:
        if self.function == "<syntax error>":
            return f"{self.path}:{self.line}: cannot parse the file"
        if self.function is None:
            return f"{self.path}:1: file is {self.length} lines (limit {MAX_FILE_LINES})"
        return (f"{self.path}:{self.line}: function {self.function} is {self.length} lines "
                f"(limit {MAX_FUNCTION_LINES})")


# ---- C ------------------------------------------------------------------------------

def _strip_c(lines: Sequence[str]) -> List[str]:
    """The lines with comments blanked and string/char literals emptied, so that braces
    and parentheses inside them do not count; preprocessor lines (and their backslash
    continuations) become empty."""
    out: List[str] = []
    in_comment = False
    in_macro = False
    for raw in lines:
        if in_macro or (not in_comment and raw.lstrip().startswith("#")):
            in_macro = raw.rstrip().endswith("\\")
            out.append("")
            continue
        res: List[str] = []
        i, n = 0, len(raw)
        while i < n:
            if in_comment:
                end = raw.find("*/", i)
                if end < 0:
                    i = n
                else:
                    in_comment = False
                    res.append(" ")
                    i = end + 2
                continue
            c = raw[i]
            if raw.startswith("/*", i):
                in_comment = True
                i += 2
            elif raw.startswith("//", i):
                break
            elif c in "\"'":
                j = i + 1
                while j < n and raw[j] != c:
                    j += 2 if raw[j] == "\\" else 1
                res.append(c + c)
                i = j + 1
            else:
                res.append(c)
                i += 1
        out.append("".join(res).rstrip())
    return out


_IDENT_BEFORE_PAREN = re.compile(r"([A-Za-z_][A-Za-z0-9_:~]*)\s*\($")


def _depth0_text(sig: str) -> Tuple[str, List[str]]:
    """The signature with every parenthesised group cut out, and the text of each
    top-level group."""
    outside: List[str] = []
    groups: List[str] = []
    depth = 0
    cur: List[str] = []
    for c in sig:
        if c == "(":
            if depth == 0:
                outside.append("(")
                cur = []
            else:
                cur.append(c)
            depth += 1
        elif c == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                outside.append(")")
                groups.append("".join(cur))
            else:
                cur.append(c)
        elif depth == 0:
            outside.append(c)
        else:
            cur.append(c)
    return "".join(outside), groups


def _drop_attributes(sig: str) -> str:
    """The signature without its `__attribute__((...))` groups."""
    while True:
        at = sig.find("__attribute__")
        if at < 0:
            return sig
        i = sig.find("(", at)
        depth = 0
        end = len(sig)
        for j in range(max(i, 0), len(sig)):
            depth += {"(": 1, ")": -1}.get(sig[j], 0)
            if depth == 0:
                end = j + 1
                break
        sig = sig[:at] + " " + sig[end:]


def _c_function_name(sig: str) -> Optional[str]:
    """The name a `... {` signature defines, or None when it opens no function (a struct,
    an initializer, an extern "C" block)."""
    outside, groups = _depth0_text(_drop_attributes(sig))
    if "(" not in outside or "=" in outside:
        return None
    head = outside[:outside.index("(") + 1]
    m = _IDENT_BEFORE_PAREN.search(head)
    if not m:
        return None  # e.g. a function returning a function pointer: take no chances
    name = m.group(1)
    before = head[:m.start()].strip()
    if not before and groups:
        # No return type: a macro that declares the function; name it by its first
        # argument so that two uses of the macro stay apart.
        first = groups[0].split(",")[0].strip()
        return f"{name}({first})" if first else name
    return name


def c_functions(text: str) -> List[Function]:
    lines = text.split("\n")
    code = _strip_c(lines)
    found: List[Function] = []
    i = 0
    while i < len(code):
        line = code[i]
        if not line.endswith("{"):
            i += 1
            continue
        # The signature: this line and the column-0 statement it continues, back to the
        # previous blank line, preprocessor line or end of a statement.
        start = i
        if line == "{":
            start = i - 1
        while start > 0:
            prev = code[start - 1].rstrip()
            if not prev or prev.endswith((";", "}", "{")) or lines[start - 1].lstrip() \
                    .startswith("#"):
                break
            start -= 1
        first = code[start] if start >= 0 else ""
        if start < 0 or not first or first[0].isspace() or first.startswith("}"):
            i += 1
            continue
        sig = " ".join(code[start:i + 1])[:-1]
        name = _c_function_name(sig)
        end = i + 1
        while end < len(code) and not code[end].startswith("}"):
            end += 1
        if name is not None and end < len(code):
            found.append(Function(name, start + 1, end - start + 1))
            i = end + 1
        else:
            i += 1
    return found


# ---- Python -------------------------------------------------------------------------

def py_functions(text: str, filename: str = "<source>") -> List[Function]:
    tree = ast.parse(text, filename=filename)
    found: List[Function] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                end = child.end_lineno or child.lineno
                found.append(Function(name, child.lineno, end - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


# ---- the tree -----------------------------------------------------------------------

def source_dirs(root: str) -> List[str]:
    """The top-level folders of the tree that hold pecs's own code."""
    return sorted(d for d in os.listdir(root)
                  if os.path.isdir(os.path.join(root, d)) and d not in NOT_SOURCE
                  and not d.startswith(("bazel-", ".")))


def source_files(root: str) -> Iterator[str]:
    """Relative paths, sorted, of the C/C++ and Python files of the tree's own code,
    the top level's included."""
    paths: List[str] = [f for f in os.listdir(root)
                        if f.endswith(C_SUFFIXES + PY_SUFFIXES)
                        and os.path.isfile(os.path.join(root, f))]
    for top in source_dirs(root):
        base = os.path.join(root, top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames
                                 if not d.startswith(("bazel-", ".")) and d != "__pycache__")
            for f in filenames:
                if f.endswith(C_SUFFIXES + PY_SUFFIXES):
                    rel = os.path.relpath(os.path.join(dirpath, f), root)
                    paths.append(rel.replace(os.sep, "/"))
    return iter(sorted(paths))


def check_text(path: str, text: str) -> List[Offender]:
    offenders: List[Offender] = []
    nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if nlines > MAX_FILE_LINES:
        offenders.append(Offender(path, 1, None, nlines))
    try:
        funcs = py_functions(text, path) if path.endswith(PY_SUFFIXES) else c_functions(text)
    except SyntaxError as e:
        # Unreadable here means unreadable for Python too; say so rather than pass it.
        offenders.append(Offender(path, e.lineno or 1, "<syntax error>", 0))
        return offenders
    for f in funcs:
        if f.length > MAX_FUNCTION_LINES:
            offenders.append(Offender(path, f.line, f.name, f.length))
    return offenders


def check_tree(root: str) -> List[Offender]:
    offenders: List[Offender] = []
    for rel in source_files(root):
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            offenders.extend(check_text(rel, fh.read()))
    return offenders


def read_allowlist(path: str) -> Tuple[List[Tuple[int, str]], List[str]]:
    """(line number, entry) pairs, and the problems with the file itself."""
    entries: List[Tuple[int, str]] = []
    problems: List[str] = []
    if not os.path.exists(path):
        return entries, problems
    with open(path, encoding="utf-8") as fh:
        for no, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            entry, _, reason = line.partition("#")
            if not reason.strip():
                problems.append(f"{ALLOW_FILE}:{no}: entry without a reason after '#'")
            entries.append((no, entry.strip()))
    return entries, problems


def judge(offenders: Iterable[Offender], allowed: Iterable[Tuple[int, str]]) -> List[str]:
    """Every offender not allowed, and every allowlist entry that names no offender."""
    offenders = list(offenders)
    keys: Set[str] = {o.key for o in offenders}
    allowed = list(allowed)
    allowed_keys = {entry for _, entry in allowed}
    out = [o.message() for o in offenders if o.key not in allowed_keys]
    for no, entry in allowed:
        if entry not in keys:
            out.append(f"{ALLOW_FILE}:{no}: stale entry {entry}: now within the limits "
                       "(or gone); delete the line")
    return out


def default_root() -> str:
    # realpath: under `bazel test` this file is a runfiles link into the source tree.
    return os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def main(argv: Sequence[str]) -> int:
    root = argv[1] if len(argv) > 1 else default_root()
    if not os.path.isdir(os.path.join(root, "ref")):
        print(f"source_limits: {root} is not the pecs tree", file=sys.stderr)
        return 2
    entries, problems = read_allowlist(os.path.join(root, ALLOW_FILE))
    problems += judge(check_tree(root), entries)
    for p in problems:
        print(p)
    if problems:
        print(f"source_limits: {len(problems)} problem(s); limits are {MAX_FILE_LINES} lines "
              f"per file and {MAX_FUNCTION_LINES} per function", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
