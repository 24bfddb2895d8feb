"""Profiler-stream vectors: FXT and symbolizer-markup streams, what they decode to, and the
PERF_RECORD_SAMPLE bytes an engine must write for them.

Everything is built here from the formats' bit layouts (the FXT spec's [lo..hi] fields,
the markup spec's grammar) and the UAPI sample layout, with this module's own packing
helpers. Nothing is parsed back and no pecs C code is consulted: each builder records the
outcome it expects while it appends bytes.

    python3 -m pecs_vectors.stream_gen --check | --write

tcIds are handed out in the order tests are added and published ids never change meaning
(docs/vectors.md; lint enforces it): add new tests at the end of a file's last builder, never between
existing ones.
"""

import argparse
import struct
import sys

from . import document

FXT_PATH = "fxt/fxt_stream.json"
MARKUP_PATH = "markup/markup_stream.json"

FXT_REF = "fuchsia docs/reference/tracing/trace-format.md (record framing, metadata, init, " \
          "string, thread, kernel object and profiler records)"
FUCHSIA_REF = "fuchsia src/starnix/kernel/perf: FXT unit test feeding magic and two " \
              "backtraces with one koid pair mapped; sdk/lib/fxt serializer"
MARKUP_REF = "llvm docs/SymbolizerMarkupFormat.rst (bt, reset, module, mmap; %p is 0x and " \
             "at most 16 hex digits); llvm/test/DebugInfo/symbolize-filter-markup-*.test"

# ---- the sample record (include/uapi/linux/perf_event.h, perf_output_sample order) ----

SAMPLE_IP = 1 << 0
SAMPLE_TID = 1 << 1
SAMPLE_TIME = 1 << 2
SAMPLE_CALLCHAIN = 1 << 5
SAMPLE_CPU = 1 << 7
SAMPLE_PERIOD = 1 << 8
RECORD_SAMPLE = 9
MISC_USER = 2
CONTEXT_USER = (1 << 64) - 512


def u16(v):
    return struct.pack("<H", v)


def u32(v):
    return struct.pack("<I", v)


def u64(v):
    return struct.pack("<Q", v)


# kernel.perf_event_max_stack's default: a callchain keeps at most this many ips after
# its context marker (kernel/events/callchain.c, get_perf_callchain()).
MAX_STACK = 127


def sample_record(sample_type, s, period, cpu=0):
    """PERF_RECORD_SAMPLE for a user-mode sample: IP, TID, TIME, CPU, PERIOD, CALLCHAIN in
    the kernel's order; the callchain opens with PERF_CONTEXT_USER and is cut at
    MAX_STACK ips."""
    body = b""
    if sample_type & SAMPLE_IP:
        body += u64(s["ips"][0])
    if sample_type & SAMPLE_TID:
        body += u32(s["pid"]) + u32(s["tid"])
    if sample_type & SAMPLE_TIME:
        body += u64(s["time"])
    if sample_type & SAMPLE_CPU:
        body += u32(cpu) + u32(0)
    if sample_type & SAMPLE_PERIOD:
        body += u64(period)
    if sample_type & SAMPLE_CALLCHAIN:
        chain = s["ips"][:MAX_STACK]
        body += u64(1 + len(chain)) + u64(CONTEXT_USER)
        body += b"".join(u64(ip) for ip in chain)
    return u32(RECORD_SAMPLE) + u16(MISC_USER) + u16(8 + len(body)) + body


# ---- FXT bit packing ----

def bits(value, lo, hi):
    """value placed in [lo..hi]; refuses values that do not fit."""
    width = hi - lo + 1
    if value < 0 or value >= 1 << width:
        raise ValueError("%#x does not fit [%d..%d]" % (value, lo, hi))
    return value << lo


def words(*ws):
    return b"".join(u64(w) for w in ws)


def padded(data):
    return bytes(data) + b"\0" * (-len(data) % 8)


def header(rtype, nwords, **fields):
    """A record header: type [0..3], size in words [4..15] (header included), plus
    type-specific fields given as name=(value, lo, hi)."""
    h = bits(rtype, 0, 3) | bits(nwords, 4, 15)
    for value, lo, hi in fields.values():
        h |= bits(value, lo, hi)
    return h


MAGIC = header(0, 1, meta=(4, 16, 19), info=(0, 20, 23), magic=(0x16547846, 24, 55))
assert MAGIC == 0x0016547846040010  # the word the spec prints
assert u64(MAGIC) == bytes.fromhex("1000044678541600")


def rec_magic():
    return words(MAGIC)


def rec_init(tps, nwords=2):
    return words(header(1, nwords), tps) + b"\0" * 8 * (nwords - 2)


