"""The reports: the HTML parses, its matrix counts equal summary.json and the results
files, each cell lists its cases, and the coverage view follows docs/behaviours.md."""
import html.parser
import pathlib
import re
import shutil
import subprocess
import json
import os
from typing import Any

import pytest

from pecs_harness import behaviours, cli, model, output, testing
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
    """Collects the matrix cells, the case lists and the coverage rows."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[dict[str, Any]] = []
        self.details: dict[str, list[tuple[Any, Any]]] = {}
        self.rows: list[Any] = []
        self.coverage: list[dict[str, Any]] = []
        self._detail: str | None = None
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a: dict[str, Any] = dict(attrs)
        if "id" in a:
            assert a["id"] not in self.ids, "duplicate id %s" % a["id"]
            self.ids.add(a["id"])
        if tag == "td" and "cell" in a.get("class", ""):
            self.cells.append(a)
        if tag == "a" and "data-open" in a and self.cells:
            self.cells[-1]["target"] = a["data-open"]
        if tag == "details":
            self._detail = a["id"]
            self.details[a["id"]] = []
        if tag == "tr" and "data-case" in a and self._detail:
            self.details[self._detail].append((a["data-case"], a["data-status"]))
        if tag == "tr" and a.get("id", "").startswith("b-"):
            self.coverage.append(a)

    def handle_endtag(self, tag: str) -> None:
        if tag == "details":
            self._detail = None


# The report's folder, its HTML page as parsed and summary.json.
Report = tuple[pathlib.Path, Page, dict[str, Any]]


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
    page = Page()
    page.feed((out / "report.html").read_text())
    with open(str(out / "summary.json")) as f:
        summary = json.load(f)
    return out, page, summary


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


def test_each_cell_opens_the_list_of_its_cases(report: Report) -> None:
    out, page, summary = report
    for cell in page.cells:
        listed = page.details.get(cell["target"], [])
        want = summary["areas"][cell["data-area"]][cell["data-impl"]]["cases"]
        assert [c for c, _ in listed] == want
    verdict = dict(page.details[next(c["target"] for c in page.cells
                                     if c["data-area"] == "Toy.Verdict" and c["data-impl"] == "syscall-2")])
    assert verdict["Required.Toy.Verdict.Crashes"] == "CRASH"
    text = (out / "report.html").read_text()
    assert "killed by signal 11" in text
    assert 'href="#b-TOY-BAD-TYPE"' in text


def test_the_report_is_self_contained(report: Report) -> None:
    text = (report[0] / "report.html").read_text()
    for needle in ("http://", "https://", "<link", "src="):
        assert needle not in text


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


@pytest.mark.skipif(not BROWSER, reason="no headless chromium (Debian chromium-headless-shell)")
def test_a_headless_browser_opens_the_cell_a_link_names(report: Report) -> None:
    """The page loads in a real browser, its script runs (the cell named in the URL opens)
    and the DOM it builds carries the same counts as summary.json."""
    out, page, summary = report
    cell = next(c for c in page.cells if c["data-impl"] == "syscall-2" and c["data-area"] == "Toy.Verdict")
    url = "file://%s#%s" % (out / "report.html", cell["target"])
    dom = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True, timeout=120).stdout
    live = Page()
    live.feed(dom)
    assert len(live.cells) == len(page.cells)
    for a, b in zip(live.cells, page.cells):
        assert {k: v for k, v in a.items() if k.startswith("data-")} == \
            {k: v for k, v in b.items() if k.startswith("data-")}
    assert re.search(r'<details[^>]*id="%s"[^>]*open' % cell["target"], dom)
    others = re.findall(r'<details[^>]*id="(cell-[0-9-]+)"[^>]*open', dom)
    assert others == [cell["target"]]
