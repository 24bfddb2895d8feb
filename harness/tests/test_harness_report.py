"""The reports: the HTML parses, its verdict rows and matrix counts equal summary.json and
the results files, the results view has every case with its source and bug links, a
baseline shows what changed, a headless browser runs its filters, and the coverage view
follows docs/behaviours.md."""
import html.parser
import pathlib
import re
import shutil
import subprocess
import json
import os
import urllib.parse
from typing import Any

import pytest

from pecs_harness import behaviours, cli, model, output, report_view, testing
from pecs_harness.statuses import COUNT_KEYS

CATALOGUE = """# Behaviours

Some prose first, and an unrelated table:

| a | b |
|---|---|
| x | y |

| id | behaviour | source | cases | vectors | ref |
|----|-----------|--------|-------|---------|-----|
| `TOY-OPEN` | opening a task clock works | man page | | open/attr_sizes.json#1 | yes |
| TOY-BAD-TYPE | type 1000 gives ENOENT | linux-capture | | | yes |
| TOY-NEVER | a behaviour no case covers | kernel source | | read_format#3 | no |
"""


class Page(html.parser.HTMLParser):
    """Collects the verdict rows, the matrix cells, the results view and the coverage rows."""

    def __init__(self) -> None:
        super().__init__()
        self.verdicts: list[dict[str, Any]] = []
        self.cells: list[dict[str, Any]] = []
        # The results view: case id -> its row's attributes and {impl: cell attributes}.
        self.rows: dict[str, dict[str, Any]] = {}
        self.results: dict[str, dict[str, dict[str, Any]]] = {}
        self.coverage: list[dict[str, Any]] = []
        self.ids: set[str] = set()
        self.links: list[dict[str, Any]] = []
        self.open_details: list[str] = []
        self._row: str | None = None
        self._cell: dict[str, Any] | None = None
        self._details: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a: dict[str, Any] = dict(attrs)
        if "id" in a:
            assert a["id"] not in self.ids, "duplicate id %s" % a["id"]
            self.ids.add(a["id"])
        if tag == "details":
            self._details.append(a.get("id") or "")
        if tag == "tr" and a.get("id", "").startswith("v-"):
            self.verdicts.append(dict(a, counts={}, in_details=bool(self._details)))
        if tag == "td" and "data-count" in a and self.verdicts:
            self.verdicts[-1]["counts"][a["data-count"]] = None
            self._cell = {"count": a["data-count"]}
        if tag == "td" and "cell" in a.get("class", ""):
            self.cells.append(a)
        if tag == "a" and self.cells and "target" not in self.cells[-1] and \
                a.get("href", "").startswith("#q="):
            self.cells[-1]["target"] = a["href"]
        if tag == "tr" and "case" in (a.get("class") or "").split():
            case: str = a["data-case"]
            self._row = case
            self.rows[case] = a
            self.results[case] = {}
        if tag == "td" and self._row and "data-status" in a:
            self.results[self._row][a["data-impl"]] = a
        if tag == "a":
            self.links.append(a)
        if tag == "tr" and a.get("id", "").startswith("b-"):
            self.coverage.append(a)

    def handle_data(self, data: str) -> None:
        if self._cell is not None and self.verdicts:
            self.verdicts[-1]["counts"][self._cell["count"]] = int(data)
            self._cell = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "details" and self._details:
            self._details.pop()
        if tag == "tbody":
            self._row = None


# The report's folder, its HTML page as parsed and summary.json.
Report = tuple[pathlib.Path, Page, dict[str, Any]]

