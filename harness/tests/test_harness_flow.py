"""Runs you can compare and root causes: the suite version in results and summary, the
diff command, the combined run's JUnit, root causes from the entry points' tallies, and
imported results keeping their own name."""
import json
import os
import pathlib
import subprocess
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from pecs_harness import cli, diff, results, rootcause, testing


@pytest.fixture(scope="module")
def toy(tmp_path_factory: pytest.TempPathFactory) -> str:
    return testing.toy_runner(str(tmp_path_factory.mktemp("toy")))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    rc = cli.main(list(argv))
    out = capsys.readouterr()
    return rc, out.out + out.err


def results_file(path: pathlib.Path, cases: dict[str, tuple[str, str, str]], impl: str = "mine",
                 version: str = "abc123", calls: dict[str, Any] | None = None,
                 expectations: str | None = None) -> str:
    """A pecs-results-1 file: cases id -> (status, raw_status, message)."""
    doc: dict[str, Any] = {
        "format": "pecs-results-1", "suite_version": version, "impl": impl, "features": [],
        "host": {"privileged": True, "kernel_release": "6.1.0", "paranoid": 2},
        "expectations": expectations, "shard": {"index": 0, "total": 1},
        "results": [{"id": cid, "status": s, "raw_status": raw, "message": m, "features": [],
                     "behaviours": [], "expectation": None} for cid, (s, raw, m) in cases.items()],
        "stale": [], "expectation_errors": [], "counts": {}, "ok": True}
    if calls is not None:
        doc["calls"] = calls
    path.write_text(json.dumps(doc))
    return str(path)


def tally(calls: int, ok: int, cases: int, errno: str | None, mixed: bool = False) -> dict[str, Any]:
    return {"calls": calls, "ok": ok, "cases": cases, "errno": errno, "mixed": mixed}


# ---- the suite version ----

