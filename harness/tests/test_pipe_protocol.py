"""The pipe testee protocol (docs/testee-protocol.md): the C testee in examples/pipe_testee
proxies to this kernel, and running the suite through it must give the in-process runner's
verdicts; a testee that dies, hangs or garbles a response gives clear verdicts in bounded
time. The frames are also spoken here directly, from the specification, without the C
adapter."""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import tempfile
import time

import pytest

from test_plugin_loader import locate

PIPE = "conformance/adapters/pipe/pecs-pipe"
TESTEE = "examples/pipe_testee/pipe_testee"
SYSCALL = "conformance/pecs-syscall"


def run(argv, env_extra=None, timeout=600):
    env = dict(os.environ)
    env.update(env_extra or {})
    start = time.monotonic()
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=env, timeout=timeout)
    return r, time.monotonic() - start


def run_pipe(tmp_path, testee_args="", extra=(), env=None, name="pipe.json"):
    out = tmp_path / name
    e = {"PECS_TESTEE": "%s %s" % (locate(TESTEE), testee_args)}
    e.update(env or {})
    r, secs = run([locate(PIPE), "--quiet", "--json", str(out)] + list(extra), e)
    res = json.loads(out.read_text()) if out.exists() else None
    return r, secs, res


# ---- same verdicts ---------------------------------------------------------------------

def results_of(argv, out, env=None, ids=None):
    """Runs a runner (argv without output options) and returns its results by case id."""
    extra = ["--filter", ",".join(ids)] if ids else []
    r, _ = run(argv + ["--isolate", "--quiet", "--json", str(out)] + extra, env)
    assert os.path.exists(str(out)), r.stderr
    with open(str(out)) as f:
        doc = json.load(f)
    return doc, {x["id"]: x for x in doc["results"]}


def assert_same_verdicts(a, b, again_a, again_b, label):
    """Every case both ran has one verdict. A case that differs is run once more, alone, by
    both runners: a timing-sensitive case on a loaded machine may differ once by chance; a
    real difference in the protocol differs every time."""
    assert set(a) == set(b), "both runners link the same cases"
    ran = [i for i in a if "UNSUPPORTED" not in (a[i]["raw_status"], b[i]["raw_status"])]
    assert len(ran) >= 50, "too few cases compared: %d" % len(ran)
    differ = [i for i in ran if a[i]["raw_status"] != b[i]["raw_status"]]
    if differ:
        a, b = again_a(differ), again_b(differ)
        differ = [i for i in differ if a[i]["raw_status"] != b[i]["raw_status"]]
    assert not differ, "\n".join(
        "%s: in-process %s, %s %s (%s)" % (i, a[i]["raw_status"], label, b[i]["raw_status"],
                                          b[i]["message"]) for i in differ)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    d = tmp_path_factory.mktemp("both")
    inproc, _ = results_of([locate(SYSCALL)], d / "inproc.json")
    piped, _ = results_of([locate(PIPE)], d / "pipe.json", {"PECS_TESTEE": locate(TESTEE)})
    return inproc, piped, d


def by_id(doc):
    return {x["id"]: x for x in doc["results"]}


def test_the_pipe_gives_the_in_process_verdicts(both):
    inproc, piped, d = both
    assert_same_verdicts(
        by_id(inproc), by_id(piped),
        lambda ids: results_of([locate(SYSCALL)], d / "inproc-again.json", ids=ids)[1],
        lambda ids: results_of([locate(PIPE)], d / "pipe-again.json",
                               {"PECS_TESTEE": locate(TESTEE)}, ids)[1],
        "pipe")


def test_a_python_testee_gives_the_in_process_verdicts(both):
    """The same protocol from a testee not written in C."""
    here = os.path.dirname(os.path.abspath(__file__))
    script = next((p for p in (os.path.join(os.getcwd(), "examples/pipe_testee/pipe_testee.py"),
                               os.path.join(here, "../../examples/pipe_testee/pipe_testee.py"))
                   if os.path.exists(p)), None)
    assert script, "examples/pipe_testee/pipe_testee.py not found"
    inproc, _, d = both
    env = {"PECS_TESTEE": "/usr/bin/python3 " + os.path.abspath(script)}
    piped, b = results_of([locate(PIPE)], d / "py.json", env)
    assert piped["impl"] == "pipe-python-kernel"
    assert_same_verdicts(
        by_id(inproc), b,
        lambda ids: results_of([locate(SYSCALL)], d / "inproc-again.json", ids=ids)[1],
        lambda ids: results_of([locate(PIPE)], d / "py-again.json", env, ids)[1],
        "python")


def test_the_pipe_claims_what_the_testee_says_minus_memory(both):
    inproc, piped, _ = both
    assert piped["impl"] == "pipe-syscall"
    assert "counting" in piped["features"]
    for f in ("mmap", "mmap.overwrite", "sampling"):
        assert f not in piped["features"]
    # A case needing an unclaimed feature is UNSUPPORTED, never FAIL.
    for r in piped["results"]:
        if "mmap" in r["features"]:
            assert r["raw_status"] == "UNSUPPORTED", r
    # Host facts travel too: the testee's kernel and privilege.
    assert piped["host"]["kernel_release"] == inproc["host"]["kernel_release"]
    assert piped["host"]["privileged"] == inproc["host"]["privileged"]
    assert piped["host"]["attr_size"] == inproc["host"]["attr_size"]