# The second column's expectations in the later run: its known failures, naming bugs.
LATER_EXPECTATIONS = """Required.Toy.Verdict.Fails      # fxbug.dev/404941053: fails on purpose
Required.Toy.Verdict.Crashes    # https://bugs.example.org/show_bug.cgi?id=7, on purpose
Required.Toy.Verdict.Broken     # no bug: broken on purpose
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    tmp = tmp_path_factory.mktemp("report")
    toy = testing.toy_runner(str(tmp))
    cat = tmp / "behaviours.md"
    cat.write_text(CATALOGUE)
    out = tmp / "out"
    # Two columns: with and without the expectations file (the second fails its gate).
    rc = cli.main(["run", "--quiet", "--out", str(out), "--behaviours", str(cat),
                   "--runner", "syscall=" + toy, "--impl", "syscall", "--impl", "syscall",
                   "--expectations", "syscall=" + testing.TOY_EXPECTATIONS,
                   "--expectations", "syscall-2="])
    assert rc == 1
    return _rendered(out)


@pytest.fixture(scope="module")
def later(report: Report, tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The same results re-rendered with --baseline the first report's summary.json, the
    second column now with expectations that name bugs."""
    out, _, _ = report
    tmp = tmp_path_factory.mktemp("later")
    old = tmp / "old-summary.json"
    shutil.copy(str(out / "summary.json"), str(old))
    exp = tmp / "later.txt"
    exp.write_text(LATER_EXPECTATIONS)
    later_out = tmp / "out"
    cat = out.parent / "behaviours.md"
    rc = cli.main(["report", "--quiet", "--out", str(later_out), "--behaviours", str(cat),
                   "--baseline", str(old), "--expectations",
                   "syscall=" + testing.TOY_EXPECTATIONS, "--expectations",
                   "syscall-2=" + str(exp), "syscall=" + str(out / "syscall.json"),
                   "syscall-2=" + str(out / "syscall-2.json")])
    assert rc == 0
    return _rendered(later_out)


def _rendered(out: pathlib.Path) -> Report:
    """The report written into out: its folder, its parsed page and its summary."""
    page = Page()
    page.feed((out / "report.html").read_text())
    with open(str(out / "summary.json")) as f:
        summary = json.load(f)
    return out, page, summary


def test_the_first_rows_are_the_verdicts_failures_first(report: Report) -> None:
    """Every implementation's gate and counts in one row each, failures first, outside any
    disclosure; what ran sits in one."""
    out, page, summary = report
    impls = {i["label"]: i for i in summary["implementations"]}
    assert [v["data-impl"] for v in page.verdicts] == ["syscall-2", "syscall"]
    assert [v["data-ok"] for v in page.verdicts] == ["no", "yes"]
    for v in page.verdicts:
        assert not v["in_details"]
        assert v["counts"] == {k: impls[v["data-impl"]]["counts"][k] for k in v["counts"]}
        assert set(v["counts"]) == set(impls[v["data-impl"]]["counts"])
    text = (out / "report.html").read_text()
    assert text.index("id=verdicts") < text.index("<details id=run-details>") < \
        text.index("id=implementations") < text.index("id=results")


def test_the_matrix_counts_equal_the_summary_and_the_results_files(report: Report) -> None:
    out, page, summary = report
    assert {c["data-impl"] for c in page.cells} == {"syscall", "syscall-2"}
    assert len(page.cells) == len(summary["areas"]) * 2
    for cell in page.cells:
        counts = summary["areas"][cell["data-area"]][cell["data-impl"]]["counts"]
        for key in COUNT_KEYS.values():
            assert int(cell["data-" + key.replace("_", "-")]) == counts[key]
    # Independently: the runner's own results file, area by area.
    with open(str(out / "syscall.json")) as f:
        raw = json.load(f)
    for r in raw["results"]:
        cell = next(c for c in page.cells if c["data-impl"] == "syscall" and
                    c["data-area"] == model.area_of(r["id"]))
        assert int(cell["data-" + COUNT_KEYS[r["status"]].replace("_", "-")]) >= 1
    total: dict[str, int] = {}
    for cell in page.cells:
        if cell["data-impl"] == "syscall":
            for key in COUNT_KEYS.values():
                total[key] = total.get(key, 0) + int(cell["data-" + key.replace("_", "-")])
    for key in COUNT_KEYS.values():
        assert total[key] == raw["counts"][key], key


