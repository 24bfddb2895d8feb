"""report.html: one self-contained page (inline CSS and JS, no network).

Its first screen is the verdicts: one compact row per implementation with its gate and
counts, failures first; what ran, paths and versions sit behind a disclosure. Then what
changed since an earlier run (report --baseline OLD), the gating problems, the matrix of
behaviour areas by implementation (each cell counts its cases as data-* attributes, which
the tests read back, and opens the results view filtered to it), the results view
(report_view) and the coverage view."""
import html
import urllib.parse
from collections.abc import Callable
from typing import Any

from . import clients_report, report_view, results
from .report_assets import CSS, JS
from .statuses import BAD, COUNT_ORDER

LETTERS = [("passed", "pass"), ("failed", "fail"), ("xfail", "xfail"), ("xpass", "xpass"),
           ("unsupported", "unsup"), ("env_skipped", "env"), ("broken", "broken"),
           ("crashed", "crash")]
# The verdict rows' column heads, for COUNT_ORDER.
SHORT = dict(LETTERS + [("stale", "stale")])
# A list of gating problems this long starts folded.
FOLD_PROBLEMS = 12

# privileged as the report writes it; the host facts may lack it.
_YES_NO: dict[Any, str] = {True: "yes", False: "no"}


# Appends one piece of the page.
_Write = Callable[[str], None]


class BaselineError(Exception):
    pass


def load_baseline(path: str) -> dict[str, Any]:
    """An earlier run's summary.json, for report --baseline."""
    try:
        old = results.read_json(path, "the baseline")
    except results.ResultsError as err:
        raise BaselineError(str(err))
    if not isinstance(old, dict) or old.get("format") != "pecs-summary-1" or \
            not isinstance(old.get("cases"), dict):
        raise BaselineError("%s: not the summary.json (pecs-summary-1) of an earlier report"
                            % path)
    return old


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def cell_class(c: dict[str, int]) -> str:
    if c["failed"] or c["xpass"] or c["broken"] or c["crashed"]:
        return "bad"
    if c["xfail"]:
        return "known"
    if c["passed"]:
        return "good"
    return "none"


def cell_text(c: dict[str, int]) -> str:
    parts = ["%d %s" % (c[k], name) for k, name in LETTERS if c[k]]
    return " · ".join(parts) if parts else "–"


def render(s: dict[str, Any], clients: dict[str, Any] | None = None,
           baseline: dict[str, Any] | None = None, source_root: str = "..") -> str:
    """The page; clients is OUT/clients.json (./pecs clients) when it ran, for its section;
    baseline an earlier summary.json to compare with; source_root the checkout's top as a
    path from the page's folder, for the links to source lines."""
    o: list[str] = []
    w = o.append
    w("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>")
    w("<title>pecs conformance report</title><style>%s</style></head><body>" % CSS)
    w('<div class=head><h1>pecs conformance report</h1><span>verdict: <b id=verdict class="%s">'
      '%s</b></span><span>generated %s</span><span>suite %s</span></div>' % (
          "verdict-ok" if s["ok"] else "verdict-fail", "PASS" if s["ok"] else "FAIL",
          e(s["generated"]), e(s.get("suite_version", "unknown"))))
    _verdicts(s, w)
    _root_causes(s, w)
    _what_ran(s, w)
    if baseline is not None:
        _changes(s, baseline, w)
    _problems(s, w)
    _matrix(s, [i["label"] for i in s["implementations"]], w)
    w(report_view.render(s, baseline, source_root))
    _coverage(s["coverage"], w)
    section = clients_report.html_section(clients)
    if section:
        w(section)
    w("<script>%s</script></body></html>" % JS)
    return "\n".join(o) + "\n"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1] + "…"


