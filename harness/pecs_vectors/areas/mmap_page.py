"""struct perf_event_mmap_page: every field's offset and size, and the capability bits."""

from .. import layout, uapi
from ..document import VectorFile

AREA = "mmap_page"
PATH = "mmap_page/mmap_page.json"

NOTES = {
    "Field": "A member of struct perf_event_mmap_page at the offset the C layout gives it.",
    "Reserved": "Padding reserved for later use; must read as zero bytes of this size.",
    "RingControl": "One of the data_* / aux_* words on the second half of the page, after the 1 KiB reserve.",
    "CapabilityBit": "A bit of the capabilities word (the bit-field union over it).",
}

PAGE_HEAD_SIZE = 1024


def build() -> VectorFile:
    vf = VectorFile(AREA, NOTES)
    fields, total = layout.natural_layout(uapi.MMAP_PAGE_FIELDS)
    if total != PAGE_HEAD_SIZE + 8 * 8:
        raise AssertionError("mmap page table does not add up: %d bytes" % total)
    g = vf.group("MmapPageFieldTest", "uapi-header",
                 "include/uapi/linux/perf_event.h (Linux 6.12), struct perf_event_mmap_page")
    for name, offset, size in fields:
        flags = ["Field"]
        if name.startswith("__reserved"):
            flags.append("Reserved")
        if offset >= PAGE_HEAD_SIZE:
            flags.append("RingControl")
        g.add("%s: %d bytes at offset %d" % (name, size, offset), flags,
              name=name, offset=offset, size=size)
    caps = vf.group("MmapCapabilityBitTest", "uapi-header",
                    "include/uapi/linux/perf_event.h (Linux 6.12), the bit fields in the union "
                    "with perf_event_mmap_page.capabilities")
    for bit, name in enumerate(uapi.MMAP_CAPABILITY_BITS):
        caps.add("capabilities bit %d is %s" % (bit, name), ["CapabilityBit"], name=name, bit=bit)
    return vf