def test_the_results_view_has_every_case_by_every_implementation(report: Report) -> None:
    """One row per case with its anchor, grouped by area; each matrix cell opens the view
    filtered to its area and implementation, where its cases are."""
    out, page, summary = report
    assert list(page.rows) == [c for a in sorted({c["area"] for c in summary["cases"].values()})
                               for c, v in summary["cases"].items() if v["area"] == a]
    for cid, row in page.rows.items():
        assert row["id"] == "c-" + cid and row["data-area"] == summary["cases"][cid]["area"]
        assert {l: c["data-status"] for l, c in page.results[cid].items()} == \
            {l: r["status"] for l, r in summary["cases"][cid]["results"].items()}
    for cell in page.cells:
        assert urllib.parse.unquote(cell["target"]) == "#q=area:%s impl:%s" % (
            cell["data-area"], cell["data-impl"])
    assert page.results["Required.Toy.Verdict.Crashes"]["syscall-2"]["data-status"] == "CRASH"
    text = (out / "report.html").read_text()
    assert "killed by signal 11" in text
    assert 'href="#b-TOY-BAD-TYPE"' in text


def test_a_failure_links_its_source_line(report: Report) -> None:
    """summary.json has where each verdict was given; the message links that line through a
    relative path from the report's folder into the checkout."""
    out, page, summary = report
    where = next(i for i in summary["implementations"]
                 if i["label"] == "syscall-2")["locations"]["Required.Toy.Verdict.Fails"]
    assert where["file"] == "harness/tests/toy/toy_cases.c"
    source = pathlib.Path(cli.ROOT, where["file"]).read_text().splitlines()
    assert "PECS_CHECK_EQ(t, two, 3)" in source[where["line"] - 1]
    href = "%s#L%d" % (urllib.parse.quote(os.path.join(
        os.path.relpath(cli.ROOT, str(out)), where["file"])), where["line"])
    link = next(a for a in page.links if a.get("href") == href)
    assert link["class"] == "src"
    assert (out / urllib.parse.unquote(href.split("#")[0])).resolve() == \
        pathlib.Path(cli.ROOT, where["file"]).resolve()


def test_the_report_is_self_contained(report: Report, later: Report) -> None:
    """Nothing is fetched: the only addresses are bug links, opened on a click."""
    for out in (report[0], later[0]):
        text = (out / "report.html").read_text()
        for needle in ("<link", "src=", "url(", "@import", "fetch(", "XMLHttpRequest"):
            assert needle not in text
        assert not re.search("https?://", re.sub(r'<a class=bug href="[^"]*">[^<]*</a>', "", text))


def test_a_baseline_shows_what_changed_and_bugs_are_links(later: Report) -> None:
    out, page, summary = later
    text = (out / "report.html").read_text()
    assert re.search(r"id=changes-summary data-changed=3 data-worse=0 data-better=3", text)
    crash = page.results["Required.Toy.Verdict.Crashes"]["syscall-2"]
    assert (crash["data-was"], crash["data-status"]) == ("CRASH", "XFAIL")
    assert page.results["Required.Toy.Open.TaskClock"]["syscall"]["data-was"] == \
        page.results["Required.Toy.Open.TaskClock"]["syscall"]["data-status"]
    bugs = {a["href"] for a in page.links if a.get("class") == "bug"}
    assert bugs == {"https://fxbug.dev/404941053", "https://bugs.example.org/show_bug.cgi?id=7"}
    assert cli.main(["report", "--quiet", "--out", str(out), "--baseline",
                     str(out / "report.html")]) == 2


def test_the_coverage_view_names_behaviours_without_case_or_vector(report: Report) -> None:
    _, page, summary = report
    cov = summary["coverage"]
    assert cov["no_case"] == ["TOY-NEVER"]
    assert cov["no_vector"] == ["TOY-BAD-TYPE"]
    assert "TOY-FAIL" in cov["unknown"] and "TOY-OPEN" not in cov["unknown"]
    rows = {r["id"]: r for r in page.coverage}
    assert rows["b-TOY-NEVER"]["data-cases"] == "0"
    assert rows["b-TOY-BAD-TYPE"]["data-has-vector"] == "no"
    assert rows["b-TOY-OPEN"]["data-cases"] == "2"


