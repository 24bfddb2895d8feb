"""report.md: the report as Markdown, for CI logs and code review."""
from collections.abc import Callable
from typing import Any

from . import report_versions
from .statuses import COUNT_ORDER

SHORT = [("passed", "pass"), ("failed", "fail"), ("xfail", "xfail"), ("xpass", "xpass"),
         ("unsupported", "unsup"), ("env_skipped", "env-skip"), ("broken", "broken"),
         ("crashed", "crash")]


# privileged as the report writes it; the host facts may lack it.
_YES_NO: dict[Any, str] = {True: "yes", False: "no"}


def esc(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def cell_text(counts: dict[str, int]) -> str:
    parts = ["%d %s" % (counts[k], name) for k, name in SHORT if counts[k]]
    return ", ".join(parts) if parts else "-"


def _versions_and_causes(s: dict[str, Any], w: Callable[[str], None]) -> None:
    """What ran, and the one fact behind many failures, before any table."""
    w("Suite %s (checkout); runners: %s.\n" % (esc(s.get("suite_version", "unknown")), esc(
        ", ".join("%s %s" % (i["label"], i.get("suite_version", "unknown"))
                  for i in s["implementations"]))))
    causes = [(i["label"], c["line"]) for i in s["implementations"]
              for c in i.get("root_causes", [])]
    if causes:
        w("## Root causes\n")
        for label, cause in causes:
            w("- **%s**: %s" % (esc(label), esc(cause)))
        w("")
    assumed = [(i["label"], a) for i in s["implementations"] for a in i.get("assumed", [])]
    if assumed:
        w("## Assumed host facts\n")
        w("Guessed or not learned from the implementation; conditions on them judge a guess.\n")
        for label, a in assumed:
            w("- **%s**: %s" % (esc(label), esc(a)))
        w("")


def _problem_groups(impl: dict[str, Any], w: Callable[[str], None]) -> None:
    """One implementation's problems under the root cause or check site they share."""
    for g in impl["problem_groups"]:
        if g["heading"] is None:
            for p in g["problems"]:
                w("- **%s**: %s" % (esc(impl["label"]), esc(p)))
            continue
        w("- **%s**: %s" % (esc(impl["label"]), esc(g["heading"])))
        for p in g["problems"]:
            w("  - %s" % esc(p))


def render(s: dict[str, Any]) -> str:
    out: list[str] = []
    w = out.append
    w("# pecs conformance report\n")
    w("Generated %s. Verdict: **%s**.\n" % (s["generated"], "PASS" if s["ok"] else "FAIL"))
    _versions_and_causes(s, w)
    w("## Implementations\n")
    w("| implementation | what ran | kernel | privileged | expectations | " +
      " | ".join(COUNT_ORDER) + " | gate |")
    w("|---" * (6 + len(COUNT_ORDER)) + "|")
    for impl in s["implementations"]:
        h = impl["host"] or {}
        w("| %s | %s | %s | %s | %s | %s | %s |" % (
            esc(impl["label"]), esc(impl["source"]), esc(h.get("kernel_release", "-")),
            _YES_NO.get(h.get("privileged"), "-"),
            esc(impl["expectations"] or "-"),
            " | ".join(str(impl["counts"][k]) for k in COUNT_ORDER),
            "ok" if impl["ok"] else "**FAIL**"))
    w("")
    if any(i["problems"] for i in s["implementations"]):
        w("## Gating problems\n")
        for i in s["implementations"]:
            _problem_groups(i, w)
        w("")
    labels = [i["label"] for i in s["implementations"]]
    w("## Behaviour areas\n")
    w("| area | " + " | ".join(esc(l) for l in labels) + " |")
    w("|---" * (1 + len(labels)) + "|")
    for area, cells in s["areas"].items():
        w("| %s | %s |" % (esc(area), " | ".join(cell_text(cells[l]["counts"]) for l in labels)))
    w("")
    w("## Cases that did not pass\n")
    w("UNSUPPORTED cases (a feature not claimed) are listed in report.html only. Each status "
      "says what kind of difference it is: a version difference, a kernel bug fixed later, "
      "or a divergence (report_versions.py).\n")
    any_row = False
    for cid, c in s["cases"].items():
        for label in labels:
            r = c["results"].get(label)
            if not r or r["status"] in ("PASS", "UNSUPPORTED"):
                continue
            if not any_row:
                w("| case | implementation | status | message | behaviours |")
                w("|---|---|---|---|---|")
                any_row = True
            msg = r["message"]
            if r["expectation"]:
                msg = "%s (expected: %s)" % (msg, r["expectation"]["reason"]) if msg else \
                    "expected: " + r["expectation"]["reason"]
            w("| %s | %s | %s | %s | %s |" % (esc(cid), esc(label), report_versions.label(r),
                                              esc(msg),
                                              esc(", ".join(c["behaviours"]))))
    if not any_row:
        w("Every case passed everywhere.")
    w("")
    cov = s["coverage"]
    w("## Coverage\n")
    if not cov["found"]:
        w("The behaviours catalogue (%s) was not found: no coverage view.\n" % esc(cov["catalogue"]))
    else:
        w("%d behaviours in %s; %d without a case, %d without a vector.\n" % (
            len(cov["behaviours"]), esc(cov["catalogue"]), len(cov["no_case"]), len(cov["no_vector"])))
        rows = {r["id"]: r for r in cov["behaviours"]}
        for title, key in (("Behaviours with no case", "no_case"),
                           ("Behaviours with no vector", "no_vector")):
            w("### %s\n" % title)
            if not cov[key]:
                w("None.\n")
                continue
            for b in cov[key]:
                w("- `%s` %s" % (b, esc(rows[b]["behaviour"])))
            w("")
    if cov["unknown"]:
        w("### Behaviour ids named by cases but missing from the catalogue\n")
        w(", ".join("`%s`" % b for b in cov["unknown"]) + "\n")
    return "\n".join(out) + "\n"
