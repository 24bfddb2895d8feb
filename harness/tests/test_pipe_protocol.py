"""The pipe testee protocol (docs/testee-protocol.md): the C and Python testees in
examples/pipe_testee proxy to this kernel, and running the whole suite through either must
give the in-process runner's verdict for every case, UNSUPPORTED ones included (version 2
shares the ring); a version 1 testee still works without the ring; a testee that dies, hangs
or garbles a response gives clear verdicts in bounded time; the harness driver runs pipe
and plugin implementations end to end. The frames are also spoken here directly, from the
specification, without the C adapter."""
import json
import mmap
import os
import pathlib
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from test_plugin_loader import locate

PIPE = "conformance/adapters/pipe/pecs-pipe"
PLUGIN_RUNNER = "conformance/adapters/plugin/pecs-plugin"
TESTEE = "examples/pipe_testee/pipe_testee"
# The oracle: the kernel in process, as the static binary people copy elsewhere.
SYSCALL = "conformance/pecs-syscall-static"
SNAPSHOT = "examples/starnix_snapshot/libstarnix_snapshot.so"
# Features whose cases read the ring: through the pipe only version 2 can run them.
RING = ("mmap", "mmap.overwrite", "sampling", "ioctl.set_output", "ioctl.pause_output")
# Features the pipe never carries (pipe.c cannot_carry): the runner's mapping is a second
# one of the testee's buffer, the testee's thread owns the events it opens, and no
# operation carries fcntl. Their cases are UNSUPPORTED through the pipe by design.
NOT_CARRIED = ("mmap.vma", "prctl.perf_events", "fasync")


def carried(features: Sequence[str]) -> list[str]:
    return sorted(f for f in features if f not in NOT_CARRIED)


def python_testee() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    script = next((p for p in (os.path.join(os.getcwd(), "examples/pipe_testee/pipe_testee.py"),
                               os.path.join(here, "../../examples/pipe_testee/pipe_testee.py"))
                   if os.path.exists(p)), None)
    assert script, "examples/pipe_testee/pipe_testee.py not found"
    return "/usr/bin/python3 " + os.path.abspath(script)


# The per-call deadline of the tests whose testee hangs. Every other call of theirs must
# answer within it too, so it is long enough for a loaded machine; a hang still ends there
# (the message names it), and run()'s own timeout fails the test if one never ends.
HANG_DEADLINE_MS = 3000


def run(argv: list[str], env_extra: dict[str, str] | None=None, timeout: int=600) -> tuple[subprocess.CompletedProcess[str], float]:
    env = dict(os.environ)
    env.update(env_extra or {})
    start = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env, timeout=timeout)
    return r, time.monotonic() - start


def run_pipe(tmp_path: pathlib.Path, testee_args: str="", extra: Sequence[str]=(), env: dict[str, str] | None=None, name: str="pipe.json") -> tuple[subprocess.CompletedProcess[str], float, Any]:
    """The pipe runner's process, its time and its results file (None when it wrote none)."""
    out = tmp_path / name
    e = {"PECS_TESTEE": "%s %s" % (locate(TESTEE), testee_args)}
    e.update(env or {})
    r, secs = run([locate(PIPE), "--quiet", "--json", str(out)] + list(extra), e)
    res = json.loads(out.read_text()) if out.exists() else None
    return r, secs, res


# ---- same verdicts ---------------------------------------------------------------------

