"""PERF_RECORD_SAMPLE bytes for the sample_type fields a software event can produce.

The encoder below walks sample_type in the order perf_output_sample() in
kernel/events/core.c writes it, and fills the fields a software PMU leaves empty with
what perf_prepare_sample() puts there. Words only known at run time (ids, counter values
and times, host-dependent values) are written as the placeholders given in the test's
inputs and listed in `dynamic`, so a checker patches or skips exactly those bytes.
"""

import itertools
import struct
from collections.abc import Iterable, Sequence
from typing import Any

from .. import layout, uapi
from ..document import Group, VectorFile, hex_bytes, hex_u64
from .read_format import format_name, optional_subsets

AREA = "record_layout"
PATH = "record_layout/record_layout.json"

NOTES = {
    "SingleField": "sample_type has exactly one bit set.",
    "FieldPair": "sample_type has two bits set: checks their relative order.",
    "FullSet": "Every sample_type bit a software event can produce (WEIGHT and WEIGHT_STRUCT exclude each other).",
    "ReadSingle": "PERF_SAMPLE_READ with a read_format without GROUP: the event's own read() layout.",
    "ReadGroup": "PERF_SAMPLE_READ with PERF_FORMAT_GROUP: the whole group, leader (the sampling event) first.",
    "Callchain": "PERF_SAMPLE_CALLCHAIN: nr, PERF_CONTEXT_USER, then the sample's ips.",
    "SoftwareDefault": "Contains a field a software event has no data for; the kernel writes a fixed value.",
    "HostDependent": "Contains a field whose value depends on the host (cgroup id, code page size); "
                     "the expected bytes hold 0 and `dynamic` lists the range.",
    "ToolDefault": "A sample_type combination profilers ask for (one is Fuchsia's Starnix FXT unit test).",
}

# Fields in perf_output_sample() order; those a software event cannot produce without
# extra attr configuration (BRANCH_STACK, REGS_USER, STACK_USER, REGS_INTR, AUX) are left out.
ORDER = (
    "IDENTIFIER", "IP", "TID", "TIME", "ADDR", "ID", "STREAM_ID", "CPU", "PERIOD", "READ",
    "CALLCHAIN", "RAW", "WEIGHT", "WEIGHT_STRUCT", "DATA_SRC", "TRANSACTION", "PHYS_ADDR",
    "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE",
)
# Bits whose value is derived from the sample address; the kernel reports 0 for address 0.
ADDR_DERIVED = ("PHYS_ADDR", "DATA_PAGE_SIZE")
HOST_DEPENDENT = {"CGROUP": "cgroup", "CODE_PAGE_SIZE": "code_page_size"}
SOFTWARE_DEFAULTS = ("RAW", "WEIGHT", "WEIGHT_STRUCT", "DATA_SRC", "TRANSACTION",
                     "PHYS_ADDR", "DATA_PAGE_SIZE")

BASE_SAMPLE: dict[str, Any] = {
    "pid": 4242,
    "tid": 4243,
    "time": 1234567890123,
    "cpu": 1,
    "period": 100000,
    "addr": 0x7ffd2a3b4000,
    "ips": [0x401136, 0x4011a0, 0x7f3c5d6e7f80],
}
EVENT_IDS = [101, 102]
READ_INPUT = {"time_enabled": 5000000, "time_running": 4000000, "values": [777, 555], "lost": [0, 0]}