def rec_string(index, text, nwords=None, length=None):
    data = padded(text.encode())
    n = 1 + len(data) // 8 if nwords is None else nwords
    ln = len(text.encode()) if length is None else length
    body = data + b"\0" * 8 * max(0, n - 1 - len(data) // 8)
    return words(header(2, n, index=(index, 16, 30), len=(ln, 32, 46))) + body[:8 * (n - 1)]


def rec_thread(index, pkoid, tkoid, nwords=3):
    return (words(header(3, nwords, index=(index, 16, 23))) +
            words(pkoid, tkoid, *([0] * max(0, nwords - 3))))[:8 * nwords]


def str_ref_inline(text):
    return 0x8000 | len(text.encode())


def rec_kobj(obj_type, koid, name_ref, inline=b"", nwords=None):
    data = padded(inline)
    n = 2 + len(data) // 8 if nwords is None else nwords
    rec = words(header(7, n, obj=(obj_type, 16, 23), name=(name_ref, 24, 39),
                       argc=(0, 40, 43)), koid) + data
    return rec[:8 * n]


def rec_backtrace(ticks, ips, pkoid=0, tkoid=0, tref=0, nwords=None, nr=None):
    body = words(ticks) + (b"" if tref else words(pkoid, tkoid)) + words(*ips)
    n = 1 + len(body) // 8 if nwords is None else nwords
    count = len(ips) if nr is None else nr
    h = header(10, n, sub=(2, 16, 19), thread=(tref, 20, 27), nr=(count, 28, 35))
    return (words(h) + body + b"\0" * 8 * max(0, n - 1 - len(body) // 8))[:8 * n]


def rec_module(module_id, name, build_id, ticks=0, pkoid=0, tkoid=0, tref=0, name_len=None):
    body = words(ticks) + (b"" if tref else words(pkoid, tkoid))
    body += padded(name.encode()) + padded(build_id)
    nl = len(name.encode()) if name_len is None else name_len
    h = header(10, 1 + len(body) // 8, sub=(0, 16, 19), thread=(tref, 20, 27),
               mod=(module_id, 28, 43), nl=(nl, 44, 51), bl=(len(build_id), 52, 59))
    return words(h) + body


def rec_mmap(module_id, flags, start, rng, vaddr, ticks=0, pkoid=0, tkoid=0, tref=0,
             nwords=None):
    body = words(ticks) + (b"" if tref else words(pkoid, tkoid)) + words(start, rng, vaddr)
    n = 1 + len(body) // 8 if nwords is None else nwords
    h = header(10, n, sub=(1, 16, 19), thread=(tref, 20, 27), mod=(module_id, 28, 43),
               flags=(flags, 44, 46))
    return (words(h) + body)[:8 * n]


def rec_provider_info(pid, name, name_len=None, nwords=None):
    data = padded(name.encode())
    n = 1 + len(data) // 8 if nwords is None else nwords
    nl = len(name.encode()) if name_len is None else name_len
    h = header(0, n, meta=(1, 16, 19), id=(pid, 20, 51), nl=(nl, 52, 59))
    return (words(h) + data)[:8 * n]


def rec_provider_section(pid):
    return words(header(0, 1, meta=(2, 16, 19), id=(pid, 20, 51)))


def rec_provider_event(pid, event):
    return words(header(0, 1, meta=(3, 16, 19), id=(pid, 20, 51), ev=(event, 52, 55)))


def rec_trace_info_magic(value):
    return words(header(0, 1, meta=(4, 16, 19), info=(0, 20, 23), magic=(value, 24, 55)))


def rec_opaque(rtype, nwords, fill=0x5a):
    """A record pecs does not decode (event, blob, log, ...): header then filler."""
    return words(header(rtype, nwords, x=(0x3c, 16, 23))) + bytes([fill]) * 8 * (nwords - 1)


def rec_large(nwords, large_type=0, blob_format=1):
    """Large record (type 15): size in words [4..35], large type [36..39], format [40..43]."""
    h = bits(15, 0, 3) | bits(nwords, 4, 35) | bits(large_type, 36, 39) | bits(blob_format, 40, 43)
    return words(h) + b"\xa5" * 8 * (nwords - 1)


def rec_profiler_unknown(subtype, nwords):
    h = header(10, nwords, sub=(subtype, 16, 19))
    return words(h) + b"\x11" * 8 * (nwords - 1)


NO_KOID = (1 << 64) - 1


class Outcome:
    """Bytes of a stream plus what an engine must make of them, built side by side."""

    def __init__(self, koids=()):
        self.data = bytearray()
        self.koids = dict(koids)
        self.samples = []
        self.dropped = 0
        self.warnings = 0
        self.error = None

    def _map(self, koid):
        if not self.koids:
            return koid if koid < 1 << 32 else None
        return self.koids.get(koid)

    def expect_sample(self, pkoid, tkoid, time, ips):
        pid, tid = self._map(pkoid), self._map(tkoid)
        if pid is None or tid is None:
            self.dropped += 1
        else:
            self.samples.append({"pid": pid, "tid": tid, "time": time, "ips": list(ips)})

    def bad(self, code, data):
        """Appends the malformed part; the error is at its first byte."""
        self.error = {"code": code, "offset": len(self.data)}
        self.data += data
        return self


class Fxt(Outcome):
    def __init__(self, koids=(), magic=True):
        super().__init__(koids)
        self.tps = 10 ** 9
        self.threads = {}
        if magic:
            self.data += rec_magic()

    def add(self, data):
        self.data += data
        return self

    def init(self, tps):
        self.tps = tps
        return self.add(rec_init(tps))

    def thread(self, index, pkoid, tkoid):
        self.threads[index] = (pkoid, tkoid)
        return self.add(rec_thread(index, pkoid, tkoid))

    def bt(self, ticks, ips, pkoid=0, tkoid=0, tref=0):
        if tref:
            # An undefined index resolves to koids that map to nothing (Fuchsia's
            # resolver warns and uses u64::MAX).
            pkoid, tkoid = self.threads.get(tref, (NO_KOID, NO_KOID))
            if tref not in self.threads:
                self.warnings += 1
        self.expect_sample(pkoid, tkoid, ticks * 10 ** 9 // self.tps, ips)
        return self.add(rec_backtrace(ticks, ips, pkoid, tkoid, tref))


class Markup(Outcome):
    """Lines in, samples out: a block (pid, tid, frames) is a sample when it closes."""

    def __init__(self, koids=()):
        super().__init__(koids)
        self.block = None

    def text(self, s):
        self.data += s.encode()
        return self

    def close(self):
        if self.block and self.block[2]:
            self.expect_sample(self.block[0], self.block[1], 0, self.block[2])
        if self.block:
            self.block[2] = []
        return self

    def sample(self, pid, tid, ips, kinds=None, indent=""):
        self.close()
        self.block = [pid, tid, list(ips)]
        self.text("%s%d\n%s%d\n" % (indent, pid, indent, tid))
        for i, ip in enumerate(ips):
            kind = (kinds[i] if kinds else ("pc" if i == 0 else "ra"))
            suffix = ":" + kind if kind else ""
            self.text("%s{{{bt:%d:%#x%s}}}\n" % (indent, i, ip, suffix))
        return self

    def reset(self):
        self.close()
        self.block = None
        return self.text("{{{reset}}}\n")

    def finish(self):
        return self.close()

    def bad(self, code, data):
        # A block still open when the error comes is never delivered.
        self.block = None
        return super().bad(code, data.encode() if isinstance(data, str) else data)


NOTES = {
    "Framing": "Record framing: header size in words, magic record first, records skipped by size.",
    "Tables": "String or thread table entries referenced by index.",
    "InlineRefs": "Strings or koids written inline in the record.",
    "KoidMap": "Fuchsia koids mapped to Linux pid/tid; unmapped samples are dropped and counted.",
    "Timebase": "Init record ticks-per-second conversion of backtrace timestamps to ns.",
    "Skipped": "Records or elements the pipeline does not use, passed over.",
    "Detect": "Decodes the same with the format named or detected from the first 8 bytes "
              "(the FXT magic word or not).",
    "Malformed": "The stream is malformed: decoding stops with error {code, offset}; samples "
                 "decoded before the bad record or line are still delivered.",
    "Truncated": "The stream ends inside a record or line.",
    "KeptBeforeError": "Samples precede the malformed part and must still be delivered.",
    "LongStream": "Long stream: consumers may feed it at a few chunk sizes instead of all.",
    "WorkedExample": "A worked example printed in the source.",
}

# Successive read sizes for a consumer that feeds one schedule (the rest comes last).
CHUNKS = [1, 2, 5, 8, 13]


def _emit(group, comment, flags, out, fmt, sample_type, period, result=None):
    """One test in the common streamTest shape (vectors/schema/common.schema.json)."""
    if result is None:
        result = "invalid" if out.error else "valid"
    flags = list(flags)
    if out.error and "Malformed" not in flags:
        flags.append("Malformed")
    if out.error and out.samples and "KeptBeforeError" not in flags:
        flags.append("KeptBeforeError")
    if len(out.data) > 4096 and "LongStream" not in flags:
        flags.append("LongStream")
    ring = b"".join(sample_record(sample_type, s, period) for s in out.samples)
    if fmt == "markup":
        stream = {"text": bytes(out.data).decode("ascii")}
    else:
        stream = {"hex": document.hex_bytes(out.data)}
    test = {
        "stream": stream,
        "chunk": CHUNKS,
        "koids": [{"koid": k, "linux_id": v} for k, v in sorted(out.koids.items())],
        "sample_type": sample_type,
        "sample_period": period,
        "expected": {
            "samples": [{"pid": s["pid"], "tid": s["tid"], "time": s["time"],
                         "ips": [document.hex_u64(ip) for ip in s["ips"]]} for s in out.samples],
            "ring": document.hex_bytes(ring),
            "error": out.error,
        },
        "x_dropped_unmapped": out.dropped,
        "x_warnings": out.warnings,
        "x_max_stack": MAX_STACK,
    }
    group.add(comment, flags, result, **test)


ST_FULL = SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_PERIOD | SAMPLE_CALLCHAIN
ST_FUCHSIA = SAMPLE_IP | SAMPLE_TID
ST_MARKUP = SAMPLE_IP | SAMPLE_TID | SAMPLE_CALLCHAIN
PERIOD = 1000000
M = {1001: 42, 1002: 43, 2001: 50, 2002: 51, 2003: 52}


def _fxt_valid(vf):
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)

    def add(comment, flags, out, fmt="fxt"):
        _emit(g, comment, flags, out, fmt, ST_FULL, PERIOD)

    add("empty stream: no records, no samples", ["Framing"], Fxt(magic=False))
    add("magic record alone", ["Framing"], Fxt())
    add("magic, init 1 GHz, one backtrace with inline koids",
        ["Framing", "InlineRefs", "KoidMap"],
        Fxt(M).init(10 ** 9).bt(5000, [0x401000, 0x402000], 1001, 1002))
    out = Fxt()
    # The example carries 2 in the reserved bits [36..63] too; a reader ignores them.
    h = header(10, 6, sub=(2, 16, 19), thread=(0, 20, 27), nr=(2, 28, 35), res=(2, 36, 63))
    assert h == 0x000000202002006A  # the research notes' worked header
    out.expect_sample(789, 987, 7000, [0x402a964b1499, 0x4ae0293b])
    out.add(words(h, 7000, 789, 987, 0x402a964b1499, 0x4ae0293b))
    add("worked example: header 0x000000202002006a (reserved bits [36..63] = 2), ticks 7000, koids 789/987, two ips, "
        "identity koid map", ["WorkedExample", "InlineRefs"], out)
    add("init 1000 ticks/s: 3 ticks are 3,000,000,000 ns",
        ["Timebase"], Fxt(M).init(1000).bt(3, [0x401000], 1001, 1002))
    add("init 2^32 ticks/s, ticks 2^60: ticks*1e9 overflows 64 bits, the ns value does not",
        ["Timebase"], Fxt(M).init(1 << 32).bt(1 << 60, [0x401000], 1001, 1002))
    add("init 3 ticks/s: conversion rounds down (10 ticks -> 3333333333 ns)",
        ["Timebase"], Fxt(M).init(3).bt(10, [0x401000], 1001, 1002))
    add("thread record then backtraces by thread ref",
        ["Tables", "KoidMap"],
        Fxt(M).thread(1, 1001, 1002).bt(10, [0x401000], tref=1).bt(20, [0x401010, 0x500000], tref=1))
    add("thread index 1 redefined: later refs see the new koids",
        ["Tables", "KoidMap"],
        Fxt(M).thread(1, 1001, 1002).bt(10, [0x401000], tref=1)
        .thread(1, 2001, 2002).bt(20, [0x401100], tref=1))
    add("thread table index 255 and mixed inline/indexed backtraces",
        ["Tables", "InlineRefs", "KoidMap"],
        Fxt(M).thread(255, 2001, 2003).bt(1, [0x1000], tref=255).bt(2, [0x2000], 1001, 1002)
        .bt(3, [0x3000], tref=255))
    add("string records and kernel objects named by index, inline and empty refs",
        ["Tables", "InlineRefs"],
        Fxt(M).add(rec_string(1, "proc"))
        .add(rec_string(0x7fff, "thread-with-a-longer-name"))
        .add(rec_kobj(1, 1001, 1))
        .add(rec_kobj(2, 1002, 0x7fff))
        .add(rec_kobj(2, 2002, str_ref_inline("inline name"), b"inline name"))
        .add(rec_kobj(2, 2003, 0))
        .bt(7, [0x401000], 1001, 1002))
    out = Fxt(M).add(rec_kobj(1, 1001, 9))
    out.warnings += 1
    add("kernel object naming string index 9, never defined: a warning, not an error "
        "(Fuchsia resolves it to a placeholder)", ["Tables"], out.bt(1, [0x401000], 1001, 1002))
    out = Fxt(M).add(rec_string(0, "zero"))
    out.warnings += 1
    add("string record for index 0: ignored with a warning", ["Tables"],
        out.bt(1, [0x401000], 1001, 1002))
    out = Fxt(M).bt(1, [0x401000], 1001, 1002).bt(2, [0x401000], tref=4)
    add("backtrace by undefined thread ref 4: koids resolve to nothing, the sample is "
        "dropped as unmapped", ["Tables", "KoidMap"], out)
    out = Fxt(M).add(rec_mmap(1, 5, 1, 2, 3, tref=9))
    out.warnings += 1
    add("mmap by undefined thread ref: a warning", ["Tables"], out.bt(1, [0x401000], 1001, 1002))
    add("provider info, section and event metadata before samples",
        ["Framing", "Skipped"],
        Fxt(M).add(rec_provider_info(7, "cpu_profiler")).add(rec_provider_section(7))
        .add(rec_provider_event(7, 0)).bt(1, [0x401000], 1001, 1002))
    add("module and mmap records, inline koids and by thread ref",
        ["InlineRefs", "Tables"],
        Fxt(M).thread(3, 1001, 1002).bt(1, [0x401000], tref=3)
        .add(rec_module(1, "libtest.so", bytes.fromhex("0123cafe"), 2, 1001, 1002))
        .add(rec_mmap(1, 5, 0x400000, 0x3000, 0x0, 2, 1001, 1002))
        .add(rec_module(2, "a", b"", 3, tref=3))
        .add(rec_mmap(2, 4, 0x600000, 0x1000, 0x2000, 3, tref=3)))
    out = Fxt(M)
    for t in (4, 5, 6, 8, 9, 11, 12, 13, 14):
        out.add(rec_opaque(t, 1 + t % 4))
        out.bt(t, [0x400000 + t], 1001, 1002)
    add("records of types 4, 5, 6, 8, 9, 11-14 are skipped by their size", ["Skipped", "Framing"], out)
    add("large records (type 15) are skipped by their 32-bit size",
        ["Skipped", "Framing"],
        Fxt(M).add(rec_large(3)).bt(1, [0x401000], 1001, 1002).add(rec_large(1, 1, 2))
        .bt(2, [0x401004], 1001, 1002))
    add("large record longer than any ordinary record (0x1001 words)",
        ["Skipped", "Framing"],
        Fxt(M).add(rec_large(0x1001)).bt(1, [0x401000], 1001, 1002))
    add("profiler records of unknown subtypes 3 and 15 are skipped",
        ["Skipped"],
        Fxt(M).add(rec_profiler_unknown(3, 2)).bt(1, [0x401000], 1001, 1002)
        .add(rec_profiler_unknown(15, 4)))
    add("a second magic record mid-stream (concatenated sessions) is accepted",
        ["Framing"],
        Fxt(M).bt(1, [0x401000], 1001, 1002).add(rec_magic()).bt(2, [0x401008], 1001, 1002))
    add("255 frames, the most a backtrace header can count",
        ["InlineRefs"], Fxt(M).bt(9, [0x7f0000000000 + 8 * i for i in range(255)], 1001, 1002))
    add("a record of 0xfff words, the largest ordinary size (a 32752-byte string), then a "
        "backtrace", ["Framing", "LongStream"],
        Fxt(M).add(rec_string(5, "x" * 8 * 0xffe)).bt(1, [0x401000], 1001, 1002))
    out = Fxt(M).init(10 ** 6)
    for i in range(24):
        pk, tk = [(1001, 1002), (2001, 2002), (2001, 2003)][i % 3]
        out.bt(100 + i, [0x401000 + i, 0x402000 + 2 * i, 0x403000][: 1 + i % 3], pk, tk)
    add("24 samples over three threads of two processes", ["KoidMap", "InlineRefs"], out)


def _fxt_koid(vf):
    g = vf.group("FxtStreamTest", "fuchsia-source", FUCHSIA_REF)
    out = Fxt({1001: 42, 1002: 43}).bt(1000, [0x12345678], 1001, 1002)
    out.bt(2000, [0x87654321], 9999, 9998)
    assert sample_record(ST_FUCHSIA, out.samples[0], PERIOD) == bytes.fromhex(
        "09000000" "0200" "1800" "7856341200000000" "2a000000" "2b000000")
    _emit(g, "Fuchsia unit test: two backtraces, koids 1001/1002 mapped to 42/43, 9999/9998 "
          "unmapped: one 24-byte record (type 9, misc 2, ip 0x12345678, pid 42, tid 43)",
          ["WorkedExample", "KoidMap"], out, "fxt", ST_FUCHSIA, PERIOD)
    out = Fxt({1001: 42}).bt(1, [0x401000], 1001, 1002).bt(2, [0x401000], 1001, 1001)
    _emit(g, "process koid mapped but thread koid not: dropped", ["KoidMap"], out, "fxt",
          ST_FUCHSIA, PERIOD)
    bid = bytes.fromhex("68920bd06a8149b58004cea8a0dd260b05e87d57")
    module = rec_module(99, "test_module.so", bid, 5000, 123, 0)
    assert struct.unpack("<Q", module[:8])[0] == (20 << 52 | 14 << 44 | 99 << 28 | 9 << 4 | 10)
    mapping = rec_mmap(101, 1, 0x1000, 0x2000, 0x3000, 6000, 456, 0)
    assert struct.unpack("<Q", mapping[:8])[0] == (1 << 44 | 101 << 28 | 1 << 16 | 7 << 4 | 10)
    out = Fxt().add(module).add(mapping).bt(7000, [0x402a964b1499, 0x4ae0293b], 789, 987)
    _emit(g, "Fuchsia fxt parser's module (id 99, test_module.so, 20-byte build id), mapping "
          "(id 101, flags 1) and backtrace examples in one stream", ["WorkedExample", "InlineRefs"],
          out, "fxt", ST_FUCHSIA, PERIOD)
    out = Fxt().bt(1, [0x401000], 7, 8).bt(2, [0x401000], 1 << 32, 9).bt(3, [0x401000], 10, 11)
    _emit(g, "no koid map: koids are Linux ids; a koid past 32 bits cannot be one and is dropped",
          ["KoidMap"], out, "fxt", ST_FUCHSIA, PERIOD)


def _grow(rec):
    """The record with one more zero word, its header's size raised to match."""
    h = struct.unpack("<Q", rec[:8])[0]
    n = (h >> 4) & 0xfff
    h = (h & ~(0xfff << 4)) | bits(n + 1, 4, 15)
    return u64(h) + rec[8:] + b"\0" * 8


def _fxt_malformed(vf):
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)

    def add(comment, out, flags=("Malformed",)):
        _emit(g, comment, list(flags), out, "fxt", ST_FULL, PERIOD)

    def ok():
        return Fxt(M).bt(1, [0x401000], 1001, 1002)

    add("first record is an init record, not the magic", Fxt(M, magic=False)
        .bad("FXT_MISSING_MAGIC", rec_init(1000) + rec_backtrace(1, [1], 1001, 1002)))
    add("first word is a trace-info record with the wrong magic value",
        Fxt(M, magic=False).bad("FXT_MISSING_MAGIC", rec_trace_info_magic(0x16547847)))
    add("text where FXT is required", Fxt(M, magic=False).bad("FXT_MISSING_MAGIC", b"1\n2\n{{{bt:0:0x1}}}\n"))
    add("header with size 0 after a sample", ok().bad("FXT_ZERO_SIZE", words(header(0, 0))))
    add("profiler header with size 0", ok().bad("FXT_ZERO_SIZE", words(header(10, 0, sub=(2, 16, 19)))))
    add("large record with size 0", ok().bad("FXT_ZERO_SIZE", words(bits(15, 0, 3))))
    add("backtrace header claims 6 words, stream ends after 3",
        ok().bad("TRUNCATED", rec_backtrace(2, [1, 2], 1001, 1002)[:24]), ["Truncated"])
    add("stream ends 4 bytes into a header", ok().bad("TRUNCATED", b"\x0a\x00\x00\x00"), ["Truncated"])
    add("skipped record (type 12, 10 words) cut after 2 words",
        ok().bad("TRUNCATED", rec_opaque(12, 10)[:16]), ["Truncated"])
    add("large record cut short", ok().bad("TRUNCATED", rec_large(40)[:100]), ["Truncated"])
    add("init record of 3 words", ok().bad("FXT_BAD_INIT", rec_init(1000, nwords=3)))
    add("init record with 0 ticks per second", ok().bad("FXT_BAD_INIT", rec_init(0)))
    add("string length past the record's size",
        ok().bad("FXT_BAD_STRING", rec_string(1, "abcdefghij", nwords=2)))
    add("thread record with index 0", ok().bad("FXT_BAD_THREAD", rec_thread(0, 1001, 1002)))
    add("thread record of 2 words", ok().bad("FXT_BAD_THREAD", rec_thread(1, 1001, 1002, nwords=2)))
    add("kernel object with inline name past the record",
        ok().bad("FXT_BAD_STRING_REF", rec_kobj(1, 1001, 0x8000 | 20, b"short", nwords=3)))
    add("kernel object record of 1 word", ok().bad("FXT_BAD_KERNEL_OBJECT", words(header(7, 1))))
    add("backtrace counting 3 frames with 2 present",
        ok().bad("FXT_BAD_BACKTRACE", rec_backtrace(2, [1, 2], 1001, 1002, nr=3)))
    add("backtrace counting 1 frame with 2 present",
        ok().bad("FXT_BAD_BACKTRACE", rec_backtrace(2, [1, 2], 1001, 1002, nr=1)))
    add("backtrace with inline koids but only a timestamp",
        ok().bad("FXT_BAD_BACKTRACE", rec_backtrace(2, [], tref=0, nwords=2)))
    add("module record whose name length runs past the record",
        ok().bad("FXT_BAD_MODULE", rec_module(1, "lib.so", b"\x01", 1, 1001, 1002, name_len=40)))
    add("mmap record missing its vaddr word",
        ok().bad("FXT_BAD_MMAP", rec_mmap(1, 5, 0x1000, 0x1000, 0, 1, 1001, 1002, nwords=6)))
    add("module record one word longer than its name and build id",
        ok().bad("FXT_BAD_MODULE", _grow(rec_module(1, "lib.so", b"\x01", 1, 1001, 1002))))
    add("mmap record with a word after vaddr",
        ok().bad("FXT_BAD_MMAP", _grow(rec_mmap(1, 5, 0x1000, 0x1000, 0, 1, 1001, 1002))))
    add("provider info whose name runs past the record",
        ok().bad("FXT_BAD_METADATA", rec_provider_info(1, "provider-name", nwords=2)))
    add("a later trace-info magic record with a wrong value",
        ok().bad("FXT_BAD_MAGIC", rec_trace_info_magic(0x12345678)))
    out = ok()
    out.bt(2, [0x401008], 1001, 1002)
    out.bad("FXT_BAD_BACKTRACE", rec_backtrace(3, [1], 1001, 1002, nr=0))
    out.add(rec_backtrace(4, [0x401010], 1001, 1002))  # after the error: never delivered
    add("two samples, a bad backtrace, then a good one that must not be delivered", out)


def _detect_fxt(vf):
    """Detection cases whose bytes start as FXT; they decode the same whether the consumer
    names the format or lets the first 8 bytes decide (flag Detect)."""
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)

    def add(comment, out, flags=("Detect",)):
        _emit(g, comment, list(flags), out, "fxt", ST_MARKUP, PERIOD)

    add("detect: empty stream, no format, no samples, no error", Fxt(magic=False))
    add("detect: FXT found by its magic word", Fxt(M).bt(1, [0x401000, 0x401100], 1001, 1002))
    add("detect: 3 bytes of the magic word, then the end: a truncated FXT stream",
        Fxt(magic=False).bad("TRUNCATED", u64(MAGIC)[:3]), ["Detect", "Truncated"])
    add("detect: 7 bytes of the magic word, then the end",
        Fxt(magic=False).bad("TRUNCATED", u64(MAGIC)[:7]), ["Detect", "Truncated"])


def _detect_markup(vf):
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)

    def add(comment, out, flags=("Detect",)):
        _emit(g, comment, list(flags), out, "markup", ST_MARKUP, PERIOD)

    add("detect: markup found by the absence of the magic word",
        Markup(M).sample(1001, 1002, [0x401000, 0x401100]).finish())
    add("detect: markup shorter than 8 bytes", Markup(M).text("1001\n").finish())
    add("detect: first byte as in FXT, then text: markup, and a bad line",
        Markup(M).bad("MARKUP_BAD_LINE", b"\x10abc\n"))


