"""The generator reproduces the checked-in vector files, and its tables hold up."""

import pathlib
import io
import json
import os
import struct

import pytest

from pecs_vectors import document, generate, layout, uapi
from pecs_vectors.areas import ioctl_requests, record_layout

VECTORS = os.environ.get("PECS_VECTORS_DIR") or generate.default_vectors_dir()


@pytest.mark.parametrize("path", sorted(generate.render()))
def test_checked_in_file_is_byte_identical(path: str) -> None:
    with open(os.path.join(VECTORS, path), encoding="utf-8") as f:
        assert f.read() == generate.render()[path], "run: python3 -m pecs_vectors.tool regen"


def test_check_mode_passes_on_tree_and_fails_on_stale_copy(tmp_path: pathlib.Path) -> None:
    out = io.StringIO()
    assert generate.check(VECTORS, out) == 0, out.getvalue()
    generate.write(str(tmp_path), io.StringIO())
    p = tmp_path / "open" / "attr_sizes.json"
    p.write_text(p.read_text().replace('"size": 136', '"size": 137'))
    out = io.StringIO()
    assert generate.check(str(tmp_path), out) == 1
    assert '-          "size": 137' in out.getvalue() and '+          "size": 136' in out.getvalue()


def test_output_is_deterministic() -> None:
    assert generate.render() == generate.render()
    for text in generate.render().values():
        assert text.endswith("}\n")
        assert document.dumps(json.loads(text)) == text


def test_read_format_counts_and_sizes() -> None:
    doc = json.loads(generate.render()["read_format/read_format.json"])
    tests = [t for g in doc["testGroups"] for t in g["tests"]]
    assert len(tests) == 64
    single = [t for t in tests if not t["read_format"] & uapi.FORMAT_GROUP]
    assert sorted(t["read_format"] for t in single) == [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]
    by_rf = {(t["read_format"], t["nr_members"]): t for t in tests}
    # Spot values measured on Linux (READ-LAYOUT-GROUP in docs/behaviours.md):
    # rf 0x1f with 2 events is 72 bytes.
    assert by_rf[(0x1F, 2)]["size"] == 72
    assert by_rf[(0x17, 1)]["size"] == 40
    assert [f["name"] for f in by_rf[(0x1D, 2)]["fields"]] == [
        "nr", "time_enabled", "member[0].value", "member[0].id", "member[0].lost",
        "member[1].value", "member[1].id", "member[1].lost"]


def test_mmap_page_offsets_match_fact_sheet() -> None:
    doc = json.loads(generate.render()["mmap_page/mmap_page.json"])
    offs = {t["name"]: t["offset"] for t in doc["testGroups"][0]["tests"]}
    assert offs["capabilities"] == 40 and offs["pmc_width"] == 48 and offs["time_mult"] == 52
    assert offs["size"] == 72 and offs["time_cycles"] == 80 and offs["__reserved"] == 96
    assert offs["data_head"] == 1024 and offs["aux_size"] == 1080


def test_ioctl_encoding_matches_known_numbers() -> None:
    enc = {name: ioctl_requests.ioc(d, uapi.PERF_IOC_TYPE, nr, size)
           for name, d, nr, size in [("ID", uapi.IOC_READ, 7, 8), ("QUERY_BPF", 3, 10, 8),
                                     ("ENABLE", 0, 0, 0), ("PAUSE", uapi.IOC_WRITE, 9, 4)]}
    assert enc == {"ID": 0x80082407, "QUERY_BPF": 0xC008240A, "ENABLE": 0x2400, "PAUSE": 0x40042409}
    with pytest.raises(ValueError):
        ioctl_requests.ioc(0, 0x24, 256, 0)


def test_data_src_default() -> None:
    assert uapi.MEM_NA == 0x1E05080021


def test_read_size_formula_and_field_walk_agree() -> None:
    for rf in range(32):
        for nr in (1, 2, 3, 7):
            fields = layout.read_format_fields(rf, nr)
            assert 8 * len(fields) == layout.read_size_formula(rf, nr)


def test_record_encoder_known_shapes() -> None:
    s = dict(record_layout.BASE_SAMPLE, ips=[0x12345678], addr=0)
    rec = record_layout.encode(uapi.sample("IP", "TID"), 0, 1, dict(s, pid=42, tid=43), [1], {})
    # Fuchsia's Starnix FXT unit test expects exactly this 24-byte record.
    assert bytes(rec.data) == struct.pack("<IHHQII", 9, 2, 24, 0x12345678, 42, 43)
    rec = record_layout.encode(uapi.sample("RAW"), 0, 1, s, [1], {})
    assert bytes(rec.data)[8:] == struct.pack("<II", 4, 0)
    rec = record_layout.encode(uapi.sample("CALLCHAIN"), 0, 1, dict(s, ips=[5, 6, 7]), [1], {})
    assert struct.unpack("<5Q", bytes(rec.data)[8:]) == (4, (1 << 64) - 512, 5, 6, 7)


def test_every_record_vector_is_consistent() -> None:
    doc = json.loads(generate.render()["record_layout/record_layout.json"])
    for g in doc["testGroups"]:
        for t in g["tests"]:
            data = bytes.fromhex(t["expected"])
            typ, misc, size = struct.unpack_from("<IHH", data)
            assert (typ, misc, size) == (9, t["misc"], t["size"]) and size == len(data), t["tcId"]
            for d in t["dynamic"]:
                assert d["offset"] % 8 == 0 and d["offset"] + d["size"] <= size, t["tcId"]
            if t["sample_type"] & uapi.sample("PHYS_ADDR", "DATA_PAGE_SIZE"):
                assert t["sample"]["addr"] == "0x0"


def test_generator_refuses_unknown_source_and_flag() -> None:
    vf = document.VectorFile("x", {"A": "a"})
    with pytest.raises(ValueError):
        vf.group("XTest", "ref-engine", "r")
    g = vf.group("XTest", "man-page", "r")
    with pytest.raises(ValueError):
        g.add("c", ["B"])