def test_unprivileged_the_pipe_still_gives_the_in_process_verdicts(request):
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
    inproc = drop + [str(d / "pecs-syscall")]
    pipe = drop + [str(d / "pecs-pipe")]
    env = {"PECS_TESTEE": str(d / "pipe_testee")}
    _, a = results_of(inproc, d / "inproc.json")
    piped, b = results_of(pipe, d / "pipe.json", env)
    assert piped["host"]["privileged"] == 0
    assert_same_verdicts(a, b,
                         lambda ids: results_of(inproc, d / "inproc-again.json", ids=ids)[1],
                         lambda ids: results_of(pipe, d / "pipe-again.json", env, ids)[1],
                         "pipe")


# ---- a broken testee ---------------------------------------------------------------------

FILTER = "Required.Read.Disable*,Required.Read.Disabled*,Required.Ioctl.Id.*"


def test_a_testee_that_dies_crashes_the_case_and_the_run_goes_on(tmp_path):
    r, secs, res = run_pipe(tmp_path, "--die-at read", ["--isolate", "--filter", FILTER])
    assert r.returncode == 1, r.stderr
    assert "exited with status 3 during READ" in r.stderr
    reads = [x for x in res["results"] if x["id"].startswith("Required.Read.")]
    assert reads and all(x["status"] == "CRASH" for x in reads), reads
    assert all("Broken pipe" in x["message"] for x in reads)
    # Cases that never read are untouched by the dying testee.
    assert any(x["status"] == "PASS" for x in res["results"]), res["counts"]
    assert secs < 60


def test_a_testee_that_hangs_is_killed_at_the_deadline(tmp_path):
    r, secs, res = run_pipe(tmp_path, "--hang-at read", ["--isolate", "--filter", FILTER],
                            env={"PECS_PIPE_TIMEOUT_MS": "300"})
    assert r.returncode == 1, r.stderr
    assert "did not answer within 300 ms (killed) during READ" in r.stderr
    reads = [x for x in res["results"] if x["id"].startswith("Required.Read.")]
    assert reads and all(x["status"] == "CRASH" for x in reads)
    assert all("Alarm clock" in x["message"] for x in reads)
    assert secs < 30  # a few deadlines, never a hang


def test_without_isolation_a_hang_is_an_error_return_and_the_next_case_recovers(tmp_path):
    r, secs, res = run_pipe(tmp_path, "--hang-at read", ["--filter", FILTER],
                            env={"PECS_PIPE_TIMEOUT_MS": "300"})
    assert r.returncode == 1, r.stderr
    reads = [x for x in res["results"] if x["id"].startswith("Required.Read.")]
    assert reads and all(x["status"] == "FAIL" for x in reads)
    assert all("-110" in x["message"] or "ETIMEDOUT" in x["message"] for x in reads), reads
    # Each case gets a fresh testee, so the cases that do not read still pass.
    assert any(x["status"] == "PASS" for x in res["results"])
    assert secs < 30


def test_a_garbled_response_is_named(tmp_path):
    r, _, res = run_pipe(tmp_path, "--garble-at ioctl", ["--isolate", "--filter", FILTER])
    assert r.returncode == 1
    assert "sent a malformed response (killed) during IOCTL" in r.stderr
    assert res["counts"]["crashed"] >= 1


def test_a_testee_that_cannot_greet_stops_the_run_with_status_2(tmp_path):
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
    """Speaks protocol v1 to the example testee, as a testee author's harness would."""

    def __init__(self, *args):
        self.p = subprocess.Popen([locate(TESTEE)] + list(args), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        self.seq = 0

    def call(self, op, body=b""):
        self.seq += 1
        payload = struct.pack("<II", op, self.seq) + body
        self.p.stdin.write(struct.pack("<I", len(payload)) + payload)
        self.p.stdin.flush()
        (n,) = struct.unpack("<I", self.p.stdout.read(4))
        resp = self.p.stdout.read(n)
        rop, rseq, ret = struct.unpack("<IIq", resp[:16])
        assert (rop, rseq) == (op, self.seq)
        return ret, resp[16:]

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=10)


def counting_attr():
    # type SOFTWARE, size 136, config TASK_CLOCK, read_format 0,
    # flags disabled | exclude_kernel | exclude_hv
    a = bytearray(136)
    struct.pack_into("<IIQ", a, 0, 1, 136, 1)
    struct.pack_into("<Q", a, 40, (1 << 0) | (1 << 5) | (1 << 6))
    return bytes(a)


def test_frames_as_specified():
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


def test_the_testee_serves_a_plugin_too(tmp_path):
    so = locate("examples/starnix_snapshot/libstarnix_snapshot.so")
    r, _, res = run_pipe(tmp_path, "--plugin " + so, ["--isolate"])
    assert res["impl"] == "pipe-starnix_snapshot"
    # The snapshot's stub count reaches the runner unchanged through the pipe.
    stub = next(x for x in res["results"] if x["id"] == "Required.Read.Count.TaskClockFollowsCpu")
    assert stub["status"] == "FAIL" and "counted for" in stub["message"]
