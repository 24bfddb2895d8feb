"""pecs_harness diff A B: what changed between two runs of one implementation.

A and B are results files (pecs-results-1, shards as FILE,FILE) or summary.json files
(pecs-summary-1; --label picks the implementation when there are several). The diff is
over the statuses as the files hold them: raw_status says what the implementation did,
status what its gate made of it.

  regression   passed in A; fails, breaks or crashes in B (its raw status)
  fix          failed, broke or crashed in A; passes in B
  not run      ran in A (passed or failed); in B unsupported, env-skipped or missing
  xfail moved  XFAIL in both, with another message: the known failure changed shape
  new          only in B (a case added to the suite), failing there

Cases that fail at one check site in B (the file:line their messages start with) are
listed under it, with one message, rather than each with its own.

Exit status: 1 when there is a regression or a case no longer runs, 0 otherwise, 2 when
the files cannot be read or are of different implementations.
"""
import json
import sys
from dataclasses import dataclass, field
from typing import Any

from . import results as results_mod
from .case_result import shared_sites
from .statuses import RAW_FAILURES

SKIPS = frozenset({"UNSUPPORTED", "ENV_SKIP"})


class DiffError(Exception):
    pass


@dataclass
class Side:
    """One run as the diff sees it."""
    where: str
    impl: str
    version: str
    cases: dict[str, dict[str, Any]]  # id -> {status, raw_status, message}


def _from_summary(doc: dict[str, Any], where: str, label: str | None) -> Side:
    impls = doc.get("implementations", [])
    labels = [i["label"] for i in impls]
    if label is None:
        if len(labels) != 1:
            raise DiffError("%s holds %d implementations (%s): name one with --label" % (
                where, len(labels), ", ".join(labels)))
        label = labels[0]
    if label not in labels:
        raise DiffError("%s has no implementation '%s' (it has %s)" % (
            where, label, ", ".join(labels) or "none"))
    impl = impls[labels.index(label)]
    cases = {cid: c["results"][label] for cid, c in doc.get("cases", {}).items()
             if label in c.get("results", {})}
    return Side(where, str(impl.get("impl") or label), str(impl.get("suite_version", "unknown")),
                cases)


def load(spec: str, label: str | None) -> Side:
    paths = [p for p in spec.split(",") if p]
    if not paths:
        raise DiffError("no file given")
    try:
        with open(paths[0], encoding="utf-8") as f:
            first = json.load(f)
    except OSError as e:
        raise DiffError("%s: %s" % (paths[0], e.strerror))
    except ValueError as e:
        raise DiffError("%s: not JSON (%s)" % (paths[0], e))
    if isinstance(first, dict) and first.get("format") == "pecs-summary-1":
        if len(paths) > 1:
            raise DiffError("%s: a summary is one file, not shards" % spec)
        return _from_summary(first, spec, label)
    try:
        data = results_mod.merge_shards([results_mod.load(p) for p in paths], spec)
    except results_mod.ResultsError as e:
        raise DiffError(str(e))
    cases = {r["id"]: {"status": r["status"], "raw_status": r.get("raw_status") or r["status"],
                       "message": r.get("message") or ""} for r in data["results"]}
    return Side(spec, str(data["impl"]), str(data.get("suite_version", "unknown")), cases)


@dataclass
class Diff:
    regressions: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    not_run: list[str] = field(default_factory=list)
    xfail_moved: list[str] = field(default_factory=list)
    new_failing: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.regressions and not self.not_run


def compare(a: Side, b: Side) -> Diff:
    d = Diff()
    for cid in sorted(set(a.cases) | set(b.cases)):
        ra, rb = a.cases.get(cid), b.cases.get(cid)
        if rb is None:
            if ra is not None and ra["raw_status"] not in SKIPS:
                d.not_run.append(cid)
            continue
        if ra is None:
            if rb["raw_status"] in RAW_FAILURES:
                d.new_failing.append(cid)
            continue
        was, now = ra["raw_status"], rb["raw_status"]
        if was == "PASS" and now in RAW_FAILURES:
            d.regressions.append(cid)
        elif was in RAW_FAILURES and now == "PASS":
            d.fixes.append(cid)
        elif was not in SKIPS and now in SKIPS:
            d.not_run.append(cid)
        elif ra["status"] == "XFAIL" and rb["status"] == "XFAIL" and \
                ra["message"] != rb["message"]:
            d.xfail_moved.append(cid)
    return d


def _by_site(side: Side, ids: list[str]) -> list[tuple[str, list[str]]]:
    """The check sites two or more of ids fail at in side, with their cases."""
    return list(shared_sites(ids, lambda cid: (side.cases.get(cid) or {}).get("message")
                             ).items())


def describe(a: Side, b: Side, d: Diff) -> list[str]:
    out = ["diff: %s (%s, suite %s) -> %s (%s, suite %s)" % (
        a.where, a.impl, a.version, b.where, b.impl, b.version)]

    def msg(side: Side, cid: str) -> str:
        r = side.cases.get(cid)
        return "%s: %s" % (r["raw_status"], r["message"] or "no message") if r else "missing"

    for title, ids, show in (("regression", d.regressions, True), ("not run", d.not_run, True),
                             ("fix", d.fixes, False), ("new failing", d.new_failing, True)):
        for site, group in _by_site(b, ids if show else []):
            # Cases failing at one check site: the site and one message, then the ids.
            out.append("  %-11s %d case(s) at %s" % (title + ":", len(group), site))
            out.append("              now %s" % msg(b, group[0]))
            out.extend("                %s" % cid for cid in group)
        grouped = {cid for _, g in _by_site(b, ids if show else []) for cid in g}
        for cid in ids:
            if cid in grouped:
                continue
            out.append("  %-11s %s" % (title + ":", cid))
            if show:
                out.append("              was %s" % msg(a, cid))
                out.append("              now %s" % msg(b, cid))
    for cid in d.xfail_moved:
        out.append("  xfail moved: %s" % cid)
        out.append("              was %s" % a.cases[cid]["message"])
        out.append("              now %s" % b.cases[cid]["message"])
    out.append("diff: %d regression(s), %d no longer run, %d fix(es), %d XFAIL message(s) "
               "changed, %d new case(s) failing: %s" % (
                   len(d.regressions), len(d.not_run), len(d.fixes), len(d.xfail_moved),
                   len(d.new_failing), "PASS" if d.ok else "FAIL"))
    return out


def main(a_spec: str, b_spec: str, label: str | None, force: bool) -> int:
    try:
        a, b = load(a_spec, label), load(b_spec, label)
    except DiffError as e:
        print("pecs_harness diff: %s" % e, file=sys.stderr)
        return 2
    if a.impl != b.impl and not force:
        print("pecs_harness diff: %s is %s and %s is %s: a diff compares runs of one "
              "implementation (--force to compare anyway)" % (a.where, a.impl, b.where, b.impl),
              file=sys.stderr)
        return 2
    d = compare(a, b)
    for text in describe(a, b, d):
        print(text)
    return 0 if d.ok else 1
