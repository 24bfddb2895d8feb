"""Expectations files, applied by the harness exactly as the runners apply them.

The harness re-applies them to each case's raw status so that results gathered anywhere
(a static binary run inside another system, with or without the file) are gated by the
file in this checkout. Syntax and rules: conformance/framework/expectations.c and
docs/implementing.md. A line is `PATTERN [conditions] # reason`.
"""
import dataclasses
import errno as errno_mod
import fnmatch
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from .case_result import CaseResult, Expectation
from .statuses import RAW_FAILURES

Host = dict[str, Any]  # the host facts of a results file: privileged, kernel_release, ...


class ExpectationsError(Exception):
    """The file cannot be used; the message names file:line and how to fix it."""


@dataclass
class Line:
    """One usable line of an expectations file."""
    path: str
    lineno: int
    pattern: str
    conditions: list[str]
    reason: str

    def matches(self, case_id: str) -> bool:
        return fnmatch.fnmatchcase(case_id, self.pattern)

    def is_glob(self) -> bool:
        return any(ch in self.pattern for ch in "*?[")

    def where(self) -> str:
        return "%s:%d" % (self.path, self.lineno)


_KNOWN = "privileged, unprivileged, kernel>=X.Y[.Z], kernel<X.Y[.Z], paranoid>=N, paranoid<N"


def _check_condition(cond: str, where: str) -> None:
    if cond in ("privileged", "unprivileged"):
        return
    if re.fullmatch(r"kernel(>=|<)\d+(\.\d+){0,2}", cond) or re.fullmatch(r"paranoid(>=|<)-?\d+", cond):
        return
    raise ExpectationsError("%s: unknown condition '%s' (known: %s)" % (where, cond, _KNOWN))


def _parse_line(s: str, where: str) -> tuple[str, list[str], str]:
    """One non-comment line as a Line, or ExpectationsError."""
    spec, hash_, reason = s.partition("#")
    if not hash_:
        raise ExpectationsError("%s: every line needs a reason: append '# why it fails'" % where)
    reason = reason.strip()
    if not reason:
        raise ExpectationsError("%s: the reason after '#' is empty: say why it fails" % where)
    spec = spec.strip()
    conditions = []
    # The conditions are the [..] after whitespace; a '[' inside the pattern is a glob's
    # character class (Required.Read.[AB]*).
    m = re.match(r"(\S+)\s+\[(.*)$", spec)
    if m:
        pattern, rest = m.group(1), m.group(2)
        inner, close, tail = rest.partition("]")
        if not close or tail.strip():
            raise ExpectationsError(
                "%s: conditions go in one [..] after the case id, e.g. "
                "'Required.X [unprivileged] # reason'" % where)
        conditions = [c.strip() for c in inner.split(",") if c.strip()]
        for c in conditions:
            _check_condition(c, where)
        spec = pattern.strip()
    if not spec or any(ch.isspace() for ch in spec):
        raise ExpectationsError("%s: expected one case id or glob before the conditions" % where)
    return spec, conditions, reason


@dataclass(frozen=True)
class CauseLine:
    """`@root-cause ENTRY ERRNO # reason`: every failure that follows from ENTRY answering
    ERRNO is known, said once rather than one line a case (rootcause.RootCause.explains)."""
    path: str
    lineno: int
    entry: str
    errno: str
    reason: str

    def where(self) -> str:
        return "%s:%d" % (self.path, self.lineno)


@dataclass
class Directives:
    """The @ lines (conformance/framework/directives.c): `@floor N`, `@features LIST` and
    `@accept-refusal` gate the run as a whole, each with its line number (0: absent);
    `@root-cause ENTRY ERRNO` lines explain cases."""
    path: str = ""
    floor: int = 0
    floor_line: int = 0
    features: list[str] | None = None
    features_line: int = 0
    accept_refusal_line: int = 0
    causes: list[CauseLine] = dataclasses.field(default_factory=list)


# The entry points a root cause can name (rootcause.ENTRIES, tally.c's names).
CAUSE_ENTRIES = ("open", "close", "read", "write", "ioctl", "mmap", "munmap", "poll")


