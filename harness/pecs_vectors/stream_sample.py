"""The PERF_RECORD_SAMPLE bytes an engine must write for a decoded profiler sample
(include/uapi/linux/perf_event.h, perf_output_sample order), and the little-endian
packers every stream builder shares."""

import struct
from typing import Any

# A decoded sample as the builders record it: pid, tid, time and ips.
Sample = dict[str, Any]

SAMPLE_IP = 1 << 0
SAMPLE_TID = 1 << 1
SAMPLE_TIME = 1 << 2
SAMPLE_CALLCHAIN = 1 << 5
SAMPLE_CPU = 1 << 7
SAMPLE_PERIOD = 1 << 8
RECORD_SAMPLE = 9
MISC_USER = 2
CONTEXT_USER = (1 << 64) - 512


def u16(v: int) -> bytes:
    return struct.pack("<H", v)


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def u64(v: int) -> bytes:
    return struct.pack("<Q", v)


# kernel.perf_event_max_stack's default: a callchain keeps at most this many ips after
# its context marker (kernel/events/callchain.c, get_perf_callchain()).
MAX_STACK = 127


def sample_record(sample_type: int, s: Sample, period: int, cpu: int = 0) -> bytes:
    """PERF_RECORD_SAMPLE for a user-mode sample: IP, TID, TIME, CPU, PERIOD, CALLCHAIN in
    the kernel's order; the callchain opens with PERF_CONTEXT_USER and is cut at
    MAX_STACK ips."""
    body = b""
    if sample_type & SAMPLE_IP:
        body += u64(s["ips"][0])
    if sample_type & SAMPLE_TID:
        body += u32(s["pid"]) + u32(s["tid"])
    if sample_type & SAMPLE_TIME:
        body += u64(s["time"])
    if sample_type & SAMPLE_CPU:
        body += u32(cpu) + u32(0)
    if sample_type & SAMPLE_PERIOD:
        body += u64(period)
    if sample_type & SAMPLE_CALLCHAIN:
        chain = s["ips"][:MAX_STACK]
        body += u64(1 + len(chain)) + u64(CONTEXT_USER)
        body += b"".join(u64(ip) for ip in chain)
    return u32(RECORD_SAMPLE) + u16(MISC_USER) + u16(8 + len(body)) + body
