"""The driver end to end against the toy suite (harness/tests/toy): running, gating,
importing results written elsewhere, shards, refusals and progress."""
import argparse
import pathlib
import json
import os
import shutil
import subprocess
import sys
from typing import Any

import pytest

from pecs_harness import cli, testing

HARNESS = os.path.dirname(os.path.dirname(os.path.abspath(cli.__file__)))


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> str:
    return testing.toy_runner(str(tmp_path_factory.mktemp("toy")))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out + out.err


def toy_args(toy: str, out: str | os.PathLike[str], exp: str | os.PathLike[str]=testing.TOY_EXPECTATIONS, *more: str) -> list[str]:
    return ["run", "--out", str(out), "--impl", "syscall", "--runner", "syscall=" + toy,
            "--expectations", "syscall=" + str(exp)] + list(more)


def summary(out: str | os.PathLike[str]) -> dict[str, Any]:
    with open(os.path.join(str(out), "summary.json")) as f:
        return json.load(f)


def edited_expectations(tmp_path: pathlib.Path, extra: str="", drop: str | None=None) -> pathlib.Path:
    lines = open(testing.TOY_EXPECTATIONS).read().splitlines(True)
    if drop:
        lines = [l for l in lines if not l.startswith(drop)]
    p = tmp_path / "toy.txt"
    p.write_text("".join(lines) + extra)
    return p


