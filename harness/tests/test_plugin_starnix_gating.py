"""Gating with the divergent example: examples/starnix_snapshot run through the plugin runner
against conformance/expectations/starnix_snapshot.txt. The committed file makes the run pass;
an edited copy must fail it, with a message that says what to fix, for each of: a listed
case that passes (XPASS), a line that matches no case (stale), and a failing case that is
no longer listed."""
import pathlib
import json
import os
import re
import subprocess
from typing import Any

import pytest

from test_plugin_loader import locate

RUNNER = "conformance/adapters/plugin/pecs-plugin"
PLUGIN = "examples/starnix_snapshot/libstarnix_snapshot.so"


def expectations_file() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for base in (os.getcwd(), root):
        path = os.path.join(base, "conformance/expectations/starnix_snapshot.txt")
        if os.path.exists(path):
            return path
    pytest.skip("conformance/expectations/starnix_snapshot.txt not found")


# The run's exit status, its console output and its results file.
Outcome = tuple[int, str, dict[str, Any]]


def run(expectations: str | os.PathLike[str], out: str | os.PathLike[str]) -> Outcome:
    r = subprocess.run([locate(RUNNER), "--plugin", locate(PLUGIN), "--isolate", "--quiet",
                        "--expectations", str(expectations), "--json", str(out)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=600)
    with open(str(out)) as f:
        return r.returncode, r.stdout + r.stderr, json.load(f)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    out = tmp_path_factory.mktemp("base") / "starnix.json"
    return run(expectations_file(), out)


def listed_lines() -> list[str]:
    return [l for l in open(expectations_file()).read().splitlines()
            if l.strip() and not l.lstrip().startswith("#")]


def test_the_committed_expectations_make_the_run_pass(baseline: Outcome) -> None:
    rc, text, res = baseline
    assert rc == 0, text
    c = res["counts"]
    assert c["failed"] == 0 and c["xpass"] == 0 and c["stale"] == 0, c
    assert c["broken"] == 0 and c["crashed"] == 0, c
    assert c["xfail"] >= 20, "the example should diverge in many places: %s" % c
    assert c["passed"] >= 5, "and agree with Linux in some: %s" % c
    assert res["impl"] == "starnix_snapshot"


def test_every_expectation_names_the_snapshots_bug(baseline: Outcome) -> None:
    # The Fuchsia bug the seed's track_stub ties to the gap, or, for a gap no bug tracks,
    # the seed code that makes it.
    for line in listed_lines():
        reason = line.split("#", 1)[1]
        assert re.search(r"fxbug\.dev/\d{9}\b|starnix_perf_mod\.rs \w", reason), line


def test_every_failure_is_a_documented_quirk_and_the_file_is_current(baseline: Outcome, tmp_path: pathlib.Path) -> None:
    """examples/starnix_snapshot/expectations.py explains each failure by a quirk of the
    snapshot (or exits 1), and what it writes is the committed file."""
    here = os.path.dirname(os.path.abspath(__file__))
    script = next(p for p in (os.path.join(os.getcwd(), "examples/starnix_snapshot/expectations.py"),
                              os.path.join(here, "../../examples/starnix_snapshot/expectations.py"))
                  if os.path.exists(p))
    _, _, res = baseline
    results = tmp_path / "results.json"
    results.write_text(json.dumps(res))
    r = subprocess.run(["/usr/bin/python3", script, str(results)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == open(expectations_file()).read().strip()


def test_each_documented_quirk_shows_up_as_an_xfail(baseline: Outcome) -> None:
    _, _, res = baseline
    xfail = {r["id"]: r for r in res["results"] if r["status"] == "XFAIL"}
    msgs = " | ".join(r["message"] for r in xfail.values())
    assert "-ENOSYS" in msgs  # ENOSYS ioctls and PERF_FORMAT_GROUP
    for bug in ("404941053", "402238049", "402938671", "402453955", "409621963"):
        assert any(bug in r["expectation"]["reason"] for r in xfail.values()), bug


def test_a_listed_case_that_passes_fails_the_run_as_xpass(baseline: Outcome, tmp_path: pathlib.Path) -> None:
    _, _, res = baseline
    passing = next(r["id"] for r in res["results"] if r["status"] == "PASS")
    exp = tmp_path / "starnix.txt"
    exp.write_text(open(expectations_file()).read() + "%s  # pretend it fails\n" % passing)
    rc, text, got = run(exp, tmp_path / "out.json")
    assert rc == 1, text
    r = next(x for x in got["results"] if x["id"] == passing)
    assert r["status"] == "XPASS" and r["raw_status"] == "PASS"
    assert "but it passed: delete that line" in r["message"]
    assert "XPASS %s" % passing in text
    assert got["counts"]["xpass"] == 1 and got["ok"] is False


def test_a_line_matching_no_case_fails_the_run_as_stale(tmp_path: pathlib.Path) -> None:
    exp = tmp_path / "starnix.txt"
    exp.write_text(open(expectations_file()).read() +
                   "Required.No.Such.Case  # fxbug.dev/000000000 removed long ago\n")
    rc, text, got = run(exp, tmp_path / "out.json")
    assert rc == 1, text
    assert "'Required.No.Such.Case' matches no case in this suite" in text
    assert got["counts"]["stale"] == 1
    assert [s["pattern"] for s in got["stale"]] == ["Required.No.Such.Case"]


def test_a_failing_case_no_longer_listed_fails_the_run(baseline: Outcome, tmp_path: pathlib.Path) -> None:
    _, _, res = baseline
    victim = next(r for r in res["results"] if r["status"] == "XFAIL")
    lines = open(expectations_file()).read().splitlines(True)
    kept = [l for l in lines if not l.startswith(victim["id"] + " ")]
    assert len(kept) == len(lines) - 1, "expected one exact line for %s" % victim["id"]
    exp = tmp_path / "starnix.txt"
    exp.write_text("".join(kept))
    rc, text, got = run(exp, tmp_path / "out.json")
    assert rc == 1, text
    r = next(x for x in got["results"] if x["id"] == victim["id"])
    assert r["status"] == "FAIL" and r["expectation"] is None
    # Same failure as before (file:line), now ungated.
    assert r["message"].split(": ")[0] == victim["message"].split(": ")[0]
    assert "FAIL        %s" % victim["id"] in text
    assert got["counts"]["failed"] == 1