def _cause(d: Directives, arg: str, reason: str, lineno: int, where: str) -> None:
    m = re.fullmatch(r"(\w+)\s+-?(E[A-Z0-9]+)", arg)
    if not m or m.group(1) not in CAUSE_ENTRIES or not hasattr(errno_mod, m.group(2)):
        raise ExpectationsError("%s: '@root-cause ENTRY ERRNO', ENTRY one of %s and ERRNO a "
                                "name such as ENOSYS" % (where, ", ".join(CAUSE_ENTRIES)))
    for c in d.causes:
        if c.entry == m.group(1):
            raise ExpectationsError("%s: duplicate of %s ('@root-cause %s'): delete one of "
                                    "the two lines" % (where, c.where(), c.entry))
    d.causes.append(CauseLine(d.path, lineno, m.group(1), m.group(2), reason.strip()))


def _directive(d: Directives, s: str, lineno: int, where: str) -> None:
    spec, hash_, reason = s.partition("#")
    if not hash_ or not reason.strip():
        raise ExpectationsError("%s: every line needs a reason: append '# why'" % where)
    name, _, arg = spec[1:].strip().partition(" ")
    arg = arg.strip()
    taken = {"floor": d.floor_line, "features": d.features_line,
             "accept-refusal": d.accept_refusal_line}.get(name)
    if taken:
        raise ExpectationsError("%s: duplicate of %s:%d ('@%s'): delete one of the two lines" %
                                (where, d.path, taken, name))
    if name == "floor" and re.fullmatch(r"\d+", arg):
        d.floor, d.floor_line = int(arg), lineno
    elif name == "floor":
        raise ExpectationsError("%s: '@floor N': N is the least number of passes" % where)
    elif name == "features":
        items = [] if arg == "-" else re.split(r"[,\s]+", arg)
        d.features, d.features_line = sorted(set(i for i in items if i)), lineno
    elif name == "accept-refusal" and not arg:
        d.accept_refusal_line = lineno
    elif name == "root-cause":
        _cause(d, arg, reason, lineno, where)
    else:
        raise ExpectationsError("%s: unknown line '@%s' (known: @floor N, @features LIST, "
                                "@accept-refusal, @root-cause ENTRY ERRNO)" % (where, name))


def directives(text: str, path: str) -> tuple[Directives, list[str]]:
    """The @ lines of a file, and one message per bad one."""
    d = Directives(path)
    errors = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if s.startswith("@"):
            try:
                _directive(d, s, lineno, "%s:%d" % (path, lineno))
            except ExpectationsError as e:
                errors.append(str(e))
    return d, errors


def load_directives(path: str) -> tuple[Directives, list[str]]:
    try:
        with open(path, encoding="utf-8") as f:
            return directives(f.read(), path)
    except (OSError, UnicodeDecodeError):
        return Directives(path), []  # load_all reports the file itself


def drafts(text: str, path: str) -> list[str]:
    """"file:line" of each line whose reason still starts with "draft:", as `pecs_harness
    expectations` wrote it: a guess nobody has checked (--strict refuses them)."""
    out = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        reason = s.partition("#")[2].strip()
        if reason.startswith("draft:"):
            out.append("%s:%d" % (path, lineno))
    return out


