"""The root cause of a run, from what each entry point answered ("calls" in a results file).

The runner names it for one process; shards of one run are merged here and the line is
recomputed from their summed tallies by the same rule as conformance/framework/tally.c:
an entry point that answered every call (at least MIN_CALLS, in MIN_CASES cases) with one
errno explains the failures that follow from it.
"""
from collections.abc import Iterable
from typing import Any

ENTRIES = ("open", "close", "read", "write", "ioctl", "mmap", "munmap", "poll")
MIN_CALLS = 10
MIN_CASES = 3

Calls = dict[str, dict[str, Any]]  # entry -> {calls, ok, cases, errno, mixed}


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


def line(calls: Calls | None) -> str | None:
    """The root cause line, or None."""
    found = []
    for name in ENTRIES:
        t = (calls or {}).get(name)
        if not t or t.get("ok") or t.get("mixed") or not t.get("errno"):
            continue
        if t.get("calls", 0) < MIN_CALLS or t.get("cases", 0) < MIN_CASES:
            continue
        found.append("%s answered every call (%d in %d cases) with -%s" % (
            name, t["calls"], t["cases"], t["errno"]))
    return "; ".join(found) or None
