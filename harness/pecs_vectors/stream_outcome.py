"""Outcome: a stream's bytes and what an engine must make of them, built side by side
(the base of the FXT and markup builders)."""
from collections.abc import Iterable, Mapping
from typing import Any, Self

from .stream_sample import Sample


class Outcome:
    """Bytes of a stream plus what an engine must make of them, built side by side."""

    def __init__(self, koids: Mapping[int, int] | Iterable[tuple[int, int]] = ()) -> None:
        self.data = bytearray()
        self.koids = dict(koids)
        self.samples: list[Sample] = []
        self.dropped = 0
        self.warnings = 0
        self.error: dict[str, Any] | None = None

    def _map(self, koid: int) -> int | None:
        if not self.koids:
            return koid if koid < 1 << 32 else None
        return self.koids.get(koid)

    def expect_sample(self, pkoid: int, tkoid: int, time: int, ips: Iterable[int]) -> None:
        pid, tid = self._map(pkoid), self._map(tkoid)
        if pid is None or tid is None:
            self.dropped += 1
        else:
            self.samples.append({"pid": pid, "tid": tid, "time": time, "ips": list(ips)})

    def bad(self, code: str, data: bytes) -> Self:
        """Appends the malformed part; the error is at its first byte."""
        self.error = {"code": code, "offset": len(self.data)}
        self.data += data
        return self
