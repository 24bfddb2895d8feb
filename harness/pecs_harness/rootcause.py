"""The root causes of a run, from what each entry point answered ("calls" in a results file).

The runner names them for one process; shards of one run are merged here and the causes
recomputed from their summed tallies by the same rule as conformance/framework/tally.c:
an entry point that answered every call (at least MIN_CALLS, in MIN_CASES cases) with one
errno explains the failures that follow from it. The model (model.py) computes them once,
with the cases each explains and the claimed features it makes moot; every view renders
what the model holds.
"""
import errno as errno_mod
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .case_result import CaseResult
from .statuses import RAW_FAILURES

ENTRIES = ("open", "close", "read", "write", "ioctl", "mmap", "munmap", "poll")
MIN_CALLS = 10
MIN_CASES = 3

Calls = dict[str, dict[str, Any]]  # entry -> {calls, ok, cases, errno, mixed}


@dataclass(frozen=True)
class RootCause:
    """One entry point that answered every call with one errno."""
    entry: str
    errno: str    # the name, "ENOSYS"
    calls: int
    cases: int

    @property
    def text(self) -> str:
        return "%s answered every call (%d in %d cases) with -%s" % (
            self.entry, self.calls, self.cases, self.errno)

    def explains(self, result: CaseResult) -> bool:
        """Whether result's failure follows from this cause: the case's own tally says its
        entry point answered with the errno (runners that write "failed_calls"), else its
        message names the errno, by name or (older messages) as "= -N"."""
        if result.raw_status not in RAW_FAILURES:
            return False
        if result.failed_calls is not None:
            return result.failed_calls.get(self.entry) == self.errno
        return names_errno(result.message, self.errno)


def names_errno(message: str, errno: str) -> bool:
    number = getattr(errno_mod, errno, None)
    return errno in (message or "") or (
        number is not None and re.search(r"= -%d\b" % number, message or "") is not None)


def sum_calls(parts: Iterable[Calls | None]) -> Calls | None:
    """The tallies of several shards as one; None when no part has any."""
    total: Calls = {}
    seen = False
    for part in parts:
        if not part:
            continue
        seen = True
        for name, t in part.items():
            s = total.setdefault(name, {"calls": 0, "ok": 0, "cases": 0, "errno": None,
                                        "mixed": False})
            failed_before = s["calls"] - s["ok"]
            failed = int(t.get("calls", 0)) - int(t.get("ok", 0))
            for k in ("calls", "ok", "cases"):
                s[k] += int(t.get(k, 0))
            if not failed:
                continue
            if t.get("mixed") or (failed_before and (s["mixed"] or s["errno"] != t.get("errno"))):
                s["mixed"] = True
                s["errno"] = None
            else:
                s["errno"] = t.get("errno")
    return total if seen else None


def causes(calls: Calls | None) -> tuple[RootCause, ...]:
    """The root causes in the order of ENTRIES; empty when there is none."""
    found = []
    for name in ENTRIES:
        t = (calls or {}).get(name)
        if not t or t.get("ok") or t.get("mixed") or not t.get("errno"):
            continue
        if t.get("calls", 0) < MIN_CALLS or t.get("cases", 0) < MIN_CASES:
            continue
        found.append(RootCause(name, str(t["errno"]), int(t["calls"]), int(t["cases"])))
    return tuple(found)


def line(calls: Calls | None) -> str | None:
    """The root causes as one line, or None."""
    return "; ".join(c.text for c in causes(calls)) or None


_LINE = re.compile(r"(\w+) answered every call \((\d+) in (\d+) cases\) with -(E[A-Z0-9]+)")


def from_line(text: str | None) -> tuple[RootCause, ...]:
    """The causes of a runner's own root-cause line, for results files written without
    "calls"."""
    return tuple(RootCause(m.group(1), m.group(4), int(m.group(2)), int(m.group(3)))
                 for m in _LINE.finditer(text or ""))


def moot_features(cause: RootCause, claimed: Sequence[str],
                  results: Sequence[CaseResult]) -> list[str]:
    """The claimed features this cause makes moot: each case needing one ran and failed,
    and the cause explains every such failure (none passed). A feature no case needs is
    not judged."""
    moot = []
    for feature in sorted(set(claimed)):
        needing = [r for r in results if feature in r.features
                   and r.raw_status not in ("UNSUPPORTED", "ENV_SKIP")]
        if needing and all(cause.explains(r) for r in needing):
            moot.append(feature)
    return moot
