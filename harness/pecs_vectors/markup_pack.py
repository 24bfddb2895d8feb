"""Markup: a symbolizer-markup stream (the LLVM spec's grammar) written line by line
beside the samples it must decode to."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Self

from .stream_outcome import Outcome


class Markup(Outcome):
    """Lines in, samples out: a block (pid, tid, frames) is a sample when it closes."""

    def __init__(self, koids: Mapping[int, int] | Iterable[tuple[int, int]] = ()) -> None:
        super().__init__(koids)
        # The open block: pid, tid and its frames so far.
        self.block: list[Any] | None = None

    def text(self, s: str) -> Self:
        self.data += s.encode()
        return self

    def close(self) -> Self:
        if self.block and self.block[2]:
            self.expect_sample(self.block[0], self.block[1], 0, self.block[2])
        if self.block:
            self.block[2] = []
        return self

    def sample(self, pid: int, tid: int, ips: Sequence[int], kinds: Sequence[str] | None = None,
               indent: str = "") -> Self:
        self.close()
        self.block = [pid, tid, list(ips)]
        self.text("%s%d\n%s%d\n" % (indent, pid, indent, tid))
        for i, ip in enumerate(ips):
            kind = (kinds[i] if kinds else ("pc" if i == 0 else "ra"))
            suffix = ":" + kind if kind else ""
            self.text("%s{{{bt:%d:%#x%s}}}\n" % (indent, i, ip, suffix))
        return self

    def reset(self) -> Self:
        self.close()
        self.block = None
        return self.text("{{{reset}}}\n")

    def finish(self) -> Self:
        return self.close()

    def bad(self, code: str, data: bytes | str) -> Self:
        # A block still open when the error comes is never delivered.
        self.block = None
        return super().bad(code, data.encode() if isinstance(data, str) else data)
