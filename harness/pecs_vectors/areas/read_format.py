"""read() layouts for every read_format, single and GROUP."""

from .. import layout, uapi
from ..document import Group, VectorFile

AREA = "read_format"
PATH = "read_format/read_format.json"

NOTES = {
    "SingleRead": "read() of an event opened without PERF_FORMAT_GROUP: value, then the optional words.",
    "GroupRead": "read() with PERF_FORMAT_GROUP: nr, the times, then one block per member, leader first.",
    "ValueOnly": "No optional word is requested: the smallest layout.",
    "LostWord": "PERF_FORMAT_LOST (Linux 6.0+) adds a lost-samples word per event.",
    "AllWords": "Every optional bit is set: the largest layout for this shape.",
}

_NAMES = (
    (uapi.FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"),
    (uapi.FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"),
    (uapi.FORMAT_ID, "ID"),
    (uapi.FORMAT_GROUP, "GROUP"),
    (uapi.FORMAT_LOST, "LOST"),
)
_OPTIONAL_MASK = sum(uapi.FORMAT_OPTIONAL_BITS)


def format_name(read_format: int) -> str:
    names = [name for bit, name in _NAMES if read_format & bit]
    return "|".join(names) if names else "0"


def optional_subsets() -> list[int]:
    """The 16 combinations of the optional bits, in numeric order."""
    return [rf for rf in range(_OPTIONAL_MASK + 1) if rf & ~_OPTIONAL_MASK == 0]


def _flags(read_format: int, group: int) -> list[str]:
    flags = ["GroupRead" if group else "SingleRead"]
    optional = read_format & _OPTIONAL_MASK
    if optional == 0:
        flags.append("ValueOnly")
    if optional == _OPTIONAL_MASK:
        flags.append("AllWords")
    if read_format & uapi.FORMAT_LOST:
        flags.append("LostWord")
    return flags


def _add(group: Group, read_format: int, nr_members: int, comment: str) -> None:
    fields = layout.read_format_fields(read_format, nr_members)
    size = fields[-1][1] + fields[-1][2]
    if size != layout.read_size_formula(read_format, nr_members):
        raise AssertionError("read_format 0x%x: field walk and size formula disagree" % read_format)
    group.add(comment, _flags(read_format, read_format & uapi.FORMAT_GROUP),
              read_format=read_format, nr_members=nr_members, size=size,
              fields=[{"name": n, "offset": o, "size": s} for n, o, s in fields])


def build() -> VectorFile:
    vf = VectorFile(AREA, NOTES)
    ref = ("include/uapi/linux/perf_event.h (Linux 6.12), the 'struct read_format' comment above "
           "enum perf_event_read_format; man 2 perf_event_open, section 'Reading results'")
    single = vf.group("ReadFormatTest", "uapi-header", ref)
    for rf in optional_subsets():
        _add(single, rf, 1, "read_format %s, one event" % format_name(rf))
    for nr in (1, 2, 3):
        grp = vf.group("ReadFormatTest", "uapi-header", ref)
        for rf in optional_subsets():
            rf |= uapi.FORMAT_GROUP
            _add(grp, rf, nr, "read_format %s, %d member%s" % (format_name(rf), nr, "" if nr == 1 else "s"))
    return vf