def _verdicts(s: dict[str, Any], w: _Write) -> None:
    """One row per implementation, the ones whose gate failed first."""
    impls = sorted(s["implementations"], key=lambda i: bool(i["ok"]))
    w("<table id=verdicts><tr><th>gate<th>implementation" +
      "".join("<th>%s" % SHORT[k] for k in COUNT_ORDER) + "<th>root cause, or first problem</tr>")
    for i in impls:
        c, label = i["counts"], i["label"]
        why = i.get("root_cause") or (i["problems"][0] if i["problems"] else "")
        w('<tr id="v-%s" data-impl="%s" data-ok="%s"><td class="%s">%s<td><a href="#%s">%s</a>'
          % (e(label), e(label), "yes" if i["ok"] else "no", "good" if i["ok"] else "bad",
             "ok" if i["ok"] else "FAIL", e("impl-" + label) if i["problems"] else
             e("q=" + urllib.parse.quote("impl:" + label)), e(label)))
        w("".join('<td class="num%s" data-count="%s">%d' % ("" if c[k] else " zero", k, c[k])
                  for k in COUNT_ORDER))
        w('<td class=cause title="%s">%s</tr>' % (e(why), e(_clip(why, 150))))
    w("</table>")


def _root_causes(s: dict[str, Any], w: _Write) -> None:
    """Under the verdicts, the one fact behind many failures, in the model's words: the
    cases it explains, the claimed features it makes moot, the line that accepts it."""
    causes = [(i["label"], c["line"]) for i in s["implementations"]
              for c in i.get("root_causes", [])]
    if causes:
        w("<ul id=root-causes>")
        for label, cause in causes:
            w("<li><b>%s</b>: %s" % (e(label), e(cause)))
        w("</ul>")


def _what_ran(s: dict[str, Any], w: _Write) -> None:
    """What ran where, behind a disclosure: paths and versions the verdict does not need."""
    w("<details id=run-details><summary>What ran: commands, kernels, expectations files, "
      "suite versions, assumed host facts</summary>")
    w('<p id=suite-versions>Suite %s (checkout); runners: %s.</p>' % (
        e(s.get("suite_version", "unknown")), e(", ".join(
            "%s %s" % (i["label"], i.get("suite_version", "unknown"))
            for i in s["implementations"]))))
    w("<table id=implementations><tr><th>implementation<th>what ran<th>kernel<th>privileged"
      "<th>expectations</tr>")
    for i in s["implementations"]:
        h = i["host"] or {}
        w('<tr data-impl="%s"><td>%s<td><code>%s</code><td>%s<td>%s<td>%s</tr>' % (
            e(i["label"]), e(i["label"]), e(i["source"]), e(h.get("kernel_release", "–")),
            _YES_NO.get(h.get("privileged"), "–"), e(i["expectations"] or "–")))
    w("</table>")
    assumed = [(i["label"], a) for i in s["implementations"] for a in i.get("assumed", [])]
    if assumed:
        w("<p>Assumed host facts:</p><ul id=assumed-facts>")
        for label, a in assumed:
            w("<li><b>%s</b>: %s" % (e(label), e(a)))
        w("</ul>")
    w("</details>")


def _changes(s: dict[str, Any], old: dict[str, Any], w: _Write) -> None:
    """What changed since the earlier run, the new failures first."""
    ch = report_view.changes(s, old)
    worse = sum(1 for _, _, was, now in ch if now in BAD and was not in BAD)
    better = sum(1 for _, _, was, now in ch if was in BAD and now not in BAD)
    w('<h2>Since the earlier run</h2><p id=changes-summary data-changed=%d data-worse=%d '
      'data-better=%d>%d status(es) changed since the run of %s: %d now fail, %d no longer '
      'do. <a href="#q=&amp;diff=1&amp;base=%%40earlier">Show them in the results</a>.</p>' % (
          len(ch), worse, better, len(ch), e(old.get("generated", "?")), worse, better))
    if ch:
        w("<details id=changes-list%s><summary>the %d change(s)</summary>" % (
            "" if len(ch) > FOLD_PROBLEMS else " open", len(ch)))
        w("<table id=changes><tr><th>case<th>implementation<th>was<th>now</tr>")
        for cid, label, was, now in ch:
            w('<tr data-case="%s" data-impl="%s"><td><a href="#%s"><code>%s</code></a><td>%s'
              '<td class="st-%s">%s<td class="st-%s">%s</tr>' % (
                  e(cid), e(label), e(report_view.case_anchor(cid)), e(cid), e(label),
                  e(was), e(was), e(now), e(now)))
        w("</table></details>")


