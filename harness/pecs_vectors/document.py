"""Vector files: building one and writing it out the same way every time, and reading one
back with the shape every reader relies on checked."""

import json
from collections.abc import Sequence
from typing import Any

# The closed list of places a vector may come from. The engine under test is never one.
SOURCES = (
    "man-page",
    "uapi-header",
    "kernel-source",
    "linux-capture",
    "fxt-spec",
    "fuchsia-source",
    "symbolizer-markup-spec",
)

RESULTS = ("valid", "invalid", "acceptable")


class Group:
    def __init__(self, owner: "VectorFile", fields: dict[str, Any]) -> None:
        self._owner = owner
        self.fields = fields
        self.tests: list[dict[str, Any]] = []

    def add(self, comment: str, flags: Sequence[str], result: str = "valid",
            **area_fields: Any) -> dict[str, Any]:
        for flag in flags:
            if flag not in self._owner.notes:
                raise ValueError("flag %r has no note in area %s" % (flag, self._owner.area))
        if result not in RESULTS:
            raise ValueError("result %r" % result)
        self._owner.next_id += 1
        test = {"tcId": self._owner.next_id, "comment": comment, "flags": list(flags),
                "result": result}
        test.update(area_fields)
        self.tests.append(test)
        return test


class VectorFile:
    """One area's file; tcIds are handed out in the order tests are added."""

    def __init__(self, area: str, notes: dict[str, str]) -> None:
        self.area = area
        self.notes = dict(notes)
        self.groups: list[Group] = []
        self.next_id = 0

    def group(self, kind: str, source: str, ref: str, **fields: Any) -> Group:
        if source not in SOURCES:
            raise ValueError("source %r is not in the closed list" % source)
        g = Group(self, dict({"type": kind, "source": {"name": source, "ref": ref}}, **fields))
        self.groups.append(g)
        return g

    def to_dict(self) -> dict[str, Any]:
        groups = []
        for g in self.groups:
            d = dict(g.fields)
            d["tests"] = g.tests
            groups.append(d)
        return {
            "schema": "%s.schema.json" % self.area,
            "area": self.area,
            "numberOfTests": sum(len(g.tests) for g in self.groups),
            "notes": self.notes,
            "testGroups": groups,
        }


def dumps(doc: dict[str, Any]) -> str:
    """The canonical text of a vector file: insertion key order, 2-space indent, final newline."""
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def hex_u64(value: int) -> str:
    return "0x%x" % value


def hex_bytes(data: bytes | bytearray) -> str:
    return bytes(data).hex()


class BadDocument(ValueError):
    """A vector file that cannot be used; the message names it and says why."""


def read(path: str, area: str | None = None) -> dict[str, Any]:
    """The vector document at path, checked far enough that walking its groups and tests
    cannot trip over its shape: a JSON object naming its area (the given one, when area is
    not None) whose "testGroups" is a list of objects with "tests" lists of objects.
    BadDocument otherwise."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise BadDocument("%s: cannot read: %s" % (path, e.strerror))
    except UnicodeDecodeError as e:
        raise BadDocument("%s: not UTF-8 text (%s)" % (path, e.reason))
    kind = "%s vectors" % area if area else "vectors"
    if not text.strip():
        raise BadDocument("%s: empty file, not a %s file" % (path, kind))
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise BadDocument("%s: not JSON, truncated? (%s)" % (path, e))
    if area is not None and (not isinstance(doc, dict) or doc.get("area") != area):
        raise BadDocument("%s: not a %s file (area %s)" % (
            path, kind, json.dumps(doc.get("area")) if isinstance(doc, dict) else "missing"))
    if not isinstance(doc, dict) or not isinstance(doc.get("area"), str):
        raise BadDocument("%s: not a vectors file: no \"area\"" % path)
    groups = doc.get("testGroups")
    if not isinstance(groups, list) or not all(
            isinstance(g, dict) and isinstance(g.get("tests"), list) and
            all(isinstance(t, dict) for t in g["tests"]) for g in groups):
        raise BadDocument("%s: not a vectors file: \"testGroups\" is not a list of groups "
                          "with \"tests\" lists" % path)
    return doc
