#!/usr/bin/python3
"""A pipe testee in Python (docs/testee-protocol.md): this kernel's perf_event_open(2),
reached through ctypes, served on stdin/stdout. It is what a testee for an implementation
not written in C looks like; the harness checks that its verdicts equal the in-process ones.

It speaks protocol version 2 when its stdout is a socket (the runner's socketpair): an
MMAP answer carries the event fd, so the runner maps the ring this process mapped.

    PECS_TESTEE='/usr/bin/python3 examples/pipe_testee/pipe_testee.py' pecs-pipe --isolate
"""
import ctypes
import mmap
import os
import socket
import stat
import struct
import sys

(HELLO, HOST_FACTS, SETUP, TEARDOWN, OPEN, CLOSE, READ, WRITE, IOCTL, POLL, MMAP,
 MUNMAP) = range(1, 13)
PTR_BYTES, PTR_NULL, PTR_BAD, PTR_INTEGER = range(4)
EINVAL, ENOSYS, EPROTONOSUPPORT = 22, 38, 93
SYS_perf_event_open = 298  # x86-64
# tracepoint.syscalls: the kernel sees the runner's system calls on the runner's tid.
FEATURES = ["counting", "read.group", "read.lost", "ioctl.refresh", "poll", "policy",
            "pid.other", "tracepoint.syscalls"]
# Their cases read the ring, which only version 2 shares with the runner.
RING_FEATURES = ["mmap", "mmap.overwrite", "sampling", "ioctl.set_output",
                 "ioctl.pause_output"]

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
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
MAP_FAILED = ctypes.c_void_p(-1).value

PAGE = os.sysconf("SC_PAGE_SIZE")
# An address that faults: what the runner's inaccessible pointers become here.
BAD = libc.mmap(None, PAGE, 0,  # PROT_NONE
                mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)


def ret(r):
    return -ctypes.get_errno() if r < 0 else r


class Testee:
    def __init__(self, can_pass_fds):
        self.can_pass_fds = can_pass_fds
        self.version = 0
        self.caller_tid = 0
        self.fds = set()
        self.maps = {}  # address -> length, of mappings made for the runner
        self.send_fd = None  # the fd the current answer carries

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
            (offered,) = struct.unpack_from("<I", body)
            if offered < 1:
                return -EPROTONOSUPPORT, b""
            # Version 2 passes fds, which only a socket carries.
            self.version = 2 if offered >= 2 and self.can_pass_fds else 1
            claimed = FEATURES + (RING_FEATURES if self.version >= 2 else [])
            return self.version, ("python-kernel\n" + "".join(f + "\n" for f in claimed)).encode()
        if op in (MMAP, MUNMAP) and self.version < 2:
            return -ENOSYS, b""
        if op == MMAP:
            fd, prot, flags, _, length, offset = struct.unpack_from("<iiiIQQ", body)
            addr = libc.mmap(None, length, prot, flags, fd, offset)
            if addr in (None, MAP_FAILED):
                return -ctypes.get_errno(), b""
            self.maps[addr] = length
            self.send_fd = fd  # for this kernel, the fd behind the mapping is the event's
            return 0, struct.pack("<QQ", addr, offset)
        if op == MUNMAP:
            addr, length = struct.unpack_from("<QQ", body)
            # Only memory mapped for the runner: anything else is this process's own.
            base = next((a for a, n in self.maps.items() if a <= addr < a + n), None)
            if base is None:
                return -EINVAL, b""
            r = ret(libc.munmap(addr, length))
            if r == 0 and addr == base and length >= self.maps[base]:
                del self.maps[base]
            return r, b""
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
        for addr, length in self.maps.items():  # unmap before closing, as the runner does
            libc.munmap(addr, length)
        self.maps.clear()
        for fd in sorted(self.fds, reverse=True):
            libc.close(fd)
        self.fds.clear()


def stdout_socket():
    """Our stdout as a socket object (on a duplicate fd), or None when it is a pipe."""
    if not stat.S_ISSOCK(os.fstat(1).st_mode):
        return None
    return socket.socket(fileno=os.dup(1))


def main():
    rd, wr = sys.stdin.buffer, sys.stdout.buffer
    sock = stdout_socket()
    t = Testee(sock is not None)
    while True:
        head = rd.read(4)
        if len(head) < 4:
            return 0  # the runner closed our stdin
        (n,) = struct.unpack("<I", head)
        msg = rd.read(n)
        op, seq = struct.unpack_from("<II", msg)
        t.send_fd = None
        r, out = t.serve(op, msg[8:])
        frame = struct.pack("<IIIq", 16 + len(out), op, seq, r) + out
        if t.send_fd is None:
            wr.write(frame)
            wr.flush()
            continue
        # The fd rides on the answer's first bytes; the rest, if any, follows plainly.
        sent = socket.send_fds(sock, [frame], [t.send_fd])
        sock.sendall(frame[sent:])


if __name__ == "__main__":
    sys.exit(main())
