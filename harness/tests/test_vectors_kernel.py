"""The record_layout vectors against the running kernel (Linux is the oracle).

For each published record vector, vectors/tools/capture_sample.c opens a user-only
TASK_CLOCK event with the vector's sample_type and read_format on this machine and
returns the first PERF_RECORD_SAMPLE. The two must have the same shape: every word the
vector states as a constant must be the kernel's byte for byte; ids must be the events'
IOC_IDs at the places `dynamic` names; run-time words (pid/tid, period, callchain
framing) must be what the capture saw. The capture's callchain is as deep as the real
stack, so the vector is re-encoded with that many ips before the comparison.

Skipped when gcc is missing or the kernel refuses the event (no perf_event_open,
paranoid level, no privilege for PHYS_ADDR).
"""

import json
import os
import shutil
import struct
import subprocess
from typing import Any

import pytest

from pecs_vectors import generate, uapi
from pecs_vectors.areas import record_layout

VECTORS = os.environ.get("PECS_VECTORS_DIR") or generate.default_vectors_dir()
# The capture program and abi.h are found from this file, so PECS_VECTORS_DIR may point
# at a copy of the vectors.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CAPTURE_SRC = os.path.join(ROOT, "vectors", "tools", "capture_sample.c")
ABI_INCLUDE = os.path.join(ROOT, "abi", "include")
CAPTURE_PERIOD = 100000  # what capture_sample.c opens the event with

# Words the vector states as fixed values: the capture must hold the same bytes.
CONSTANT = {"header", "RAW", "WEIGHT", "WEIGHT_STRUCT", "DATA_SRC", "TRANSACTION", "PHYS_ADDR",
            "DATA_PAGE_SIZE", "CALLCHAIN:context", "READ:nr", "READ:lost"}


def _record_vectors() -> list[dict[str, Any]]:
    with open(os.path.join(VECTORS, record_layout.PATH), encoding="utf-8") as f:
        doc = json.load(f)
    return [t for g in doc["testGroups"] for t in g["tests"]]


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> str:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    exe = str(tmp_path_factory.mktemp("capture") / "capture_sample")
    subprocess.run(["gcc", "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror", "-I", ABI_INCLUDE,
                    CAPTURE_SRC, "-o", exe], check=True)
    probe = subprocess.run([exe, "0x1", "0", "1"], stdout=subprocess.PIPE, universal_newlines=True)
    if probe.returncode != 0:
        pytest.skip("this kernel refuses a user-only TASK_CLOCK sampling event: " + probe.stdout.strip())
    return exe


def _run(exe: str, t: dict[str, Any]) -> tuple[int, int, int, list[int], bytes]:
    r = subprocess.run([exe, hex(t["sample_type"]), hex(t["read_format"]), str(t["nr_members"])],
                       stdout=subprocess.PIPE, universal_newlines=True, timeout=60)
    if r.returncode == 2:
        pytest.skip("kernel refused the event: " + r.stdout.strip())
    assert r.returncode == 0, r.stdout
    out: dict[str, list[str]] = {}
    for line in r.stdout.splitlines():
        key, _, rest = line.partition(" ")
        out[key] = rest.split()
    pid, tid, ncpus = int(out["pid"][0]), int(out["pid"][2]), int(out["pid"][4])
    return pid, tid, ncpus, [int(i) for i in out["ids"]], bytes.fromhex(out["record"][0])


def _u64(data: bytes, off: int) -> int:
    return struct.unpack_from("<Q", data, off)[0]


@pytest.mark.parametrize("t", _record_vectors(), ids=lambda t: "tc%d" % t["tcId"])
def test_vector_matches_kernel_capture(capture: str, t: dict[str, Any]) -> None:
    pid, tid, ncpus, ids, got = _run(capture, t)
    st, rf, nr = t["sample_type"], t["read_format"], t["nr_members"]
    sample = dict(t["sample"], addr=int(t["sample"]["addr"], 16), ips=[int(a, 16) for a in t["sample"]["ips"]])
    read = t.get("read", {})

    # The encoder's word labels are only trusted if it reproduces the published bytes.
    probe = record_layout.encode(st, rf, nr, sample, t["ids"], read)
    assert probe.data.hex() == t["expected"] and probe.dynamic == t["dynamic"]

    # Re-encode with the capture's callchain depth; everything else keeps its offset.
    if st & uapi.sample("CALLCHAIN"):
        at = next(off for off, _, label in probe.words if label == "CALLCHAIN:nr")
        depth = _u64(got, at) - 1
        assert depth >= 1, "the kernel's user callchain has no ip"
        assert len(got) == t["size"] + 8 * (depth - len(sample["ips"]))
        sample["ips"] = [0] * depth
    else:
        assert len(got) == t["size"], "record size differs from the vector"
    rec = record_layout.encode(st, rf, nr, sample, t["ids"], read)
    assert len(rec.data) == len(got)
    dynamic = {d["offset"]: d["field"] for d in rec.dynamic}

    ip = None
    chain = []
    for off, size, label in rec.words:
        word = got[off:off + size]
        value = int.from_bytes(word, "little")
        field = dynamic.get(off)
        if label in CONSTANT or label.startswith("READ:member") and label.endswith(".lost"):
            assert field is None
            assert word == rec.data[off:off + size], "%s at %d: kernel %s, vector %s" % (
                label, off, word.hex(), rec.data[off:off + size].hex())
        elif field == "id":
            assert value == ids[0], "%s at %d should be the event's id" % (label, off)
        elif field and field.startswith("member_id["):
            assert value == ids[int(field[10:-1])], "%s at %d" % (label, off)
        elif label == "TID":
            assert value == (pid if off == [o for o, _, lb in rec.words if lb == "TID"][0] else tid)
        elif label == "CPU":
            first = off == [o for o, _, lb in rec.words if lb == "CPU"][0]
            assert value < ncpus if first else value == 0
        elif label == "PERIOD":
            assert value == CAPTURE_PERIOD == sample["period"]
        elif label == "IP":
            ip = value
        elif label == "TIME":
            assert value > 0
        elif label == "ADDR":
            assert value == 0, "a clock event has no data address"
        elif label == "CALLCHAIN:nr":
            assert value == len(sample["ips"]) + 1
        elif label == "CALLCHAIN:ip":
            chain.append(value)
        elif label in ("CGROUP", "CODE_PAGE_SIZE"):
            assert field == label.lower(), "host-dependent %s must be listed in dynamic" % label
        else:
            # counter values and times: only known at run time, and listed as such
            assert field in ("value", "time_enabled", "time_running") or \
                (field or "").startswith("member_value["), "%s at %d (%s)" % (label, off, field)
    if ip is not None and chain:
        assert chain[0] == ip, "the callchain starts with the sampled IP"
    # every dynamic range of the vector was met by the walk above
    assert set(dynamic) <= {off for off, _, _ in rec.words}
