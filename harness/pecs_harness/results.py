"""Reading "pecs-results-1" files and turning them into gated runs.

A Run is one implementation as the report shows it: a label ("syscall-unprivileged"), the
results of one or more shards merged, the expectations file re-applied, and the verdict.
"""
import json
from collections.abc import Collection
from typing import Any

from . import expectations as expect_mod
from . import rootcause
from .case_result import CaseResult
from .statuses import STATUSES, count, counts_ok

# A results file as read: the runner's JSON object.
ResultsData = dict[str, Any]

FORMAT = "pecs-results-1"


class _AsWritten:
    """gate() with AS_WRITTEN keeps the statuses and stale lines as the runner wrote them."""


AS_WRITTEN = _AsWritten()


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


class Run:
    """One implementation in the report."""

    def __init__(self, label: str, kind: str, source: str, data: ResultsData | None = None,
                 error: str | None = None) -> None:
        self.label = label
        self.kind = kind          # ref, syscall, syscall-unprivileged, plugin, pipe, import
        self.source = source      # what was run, for the reader
        self.data = data          # the merged results file, or None when the run failed
        self.error = error        # why there are no results
        self.expectations: str | None = None  # path applied by the harness
        self.results = [CaseResult.from_json(r) for r in data["results"]] if data else []
        self.stale: list[str] = []     # expectations lines matching no case: messages
        self.problems: list[str] = []  # gating messages: XPASS, new failures, stale lines
        self.counts = count(self.results)
        self.expectation_errors: list[str] = []  # bad lines of the expectations file: the gate fails
        # Set by the driver: the file gate() applies, and whether it has run yet.
        self.want_expectations: str | _AsWritten | None = None
        self.gated = False
        self.partial = False  # a filter chose the cases: the floor cannot be judged
        self.gate_problems: list[str] = []  # the run as a whole: floor, features, refusal

    @property
    def host(self) -> dict[str, Any]:
        return self.data["host"] if self.data else {}

    @property
    def suite_version(self) -> str:
        """The version of the runner that wrote the results ("unknown" for older files)."""
        return str(self.data.get("suite_version", "unknown")) if self.data else "unknown"

    @property
    def root_cause(self) -> str | None:
        """One line naming the entry point that answered every call with one errno."""
        if not self.data:
            return None
        if "calls" in self.data:
            return rootcause.line(self.data["calls"])
        return self.data.get("root_cause")

    @property
    def ok(self) -> bool:
        return (self.error is None and not self.expectation_errors and not self.gate_problems
                and counts_ok(self.counts) and not (self.data or {}).get("incomplete"))

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

    def _gate_directives(self, d: expect_mod.Directives) -> list[str]:
        out = []
        where = d.path or "its expectations file"
        if d.floor_line and not self.partial and self.counts["passed"] < d.floor:
            out.append("%d passed, below the floor of %d in %s:%d: a regression, or lower the "
                       "floor there with the reason" % (self.counts["passed"], d.floor, d.path,
                                                        d.floor_line))
        mine = sorted(set(self.data.get("features", []))) if self.data else []
        if d.features is not None and self.data is not None and mine != d.features:
            added = sorted(set(mine) - set(d.features))
            dropped = sorted(set(d.features) - set(mine))
            out.append("the claimed features changed from %s:%d (%s%s): if that is meant, "
                       "write '@features %s # why' there" % (
                           d.path, d.features_line,
                           " ".join("+" + f for f in added),
                           (" " if added and dropped else "") + " ".join("-" + f for f in dropped),
                           ",".join(mine) or "-"))
        if self.refusal and not d.accept_refusal_line:
            out.append("%s; the host facts allow the call (privileged %s, perf_event_paranoid "
                       "%s), so the implementation refused it and its %d ENV_SKIPs are not the "
                       "host's: fix it, or accept it with '@accept-refusal # why' in %s" % (
                           self.refusal, "yes" if self.host.get("privileged") else "no",
                           self.host.get("paranoid", "?"), self.counts["env_skipped"], where))
        return out

    def gate(self, expectations_path: str | _AsWritten | None,
             all_case_ids: Collection[str]) -> bool:
        """Re-applies the expectations file to the raw statuses and collects the gating
        messages. all_case_ids: every case of the suite, for stale lines."""
        if isinstance(expectations_path, _AsWritten):
            assert self.data is not None  # only imported results are kept as written
            self.expectations = "%s (as applied by the runner)" % self.data["expectations"]
            self.stale = ["%s:%d: '%s' matches no case in this suite" % (
                self.data["expectations"], s["line"], s["pattern"])
                for s in self.data.get("stale", [])]
            self.expectation_errors = list(self.data.get("expectation_errors", []))
        else:
            lines: list[expect_mod.Line] = []
            self.expectation_errors = []
            directives = expect_mod.Directives()
            if expectations_path:
                directives, errors = expect_mod.load_directives(expectations_path)
                # A bad line costs only the gate: the good lines still apply, and every
                # result stays in the report.
                lines, self.expectation_errors = expect_mod.load_all(expectations_path)
                self.expectation_errors += errors
                self.expectations = expectations_path
            if self.data is not None:
                self.results = [expect_mod.apply(lines, self.host, r) for r in self.results]
            self.stale = [expect_mod.stale_message(l)
                          for l in expect_mod.stale(lines, all_case_ids)]
        self.counts = count(self.results)
        self.counts["stale"] = len(self.stale)
        if isinstance(expectations_path, _AsWritten):
            self.gate_problems = list(self.data.get("gate_problems", [])) if self.data else []
        else:
            self.gate_problems = self._gate_directives(directives)
        self.problems = []
        if self.error:
            self.problems.append(self.error)
        short = self.data.get("incomplete") if self.data else None
        if short:
            self.problems.append("the run stopped after %d of %d cases (the runner died or was "
                                 "killed): the results hold only those" % (
                                     short["done"], short["selected"]))
        self.problems.extend("expectations: " + e for e in self.expectation_errors)
        self.problems.extend("gate: " + p for p in self.gate_problems)
        for r in self.results:
            if r.status == "XPASS":
                self.problems.append("XPASS %s: %s" % (r.id, r.message))
            elif r.status in ("FAIL", "BROKEN", "CRASH"):
                self.problems.append("%s %s: %s (%s)" % (
                    r.status, r.id, r.message or "no message", self._advice()))
        self.problems.extend("stale: " + s for s in self.stale)
        return self.ok

    def _advice(self) -> str:
        if self.expectations:
            return "not in %s: fix it or list it with a reason" % self.expectations
        return ("no expectations file for %s: fix it, or draft one with `pecs_harness "
                "expectations` and give each line a reason" % self.label)

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "kind": self.kind,
            "source": self.source,
            "impl": self.data["impl"] if self.data else None,
            "suite_version": self.suite_version,
            "root_cause": self.root_cause,
            "host_sources": self.data.get("host_sources", {}) if self.data else {},
            "assumed": self.assumed,
            "features": self.data.get("features", []) if self.data else [],
            "host": self.host,
            "expectations": self.expectations,
            "counts": self.counts,
            "ok": self.ok,
            "error": self.error,
            "problems": self.problems,
            # Where each case that gave a verdict gave it: the report links its message
            # to that line of the source.
            "locations": {r.id: {"file": r.file, "line": r.line}
                          for r in self.results if r.file},
        }
