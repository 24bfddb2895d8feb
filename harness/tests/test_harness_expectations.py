"""The harness's expectations rules, and that they agree with the C runner's."""
import pathlib
import json
import os
import subprocess

import pytest

from pecs_harness import expectations as ex
from pecs_harness import testing
from pecs_harness.case_result import CaseResult, Expectation

ROOT_HOST = {"privileged": True, "paranoid": 2, "kernel_release": "6.18.44-x"}
USER_HOST = {"privileged": False, "paranoid": 2, "kernel_release": "6.18.44-x"}


def res(case_id: str, raw: str, message: str = "m") -> CaseResult:
    return CaseResult(case_id, raw, raw, message)


@pytest.mark.parametrize("text, why", [
    ("Required.A.B.C\n", "needs a reason"),
    ("Required.A.B.C #   \n", "reason after '#' is empty"),
    ("Required.A.B.C [rooted] # x\n", "unknown condition 'rooted'"),
    ("Required.A.B.C [privileged # x\n", "conditions go in one [..]"),
    ("Required.A B # x\n", "expected one case id"),
])
def test_bad_lines_are_refused_with_file_and_line(text: str, why: str) -> None:
    with pytest.raises(ex.ExpectationsError) as e:
        ex.parse("# header\n\n" + text, "x.txt")
    assert why in str(e.value)
    assert "x.txt:3:" in str(e.value)


def test_conditions_select_lines_by_host() -> None:
    lines = ex.parse("A.B.C.D [unprivileged] # only without privilege\n"
                     "A.B.C.E [kernel>=6.19] # newer kernels\n"
                     "A.B.C.F [kernel<6.19, paranoid>=2] # both\n", "f.txt")
    assert [l.pattern for l in ex.active_lines(lines, ROOT_HOST)] == ["A.B.C.F"]
    assert [l.pattern for l in ex.active_lines(lines, USER_HOST)] == ["A.B.C.D", "A.B.C.F"]
    old = dict(ROOT_HOST, kernel_release="5.4.0")
    assert ex.condition_holds("kernel<6.19", old)
    assert not ex.condition_holds("kernel>=6.1", old)
    assert ex.condition_holds("kernel>=6.18", ROOT_HOST)


@pytest.mark.parametrize("release,older,x_y", [
    ("6.1.176", True, True),               # Debian 6.1 cloud, its point release from uname -v
    ("6.1.192", False, True),              # the stable release with the fix
    ("6.1.0-50-cloud-amd64", True, True),  # the point release unknown: 6.1.0
    ("6.12.118", False, False),
    ("6.18.44-fc-v1252", False, False),
    ("ref on 6.1.0", False, False),        # not a Linux version: no kernel condition holds
])
def test_kernel_conditions_take_point_releases(release: str, older: bool, x_y: bool) -> None:
    host = dict(ROOT_HOST, kernel_release=release)
    line, = ex.parse("A.B.C.D [kernel<6.1.192] # fixed in 6.1.192\n", "f.txt")
    assert (line in ex.active_lines([line], host)) is older
    assert ex.condition_holds("kernel<6.1.192", host) is older
    assert ex.condition_holds("kernel<6.12", host) is x_y
    assert ex.condition_holds("kernel>=6.1", host) is (release[0].isdigit())


def test_listed_failure_is_xfail_and_listed_pass_is_xpass() -> None:
    lines = ex.parse("Required.Read.*  # whole area missing\n", "e.txt")
    failed = ex.apply(lines, ROOT_HOST, res("Required.Read.Group.X", "FAIL"))
    assert failed.status == "XFAIL"
    assert failed.expectation == Expectation("e.txt", 1, "whole area missing")
    crashed = ex.apply(lines, ROOT_HOST, res("Required.Read.Group.Y", "CRASH"))
    assert crashed.status == "XFAIL"
    passed = ex.apply(lines, ROOT_HOST, res("Required.Read.Group.Z", "PASS"))
    assert passed.status == "XPASS"
    assert "delete that line or narrow the glob" in passed.message
    assert "e.txt:1" in passed.message
    skipped = ex.apply(lines, ROOT_HOST, res("Required.Read.Group.W", "UNSUPPORTED"))
    assert skipped.status == "UNSUPPORTED"
    other = ex.apply(lines, ROOT_HOST, res("Required.Ioctl.Id.X", "FAIL"))
    assert other.status == "FAIL" and other.expectation is None


def test_apply_starts_from_the_raw_status_not_the_old_verdict() -> None:
    lines: list[ex.Line] = []
    r = res("Required.A.B.C", "FAIL")
    r.status = "XFAIL"  # gated elsewhere by a file this checkout does not have
    assert ex.apply(lines, ROOT_HOST, r).status == "FAIL"


def test_stale_lines_match_no_case_even_when_inactive() -> None:
    lines = ex.parse("Required.A.*  # ok\nRequired.Gone.Case [unprivileged] # was renamed\n",
                     "e.txt")
    stale = ex.stale(lines, ["Required.A.B.C"])
    assert [l.pattern for l in stale] == ["Required.Gone.Case"]
    assert "matches no case" in ex.stale_message(stale[0])


