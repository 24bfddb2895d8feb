"""to_c.py turns every area, including fxt/markup streams, into C that compiles."""

import pathlib
import json
import os
import shutil
import subprocess

import pytest

from pecs_vectors import generate, lint, to_c

VECTORS = os.environ.get("PECS_VECTORS_DIR") or generate.default_vectors_dir()
HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.join(VECTORS, "include")

FXT_DOC = {
    "schema": "fxt.schema.json",
    "area": "fxt",
    "numberOfTests": 2,
    "notes": {"Example": "a stream written for this test"},
    "testGroups": [{
        "type": "FxtStreamTest",
        "source": {"name": "fxt-spec", "ref": "docs/reference/tracing/trace-format.md"},
        "tests": [
            {"tcId": 1, "comment": "magic only \"quoted\" ??=", "flags": ["Example"], "result": "valid",
             "stream": {"hex": "1000044678541600"}, "chunk": [3, 5], "koids": [{"koid": 1001, "linux_id": 42}],
             "sample_type": 3, "expected": {"samples": [], "ring": "", "error": None}},
            {"tcId": 2, "comment": "bad", "flags": [], "result": "invalid",
             "stream": {"hex": "00"}, "sample_type": 3,
             "expected": {"samples": [{"pid": 42, "tid": 43, "time": 7, "ips": ["0x12345678"]}],
                          "ring": "0900000002001800", "dynamic": [{"offset": 0, "size": 8, "field": "id"}],
                          "error": {"code": "MissingMagicNumber", "offset": 0}}},
        ],
    }],
}


def _vector_paths(root: str) -> list[str]:
    return [os.path.join(root, p) for p in lint.vector_files(root)]


def test_stream_vector_validates(tmp_path: pathlib.Path) -> None:
    root = tmp_path / "vectors"
    shutil.copytree(VECTORS, str(root))
    (root / "fxt_example").mkdir()
    (root / "fxt_example" / "example.json").write_text(json.dumps(FXT_DOC, indent=2))
    assert lint.lint(str(root), history=False) == []
    bad = json.loads(json.dumps(FXT_DOC))
    bad["testGroups"][0]["tests"][0]["stream"] = {"hex": "00", "text": "x"}
    (root / "fxt_example" / "example.json").write_text(json.dumps(bad))
    assert any("schema" in p for p in lint.lint(str(root), history=False))


ARRAYS = {"read_format": "pecs_vec_read_formats", "record_layout": "pecs_vec_records",
          "attr_sizes": "pecs_vec_attr_sizes", "ioctl_requests": "pecs_vec_ioctls",
          "fxt": "pecs_vec_fxt", "markup": "pecs_vec_markup"}


def test_counts_follow_the_json() -> None:
    paths = _vector_paths(VECTORS)
    src = to_c.convert(paths)
    counts = dict.fromkeys(ARRAYS, 0)
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        if doc["area"] in counts:
            counts[doc["area"]] += doc["numberOfTests"]
    for area, array in ARRAYS.items():
        assert "const size_t %s_count = %d;" % (array, counts[area]) in src
    assert counts["read_format"] == 64


def test_unknown_area_is_skipped_or_refused(tmp_path: pathlib.Path) -> None:
    p = tmp_path / "x.json"
    p.write_text(json.dumps(dict(FXT_DOC, area="nope")))
    warnings: list[str] = []
    src = to_c.convert([str(p)], warn=warnings.append)
    assert "no C emitter for area 'nope'" in warnings[0]
    assert "const size_t pecs_vec_fxt_count = 0;" in src
    with pytest.raises(ValueError):
        to_c.convert([str(p)], strict=True)


def test_c_string_escapes() -> None:
    assert to_c.c_string('a"b\\c??=\n') == '"a\\"b\\\\c\\077\\077=\\012"'


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no gcc")
def test_generated_c_compiles_warning_clean(tmp_path: pathlib.Path) -> None:
    fxt = tmp_path / "fxt.json"
    fxt.write_text(json.dumps(FXT_DOC))
    src = tmp_path / "vectors.c"
    others = [p for p in _vector_paths(VECTORS) if json.load(open(p))["area"] != "fxt"]
    src.write_text(to_c.convert(others + [str(fxt)]))
    main = tmp_path / "main.c"
    main.write_text(
        '#include <string.h>\n#include "pecs/vectors.h"\n'
        "int main(void) {\n"
        "  if (pecs_vec_fxt_count != 2 || pecs_vec_fxt[0].stream_len != 8) return 1;\n"
        "  if (pecs_vec_fxt[0].nr_chunks != 2 || pecs_vec_fxt[0].koids[0].linux_id != 42) return 2;\n"
        "  if (pecs_vec_fxt[0].error_code != NULL) return 3;\n"
        "  if (strcmp(pecs_vec_fxt[1].error_code, \"MissingMagicNumber\")) return 4;\n"
        "  if (pecs_vec_fxt[1].samples[0].ips[0] != 0x12345678 || pecs_vec_fxt[1].ring_len != 8) return 5;\n"
        "  if (pecs_vec_ioctls_count != 12) return 6;\n"
        "  if (pecs_vec_records[1].expected[0] != 9) return 7;\n"
        "  return 0;\n}\n")
    exe = tmp_path / "a.out"
    subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-I", INCLUDE,
                    str(src), str(main), "-o", str(exe)], check=True)
    assert subprocess.run([str(exe)]).returncode == 0


@pytest.mark.parametrize("content, why", [
    ("", "empty file"),
    (json.dumps(FXT_DOC)[:60], "not JSON"),
    ("{}", "no \"area\""),
    ('{"area": "fxt", "testGroups": {}}', "\"testGroups\" is not a list"),
    ('{"area": "fxt", "testGroups": [{"tests": [{"tcId": 1}]}]}', "cannot convert a test"),
])
def test_a_bad_vectors_file_exits_2_naming_it_and_the_others_are_still_read(
        tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], content: str, why: str) -> None:
    good = tmp_path / "a_good.json"
    good.write_text(json.dumps(FXT_DOC))
    broken = tmp_path / "b_broken.json"
    broken.write_text(content)
    also = tmp_path / "c_also_broken.json"
    also.write_text("")
    out = tmp_path / "vectors.c"
    rc = to_c.main(["--out", str(out), str(good), str(broken), str(also)])
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    # One line for each bad file, both found in one run; nothing for the good one.
    assert len(lines) == 2, err
    assert str(broken) in lines[0] and why in lines[0]
    assert str(also) in lines[1] and "empty file" in lines[1]
    assert "a_good.json" not in err and "Traceback" not in err
    assert not out.exists()


def test_the_command_line_says_one_line_not_a_traceback(tmp_path: pathlib.Path) -> None:
    broken = tmp_path / "x.json"
    broken.write_text("{}")
    p = subprocess.run(["/usr/bin/python3", to_c.__file__, "--out", str(tmp_path / "o.c"),
                        str(broken)], stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 2
    assert p.stderr.strip() == "to_c.py: %s: not a vectors file: no \"area\"" % broken
