#!/usr/bin/python3
"""A pipe testee in Python (docs/testee-protocol.md): this kernel's perf_event_open(2),
reached through ctypes, served on stdin/stdout. It is what a testee for an implementation
not written in C looks like; the harness checks that its verdicts equal the in-process ones.

    PECS_TESTEE='/usr/bin/python3 examples/pipe_testee/pipe_testee.py' pecs-pipe --isolate
"""
import ctypes
import mmap
import os
import struct
import sys

HELLO, HOST_FACTS, SETUP, TEARDOWN, OPEN, CLOSE, READ, WRITE, IOCTL, POLL = range(1, 11)
PTR_BYTES, PTR_NULL, PTR_BAD, PTR_INTEGER = range(4)
ENOSYS, EPROTONOSUPPORT = 38, 93
SYS_perf_event_open = 298  # x86-64
FEATURES = ["counting", "read.group", "read.lost", "ioctl.refresh", "poll", "policy",
            "pid.other"]  # no mmap: protocol v1 carries no shared memory

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
libc.read.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
libc.read.restype = ctypes.c_ssize_t
libc.write.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
libc.write.restype = ctypes.c_ssize_t
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.mmap.restype = ctypes.c_void_p

PAGE = os.sysconf("SC_PAGE_SIZE")
# An address that faults: what the runner's inaccessible pointers become here.
BAD = libc.mmap(None, PAGE, 0,  # PROT_NONE
                mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)


def ret(r):
    return -ctypes.get_errno() if r < 0 else r


class Testee:
    def __init__(self):
        self.caller_tid = 0
        self.fds = set()

    def pointer(self, kind, data, size):
        """A buffer for a pointer argument, and the address to pass."""
        if kind == PTR_NULL:
            return None, None
        if kind == PTR_BAD:
            return None, BAD
        buf = ctypes.create_string_buffer(bytes(data), max(size, len(data), 1))
        return buf, ctypes.addressof(buf)

    def serve(self, op, body):
        if op == HELLO:
            (version,) = struct.unpack_from("<I", body)
            if version != 1:
                return -EPROTONOSUPPORT, b""
            return 1, ("python-kernel\n" + "".join(f + "\n" for f in FEATURES)).encode()
        if op == SETUP:
            self.teardown()
            self.caller_tid = struct.unpack_from("<II", body)[1]
            return 0, b""
        if op == TEARDOWN:
            self.teardown()
            return 0, b""
        if op == OPEN:
            pid, cpu, group_fd, kind, flags = struct.unpack_from("<iiiIQ", body)
            buf, addr = self.pointer(kind, body[24:], 2 * PAGE)
            if pid == 0 and self.caller_tid:
                pid = self.caller_tid  # "pid 0" is the runner's thread, which the case burns
            fd = ret(libc.syscall(SYS_perf_event_open, ctypes.c_void_p(addr), pid, cpu,
                                  group_fd, ctypes.c_ulong(flags)))
            if fd >= 0:
                self.fds.add(fd)
            size = struct.unpack_from("<I", buf.raw, 4)[0] if buf is not None else 0
            return fd, struct.pack("<I", size)
        if op == CLOSE:
            (fd,) = struct.unpack_from("<i", body)
            r = ret(libc.close(fd))
            if r == 0:
                self.fds.discard(fd)
            return r, b""
        if op == READ:
            fd, kind, count = struct.unpack_from("<iIQ", body)
            buf, addr = self.pointer(kind, b"", count)
            r = ret(libc.read(fd, addr, count))
            return r, buf.raw[:r] if buf is not None and r > 0 else b""
        if op == WRITE:
            fd, kind, count = struct.unpack_from("<iIQ", body)
            buf, addr = self.pointer(kind, body[16:], count)
            return ret(libc.write(fd, addr, count)), b""
        if op == IOCTL:
            fd, kind, request, arg = struct.unpack_from("<iIQQ", body)
            data = body[24:]
            buf, addr = self.pointer(kind, data, len(data))
            r = ret(libc.ioctl(fd, request, arg if kind == PTR_INTEGER else addr))
            return r, buf.raw[:len(data)] if buf is not None else b""
        if op == POLL:
            fd, events, _, timeout = struct.unpack_from("<ihHi", body)
            pfd = struct.pack("<ihh", fd, events, 0)
            cbuf = ctypes.create_string_buffer(pfd, len(pfd))
            r = ret(libc.poll(cbuf, 1, timeout))
            return (struct.unpack_from("<h", cbuf.raw, 6)[0] if r > 0 else r), b""
        return -ENOSYS, b""  # HOST_FACTS too: the runner's defaults are this host's

    def teardown(self):
        for fd in sorted(self.fds, reverse=True):
            libc.close(fd)
        self.fds.clear()


def main():
    rd, wr = sys.stdin.buffer, sys.stdout.buffer
    t = Testee()
    while True:
        head = rd.read(4)
        if len(head) < 4:
            return 0  # the runner closed our stdin
        (n,) = struct.unpack("<I", head)
        msg = rd.read(n)
        op, seq = struct.unpack_from("<II", msg)
        r, out = t.serve(op, msg[8:])
        wr.write(struct.pack("<IIIq", 16 + len(out), op, seq, r) + out)
        wr.flush()


if __name__ == "__main__":
    sys.exit(main())
