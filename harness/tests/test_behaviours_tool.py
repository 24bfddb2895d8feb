"""harness/tools/behaviours.py: the catalogue check fails on each kind of drift."""
import pathlib
import stat

import behaviours  # harness/tools/behaviours.py: //harness:behaviours_tool puts it on the path

HEAD = "| id | behaviour | source | cases | vectors | ref |\n|---|---|---|---|---|---|\n"


def fake_runner(tmp_path: pathlib.Path, cases: list[tuple[str, list[str]]]) -> str:
    path = tmp_path / "runner"
    lines = "".join(f"{cid}\\tfeatures=\\tbehaviours={','.join(bs)}\\n" for cid, bs in cases)
    path.write_text(f"#!/bin/sh\nprintf '{lines}'\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def doc(tmp_path: pathlib.Path, rows: list[str]) -> str:
    path = tmp_path / "behaviours.md"
    path.write_text("# t\n\n" + HEAD + "".join(r + "\n" for r in rows))
    return str(path)


def test_in_sync(tmp_path: pathlib.Path) -> None:
    runner = fake_runner(tmp_path, [("Required.A.B", ["X-ONE"]), ("Required.A.C", ["X-ONE"])])
    d = doc(tmp_path, ["| X-ONE | one | man page | A.B, A.C | - | - |"])
    assert behaviours.process(runner, False, None, d) == []


def test_unknown_id_missing_source_and_stale_cases(tmp_path: pathlib.Path) -> None:
    runner = fake_runner(tmp_path, [("Required.A.B", ["X-ONE", "X-NEW"])])
    d = doc(tmp_path, ["| X-ONE | one | - | A.Z | - | - |"])
    problems = "\n".join(behaviours.process(runner, False, None, d))
    assert "X-NEW, which docs/behaviours.md does not list" in problems
    assert "X-ONE has no source" in problems
    assert "cases of X-ONE are out of date" in problems


def test_write_fixes_cases_and_keeps_escaped_pipes(tmp_path: pathlib.Path) -> None:
    runner = fake_runner(tmp_path, [("Required.A.B", ["X-ONE"])])
    d = doc(tmp_path, ["| X-ONE | IP\\|TID | uapi | - | v | - |"])
    behaviours.process(runner, True, None, d)
    text = open(d).read()
    assert "| X-ONE | IP\\|TID | uapi | A.B | v | - |" in text
    assert behaviours.process(runner, False, None, d) == []


def test_duplicate_row(tmp_path: pathlib.Path) -> None:
    runner = fake_runner(tmp_path, [])
    d = doc(tmp_path, ["| X-ONE | a | s | - | - | - |", "| X-ONE | b | s | - | - | - |"])
    assert any("listed twice" in p for p in behaviours.process(runner, False, None, d))
