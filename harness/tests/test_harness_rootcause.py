"""Root cause first: gating problems, diff and drafts grouped under their root cause or
check site; one `@root-cause` line instead of a line a case; the claimed features a cause
makes moot; 'draft:' reasons warned about, and refused with --strict."""
import json
import pathlib
from typing import Any

import pytest

from pecs_harness import cli

HOST = {"privileged": True, "kernel_release": "6.1.0", "paranoid": 2}


def results_file(path: pathlib.Path, cases: dict[str, tuple[str, str]], impl: str = "mine",
                 calls: dict[str, Any] | None = None, features: list[str] | None = None,
                 case_features: dict[str, list[str]] | None = None,
                 failed_calls: dict[str, dict[str, str]] | None = None) -> str:
    """A pecs-results-1 file: cases id -> (raw status, message)."""
    results = []
    for cid, (raw, msg) in cases.items():
        r: dict[str, Any] = {"id": cid, "status": raw, "raw_status": raw, "message": msg,
                             "features": (case_features or {}).get(cid, []),
                             "behaviours": [], "expectation": None}
        if failed_calls is not None:
            r["failed_calls"] = failed_calls.get(cid, {})
        results.append(r)
    doc: dict[str, Any] = {
        "format": "pecs-results-1", "suite_version": "v", "impl": impl,
        "features": features or [], "host": HOST, "expectations": None,
        "shard": {"index": 0, "total": 1}, "results": results, "stale": [],
        "expectation_errors": [], "counts": {}, "ok": False}
    if calls is not None:
        doc["calls"] = calls
    path.write_text(json.dumps(doc))
    return str(path)


def enosys_mmap(n: int) -> dict[str, dict[str, Any]]:
    return {"mmap": {"calls": n, "ok": 0, "cases": n, "errno": "ENOSYS", "mixed": False},
            "open": {"calls": 3 * n, "ok": 3 * n, "cases": 2 * n, "errno": None,
                     "mixed": False}}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out + out.err


def mmap_run(tmp_path: pathlib.Path) -> str:
    """12 cases failing on mmap's ENOSYS, two at one check site, one on its own; a pass."""
    cases = {"R.Mmap.%02d" % i: ("FAIL", "ring.c:9: mmap failed: -ENOSYS") for i in range(12)}
    cases["R.Group.A"] = ("FAIL", "group_close.c:14: count 0, expected 1")
    cases["R.Group.B"] = ("FAIL", "group_close.c:14: count 2, expected 1")
    cases["R.Other"] = ("CRASH", "killed by signal 11")
    cases["R.Fine"] = ("PASS", "")
    feats = {cid: ["mmap"] for cid in cases if cid.startswith("R.Mmap")}
    feats["R.Fine"] = ["counting"]
    return results_file(tmp_path / "mine.json", cases, calls=enosys_mmap(12),
                        features=["counting", "mmap"], case_features=feats)


def summary(out: pathlib.Path) -> dict[str, Any]:
    return json.loads((out / "summary.json").read_text())