def results_of(argv: list[str], out: str | os.PathLike[str], env: dict[str, str] | None=None, ids: Sequence[str] | None=None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Runs a runner (argv without output options) and returns its results by case id."""
    extra = ["--filter", ",".join(ids)] if ids else []
    r, _ = run(argv + ["--isolate", "--quiet", "--json", str(out)] + extra, env)
    assert os.path.exists(str(out)), r.stderr
    with open(str(out)) as f:
        doc = json.load(f)
    return doc, {x["id"]: x for x in doc["results"]}


def assert_same_verdicts(a: dict[str, Any], b: dict[str, Any], again_a: Callable[[list[str]], dict[str, Any]], again_b: Callable[[list[str]], dict[str, Any]], label: str) -> None:
    """Every case has one verdict, UNSUPPORTED included: a case the pipe cannot carry is a
    difference. A case that differs is run once more, alone, by both runners: a
    timing-sensitive case on a loaded machine may differ once by chance; a real difference
    in the protocol differs every time."""
    assert set(a) == set(b), "both runners link the same cases"
    # The comparison means something only if the ring's cases ran in process.
    ring_ran = [i for i in a if set(RING) & set(a[i]["features"]) and
                a[i]["raw_status"] != "UNSUPPORTED"]
    assert len(ring_ran) >= 20, "too few ring cases ran in process: %d" % len(ring_ran)
    differ = [i for i in a if a[i]["raw_status"] != b[i]["raw_status"] and
              not (b[i]["raw_status"] == "UNSUPPORTED" and set(NOT_CARRIED) & set(a[i]["features"]))]
    if differ:
        a, b = again_a(differ), again_b(differ)
        differ = [i for i in differ if a[i]["raw_status"] != b[i]["raw_status"]]
    assert not differ, "\n".join(
        "%s: in-process %s, %s %s (%s)" % (i, a[i]["raw_status"], label, b[i]["raw_status"],
                                          b[i]["message"]) for i in differ)


# The results files in process and through the pipe, and their folder.
Both = tuple[dict[str, Any], dict[str, Any], pathlib.Path]


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> Both:
    d = tmp_path_factory.mktemp("both")
    inproc, _ = results_of([locate(SYSCALL)], d / "inproc.json")
    piped, _ = results_of([locate(PIPE)], d / "pipe.json", {"PECS_TESTEE": locate(TESTEE)})
    return inproc, piped, d


def by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {x["id"]: x for x in doc["results"]}


def test_the_pipe_gives_the_in_process_verdicts(both: Both) -> None:
    inproc, piped, d = both
    assert_same_verdicts(
        by_id(inproc), by_id(piped),
        lambda ids: results_of([locate(SYSCALL)], d / "inproc-again.json", ids=ids)[1],
        lambda ids: results_of([locate(PIPE)], d / "pipe-again.json",
                               {"PECS_TESTEE": locate(TESTEE)}, ids)[1],
        "pipe")


def test_a_python_testee_gives_the_in_process_verdicts(both: Both) -> None:
    """The same protocol from a testee not written in C, ring included."""
    inproc, _, d = both
    env = {"PECS_TESTEE": python_testee()}
    piped, b = results_of([locate(PIPE)], d / "py.json", env)
    assert piped["impl"] == "pipe-python-kernel"
    assert sorted(piped["features"]) == carried(inproc["features"])
    assert_same_verdicts(
        by_id(inproc), b,
        lambda ids: results_of([locate(SYSCALL)], d / "inproc-again.json", ids=ids)[1],
        lambda ids: results_of([locate(PIPE)], d / "py-again.json", env, ids)[1],
        "python")


def test_through_v2_the_pipe_claims_what_the_in_process_adapter_claims(both: Both) -> None:
    inproc, piped, d = both
    assert piped["impl"] == "pipe-syscall"
    assert sorted(piped["features"]) == carried(inproc["features"])
    for f in RING:
        assert f in piped["features"]
    # The ring's cases ran through the pipe (those needing nothing the kernel lacks), and
    # gave what they give in process: PASS, or the same ENV_SKIP for a host reason. As in
    # assert_same_verdicts, one that differs runs again, alone, on both sides: a
    # statistic of the schedule (Sampling.Accuracy.CountMatchesCpuTime, ENV_SKIP in
    # process and PASS through the pipe beside two busy loops and a build) may differ
    # once by chance.
    want = {r["id"]: r["raw_status"] for r in inproc["results"]}
    ring = [r for r in piped["results"] if "mmap" in r["features"] and
            set(r["features"]) <= set(carried(inproc["features"]))]
    assert ring
    differ = [r["id"] for r in ring if r["raw_status"] != want[r["id"]]]
    if differ:
        again_in = results_of([locate(SYSCALL)], d / "ring-inproc-again.json", ids=differ)[1]
        again_pipe = results_of([locate(PIPE)], d / "ring-pipe-again.json",
                                {"PECS_TESTEE": locate(TESTEE)}, differ)[1]
        differ = [i for i in differ if again_in[i]["raw_status"] != again_pipe[i]["raw_status"]]
    assert not differ, differ
    assert sum(r["raw_status"] == "PASS" for r in ring) >= 20
    # Host facts travel too: the testee's kernel and privilege.
    assert piped["host"]["kernel_release"] == inproc["host"]["kernel_release"]
    assert piped["host"]["privileged"] == inproc["host"]["privileged"]
    assert piped["host"]["attr_size"] == inproc["host"]["attr_size"]


def test_unprivileged_the_pipe_still_gives_the_in_process_verdicts(request: pytest.FixtureRequest) -> None:
    """As uid 65534 with no capabilities, where the EACCES paths run: runner and testee
    both drop privilege, as an unprivileged profiler's would."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("dropping privilege needs root and setpriv")
    # Outside pytest's 0700 temporary tree, which uid 65534 cannot traverse.
    d = pathlib.Path(tempfile.mkdtemp(prefix="pecs-pipe-unpriv."))
    request.addfinalizer(lambda: shutil.rmtree(str(d), ignore_errors=True))
    for rel in (SYSCALL, PIPE, TESTEE):
        shutil.copy(locate(rel), str(d))
    os.chmod(str(d), 0o777)
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all"]
    inproc = drop + [str(d / os.path.basename(SYSCALL))]
    pipe = drop + [str(d / "pecs-pipe")]
    env = {"PECS_TESTEE": str(d / "pipe_testee")}
    _, a = results_of(inproc, d / "inproc.json")
    piped, b = results_of(pipe, d / "pipe.json", env)
    assert piped["host"]["privileged"] == 0
    assert_same_verdicts(a, b,
                         lambda ids: results_of(inproc, d / "inproc-again.json", ids=ids)[1],
                         lambda ids: results_of(pipe, d / "pipe-again.json", env, ids)[1],
                         "pipe")


def test_a_version_1_testee_still_runs_without_the_ring(both: Both, tmp_path: pathlib.Path) -> None:
    """A testee written for version 1 refuses HELLO 2; the runner offers 1 and carries on
    without shared memory, as before version 2."""
    inproc, _, _ = both
    r, _, res = run_pipe(tmp_path, "--v1", ["--isolate"])
    assert res is not None, r.stderr
    for f in RING:
        assert f not in res["features"]
    a, b = by_id(inproc), by_id(res)
    ring = [i for i in b if set(RING + NOT_CARRIED) & set(b[i]["features"])]
    assert ring and all(b[i]["raw_status"] == "UNSUPPORTED" for i in ring)
    # Everything else as in process (a difference is run once more, alone: timing).
    differ = [i for i in b if i not in ring and a[i]["raw_status"] != b[i]["raw_status"]]
    if differ:
        _, a = results_of([locate(SYSCALL)], tmp_path / "inproc-again.json", ids=differ)
        _, b = results_of([locate(PIPE)], tmp_path / "v1-again.json",
                          {"PECS_TESTEE": locate(TESTEE) + " --v1"}, differ)
        differ = [i for i in differ if a[i]["raw_status"] != b[i]["raw_status"]]
    assert not differ, differ
    assert res["counts"]["passed"] >= 100 and res["counts"]["failed"] == 0, res["counts"]


# ---- a broken testee ---------------------------------------------------------------------

FILTER = "Required.Read.Disable*,Required.Read.Disabled*,Required.Ioctl.Id.*"


def test_a_testee_that_dies_crashes_the_case_and_the_run_goes_on(tmp_path: pathlib.Path) -> None:
    r, secs, res = run_pipe(tmp_path, "--die-at read", ["--isolate", "--filter", FILTER])
    assert r.returncode == 1, r.stderr
    assert "exited with status 3 during READ" in r.stderr
    reads = [x for x in res["results"] if x["id"].startswith("Required.Read.")]
    assert reads and all(x["status"] == "CRASH" for x in reads), reads
    assert all("Broken pipe" in x["message"] for x in reads)
    # Cases that never read are untouched by the dying testee.
    assert any(x["status"] == "PASS" for x in res["results"]), res["counts"]


def test_a_testee_that_hangs_is_killed_at_the_deadline(tmp_path: pathlib.Path) -> None:
    r, secs, res = run_pipe(tmp_path, "--hang-at read", ["--isolate", "--filter", FILTER],
                            env={"PECS_PIPE_TIMEOUT_MS": str(HANG_DEADLINE_MS)})
    assert r.returncode == 1, r.stderr
    assert "did not answer within %d ms (killed) during READ" % HANG_DEADLINE_MS in r.stderr
    reads = [x for x in res["results"] if x["id"].startswith("Required.Read.")]
    assert reads and all(x["status"] == "CRASH" for x in reads)
    assert all("Alarm clock" in x["message"] for x in reads)


def test_a_testee_that_works_past_the_deadline_is_waited_for(tmp_path: pathlib.Path) -> None:
    # It spins for 2.5 deadlines before answering its first READ: slow, not hung.
    r, secs, res = run_pipe(tmp_path, "--busy-at read",
                            ["--isolate", "--filter", "Required.Read.Disable.ValuesFrozen"],
                            env={"PECS_PIPE_TIMEOUT_MS": "1000"})
    assert r.returncode == 0, r.stderr
    assert "did not answer" not in r.stderr
    assert [x["status"] for x in res["results"]] == ["PASS"], res["results"]


def test_without_isolation_a_hang_is_an_error_return_and_the_next_case_recovers(tmp_path: pathlib.Path) -> None:
    r, secs, res = run_pipe(tmp_path, "--hang-at read", ["--filter", FILTER],
                            env={"PECS_PIPE_TIMEOUT_MS": str(HANG_DEADLINE_MS)})
    assert r.returncode == 1, r.stderr
    reads = [x for x in res["results"] if x["id"].startswith("Required.Read.")]
    assert reads and all(x["status"] == "FAIL" for x in reads)
    assert all("-110" in x["message"] or "ETIMEDOUT" in x["message"] for x in reads), reads
    # Each case gets a fresh testee, so the cases that do not read still pass.
    assert any(x["status"] == "PASS" for x in res["results"])


@pytest.mark.parametrize("how, says, signal", [
    ("die", "exited with status 3 during MMAP", "Broken pipe"),
    ("garble", "sent a malformed response (killed) during MMAP", "Broken pipe"),
    ("hang", "did not answer within %d ms (killed) during MMAP" % HANG_DEADLINE_MS, "Alarm clock"),
])
def test_a_testee_that_fails_mmap_crashes_only_the_mapping_cases(tmp_path: pathlib.Path, how: str, says: str, signal: str) -> None:
    r, secs, res = run_pipe(tmp_path, "--%s-at mmap" % how,
                            ["--isolate", "--filter", "Required.Mmap.*,Required.Read.Disable*"],
                            env={"PECS_PIPE_TIMEOUT_MS": str(HANG_DEADLINE_MS)})
    assert r.returncode == 1, r.stderr
    assert says in r.stderr
    # A mapping case the host cannot run stops before it maps (ENV_SKIP, with its reason),
    # and one needing what the pipe never carries does not run (UNSUPPORTED).
    mapping = [x for x in res["results"] if x["id"].startswith("Required.Mmap.") and
               x["status"] not in ("ENV_SKIP", "UNSUPPORTED")]
    assert mapping and all(x["status"] == "CRASH" and signal in x["message"]
                           for x in mapping), mapping
    others = [x for x in res["results"] if not x["id"].startswith("Required.Mmap.")]
    assert others and all(x["status"] == "PASS" for x in others), others


def test_a_garbled_response_is_named(tmp_path: pathlib.Path) -> None:
    r, _, res = run_pipe(tmp_path, "--garble-at ioctl", ["--isolate", "--filter", FILTER])
    assert r.returncode == 1
    assert "sent a malformed response (killed) during IOCTL" in r.stderr
    assert res["counts"]["crashed"] >= 1


def test_a_testee_that_cannot_greet_stops_the_run_with_status_2(tmp_path: pathlib.Path) -> None:
    r, secs, res = run_pipe(tmp_path, "--die-at hello")
    assert r.returncode == 2
    assert "did not answer HELLO" in r.stderr and res is None
    r, _ = run([locate(PIPE), "--list"], {"PECS_TESTEE": "/nonexistent/testee"})
    assert r.returncode == 2 and "exited with status 127 during HELLO" in r.stderr
    env = dict(os.environ)
    env.pop("PECS_TESTEE", None)
    r = subprocess.run([locate(PIPE), "--list"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True, env=env, timeout=60)
    assert r.returncode == 2 and "set PECS_TESTEE" in r.stderr


# ---- the frames, from the specification ---------------------------------------------------

class Session:
    """Speaks the protocol to an example testee, as a testee author's harness would: with
    socket=False its stdout is a pipe (version 1 only), with socket=True one end of a
    socketpair, as pecs-pipe starts it, so that version 2 answers can carry fds."""

    def __init__(self, argv: list[str] | None=None, socket_out: bool=False) -> None:
        argv = argv or [locate(TESTEE)]
        self.sock: socket.socket | None = None
        if socket_out:
            self.sock, theirs = socket.socketpair()
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=theirs.fileno())
            theirs.close()
        else:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.seq = 0
        self.fds: list[int] = []  # fds the last answer carried

    def read(self, n: int) -> bytes:
        if not self.sock:
            assert self.p.stdout is not None
            return self.p.stdout.read(n)
        data = b""
        while len(data) < n:
            part, fds, _, _ = socket.recv_fds(self.sock, n - len(data), 4)
            assert part, "the testee closed its stdout"
            data += part
            self.fds += fds
        return data

    def call(self, op: int, body: bytes=b"") -> tuple[int, bytes]:
        self.seq += 1
        self.fds = []
        payload = struct.pack("<II", op, self.seq) + body
        assert self.p.stdin is not None
        self.p.stdin.write(struct.pack("<I", len(payload)) + payload)
        self.p.stdin.flush()
        (n,) = struct.unpack("<I", self.read(4))
        resp = self.read(n)
        rop, rseq, ret = struct.unpack("<IIq", resp[:16])
        assert (rop, rseq) == (op, self.seq)
        return ret, resp[16:]

    def close(self) -> int:
        assert self.p.stdin is not None
        self.p.stdin.close()
        if self.sock:
            self.sock.close()
        return self.p.wait(timeout=10)


def counting_attr() -> bytes:
    # type SOFTWARE, size 136, config TASK_CLOCK, read_format 0,
    # flags disabled | exclude_kernel | exclude_hv
    a = bytearray(136)
    struct.pack_into("<IIQ", a, 0, 1, 136, 1)
    struct.pack_into("<Q", a, 40, (1 << 0) | (1 << 5) | (1 << 6))
    return bytes(a)


def test_frames_as_specified() -> None:
    t = Session()
    try:
        ret, body = t.call(1, struct.pack("<I", 1))  # HELLO v1
        assert ret == 1
        lines = body.decode().splitlines()
        assert lines[0] == "syscall" and "counting" in lines[1:] and "mmap" not in lines
        ret, body = t.call(2)  # HOST_FACTS
        assert ret == 0 and len(body) >= 36
        page_size, ncpus = struct.unpack("<qi", body[:12])
        assert page_size == os.sysconf("SC_PAGE_SIZE") and ncpus >= 1
        assert body[36:].decode() == os.uname().release
        assert t.call(3, struct.pack("<II", os.getpid(), os.getpid()))[0] == 0  # SETUP
        attr = counting_attr()
        ret, body = t.call(5, struct.pack("<iiiIQ", 0, -1, -1, 0, 0) + attr)  # OPEN
        assert ret >= 0 and struct.unpack("<I", body) == (136,)
        fd = ret
        ret, body = t.call(7, struct.pack("<iIQ", fd, 0, 64))  # READ
        assert ret == 8 and body == bytes(8)  # disabled, never enabled: 0
        ret, _ = t.call(7, struct.pack("<iIQ", fd, 0, 4))
        assert ret == -28  # ENOSPC
        ret, _ = t.call(7, struct.pack("<iIQ", fd, 2, 64))  # a bad buffer
        assert ret == -14  # EFAULT
        ret, body = t.call(9, struct.pack("<iIQQ", fd, 0, 0x80082407, 0) + bytes(8))  # IOC_ID
        assert ret == 0 and struct.unpack("<Q", body)[0] > 0
        ret, _ = t.call(9, struct.pack("<iIQQ", fd, 1, 0x80082407, 0))  # IOC_ID(NULL)
        assert ret == -14
        big = bytearray(attr)
        struct.pack_into("<I", big, 4, 4097)  # size over a page: E2BIG, 136 written back
        ret, body = t.call(5, struct.pack("<iiiIQ", 0, -1, -1, 0, 0) + bytes(big[:8]))
        assert ret == -7 and struct.unpack("<I", body) == (136,)
        assert t.call(99)[0] == -38  # an unknown operation: ENOSYS, and the stream goes on
        assert t.call(6, struct.pack("<i", fd))[0] == 0  # CLOSE
        assert t.call(4)[0] == 0  # TEARDOWN
    finally:
        assert t.close() == 0  # EOF on stdin ends the testee cleanly


def sampling_attr() -> bytes:
    # TASK_CLOCK sampled every 100 us of CPU time, IP only
    a = bytearray(counting_attr())
    struct.pack_into("<QQ", a, 16, 100000, 1)
    return bytes(a)


def argv_of(which: str) -> list[str]:
    return [locate(TESTEE)] if which == "c" else python_testee().split()


@pytest.mark.parametrize("which", ["c", "python"])
def test_v2_frames_share_the_ring(which: str) -> None:
    """HELLO 2 over a socket; MMAP answers with the event fd (SCM_RIGHTS), whose mapping
    here is the testee's ring: the kernel's data_head moves in it; MUNMAP and refusals."""
    page = os.sysconf("SC_PAGE_SIZE")
    t = Session(argv_of(which), socket_out=True)
    try:
        ret, body = t.call(1, struct.pack("<I", 2))  # HELLO v2
        assert ret == 2, body
        for f in RING:
            assert f in body.decode().splitlines()[1:]
        assert t.call(3, struct.pack("<II", os.getpid(), os.getpid()))[0] == 0  # SETUP
        ret, _ = t.call(5, struct.pack("<iiiIQ", 0, -1, -1, 0, 0) + sampling_attr())
        assert ret >= 0
        fd = ret
        # A length perf_mmap refuses (1 + 3 pages): the error, and no fd with it.
        ret, _ = t.call(11, struct.pack("<iiiIQQ", fd, 3, 1, 0, 4 * page, 0))
        assert ret == -22 and t.fds == []
        ret, body = t.call(11, struct.pack("<iiiIQQ", fd, 3, 1, 0, 3 * page, 0))
        assert ret == 0 and len(body) == 16 and len(t.fds) == 1, (ret, body, t.fds)
        addr, offset = struct.unpack("<QQ", body)
        assert addr != 0 and offset == 0
        got = t.fds[0]
        assert os.readlink("/proc/self/fd/%d" % got) == "anon_inode:[perf_event]"
        ring = mmap.mmap(got, 3 * page, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        os.close(got)
        try:
            head, tail, data_offset, data_size = struct.unpack_from("<QQQQ", ring, 1024)
            assert (head, data_offset, data_size) == (0, page, 2 * page)
            # ENABLE in the testee, then burn CPU here: the event is on this thread, and the
            # samples the kernel writes land in the ring both processes map.
            assert t.call(9, struct.pack("<iIQQ", fd, 3, 0x2400, 0))[0] == 0
            end = time.monotonic() + 0.2
            while time.monotonic() < end and struct.unpack_from("<Q", ring, 1024)[0] == 0:
                sum(range(1000))
            assert struct.unpack_from("<Q", ring, 1024)[0] > 0, "no sample reached the ring"
            assert t.call(12, struct.pack("<QQ", addr, 3 * page))[0] == 0  # MUNMAP
            # Unmapped over there: the address is no longer one it made for us.
            assert t.call(12, struct.pack("<QQ", addr, 3 * page))[0] == -22
        finally:
            ring.close()
        assert t.call(6, struct.pack("<i", fd))[0] == 0  # CLOSE
        assert t.call(4)[0] == 0  # TEARDOWN
    finally:
        assert t.close() == 0


@pytest.mark.parametrize("which", ["c", "python"])
def test_over_a_pipe_a_testee_answers_version_2_with_1(which: str) -> None:
    """Fds need a socket: offered 2 on a pipe, the testee settles for 1, which has no
    MMAP operation."""
    t = Session(argv_of(which))
    try:
        ret, body = t.call(1, struct.pack("<I", 2))
        assert ret == 1
        assert "mmap" not in body.decode().splitlines()
        assert t.call(11, struct.pack("<iiiIQQ", 3, 3, 1, 0, 3 * 4096, 0))[0] == -38
    finally:
        assert t.close() == 0


def test_the_testee_serves_a_plugin_too(tmp_path: pathlib.Path) -> None:
    so = locate(SNAPSHOT)
    r, _, res = run_pipe(tmp_path, "--plugin " + so, ["--isolate"])
    assert res["impl"] == "pipe-starnix_snapshot"
    # The snapshot's stub count reaches the runner unchanged through the pipe.
    stub = next(x for x in res["results"] if x["id"] == "Required.Read.Count.TaskClockFollowsCpu")
    assert stub["status"] == "FAIL" and "counted while the thread ran" in stub["message"]
    # A plugin's mapping has no fd the testee can send: it claims no ring feature.
    for f in RING:
        assert f not in res["features"]
    assert all(x["raw_status"] == "UNSUPPORTED" for x in res["results"]
               if "mmap" in x["features"])


# ---- the harness driver, end to end ------------------------------------------------------

def test_the_driver_runs_pipe_and_plugin_implementations(tmp_path: pathlib.Path) -> None:
    """`pecs_harness run --impl pipe:... --impl plugin:...`: each runs through its runner,
    the merged summary.json holds the verdicts the runners give directly, and each is
    gated by its expectations file."""
    import pecs_harness
    harness_dir = os.path.dirname(os.path.dirname(os.path.abspath(pecs_harness.__file__)))
    out = tmp_path / "out"
    c_cmd, py_cmd = locate(TESTEE), python_testee()
    argv = ["/usr/bin/python3", "-m", "pecs_harness", "run", "--quiet", "--out", str(out),
            "--runner", "pipe=" + locate(PIPE), "--runner", "plugin=" + locate(PLUGIN_RUNNER),
            "--impl", "runner:inproc=" + locate(SYSCALL),
            "--impl", "pipe:pipe-c=" + c_cmd, "--impl", "pipe:pipe-py=" + py_cmd,
            "--impl", "plugin:" + locate(SNAPSHOT)]
    r, _ = run(argv, {"PYTHONPATH": harness_dir})
    assert (out / "summary.json").exists(), r.stdout + r.stderr
    summary = json.loads((out / "summary.json").read_text())
    impls = {i["label"]: i for i in summary["implementations"]}
    assert set(impls) == {"inproc", "pipe-c", "pipe-py", "starnix_snapshot"}
    assert (impls["pipe-c"]["kind"], impls["starnix_snapshot"]["kind"]) == ("pipe", "plugin")
    assert r.returncode == (0 if all(i["ok"] for i in impls.values()) else 1), r.stderr

    def verdicts(label: str) -> dict[str, dict[str, Any]]:
        return {cid: dict(c["results"][label], features=c["features"])
                for cid, c in summary["cases"].items() if label in c["results"]}

    inproc = verdicts("inproc")
    assert len(inproc) >= 200
    for label, cmd in (("pipe-c", c_cmd), ("pipe-py", py_cmd)):
        assert sorted(impls[label]["features"]) == carried(impls["inproc"]["features"])
        env = {"PECS_TESTEE": cmd}
        assert_same_verdicts(
            inproc, verdicts(label),
            lambda ids: results_of([locate(SYSCALL)], tmp_path / "inproc-again.json", ids=ids)[1],
            lambda ids: results_of([locate(PIPE)], tmp_path / "again.json", env, ids)[1],
            label)
    # The plugin: the merged verdicts are the plugin runner's own, and its expectations
    # file (conformance/expectations/starnix_snapshot.txt) turns its known gaps into XFAIL.
    snap = verdicts("starnix_snapshot")
    _, direct = results_of([locate(PLUGIN_RUNNER), "--plugin", locate(SNAPSHOT)],
                           tmp_path / "plugin.json")
    assert set(snap) == set(direct)
    assert {i: snap[i]["raw_status"] for i in snap} == \
        {i: direct[i]["raw_status"] for i in direct}
    assert impls["starnix_snapshot"]["ok"], impls["starnix_snapshot"]["problems"]
    assert impls["starnix_snapshot"]["counts"]["xfail"] > 0
    stub = snap["Required.Read.Count.TaskClockFollowsCpu"]
    assert (stub["raw_status"], stub["status"]) == ("FAIL", "XFAIL")
    assert stub["expectation"] and "starnix_snapshot.txt" in stub["expectation"]["file"]
