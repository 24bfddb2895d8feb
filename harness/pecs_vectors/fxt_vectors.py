"""The FXT stream vectors (vectors/fxt/fxt_stream.json): each test's bytes and the
samples, ring bytes and error an engine must produce for them.

tcIds are handed out in the order tests are added and published ids never change meaning
(docs/vectors.md; lint enforces it): add new tests at the end of build_fxt's last builder,
never between existing ones."""

import struct
from collections.abc import Callable, Iterable

from . import document
from .fxt_pack import (MAGIC, Fxt, bits, header, rec_backtrace, rec_init, rec_kobj,
                       rec_large, rec_magic, rec_mmap, rec_module, rec_opaque,
                       rec_profiler_unknown, rec_provider_event, rec_provider_info,
                       rec_provider_section, rec_string, rec_thread, rec_trace_info_magic,
                       str_ref_inline, words)
from .stream_emit import FUCHSIA_REF, FXT_REF, M, NOTES, PERIOD, ST_FUCHSIA, ST_FULL, \
    ST_MARKUP, emit
from .stream_sample import sample_record, u64


# add(comment, flags, stream) of one group's tests.
_Add = Callable[[str, list[str], Fxt], None]


def _fxt_valid(vf: document.VectorFile) -> None:
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)

    def add(comment: str, flags: list[str], out: Fxt) -> None:
        emit(g, comment, flags, out, "fxt", ST_FULL, PERIOD)

    _fxt_valid_framing(add)
    _fxt_valid_tables(add)


def _fxt_valid_framing(add: _Add) -> None:
    """The first valid tests: framing, the worked example and the timebase."""
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


def _fxt_valid_tables(add: _Add) -> None:
    """Valid tests on tables, inline references, skipped records and size limits."""
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


def _fxt_koid(vf: document.VectorFile) -> None:
    g = vf.group("FxtStreamTest", "fuchsia-source", FUCHSIA_REF)
    out = Fxt({1001: 42, 1002: 43}).bt(1000, [0x12345678], 1001, 1002)
    out.bt(2000, [0x87654321], 9999, 9998)
    assert sample_record(ST_FUCHSIA, out.samples[0], PERIOD) == bytes.fromhex(
        "09000000" "0200" "1800" "7856341200000000" "2a000000" "2b000000")
    emit(g, "Fuchsia unit test: two backtraces, koids 1001/1002 mapped to 42/43, 9999/9998 "
          "unmapped: one 24-byte record (type 9, misc 2, ip 0x12345678, pid 42, tid 43)",
          ["WorkedExample", "KoidMap"], out, "fxt", ST_FUCHSIA, PERIOD)
    out = Fxt({1001: 42}).bt(1, [0x401000], 1001, 1002).bt(2, [0x401000], 1001, 1001)
    emit(g, "process koid mapped but thread koid not: dropped", ["KoidMap"], out, "fxt",
          ST_FUCHSIA, PERIOD)
    bid = bytes.fromhex("68920bd06a8149b58004cea8a0dd260b05e87d57")
    module = rec_module(99, "test_module.so", bid, 5000, 123, 0)
    assert struct.unpack("<Q", module[:8])[0] == (20 << 52 | 14 << 44 | 99 << 28 | 9 << 4 | 10)
    mapping = rec_mmap(101, 1, 0x1000, 0x2000, 0x3000, 6000, 456, 0)
    assert struct.unpack("<Q", mapping[:8])[0] == (1 << 44 | 101 << 28 | 1 << 16 | 7 << 4 | 10)
    out = Fxt().add(module).add(mapping).bt(7000, [0x402a964b1499, 0x4ae0293b], 789, 987)
    emit(g, "Fuchsia fxt parser's module (id 99, test_module.so, 20-byte build id), mapping "
          "(id 101, flags 1) and backtrace examples in one stream", ["WorkedExample", "InlineRefs"],
          out, "fxt", ST_FUCHSIA, PERIOD)
    out = Fxt().bt(1, [0x401000], 7, 8).bt(2, [0x401000], 1 << 32, 9).bt(3, [0x401000], 10, 11)
    emit(g, "no koid map: koids are Linux ids; a koid past 32 bits cannot be one and is dropped",
          ["KoidMap"], out, "fxt", ST_FUCHSIA, PERIOD)


def _grow(rec: bytes) -> bytes:
    """The record with one more zero word, its header's size raised to match."""
    h = struct.unpack("<Q", rec[:8])[0]
    n = (h >> 4) & 0xfff
    h = (h & ~(0xfff << 4)) | bits(n + 1, 4, 15)
    return u64(h) + rec[8:] + b"\0" * 8


def _fxt_malformed(vf: document.VectorFile) -> None:
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)

    def add(comment: str, out: Fxt, flags: Iterable[str] = ("Malformed",)) -> None:
        emit(g, comment, list(flags), out, "fxt", ST_FULL, PERIOD)

    def ok() -> Fxt:
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