def load_drafts(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return drafts(f.read(), path)
    except (OSError, UnicodeDecodeError):
        return []  # load_all reports the file itself


def parse_all(text: str, path: str) -> tuple[list[Line], list[str]]:
    """(lines, errors): every usable line, and one message per bad line, so a file with a
    mistake still gates the cases its other lines name while the gate reports the mistake.

    Two lines with the same pattern and the same conditions are a duplicate: only the first
    could ever match, so the second's reason would be silently ignored."""
    lines: list[Line] = []
    errors: list[str] = []
    first: dict[tuple[str, frozenset[str]], int] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        if not s or s.startswith("#") or s.startswith("@"):
            continue  # @ lines: directives()
        where = "%s:%d" % (path, lineno)
        try:
            spec, conditions, reason = _parse_line(s, where)
        except ExpectationsError as e:
            errors.append(str(e))
            continue
        key = (spec, frozenset(conditions))
        if key in first:
            errors.append("%s: duplicate of %s:%d ('%s'%s): delete one of the two lines" % (
                where, path, first[key], spec,
                " [%s]" % ", ".join(sorted(set(conditions))) if conditions else ""))
            continue
        first[key] = lineno
        lines.append(Line(path, lineno, spec, conditions, reason))
    return lines, errors


def parse(text: str, path: str) -> list[Line]:
    """The lines of a file that has no bad line; ExpectationsError (every problem, one a
    line) otherwise."""
    lines, errors = parse_all(text, path)
    if errors:
        raise ExpectationsError("\n".join(errors))
    return lines


def load_all(path: str) -> tuple[list[Line], list[str]]:
    """(lines, errors) of the file at path; a file that cannot be read is one error."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        return [], ["%s: cannot open expectations file: %s" % (path, e.strerror)]
    except UnicodeDecodeError as e:
        return [], ["%s: not UTF-8 text (%s)" % (path, e.reason)]
    return parse_all(text, path)


def load(path: str) -> list[Line]:
    lines, errors = load_all(path)
    if errors:
        raise ExpectationsError("\n".join(errors))
    return lines


def _version(release: str | None) -> tuple[int, int, int] | None:
    """(X, Y, Z) of a release's leading X[.Y[.Z]], a part left out being 0: "6.1" is 6.1.0,
    so [kernel<6.1.192] names a stable release (the runner reads Debian's from uname -v)."""
    m = re.match(r"(\d+)(?:\.(\d+)(?:\.(\d+))?)?", release or "")
    return (int(m.group(1)), int(m.group(2) or 0), int(m.group(3) or 0)) if m else None


def condition_holds(cond: str, host: Host) -> bool:
    if cond == "privileged":
        return bool(host.get("privileged"))
    if cond == "unprivileged":
        return not host.get("privileged")
    m = re.fullmatch(r"kernel(>=|<)(.+)", cond)
    if m:
        have, want = _version(host.get("kernel_release")), _version(m.group(2))
        if have is None or want is None:
            return False  # an unknown kernel version satisfies neither side
        return have >= want if m.group(1) == ">=" else have < want
    m = re.fullmatch(r"paranoid(>=|<)(-?\d+)", cond)
    if m:
        level, limit = int(host.get("paranoid", 0)), int(m.group(2))
        return level >= limit if m.group(1) == ">=" else level < limit
    raise ExpectationsError("unknown condition '%s'" % cond)


def active_lines(lines: Iterable[Line], host: Host) -> list[Line]:
    return [l for l in lines if all(condition_holds(c, host) for c in l.conditions)]


def match(lines: Iterable[Line], host: Host, case_id: str) -> Line | None:
    """The first line active on this host whose pattern matches case_id, or None."""
    for l in active_lines(lines, host):
        if l.matches(case_id):
            return l
    return None


def xpass_message(line: Line) -> str:
    return "listed as failing in %s ('%s') but it passed: delete that line%s" % (
        line.where(), line.pattern, " or narrow the glob" if line.is_glob() else "")


def stale_message(line: Line) -> str:
    return ("%s: '%s' matches no case in this suite: delete the line or correct the case id "
            "(list them with --list)" % (line.where(), line.pattern))


def apply(lines: Iterable[Line], host: Host, result: CaseResult) -> CaseResult:
    """Returns a copy of result with status and expectation recomputed from raw_status."""
    raw = result.raw_status or result.status
    r = dataclasses.replace(result, raw_status=raw, status=raw, expectation=None)
    l = match(lines, host, r.id)
    if l is None:
        return r
    r.expectation = Expectation(l.path, l.lineno, l.reason)
    if raw == "PASS":
        r.status = "XPASS"
        r.message = xpass_message(l)
    elif raw in RAW_FAILURES:
        r.status = "XFAIL"
    return r


def stale(lines: Iterable[Line], case_ids: Collection[str]) -> list[Line]:
    """Lines (active or not) whose pattern matches none of case_ids."""
    return [l for l in lines if not any(l.matches(i) for i in case_ids)]
