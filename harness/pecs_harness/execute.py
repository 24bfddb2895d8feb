"""Running one implementation's runner and collecting its results file.

Every run uses --json and --isolate, so a case that crashes the implementation costs only
that case. The runner's stdout (one line per case) drives the progress lines.
"""
import os
import pty
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from . import results as results_mod
from .impls import Impl
from .statuses import STATUSES

UNPRIV = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
          "--inh-caps=-all", "--bounding-set=-all"]


class Progress:
    """Progress lines on the console: at most one every `every` seconds per run."""

    def __init__(self, stream: TextIO = sys.stdout, every: float = 5.0,
                 quiet: bool = False) -> None:
        self.stream = stream
        self.every = every
        self.quiet = quiet

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.stream, flush=True)


def list_cases(argv: list[str], env: dict[str, str], filter_: str | None = None,
               timeout: int = 600) -> list[str]:
    """Case ids the runner holds (after filter), from --list.

    Listing takes milliseconds, but on this kind of shared VM a process was seen to get no
    CPU for over 120 s while its neighbours' builds kept the cores busy: the limit is there
    to catch a runner that never answers, not a slow machine."""
    cmd = argv + ["--list"] + (["--filter", filter_] if filter_ else [])
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(_explain(cmd, p.returncode, p.stderr))
    return [line.split("\t", 1)[0] for line in p.stdout.splitlines() if line.strip()]


def _explain(cmd: list[str], rc: int, stderr: str | None) -> str:
    tail = "\n".join((stderr or "").strip().splitlines()[-5:])
    return "%s exited with %s%s" % (os.path.basename(cmd[0]), rc, (": " + tail) if tail else "")


def merged_env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    # A runner started from a Bazel test must not write into the test's own outputs.
    for k in ("XML_OUTPUT_FILE", "TEST_UNDECLARED_OUTPUTS_DIR", "TEST_SHARD_STATUS_FILE",
              "TESTBRIDGE_TEST_ONLY", "TEST_TOTAL_SHARDS", "TEST_SHARD_INDEX"):
        env.pop(k, None)
    env.update(extra)
    return env


def _unprivileged_copy(impl: Impl, workdir: str) -> tuple[list[str], str | None]:
    """setpriv's uid 65534 must be able to run the binary and read the expectations, which
    may sit under root-only directories: copy both into a directory it owns."""
    os.makedirs(workdir, exist_ok=True)
    # Owned by the unprivileged user, which writes its results file there; not world-writable.
    os.chown(workdir, 65534, 65534)
    os.chmod(workdir, 0o755)
    binary = os.path.join(workdir, os.path.basename(impl.argv[0]))
    shutil.copyfile(impl.argv[0], binary)
    os.chmod(binary, 0o755)
    exp = None
    if impl.expectations:
        exp = os.path.join(workdir, "expectations.txt")
        shutil.copyfile(impl.expectations, exp)
        os.chmod(exp, 0o644)
    return UNPRIV + [binary] + impl.argv[1:], exp


def _world_traversable_tmp(fallback: str | None) -> str | None:
    """uid 65534 must reach the copy: $TMPDIR and Bazel's test directories often sit under
    root-only parents, /tmp does not."""
    try:
        if os.stat("/tmp").st_mode & 0o1777 == 0o1777:
            return "/tmp"
    except OSError:
        pass
    return fallback


def run(impl: Impl, out_dir: str, progress: Progress, filter_: str | None = None,
        case_timeout: int = 60, run_timeout: int = 3600
        ) -> tuple[results_mod.ResultsData | None, str | None, list[str]]:
    """Runs impl's runner; returns (results dict or None, error or None, all case ids)."""
    env = merged_env(impl.env)
    json_path = os.path.join(out_dir, impl.label + ".json")
    if os.path.exists(json_path):
        os.unlink(json_path)
    argv, exp = impl.argv, impl.expectations
    workdir: str | None = None
    if impl.unprivileged:
        if os.geteuid() != 0:
            return None, "needs root to drop to uid 65534 (setpriv); run as root", []
        if not shutil.which("setpriv"):
            return None, "setpriv not found (Debian package util-linux)", []
        workdir = tempfile.mkdtemp(prefix="pecs-unpriv-", dir=_world_traversable_tmp(out_dir))
        argv, exp = _unprivileged_copy(impl, workdir)
    target_json = os.path.join(workdir, "results.json") if workdir else json_path
    try:
        ids = list_cases(argv, env, filter_)
        all_ids = ids if not filter_ else list_cases(argv, env)
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        _cleanup(workdir)
        return None, "cannot list the cases: %s" % e, []
    cmd = argv + ["--isolate", "--json", target_json, "--timeout", str(case_timeout)]
    if exp:
        cmd += ["--expectations", exp]
    if filter_:
        cmd += ["--filter", filter_]
    progress.say("  %s: %d case(s), %s" % (impl.label, len(ids), impl.source))
    rc, error = _stream(cmd, env, impl.label, len(ids), progress, run_timeout)
    data = None
    if rc in (0, 1):  # 1 is the runner's own gating: the harness gates again from the JSON
        try:
            data = results_mod.load(target_json)
            if workdir:
                shutil.copyfile(target_json, json_path)
        except results_mod.ResultsError as e:
            error = str(e)
    _cleanup(workdir)
    return data, error, all_ids


def _cleanup(workdir: str | None) -> None:
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)


def _lines(fd: int) -> Iterator[str]:
    """Lines from a pty master until the child side closes (Linux then reports EIO)."""
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b""
        if not chunk:
            break
        buf += chunk
        *complete, buf = buf.split(b"\n")
        for line in complete:
            yield line.decode("utf-8", "replace").rstrip("\r")
    os.close(fd)
    if buf:
        yield buf.decode("utf-8", "replace")


def _stream(cmd: list[str], env: dict[str, str], label: str, total: int, progress: Progress,
            run_timeout: int) -> tuple[int | None, str | None]:
    start = last = time.monotonic()
    done = 0
    stderr = tempfile.TemporaryFile(mode="w+")
    # stdout on a terminal makes the runner's stdio line-buffered, static binary or not,
    # so progress arrives as the cases finish rather than in 4 KiB bursts.
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=slave,
                             stderr=stderr)
    except OSError as e:
        os.close(master)
        os.close(slave)
        return None, "cannot start %s: %s" % (cmd[0], e.strerror)
    os.close(slave)
    # A watchdog, not a check in the loop: a runner that hangs prints nothing to wake us.
    timed_out: list[int] = []

    def stop() -> None:
        timed_out.append(1)
        p.kill()

    watchdog = threading.Timer(run_timeout, stop)
    watchdog.daemon = True
    watchdog.start()
    for line in _lines(master):
        word = line.split(" ", 1)[0]
        if word in STATUSES:
            done += 1
            now = time.monotonic()
            if now - last >= progress.every:
                last = now
                progress.say("  %s: %d/%d cases (%.0fs)" % (label, done, total, now - start))
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
    watchdog.cancel()
    stderr.seek(0)
    err = stderr.read()
    stderr.close()
    if timed_out:
        return None, "the run took longer than %ds and was stopped" % run_timeout
    if rc in (0, 1):
        return rc, None
    return rc, _explain(cmd, rc, err)
