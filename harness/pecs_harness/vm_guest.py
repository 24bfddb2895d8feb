"""What runs inside the guest, and how its answers come back over the serial console.

The guest's /init (busybox sh) runs each pass in turn: it sets the pass's sysctls, prints
the values the pass ran with, runs the static runner (as root, or under setpriv as uid
65534 with no capabilities), and prints the results file framed on the console:

  @@PECS pass LABEL begin
  @@PECS sysctl LABEL kernel.perf_event_paranoid=2
  ... the runner's own lines ...
  @@PECS result LABEL rc=N
  @@B <base64 of the gzip-compressed results file, a line at a time>
  @@PECS end LABEL sha256=<of the results file>

and then powers off. Every frame line carries a prefix, so kernel messages printed in
between are skipped rather than decoded, and the checksum catches a line lost or garbled.
"""
import base64
import binascii
import gzip
import hashlib
import json
import shlex
import zlib
from dataclasses import dataclass, field
from typing import Any

MARK = "@@PECS "
DATA = "@@B "

# Reported for every pass, whether the pass sets them or not.
REPORTED_SYSCTLS = ("kernel.perf_event_paranoid", "kernel.perf_event_max_sample_rate",
                    "kernel.perf_event_mlock_kb", "kernel.perf_cpu_time_max_percent",
                    "kernel.perf_event_max_stack")

INIT = r"""#!/bin/busybox sh
# pecs guest init, written by harness/pecs_harness/vm_guest.py: runs the passes in
# /pecs/config and prints each results file framed on the console, then powers off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs -o mode=1777 tmpfs /tmp
. /pecs/config
echo "@@PECS guest $(uname -r) cpus=$(nproc)"
echo "@@PECS build $(cat /proc/version)"
echo "@@PECS clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

# pass LABEL root|unprivileged [SYSCTL=VALUE...]
pass() {
	label=$1 who=$2
	shift 2
	echo "@@PECS pass $label begin"
	for kv in "$@"; do
		sysctl -w "$kv" >/dev/null 2>&1 || echo "@@PECS sysctl-refused $label $kv"
	done
	for k in $PECS_REPORTED_SYSCTLS; do
		echo "@@PECS sysctl $label $k=$(sysctl -n "$k" 2>/dev/null)"
	done
	dir=/tmp/$label
	mkdir -p "$dir"
	drop=
	if [ "$who" = unprivileged ]; then
		chown 65534:65534 "$dir"
		drop="/pecs/setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all"
	fi
	set -- --isolate --json "$dir/results.json" --timeout "$PECS_CASE_TIMEOUT"
	[ -n "$PECS_FILTER" ] && set -- "$@" --filter "$PECS_FILTER"
	( cd "$dir" && $drop /pecs/runner "$@" )
	rc=$?
	echo "@@PECS result $label rc=$rc"
	if [ -f "$dir/results.json" ]; then
		gzip -c "$dir/results.json" | base64 | sed 's/^/@@B /'
		sum=$(sha256sum <"$dir/results.json")
		echo "@@PECS end $label sha256=${sum%% *}"
	else
		echo "@@PECS end $label none"
	fi
}

run_passes
echo "@@PECS done"
sync
poweroff -f
"""


@dataclass
class Pass:
    label: str
    unprivileged: bool
    sysctls: dict[str, str] = field(default_factory=dict)


def config(passes: list[Pass], case_timeout: int, filter_: str | None) -> str:
    """/pecs/config: shell assignments and the run_passes function the init script calls."""
    lines = ["PECS_CASE_TIMEOUT=%d" % case_timeout,
             "PECS_FILTER=%s" % shlex.quote(filter_ or ""),
             "PECS_REPORTED_SYSCTLS=%s" % shlex.quote(" ".join(REPORTED_SYSCTLS)),
             "run_passes() {"]
    for p in passes:
        words = ["pass", p.label, "unprivileged" if p.unprivileged else "root"]
        words += ["%s=%s" % kv for kv in sorted(p.sysctls.items())]
        lines.append("\t" + " ".join(shlex.quote(w) for w in words))
    lines.append("\t:")
    lines.append("}")
    return "\n".join(lines) + "\n"


@dataclass
class PassOutcome:
    """What the console says about one pass."""
    label: str
    began: bool = False
    rc: int | None = None
    sysctls: dict[str, str] = field(default_factory=dict)
    refused: list[str] = field(default_factory=list)
    data: dict[str, Any] | None = None
    error: str | None = None


@dataclass
class Console:
    release: str | None = None
    build: str | None = None      # /proc/version: Debian's point release is only there
    cpus: int | None = None
    done: bool = False
    passes: dict[str, PassOutcome] = field(default_factory=dict)


def _finish_frame(out: PassOutcome, chunks: list[str], end: list[str]) -> None:
    if end[:1] == ["none"]:
        out.error = "the runner wrote no results file (exit status %s)" % out.rc
        return
    want = end[0][len("sha256="):] if end and end[0].startswith("sha256=") else ""
    try:
        raw = gzip.decompress(base64.b64decode("".join(chunks), validate=True))
    except (binascii.Error, OSError, EOFError, zlib.error) as e:
        out.error = "the results frame does not decode: %s" % e
        return
    if hashlib.sha256(raw).hexdigest() != want:
        out.error = "the results frame's checksum does not match (a console line was lost)"
        return
    try:
        out.data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        out.error = "the results frame is not JSON: %s" % e


def parse(text: str) -> Console:
    """Reads a whole console log. Lines may end in \\r\\n; anything unframed is skipped."""
    con = Console()
    cur: PassOutcome | None = None
    chunks: list[str] | None = None
    for line in text.splitlines():
        line = line.rstrip("\r")
        if chunks is not None and line.startswith(DATA):
            chunks.append(line[len(DATA):].strip())
            continue
        if not line.startswith(MARK):
            continue
        words = line[len(MARK):].split()
        if not words:
            continue
        kind, rest = words[0], words[1:]
        if kind == "guest" and rest:
            con.release = rest[0]
            if len(rest) > 1 and rest[1].startswith("cpus="):
                con.cpus = int(rest[1][5:]) if rest[1][5:].isdigit() else None
        elif kind == "build":
            con.build = line[len(MARK) + len("build "):].strip()
        elif kind == "done":
            con.done = True
        elif kind == "pass" and len(rest) == 2 and rest[1] == "begin":
            cur = con.passes.setdefault(rest[0], PassOutcome(rest[0]))
            cur.began = True
        elif cur is None or not rest or rest[0] != cur.label:
            continue
        elif kind == "sysctl" and len(rest) == 2:
            k, _, v = rest[1].partition("=")
            cur.sysctls[k] = v
        elif kind == "sysctl-refused" and len(rest) == 2:
            cur.refused.append(rest[1])
        elif kind == "result" and len(rest) == 2 and rest[1].startswith("rc="):
            cur.rc = int(rest[1][3:]) if rest[1][3:].isdigit() else None
            chunks = []
        elif kind == "end" and chunks is not None:
            _finish_frame(cur, chunks, rest[1:])
            chunks = None
    return con


def tail(text: str, n: int = 25) -> str:
    """The console's last lines without the frames' data, for a verdict's message."""
    lines = [l.rstrip("\r") for l in text.splitlines() if not l.startswith(DATA)]
    return "\n".join(lines[-n:])