def _detect_fxt(vf: document.VectorFile) -> None:
    """Detection cases whose bytes start as FXT; they decode the same whether the consumer
    names the format or lets the first 8 bytes decide (flag Detect)."""
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)

    def add(comment: str, out: Fxt, flags: Iterable[str] = ("Detect",)) -> None:
        emit(g, comment, list(flags), out, "fxt", ST_MARKUP, PERIOD)

    add("detect: empty stream, no format, no samples, no error", Fxt(magic=False))
    add("detect: FXT found by its magic word", Fxt(M).bt(1, [0x401000, 0x401100], 1001, 1002))
    add("detect: 3 bytes of the magic word, then the end: a truncated FXT stream",
        Fxt(magic=False).bad("TRUNCATED", u64(MAGIC)[:3]), ["Detect", "Truncated"])
    add("detect: 7 bytes of the magic word, then the end",
        Fxt(magic=False).bad("TRUNCATED", u64(MAGIC)[:7]), ["Detect", "Truncated"])


def _fxt_malformed_2(vf: document.VectorFile) -> None:
    """Added after the first publication; new vectors only ever go at the end, so every
    published tcId keeps its meaning."""
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)
    out = Fxt(M).bt(1, [0x401000], 1001, 1002).bad("FXT_BAD_INIT", words(header(1, 1)))
    emit(g, "init record of 1 word: the ticks-per-second word is missing", ["Malformed"], out,
          "fxt", ST_FULL, PERIOD)


def _fxt_digits_and_trailers(vf: document.VectorFile) -> None:
    """Issue 12: addresses holding every nibble value, and each malformed record followed by
    a valid backtrace, so an engine that accepted the bad record would deliver that sample
    and change the ring bytes."""
    g = vf.group("FxtStreamTest", "fxt-spec", FXT_REF)

    def add(comment: str, out: Fxt, flags: Iterable[str] = ("Malformed",)) -> None:
        emit(g, comment, list(flags), out, "fxt", ST_FULL, PERIOD)

    add("addresses holding every nibble value in every position", Fxt(M).bt(
        1, [0x0123456789abcdef, 0xfedcba9876543210, 0x89abcdef01234567, 0x76543210fedcba98],
        1001, 1002), ["InlineRefs"])
    after = rec_backtrace(7, [0x401010], 1001, 1002)
    bad_records = [
        ("header with size 0", "FXT_ZERO_SIZE", words(header(0, 0))),
        ("large record with size 0", "FXT_ZERO_SIZE", words(bits(15, 0, 3))),
        ("init record of 3 words", "FXT_BAD_INIT", rec_init(1000, nwords=3)),
        ("init record with 0 ticks per second", "FXT_BAD_INIT", rec_init(0)),
        ("init record of 1 word", "FXT_BAD_INIT", words(header(1, 1))),
        ("string length past the record's size", "FXT_BAD_STRING",
         rec_string(1, "abcdefghij", nwords=2)),
        ("thread record with index 0", "FXT_BAD_THREAD", rec_thread(0, 1001, 1002)),
        ("thread record of 2 words", "FXT_BAD_THREAD", rec_thread(1, 1001, 1002, nwords=2)),
        ("kernel object with inline name past the record", "FXT_BAD_STRING_REF",
         rec_kobj(1, 1001, 0x8000 | 20, b"short", nwords=3)),
        ("kernel object record of 1 word", "FXT_BAD_KERNEL_OBJECT", words(header(7, 1))),
        ("backtrace counting 3 frames with 2 present", "FXT_BAD_BACKTRACE",
         rec_backtrace(2, [1, 2], 1001, 1002, nr=3)),
        ("backtrace counting 1 frame with 2 present", "FXT_BAD_BACKTRACE",
         rec_backtrace(2, [1, 2], 1001, 1002, nr=1)),
        ("module record whose name length runs past the record", "FXT_BAD_MODULE",
         rec_module(1, "lib.so", b"\x01", 1, 1001, 1002, name_len=40)),
        ("mmap record missing its vaddr word", "FXT_BAD_MMAP",
         rec_mmap(1, 5, 0x1000, 0x1000, 0, 1, 1001, 1002, nwords=6)),
        ("provider info whose name runs past the record", "FXT_BAD_METADATA",
         rec_provider_info(1, "provider-name", nwords=2)),
        ("a later trace-info magic record with a wrong value", "FXT_BAD_MAGIC",
         rec_trace_info_magic(0x12345678)),
    ]
    for comment, code, rec in bad_records:
        out = Fxt(M).bt(1, [0x401000], 1001, 1002).bad(code, rec).add(after)
        add(comment + ", then a valid backtrace", out)


def build_fxt() -> document.VectorFile:
    vf = document.VectorFile("fxt", NOTES)
    _fxt_valid(vf)
    _fxt_koid(vf)
    _fxt_malformed(vf)
    _detect_fxt(vf)
    _fxt_malformed_2(vf)
    _fxt_digits_and_trailers(vf)
    return vf
