"""PERF_ATTR_SIZE_VERn and the first field each version added."""

from .. import layout, uapi
from ..document import VectorFile

AREA = "attr_sizes"
PATH = "open/attr_sizes.json"

NOTES = {
    "FirstPublished": "PERF_ATTR_SIZE_VER0, the struct as first published.",
    "Extension": "A later version: the attr grew by the listed first field (and what follows it).",
    "Latest": "The newest version the UAPI header of Linux 6.12 defines.",
}


def build() -> VectorFile:
    vf = VectorFile(AREA, NOTES)
    fields, total = layout.natural_layout(uapi.ATTR_FIELDS)
    offsets = {name: offset for name, offset, _ in fields}
    g = vf.group("AttrSizeTest", "uapi-header",
                 "include/uapi/linux/perf_event.h (Linux 6.12), PERF_ATTR_SIZE_VER0..VER8 and their "
                 "'add:' comments; struct perf_event_attr")
    previous = 0
    for i, (name, size, first) in enumerate(uapi.ATTR_VERSIONS):
        # The version's first field must start where the previous version ended.
        if offsets[first] != previous:
            raise AssertionError("%s: %s at %d, previous size %d" % (name, first, offsets[first], previous))
        flags = ["FirstPublished"] if i == 0 else ["Extension"]
        if i == len(uapi.ATTR_VERSIONS) - 1:
            flags.append("Latest")
            if size != total:
                raise AssertionError("latest attr size %d, struct is %d" % (size, total))
        g.add("%s = %d bytes, first field %s at offset %d" % (name, size, first, previous), flags,
              name=name, size=size, first_field=first, first_field_offset=previous)
        previous = size
    return vf
