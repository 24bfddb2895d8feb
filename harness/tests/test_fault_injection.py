"""examples/fault_injection: the static binary under strace fault injection reaches a green
gate with its committed expectations files, and the report names each root cause."""
import json
import os
import pathlib
import shutil
import re
import subprocess
import time
from typing import Any

import pytest

from pecs_harness.cli import ROOT


def static_binary() -> str:
    for base in (ROOT, os.path.join(ROOT, "bazel-bin")):
        path = os.path.join(base, "conformance", "pecs-syscall-static")
        if os.path.isfile(path):
            return path
    pytest.skip("the static binary is not built (bazel build //conformance:pecs-syscall-static)")


def run_scenarios(tmp_path: pathlib.Path, scenarios: str) -> tuple[str, dict[str, Any]]:
    """run.sh on these scenarios, which must pass their gates: its console output and the
    summary's implementations by label (exactly the scenarios asked for)."""
    script = os.path.join(ROOT, "examples", "fault_injection", "run.sh")
    env = dict(os.environ, PECS_SCENARIOS=scenarios)
    r = subprocess.run([script, static_binary(), str(tmp_path)], env=env, capture_output=True,
                       text=True, timeout=1200)
    assert r.returncode == 0, r.stdout + r.stderr
    s = json.loads((tmp_path / "summary.json").read_text())
    impls = {i["label"]: i for i in s["implementations"]}
    assert set(impls) == set(scenarios.split())
    return r.stdout, impls


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (apt-get install strace)")
def test_the_strace_scenarios_pass_their_gates_and_name_their_root_causes(
        tmp_path: pathlib.Path) -> None:
    out, impls = run_scenarios(tmp_path, "linux strace-enosys strace-enotty")
    assert impls["linux"]["root_cause"] is None
    assert " with -ENOSYS" in impls["strace-enosys"]["root_cause"]
    assert impls["strace-enosys"]["root_cause"].startswith("open answered every call")
    assert impls["strace-enotty"]["root_cause"].startswith("ioctl answered every call")
    assert impls["strace-enosys"]["counts"]["passed"] == 0
    assert impls["strace-enotty"]["counts"]["xfail"] > 100
    assert "root cause: open answered every call" in out


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace (apt-get install strace)")
def test_the_first_line_says_when_perf_event_open_is_missing(tmp_path: pathlib.Path) -> None:
    """Under injected ENOSYS the startup probe says so in the run's first line; with the
    call there (ENOTTY only on ioctl) it says nothing."""
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                        "inject=perf_event_open:error=ENOSYS", static_binary(), "--filter",
                        "Required.Read.Group.*"], capture_output=True, text=True, timeout=300)
    assert r.stdout.splitlines()[0] == (
        "pecs: perf_event_open is missing: syscall answered the startup probe (a user-only "
        "task clock) with ENOSYS, so every case that opens an event fails with it")
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                        "inject=ioctl:error=ENOTTY", static_binary(), "--filter",
                        "Required.Read.Group.*"], capture_output=True, text=True, timeout=300)
    assert "is missing" not in r.stdout
    assert r.stdout.startswith("pecs: suite ")


def test_a_run_killed_mid_way_leaves_its_tap_and_json(tmp_path: pathlib.Path) -> None:
    """The static binary killed after a few cases: its TAP has the version line, the plan
    and a line per case done, in that order, and its JSON parses, holds those cases and says
    how many it lacks; the harness reads it and fails the gate for it."""
    from pecs_harness import gating, results
    tap, out = tmp_path / "run.tap", tmp_path / "run.json"
    p = subprocess.Popen([static_binary(), "--tap", str(tap), "--json", str(out), "--quiet"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            if tap.exists() and tap.read_text().count("ok ") >= 5 and out.exists():
                break
            assert p.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
    finally:
        p.kill()
        p.wait()
    lines = tap.read_text().splitlines()
    assert lines[0] == "TAP version 13"
    assert re.fullmatch(r"1\.\.\d+", lines[1])
    planned = int(lines[1][3:])
    done = [int(m.group(1)) for m in (re.match(r"(?:not )?ok (\d+) ", l) for l in lines) if m]
    assert done == list(range(1, len(done) + 1))
    assert len(done) < planned
    data = results.load(str(out))
    # The JSON follows each TAP line: it may lag the kill by the case in hand.
    assert len(done) - 1 <= len(data["results"]) <= len(done)
    # No expectations file: the plan counts the cases alone.
    assert data["incomplete"] == {"done": len(data["results"]), "selected": planned}
    run = gating.gate(results.Run("cut", "import", str(out), data),
                      {r["id"] for r in data["results"]})
    assert not run.ok
    assert any("stopped after %d of" % len(data["results"]) in p for p in run.problems)

