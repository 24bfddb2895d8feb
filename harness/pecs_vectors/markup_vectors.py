"""The symbolizer-markup stream vectors (vectors/markup/markup_stream.json): each test's
text and the samples, ring bytes and error an engine must produce for it.

tcIds are handed out in the order tests are added: add new tests at the end of
build_markup's last builder, never between existing ones (docs/vectors.md)."""

from collections.abc import Callable, Iterable, Sequence

from . import document
from .markup_pack import Markup
from .stream_emit import M, MARKUP_REF, NOTES, PERIOD, ST_MARKUP, emit


# add(comment, flags, stream) of one group's tests.
_Add = Callable[[str, Iterable[str], Markup], None]


def _detect_markup(vf: document.VectorFile) -> None:
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)

    def add(comment: str, out: Markup, flags: Iterable[str] = ("Detect",)) -> None:
        emit(g, comment, list(flags), out, "markup", ST_MARKUP, PERIOD)

    add("detect: markup found by the absence of the magic word",
        Markup(M).sample(1001, 1002, [0x401000, 0x401100]).finish())
    add("detect: markup shorter than 8 bytes", Markup(M).text("1001\n").finish())
    add("detect: first byte as in FXT, then text: markup, and a bad line",
        Markup(M).bad("MARKUP_BAD_LINE", b"\x10abc\n"))


def _set_block(out: Markup, pid: int, tid: int, ips: Sequence[int]) -> Markup:
    """For streams written by hand with .text(): the block those lines leave open."""
    out.block = [pid, tid, list(ips)]
    return out


def _markup(vf: document.VectorFile) -> None:
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)

    def add(comment: str, flags: Iterable[str], out: Markup) -> None:
        emit(g, comment, list(flags), out, "markup", ST_MARKUP, PERIOD)

    _markup_valid(add)
    _markup_bad(add)


def _markup_valid(add: _Add) -> None:
    """Well-formed markup: blocks, resets, whitespace, unknown tags and the koid map."""
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


def _markup_bad(add: _Add) -> None:
    """Malformed markup: each line LLVM's filter refuses, after a delivered sample."""
    def bad(comment: str, code: str, line: str, prefix: bool = True,
            flags: Iterable[str] = ("Malformed",)) -> None:
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


def _markup_mmap_mode(vf: document.VectorFile) -> None:
    """LLVM's filter reads an mmap mode as r, w, x in that order, each optional and in
    either case, and refuses an empty one (added after the first publication)."""
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)
    out = Markup(M).text("{{{module:1:lib.so:elf:0123cafe}}}\n"
                         "{{{mmap:0x3000:0x1000:load:1:RX:0x0}}}\n")
    out.sample(1001, 1002, [0x3010]).finish()
    emit(g, "mmap mode in upper case is a mode", [], out, "markup", ST_MARKUP, PERIOD)
    out = Markup(M).sample(1001, 1002, [0x401000]).reset()
    out.bad("MARKUP_BAD_MMAP", "{{{mmap:0x1000:0x10:load:1::0x0}}}\n")
    emit(g, "mmap with an empty mode", ["Malformed"], out, "markup", ST_MARKUP, PERIOD)


# A valid block after an error line: {{{reset}}} closes whatever the bad line opened, so a
# reader that accepted the bad line would deliver this sample and change the ring bytes.
_AFTER_BAD = "{{{reset}}}\n1001\n1002\n{{{bt:0:0x5:pc}}}\n"


def _bt_text(pid: int, tid: int, addrs: Sequence[str]) -> tuple[str, list[int]]:
    """A block whose addresses are written exactly as given (the packer writes lowercase)."""
    lines = "%d\n%d\n" % (pid, tid)
    lines += "".join("{{{bt:%d:%s}}}\n" % (i, a) for i, a in enumerate(addrs))
    return lines, [int(a, 16) for a in addrs]


