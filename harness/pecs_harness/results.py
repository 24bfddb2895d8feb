"""Reading "pecs-results-1" files and turning them into gated runs.

A Run is one implementation as the report shows it: a label ("syscall-unprivileged"), the
results of one or more shards merged, the expectations file re-applied, and the verdict.
"""
import json
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from . import rootcause
from .case_result import CaseResult
from .statuses import STATUSES, counts_ok

# A results file as read: the runner's JSON object.
ResultsData = dict[str, Any]

FORMAT = "pecs-results-1"


class AsWritten:
    """A gate with AS_WRITTEN keeps the statuses and stale lines as the runner wrote them."""


AS_WRITTEN = AsWritten()


class ResultsError(Exception):
    pass


def read_json(path: str, what: str, hint: str = "") -> Any:
    """A JSON file the harness reads (what: "results"), or ResultsError saying why not."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise ResultsError("%s: cannot read %s: %s" % (path, what, e.strerror))
    except ValueError as e:
        raise ResultsError("%s: not JSON (%s)%s" % (path, e, hint))


def load(path: str) -> ResultsData:
    data = read_json(path, "results", ": was the run cut short?")
    check(data, path)
    return data


def check(data: Any, where: str) -> None:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ResultsError("%s: not a %s results file" % (where, FORMAT))
    for key in ("impl", "host", "results", "counts"):
        if key not in data:
            raise ResultsError("%s: results file lacks '%s'" % (where, key))
    for r in data["results"]:
        if r.get("status") not in STATUSES or not r.get("id"):
            raise ResultsError("%s: bad result entry %r" % (where, r))


def merge_shards(parts: list[ResultsData], where: str = "results") -> ResultsData:
    """One results dict from the shards of a single run (same impl, disjoint cases)."""
    if not parts:
        raise ResultsError("%s: no results to merge" % where)
    first = parts[0]
    merged = dict(first)
    merged["results"] = []
    seen: set[str] = set()
    stale: dict[tuple[int, str], dict[str, Any]] = {}
    for p in parts:
        if p["impl"] != first["impl"]:
            raise ResultsError("%s: shards of different implementations (%s, %s)" %
                               (where, first["impl"], p["impl"]))
        for r in p["results"]:
            if r["id"] in seen:
                raise ResultsError("%s: case %s appears in two shards" % (where, r["id"]))
            seen.add(r["id"])
            merged["results"].append(r)
        for s in p.get("stale", []):
            stale[(s["line"], s["pattern"])] = s
    merged["results"].sort(key=lambda r: r["id"])
    versions = sorted(set(str(p.get("suite_version", "unknown")) for p in parts))
    merged["suite_version"] = versions[0] if len(versions) == 1 else "mixed: " + ", ".join(versions)
    if any("calls" in p for p in parts):
        merged["calls"] = rootcause.sum_calls(p.get("calls") for p in parts)
        merged["root_cause"] = rootcause.line(merged["calls"])
    merged["stale"] = sorted(stale.values(), key=lambda s: s["line"])
    merged["shard"] = {"index": 0, "total": 1}
    return merged


@dataclass(frozen=True)
class Run:
    """One implementation's run as it came back: what ran, its merged results file (None
    when the run failed) and the expectations file its gate is to apply."""
    label: str
    kind: str          # ref, syscall, syscall-unprivileged, plugin, pipe, import, vm
    source: str        # what was run, for the reader
    data: ResultsData | None = None
    error: str | None = None                           # why there are no results
    want_expectations: "str | AsWritten | None" = None
    partial: bool = False  # a filter chose the cases: the floor cannot be judged

    @property
    def results(self) -> list[CaseResult]:
        """The cases as the runner wrote them, before the harness's gate."""
        return [CaseResult.from_json(r) for r in self.data["results"]] if self.data else []

    @property
    def host(self) -> dict[str, Any]:
        return self.data["host"] if self.data else {}

    @property
    def suite_version(self) -> str:
        """The version of the runner that wrote the results ("unknown" for older files)."""
        return str(self.data.get("suite_version", "unknown")) if self.data else "unknown"

    @property
    def root_causes(self) -> tuple[rootcause.RootCause, ...]:
        """The entry points that answered every call with one errno."""
        if not self.data:
            return ()
        if "calls" in self.data:
            return rootcause.causes(self.data["calls"])
        return rootcause.from_line(self.data.get("root_cause"))

    @property
    def root_cause(self) -> str | None:
        """The root causes as one line."""
        if self.data and "calls" not in self.data:
            return self.data.get("root_cause")
        return "; ".join(c.text for c in self.root_causes) or None

    @property
    def assumed(self) -> list[str]:
        """The host facts the runner guessed or could not learn, with why."""
        src = self.data.get("host_sources", {}) if self.data else {}
        return ["%s %s: %s" % (k, self.host.get(k, "?"), v) for k, v in src.items()
                if str(v).startswith(("assumed", "unknown"))]

    @property
    def refusal(self) -> str | None:
        """The implementation's refusal of the whole call where the host facts allow it."""
        if not self.data:
            return None
        if "refusal" in self.data:
            return self.data["refusal"]
        h = self.host
        if h.get("unavailable") and (h.get("privileged") or int(h.get("paranoid", 0)) < 3):
            return str(h["unavailable"])
        return None