def test_a_clean_run_passes_and_writes_every_output(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = run(capsys, *toy_args(toy, tmp_path / "out"))
    assert rc == 0, text
    for name in ("report.md", "report.html", "summary.json", "syscall.json"):
        assert (tmp_path / "out" / name).is_file(), name
    s = summary(tmp_path / "out")
    counts = s["implementations"][0]["counts"]
    assert counts == {"passed": 2, "failed": 0, "xfail": 3, "xpass": 0, "unsupported": 1,
                      "env_skipped": 1, "broken": 0, "crashed": 0, "stale": 0}
    crash = s["cases"]["Required.Toy.Verdict.Crashes"]["results"]["syscall"]
    assert crash["raw_status"] == "CRASH" and crash["status"] == "XFAIL"
    assert "signal 11" in crash["message"]
    # The console: the table and where the report is.
    assert "report: %s" % os.path.join(str(tmp_path / "out"), "report.html") in text
    assert "verdict: PASS" in text
    assert any(l.startswith("syscall ") and l.rstrip().endswith("ok") for l in text.splitlines())


def test_without_expectations_the_failures_fail_the_run(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = run(capsys, *toy_args(toy, tmp_path / "out", ""))
    assert rc == 1
    c = summary(tmp_path / "out")["implementations"][0]["counts"]
    assert (c["failed"], c["crashed"], c["broken"]) == (1, 1, 1)
    assert "FAIL Required.Toy.Verdict.Fails" in text
    assert "CRASH Required.Toy.Verdict.Crashes" in text
    assert "verdict: FAIL" in text


def test_gating_a_listed_case_that_passes_is_xpass(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = edited_expectations(tmp_path, "Required.Toy.Open.TaskClock  # thought broken\n")
    rc, text = run(capsys, *toy_args(toy, tmp_path / "out", exp))
    assert rc == 1
    s = summary(tmp_path / "out")
    assert s["implementations"][0]["counts"]["xpass"] == 1
    r = s["cases"]["Required.Toy.Open.TaskClock"]["results"]["syscall"]
    assert r["status"] == "XPASS"
    assert "but it passed: delete that line" in r["message"]
    assert "%s:5" % exp in r["message"]
    assert "XPASS Required.Toy.Open.TaskClock" in text


def test_gating_a_line_matching_no_case_is_stale(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = edited_expectations(tmp_path, "Required.Toy.NoSuch.Case  # renamed long ago\n")
    rc, text = run(capsys, *toy_args(toy, tmp_path / "out", exp))
    assert rc == 1
    impl = summary(tmp_path / "out")["implementations"][0]
    assert impl["counts"]["stale"] == 1
    assert any("'Required.Toy.NoSuch.Case' matches no case" in p for p in impl["problems"])
    assert "matches no case" in text


def test_gating_a_newly_failing_case_fails_the_run(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = edited_expectations(tmp_path, drop="Required.Toy.Verdict.Fails")
    rc, text = run(capsys, *toy_args(toy, tmp_path / "out", exp))
    assert rc == 1
    assert "FAIL Required.Toy.Verdict.Fails: toy_cases.c" in text
    assert "fix it or list it with a reason" in text


def test_a_filtered_run_still_finds_stale_lines_against_the_whole_suite(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = run(capsys, *toy_args(toy, tmp_path / "out", testing.TOY_EXPECTATIONS,
                                      "--filter", "Required.Toy.Open.*"))
    assert rc == 0, text
    s = summary(tmp_path / "out")
    assert sorted(s["cases"]) == ["Required.Toy.Open.BadType", "Required.Toy.Open.TaskClock"]
    assert s["implementations"][0]["counts"]["stale"] == 0


def test_results_from_elsewhere_are_gated_by_this_checkouts_file(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    # As in another system: the static binary ran with no expectations file.
    elsewhere = tmp_path / "from-emulator.json"
    subprocess.run([toy, "--isolate", "--quiet", "--json", str(elsewhere)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    assert json.loads(elsewhere.read_text())["ok"] is False
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "emu=" + testing.TOY_EXPECTATIONS, "import:emu=" + str(elsewhere))
    assert rc == 0, text
    impl = summary(tmp_path / "out")["implementations"][0]
    assert impl["label"] == "emu" and impl["kind"] == "import"
    assert impl["counts"]["xfail"] == 3


def test_shards_merge_into_one_run(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    parts = []
    for i in range(2):
        p = tmp_path / ("shard%d.json" % i)
        env = dict(os.environ, TEST_TOTAL_SHARDS="2", TEST_SHARD_INDEX=str(i))
        subprocess.run([toy, "--isolate", "--quiet", "--expectations", testing.TOY_EXPECTATIONS,
                        "--json", str(p)], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        parts.append(str(p))
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "toy=" + testing.TOY_EXPECTATIONS, "import:toy=" + ",".join(parts))
    assert rc == 0, text
    s = summary(tmp_path / "out")
    assert len(s["cases"]) == 7
    assert s["implementations"][0]["counts"]["passed"] == 2


def test_report_rerenders_a_run_directory(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert run(capsys, *toy_args(toy, out))[0] == 0
    before = summary(out)
    os.unlink(str(out / "report.html"))
    rc, text = run(capsys, "report", "--out", str(out), "--expectations",
                   "syscall=" + testing.TOY_EXPECTATIONS)
    assert rc == 0, text
    assert (out / "report.html").is_file()
    assert summary(out)["implementations"][0]["counts"] == before["implementations"][0]["counts"]


def test_a_runner_that_refuses_is_a_setup_error_in_one_line_and_no_report(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No case ran, so nothing regressed: exit 2, one line naming why, no report, and no
    other implementation run first."""
    bad = tmp_path / "refusing-runner"
    bad.write_text("#!/bin/sh\necho 'pecs: refusing the implementation: size 12 is unknown' >&2\n"
                   "exit 2\n")
    bad.chmod(0o755)
    rc, text = run(capsys, "run", "--out", str(tmp_path / "out"),
                   "--impl", "syscall", "--runner", "syscall=" + toy,
                   "--expectations", "syscall=" + testing.TOY_EXPECTATIONS,
                   "--impl", "plugin:bad=" + toy, "--runner", "plugin=" + str(bad))
    assert rc == 2
    assert text.count("\n") == 1 and "size 12 is unknown" in text and text.startswith(
        "pecs_harness: bad: the runner cannot start"), text
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("argv, why", [
    (["--impl", "plugin:mine=/no/such/libmine.so"], "mine: no plugin at /no/such/libmine.so"),
    (["--impl", "ref", "--runner", "ref=/no/such/pecs-ref"], "ref: no runner at /no/such/pecs-ref"),
    (["--impl", "nonsense"], "unknown implementation spec 'nonsense'"),
])
def test_setup_errors_exit_2_with_one_line_and_no_report(
        argv: list[str], why: str, toy: str, tmp_path: pathlib.Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = run(capsys, "run", "--out", str(tmp_path / "out"), "--runner", "plugin=" + toy,
                   *argv)
    assert (rc, text.count("\n")) == (2, 1), text
    assert why in text
    assert not (tmp_path / "out").exists()


def test_an_unknown_command_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["nosuch"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "nosuch: unknown command" in err and "run, report" in err


def test_every_command_comes_from_one_registry() -> None:
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == list(cli.COMMANDS)
    # The shared groups: every command that gates takes --strict and --expectations.
    for name in ("run", "report", "stress"):
        opts = {o for a in sub.choices[name]._actions for o in a.option_strings}
        assert {"--strict", "--expectations", "--quiet", "--root"} <= opts, name


def test_a_hanging_runner_is_stopped(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    slow = tmp_path / "hanging-runner"
    slow.write_text('#!/bin/sh\n[ "$1" = --list ] && { echo "Required.A.B.C\tfeatures=\tbehaviours="; exit 0; }\n'
                    "exec sleep 60\n")
    slow.chmod(0o755)
    rc, text = run(capsys, "run", "--out", str(tmp_path / "out"), "--impl", "ref",
                   "--runner", "ref=" + str(slow), "--run-timeout", "1")
    assert rc == 1
    assert "longer than 1s" in summary(tmp_path / "out")["implementations"][0]["error"]


def test_plugin_and_pipe_specs_drive_the_right_runners(tmp_path: pathlib.Path) -> None:
    from pecs_harness import impls
    loc = impls.Locator(str(tmp_path), overrides={"plugin": "/r/pecs-plugin", "pipe": "/r/pecs-pipe"})
    p = impls.parse("plugin:/x/libmine.so", loc)
    assert (p.label, p.argv) == ("mine", ["/r/pecs-plugin", "--plugin", "/x/libmine.so"])
    q = impls.parse("pipe:py=python3 testee.py --fast", loc)
    assert (q.label, q.argv, q.env) == ("py", ["/r/pecs-pipe"], {"PECS_TESTEE": "python3 testee.py --fast"})
    r = impls.parse("runner:" + __file__, loc)
    assert r.kind == "runner" and r.argv == [os.path.abspath(__file__)]
    with pytest.raises(impls.SpecError):
        impls.parse("runner:/no/such/pecs-x", loc)
    with pytest.raises(impls.SpecError):
        impls.parse("nonsense", loc)
    with pytest.raises(impls.SpecError) as e:
        impls.parse("ref", impls.Locator(str(tmp_path)))
    assert "bazel build" in str(e.value)


def test_runners_are_found_in_runfiles_without_bazel_bin(tmp_path: pathlib.Path) -> None:
    """`bazel run @pecs//harness:driver` from another workspace: the root is pecs's tree in
    the driver's runfiles, where the runners sit without a bazel-bin."""
    from pecs_harness import impls
    runner = tmp_path / "conformance" / "pecs-ref"
    runner.parent.mkdir()
    runner.write_text("")
    assert impls.parse("ref", impls.Locator(str(tmp_path))).argv == [str(runner)]
    (tmp_path / "bazel-bin").mkdir()   # a checkout: its bazel-bin, where nothing is built
    with pytest.raises(impls.SpecError):
        impls.parse("ref", impls.Locator(str(tmp_path)))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_the_unprivileged_run_drops_privilege(toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, text = run(capsys, "run", "--out", str(tmp_path / "out"), "--impl", "syscall-unprivileged",
                   "--runner", "syscall=" + toy, "--expectations",
                   "syscall-unprivileged=" + testing.TOY_EXPECTATIONS)
    assert rc == 0, text
    impl = summary(tmp_path / "out")["implementations"][0]
    assert impl["host"]["privileged"] is False
    assert impl["counts"]["passed"] == 2


def test_the_command_line_works_from_a_fresh_process(toy: str, tmp_path: pathlib.Path) -> None:
    env = dict(os.environ, PYTHONPATH=HARNESS)
    p = subprocess.run([sys.executable, "-m", "pecs_harness", "--help"], env=env,
                       stdout=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0 and "crosscheck" in p.stdout and "pipe:" in p.stdout
    p = subprocess.run([sys.executable, "-m", "pecs_harness"] +
                       toy_args(toy, tmp_path / "out", testing.TOY_EXPECTATIONS, "--timeout", "5"),
                       env=env, stdout=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stdout
    assert "syscall: 7 case(s)" in p.stdout


def test_pecs_vectors_imports_nothing_of_the_driver() -> None:
    """The vector tools stand below the driver: pecs_harness may use them, not the reverse."""
    vectors = os.path.join(HARNESS, "pecs_vectors")
    for dirpath, _, files in os.walk(vectors):
        for name in files:
            if name.endswith(".py"):
                text = open(os.path.join(dirpath, name), encoding="utf-8").read()
                assert "import pecs_harness" not in text and "from pecs_harness" not in text, name
