"""The plugin runner (//conformance/adapters/plugin:pecs-plugin): it refuses an object it
cannot trust with exit status 2 and one clear line, and survives a plugin that crashes
inside a case (CRASH for that case, the run goes on)."""
import pathlib
import json
import os
import subprocess

import pytest


def locate(rel: str) -> str:
    """A built file: in Bazel's runfiles (the test's working directory) or bazel-bin/."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for base in (os.getcwd(), os.path.join(root, "bazel-bin")):
        path = os.path.join(base, rel)
        if os.path.exists(path):
            return os.path.abspath(path)
    pytest.skip("%s is not built (bazel build //conformance/adapters/... //examples/...)" % rel)


RUNNER = "conformance/adapters/plugin/pecs-plugin"


def run_plugin(plugin: str, *args: str, timeout: int=300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([locate(RUNNER), "--plugin", plugin] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)


@pytest.mark.parametrize("kind, reason", [
    ("small", "vtable size 40 is smaller than the first version's mandatory part"),
    ("trailing", "past the 144 this suite knows, is not zero"),
    ("nosymbol", "does not export pecs_plugin_impl()"),
])
def test_a_bad_vtable_is_refused_with_its_reason(kind: str, reason: str) -> None:
    so = locate("examples/refused_plugins/librefused_%s.so" % kind)
    r = run_plugin(so, "--list")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "pecs: plugin:" in r.stderr and reason in r.stderr, r.stderr
    assert so in r.stderr  # the message names the object it refused
    assert r.stdout == ""  # nothing that could be mistaken for a result


def test_the_driver_calls_a_refused_plugin_a_setup_error(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing ran, so nothing regressed: exit 2, one line with the runner's reason, no
    report (not "bad: no cases: FAIL")."""
    from pecs_harness import cli
    so = locate("examples/refused_plugins/librefused_small.so")
    rc = cli.main(["run", "--out", str(tmp_path / "out"), "--impl", "plugin:bad=" + so,
                   "--runner", "plugin=" + locate(RUNNER)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith("pecs_harness: bad: the runner cannot start") and "vtable size 40" in err
    assert not (tmp_path / "out").exists()


def test_a_missing_file_is_refused() -> None:
    r = run_plugin("/nonexistent/libnothing.so", "--list")
    assert r.returncode == 2
    assert "cannot load /nonexistent/libnothing.so" in r.stderr
    assert "No such file" in r.stderr


def test_no_plugin_at_all_is_refused() -> None:
    env = dict(os.environ)
    env.pop("PECS_PLUGIN", None)
    r = subprocess.run([locate(RUNNER), "--list"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60)
    assert r.returncode == 2
    assert "no plugin given" in r.stderr


def test_pecs_plugin_variable_works_like_the_option() -> None:
    so = locate("examples/starnix_snapshot/libstarnix_snapshot.so")
    env = dict(os.environ, PECS_PLUGIN=so)
    r = subprocess.run([locate(RUNNER), "--list"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "Required.Read.Reset.ZeroesCountKeepsTimes" in r.stdout


def test_a_crash_in_one_entry_costs_only_the_case_that_calls_it(tmp_path: pathlib.Path) -> None:
    """libcrashy_plugin.so passes everything to the kernel but dereferences NULL in write(),
    which the write-refusal case calls: that case must be CRASH, the rest must still run."""
    so = locate("examples/crashy_plugin/libcrashy_plugin.so")
    out = tmp_path / "crashy.json"
    filt = "Required.Read.*,Required.Ioctl.Enable.*"
    listed = run_plugin(so, "--list", "--filter", filt)
    assert listed.returncode == 0, listed.stderr
    ids = [l.split("\t")[0] for l in listed.stdout.splitlines() if l.strip()]
    assert "Required.Read.Write.IsEinval" in ids
    r = run_plugin(so, "--isolate", "--quiet", "--filter", filt, "--json", str(out))
    assert r.returncode == 1, r.stdout + r.stderr  # the crash fails the run...
    res = json.loads(out.read_text())
    assert [x["id"] for x in res["results"]] == ids  # ...and every case still ran
    by_id = {x["id"]: x for x in res["results"]}
    crash = by_id["Required.Read.Write.IsEinval"]
    assert crash["status"] == "CRASH" and crash["raw_status"] == "CRASH", crash
    assert "signal 11" in crash["message"]
    # Only cases that write can have crashed; the others ran to a verdict of their own.
    crashed = [x["id"] for x in res["results"] if x["status"] == "CRASH"]
    assert all(".Write." in i for i in crashed), crashed
    assert res["counts"]["crashed"] == len(crashed)
    assert res["counts"]["passed"] >= 10, res["counts"]
