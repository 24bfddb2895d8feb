"""lint accepts the tree and refuses each kind of bad vector file."""

import pathlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from pecs_vectors import generate, lint, tool

VECTORS = os.environ.get("PECS_VECTORS_DIR") or generate.default_vectors_dir()
RECORDS = os.path.join("record_layout", "record_layout.json")


def test_tree_is_clean() -> None:
    assert lint.lint(VECTORS) == []


def test_tree_history_is_read() -> None:
    # Under Bazel VECTORS is a runfiles tree: lint must still find the checkout behind it,
    # or the meaning check would silently never run.
    source = lint._checkout_of(VECTORS, lint.vector_files(VECTORS))
    assert lint._repo_root(source), "no git checkout behind %s" % VECTORS


def test_history_outside_git_is_a_problem(copy: pathlib.Path) -> None:
    assert any("not in a git checkout" in p and "--no-history" in p
               for p in lint.lint(str(copy)))
    assert lint.lint(str(copy), history=False) == []


def test_cli_lint_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool.main(["--vectors-dir", VECTORS, "lint"]) == 0
    assert "0 problem(s)" in capsys.readouterr().out


@pytest.fixture
def copy(tmp_path: pathlib.Path) -> pathlib.Path:
    dst = tmp_path / "vectors"
    shutil.copytree(VECTORS, str(dst))
    return dst


def _edit(root: pathlib.Path, rel: str, fn: Callable[[dict[str, Any]], None]) -> None:
    p = root / rel
    doc = json.loads(p.read_text())
    fn(doc)
    p.write_text(json.dumps(doc, indent=2) + "\n")


def _problems(root: pathlib.Path) -> list[str]:
    return lint.lint(str(root), history=False)


def test_bad_source(copy: pathlib.Path) -> None:
    _edit(copy, RECORDS, lambda d: d["testGroups"][0]["source"].update(name="pecs-ref"))
    assert any("not in the closed list" in p for p in _problems(copy))


def test_uppercase_hex(copy: pathlib.Path) -> None:
    def upper(d: dict[str, Any]) -> None:
        t = next(t for g in d["testGroups"] for t in g["tests"] if t["expected"] != t["expected"].upper())
        t["expected"] = t["expected"].upper()
    _edit(copy, RECORDS, upper)
    assert any("hex must be lowercase" in p for p in _problems(copy))


def test_uppercase_hex_u64(copy: pathlib.Path) -> None:
    _edit(copy, os.path.join("ioctl", "ioctl_requests.json"),
          lambda d: d["testGroups"][0]["tests"][9].update(request="0x4004240A"))
    assert any("hex must be lowercase" in p for p in _problems(copy))


def test_duplicate_tcid(copy: pathlib.Path) -> None:
    _edit(copy, RECORDS, lambda d: d["testGroups"][1]["tests"][0].update(tcId=1))
    assert any("duplicate tcId 1" in p for p in _problems(copy))


def test_wrong_number_of_tests(copy: pathlib.Path) -> None:
    _edit(copy, RECORDS, lambda d: d.update(numberOfTests=d["numberOfTests"] + 1))
    assert any("numberOfTests" in p for p in _problems(copy))


def test_undefined_flag(copy: pathlib.Path) -> None:
    _edit(copy, RECORDS, lambda d: d["testGroups"][0]["tests"][0]["flags"].append("Nope"))
    assert any("'Nope' has no entry in notes" in p for p in _problems(copy))


def test_schema_violation(copy: pathlib.Path) -> None:
    _edit(copy, os.path.join("open", "attr_sizes.json"),
          lambda d: d["testGroups"][0]["tests"][0].update(size="64"))
    assert any("schema:" in p for p in _problems(copy))


def _git(cwd: pathlib.Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=pecs", "-c", "user.email=pecs@invalid", *args],
                   cwd=str(cwd), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture
def repo(copy: pathlib.Path) -> pathlib.Path:
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    root = copy.parent
    _git(root, "init", "-q")
    _git(root, "add", "vectors")
    _git(root, "commit", "-q", "-m", "vectors")
    return root


def test_changed_tcid_is_refused(repo: pathlib.Path) -> None:
    vec = repo / "vectors"
    _edit(vec, RECORDS, lambda d: d["testGroups"][0]["tests"][2].update(comment="now something else"))
    problems = lint.lint(str(vec))
    assert any("tcId 3 changed meaning" in p and "add a new tcId instead" in p for p in problems)


def test_removed_tcid_is_refused(repo: pathlib.Path) -> None:
    vec = repo / "vectors"

    def drop_last(d: dict[str, Any]) -> None:
        d["testGroups"][-1]["tests"].pop()
        d["numberOfTests"] -= 1
    _edit(vec, RECORDS, drop_last)
    assert any("was published and is gone" in p for p in lint.lint(str(vec)))


def test_new_tcid_is_accepted(repo: pathlib.Path) -> None:
    vec = repo / "vectors"

    def add(d: dict[str, Any]) -> None:
        t = json.loads(json.dumps(d["testGroups"][0]["tests"][0]))
        t["tcId"] = 100000
        t["comment"] = "a new vector under a fresh id"
        d["testGroups"][0]["tests"].append(t)
        d["numberOfTests"] += 1
    _edit(vec, RECORDS, add)
    assert lint.lint(str(vec)) == []


def test_rev_option_compares_with_an_older_commit(repo: pathlib.Path) -> None:
    vec = repo / "vectors"
    _edit(vec, RECORDS, lambda d: d["testGroups"][0]["tests"][0].update(comment="changed and committed"))
    _git(repo, "commit", "-q", "-a", "-m", "change a published vector")
    assert lint.lint(str(vec)) == []
    assert any("tcId 1 changed meaning" in p for p in lint.lint(str(vec), rev="HEAD~1"))
    assert any("not found" in p for p in lint.lint(str(vec), rev="no-such-rev"))
