"""Single-line mutants of C sources: where they can go, and a deterministic sample.

A mutant changes one line of one file in one of these ways:
  cmp      a comparison flipped (== and !=, < and >=, > and <=) or moved off by one
           (<= to <, >= to >)
  logic    && and || swapped
  guard    an error return deleted: `if (...) return -E...;` on one line loses the whole
           line, and a `return -E...;` alone on its line (the body of an `if` above it)
           becomes an empty statement
  errno    one errno constant for another in a `return -E...`/`-E...` expression
  literal  an integer literal moved by one (0 to 1, n to n+1 or n-1)
Comments, string and character literals and preprocessor lines are never touched, nor
the `<`/`>` of `->`, `<<`, `>>`.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Sequence, Tuple

KINDS = ("cmp", "logic", "guard", "errno", "literal")

# Each errno is swapped for one its callers tell apart from it.
ERRNO_SWAP = {
    "EINVAL": "EBADF", "EBADF": "EINVAL", "EACCES": "EPERM", "EPERM": "EACCES",
    "ESRCH": "ENOENT", "ENOENT": "ESRCH", "ENODEV": "EINVAL", "EBUSY": "EINVAL",
    "EFAULT": "EINVAL", "ENOSPC": "EINVAL", "E2BIG": "EINVAL", "EOPNOTSUPP": "EINVAL",
    "ENOTTY": "EINVAL", "ENOMEM": "ENOSPC", "EAGAIN": "EINTR", "EINTR": "EAGAIN",
    "EMFILE": "ENFILE", "EOVERFLOW": "EINVAL", "EPIPE": "EIO", "EIO": "EPIPE",
    "EEXIST": "EBUSY", "ENOSYS": "EINVAL", "ERANGE": "EINVAL",
}
CMP_SWAP = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
CMP_EDGE = {"<=": "<", ">=": ">"}

_CMP = re.compile(r"==|!=|(?<![<>])(?:<=|>=)|(?<![<>\-])<(?![<=])|(?<![<>\-])>(?![>=])")
_LOGIC = re.compile(r"&&|\|\|")
_ERRNO = re.compile(r"(?<![A-Za-z0-9_])-(E[A-Z0-9]+)\b")
_LITERAL = re.compile(r"(?<![A-Za-z0-9_.])(0x[0-9a-fA-F]+|[0-9]+)([uUlL]*)(?![A-Za-z0-9_.])")
_GUARD_ONE = re.compile(r"^\s*(?:else\s+)?if\s*\(.*\)\s*return\s+-E[A-Z0-9]+\s*;\s*$")
_RETURN_ERR = re.compile(r"^(\s*)return\s+-E[A-Z0-9]+\s*;\s*$")


@dataclass(frozen=True)
class Mutant:
    path: str       # as given to sites(), e.g. ref/event/event_rb.c
    line: int       # 1-based
    kind: str
    col: int        # where the change starts in the line (-1: the whole line)
    original: str   # the line as it was, without its newline
    mutated: str    # the line as the mutant has it

    @property
    def ident(self) -> str:
        """This mutant in this tree (a run's results are keyed by it)."""
        return "%s:%d:%s:%d:%s" % (self.path, self.line, self.kind, self.col,
                                   self.mutated.strip())

    @property
    def judge_key(self) -> str:
        """What a judgement names: the change without its line number, so it holds while
        the line moves (identical lines of one file share it)."""
        return judge_key(self.describe())

    def describe(self) -> str:
        return "%s:%d %s: `%s` -> `%s`" % (self.path, self.line, self.kind,
                                          self.original.strip(), self.mutated.strip())


def judge_key(describe: str) -> str:
    """`path:line kind: ...` -> `path kind: ...`."""
    return re.sub(r"^(\S+?):\d+ ", r"\1 ", describe, count=1)


def mask_code(text: str) -> List[str]:
    """The lines of text with comments and string/char literals blanked to spaces (same
    lengths), and preprocessor lines blanked whole."""
    out = []
    i, n = 0, len(text)
    buf = []
    state = "code"
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if state == "code":
            if c == "/" and nxt == "*":
                state, c2 = "block", "  "
                buf.append(c2)
                i += 2
                continue
            if c == "/" and nxt == "/":
                state = "line"
                buf.append(" ")
                i += 1
                continue
            if c in "\"'":
                state = c
            buf.append(c)
        elif state == "block":
            if c == "*" and nxt == "/":
                buf.append("  ")
                state = "code"
                i += 2
                continue
            buf.append(c if c == "\n" else " ")
        elif state == "line":
            if c == "\n":
                state = "code"
                buf.append(c)
            else:
                buf.append(" ")
        else:  # inside a string or char literal opened by state
            if c == "\\" and nxt:
                buf.append("  " if nxt != "\n" else " \n")
                i += 2
                continue
            if c == state:
                state = "code"
                buf.append(c)
            else:
                buf.append(c if c == "\n" else " ")
        i += 1
    lines = "".join(buf).split("\n")
    cont = False
    for k, line in enumerate(lines):
        pre = cont or line.lstrip().startswith("#")
        cont = pre and line.rstrip().endswith("\\")
        if pre:
            lines[k] = " " * len(line)
    return lines


def _line_mutants(path: str, no: int, line: str, code: str) -> Iterable[Mutant]:
    for m in _CMP.finditer(code):
        op = m.group(0)
        for new in {CMP_SWAP[op], CMP_EDGE.get(op, CMP_SWAP[op])}:
            yield Mutant(path, no, "cmp", m.start(), line,
                         line[:m.start()] + new + line[m.end():])
    for m in _LOGIC.finditer(code):
        new = "||" if m.group(0) == "&&" else "&&"
        yield Mutant(path, no, "logic", m.start(), line, line[:m.start()] + new + line[m.end():])
    if _GUARD_ONE.match(code):
        yield Mutant(path, no, "guard", -1, line, "")
    else:
        r = _RETURN_ERR.match(code)
        if r:
            yield Mutant(path, no, "guard", -1, line, r.group(1) + ";")
    for m in _ERRNO.finditer(code):
        new = ERRNO_SWAP.get(m.group(1))
        if new:
            s, e = m.start(1), m.end(1)
            yield Mutant(path, no, "errno", s, line, line[:s] + new + line[e:])
    for m in _LITERAL.finditer(code):
        # array sizes and bit positions are literals too; all are fair game
        digits = m.group(1)
        if len(digits) > 1 and digits[0] == "0" and digits[1] not in "xX":
            continue  # octal (file modes): left alone
        value = int(digits, 16) if digits.lower().startswith("0x") else int(digits)
        new = value + 1 if value == 0 or (no + m.start()) % 2 == 0 else value - 1
        text = hex(new) if digits.lower().startswith("0x") else str(new)
        yield Mutant(path, no, "literal", m.start(1), line,
                     line[:m.start(1)] + text + line[m.end(1):])


def sites(path: str, text: str) -> List[Mutant]:
    """Every mutant of one file, in line order."""
    raw = text.split("\n")
    masked = mask_code(text)
    out: List[Mutant] = []
    for k, (line, code) in enumerate(zip(raw, masked)):
        # static_assert and array sizes in declarations at file level are left: a mutant
        # there does not build or changes nothing at run time
        if "_Static_assert" in code or "static_assert" in code:
            continue
        out.extend(_line_mutants(path, k + 1, line, code))
    return out


def component(path: str) -> str:
    """ref/event/event_rb.c -> event; ref/foo.c -> ref."""
    parts = path.split("/")
    return parts[1] if len(parts) > 2 else parts[0]


def sample(files: Dict[str, str], n: int, seed: int) -> List[Mutant]:
    """n mutants over files ({path: text}), spread over components in proportion to
    their lines of code (at least one each while n allows), the same for the same
    seed and sources. Within a component, kinds are drawn evenly before sites."""
    rng = random.Random(seed)
    by_comp: Dict[str, List[Mutant]] = {}
    lines: Dict[str, int] = {}
    for path in sorted(files):
        c = component(path)
        by_comp.setdefault(c, []).extend(sites(path, files[path]))
        lines[c] = lines.get(c, 0) + files[path].count("\n")
    comps = [c for c in sorted(by_comp) if by_comp[c]]
    quota = _quota(comps, lines, n)
    out: List[Mutant] = []
    for c in comps:
        out.extend(_pick(rng, by_comp[c], quota[c]))
    return out


def _quota(comps: Sequence[str], lines: Dict[str, int], n: int) -> Dict[str, int]:
    total = sum(lines[c] for c in comps) or 1
    quota = {c: (1 if n >= len(comps) else 0) for c in comps}
    left = n - sum(quota.values())
    shares: List[Tuple[float, str]] = []
    for c in comps:
        exact = left * lines[c] / total
        quota[c] += int(exact)
        shares.append((exact - int(exact), c))
    left = n - sum(quota.values())
    for _, c in sorted(shares, key=lambda s: (-s[0], s[1]))[:max(left, 0)]:
        quota[c] += 1
    return quota


def _pick(rng: random.Random, pool: List[Mutant], k: int) -> List[Mutant]:
    kinds: Dict[str, List[Mutant]] = {}
    for m in pool:
        kinds.setdefault(m.kind, []).append(m)
    for v in kinds.values():
        rng.shuffle(v)
    order = [kd for kd in KINDS if kd in kinds]
    out: List[Mutant] = []
    seen = set()
    while len(out) < k and any(kinds[kd] for kd in order):
        for kd in order:
            # one mutant per line: two on a line would mostly repeat what one shows
            while kinds[kd] and (kinds[kd][-1].path, kinds[kd][-1].line) in seen:
                kinds[kd].pop()
            if kinds[kd] and len(out) < k:
                m = kinds[kd].pop()
                seen.add((m.path, m.line))
                out.append(m)
    return sorted(out, key=lambda m: (m.path, m.line))
