"""The report's results view: every case by every implementation, grouped by behaviour area,
as wpt.fyi shows tests by browsers. Each row has a stable anchor (#c-CASE); each cell its
status (data-status), its message with the source line that gave the verdict linked, the
bug its expectation names linked, and with an earlier run (report --baseline OLD) the
status it had then (data-was). report_assets.JS filters it."""
import html
import os
import re
import urllib.parse
from typing import Any

from . import report_versions
from .statuses import BAD

# A bug an expectation's reason names: a URL, or a tracker's host and path as people write
# them ("fxbug.dev/404941053", "bugzilla.kernel.org/show_bug.cgi?id=1").
_BUG = re.compile(r"\b(?:https?://[^\s<>\"']+|(?:[a-z0-9-]+\.)+(?:dev|com|org|net|io)/[^\s<>\"']+)",
                  re.IGNORECASE)
_TRAILING = ":;,.)]"
NOT_RUN = "NOT_RUN"


def e(text: object) -> str:
    return html.escape(str(text), quote=True)


def case_anchor(case_id: str) -> str:
    return "c-" + case_id


def link_bugs(text: str) -> str:
    """text escaped, with each bug it names as a link (opened on a click, never fetched)."""
    out, last = [], 0
    for m in _BUG.finditer(text):
        bug = m.group(0).rstrip(_TRAILING)
        end = m.start() + len(bug)
        url = bug if re.match(r"https?://", bug, re.IGNORECASE) else "https://" + bug
        out.append(e(text[last:m.start()]))
        out.append('<a class=bug href="%s">%s</a>' % (e(url), e(bug)))
        last = end
    out.append(e(text[last:]))
    return "".join(out)


def source_href(source_root: str, path: str, line: int | None = None) -> str:
    """A relative link into the repository tree, as a code browser takes it (#L14)."""
    root = source_root.rstrip("/")
    href = urllib.parse.quote((root + "/" if root else "") + path)
    return href + ("#L%d" % line if line else "")


def message_html(message: str, where: dict[str, Any] | None, source_root: str) -> str:
    """The message with its "file.c:14:" (where the case gave its verdict) as a link."""
    if not where or not where.get("file"):
        return e(message)
    base = os.path.basename(where["file"])
    spot = "%s:%d" % (base, where["line"])
    link = '<a class=src href="%s">%s</a>' % (
        e(source_href(source_root, where["file"], where["line"])), e(spot))
    if message.startswith(spot + ":"):
        return link + e(message[len(spot):])
    return link + ": " + e(message)


def _expectation_html(x: dict[str, Any], source_root: str) -> str:
    f = str(x["file"])
    place = "%s:%s" % (f, x["line"])
    if not os.path.isabs(f):
        place = '<a class=src href="%s">%s</a>' % (
            e(source_href(source_root, f, int(x["line"]))), e(place))
    else:
        place = e(place)
    return "expected (%s): %s" % (place, link_bugs(str(x["reason"])))


def was_status(old: dict[str, Any] | None, label: str, case_id: str) -> str | None:
    """The status case_id had on label in the earlier run; None when it had no such
    implementation, NOT_RUN when that run lacked the case."""
    if old is None or label not in {i["label"] for i in old.get("implementations", [])}:
        return None
    r = old.get("cases", {}).get(case_id, {}).get("results", {}).get(label)
    return str(r["status"]) if r else NOT_RUN


def changes(s: dict[str, Any], old: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(case, implementation, was, now) for every status that changed since old, the ones
    that now fail first."""
    out = []
    for cid, c in s["cases"].items():
        for i in s["implementations"]:
            now = c["results"].get(i["label"], {}).get("status", NOT_RUN)
            was = was_status(old, i["label"], cid)
            if was is not None and was != now:
                out.append((cid, i["label"], was, now))
    out.sort(key=lambda t: (t[3] not in BAD, t[0], t[1]))
    return out


def _behaviour_link(b: str, rows: dict[str, dict[str, Any]]) -> str:
    title = rows.get(b, {}).get("behaviour", "not in the catalogue")
    return '<a class=beh href="#b-%s" title="%s">%s</a>' % (e(b), e(title), e(b))


def _cell(cid: str, label: str, r: dict[str, Any] | None, where: dict[str, Any] | None,
          was: str | None, source_root: str) -> str:
    status = r["status"] if r else NOT_RUN
    attrs = 'class="r st-%s" data-impl="%s" data-status="%s"' % (
        e(status if r else "none"), e(label), e(status))
    if was is not None:
        attrs += ' data-was="%s"' % e(was)
    body = "<b>%s</b>" % e(report_versions.label(r) if r else "not run")
    if was is not None and was != status:
        body += '<span class=was>was %s</span>' % e(was)
    if r and r["status"] != "PASS":
        msg = message_html(r["message"] or "", where, source_root)
        if r.get("expectation"):
            msg += ("\n" if msg else "") + _expectation_html(r["expectation"], source_root)
        if msg:
            body += "<span class=msg>%s</span>" % msg
    return "<td %s>%s" % (attrs, body)


def render(s: dict[str, Any], old: dict[str, Any] | None, source_root: str) -> str:
    """The query box and the table; report_assets.JS makes them work."""
    labels = [i["label"] for i in s["implementations"]]
    brows = {r["id"]: r for r in s["coverage"]["behaviours"]}
    where = {i["label"]: i.get("locations", {}) for i in s["implementations"]}
    o = ['<h2 id=results-view>Results</h2>',
         '<div id=controls><input type=search id=q placeholder="status:fail impl:ref '
         'area:Read.Group text" aria-label="query: status:, impl:, area: and words">',
         '<label><input type=checkbox id=diff-only> only differences</label>',
         '<label>against <select id=base><option value="">each other</option>']
    o.extend('<option value="%s">%s</option>' % (e(l), e(l)) for l in labels)
    if old is not None:
        o.append('<option value="@earlier">the earlier run (%s)</option>'
                 % e(old.get("generated", "?")))
    o.append('</select></label><span id=shown></span></div>')
    o.append('<table id=results><thead><tr><th>case' +
             "".join('<th data-col="%s">%s' % (e(l), e(l)) for l in labels) + "</thead>")
    by_area: dict[str, list[str]] = {}
    for cid, c in s["cases"].items():
        by_area.setdefault(c["area"], []).append(cid)
    for area in sorted(by_area):
        o.append('<tbody data-area="%s"><tr class=area><th colspan=%d id="a-%s">%s '
                 '<small>(%d cases)</small>' % (e(area), len(labels) + 1, e(area), e(area),
                                              len(by_area[area])))
        for cid in by_area[area]:
            c = s["cases"][cid]
            o.append('<tr class=case id="%s" data-case="%s" data-area="%s"><td class=id>'
                     '<a href="#%s">%s</a><br>%s' % (
                         e(case_anchor(cid)), e(cid), e(area), e(case_anchor(cid)), e(cid),
                         " ".join(_behaviour_link(b, brows) for b in c["behaviours"])))
            o.extend(_cell(cid, l, c["results"].get(l), where[l].get(cid),
                           was_status(old, l, cid), source_root) for l in labels)
        o.append("</tbody>")
    o.append("</table>")
    return "\n".join(o)
