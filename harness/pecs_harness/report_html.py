"""report.html: one self-contained page (inline CSS and JS, no network).

The matrix has one row per behaviour area and one column per implementation; each cell
carries its counts as data-* attributes (the tests read them back) and opens the list of
its cases with their messages and behaviour ids. Below: the gating problems and the
coverage view."""
import html
from collections.abc import Callable
from typing import Any

from . import clients_report, report_versions
from .statuses import COUNT_ORDER

LETTERS = [("passed", "pass"), ("failed", "fail"), ("xfail", "xfail"), ("xpass", "xpass"),
           ("unsupported", "unsup"), ("env_skipped", "env"), ("broken", "broken"),
           ("crashed", "crash")]

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{margin:0 0 .2em}table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#f3f3f3}td.num{text-align:right}
td.cell a{display:block;color:inherit;text-decoration:none}
.bad{background:#f8d0d0}.known{background:#fbe8c0}.good{background:#d4f0d4}.none{background:#eee;color:#777}
.verdict-ok{color:#165d16;font-weight:bold}.verdict-fail{color:#a00;font-weight:bold}
details.cases{margin:.3em 0;border:1px solid #ddd;padding:.3em .6em}
details.cases:target{outline:2px solid #36c}
.st-PASS{color:#165d16}.st-FAIL,.st-XPASS,.st-BROKEN,.st-CRASH{color:#a00;font-weight:bold}
.st-XFAIL{color:#8a5a00}.st-UNSUPPORTED,.st-ENV_SKIP{color:#777}
code{font-size:92%}.msg{white-space:pre-wrap;max-width:60em}
"""

JS = """
document.addEventListener('click', function (e) {
  var a = e.target.closest('a[data-open]');
  if (!a) return;
  var d = document.getElementById(a.getAttribute('data-open'));
  if (d) { d.open = true; }
});
function openHash() {
  var d = location.hash && document.getElementById(location.hash.slice(1));
  if (d && d.tagName === 'DETAILS') d.open = true;
}
window.addEventListener('hashchange', openHash);
openHash();
"""


# privileged as the report writes it; the host facts may lack it.
_YES_NO: dict[Any, str] = {True: "yes", False: "no"}


# Appends one piece of the page.
_Write = Callable[[str], None]


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


def _behaviour_link(b: str, rows: dict[str, dict[str, Any]]) -> str:
    title = rows.get(b, {}).get("behaviour", "not in the catalogue")
    return '<a href="#b-%s" title="%s"><code>%s</code></a>' % (e(b), e(title), e(b))


def render(s: dict[str, Any], clients: dict[str, Any] | None = None) -> str:
    """The page; clients is OUT/clients.json (./pecs clients) when it ran, for its section."""
    labels = [i["label"] for i in s["implementations"]]
    o: list[str] = []
    w = o.append
    w("<!DOCTYPE html><html lang=en><head><meta charset=utf-8>")
    w("<title>pecs conformance report</title><style>%s</style></head><body>" % CSS)
    w("<h1>pecs conformance report</h1>")
    w('<p id=suite-versions>Suite %s (checkout); runners: %s.</p>' % (
        e(s.get("suite_version", "unknown")), e(", ".join(
            "%s %s" % (i["label"], i.get("suite_version", "unknown"))
            for i in s["implementations"]))))
    w('<p>Generated %s. Verdict: <span id=verdict class="%s">%s</span></p>' % (
        e(s["generated"]), "verdict-ok" if s["ok"] else "verdict-fail",
        "PASS" if s["ok"] else "FAIL"))
    _implementations(s, w)
    ids = _matrix(s, labels, w)
    _case_lists(s, labels, ids, w)
    _coverage(s["coverage"], w)
    section = clients_report.html_section(clients)
    if section:
        w(section)
    w("<script>%s</script></body></html>" % JS)
    return "\n".join(o) + "\n"


def _root_causes(s: dict[str, Any], w: _Write) -> None:
    """First the one fact behind many failures, where a run has one."""
    causes = [(i["label"], c["line"]) for i in s["implementations"]
              for c in i.get("root_causes", [])]
    if causes:
        w("<h2>Root causes</h2><ul id=root-causes>")
        for label, cause in causes:
            w("<li><b>%s</b>: %s" % (e(label), e(cause)))
        w("</ul>")
    assumed = [(i["label"], a) for i in s["implementations"] for a in i.get("assumed", [])]
    if assumed:
        w("<h2>Assumed host facts</h2><ul id=assumed-facts>")
        for label, a in assumed:
            w("<li><b>%s</b>: %s" % (e(label), e(a)))
        w("</ul>")


def _implementations(s: dict[str, Any], w: _Write) -> None:
    """The table of implementations and the gating problems."""
    _root_causes(s, w)
    w("<h2>Implementations</h2><table id=implementations><tr><th>implementation<th>what ran"
      "<th>kernel<th>privileged<th>expectations" +
      "".join("<th>%s" % k for k in COUNT_ORDER) + "<th>gate</tr>")
    for i in s["implementations"]:
        h = i["host"] or {}
        w('<tr data-impl="%s"><td>%s<td>%s<td>%s<td>%s<td>%s' % (
            e(i["label"]), e(i["label"]), e(i["source"]), e(h.get("kernel_release", "–")),
            _YES_NO.get(h.get("privileged"), "–"),
            e(i["expectations"] or "–")))
        w("".join('<td class=num data-count="%s">%d' % (k, i["counts"][k]) for k in COUNT_ORDER))
        w('<td class="%s">%s</tr>' % ("good" if i["ok"] else "bad", "ok" if i["ok"] else "FAIL"))
    w("</table>")

    if any(i["problems"] for i in s["implementations"]):
        w("<h2>Gating problems</h2><ul id=problems>")
        for i in s["implementations"]:
            for g in i["problem_groups"]:
                if g["heading"] is None:
                    w("".join("<li><b>%s</b>: %s" % (e(i["label"]), e(p))
                              for p in g["problems"]))
                    continue
                w("<li><b>%s</b>: %s<ul>%s</ul>" % (e(i["label"]), e(g["heading"]), "".join(
                    "<li>%s" % e(p) for p in g["problems"])))
        w("</ul>")


def _matrix(s: dict[str, Any], labels: list[str], w: _Write) -> dict[tuple[str, str], str]:
    """The areas by implementations; returns the id of each cell's case list."""
    w("<h2>Behaviour areas</h2><p>Each cell counts its cases; click it for the list.</p>")
    w("<table id=matrix><tr><th>area" + "".join("<th>%s" % e(l) for l in labels) + "</tr>")
    ids: dict[tuple[str, str], str] = {}
    for ai, (area, cells) in enumerate(s["areas"].items()):
        w("<tr><th>%s" % e(area))
        for li, label in enumerate(labels):
            c = cells[label]["counts"]
            ident = "cell-%d-%d" % (ai, li)
            ids[(area, label)] = ident
            attrs = " ".join('data-%s="%d"' % (k.replace("_", "-"), c[k]) for k, _ in LETTERS)
            w('<td class="cell %s" data-area="%s" data-impl="%s" %s><a href="#%s" data-open="%s">%s</a>'
              % (cell_class(c), e(area), e(label), attrs, ident, ident, e(cell_text(c))))
        w("</tr>")
    w("</table>")
    return ids


def _case_lists(s: dict[str, Any], labels: list[str], ids: dict[tuple[str, str], str],
                w: _Write) -> None:
    """Each cell's cases, opened from the matrix."""
    brows = {r["id"]: r for r in s["coverage"]["behaviours"]}
    w("<h2>Cases by area and implementation</h2>")
    for area, cells in s["areas"].items():
        for label in labels:
            case_ids = cells[label]["cases"]
            if not case_ids:
                continue
            w('<details class=cases id="%s" data-area="%s" data-impl="%s"><summary>%s — %s: %s</summary>'
              % (ids[(area, label)], e(area), e(label), e(area), e(label),
                 e(cell_text(cells[label]["counts"]))))
            w("<table><tr><th>case<th>status<th>message<th>behaviours</tr>")
            for cid in case_ids:
                c = s["cases"][cid]
                r = c["results"][label]
                msg = r["message"]
                if r["expectation"]:
                    x = r["expectation"]
                    msg = (msg + "\n" if msg else "") + "expected (%s:%s): %s" % (
                        x["file"], x["line"], x["reason"])
                w('<tr class=case data-case="%s" data-status="%s"><td><code>%s</code>'
                  '<td class="st-%s">%s<td class=msg>%s<td>%s</tr>' % (
                      e(cid), e(r["status"]), e(cid), e(r["status"]),
                      e(report_versions.label(r)), e(msg),
                      " ".join(_behaviour_link(b, brows) for b in c["behaviours"])))
            w("</table></details>")


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
