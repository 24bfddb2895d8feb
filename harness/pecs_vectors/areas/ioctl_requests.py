"""PERF_EVENT_IOC_* request numbers, encoded the way x86-64's _IOC() does."""

from .. import uapi
from ..document import VectorFile, hex_u64

AREA = "ioctl_requests"
PATH = "ioctl/ioctl_requests.json"

NOTES = {
    "NoArgument": "_IO(): direction none, size 0; the argument is passed by value.",
    "WriteArgument": "_IOW(): user space passes a pointer the kernel reads.",
    "ReadArgument": "_IOR(): the kernel writes through the pointer.",
    "ReadWriteArgument": "_IOWR(): the kernel reads and writes through the pointer.",
}

_DIRS = {  # macro -> (dir bits, dir name, flag)
    "_IO": (uapi.IOC_NONE, "none", "NoArgument"),
    "_IOW": (uapi.IOC_WRITE, "write", "WriteArgument"),
    "_IOR": (uapi.IOC_READ, "read", "ReadArgument"),
    "_IOWR": (uapi.IOC_READ | uapi.IOC_WRITE, "read_write", "ReadWriteArgument"),
}


def ioc(direction: int, typ: int, nr: int, size: int) -> int:
    if size >= 1 << uapi.IOC_SIZEBITS or nr >= 1 << uapi.IOC_NRBITS:
        raise ValueError("ioctl field out of range")
    return ((direction << uapi.IOC_DIRSHIFT) | (typ << uapi.IOC_TYPESHIFT) |
            (nr << uapi.IOC_NRSHIFT) | (size << uapi.IOC_SIZESHIFT))


def build() -> VectorFile:
    vf = VectorFile(AREA, NOTES)
    g = vf.group("IoctlRequestTest", "uapi-header",
                 "include/uapi/linux/perf_event.h (Linux 6.12), PERF_EVENT_IOC_*; "
                 "include/uapi/asm-generic/ioctl.h, _IOC() with x86-64's field widths")
    for name, macro, nr, size in uapi.IOCTLS:
        bits, dname, flag = _DIRS[macro]
        request = ioc(bits, uapi.PERF_IOC_TYPE, nr, size)
        g.add("%s = %s('$', %d%s)" % (name, macro, nr, "" if macro == "_IO" else ", %d-byte arg" % size),
              [flag], name=name, request=hex_u64(request), dir=dname, size=size,
              type=uapi.PERF_IOC_TYPE, nr=nr)
    return vf
