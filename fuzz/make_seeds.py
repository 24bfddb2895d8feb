#!/usr/bin/python3
"""Seed inputs for the fuzz targets, derived from the golden vectors (nothing is kept
in the tree that this can make).

  make_seeds.py TARGET (--bundle FILE | --dir DIR) VECTOR.json...

TARGET is fxt_reader, markup_reader, decoder or attr_open. Each file is used by its
"area": fxt and markup streams seed the stream targets (behind the control byte that
stream_diff.h describes), the captured open/read/ioctl probes and the record_layout
sample types seed attr_open (in the operation language attr_open_fuzz.c describes).
--bundle writes every input into one file, each after its u32 little-endian length
(replay_main.c reads it); --dir writes one file per input, for libFuzzer.
Standard library only.
"""
import argparse
import json
import os
import struct
import sys

CTRL_MAP = 0x10
CTRL_NO_OBSERVER = 0x20
CTRL_REFUSE = 0x40


def tests(doc):
    for group in doc.get("testGroups", []):
        for test in group.get("tests", []):
            yield test


def stream_bytes(test):
    stream = test["stream"]
    if "hex" in stream:
        return bytes.fromhex(stream["hex"])
    return stream["text"].encode("utf-8")


def stream_seeds(docs, areas, variants):
    """Each vector's stream behind control bytes that vary the chunking, and a koid map
    when the vector has one."""
    out = []
    for doc in docs:
        if doc.get("area") not in areas:
            continue
        for test in tests(doc):
            tc = int(test["tcId"])
            data = stream_bytes(test)
            mapped = CTRL_MAP if test.get("koids") else 0
            ctrls = [tc % 16 | mapped, (tc + 8) % 16 | mapped | (CTRL_NO_OBSERVER if tc % 3 == 0 else 0)]
            if tc % 5 == 0:
                ctrls.append(CTRL_REFUSE | (tc // 5) % 8 | mapped)
            for ctrl in ctrls[:variants]:
                out.append(bytes([ctrl]) + data)
    return out


# perf_event_attr words the seeds set; the rest of the struct stays zero.
ATTR_FLAGS_DEFAULT = (1 << 0) | (1 << 5) | (1 << 6)  # disabled, exclude_kernel, exclude_hv
PERF_TYPE_SOFTWARE = 1
PERF_COUNT_SW_TASK_CLOCK = 1
ATTR_SIZE_LATEST = 136
MAX_GIVEN = 255

PID_CHOICE = {-1: 0, 0: 1, 1: 3, -2: 5}
IOCTL_WHICH = {
    0x2400: 0,  # ENABLE
    0x2401: 1,  # DISABLE
    0x2403: 2,  # RESET
    0x40042409: 3,  # PAUSE_OUTPUT
    0x2402: 4,  # REFRESH
    0x40082404: 5,  # PERIOD
    0x80082407: 6,  # ID
    0x2405: 7,  # SET_OUTPUT
}
IOC_MODIFY_ATTRIBUTES = 0x4008240B

OP_OPEN, OP_CLOSE, OP_READ, OP_IOCTL, OP_MODIFY, OP_POLL = 0, 2, 3, 4, 5, 6


def attr_bytes(p, plain=False):
    """The attr conformance/tools/probe.c builds for a probe, as the bytes to give."""
    flags = ATTR_FLAGS_DEFAULT
    period = sample_type = 0
    if p.get("sampling"):
        period, sample_type = 100000, 1
    if p.get("period"):
        period = p["period"]
    if p.get("sample_type"):
        sample_type = p["sample_type"]
    if not plain:
        flags = (flags | p.get("set", 0)) & ~p.get("clear", 0)
    size = ATTR_SIZE_LATEST if plain else p.get("size", ATTR_SIZE_LATEST)
    typ = PERF_TYPE_SOFTWARE if plain else p.get("type", PERF_TYPE_SOFTWARE)
    config = PERF_COUNT_SW_TASK_CLOCK if plain else p.get("config", PERF_COUNT_SW_TASK_CLOCK)
    head = struct.pack(
        "<IIQQQQQ",
        typ & 0xFFFFFFFF,
        size & 0xFFFFFFFF,
        config & (2**64 - 1),
        period & (2**64 - 1),
        sample_type & (2**64 - 1),
        p.get("read_format", 0) & (2**64 - 1),
        flags & (2**64 - 1),
    )
    tail = 0 if plain else p.get("tail", 0)
    given = max(len(head), tail + 1)
    if given > MAX_GIVEN:
        return None
    buf = bytearray(head.ljust(given, b"\0"))
    if tail:
        buf[tail] = 1
    return bytes(buf)


def op_open(attr, pid=0, cpu=-1, group=0x80, oflags=0):
    return bytes([OP_OPEN, PID_CHOICE.get(pid, 4), cpu & 0xFF, group, oflags & 0xFF, len(attr)]) + attr


def parse_probe(text):
    p = {}
    for word in text.split():
        key, _, value = word.partition("=")
        if key in ("op", "group", "argkind", "prot"):
            p[key] = value
        else:
            p[key] = int(value, 0)
    return p


def probe_program(p):
    """A probe of vectors/captured as operations, or None where the target has no
    equivalent (mmap, or an attr longer than one length byte can give)."""
    ops = []
    attr = attr_bytes(p)
    if attr is None:
        return None
    group = 0x80
    if p.get("group") in ("leader", "member"):
        plain = attr_bytes(p, plain=True)
        ops.append(op_open(plain))
        if p["group"] == "member":
            ops.append(op_open(plain, group=0))
        group = 0 if p["group"] == "leader" else 1
    elif p.get("group") in ("bad", "devnull"):
        group = 0x40  # no event open yet: an fd the engine never gave
    base = len(ops)
    ops.append(op_open(attr, p.get("pid", 0), p.get("cpu", -1), group, p.get("oflags", 0)))
    for _ in range(1, p.get("members", 1)):
        ops.append(op_open(attr, p.get("pid", 0), p.get("cpu", -1), base, 0))
    op = p.get("op")
    if op == "read":
        count = p.get("count", 4096)
        ops.append(bytes([OP_READ, base, count & 0xFF, (count >> 8) & 0xFF]))
    elif op == "ioctl":
        request = p.get("request", 0)
        if request == IOC_MODIFY_ATTRIBUTES:
            ops.append(bytes([OP_MODIFY, base, len(attr)]) + attr)
        elif request in IOCTL_WHICH:
            ops.append(bytes([OP_IOCTL, base, IOCTL_WHICH[request], p.get("arg", 0) & 0xFF]))
        else:
            return None
    elif op == "mmap":
        ops.append(bytes([OP_POLL, base]))
    ops.append(bytes([OP_CLOSE, base]))
    return b"".join(ops)


def record_program(test):
    """Open a sampling event with a record_layout vector's sample_type and read_format,
    enable it, read it, disable it."""
    p = {"sampling": 1, "sample_type": test["sample_type"], "read_format": test["read_format"]}
    attr = attr_bytes(p)
    ops = [op_open(attr)]
    for _ in range(1, test.get("nr_members", 1) or 1):
        ops.append(op_open(attr, group=0))
    ops.append(bytes([OP_IOCTL, 0, 0, 1]))
    ops.append(bytes([OP_READ, 0, 0x00, 0x10]))
    ops.append(bytes([OP_IOCTL, 0, 1, 1]))
    return b"".join(ops)


# Policy bytes: paranoid 2 without capabilities; paranoid -1 with CAP_PERFMON,
# CAP_SYS_ADMIN and CAP_IPC_LOCK.
POLICIES = (0x03, 0x1C)


def attr_open_seeds(docs):
    programs = []
    for doc in docs:
        area = doc.get("area")
        for test in tests(doc):
            prog = None
            if area == "linux_capture":
                prog = probe_program(parse_probe(test["probe"]))
            elif area == "record_layout":
                prog = record_program(test)
            if prog is not None:
                programs.append(prog)
    return [bytes([pol]) + prog for prog in programs for pol in POLICIES]


def seeds_for(target, docs):
    if target == "fxt_reader":
        return stream_seeds(docs, ("fxt",), 3)
    if target == "markup_reader":
        return stream_seeds(docs, ("markup",), 3)
    if target == "decoder":
        return stream_seeds(docs, ("fxt", "markup"), 1)
    if target == "attr_open":
        return attr_open_seeds(docs)
    raise SystemExit(f"make_seeds.py: unknown target {target!r}")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target")
    out = ap.add_mutually_exclusive_group(required=True)
    out.add_argument("--bundle")
    out.add_argument("--dir")
    ap.add_argument("vectors", nargs="+")
    args = ap.parse_args(argv)
    docs = []
    for path in args.vectors:
        try:
            with open(path, encoding="utf-8") as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"make_seeds.py: {path}: {e}", file=sys.stderr)
            return 2
    seeds = seeds_for(args.target, docs)
    if not seeds:
        print(f"make_seeds.py: no seeds for {args.target} in {len(docs)} files", file=sys.stderr)
        return 2
    if args.bundle:
        with open(args.bundle, "wb") as f:
            for s in seeds:
                f.write(struct.pack("<I", len(s)) + s)
    else:
        os.makedirs(args.dir, exist_ok=True)
        for i, s in enumerate(seeds):
            with open(os.path.join(args.dir, f"seed-{i:04d}"), "wb") as f:
                f.write(s)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
