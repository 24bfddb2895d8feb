"""What the driver prints: a line per implementation as its gate closes, then the table of
counts, the root causes with what they explain, and the gating problems under their root
cause or check site. It renders the model's JSON as the reports do."""
import os
from typing import Any

from .execute import Progress
from .results import GatedRun

COLUMNS = [("pass", "passed"), ("fail", "failed"), ("xfail", "xfail"), ("xpass", "xpass"),
           ("unsup", "unsupported"), ("env", "env_skipped"), ("broken", "broken"),
           ("crash", "crashed"), ("stale", "stale")]
# Groups and lines a group shows before "... N more in the report".
MAX_GROUPS = 10
MAX_LINES = 5


def counts_line(c: dict[str, int]) -> str:
    parts = ["%d %s" % (c[k], k) for k in ("passed", "failed", "xfail", "xpass", "unsupported",
                                           "env_skipped", "broken", "crashed", "stale") if c[k]]
    return ", ".join(parts) or "no cases"


def gated(run: GatedRun, progress: Progress) -> None:
    """The line of one implementation as its gate closes; its root cause first."""
    if run.root_cause:
        progress.say("  %s: root cause: %s" % (run.label, run.root_cause))
    progress.say("  %s: %s: %s" % (run.label, counts_line(run.counts),
                                   "ok" if run.ok else "FAIL"))


def print_summary(summary: dict[str, Any], out: str) -> None:
    width = max([len(i["label"]) for i in summary["implementations"]] + [14])
    print()
    print("%-*s " % (width, "implementation") + " ".join("%6s" % c for c, _ in COLUMNS) +
          "  gate")
    for i in summary["implementations"]:
        print("%-*s " % (width, i["label"]) + " ".join("%6d" % i["counts"][k]
                                                       for _, k in COLUMNS) +
              "  " + ("ok" if i["ok"] else "FAIL"))
    for i in summary["implementations"]:
        for cause in i.get("root_causes", []):
            print("  %s: root cause: %s" % (i["label"], cause["line"]))
        for a in i.get("assumed", []):
            print("  %s: assumed host fact: %s" % (i["label"], a))
        for w in i.get("warnings", []):
            print("  %s: warning: %s" % (i["label"], w))
    for i in summary["implementations"]:
        _problems(i)
    cov = summary["coverage"]
    if cov["found"]:
        print("coverage: %d behaviours, %d without a case, %d without a vector" % (
            len(cov["behaviours"]), len(cov["no_case"]), len(cov["no_vector"])))
    print("report: %s (also report.md, summary.json, junit.xml)  suite %s  verdict: %s" % (
        os.path.join(out, "report.html"), summary.get("suite_version", "unknown"),
        "PASS" if summary["ok"] else "FAIL"))


def _problems(impl: dict[str, Any]) -> None:
    label = impl["label"]
    groups = impl.get("problem_groups", [])
    for g in groups[:MAX_GROUPS]:
        lines = g["problems"]
        if g["title"] is None:
            for p in lines:
                print("  %s: %s" % (label, p))
            continue
        print("  %s: %s" % (label, g["heading"]))
        for p in lines[:MAX_LINES]:
            print("    %s" % p)
        if len(lines) > MAX_LINES:
            print("    ... %d more in the report" % (len(lines) - MAX_LINES))
    if len(groups) > MAX_GROUPS:
        print("  %s: ... %d more group(s) in the report" % (label, len(groups) - MAX_GROUPS))