def test_the_runner_prints_and_writes_its_version(toy: str, tmp_path: pathlib.Path) -> None:
    out = subprocess.run([toy, "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("pecs suite "), out
    version = out.stdout.split()[2]
    res = tmp_path / "r.json"
    subprocess.run([toy, "--quiet", "--isolate", "--json", str(res)], capture_output=True)
    assert json.loads(res.read_text())["suite_version"] == version


def test_summary_records_the_checkout_and_each_runners_version(
        toy: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = results_file(tmp_path / "mine.json", {"A.B.C": ("PASS", "PASS", "")}, version="v1")
    # Outside a git checkout the version is "unknown", never an error.
    root = tmp_path / "notacheckout"
    (root / "docs").mkdir(parents=True)
    rc, text = run(capsys, "report", "--root", str(root), "--out", str(tmp_path / "out"),
                   "import:" + res)
    assert rc == 0, text
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert s["suite_version"] == "unknown"
    assert s["implementations"][0]["suite_version"] == "v1"
    assert "runners: mine v1" in (tmp_path / "out" / "report.md").read_text()


# ---- imported results keep their name ----

def test_an_imported_file_is_named_after_itself_not_the_adapter(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    # The static binary inside qemu says impl "syscall"; gating it with Linux's own file
    # would list qemu's failures as Linux's.
    res = results_file(tmp_path / "qemu.json", {"Required.X.Y.Z": ("FAIL", "FAIL", "boom")},
                       impl="syscall", expectations="/elsewhere/qemu.txt")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "import:" + res)
    assert rc == 1
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    impl = s["implementations"][0]
    assert impl["label"] == "qemu"
    assert "syscall.txt" not in json.dumps(impl)
    assert "object at" not in text and "object at" not in json.dumps(s)


def test_two_imports_kept_as_written_print_no_python_object(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = results_file(tmp_path / "a.json", {"Required.X.Y.Z": ("FAIL", "FAIL", "boom")},
                     expectations="/elsewhere/x.txt")
    b = results_file(tmp_path / "b.json", {"Required.X.Y.Z": ("PASS", "PASS", "")},
                     expectations="/elsewhere/x.txt")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "import:before=" + a,
                   "import:after=" + b)
    assert rc == 1
    assert "object at" not in text
    assert "object at" not in (tmp_path / "out" / "report.md").read_text()


# ---- diff ----

CASES_A = {"R.Ioctl.Reset.Zero": ("PASS", "PASS", ""), "R.Ioctl.Reset.Group": ("PASS", "PASS", ""),
           "R.Read.Fixed": ("FAIL", "FAIL", "got 1"), "R.Read.Known": ("XFAIL", "FAIL", "got 2"),
           "R.Read.Same": ("XFAIL", "FAIL", "got 3"), "R.Mmap.Lost": ("PASS", "PASS", ""),
           "R.Skip.Both": ("UNSUPPORTED", "UNSUPPORTED", "no feature")}
CASES_B = {"R.Ioctl.Reset.Zero": ("FAIL", "FAIL", "count 5 after reset"),
           "R.Ioctl.Reset.Group": ("CRASH", "CRASH", "signal 11"),
           "R.Read.Fixed": ("PASS", "PASS", ""), "R.Read.Known": ("XFAIL", "FAIL", "got 4"),
           "R.Read.Same": ("XFAIL", "FAIL", "got 3"), "R.Mmap.Lost": ("ENV_SKIP", "ENV_SKIP", "x"),
           "R.Skip.Both": ("UNSUPPORTED", "UNSUPPORTED", "no feature"),
           "R.New.Case": ("FAIL", "FAIL", "new")}


def test_diff_names_regressions_fixes_lost_cases_and_moved_xfails(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = results_file(tmp_path / "a.json", CASES_A, version="v1")
    b = results_file(tmp_path / "b.json", CASES_B, version="v2")
    d = diff.compare(diff.load(a, None), diff.load(b, None))
    assert d.regressions == ["R.Ioctl.Reset.Group", "R.Ioctl.Reset.Zero"]
    assert d.fixes == ["R.Read.Fixed"]
    assert d.xfail_moved == ["R.Read.Known"]
    assert d.not_run == ["R.Mmap.Lost"]
    assert d.new_failing == ["R.New.Case"]
    rc, text = run(capsys, "diff", a, b)
    assert rc == 1
    assert "regression: R.Ioctl.Reset.Zero" in text and "now FAIL: count 5 after reset" in text
    assert "suite v1" in text and "suite v2" in text
    # The other way round the regressions are fixes; the case only B has is lost.
    rc, text = run(capsys, "diff", b, a)
    lines = [l.split() for l in text.splitlines()]
    assert ["fix:", "R.Ioctl.Reset.Zero"] in lines and ["fix:", "R.Ioctl.Reset.Group"] in lines
    assert ["regression:", "R.Read.Fixed"] in lines and ["not", "run:", "R.New.Case"] in lines
    assert rc == 1, text


def test_diff_of_identical_runs_passes(tmp_path: pathlib.Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    a = results_file(tmp_path / "a.json", CASES_A)
    rc, text = run(capsys, "diff", a, a)
    assert rc == 0 and "0 regression(s)" in text, text


def test_diff_reads_summaries_and_refuses_other_implementations(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = results_file(tmp_path / "a.json", CASES_A)
    b = results_file(tmp_path / "b.json", CASES_B)
    assert run(capsys, "report", "--out", str(tmp_path / "sa"), "import:x=" + a)[0] == 1
    assert run(capsys, "report", "--out", str(tmp_path / "sb"), "import:x=" + b,
               "import:y=" + a)[0] == 1
    sa, sb = str(tmp_path / "sa" / "summary.json"), str(tmp_path / "sb" / "summary.json")
    rc, text = run(capsys, "diff", sa, sb)
    assert rc == 2 and "--label" in text
    rc, text = run(capsys, "diff", "--label", "x", sa, sb)
    assert rc == 1 and "regression: R.Ioctl.Reset.Zero" in text, text
    other = results_file(tmp_path / "o.json", CASES_A, impl="theirs")
    rc, text = run(capsys, "diff", a, other)
    assert rc == 2 and "one implementation" in text


# ---- JUnit of the combined run ----

def test_the_combined_run_writes_junit_that_fails_with_the_gate(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    b = results_file(tmp_path / "b.json", CASES_B)
    exp = tmp_path / "b.txt"
    exp.write_text("R.Read.Known # a known gap\nR.Read.Same # another\n")
    assert run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
               "b=%s" % exp, "import:b=" + b)[0] == 1
    root = ET.parse(str(tmp_path / "out" / "junit.xml")).getroot()
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "pecs.b"
    by_name = {tc.get("name"): tc for tc in suite}
    assert by_name["R.Ioctl.Reset.Zero"].find("failure") is not None
    assert by_name["R.Ioctl.Reset.Group"].find("error") is not None
    assert by_name["R.Read.Known"].find("failure") is None
    assert by_name["R.Mmap.Lost"].find("skipped") is not None
    # R.Ioctl.Reset.Zero and R.New.Case fail; the crash is an error.
    assert suite.get("failures") == "2" and suite.get("errors") == "1"
    gate = by_name["Gate.ExpectationsAndRun"]
    assert gate.find("failure") is None


# ---- root causes ----

def test_one_errno_for_every_call_is_a_root_cause() -> None:
    calls = {"open": tally(234, 0, 234, "ENOSYS"), "read": tally(0, 0, 0, None)}
    assert rootcause.line(calls) == "open answered every call (234 in 234 cases) with -ENOSYS"
    # One success, two errnos, or too little evidence: no root cause.
    assert rootcause.line({"open": tally(234, 1, 234, "ENOSYS")}) is None
    assert rootcause.line({"open": tally(234, 0, 234, None, mixed=True)}) is None
    assert rootcause.line({"open": tally(9, 0, 9, "ENOSYS")}) is None
    assert rootcause.line({"ioctl": tally(40, 0, 2, "ENOTTY")}) is None


def test_shards_merge_their_tallies() -> None:
    same = rootcause.sum_calls([{"ioctl": tally(6, 0, 2, "ENOTTY")},
                                {"ioctl": tally(6, 0, 2, "ENOTTY")}])
    assert rootcause.line(same) == "ioctl answered every call (12 in 4 cases) with -ENOTTY"
    other = rootcause.sum_calls([{"ioctl": tally(6, 0, 2, "ENOTTY")},
                                 {"ioctl": tally(6, 0, 2, "EINVAL")}])
    assert rootcause.line(other) is None


def test_the_root_cause_heads_the_console_json_and_report(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {"R.C.%d" % i: ("FAIL", "FAIL", "fd failed: -ENOSYS") for i in range(12)}
    p0 = results_file(tmp_path / "s0.json", dict(list(cases.items())[:6]),
                      calls={"open": tally(6, 0, 6, "ENOSYS")})
    p1 = results_file(tmp_path / "s1.json", dict(list(cases.items())[6:]),
                      calls={"open": tally(6, 0, 6, "ENOSYS")})
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "import:emu=%s,%s" % (p0, p1))
    assert rc == 1
    line = "open answered every call (12 in 12 cases) with -ENOSYS"
    assert "emu: root cause: " + line in text
    # Above the list of failures, which still names every case.
    assert text.index("root cause") < text.index("FAIL R.C.0")
    s = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert s["implementations"][0]["root_cause"] == line
    assert len(s["cases"]) == 12
    md = (tmp_path / "out" / "report.md").read_text()
    assert md.index("## Root causes") < md.index("## Implementations") and line in md
    assert line in (tmp_path / "out" / "report.html").read_text()


def test_merged_shards_keep_one_version_or_say_mixed(tmp_path: pathlib.Path) -> None:
    p0 = results.load(results_file(tmp_path / "a.json", {"A.A.A": ("PASS", "PASS", "")}, version="v1"))
    p1 = results.load(results_file(tmp_path / "b.json", {"A.A.B": ("PASS", "PASS", "")}, version="v2"))
    assert results.merge_shards([p0, p0 | {"results": []}])["suite_version"] == "v1"
    assert results.merge_shards([p0, p1])["suite_version"] == "mixed: v1, v2"


# ---- drafting and updating expectations ----

def test_a_draft_says_the_root_cause_once_and_lists_the_other_failures(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {"R.Open.%d" % i: ("FAIL", "FAIL", "x.c:1: open failed: -ENOSYS") for i in range(11)}
    cases["R.Other.Crash"] = ("CRASH", "CRASH", "killed by signal 11 # here")
    cases["R.Fine"] = ("PASS", "PASS", "")
    cases["R.Skip"] = ("ENV_SKIP", "ENV_SKIP", "no")
    res = results_file(tmp_path / "emu.json", cases,
                       calls={"open": tally(11, 0, 11, "ENOSYS")})
    exp = tmp_path / "emu.txt"
    rc, text = run(capsys, "expectations", res, "--write", str(exp))
    assert rc == 0, text
    lines = exp.read_text().splitlines()
    assert lines[1].startswith("@features -") and lines[2].startswith("@floor 1 ")
    lines = lines[4:]
    assert lines[0] == "# root cause: open answered every call (11 in 11 cases) with -ENOSYS"
    assert lines[1].startswith("@root-cause open ENOSYS  # draft: explains 11 failing case(s)")
    assert not any(l.startswith("R.Open.") for l in lines)
    crash = [l for l in lines if l.startswith("R.Other.Crash")]
    assert crash and "signal 11 no. here" in crash[0]
    assert not any(l.startswith(("R.Fine", "R.Skip")) for l in lines)
    # The draft gates the run green, as written.
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "emu=%s" % exp, "import:" + res)
    assert rc == 0, text


def test_an_update_keeps_reasons_drops_stale_lines_and_adds_new_failures(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "mine.txt"
    exp.write_text("# Mine: known gaps.\n"
                   "R.Read.Known            # bug 12: the real reason\n"
                   "R.Read.Fixed            # bug 13: fixed since\n"
                   "R.Gone.Away             # a case renamed\n"
                   "R.Priv.Only [unprivileged] # not judged by a privileged run\n")
    cases = {"R.Read.Known": ("FAIL", "FAIL", "got 2"), "R.Read.Fixed": ("PASS", "PASS", ""),
             "R.Read.New": ("FAIL", "FAIL", "got 7"), "R.Priv.Only": ("PASS", "PASS", "")}
    res = results_file(tmp_path / "mine.json", cases)
    rc, text = run(capsys, "expectations", res, "--write", str(exp))
    assert rc == 0
    out = exp.read_text()
    assert "R.Read.Known            # bug 12: the real reason" in out
    assert "# Mine: known gaps." in out
    assert "R.Read.Fixed" not in out and "R.Gone.Away" not in out
    assert "R.Priv.Only [unprivileged]" in out
    assert "R.Read.New  # draft: got 7" in out
    assert "- %s:3: R.Read.Fixed" % exp in text and "its case passes now" in text
    assert "matches no case of this run" in text
    assert "kept 2 line(s), removed 2, added 1" in text
    # Run again on the result: nothing left to change.
    rc, text = run(capsys, "expectations", res, "--write", str(exp))
    assert "removed 0, added 0" in text


# ---- the gate of the run as a whole ----

def gate(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], exp_text: str,
         host: dict[str, Any] | None = None, features: list[str] | None = None) -> tuple[int, str]:
    cases = {"R.A.%d" % i: ("PASS", "PASS", "") for i in range(3)}
    res = tmp_path / "mine.json"
    results_file(res, cases)
    doc = json.loads(res.read_text())
    doc["features"] = features if features is not None else ["counting", "mmap"]
    doc["host"].update(host or {})
    res.write_text(json.dumps(doc))
    exp = tmp_path / "mine.txt"
    exp.write_text(exp_text)
    return run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
               "mine=%s" % exp, "import:" + str(res))


def test_a_run_below_its_floor_fails(tmp_path: pathlib.Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert gate(tmp_path, capsys, "@floor 3 # all three\n")[0] == 0
    rc, text = gate(tmp_path, capsys, "@floor 4 # one more\n")
    assert rc == 1 and "3 passed, below the floor of 4" in text


def test_a_changed_feature_claim_fails_and_says_how_to_accept_it(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert gate(tmp_path, capsys, "@features mmap, counting # mine\n")[0] == 0
    rc, text = gate(tmp_path, capsys, "@features counting,mmap,poll # mine\n")
    assert rc == 1 and "(-poll)" in text and "'@features counting,mmap # why'" in text
    rc, text = gate(tmp_path, capsys, "@features counting,mmap # mine\n",
                    features=["counting", "mmap", "sampling"])
    assert rc == 1 and "(+sampling)" in text


def test_the_implementations_own_refusal_is_not_the_hosts(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused = {"unavailable": "perf_event_open refused (EACCES)", "privileged": True,
               "paranoid": 2}
    rc, text = gate(tmp_path, capsys, "", host=refused)
    assert rc == 1 and "perf_event_open refused (EACCES); the host facts allow the call" in text
    assert gate(tmp_path, capsys, "@accept-refusal # our seccomp sandbox\n", host=refused)[0] == 0
    # perf_event_paranoid 3 without privilege refuses on purpose: that one is the host's.
    host_fact = dict(refused, privileged=False, paranoid=3)
    assert gate(tmp_path, capsys, "", host=host_fact)[0] == 0


def test_glob_classes_work_and_bad_directives_fail_the_gate(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = {"R.A.0": ("FAIL", "FAIL", "x"), "R.A.1": ("FAIL", "FAIL", "y")}
    res = results_file(tmp_path / "mine.json", cases)
    exp = tmp_path / "mine.txt"
    exp.write_text("R.A.[01] # both, by a class\n")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=%s" % exp, "import:" + res)
    assert rc == 0, text
    exp.write_text("R.A.[01] # both\n@floor 0 # a\n@floor 1 # b\n")
    rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                   "mine=%s" % exp, "import:" + res)
    assert rc == 1 and ":3: duplicate of " in text


def test_a_new_draft_records_features_and_floor(tmp_path: pathlib.Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    res = results_file(tmp_path / "mine.json", {"R.A.0": ("PASS", "PASS", ""),
                                               "R.A.1": ("FAIL", "FAIL", "no")})
    exp = tmp_path / "mine.txt"
    assert run(capsys, "expectations", res, "--write", str(exp))[0] == 0
    text = exp.read_text()
    assert "\n@features -  # what mine claims" in text and "\n@floor 1  # draft:" in text
    rc, out = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                  "mine=%s" % exp, "import:" + res)
    assert rc == 0, out


# ---- the static binary's options and the host facts' sources ----

def test_features_declares_what_the_system_lacks(toy: str, tmp_path: pathlib.Path) -> None:
    res = tmp_path / "r.json"
    out = subprocess.run([toy, "--quiet", "--isolate", "--features", "-counting",
                          "--filter", "Required.Toy.Open.*", "--json", str(res)],
                         capture_output=True, text=True)
    doc = json.loads(res.read_text())
    assert "counting" not in doc["features"]
    got = {r["id"]: r["status"] for r in doc["results"]}
    assert got["Required.Toy.Open.TaskClock"] == "UNSUPPORTED", out
    assert got["Required.Toy.Open.BadType"] == "PASS"
    bad = subprocess.run([toy, "--features", "-nosuch"], capture_output=True, text=True)
    assert bad.returncode == 2 and "not a feature this runner claims" in bad.stderr
    mixed = subprocess.run([toy, "--features", "counting,-mmap"], capture_output=True, text=True)
    assert mixed.returncode == 2 and "mixes the two forms" in mixed.stderr


def test_the_kernel_version_and_every_host_fact_name_their_source(
        toy: str, tmp_path: pathlib.Path) -> None:
    res = tmp_path / "r.json"
    subprocess.run([toy, "--quiet", "--kernel", "5.4.0", "--filter", "Required.Toy.Open.*",
                    "--json", str(res)], capture_output=True)
    doc = json.loads(res.read_text())
    assert doc["host"]["kernel_release"] == "5.4.0"
    src = doc["host_sources"]
    assert src["kernel_release"].startswith("--kernel")
    assert set(src) >= {"ncpus", "paranoid", "privileged", "max_stack", "attr_size"}
    assert all(v for v in src.values()), src


def test_assumed_facts_are_shown_and_unknown_kernels_satisfy_no_condition(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = tmp_path / "uml.json"
    results_file(res, {"R.A.0": ("FAIL", "FAIL", "x")})
    doc = json.loads(res.read_text())
    doc["host"].update(kernel_release="unknown", max_stack=127)
    doc["host_sources"] = {"max_stack": "assumed 127: /proc/sys/kernel/perf_event_max_stack "
                                        "unreadable", "kernel_release": "unknown: no host_facts"}
    res.write_text(json.dumps(doc))
    for cond in ("kernel>=1.0", "kernel<99.0"):
        exp = tmp_path / "uml.txt"
        exp.write_text("R.A.0 [%s] # judged on the kernel version\n" % cond)
        rc, text = run(capsys, "report", "--out", str(tmp_path / "out"), "--expectations",
                       "uml=%s" % exp, "import:" + str(res))
        assert rc == 1, (cond, text)  # the line is inactive: the failure is not excused
    assert "uml: assumed host fact: max_stack 127: assumed 127" in text
    md = (tmp_path / "out" / "report.md").read_text()
    assert "## Assumed host facts" in md and "kernel_release unknown: unknown" in md


def test_in_process_the_crashing_case_is_named_and_outputs_are_checked_first(
        toy: str, tmp_path: pathlib.Path) -> None:
    crash = subprocess.run([toy, "--no-isolate", "--filter", "Required.Toy.Verdict.Crashes"],
                           capture_output=True, text=True)
    assert crash.returncode < 0  # the case took the runner down: its id is the last line
    assert crash.stdout.splitlines()[-1] == "RUN         Required.Toy.Verdict.Crashes"
    bad = subprocess.run([toy, "--isolate", "--json", str(tmp_path / "no" / "such.json")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "nothing was run" in bad.stderr
    assert "Required.Toy" not in bad.stdout
