"""examples/fault_injection: the static binary under strace fault injection reaches a green
gate with its committed expectations files, and the report names each root cause."""
import json
import os
import pathlib
import shutil
import subprocess
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
