"""Outcome: a stream's bytes and what an engine must make of them, built side by side
(the base of the FXT and markup builders)."""


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