class _Record:
    """The bytes, the dynamic ranges, and a label for every word written (`words`, not
    published: the kernel cross-check uses it to know what each word means)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.dynamic: list[dict[str, Any]] = []
        self.words: list[tuple[int, int, str]] = []
        self.label = ""

    def u32(self, value: int) -> None:
        self.words.append((len(self.data), 4, self.label))
        self.data += struct.pack("<I", value)

    def u64(self, value: int, dynamic: str | None = None) -> None:
        self.words.append((len(self.data), 8, self.label))
        if dynamic:
            self.dynamic.append({"offset": len(self.data), "size": 8, "field": dynamic})
        self.data += struct.pack("<Q", value)


def _set_bits(sample_type: int) -> list[str]:
    return [name for name in ORDER if sample_type & uapi.sample(name)]


def _put_read(rec: _Record, read_format: int, nr_members: int, ids: Sequence[int],
              read: dict[str, Any]) -> None:
    """The READ field, placed with the read() field walk rather than ad hoc code."""
    for name, _offset, _size in layout.read_format_fields(read_format, nr_members):
        rec.label = "READ:" + name
        if name == "nr":
            rec.u64(nr_members)
        elif name in ("time_enabled", "time_running"):
            rec.u64(read[name], name)
        elif name == "value":
            rec.u64(read["values"][0], "value")
        elif name == "id":
            rec.u64(ids[0], "id")
        elif name == "lost":
            rec.u64(read["lost"][0])
        else:  # member[i].word
            i = int(name[name.index("[") + 1:name.index("]")])
            word = name.split(".")[1]
            if word == "value":
                rec.u64(read["values"][i], "member_value[%d]" % i)
            elif word == "id":
                rec.u64(ids[i], "member_id[%d]" % i)
            else:
                rec.u64(read["lost"][i])


def encode(sample_type: int, read_format: int, nr_members: int, sample: dict[str, Any],
           ids: Sequence[int], read: dict[str, Any]) -> _Record:
    rec = _Record()
    rec.label = "header"
    rec.u32(uapi.RECORD_SAMPLE)
    rec.u32(0)  # misc and size, filled in below
    ips = sample["ips"]
    ip = ips[0] if ips else 0
    for name in _set_bits(sample_type):
        rec.label = name
        if name in ("IDENTIFIER", "ID", "STREAM_ID"):
            # Not inherited, so the stream id is the event's own id as well.
            rec.u64(ids[0], "id")
        elif name == "IP":
            rec.u64(ip)
        elif name == "TID":
            rec.u32(sample["pid"])
            rec.u32(sample["tid"])
        elif name == "TIME":
            rec.u64(sample["time"])
        elif name == "ADDR":
            rec.u64(sample["addr"])
        elif name == "CPU":
            rec.u32(sample["cpu"])
            rec.u32(0)
        elif name == "PERIOD":
            rec.u64(sample["period"])
        elif name == "READ":
            _put_read(rec, read_format, nr_members, ids, read)
        elif name == "CALLCHAIN":
            rec.label = "CALLCHAIN:nr"
            rec.u64(1 + len(ips))
            rec.label = "CALLCHAIN:context"
            rec.u64(uapi.CONTEXT_USER)
            rec.label = "CALLCHAIN:ip"
            for a in ips:
                rec.u64(a)
        elif name == "RAW":
            rec.u32(4)  # no raw data: a u32 size of 4 and four zero bytes
            rec.u32(0)
        elif name == "DATA_SRC":
            rec.u64(uapi.MEM_NA)
        elif name in HOST_DEPENDENT:
            rec.u64(0, HOST_DEPENDENT[name])
        elif name in ("WEIGHT", "WEIGHT_STRUCT", "TRANSACTION", "PHYS_ADDR", "DATA_PAGE_SIZE"):
            rec.u64(0)
        else:
            raise AssertionError(name)
    size = len(rec.data)
    if size % 8 or size > 0xFFFF:
        raise AssertionError("record size %d" % size)
    struct.pack_into("<HH", rec.data, 4, uapi.MISC_USER, size)
    return rec


def _sample_for(sample_type: int, nr_ips: int | None = None) -> dict[str, Any]:
    s = dict(BASE_SAMPLE)
    s["ips"] = list(BASE_SAMPLE["ips"] if nr_ips is None else
                    [0x401000 + 0x10 * i for i in range(nr_ips)])
    # PHYS_ADDR and DATA_PAGE_SIZE describe the page at addr; only address 0 gives a
    # value (0) that does not depend on the host's page tables.
    if any(sample_type & uapi.sample(b) for b in ADDR_DERIVED):
        s["addr"] = 0
    return s


def _name(sample_type: int) -> str:
    return "|".join(_set_bits(sample_type))


def _add(group: Group, comment: str, flags: Iterable[str], sample_type: int, read_format: int = 0,
         nr_members: int = 1, nr_ips: int | None = None) -> None:
    sample = _sample_for(sample_type, nr_ips)
    group_read = read_format & uapi.FORMAT_GROUP
    ids = EVENT_IDS[:nr_members] if group_read else EVENT_IDS[:1]
    read = {k: (v[:len(ids)] if isinstance(v, list) else v) for k, v in READ_INPUT.items()}
    rec = encode(sample_type, read_format, nr_members, sample, ids, read)
    flag_list = list(flags)
    bits = _set_bits(sample_type)
    if "CALLCHAIN" in bits and "Callchain" not in flag_list:
        flag_list.append("Callchain")
    if "READ" in bits:
        flag_list.append("ReadGroup" if group_read else "ReadSingle")
    if any(b in SOFTWARE_DEFAULTS for b in bits):
        flag_list.append("SoftwareDefault")
    if any(b in HOST_DEPENDENT for b in bits):
        flag_list.append("HostDependent")
    test: dict[str, Any] = {
        "sample_type": sample_type,
        "read_format": read_format,
        "nr_members": nr_members if group_read else 1,
        "sample": {
            "pid": sample["pid"], "tid": sample["tid"], "time": sample["time"],
            "cpu": sample["cpu"], "period": sample["period"], "addr": hex_u64(sample["addr"]),
            "ips": [hex_u64(a) for a in sample["ips"]],
        },
        "ids": ids,
    }
    if "READ" in bits:
        test["read"] = read
    test.update({"misc": uapi.MISC_USER, "size": len(rec.data), "expected": hex_bytes(rec.data),
                 "dynamic": rec.dynamic})
    group.add(comment, flag_list, **test)


def build() -> VectorFile:
    vf = VectorFile(AREA, NOTES)
    ref = ("kernel/events/core.c (Linux 6.12): perf_output_sample() for the field order, "
           "perf_prepare_sample() for the values a software event gets; "
           "include/uapi/linux/perf_event.h, enum perf_event_type PERF_RECORD_SAMPLE")

    single = vf.group("RecordLayoutTest", "kernel-source", ref)
    for name in ORDER:
        st = uapi.sample(name)
        _add(single, "sample_type %s alone" % name, ["SingleField"], st)

    reads = vf.group("RecordLayoutTest", "kernel-source", ref)
    for rf in optional_subsets():
        if rf:
            _add(reads, "READ with read_format %s" % format_name(rf), ["SingleField"],
                 uapi.sample("READ"), rf)
    for rf in optional_subsets():
        rf |= uapi.FORMAT_GROUP
        _add(reads, "READ with read_format %s, leader and one member" % format_name(rf),
             ["SingleField"], uapi.sample("READ"), rf, 2)

    chains = vf.group("RecordLayoutTest", "kernel-source", ref)
    for n in (1, 2, 5, 16):
        _add(chains, "CALLCHAIN with %d ip%s" % (n, "" if n == 1 else "s"), ["SingleField", "Callchain"],
             uapi.sample("CALLCHAIN"), nr_ips=n)

    pairs = vf.group("RecordLayoutTest", "kernel-source", ref)
    for a, b in itertools.combinations(ORDER, 2):
        if {a, b} == {"WEIGHT", "WEIGHT_STRUCT"}:
            continue  # perf_event_open() refuses the two together
        _add(pairs, "sample_type %s|%s" % (a, b), ["FieldPair"], uapi.sample(a, b))

    full = vf.group("RecordLayoutTest", "kernel-source", ref)
    everything = [n for n in ORDER if n != "WEIGHT_STRUCT"]
    no_read = [n for n in everything if n != "READ"]
    _add(full, "every software field except READ", ["FullSet"], uapi.sample(*no_read))
    _add(full, "every software field, WEIGHT_STRUCT instead of WEIGHT, no READ", ["FullSet"],
         uapi.sample(*[n if n != "WEIGHT" else "WEIGHT_STRUCT" for n in no_read]))
    all_single = sum(uapi.FORMAT_OPTIONAL_BITS)
    _add(full, "every software field, READ with read_format %s" % format_name(all_single),
         ["FullSet"], uapi.sample(*everything), all_single)
    _add(full, "every software field, READ with read_format %s, leader and one member"
         % format_name(all_single | uapi.FORMAT_GROUP),
         ["FullSet"], uapi.sample(*everything), all_single | uapi.FORMAT_GROUP, 2)

    tools = vf.group("RecordLayoutTest", "kernel-source", ref)
    combos = (
        ("IP|TID, the sample_type of Fuchsia's Starnix FXT unit test", ("IP", "TID"), 0, None),
        ("IP|TID|CALLCHAIN with 3 ips: nr counts the context marker, so 64 bytes", ("IP", "TID", "CALLCHAIN"), 0, 3),
        ("IDENTIFIER|IP|TID|TIME|PERIOD, a typical profiler's choice",
         ("IDENTIFIER", "IP", "TID", "TIME", "PERIOD"), 0, None),
        ("IDENTIFIER|IP|TID|TIME|ID|CPU|PERIOD|CALLCHAIN, a call-graph profile of several events",
         ("IDENTIFIER", "IP", "TID", "TIME", "ID", "CPU", "PERIOD", "CALLCHAIN"), 0, None),
    )
    for comment, bits, rf, nr_ips in combos:
        _add(tools, comment, ["ToolDefault"], uapi.sample(*bits), rf, nr_ips=nr_ips)
    return vf
