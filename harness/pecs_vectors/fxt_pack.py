"""FXT records packed from the spec's bit layouts ([lo..hi] fields of the header words),
and Fxt: an FXT stream built record by record beside the samples it must decode to."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Self

from .stream_outcome import Outcome
from .stream_sample import u64

def bits(value: int, lo: int, hi: int) -> int:
    """value placed in [lo..hi]; refuses values that do not fit."""
    width = hi - lo + 1
    if value < 0 or value >= 1 << width:
        raise ValueError("%#x does not fit [%d..%d]" % (value, lo, hi))
    return value << lo


def words(*ws: int) -> bytes:
    return b"".join(u64(w) for w in ws)


def padded(data: bytes) -> bytes:
    return bytes(data) + b"\0" * (-len(data) % 8)


def header(rtype: int, nwords: int, **fields: tuple[int, int, int]) -> int:
    """A record header: type [0..3], size in words [4..15] (header included), plus
    type-specific fields given as name=(value, lo, hi)."""
    h = bits(rtype, 0, 3) | bits(nwords, 4, 15)
    for value, lo, hi in fields.values():
        h |= bits(value, lo, hi)
    return h


MAGIC = header(0, 1, meta=(4, 16, 19), info=(0, 20, 23), magic=(0x16547846, 24, 55))
assert MAGIC == 0x0016547846040010  # the word the spec prints
assert u64(MAGIC) == bytes.fromhex("1000044678541600")


def rec_magic() -> bytes:
    return words(MAGIC)


def rec_init(tps: int, nwords: int = 2) -> bytes:
    return words(header(1, nwords), tps) + b"\0" * 8 * (nwords - 2)


def rec_string(index: int, text: str, nwords: int | None = None,
               length: int | None = None) -> bytes:
    data = padded(text.encode())
    n = 1 + len(data) // 8 if nwords is None else nwords
    ln = len(text.encode()) if length is None else length
    body = data + b"\0" * 8 * max(0, n - 1 - len(data) // 8)
    return words(header(2, n, index=(index, 16, 30), len=(ln, 32, 46))) + body[:8 * (n - 1)]


def rec_thread(index: int, pkoid: int, tkoid: int, nwords: int = 3) -> bytes:
    return (words(header(3, nwords, index=(index, 16, 23))) +
            words(pkoid, tkoid, *([0] * max(0, nwords - 3))))[:8 * nwords]


def str_ref_inline(text: str) -> int:
    return 0x8000 | len(text.encode())


def rec_kobj(obj_type: int, koid: int, name_ref: int, inline: bytes = b"",
             nwords: int | None = None) -> bytes:
    data = padded(inline)
    n = 2 + len(data) // 8 if nwords is None else nwords
    rec = words(header(7, n, obj=(obj_type, 16, 23), name=(name_ref, 24, 39),
                       argc=(0, 40, 43)), koid) + data
    return rec[:8 * n]


def rec_backtrace(ticks: int, ips: Sequence[int], pkoid: int = 0, tkoid: int = 0, tref: int = 0,
                  nwords: int | None = None, nr: int | None = None) -> bytes:
    body = words(ticks) + (b"" if tref else words(pkoid, tkoid)) + words(*ips)
    n = 1 + len(body) // 8 if nwords is None else nwords
    count = len(ips) if nr is None else nr
    h = header(10, n, sub=(2, 16, 19), thread=(tref, 20, 27), nr=(count, 28, 35))
    return (words(h) + body + b"\0" * 8 * max(0, n - 1 - len(body) // 8))[:8 * n]


def rec_module(module_id: int, name: str, build_id: bytes, ticks: int = 0, pkoid: int = 0,
               tkoid: int = 0, tref: int = 0, name_len: int | None = None) -> bytes:
    body = words(ticks) + (b"" if tref else words(pkoid, tkoid))
    body += padded(name.encode()) + padded(build_id)
    nl = len(name.encode()) if name_len is None else name_len
    h = header(10, 1 + len(body) // 8, sub=(0, 16, 19), thread=(tref, 20, 27),
               mod=(module_id, 28, 43), nl=(nl, 44, 51), bl=(len(build_id), 52, 59))
    return words(h) + body


def rec_mmap(module_id: int, flags: int, start: int, rng: int, vaddr: int, ticks: int = 0,
             pkoid: int = 0, tkoid: int = 0, tref: int = 0, nwords: int | None = None) -> bytes:
    body = words(ticks) + (b"" if tref else words(pkoid, tkoid)) + words(start, rng, vaddr)
    n = 1 + len(body) // 8 if nwords is None else nwords
    h = header(10, n, sub=(1, 16, 19), thread=(tref, 20, 27), mod=(module_id, 28, 43),
               flags=(flags, 44, 46))
    return (words(h) + body)[:8 * n]


def rec_provider_info(pid: int, name: str, name_len: int | None = None,
                      nwords: int | None = None) -> bytes:
    data = padded(name.encode())
    n = 1 + len(data) // 8 if nwords is None else nwords
    nl = len(name.encode()) if name_len is None else name_len
    h = header(0, n, meta=(1, 16, 19), id=(pid, 20, 51), nl=(nl, 52, 59))
    return (words(h) + data)[:8 * n]


def rec_provider_section(pid: int) -> bytes:
    return words(header(0, 1, meta=(2, 16, 19), id=(pid, 20, 51)))


def rec_provider_event(pid: int, event: int) -> bytes:
    return words(header(0, 1, meta=(3, 16, 19), id=(pid, 20, 51), ev=(event, 52, 55)))


def rec_trace_info_magic(value: int) -> bytes:
    return words(header(0, 1, meta=(4, 16, 19), info=(0, 20, 23), magic=(value, 24, 55)))


def rec_opaque(rtype: int, nwords: int, fill: int = 0x5a) -> bytes:
    """A record pecs does not decode (event, blob, log, ...): header then filler."""
    return words(header(rtype, nwords, x=(0x3c, 16, 23))) + bytes([fill]) * 8 * (nwords - 1)


def rec_large(nwords: int, large_type: int = 0, blob_format: int = 1) -> bytes:
    """Large record (type 15): size in words [4..35], large type [36..39], format [40..43]."""
    h = bits(15, 0, 3) | bits(nwords, 4, 35) | bits(large_type, 36, 39) | bits(blob_format, 40, 43)
    return words(h) + b"\xa5" * 8 * (nwords - 1)


def rec_profiler_unknown(subtype: int, nwords: int) -> bytes:
    h = header(10, nwords, sub=(subtype, 16, 19))
    return words(h) + b"\x11" * 8 * (nwords - 1)


NO_KOID = (1 << 64) - 1


class Fxt(Outcome):
    def __init__(self, koids: Mapping[int, int] | Iterable[tuple[int, int]] = (),
                 magic: bool = True) -> None:
        super().__init__(koids)
        self.tps = 10 ** 9
        self.threads: dict[int, tuple[int, int]] = {}
        if magic:
            self.data += rec_magic()

    def add(self, data: bytes) -> Self:
        self.data += data
        return self

    def init(self, tps: int) -> Self:
        self.tps = tps
        return self.add(rec_init(tps))

    def thread(self, index: int, pkoid: int, tkoid: int) -> Self:
        self.threads[index] = (pkoid, tkoid)
        return self.add(rec_thread(index, pkoid, tkoid))

    def bt(self, ticks: int, ips: Sequence[int], pkoid: int = 0, tkoid: int = 0, tref: int = 0) -> Self:
        if tref:
            # An undefined index resolves to koids that map to nothing (Fuchsia's
            # resolver warns and uses u64::MAX).
            pkoid, tkoid = self.threads.get(tref, (NO_KOID, NO_KOID))
            if tref not in self.threads:
                self.warnings += 1
        self.expect_sample(pkoid, tkoid, ticks * 10 ** 9 // self.tps, ips)
        return self.add(rec_backtrace(ticks, ips, pkoid, tkoid, tref))