def test_the_markdown_report_has_the_matrix_and_the_problems(report: Report) -> None:
    md = (report[0] / "report.md").read_text()
    assert "| area | syscall | syscall-2 |" in md
    assert "| Toy.Verdict | 3 xfail, 1 env-skip | 1 fail, 1 env-skip, 1 broken, 1 crash |" in md
    # The failures under one heading with the advice said once, not once a case.
    assert "- **syscall-2**: failures (3): no expectations file for syscall-2" in md
    assert "\n  - CRASH Required.Toy.Verdict.Crashes" in md
    assert md.count("no expectations file") == 1
    assert "Verdict: **FAIL**" in md


# A clients.json as ./pecs clients writes it, with text HTML must escape.
CLIENTS = {
    "impls": ["ref", "/x/libpecs_starnix_snapshot.so"],
    "checks": [
        {"client": "perf stat", "item": "task-clock", "values": {
            "kernel": "310.00 ms (1.000x own)", "ref": "309.00 ms (0.997x own)",
            "/x/libpecs_starnix_snapshot.so": "error"},
         "verdicts": {"ref": "pass", "/x/libpecs_starnix_snapshot.so": "fail"},
         "reasons": {"ref": "0.3% from the kernel (limit 5%)",
                     "/x/libpecs_starnix_snapshot.so": "perf stat exited 1: <ENOSYS> & more"}},
        {"client": "perf test", "item": "PERF_RECORD_* events & perf_sample fields",
         "values": {"kernel": "Ok", "ref": "Ok", "/x/libpecs_starnix_snapshot.so": "FAILED!"},
         "verdicts": {"ref": "pass", "/x/libpecs_starnix_snapshot.so": "fail"},
         "reasons": {"ref": "", "/x/libpecs_starnix_snapshot.so": "<script>x</script>"}},
    ],
}