def _set_block(out, pid, tid, ips):
    """For streams written by hand with .text(): the block those lines leave open."""
    out.block = [pid, tid, list(ips)]
    return out


def _markup(vf):
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)

    def add(comment, flags, out):
        _emit(g, comment, list(flags), out, "markup", ST_MARKUP, PERIOD)

    add("empty text", [], Markup(M))
    out = Markup(M).reset().text("{{{module:1:test_module.so:elf:0123cafe}}}\n"
                                 "{{{mmap:0x3000:0x3000:load:1:rx:0x2000}}}\n")
    out.sample(1001, 1002, [0x3010, 0x3200, 0x3300]).sample(1001, 1002, [0x3020]).finish()
    add("Fuchsia profiler shape: reset, module, mmap, two samples (pc then ra frames)",
        ["KoidMap"], out)
    add("frames without a pc/ra suffix", [],
        Markup(M).sample(2001, 2002, [0x10, 0x20], kinds=["", ""]).finish())
    add("leading spaces and tabs, trailing blanks, CRLF line ends and blank lines", [],
        _set_block(Markup(M).text("\n  1001\r\n\t1002 \n  {{{bt:0:0x401000:pc}}}  \r\n\n"
                                  "\t{{{bt:1:0x402000:ra}}}\n"), 1001, 1002, [0x401000, 0x402000])
        .close())
    out = Markup(M)
    out.sample(1001, 1002, [0x401000, 0x401100])
    out.close()
    out.block = [1001, 1002, [0x401200]]
    out.text("{{{bt:0:0x401200:pc}}}\n").finish()
    add("frame 0 again under the same ids starts a second sample", [], out)
    out = Markup(M).sample(1001, 1002, [0x1]).reset().sample(2001, 2003, [0x2]).reset()
    add("reset closes a block", [], out.finish())
    add("unknown markup tags are skipped", ["Skipped"],
        Markup(M).text("{{{symbol:_ZN4test3fooEv}}}\n").sample(1001, 1002, [0x7])
        .text("{{{hexdict:x}}}\n").finish())
    add("unmapped koids: the block is dropped and counted", ["KoidMap"],
        Markup(M).sample(5, 6, [0x1]).sample(1001, 1002, [0x2]).finish())
    add("upper-case hex and the largest 16-digit address", [],
        Markup(M).sample(1001, 1002, [0xABCDEF, 0xffffffffffffffff]).finish())
    out = Markup(M).text("1001\n1002\n")
    out.sample(2001, 2002, [0x5])
    add("a block without frames gives no sample", [], out.finish())
    out = Markup(M)
    for i in range(40):
        pk, tk = [(1001, 1002), (2001, 2002), (2001, 2003)][i % 3]
        out.sample(pk, tk, [0x401000 + 16 * i, 0x7f00000000 + i][: 1 + i % 2])
    add("40 samples over three threads", ["KoidMap"], out.finish())
    out = Markup(M)
    out.sample(1001, 1002, [0x400000 + 8 * i for i in range(255)])
    add("255 frames in one block", [], out.finish())

    def bad(comment, code, line, prefix=True, flags=("Malformed",)):
        out = Markup(M)
        if prefix:
            out.sample(1001, 1002, [0x401000]).close()
            out.text("2001\n2002\n")
            out.block = [2001, 2002, []]
        out.bad(code, line)
        add(comment, flags, out)

    bad("{{{bt}}} (LLVM rejects: no fields)", "MARKUP_BAD_BT", "{{{bt}}}\n")
    bad("{{{bt:0:0:}}} (LLVM rejects: address without 0x, empty type)", "MARKUP_BAD_BT", "{{{bt:0:0:}}}\n")
    bad("{{{bt:0:0:pc:}}} (LLVM rejects: extra field)", "MARKUP_BAD_BT", "{{{bt:0:0:pc:}}}\n")
    bad("{{{reset:}}} (LLVM rejects: reset takes no fields)", "MARKUP_BAD_RESET", "{{{reset:}}}\n")
    bad("address 0x with no digits", "MARKUP_BAD_BT", "{{{bt:0:0x}}}\n")
    bad("address of 17 hex digits", "MARKUP_BAD_BT", "{{{bt:0:0x12345678901234567:pc}}}\n")
    bad("frame number not decimal", "MARKUP_BAD_BT", "{{{bt:x:0x1:pc}}}\n")
    bad("frame type neither pc nor ra", "MARKUP_BAD_BT", "{{{bt:0:0x1:xx}}}\n")
    bad("address with a non-hex digit", "MARKUP_BAD_BT", "{{{bt:0:0x12g4:pc}}}\n")
    bad("element not closed", "MARKUP_BAD_ELEMENT", "{{{bt:0:0x1:pc}}\n")
    bad("text after the element", "MARKUP_BAD_ELEMENT", "{{{bt:0:0x1:pc}}} trailing\n")
    bad("empty tag", "MARKUP_BAD_ELEMENT", "{{{}}}\n")
    bad("frame before any pid line", "MARKUP_BT_OUTSIDE_BLOCK", "{{{bt:0:0x1:pc}}}\n", prefix=False)
    out = Markup(M).text("1001\n").bad("MARKUP_BT_OUTSIDE_BLOCK", "{{{bt:0:0x1:pc}}}\n")
    add("frame after a pid line but no tid line", ["Malformed"], out)
    out = Markup(M).sample(1001, 1002, [0x401000]).bad("MARKUP_BAD_FRAME_INDEX", "{{{bt:2:0x3:ra}}}\n")
    add("frame numbers skip from 0 to 2 (the open block is not delivered)", ["Malformed"], out)
    bad("first frame numbered 1", "MARKUP_BAD_FRAME_INDEX", "{{{bt:1:0x1:ra}}}\n")
    out = Markup(M).sample(1001, 1002, [0x1]).close()
    out.text("2001\n2002\n" + "".join("{{{bt:%d:0x%x:ra}}}\n" % (i, i) for i in range(255)))
    out.bad("MARKUP_TOO_MANY_FRAMES", "{{{bt:255:0x1:ra}}}\n")
    add("a 256th frame", ["Malformed"], out)
    bad("a line of plain text", "MARKUP_BAD_LINE", "hello\n")
    bad("pid line with a letter", "MARKUP_BAD_NUMBER", "12a\n")
    bad("pid past 64 bits", "MARKUP_BAD_NUMBER", "99999999999999999999999\n")
    bad("last line has no newline (half a line is never parsed)", "TRUNCATED",
        "{{{bt:0:0x1:pc}}}", flags=("Malformed", "Truncated"))
    bad("line longer than 4096 bytes", "MARKUP_LINE_TOO_LONG", "{{{bt:0:0x1:pc}}}" + " " * 4100 + "\n")
    bad("module of a format other than elf", "MARKUP_BAD_MODULE", "{{{module:1:lib.so:coff:00}}}\n")
    bad("module build id with an odd number of digits", "MARKUP_BAD_MODULE",
        "{{{module:1:lib.so:elf:012}}}\n")
    bad("mmap mode letters out of order", "MARKUP_BAD_MMAP", "{{{mmap:0x1000:0x10:load:1:xr:0x0}}}\n")
    bad("mmap missing its vaddr", "MARKUP_BAD_MMAP", "{{{mmap:0x1000:0x10:load:1:rx}}}\n")


