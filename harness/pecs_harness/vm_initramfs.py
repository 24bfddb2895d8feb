"""The guest's initramfs: a newc cpio archive written here, byte by byte, so that building it
needs no root (the device node /dev/console and root-owned files exist only in the archive)
and no cpio tool.

What goes in: /init (the guest script, vm_guest.py), the static runner as /pecs/runner,
busybox as /bin/busybox, setpriv with the shared objects it loads (the unprivileged pass
drops root exactly as the host's syscall-unprivileged run does), and /pecs/config.
"""
import gzip
import os
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

NEWC_MAGIC = b"070701"
TRAILER = "TRAILER!!!"


class InitramfsError(Exception):
    pass


@dataclass
class Entry:
    """One archive member: a directory, a regular file, a symlink or a character device."""
    name: str              # without a leading slash
    mode: int              # st_mode, type bits included
    data: bytes = b""      # file contents, or the symlink's target
    rdev: tuple[int, int] = (0, 0)


def _pad4(n: int) -> bytes:
    return b"\0" * (-n % 4)


def _header(ino: int, e: Entry, name: bytes) -> bytes:
    fields = [ino, e.mode, 0, 0, 2 if stat.S_ISDIR(e.mode) else 1, 0, len(e.data),
              0, 0, e.rdev[0], e.rdev[1], len(name) + 1, 0]
    return NEWC_MAGIC + b"".join(b"%08X" % f for f in fields)


def newc(entries: list[Entry]) -> bytes:
    """The archive, every member owned by root, with the trailer the kernel looks for."""
    out = bytearray()
    for ino, e in enumerate(entries + [Entry(TRAILER, 0)], start=1):
        name = e.name.lstrip("/").encode()
        hdr = _header(ino if e.name != TRAILER else 0, e, name)
        out += hdr + name + b"\0"
        out += _pad4(len(hdr) + len(name) + 1)
        out += e.data + _pad4(len(e.data))
    return bytes(out)


def read_newc(blob: bytes) -> Iterator[Entry]:
    """Members of a newc archive (for the tests, and to check what was built)."""
    off = 0
    while True:
        if blob[off:off + 6] != NEWC_MAGIC:
            raise InitramfsError("no newc header at offset %d" % off)
        f = [int(blob[off + 6 + 8 * i: off + 14 + 8 * i], 16) for i in range(13)]
        mode, size, namesize = f[1], f[6], f[11]
        name_end = off + 110 + namesize
        name = blob[off + 110: name_end - 1].decode()
        data_off = name_end + (-(110 + namesize) % 4)
        if name == TRAILER:
            return
        yield Entry(name, mode, blob[data_off:data_off + size], (f[9], f[10]))
        off = data_off + size + (-size % 4)


def _dirs_of(path: str, have: set[str]) -> list[Entry]:
    out = []
    parts = path.strip("/").split("/")[:-1]
    for i in range(len(parts)):
        d = "/".join(parts[: i + 1])
        if d not in have:
            have.add(d)
            out.append(Entry(d, stat.S_IFDIR | 0o755))
    return out


def shared_objects(binary: str) -> list[str]:
    """The shared objects a dynamic binary loads, the loader included (ldd's view)."""
    try:
        p = subprocess.run(["ldd", binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InitramfsError("ldd %s: %s" % (binary, e))
    libs = []
    for line in p.stdout.splitlines():
        words = line.split()
        if "=>" in words:
            words = words[words.index("=>") + 1:]
        if words and words[0].startswith("/"):
            libs.append(words[0])
    return libs


def _file(name: str, path: str, mode: int = 0o755) -> Entry:
    try:
        with open(path, "rb") as f:
            return Entry(name, stat.S_IFREG | mode, f.read())
    except OSError as e:
        raise InitramfsError("cannot read %s: %s" % (path, e.strerror))


def entries(runner: str, busybox: str, setpriv: str, init: str, config: str) -> list[Entry]:
    """Every member, directories before what they hold."""
    have: set[str] = set()
    out: list[Entry] = []
    for d in ("bin", "dev", "proc", "sys", "tmp", "pecs", "etc"):
        have.add(d)
        out.append(Entry(d, stat.S_IFDIR | (0o1777 if d == "tmp" else 0o755)))
    # The kernel opens /dev/console for init's stdio before anything is mounted.
    out.append(Entry("dev/console", stat.S_IFCHR | 0o600, rdev=(5, 1)))
    out.append(Entry("init", stat.S_IFREG | 0o755, init.encode()))
    out.append(Entry("pecs/config", stat.S_IFREG | 0o644, config.encode()))
    out.append(Entry("etc/passwd", stat.S_IFREG | 0o644,
                     b"root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n"))
    out.append(_file("pecs/runner", runner))
    out.append(_file("bin/busybox", busybox))
    # Not in /bin: busybox --install would put its own, smaller setpriv there.
    out.append(_file("pecs/setpriv", setpriv))
    for lib in shared_objects(setpriv):
        real = os.path.realpath(lib)
        out.extend(_dirs_of(lib, have))
        out.append(_file(lib.lstrip("/"), real))
    return out


def build(path: str, runner: str, busybox: str, setpriv: str, init: str, config: str) -> int:
    """Writes the gzip-compressed archive to path; returns its size in bytes."""
    blob = gzip.compress(newc(entries(runner, busybox, setpriv, init, config)), 6)
    with open(path, "wb") as f:
        f.write(blob)
    return len(blob)
