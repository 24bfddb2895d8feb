"""The stress mode: verdicts compared over runs, the exit code, the JUnit tally and the busy
loops. A fake runner (a script speaking the runner's command line) gives verdicts chosen
per run, so a flip is certain rather than hoped for."""
import pathlib
import json
import os
import time
import xml.etree.ElementTree as ET

import pytest

from pecs_harness import cli, stress
from pecs_harness.case_result import CaseResult

FAKE = r'''#!/usr/bin/python3
# A runner whose verdict for one case depends on the run: the count of runs so far is kept
# in a file next to this script. PLAN: one status per run for Required.Fake.Case.Flips
# ("EXIT" makes that run die without results).
import json, os, sys
PLAN = %r
here = os.path.dirname(os.path.abspath(__file__))
ids = ["Required.Fake.Case.Steady", "Required.Fake.Case.Flips", "Required.Fake.Case.Skips"]
if "--list" in sys.argv:
    for i in ids:
        print(i + "\tfeatures=\tbehaviours=")
    sys.exit(0)
counter = os.path.join(here, "runs")
n = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(n + 1))
plan = PLAN[min(n, len(PLAN) - 1)]
if plan == "EXIT":
    sys.stderr.write("fake: gave up\n")
    sys.exit(3)
status = {ids[0]: "PASS", ids[1]: plan, ids[2]: "ENV_SKIP"}
results = [{"id": i, "status": status[i], "raw_status": status[i],
            "message": "" if status[i] == "PASS" else "run %%d said %%s" %% (n + 1, status[i]),
            "features": [], "behaviours": [], "expectation": None, "duration_ms": 1.0}
           for i in ids]
for r in results:
    print("%%s %%s" %% (r["status"], r["id"]))
out = sys.argv[sys.argv.index("--json") + 1]
json.dump({"format": "pecs-results-1", "impl": "fake", "features": [],
           "host": {"privileged": True, "paranoid": 2, "kernel_release": "6.18"},
           "expectations": None, "shard": {"index": 0, "total": 1}, "results": results,
           "stale": [], "counts": {}, "ok": True}, open(out, "w"))
sys.exit(0)
'''


def fake_runner(tmp_path: pathlib.Path, plan: list[str]) -> str:
    d = tmp_path / "fake"
    d.mkdir()
    p = d / "pecs-fake"
    p.write_text(FAKE % (plan,))
    p.chmod(0o755)
    return str(p)


def stress_cli(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path, runner: str, runs: int, *more: str) -> tuple[int, str]:
    rc = cli.main(["stress", "--out", str(tmp_path / "out"), "--impl", "runner:fake=" + runner,
                   "--expectations", "fake=", "--runs", str(runs), "--load", "1",
                   "--load-limit", "60", "--junit", str(tmp_path / "stress.xml")] + list(more))
    out = capsys.readouterr()
    return rc, out.out + out.err


def res(case_id: str, status: str, message: str = "") -> CaseResult:
    return CaseResult(case_id, status, status, message)


def test_a_steady_case_is_not_reported_and_a_flip_is() -> None:
    runs = [[res("A", "PASS"), res("B", "XFAIL", "slow")],
            [res("A", "PASS"), res("B", "XPASS", "listed but it passed")],
            [res("A", "PASS"), res("B", "XFAIL", "slow again")]]
    cases = {c.id: c for c in stress.compare(runs)}
    assert not cases["A"].changed()
    assert cases["B"].changed()
    assert cases["B"].seen() == [("XFAIL", 2), ("XPASS", 1)]
    # The sample is the odd one out: that is the run to explain.
    assert cases["B"].sample() == "listed but it passed"


def test_a_case_missing_from_one_run_counts_as_changed() -> None:
    cases = {c.id: c for c in stress.compare([[res("A", "PASS")], []])}
    assert cases["A"].changed()
    assert ("MISSING", 1) in cases["A"].seen()


def test_the_same_verdict_every_time_passes(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = stress_cli(capsys, tmp_path, fake_runner(tmp_path, ["PASS"]), 3)
    assert rc == 0, text
    assert "stress fake: 3 case(s) over 3 run(s) with 1 busy loop(s): 0 changed verdict" in text
    assert text.rstrip().endswith("0 case(s) changed verdict: PASS")
    for n in (1, 2, 3):
        assert (tmp_path / "out" / "fake" / ("run-%d" % n) / "fake.json").is_file()


def test_a_verdict_that_changes_fails_with_the_case_counts_and_a_message(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = stress_cli(capsys, tmp_path, fake_runner(tmp_path, ["PASS", "FAIL", "PASS"]), 3)
    assert rc == 1, text
    assert "changed: Required.Fake.Case.Flips: PASS x2, FAIL x1" in text
    assert "run 2 said FAIL" in text
    assert "Required.Fake.Case.Steady" not in text
    assert text.rstrip().endswith(
        "1 case(s) changed verdict; a run failed the gate: fake: FAIL")
    # The tally ./pecs test closes with: the flip is a failure, the steady skip a skip.
    tests = {(tc.get("classname"), tc.get("name")): tc
             for tc in ET.parse(str(tmp_path / "stress.xml")).getroot().iter("testcase")}
    assert tests[("stress.fake", "Required.Fake.Case.Flips")].find("failure") is not None
    assert tests[("stress.fake", "Required.Fake.Case.Steady")].find("failure") is None
    assert tests[("stress.fake", "Required.Fake.Case.Skips")].find("skipped") is not None
    # Run 2 also failed its gate; the whole-runs test says so.
    assert tests[("stress.fake", "AllRunsCompleteAndGate")].find("failure") is not None


def test_a_failure_in_every_run_is_steady_but_still_fails_the_gate(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = stress_cli(capsys, tmp_path, fake_runner(tmp_path, ["FAIL"]), 2)
    assert rc == 1, text
    assert "0 changed verdict" in text
    assert "gate failed in runs 1,2: FAIL Required.Fake.Case.Flips" in text


def test_a_run_that_breaks_exits_2_and_says_why(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = stress_cli(capsys, tmp_path, fake_runner(tmp_path, ["PASS", "EXIT"]), 2)
    assert rc == 2, text
    assert "run 2 broke:" in text and "fake: gave up" in text


def test_runs_must_be_positive(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = stress_cli(capsys, tmp_path, fake_runner(tmp_path, ["PASS"]), 0)
    assert rc == 2 and "--runs" in text


def _state(pid: int) -> str | None:
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None  # gone


def _reaped_or_gone(pid: int) -> bool:
    s = _state(pid)
    return s is None or s == "Z"


def test_the_busy_loops_burn_cpu_and_end_by_pid() -> None:
    loader = stress.Loader(2, 60).start()
    try:
        pids = loader.pids()
        assert len(pids) == 2
        time.sleep(1.0)
        ticks = []
        for pid in pids:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            ticks.append(int(fields[11]) + int(fields[12]))  # utime + stime
        assert all(t > 0 for t in ticks), ticks
    finally:
        loader.stop()
    assert all(_reaped_or_gone(p) for p in pids)


def test_a_busy_loop_ends_by_itself_at_its_time_limit() -> None:
    loader = stress.Loader(1, 0.5).start()
    try:
        proc = loader.procs[0]
        proc.wait(timeout=30)
        assert proc.returncode == 0
    finally:
        loader.stop()


def test_no_load_starts_nothing() -> None:
    with stress.Loader(0, 10) as loader:
        assert loader.pids() == []
