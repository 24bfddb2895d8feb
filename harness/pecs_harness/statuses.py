"""The verdict names of the results format and the order the report shows them in."""
from collections.abc import Iterable

from .case_result import CaseResult

# Status name as the runners write it -> key of the "counts" object.
COUNT_KEYS = {
    "PASS": "passed",
    "FAIL": "failed",
    "XFAIL": "xfail",
    "XPASS": "xpass",
    "UNSUPPORTED": "unsupported",
    "ENV_SKIP": "env_skipped",
    "BROKEN": "broken",
    "CRASH": "crashed",
}
STATUSES = tuple(COUNT_KEYS)
COUNT_ORDER = tuple(COUNT_KEYS.values()) + ("stale",)
# A run passes when none of these occurs (and no expectations line is stale).
BAD = frozenset({"FAIL", "XPASS", "BROKEN", "CRASH"})
# What failing means before the expectations file is applied.
RAW_FAILURES = frozenset({"FAIL", "BROKEN", "CRASH"})


def empty_counts() -> dict[str, int]:
    return {k: 0 for k in COUNT_ORDER}


def count(results: Iterable[CaseResult]) -> dict[str, int]:
    """counts over results (their status)."""
    c = empty_counts()
    for r in results:
        c[COUNT_KEYS[r.status]] += 1
    return c


def counts_ok(c: dict[str, int]) -> bool:
    return not bool(c["failed"] or c["xpass"] or c["broken"] or c["crashed"] or c["stale"])
