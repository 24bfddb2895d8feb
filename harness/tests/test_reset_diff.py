"""diff over two runs of one implementation: a kernel-forwarding plugin
(examples/reset_break) with and without a broken PERF_EVENT_IOC_RESET. The diff names as
regressions exactly the cases whose failure is the RESET call, and gates."""
import json
import os
import pathlib
import subprocess

import pytest

from pecs_harness import cli, diff
from pecs_harness.cli import ROOT


def built(*rel: str) -> str:
    for base in (ROOT, os.path.join(ROOT, "bazel-bin")):
        path = os.path.join(base, *rel)
        if os.path.isfile(path):
            return path
    pytest.skip("not built: %s" % os.path.join(*rel))


def run_plugin(out: pathlib.Path, broken: bool) -> str:
    env = dict(os.environ)
    env.pop("PECS_BREAK_RESET", None)
    if broken:
        env["PECS_BREAK_RESET"] = "1"
    subprocess.run([built("conformance", "adapters", "plugin", "pecs-plugin"), "--plugin",
                    built("examples", "reset_break", "libreset_break.so"), "--isolate",
                    "--quiet", "--json", str(out)], env=env, capture_output=True, timeout=1800)
    assert out.is_file()
    return str(out)


def test_the_diff_lists_exactly_the_reset_cases_as_regressions(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = run_plugin(tmp_path / "good.json", broken=False)
    bad = run_plugin(tmp_path / "bad.json", broken=True)
    after = json.loads(pathlib.Path(bad).read_text())
    # The cases whose failure is the RESET call, judged from the broken run's messages.
    reset = sorted(r["id"] for r in after["results"]
                   if r["raw_status"] in ("FAIL", "BROKEN") and "RESET" in r["message"])
    d = diff.compare(diff.load(good, None), diff.load(bad, None))
    assert reset and d.regressions == reset
    assert "Required.Ioctl.Reset.ZeroesCountKeepsTimes" in d.regressions
    assert not d.fixes and not d.not_run and not d.new_failing
    assert cli.main(["diff", good, bad]) == 1
    assert cli.main(["diff", good, good]) == 0
    capsys.readouterr()


def test_the_timeout_covers_the_startup_probes(tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, PECS_HANG_FACTS="1")
    r = subprocess.run([built("conformance", "adapters", "plugin", "pecs-plugin"), "--plugin",
                        built("examples", "reset_break", "libreset_break.so"), "--timeout", "2",
                        "--json", str(tmp_path / "r.json")], env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 2, r
    assert "did not answer the startup probes" in r.stderr
    assert not (tmp_path / "r.json").exists()