@dataclass(frozen=True)
class ProblemGroup:
    """Gating problems that share a root cause or a check site, said once with its advice."""
    title: str | None            # None: problems of the run as a whole
    advice: str | None
    problems: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "advice": self.advice, "problems": list(self.problems)}


@dataclass(frozen=True)
class GatedRun:
    """A run after its gate: the statuses the expectations file made of the raw ones, and
    every problem that fails the gate."""
    run: Run
    expectations: str | None           # the file applied, as the report names it
    results: tuple[CaseResult, ...]
    counts: dict[str, int]
    stale: tuple[str, ...] = ()          # expectations lines matching no case: messages
    expectation_errors: tuple[str, ...] = ()  # bad lines of the file: the gate fails
    gate_problems: tuple[str, ...] = ()  # the run as a whole: floor, features, refusal, drafts
    warnings: tuple[str, ...] = ()       # said, not failed: 'draft:' reasons without --strict
    problems: tuple[str, ...] = ()       # every gating message, one a line
    groups: tuple[ProblemGroup, ...] = ()  # the same, under their root cause or check site
    accepted: dict[str, str] = field(default_factory=dict)  # root cause entry -> file:line

    @property
    def label(self) -> str:
        return self.run.label

    @property
    def data(self) -> ResultsData | None:
        return self.run.data

    @property
    def error(self) -> str | None:
        return self.run.error

    @property
    def host(self) -> dict[str, Any]:
        return self.run.host

    @property
    def root_cause(self) -> str | None:
        return self.run.root_cause

    @property
    def ok(self) -> bool:
        return (self.run.error is None and not self.expectation_errors
                and not self.gate_problems and counts_ok(self.counts)
                and not (self.run.data or {}).get("incomplete"))

    def to_json(self) -> dict[str, Any]:
        r = self.run
        return {
            "label": r.label,
            "kind": r.kind,
            "source": r.source,
            "impl": r.data["impl"] if r.data else None,
            "suite_version": r.suite_version,
            "root_cause": r.root_cause,
            "host_sources": r.data.get("host_sources", {}) if r.data else {},
            "assumed": r.assumed,
            "features": r.data.get("features", []) if r.data else [],
            "host": r.host,
            "expectations": self.expectations,
            "counts": self.counts,
            "ok": self.ok,
            "error": r.error,
            "problems": list(self.problems),
            "problem_groups": [g.to_json() for g in self.groups],
            "warnings": list(self.warnings),
            # Where each case that gave a verdict gave it: the report links its message
            # to that line of the source.
            "locations": {c.id: {"file": c.file, "line": c.line}
                          for c in self.results if c.file},
        }