def test_the_harness_and_the_c_runner_give_the_same_verdicts(tmp_path: pathlib.Path) -> None:
    runner = testing.toy_runner(str(tmp_path))
    exp = tmp_path / "toy.txt"
    exp.write_text(open(testing.TOY_EXPECTATIONS).read() +
                   "Required.Toy.Open.Bad*  # glob over a passing case: XPASS\n"
                   "Required.Toy.Verdict.EnvSkip [unprivileged] # inactive as root\n")
    out = tmp_path / "r.json"
    subprocess.run([runner, "--isolate", "--quiet", "--expectations", str(exp), "--json", str(out)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = json.loads(out.read_text())
    lines = ex.load(str(exp))
    for r in data["results"]:
        mine = ex.apply(lines, data["host"], CaseResult.from_json(r))
        assert mine.status == r["status"], r["id"]
        assert (mine.expectation.line if mine.expectation else None) == \
            (r["expectation"] or {}).get("line")
        if r["status"] == "XPASS":
            assert mine.message == r["message"]
    assert any(r["status"] == "XPASS" for r in data["results"])


def test_a_duplicate_line_names_both_lines() -> None:
    text = ("Required.A.B.C  # first\n"
            "Required.A.B.D [unprivileged] # other case\n"
            "# a comment\n"
            "Required.A.B.C  # again\n")
    with pytest.raises(ex.ExpectationsError) as e:
        ex.parse(text, "d.txt")
    assert str(e.value) == ("d.txt:4: duplicate of d.txt:1 ('Required.A.B.C'): delete one of "
                            "the two lines")


def test_same_case_under_other_conditions_is_not_a_duplicate() -> None:
    text = ("Required.A.B.C [unprivileged] # no CAP_PERFMON\n"
            "Required.A.B.C [privileged] # root differs too\n"
            "Required.A.B.C [privileged ,paranoid>=2] # narrower\n"
            "Required.A.B.C [paranoid>=2, privileged] # the same conditions again\n")
    lines, errors = ex.parse_all(text, "c.txt")
    assert [l.lineno for l in lines] == [1, 2, 3]
    assert errors == ["c.txt:4: duplicate of c.txt:3 ('Required.A.B.C' [paranoid>=2, "
                      "privileged]): delete one of the two lines"]


def test_every_bad_line_is_reported_and_the_good_ones_kept() -> None:
    lines, errors = ex.parse_all("A.B.C.D # fine\nA.B.C.E\nA.B.C.F [x] # bad condition\n"
                                 "A.B.C.G # fine too\n", "m.txt")
    assert [l.pattern for l in lines] == ["A.B.C.D", "A.B.C.G"]
    assert [e.split(":")[1] for e in errors] == ["2", "3"]


def test_a_bad_line_fails_the_gate_but_the_run_and_its_results_stay(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pecs_harness import cli
    runner = testing.toy_runner(str(tmp_path))
    exp = tmp_path / "toy.txt"
    original = open(testing.TOY_EXPECTATIONS).read()
    first = next(l for l in original.splitlines() if l.strip() and not l.startswith("#"))
    exp.write_text(original + first + "\n" + "Required.Toy.Open.TaskClock [rooted] # bad\n")
    out = tmp_path / "out"
    rc = cli.main(["run", "--out", str(out), "--impl", "syscall", "--runner", "syscall=" + runner,
                   "--expectations", "syscall=" + str(exp)])
    text = capsys.readouterr().out
    assert rc == 1
    with open(str(out / "summary.json")) as f:
        impl = json.load(f)["implementations"][0]
    # Every case ran and the good lines still gate: the listed failures stay XFAIL.
    assert impl["counts"]["passed"] == 2 and impl["counts"]["xfail"] == 3
    assert impl["counts"]["failed"] == 0 and not impl["ok"]
    n = len(original.splitlines())
    assert any("duplicate of %s:" % exp in p and "%s:%d" % (exp, n + 1) in p
               for p in impl["problems"]), impl["problems"]
    assert any("%s:%d: unknown condition 'rooted'" % (exp, n + 2) in p for p in impl["problems"])
    assert (out / "syscall.json").is_file() and (out / "report.html").is_file()
    assert "verdict: FAIL" in text


def test_the_c_runner_also_runs_with_a_bad_line_and_the_import_keeps_the_error(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pecs_harness import cli
    runner = testing.toy_runner(str(tmp_path))
    exp = tmp_path / "toy.txt"
    original = open(testing.TOY_EXPECTATIONS).read()
    first = next(l for l in original.splitlines() if l.strip() and not l.startswith("#"))
    exp.write_text(original + first + "\n")
    out = tmp_path / "r.json"
    p = subprocess.run([runner, "--isolate", "--quiet", "--expectations", str(exp), "--json",
                        str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    assert p.returncode == 1, p.stderr
    n = len(original.splitlines()) + 1
    assert "%s:%d: duplicate of %s:" % (exp, n, exp) in p.stderr
    data = json.loads(out.read_text())
    assert len(data["results"]) == 7 and data["ok"] is False
    assert data["counts"]["xfail"] == 3 and data["counts"]["failed"] == 0
    assert len(data["expectation_errors"]) == 1
    # Imported where the file is gone: the runner's own gating, bad line included, stands.
    exp.unlink()
    rc = cli.main(["report", "--out", str(tmp_path / "rep"), "import:toy=%s" % out])
    capsys.readouterr()
    assert rc == 1
    with open(str(tmp_path / "rep" / "summary.json")) as f:
        impl = json.load(f)["implementations"][0]
    assert any("duplicate of" in p for p in impl["problems"]), impl["problems"]