class ClientsTable(html.parser.HTMLParser):
    """The rows of the clients table: (client, item, {impl: verdict}) and the cells' text."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, str, dict[str, str]]] = []
        self.text: list[str] = []
        self.tags: list[str] = []
        self._in = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a: dict[str, Any] = dict(attrs)
        if tag == "table":
            self._in = a.get("id") == "clients"
        if self._in:
            self.tags.append(tag)
        if self._in and tag == "tr" and "data-client" in a:
            self.rows.append((a["data-client"], a["data-item"], {}))
        if self._in and tag == "td" and "data-verdict" in a:
            self.rows[-1][2][a["data-impl"]] = a["data-verdict"]

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in = False

    def handle_data(self, data: str) -> None:
        if self._in:
            self.text.append(data)


def test_the_html_report_has_the_real_clients_section(report: Report,
                                                      tmp_path: pathlib.Path) -> None:
    """report.html shows clients.json as report.md does: each command and check with its
    verdict on each implementation, its text escaped."""
    _, _, summary = report
    (tmp_path / "clients.json").write_text(json.dumps(CLIENTS))
    output.write_reports(summary, str(tmp_path))
    page = (tmp_path / "report.html").read_text()
    table = ClientsTable()
    table.feed(page)
    assert table.rows == [
        ("perf stat", "task-clock", {"ref": "pass", "libpecs_starnix_snapshot.so": "fail"}),
        ("perf test", "PERF_RECORD_* events & perf_sample fields",
         {"ref": "pass", "libpecs_starnix_snapshot.so": "fail"})]
    text = "".join(table.text)
    assert "<script>x</script>" in text and "<ENOSYS> & more" in text
    assert "script" not in table.tags
    assert "perf stat -e task-clock,cpu-clock,page-faults,context-switches -- spin" in text
    assert "## Real clients" in (tmp_path / "report.md").read_text()


def test_the_html_report_has_no_clients_section_without_clients_json(report: Report) -> None:
    table = ClientsTable()
    table.feed((report[0] / "report.html").read_text())
    assert not table.rows and "Real clients" not in (report[0] / "report.html").read_text()


def test_summary_matches_the_gate(report: Report) -> None:
    _, _, summary = report
    impls = {i["label"]: i for i in summary["implementations"]}
    assert impls["syscall"]["ok"] and not impls["syscall-2"]["ok"]
    assert summary["ok"] is False


def test_behaviours_table_parsing_ignores_other_tables() -> None:
    rows = behaviours.parse(CATALOGUE)
    assert [r["id"] for r in rows] == ["TOY-OPEN", "TOY-BAD-TYPE", "TOY-NEVER"]
    assert behaviours.has_vectors(rows[0]) and not behaviours.has_vectors(rows[1])


def test_area_is_the_second_and_third_id_components() -> None:
    assert model.area_of("Required.Read.Group.LeaderFirst") == "Read.Group"
    assert model.area_of("Recommended.Ioctl.Refresh.DisablesAfterN") == "Ioctl.Refresh"
    assert model.area_of("Required.Short") == "Short"


BROWSER = next((b for b in ("chromium-headless-shell", "chromium") if shutil.which(b)), "")


def _live(page_path: pathlib.Path, fragment: str) -> tuple[Page, str]:
    """The DOM a headless browser builds from the page at this fragment, once its script
    has run: parsed, and as text."""
    url = "file://%s#%s" % (page_path, fragment)
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True, timeout=120).stdout
    live = Page()
    live.feed(dom)
    return live, dom


def _shown(live: Page) -> list[str]:
    return [cid for cid, row in live.rows.items() if "hidden" not in row]


@pytest.mark.skipif(not BROWSER, reason="no headless chromium (Debian chromium-headless-shell)")
def test_a_headless_browser_runs_the_filter_the_toggle_and_the_anchors(
        report: Report, later: Report) -> None:
    """The page loads in a real browser and its script runs: the query (status, impl, area,
    words) and "only differences" (against each other, a column, the earlier run) hide
    exactly the rows they should, and a case's anchor marks its row. The DOM keeps the
    counts of summary.json."""
    out, page, summary = report
    cases = summary["cases"]
    live, _ = _live(out / "report.html", "")
    assert _shown(live) == list(page.rows)
    for a, b in zip(live.cells, page.cells):
        assert {k: v for k, v in a.items() if k.startswith("data-")} == \
            {k: v for k, v in b.items() if k.startswith("data-")}

    def statuses(cid: str) -> dict[str, str]:
        return {l: r["status"] for l, r in cases[cid]["results"].items()}

    live, dom = _live(out / "report.html", "q=" + urllib.parse.quote("status:crash"))
    assert _shown(live) == ["Required.Toy.Verdict.Crashes"]
    assert 'data-shown="1"' in dom
    # impl: names a column exactly; its cells alone are searched, the others hidden.
    live, _ = _live(out / "report.html", "q=" + urllib.parse.quote("impl:syscall status:xfail"))
    assert _shown(live) == [c for c in page.rows if statuses(c).get("syscall") == "XFAIL"]
    assert all("hidden" in cell for c in live.results.values() for l, cell in c.items()
               if l == "syscall-2")
    live, _ = _live(out / "report.html", "q=" + urllib.parse.quote("area:Toy.Open signal"))
    assert _shown(live) == []
    live, _ = _live(out / "report.html", "q=" + urllib.parse.quote("area:toy.verdict SIGNAL"))
    assert _shown(live) == ["Required.Toy.Verdict.Crashes"]
    # Only differences: where the two columns disagree.
    live, _ = _live(out / "report.html", "q=&diff=1")
    want = [c for c in page.rows if len(set(statuses(c).values())) > 1]
    assert want and _shown(live) == want and len(want) < len(page.rows)
    live, _ = _live(out / "report.html", "q=&diff=1&base=syscall")
    assert _shown(live) == want
    # Against the earlier run: the cases whose status changed since.
    later_out, later_page, later_summary = later
    live, _ = _live(later_out / "report.html", "q=&diff=1&base=%40earlier")
    assert _shown(live) == sorted({c for c, _, _, _ in report_view.changes(
        later_summary, summary)}, key=list(later_page.rows).index)
    assert len(_shown(live)) == 3
    # A case's anchor: its row is shown and marked.
    live, dom = _live(out / "report.html", "c-Required.Toy.Verdict.Fails")
    row = live.rows["Required.Toy.Verdict.Fails"]
    assert "hidden" not in row and "target" in row["class"].split()