def _problems(s: dict[str, Any], w: _Write) -> None:
    """Each implementation's gating problems; a long list starts folded."""
    impls = [i for i in s["implementations"] if i["problems"]]
    if not impls:
        return
    w("<h2>Gating problems</h2><div id=problems>")
    for i in impls:
        n = len(i["problems"])
        w('<details class=problems id="impl-%s"%s><summary><b>%s</b>: %d gating problem(s)'
          '</summary><ul>' % (e(i["label"]), "" if n > FOLD_PROBLEMS else " open",
                             e(i["label"]), n))
        # The model's groups: the failures one root cause explains, those at one check
        # site, then the rest, each group's advice said once in its heading.
        for g in i.get("problem_groups") or [{"heading": None, "problems": i["problems"]}]:
            items = "".join("<li>%s" % report_view.link_bugs(p) for p in g["problems"])
            if g["heading"] is None:
                w(items)
            else:
                w("<li>%s<ul>%s</ul>" % (report_view.link_bugs(g["heading"]), items))
        w("</ul></details>")
    w("</div>")


def _matrix(s: dict[str, Any], labels: list[str], w: _Write) -> None:
    """The areas by implementations; each cell opens the results view filtered to it."""
    w("<h2>Behaviour areas</h2><p>Each cell counts its cases; click it for them.</p>")
    w("<table id=matrix><tr><th>area" + "".join("<th>%s" % e(l) for l in labels) + "</tr>")
    for area, cells in s["areas"].items():
        w("<tr><th>%s" % e(area))
        for label in labels:
            c = cells[label]["counts"]
            attrs = " ".join('data-%s="%d"' % (k.replace("_", "-"), c[k]) for k, _ in LETTERS)
            query = "q=" + urllib.parse.quote("area:%s impl:%s" % (area, label))
            w('<td class="cell %s" data-area="%s" data-impl="%s" %s><a href="#%s">%s</a>'
              % (cell_class(c), e(area), e(label), attrs, e(query), e(cell_text(c))))
        w("</tr>")
    w("</table>")


def _coverage(cov: dict[str, Any], w: _Write) -> None:
    w("<h2>Coverage</h2>")
    if not cov["found"]:
        w("<p>The behaviours catalogue (%s) was not found: no coverage view.</p>" % e(cov["catalogue"]))
    else:
        w("<p id=coverage-summary data-behaviours=%d data-no-case=%d data-no-vector=%d>"
          "%d behaviours in %s: %d without a case, %d without a vector.</p>" % (
              len(cov["behaviours"]), len(cov["no_case"]), len(cov["no_vector"]),
              len(cov["behaviours"]), e(cov["catalogue"]), len(cov["no_case"]), len(cov["no_vector"])))
        w("<table id=coverage><tr><th>behaviour<th>description<th>source<th>cases<th>vectors</tr>")
        for r in cov["behaviours"]:
            gap = not r["cases"] or not r["has_vector"]
            w('<tr id="b-%s" class="%s" data-cases=%d data-has-vector=%s><td><code>%s</code><td>%s<td>%s<td>%s<td>%s</tr>' % (
                e(r["id"]), "known" if gap else "", len(r["cases"]),
                "yes" if r["has_vector"] else "no", e(r["id"]), e(r["behaviour"]), e(r["source"]),
                "<br>".join("<code>%s</code>" % e(c) for c in r["cases"]) or "<b>no case</b>",
                e(r["vectors"]) if r["has_vector"] else "<b>no vector</b>"))
        w("</table>")
    if cov["unknown"]:
        w("<p>Behaviour ids named by cases but missing from the catalogue: %s</p>" %
          ", ".join('<code id="b-%s">%s</code>' % (e(b), e(b)) for b in cov["unknown"]))