def test_gating_problems_group_under_root_cause_and_check_site(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = mmap_run(tmp_path)
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=", "import:" + res)
    assert rc == 1
    impl = summary(tmp_path / "out")["implementations"][0]
    titles = [(g["title"], len(g["problems"])) for g in impl["problem_groups"]]
    assert titles == [("root cause: mmap answered every call (12 in 12 cases) with -ENOSYS", 12),
                      ("check site group_close.c:14", 2), ("failures", 1)]
    # The advice once a group, without Markdown backticks; the flat list keeps every case.
    assert text.count("no expectations file for mine") == 3 and "`" not in text
    assert len(impl["problems"]) == 15
    md = (tmp_path / "out" / "report.md").read_text()
    assert md.index("root cause: mmap") < md.index("check site group_close.c:14")


def test_a_root_cause_names_what_it_explains_and_the_features_it_makes_moot(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = mmap_run(tmp_path)
    run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations", "mine=",
        "import:" + res)
    cause = summary(tmp_path / "out")["implementations"][0]["root_causes"][0]
    assert (cause["entry"], cause["errno"]) == ("mmap", "ENOSYS")
    assert len(cause["explains"]) == 12 and cause["moot_features"] == ["mmap"]
    assert cause["accepted"] is None and "'@root-cause mmap ENOSYS # why'" in cause["line"]
    for name in ("report.md", "report.html"):
        assert "makes the claimed feature(s) mmap moot" in (tmp_path / "out" / name).read_text()


def test_one_root_cause_line_explains_its_cases(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = mmap_run(tmp_path)
    exp = tmp_path / "mine.txt"
    exp.write_text("@root-cause mmap ENOSYS  # no ring buffer yet\n"
                   "R.Group.*  # close does not fold the group yet\n"
                   "R.Other  # crashes in our poll\n")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=%s" % exp, "import:" + res)
    assert rc == 0, text
    s = summary(tmp_path / "out")
    assert s["implementations"][0]["counts"]["xfail"] == 15
    r = s["cases"]["R.Mmap.03"]["results"]["mine"]
    assert r["status"] == "XFAIL" and r["expectation"]["line"] == 1
    assert r["expectation"]["reason"] == "no ring buffer yet"
    assert s["implementations"][0]["root_causes"][0]["accepted"].endswith("mine.txt:1")


def test_a_root_cause_line_uses_the_cases_own_tallies_when_written(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The runner's per-case tally decides, not the message: a case whose mmap answered
    ENOSYS is explained though its message does not say so, one whose mmap worked is not."""
    cases = {"R.A.%d" % i: ("FAIL", "no sample") for i in range(3)}
    cases["R.B"] = ("FAIL", "said ENOSYS, but mmap worked")
    tallies = {"R.A.%d" % i: {"mmap": "ENOSYS"} for i in range(3)}
    res = results_file(tmp_path / "mine.json", cases, failed_calls=tallies)
    exp = tmp_path / "mine.txt"
    exp.write_text("@root-cause mmap -ENOSYS  # no ring\n")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=%s" % exp, "import:" + res)
    assert rc == 1
    got = {c: v["results"]["mine"]["status"] for c, v in summary(tmp_path / "out")["cases"].items()}
    assert got == {"R.A.0": "XFAIL", "R.A.1": "XFAIL", "R.A.2": "XFAIL", "R.B": "FAIL"}


@pytest.mark.parametrize("line, why", [
    ("@root-cause mmap # x", "'@root-cause ENTRY ERRNO'"),
    ("@root-cause fork ENOSYS # x", "ENTRY one of open"),
    ("@root-cause mmap enosys # x", "ERRNO a name such as ENOSYS"),
    ("@root-cause mmap ENOWHAT # x", "ERRNO a name such as ENOSYS"),
    ("@root-cause mmap ENOSYS", "needs a reason"),
])
def test_bad_root_cause_lines_fail_the_gate(line: str, why: str, tmp_path: pathlib.Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    res = results_file(tmp_path / "mine.json", {"R.A": ("PASS", "")})
    exp = tmp_path / "mine.txt"
    exp.write_text(line + "\n")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=%s" % exp, "import:" + res)
    assert rc == 1 and why in text, text


def test_a_root_cause_line_that_explains_nothing_is_stale(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = results_file(tmp_path / "mine.json", {"R.A": ("PASS", "")})
    exp = tmp_path / "mine.txt"
    exp.write_text("@root-cause mmap ENOSYS  # no ring\n")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=%s" % exp, "import:" + res)
    assert rc == 1 and "'@root-cause mmap ENOSYS' explains no failing case" in text


def test_an_enosys_draft_is_one_line_per_cause_and_gates_green(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = mmap_run(tmp_path)
    exp = tmp_path / "mine.txt"
    rc, text = run(capsys, "expectations", res, "--write", str(exp))
    assert rc == 0, text
    body = [l for l in exp.read_text().splitlines() if l and not l.startswith("#")]
    assert body[2].startswith("@root-cause mmap ENOSYS  # draft: explains 12 failing case(s)")
    assert not any(l.startswith("R.Mmap") for l in body)
    drafted = exp.read_text()
    assert "# check site group_close.c:14" in drafted
    assert drafted.index("R.Group.A") < drafted.index("R.Other")
    # As drafted, the file gates the run green, with a warning about its draft reasons.
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=%s" % exp, "import:" + res)
    assert rc == 0, text
    assert "warning: 5 line(s) of %s still have a 'draft:' reason" % exp in text
    # --strict refuses them, naming each line.
    rc, text = run(capsys, "report", "--strict", "--out", str(tmp_path / "out"),
                   "--expectations", "mine=%s" % exp, "import:" + res)
    assert rc == 1 and "--strict wants the real reasons" in text and "mine.txt:3" in text
    # An update keeps the cause's line and adds no case it explains.
    rc, _ = run(capsys, "expectations", res, "--write", str(exp))
    assert rc == 0 and exp.read_text() == drafted


def test_diff_groups_regressions_by_check_site(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {"R.G.%d" % i: ("PASS", "") for i in range(5)}
    before["R.Solo"] = ("PASS", "")
    after = {"R.G.%d" % i: ("FAIL", "group_close.c:14: count %d, expected 1" % i)
             for i in range(5)}
    after["R.Solo"] = ("FAIL", "reset.c:3: not zero")
    a = results_file(tmp_path / "a.json", before)
    b = results_file(tmp_path / "b.json", after)
    rc, text = run(capsys, "diff", a, b)
    assert rc == 1
    lines = text.splitlines()
    assert "  regression: 5 case(s) at group_close.c:14" in lines
    assert lines.count("              now FAIL: group_close.c:14: count 0, expected 1") == 1
    assert "                R.G.4" in lines and "  regression: R.Solo" in lines
    assert len(lines) == 1 + 2 + 5 + 3 + 1