def _fxt_malformed_2(vf):
    """Added after the first publication; new vectors only ever go at the end, so every
    published tcId keeps its meaning."""
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)
    out = Fxt(M).bt(1, [0x401000], 1001, 1002).bad("FXT_BAD_INIT", words(header(1, 1)))
    _emit(g, "init record of 1 word: the ticks-per-second word is missing", ["Malformed"], out,
          "fxt", ST_FULL, PERIOD)


def _markup_mmap_mode(vf):
    """LLVM's filter reads an mmap mode as r, w, x in that order, each optional and in
    either case, and refuses an empty one (added after the first publication)."""
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)
    out = Markup(M).text("{{{module:1:lib.so:elf:0123cafe}}}\n"
                         "{{{mmap:0x3000:0x1000:load:1:RX:0x0}}}\n")
    out.sample(1001, 1002, [0x3010]).finish()
    _emit(g, "mmap mode in upper case is a mode", [], out, "markup", ST_MARKUP, PERIOD)
    out = Markup(M).sample(1001, 1002, [0x401000]).reset()
    out.bad("MARKUP_BAD_MMAP", "{{{mmap:0x1000:0x10:load:1::0x0}}}\n")
    _emit(g, "mmap with an empty mode", ["Malformed"], out, "markup", ST_MARKUP, PERIOD)


def build_fxt():
    vf = document.VectorFile("fxt", NOTES)
    _fxt_valid(vf)
    _fxt_koid(vf)
    _fxt_malformed(vf)
    _detect_fxt(vf)
    _fxt_malformed_2(vf)
    return vf


def build_markup():
    vf = document.VectorFile("markup", NOTES)
    _markup(vf)
    _detect_markup(vf)
    _markup_mmap_mode(vf)
    return vf


def render():
    return {FXT_PATH: document.dumps(build_fxt().to_dict()),
            MARKUP_PATH: document.dumps(build_markup().to_dict())}


def main(argv=None):
    import os
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--vectors-dir", default=os.path.normpath(os.path.join(here, "..", "..", "vectors")))
    args = p.parse_args(argv)
    stale = 0
    for path, text in render().items():
        full = os.path.join(args.vectors_dir, path)
        if args.write:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote vectors/%s" % path)
            continue
        try:
            with open(full, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            print("vectors/%s differs from the generator" % path)
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