def _markup_digits(vf: document.VectorFile) -> None:
    """Every hex digit in both cases, every malformed-number form and the exact line-length
    limit; each bad line is followed by a valid block (added for issue 12)."""
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)

    def add(comment: str, flags: Iterable[str], out: Markup) -> None:
        emit(g, comment, list(flags), out, "markup", ST_MARKUP, PERIOD)

    addrs = ["0x0123456789abcdef", "0x0123456789ABCDEF", "0xfedcba9876543210",
             "0xFEDCBA9876543210", "0xaBcDeF", "0xAbCdEf"]
    text, ips = _bt_text(1001, 1002, addrs)
    add("every hex digit in both cases, in every position of a 16-digit address", [],
        _set_block(Markup(M).text(text), 1001, 1002, ips).finish())
    for d in "0123456789abcdefABCDEF":
        text, ips = _bt_text(1001, 1002, ["0x" + d, "0x" + d * 16])
        add("hex digit %s alone and repeated 16 times" % d, [],
            _set_block(Markup(M).text(text), 1001, 1002, ips).finish())

    line = "{{{bt:0:0x401000:pc}}}"
    out = Markup(M).text("1001\n1002\n" + line + " " * (4096 - len(line)) + "\n")
    _set_block(out, 1001, 1002, [0x401000]).close().text("1001\n1002\n{{{bt:0:0x5:pc}}}\n")
    out.block = [1001, 1002, [0x5]]
    add("a line of exactly 4096 bytes before its newline is read", [], out.finish())

    def bad(comment: str, code: str, line: str) -> None:
        out = Markup(M).sample(1001, 1002, [0x401000]).close()
        out.text("2001\n2002\n")
        out.block = [2001, 2002, []]
        out.bad(code, line).text(_AFTER_BAD)
        add(comment + ", then a valid block", ["Malformed"], out)

    bad("a line of 4097 bytes before its newline", "MARKUP_LINE_TOO_LONG",
        line + " " * (4097 - len(line)) + "\n")
    for num in ["12a", "12/", "12:", "1 2", "0x10", "12A", "18446744073709551616",
                "99999999999999999999999"]:
        bad("pid line %r is not a decimal u64" % num, "MARKUP_BAD_NUMBER", num + "\n")
    for num in ["-1", "+1"]:
        bad("pid line %r starts with a sign: a text line" % num, "MARKUP_BAD_LINE", num + "\n")
    out = Markup(M).sample(1001, 1002, [0x401000]).close()
    out.text("2001\n")
    out.bad("MARKUP_BAD_NUMBER", "2002a\n").text(_AFTER_BAD)
    add("tid line '2002a' is not a decimal u64, then a valid block", ["Malformed"], out)
    for idx in ["0a", "0/", "0x0", "-0", "+0", " 0", "18446744073709551616"]:
        bad("frame number %r is not a decimal u64" % idx, "MARKUP_BAD_BT",
            "{{{bt:%s:0x1:pc}}}\n" % idx)
    for addr in ["0x1g", "0x1G", "0x1/", "0x1@", "0x1`", "0x1 ", "1", "x1", "0x-1", "0x+1",
                 "00x1", "0x", "0x12345678901234567"]:
        bad("address %r is not 0x and 1 to 16 hex digits" % addr, "MARKUP_BAD_BT",
            "{{{bt:0:%s:pc}}}\n" % addr)
    for el, code in [("{{ bt:0:0x1}}}", "MARKUP_BAD_LINE"), ("{{bt:0:0x1}}}", "MARKUP_BAD_LINE"),
                     ("{{{bt:0:0x1}}}}", "MARKUP_BAD_ELEMENT"),
                     ("{{{bt:0:0x1}}", "MARKUP_BAD_ELEMENT")]:
        bad("%r is not an element of three braces" % el, code, el + "\n")


def _markup_separators(vf: document.VectorFile) -> None:
    """Bad lines after an open block, each followed by a valid block (added for issue 12):
    an address must be 0x then hex digits (the spec's %p), the bt fields are separated by
    ':' only, and an mmap mode is r, w, x in that order with nothing after."""
    g = vf.group("MarkupStreamTest", "symbolizer-markup-spec", MARKUP_REF)

    def bad(comment: str, code: str, line: str) -> None:
        out = Markup(M).sample(1001, 1002, [0x401000]).close()
        out.text("2001\n2002\n")
        out.block = [2001, 2002, []]
        out.bad(code, line).text(_AFTER_BAD)
        emit(g, comment + ", then a valid block", ["Malformed"], out, "markup", ST_MARKUP, PERIOD)

    for addr in ["012", "1x5", "0X"]:
        bad("address %r is not 0x and 1 to 16 hex digits" % addr, "MARKUP_BAD_BT",
            "{{{bt:0:%s:pc}}}\n" % addr)
    for sep in [";", " ", "/"]:
        bad("%r instead of ':' before the address" % sep, "MARKUP_BAD_BT",
            "{{{bt:0%s0x1:pc}}}\n" % sep)
    for mode in ["xr", "rxq", "rwxr", "wr"]:
        bad("mmap mode %r is not r, w, x in order" % mode, "MARKUP_BAD_MMAP",
            "{{{mmap:0x1000:0x10:load:1:%s:0x0}}}\n" % mode)
    # The frame number is %u, "a nonnegative decimal integer" (SymbolizerMarkupFormat.rst):
    # an empty field is none, with a type suffix or without (added for issue 30).
    for line in ["{{{bt::0x1:pc}}}", "{{{bt::0x1}}}"]:
        bad("frame number empty in %r" % line, "MARKUP_BAD_BT", line + "\n")
    # The build id is %x, "an even number of hexadecimal digits": an even count with a
    # non-hex digit among them is none either (issue 30's fresh sample).
    for bid in ["0g", "zz01"]:
        bad("module build id %r has a non-hex digit" % bid, "MARKUP_BAD_MODULE",
            "{{{module:1:lib.so:elf:%s}}}\n" % bid)


def build_markup() -> document.VectorFile:
    vf = document.VectorFile("markup", NOTES)
    _markup(vf)
    _detect_markup(vf)
    _markup_mmap_mode(vf)
    _markup_digits(vf)
    _markup_separators(vf)
    return vf
