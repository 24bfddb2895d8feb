"""The closing line of ./pecs test: Bazel's logs, the JUnit files of steps outside Bazel
(the stress mode) and the steps that failed all count in it."""
import pathlib
import os
import subprocess
import sys

from pecs_harness import cli

TOOL = os.path.join(cli.ROOT, "harness", "tools", "testlog_summary.py")

JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite name="stress.x">
<testcase classname="stress.x" name="A"/>
<testcase classname="stress.x" name="B"><failure message="verdict changed"/></testcase>
<testcase classname="stress.x" name="C"><skipped/></testcase>
</testsuite></testsuites>
"""


def summary(tmp_path: pathlib.Path, *args: str) -> tuple[int, str]:
    p = subprocess.run([sys.executable, TOOL, str(tmp_path / "no-testlogs")] + list(args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, p.stdout


def test_a_junit_file_counts_its_cases(tmp_path: pathlib.Path) -> None:
    j = tmp_path / "stress.xml"
    j.write_text(JUNIT)
    rc, out = summary(tmp_path, "--junit", str(j))
    assert rc == 1
    assert out.strip().splitlines()[-1] == "tests: 1 passed, 1 failed, 1 skipped"
    j.write_text(JUNIT.replace('<failure message="verdict changed"/>', ""))
    rc, out = summary(tmp_path, "--junit", str(j))
    assert rc == 0 and out.strip().endswith("tests: 2 passed, 0 failed, 1 skipped")


def test_a_failed_step_and_a_missing_junit_file_are_failures(tmp_path: pathlib.Path) -> None:
    j = tmp_path / "stress.xml"
    j.write_text(JUNIT.replace('<failure message="verdict changed"/>', ""))
    rc, out = summary(tmp_path, "--junit", str(j), "--failed-step", "asan")
    assert rc == 1
    assert "failing step: asan" in out
    assert out.strip().endswith("tests: 2 passed, 1 failed, 1 skipped")
    rc, out = summary(tmp_path, "--junit", str(j), "--junit", str(tmp_path / "never-written.xml"))
    assert rc == 1 and "no cases in" in out
    assert out.strip().endswith("tests: 2 passed, 1 failed, 1 skipped")
