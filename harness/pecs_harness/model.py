"""What every report shows, computed once: the matrix of behaviour areas by implementation,
the gating verdicts, each run's root causes (the cases each explains, the claimed features
it makes moot) and the behaviour coverage. summary.json is this model as JSON, and every
view (report_md, report_html, junit, the console) renders that JSON."""
import dataclasses
import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import rootcause
from .results import GatedRun
from .statuses import COUNT_KEYS, empty_counts

SummaryJson = dict[str, Any]  # summary.json as written


@dataclass(frozen=True)
class Summary:
    """The model of one report."""
    suite_version: str
    generated: str
    implementations: tuple[dict[str, Any], ...]
    areas: dict[str, dict[str, Any]]
    cases: dict[str, dict[str, Any]]
    coverage: dict[str, Any]
    ok: bool

    def to_json(self) -> SummaryJson:
        return {
            "format": SUMMARY_FORMAT,
            # The checkout that gated and rendered; each implementation has its runner's too.
            "suite_version": self.suite_version,
            "generated": self.generated,
            "implementations": list(self.implementations),
            "areas": self.areas,
            "cases": self.cases,
            "coverage": self.coverage,
            "ok": self.ok,
        }

SUMMARY_FORMAT = "pecs-summary-1"


def area_of(case_id: str) -> str:
    """Behaviour area of a case: its second and third id components (Read.Group)."""
    parts = case_id.split(".")
    return ".".join(parts[1:3]) if len(parts) > 1 else case_id


def _shorter(text: str | None, root: str | None) -> str | None:
    """Paths under the checkout, as the reader would type them from its top."""
    if root and text:
        return text.replace(root.rstrip("/") + "/", "")
    return text


def build(runs: Sequence[GatedRun], catalogue: list[dict[str, str]] | None,
          catalogue_path: str | None = None, now: datetime.datetime | None = None,
          root: str | None = None, suite_version: str | None = None) -> Summary:
    labels = [r.label for r in runs]
    areas: dict[str, dict[str, Any]] = {}
    cases: dict[str, dict[str, Any]] = {}
    for run in runs:
        for res in run.results:
            area = areas.setdefault(area_of(res.id), {})
            cell = area.setdefault(run.label, {"counts": empty_counts(), "cases": []})
            cell["counts"][COUNT_KEYS[res.status]] += 1
            cell["cases"].append(res.id)
            entry = cases.setdefault(res.id, {"area": area_of(res.id),
                                              "behaviours": res.behaviours,
                                              "features": res.features,
                                              "results": {}})
            entry["results"][run.label] = {
                "status": res.status, "raw_status": res.raw_status, "message": res.message,
                "expectation": dataclasses.asdict(res.expectation) if res.expectation else None}
    for area in areas.values():
        for label in labels:
            area.setdefault(label, {"counts": empty_counts(), "cases": []})
    return Summary(
        suite_version=suite_version or "unknown",
        generated=(now or datetime.datetime.now(datetime.timezone.utc)).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        implementations=tuple(_implementation(r, root) for r in runs),
        areas={a: areas[a] for a in sorted(areas)},
        cases={c: cases[c] for c in sorted(cases)},
        coverage=coverage(catalogue, cases, catalogue_path),
        ok=all(r.ok for r in runs))


def root_causes(run: GatedRun, root: str | None = None) -> list[dict[str, Any]]:
    """Each root cause of the run with the failing cases it explains, the claimed features
    it makes moot, and the @root-cause line that accepts it (None when none does)."""
    raw = run.run.results
    out = []
    for cause in run.run.root_causes:
        c = {"entry": cause.entry, "errno": cause.errno, "calls": cause.calls,
             "cases": cause.cases, "text": cause.text,
             "explains": [r.id for r in raw if cause.explains(r)],
             "moot_features": rootcause.moot_features(
                 cause, run.data.get("features", []) if run.data else [], raw),
             "accepted": _shorter(run.accepted.get(cause.entry), root)}
        c["line"] = _cause_line(c)
        out.append(c)
    return out


def _cause_line(cause: dict[str, Any]) -> str:
    """The sentence every view prints: what the cause is, what it explains, what it moots."""
    text = cause["text"]
    if cause["explains"]:
        text += "; explains %d failing case(s)" % len(cause["explains"])
    if cause["moot_features"]:
        text += "; makes the claimed feature(s) %s moot" % ", ".join(cause["moot_features"])
    if cause["accepted"]:
        text += "; accepted by %s" % cause["accepted"]
    else:
        text += "; say so once with '@root-cause %s %s # why' in the expectations file" % (
            cause["entry"], cause["errno"])
    return text


def _implementation(run: GatedRun, root: str | None) -> dict[str, Any]:
    j = run.to_json()
    for key in ("source", "expectations", "error"):
        j[key] = _shorter(j[key], root)
    j["problems"] = [_shorter(p, root) for p in j["problems"]]
    j["warnings"] = [_shorter(p, root) for p in j["warnings"]]
    for g in j["problem_groups"]:
        g["advice"] = _shorter(g["advice"], root)
        g["problems"] = [_shorter(p, root) for p in g["problems"]]
        # What every view heads the group with: "root cause: ... (12): advice".
        g["heading"] = g["title"] and "%s (%d)%s" % (
            g["title"], len(g["problems"]), ": " + g["advice"] if g["advice"] else "")
    j["root_causes"] = root_causes(run, root)
    return j


def coverage(catalogue: list[dict[str, str]] | None, cases: dict[str, dict[str, Any]],
             path: str | None) -> dict[str, Any]:
    by_behaviour: dict[str, list[str]] = {}
    for cid, c in cases.items():
        for b in c["behaviours"]:
            by_behaviour.setdefault(b, []).append(cid)
    if catalogue is None:
        return {"catalogue": path, "found": False, "behaviours": [], "no_case": [],
                "no_vector": [], "unknown": sorted(by_behaviour)}
    from .behaviours import has_vectors
    rows: list[dict[str, Any]] = []
    known = set()
    for row in catalogue:
        known.add(row["id"])
        rows.append({"id": row["id"], "behaviour": row.get("behaviour", ""),
                     "source": row.get("source", ""), "vectors": row.get("vectors", ""),
                     "cases": sorted(by_behaviour.get(row["id"], [])),
                     "has_vector": has_vectors(row)})
    return {
        "catalogue": path,
        "found": True,
        "behaviours": rows,
        "no_case": [r["id"] for r in rows if not r["cases"]],
        "no_vector": [r["id"] for r in rows if not r["has_vector"]],
        # Ids the cases name that the catalogue lacks: a typo or a missing row.
        "unknown": sorted(b for b in by_behaviour if b not in known),
    }
