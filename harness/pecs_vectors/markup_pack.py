"""Markup: a symbolizer-markup stream (the LLVM spec's grammar) written line by line
beside the samples it must decode to."""

from .stream_outcome import Outcome


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
