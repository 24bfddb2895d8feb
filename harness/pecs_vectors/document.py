"""Building one vector file and writing it out the same way every time."""

import json

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
    def __init__(self, owner, fields):
        self._owner = owner
        self.fields = fields
        self.tests = []

    def add(self, comment, flags, result="valid", **area_fields):
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

    def __init__(self, area, notes):
        self.area = area
        self.notes = dict(notes)
        self.groups = []
        self.next_id = 0

    def group(self, kind, source, ref, **fields):
        if source not in SOURCES:
            raise ValueError("source %r is not in the closed list" % source)
        g = Group(self, dict({"type": kind, "source": {"name": source, "ref": ref}}, **fields))
        self.groups.append(g)
        return g

    def to_dict(self):
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


def dumps(doc):
    """The canonical text of a vector file: insertion key order, 2-space indent, final newline."""
    return json.dumps(doc, indent=2, ensure_ascii=True) + "\n"


def hex_u64(value):
    return "0x%x" % value


def hex_bytes(data):
    return bytes(data).hex()
