"""The capture tool and the crosscheck of captured vectors against this kernel."""
import pathlib
import copy
import io
import json
import os
import subprocess

import pytest

from pecs_harness import capture as cap
from pecs_harness import cli, crosscheck, testing

COMMITTED = os.path.join(cli.ROOT, cap.DEFAULT_FILE)


@pytest.fixture(scope="module")
def tool(tmp_path_factory: pytest.TempPathFactory) -> str:
    return testing.capture_tool(str(tmp_path_factory.mktemp("capture")))


def test_probe_lines_are_parsed_strictly(tool: str) -> None:
    answers = subprocess.run([tool, "--replay"], input="op=open\nop=fly\nop=open colour=red\n"
                             "op=open size=abc\n", stdout=subprocess.PIPE,
                             universal_newlines=True).stdout.splitlines()
    got = [json.loads(a) for a in answers]
    assert got[0] == {"ret": "fd", "attr_size": 136}
    assert got[1] == {"ret": "error", "error": "op must be open, read, ioctl or mmap"}
    assert got[2] == {"ret": "error", "error": "unknown key 'colour'"}
    assert got[3] == {"ret": "error", "error": "bad value for 'size'"}


def test_tcids_are_unique_and_stable_in_the_table(tool: str) -> None:
    probes = cap.list_probes(tool)
    ids = [p["tcId"] for p in probes]
    assert len(ids) == len(set(ids))
    assert max(ids) < cap.UNPRIVILEGED_OFFSET
    # Published meanings (vectors/captured/linux_capture.json): these never change.
    by_id = {p["tcId"]: p["probe"] for p in probes}
    assert by_id[5] == "op=open size=63"
    assert by_id[109] == "op=read read_format=0x1f members=2"
    assert by_id[303] == "op=mmap sampling=1 pages=4"


def test_read_layouts_mask_the_event_ids(tool: str) -> None:
    [a] = cap.replay(tool, ["op=read read_format=0x1f members=2"])
    assert a["ret"] == "72"
    assert a["dynamic"] == [{"offset": 32, "size": 8, "field": "member_id[0]"},
                            {"offset": 56, "size": 8, "field": "member_id[1]"}]
    assert a["bytes"] == "02" + "00" * 71


def test_capture_writes_a_file_the_lint_accepts(tool: str, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "vectors" / "captured" / "linux_capture.json"
    doc = cap.capture(tool, str(out))
    assert doc["numberOfTests"] == sum(len(g["tests"]) for g in doc["testGroups"])
    assert {g["source"]["name"] for g in doc["testGroups"]} == {"linux-capture"}
    release = cap.uname(tool)["release"]
    assert all(release in g["source"]["ref"] for g in doc["testGroups"])
    # The schema and the shared rules, through helper A's lint.
    from pecs_vectors import lint
    vectors = os.path.join(cli.ROOT, "vectors")
    store = lint._load_schemas(vectors)
    problems = lint.lint_file(str(tmp_path / "vectors"), "captured/linux_capture.json", store)
    assert problems == []


@pytest.mark.skipif(not os.path.isfile(COMMITTED), reason="no captured vectors committed")
def test_the_committed_captures_agree_with_this_kernel(tool: str) -> None:
    out = io.StringIO()
    agreed, differences, skipped = crosscheck.check(tool, [COMMITTED], out)
    assert differences == [], out.getvalue()
    assert agreed > 0


def test_a_disagreement_names_the_vector_and_both_kernels(tool: str, tmp_path: pathlib.Path) -> None:
    doc = cap.build_document(
        [{"tcId": 7, "flags": ["Refused"], "comment": "type 1000", "probe": "op=open type=1000"}],
        [(os.geteuid() == 0, {"release": "9.9.9-elsewhere", "machine": "x86_64"},
          [{"ret": "-EINVAL", "attr_size": 136}])])
    path = tmp_path / "linux_capture.json"
    path.write_text(json.dumps(doc))
    out = io.StringIO()
    agreed, differences, _ = crosscheck.check(tool, [str(path)], out)
    assert agreed == 0 and len(differences) == 1
    msg = differences[0]
    assert "tcId %d" % (7 if os.geteuid() == 0 else 1007) in msg
    assert "Linux 9.9.9-elsewhere gave ret=\"-EINVAL\"" in msg
    assert "this kernel (Linux %s) gives ret=\"-ENOENT\"" % cap.uname(tool)["release"] in msg


def test_crosscheck_command_exit_status(tool: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = cap.build_document(
        [{"tcId": 1, "flags": [], "comment": "opens", "probe": "op=open"}],
        [(os.geteuid() == 0, cap.uname(tool), [{"ret": "fd", "attr_size": 136}])])
    good = tmp_path / "good.json"
    good.write_text(json.dumps(doc))
    assert cli.main(["crosscheck", "--capture", tool, str(good)]) == 0
    bad_doc = copy.deepcopy(doc)
    bad_doc["testGroups"][0]["tests"][0]["expected"]["ret"] = "-EPERM"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_doc))
    assert cli.main(["crosscheck", "--capture", tool, str(bad)]) == 1
    assert "1 differ" in capsys.readouterr().out


@pytest.mark.parametrize("content, why", [
    ("", "empty file"),
    ('{"schema": "linux_capture.schema.json", "area": "linux_capture", "testGr', "not JSON"),
    ("{}", "not a linux_capture vectors file"),
    ('{"area": "linux_capture", "testGroups": []}', "holds no vectors"),
    ('{"area": "linux_capture", "testGroups": [{"tests": [{}]}]}', "testGroups[0] lacks"),
])
def test_a_bad_vectors_file_is_one_line_and_the_others_are_still_checked(
        tool: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], content: str, why: str) -> None:
    doc = cap.build_document(
        [{"tcId": 1, "flags": [], "comment": "opens", "probe": "op=open"}],
        [(os.geteuid() == 0, cap.uname(tool), [{"ret": "fd", "attr_size": 136}])])
    first, last = tmp_path / "a_good.json", tmp_path / "c_differs.json"
    first.write_text(json.dumps(doc))
    differs = copy.deepcopy(doc)
    differs["testGroups"][0]["tests"][0]["expected"]["ret"] = "-EPERM"
    last.write_text(json.dumps(differs))
    broken = tmp_path / "b_broken.json"
    broken.write_text(content)
    rc = cli.main(["crosscheck", "--capture", tool, str(first), str(broken), str(last)])
    out = capsys.readouterr()
    assert rc == 2
    errors = out.err.strip().splitlines()
    assert len(errors) == 1, out.err
    assert str(broken) in errors[0] and why in errors[0]
    assert "Traceback" not in out.err
    # Both files around it were replayed: one agrees, one differs.
    assert "1 captured vector(s) agree with this kernel, 1 differ" in out.out
    assert "c_differs.json: tcId" in out.out
    assert "1 file(s) unreadable" in out.out
