"""Turns vector JSON files into one C source for vectors/include/pecs/vectors.h.

    python3 -m pecs_vectors.to_c --out vectors.c FILE.json...   (from harness/)

C gets no JSON parser: the conformance binaries, including the static one copied into
emulators, carry the vectors as arrays. The genrule //vectors:vectors_c runs it as the
py_binary //harness:pecs_vectors_to_c; it needs only the standard library.

Extension point: EMITTERS maps an area to a function(docs, c) that appends the arrays of
that area to `c` (a CSource); every area in EMITTERS is always emitted, with count 0 when
no file was given, so the header's declarations always link. A module named
`<anything>_to_c.py` next to this file that defines EMITTERS = {area: function} is loaded
too and may add areas (the //harness:pecs_vectors library carries every such module).
"""

import argparse
import glob
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from pecs_vectors import document

Doc = dict[str, Any]  # a vector document, or a group or test in one
Entry = Sequence[tuple[str, object]]  # designated initializers of one C struct


class CSource:
    """Accumulates C text and hands out unique names for static helper arrays."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._n = 0

    def name(self, stem: str) -> str:
        self._n += 1
        return "%s_%d" % (stem, self._n)

    def add(self, text: str = "") -> None:
        self.lines.append(text)

    def static_array(self, ctype: str, stem: str, items: Sequence[str], per_line: int = 4) -> str:
        """Defines `static const ctype name[]` (items are C literals); returns name, or NULL
        for an empty list so no zero-length array is ever written."""
        if not items:
            return "NULL"
        name = self.name(stem)
        self.add("static const %s %s[] = {" % (ctype, name))
        for i in range(0, len(items), per_line):
            self.add("\t" + " ".join(x + "," for x in items[i:i + per_line]))
        self.add("};")
        return name

    def table(self, ctype: str, name: str, entries: Sequence[Entry]) -> None:
        """Defines the public array `name` and `name_count`."""
        self.add("const %s %s[] = {" % (ctype, name))
        if entries:
            for e in entries:
                self.add("\t{ " + ", ".join(".%s = %s" % kv for kv in e) + " },")
        else:
            self.add("\t{ 0 }, /* no vectors of this area were given */")
        self.add("};")
        self.add("const size_t %s_count = %d;" % (name, len(entries)))
        self.add()



# emit(docs, c): appends the arrays of one area to c.
Emitter = Callable[[list[Doc], CSource], None]

def c_string(s: str) -> str:
    out = []
    for ch in s.encode("utf-8"):
        c = chr(ch)
        if c in "\\\"":
            out.append("\\" + c)
        elif 32 <= ch < 127 and c != "?":  # '?' escaped so no trigraph can form
            out.append(c)
        else:
            out.append("\\%03o" % ch)
    return '"' + "".join(out) + '"'


def c_u64(value: int | str) -> str:
    if isinstance(value, str):
        value = int(value, 16)
    return "0x%xull" % value


def c_bytes(data: bytes) -> list[str]:
    return ["0x%02x" % b for b in data]


def tests_of(docs: list[Doc]) -> Iterator[Doc]:
    for doc in docs:
        for group in doc["testGroups"]:
            for test in group["tests"]:
                yield test


def emit_read_format(docs: list[Doc], c: CSource) -> None:
    entries = []
    for t in tests_of(docs):
        fields = c.static_array("struct pecs_vec_field", "rf_fields",
                                ["{ %s, %d, %d }" % (c_string(f["name"]), f["offset"], f["size"])
                                 for f in t["fields"]], per_line=1)
        entries.append([("tc_id", t["tcId"]), ("comment", c_string(t["comment"])),
                        ("read_format", c_u64(t["read_format"])), ("nr_members", t["nr_members"]),
                        ("size", t["size"]), ("fields", fields), ("nr_fields", len(t["fields"]))])
    c.table("struct pecs_vec_read_format", "pecs_vec_read_formats", entries)


def emit_mmap_page(docs: list[Doc], c: CSource) -> None:
    fields, bits = [], []
    for t in tests_of(docs):
        if "offset" in t:
            fields.append([("tc_id", t["tcId"]), ("name", c_string(t["name"])),
                           ("offset", t["offset"]), ("size", t["size"])])
        else:
            bits.append([("tc_id", t["tcId"]), ("name", c_string(t["name"])), ("bit", t["bit"])])
    c.table("struct pecs_vec_layout", "pecs_vec_mmap_page", fields)
    c.table("struct pecs_vec_bit", "pecs_vec_mmap_caps", bits)


def emit_attr_sizes(docs: list[Doc], c: CSource) -> None:
    c.table("struct pecs_vec_attr_size", "pecs_vec_attr_sizes",
            [[("tc_id", t["tcId"]), ("name", c_string(t["name"])), ("size", t["size"])]
             for t in tests_of(docs)])


def emit_ioctl_requests(docs: list[Doc], c: CSource) -> None:
    c.table("struct pecs_vec_ioctl", "pecs_vec_ioctls",
            [[("tc_id", t["tcId"]), ("name", c_string(t["name"])),
              ("request", "0x%xul" % int(t["request"], 16))] for t in tests_of(docs)])


def _dynamic(c: CSource, ranges: list[Doc]) -> str:
    return c.static_array("struct pecs_vec_dynamic", "dynamic",
                          ["{ %d, %d, %s }" % (d["offset"], d["size"], c_string(d["field"]))
                           for d in ranges], per_line=1)


def emit_record_layout(docs: list[Doc], c: CSource) -> None:
    entries = []
    for t in tests_of(docs):
        s = t["sample"]
        expected = bytes.fromhex(t["expected"])
        ips = c.static_array("uint64_t", "ips", [c_u64(a) for a in s["ips"]])
        exp = c.static_array("uint8_t", "expected", c_bytes(expected), per_line=16)
        dyn = _dynamic(c, t["dynamic"])
        entries.append([("tc_id", t["tcId"]), ("comment", c_string(t["comment"])),
                        ("sample_type", c_u64(t["sample_type"])), ("read_format", c_u64(t["read_format"])),
                        ("nr_members", t["nr_members"]), ("pid", s["pid"]), ("tid", s["tid"]),
                        ("cpu", s["cpu"]), ("time", c_u64(s["time"])), ("period", c_u64(s["period"])),
                        ("addr", c_u64(s["addr"])), ("ips", ips), ("nr_ips", len(s["ips"])),
                        ("expected", exp), ("expected_len", len(expected)),
                        ("dynamic", dyn), ("nr_dynamic", len(t["dynamic"]))])
    c.table("struct pecs_vec_record", "pecs_vec_records", entries)


def _stream_emitter(array: str) -> Emitter:
    def emit(docs: list[Doc], c: CSource) -> None:
        entries = []
        for t in tests_of(docs):
            stream = t["stream"]
            data = bytes.fromhex(stream["hex"]) if "hex" in stream else stream["text"].encode("utf-8")
            exp = t["expected"]
            samples = []
            for smp in exp["samples"]:
                ips = c.static_array("uint64_t", "ips", [c_u64(a) for a in smp["ips"]])
                samples.append("{ %d, %d, %s, %s, %d }" % (smp["pid"], smp["tid"], c_u64(smp["time"]),
                                                           ips, len(smp["ips"])))
            ring = bytes.fromhex(exp["ring"]) if "ring" in exp else b""
            error = exp.get("error")
            entries.append([
                ("tc_id", t["tcId"]), ("comment", c_string(t["comment"])),
                ("result", c_string(t["result"])),
                ("stream", c.static_array("uint8_t", "stream", c_bytes(data), per_line=16)),
                ("stream_len", len(data)), ("is_text", int("text" in stream)),
                ("chunks", c.static_array("uint32_t", "chunks", ["%du" % n for n in t.get("chunk", [])], 8)),
                ("nr_chunks", len(t.get("chunk", []))),
                ("koids", c.static_array("struct pecs_vec_koid", "koids",
                                         ["{ %s, %d }" % (c_u64(k["koid"]), k["linux_id"])
                                          for k in t.get("koids", [])], per_line=1)),
                ("nr_koids", len(t.get("koids", []))),
                ("sample_type", c_u64(t["sample_type"])), ("read_format", c_u64(t.get("read_format", 0))),
                ("sample_period", c_u64(t.get("sample_period", 0))),
                ("ids", c.static_array("uint64_t", "ids", [c_u64(i) for i in t.get("ids", [])])),
                ("nr_ids", len(t.get("ids", []))),
                ("samples", c.static_array("struct pecs_vec_stream_sample", "samples", samples, 1)),
                ("nr_samples", len(samples)),
                ("ring", c.static_array("uint8_t", "ring", c_bytes(ring), per_line=16)),
                ("ring_len", len(ring)), ("has_ring", int("ring" in exp)),
                ("dynamic", _dynamic(c, exp.get("dynamic", []))), ("nr_dynamic", len(exp.get("dynamic", []))),
                ("error_code", c_string(error["code"]) if error else "NULL"),
                ("error_offset", c_u64(error["offset"]) if error else "0"),
            ])
        c.table("struct pecs_vec_stream", array, entries)
    return emit


EMITTERS = {
    "read_format": emit_read_format,
    "mmap_page": emit_mmap_page,
    "attr_sizes": emit_attr_sizes,
    "ioctl_requests": emit_ioctl_requests,
    "record_layout": emit_record_layout,
    "fxt": _stream_emitter("pecs_vec_fxt"),
    "markup": _stream_emitter("pecs_vec_markup"),
}


def load_plugins(emitters: dict[str, Emitter]) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "*_to_c.py"))):
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location("pecs_vectors_plugin_" + name, path)
        if spec is None or spec.loader is None:
            raise ImportError("cannot load the emitter module %s" % path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        emitters.update(getattr(mod, "EMITTERS", {}))


class BadVectorFiles(ValueError):
    """Vector files that cannot be converted: one message a file, each naming it."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def convert(paths: Iterable[str], emitters: dict[str, Emitter] | None = None, strict: bool = False,
            warn: Callable[[str], object] | None = None) -> str:
    """The C source for the given vector files (order of files inside an area: sorted).

    A file of an area without an emitter is skipped with a warning (not every area is
    needed in C), or refused when strict. Files that cannot be read or converted raise
    BadVectorFiles naming every one of them: all files are looked at before it is raised,
    so one run shows every mistake."""
    emitters = dict(EMITTERS if emitters is None else emitters)
    by_area: dict[str, list[Doc]] = {}
    problems: list[str] = []
    for path in sorted(paths):
        try:
            doc = document.read(path)
        except ValueError as e:
            problems.append(str(e))
            continue
        if doc["area"] not in emitters:
            message = "%s: no C emitter for area %r" % (path, doc["area"])
            if strict:
                problems.append(message)
                continue
            (warn or sys.stderr.write)("to_c.py: skipped %s\n" % message)
            continue
        # Converted alone first, so a test lacking a field is blamed on its own file.
        try:
            emitters[doc["area"]]([doc], CSource())
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            problems.append("%s: cannot convert a test of area %r: %s %s" % (
                path, doc["area"], type(e).__name__, e))
            continue
        by_area.setdefault(doc["area"], []).append(doc)
    if problems:
        raise BadVectorFiles(problems)
    c = CSource()
    c.add("/* Generated by harness/pecs_vectors/to_c.py from vectors/; do not edit. */")
    c.add("#include <stddef.h>")
    c.add("#include <stdint.h>")
    c.add()
    c.add('#include "pecs/vectors.h"')
    c.add()
    for area in emitters:
        c.add("/* ---- %s ---- */" % area)
        emitters[area](by_area.get(area, []), c)
    return "\n".join(c.lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="vector JSON -> C arrays")
    p.add_argument("--out", required=True)
    p.add_argument("--strict", action="store_true", help="refuse files of areas without an emitter")
    p.add_argument("files", nargs="+")
    args = p.parse_args(argv)
    emitters = dict(EMITTERS)
    load_plugins(emitters)
    try:
        text = convert(args.files, emitters, strict=args.strict)
    except BadVectorFiles as e:
        for problem in e.problems:
            sys.stderr.write("to_c.py: %s\n" % problem)
        return 2
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
