"""One case's result as the harness handles it, and the expectations line that gated it.

Results files (pecs-results-1) carry each as a JSON object; from_json reads one and the
report's summary.json writes the fields it shows with asdict, so the formats on disk stay
as the runners and the report readers know them."""
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

# "group_close.c:14: ..." : the check that failed, where a case's message names it.
_SITE = re.compile(r"([\w./-]+\.[ch]:\d+):")


def check_site(message: str | None) -> str | None:
    """The file:line of the check a failure message starts with, or None."""
    m = _SITE.match(message or "")
    return m.group(1) if m else None


def shared_sites(items: Iterable[T], message: Callable[[T], str | None]) -> dict[str, list[T]]:
    """The check sites two or more items fail at, with those items, in first-seen order:
    the gate, the draft and the diff each list such failures once under their site."""
    sites: dict[str, list[T]] = {}
    for item in items:
        site = check_site(message(item))
        if site:
            sites.setdefault(site, []).append(item)
    return {site: group for site, group in sites.items() if len(group) > 1}


@dataclass
class Expectation:
    """The expectations line that matched a case: where it is and why the case fails."""
    file: str
    line: int
    reason: str


@dataclass
class CaseResult:
    id: str
    status: str            # after the expectations file: XFAIL, XPASS, ...
    raw_status: str        # as the case ended, before any expectations file
    message: str = ""
    features: list[str] = field(default_factory=list)
    behaviours: list[str] = field(default_factory=list)
    expectation: Expectation | None = None
    duration_ms: float | None = None
    # Where the case gave its verdict, from the top of pecs' tree ("" and 0: not known).
    file: str = ""
    line: int = 0
    # entry point -> errno name of the calls that failed in this case, as the runner
    # tallied them; None from runners that do not write it (rootcause.RootCause.explains).
    failed_calls: dict[str, str] | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "CaseResult":
        """A result entry of a results file (already checked by results.check)."""
        exp = d.get("expectation")
        return cls(id=d["id"], status=d["status"], raw_status=d.get("raw_status") or d["status"],
                   message=d.get("message") or "", features=list(d.get("features", [])),
                   behaviours=list(d.get("behaviours", [])),
                   expectation=Expectation(exp["file"], exp["line"], exp["reason"])
                   if exp else None,
                   duration_ms=d.get("duration_ms"),
                   file=str(d.get("file") or ""), line=int(d.get("line") or 0),
                   failed_calls=dict(d["failed_calls"]) if "failed_calls" in d else None)
