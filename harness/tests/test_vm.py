"""The VM runner's host side without booting anything: the initramfs it writes, the guest
configuration, the console frames it decodes and the verdict when a guest goes wrong.
The boot itself is `--impl vm:...` (docs/implementing.md), too slow for a test here."""
import base64
import gzip
import hashlib
import json
import os
import pathlib
import stat
import subprocess
import sys
import time
from typing import Any

import pytest

from pecs_harness import vm, vm_guest, vm_initramfs
from pecs_harness.impls import Locator, SpecError

RESULTS = {"format": "pecs-results-1", "impl": "syscall", "features": [], "host": {
    "kernel_release": "6.1.0-50-cloud-amd64", "privileged": True, "paranoid": 2},
    "results": [{"id": "Required.X", "status": "PASS", "raw_status": "PASS"}],
    "counts": {"passed": 1}}


def _frame(label: str, data: bytes, rc: int = 0, noise: str = "") -> list[str]:
    """The lines the guest's init prints for one pass, as busybox's base64 wraps them."""
    b64 = base64.b64encode(gzip.compress(data)).decode()
    lines = ["@@PECS pass %s begin" % label,
             "@@PECS sysctl %s kernel.perf_event_paranoid=2" % label,
             "PASS        Required.X (1.0 ms)",
             "@@PECS result %s rc=%d" % (label, rc)]
    chunks = ["@@B " + b64[i:i + 76] for i in range(0, len(b64), 76)]
    if noise:  # a kernel message in the middle of the frame
        chunks.insert(len(chunks) // 2, noise)
    lines += chunks
    lines.append("@@PECS end %s sha256=%s" % (label, hashlib.sha256(data).hexdigest()))
    return lines


def _console(*frames: list[str], done: bool = True) -> str:
    lines = ["[    0.000000] Linux version 6.1.0", "@@PECS guest 6.1.0-50-cloud-amd64 cpus=2"]
    for f in frames:
        lines += f
    if done:
        lines += ["@@PECS done", "[   10.6] reboot: Power down"]
    return "\r\n".join(lines) + "\r\n"


def test_frames_decode_despite_kernel_messages_inside() -> None:
    big = dict(RESULTS, results=[{"id": "Required.X%d" % i, "status": "PASS",
                                  "raw_status": "PASS"} for i in range(300)])
    data = json.dumps(big).encode()
    text = _console(_frame("l", data, 1, noise="[    5.1] random: crng init done"),
                    _frame("l-unprivileged", data))
    con = vm_guest.parse(text)
    assert con.release == "6.1.0-50-cloud-amd64" and con.cpus == 2 and con.done
    assert con.passes["l"].rc == 1
    assert con.passes["l"].sysctls == {"kernel.perf_event_paranoid": "2"}
    assert con.passes["l"].data == big and con.passes["l-unprivileged"].data == big
    for label in ("l", "l-unprivileged"):
        assert vm.verdict(con, vm.Boot(0, text), 60, label) is None


def test_frames_with_the_results_json() -> None:
    text = _console(_frame("l", json.dumps(RESULTS).encode()))
    con = vm_guest.parse(text)
    assert con.passes["l"].data == RESULTS
    assert con.passes["l"].error is None


def test_a_lost_line_is_caught_by_the_checksum_or_the_decoder() -> None:
    lines = _frame("l", json.dumps(RESULTS).encode() * 50)
    data_lines = [i for i, l in enumerate(lines) if l.startswith("@@B ")]
    assert len(data_lines) > 3
    del lines[data_lines[1]]
    con = vm_guest.parse(_console(lines))
    assert con.passes["l"].data is None
    assert "decode" in (con.passes["l"].error or "") or "checksum" in (con.passes["l"].error or "")


def test_a_garbled_byte_fails_the_checksum() -> None:
    raw = json.dumps(RESULTS).encode()
    # Same length, valid base64 and gzip, other contents: only the checksum can tell.
    other = raw.replace(b"PASS", b"FAIL")
    good = _frame("l", other)
    lines = [l for l in good if not l.startswith("@@PECS end")] + [
        "@@PECS end l sha256=%s" % hashlib.sha256(raw).hexdigest()]
    con = vm_guest.parse(_console(lines))
    assert con.passes["l"].data is None and "checksum" in (con.passes["l"].error or "")


def test_no_results_file_names_the_exit_status() -> None:
    lines = ["@@PECS pass l begin", "@@PECS result l rc=2", "@@PECS end l none"]
    text = _console(lines)
    why = vm.verdict(vm_guest.parse(text), vm.Boot(0, text), 60, "l")
    assert why is not None and why.startswith("the runner wrote no results file (exit status 2)")


def test_verdicts_when_the_guest_goes_wrong() -> None:
    panic = _console(["@@PECS pass l begin", "Kernel panic - not syncing: oops"], done=False)
    why = vm.verdict(vm_guest.parse(panic), vm.Boot(0, panic), 60, "l")
    assert why is not None and why.startswith("the guest kernel panicked")
    assert "Kernel panic - not syncing: oops" in why  # the console's tail comes along
    hung = _console(["@@PECS pass l begin"], done=False)
    why = vm.verdict(vm_guest.parse(hung), vm.Boot(None, hung), 60, "l")
    assert why is not None and "did not power off within 60 s" in why
    assert "stopped during this pass" in (
        vm.verdict(vm_guest.parse(hung), vm.Boot(0, hung), 60, "l") or "")
    early = "[    0.5] VFS: Unable to mount root fs\r\n"
    assert "never reached its init (qemu exit status 1)" in (
        vm.verdict(vm_guest.parse(early), vm.Boot(1, early), 60, "l") or "")
    why = vm.verdict(vm_guest.parse(hung), vm.Boot(None, hung, 301), 60, "l")
    assert why is not None and "printed nothing for 301 s during this pass" in why
    assert "before this pass began" in (
        vm.verdict(vm_guest.parse(hung), vm.Boot(None, hung, 301), 60, "m") or "")
    first_only = _console(_frame("l", json.dumps(RESULTS).encode()), done=False)
    assert vm.verdict(vm_guest.parse(first_only), vm.Boot(0, first_only), 60, "l") is None
    assert "before this pass began" in (
        vm.verdict(vm_guest.parse(first_only), vm.Boot(0, first_only), 60,
                   "l-unprivileged") or "")


def test_the_frame_data_is_left_out_of_the_tail() -> None:
    text = _console(_frame("l", json.dumps(RESULTS).encode() * 40))
    assert "@@B" not in vm_guest.tail(text, 1000)


def test_config_quotes_the_filter_and_lists_each_pass(tmp_path: pathlib.Path) -> None:
    cfg = vm_guest.config(vm.passes("linux-6.1"), 30, "Required.Read.* ; x")
    assert "PECS_FILTER='Required.Read.* ; x'" in cfg
    assert "\tpass linux-6.1 root kernel.perf_event_paranoid=2\n" in cfg
    assert "\tpass linux-6.1-unprivileged unprivileged kernel.perf_event_paranoid=2\n" in cfg
    assert "\tpass linux-6.1-paranoid3 root kernel.perf_event_paranoid=3\n" in cfg
    assert ("\tpass linux-6.1-unprivileged-paranoid3 unprivileged "
            "kernel.perf_event_paranoid=3\n") in cfg
    # The shell reads it back unchanged, and the function it defines lists the passes.
    path = tmp_path / "config"
    path.write_text(cfg + 'pass() { echo "$@"; }\nrun_passes\necho "[$PECS_FILTER]"\n')
    out = subprocess.run(["sh", str(path)], stdout=subprocess.PIPE,
                         universal_newlines=True, check=True).stdout
    assert out.splitlines() == [
        "linux-6.1 root kernel.perf_event_paranoid=2",
        "linux-6.1-unprivileged unprivileged kernel.perf_event_paranoid=2",
        "linux-6.1-paranoid3 root kernel.perf_event_paranoid=3",
        "linux-6.1-unprivileged-paranoid3 unprivileged kernel.perf_event_paranoid=3",
        "[Required.Read.* ; x]"]


def test_initramfs_members(tmp_path: pathlib.Path) -> None:
    runner = tmp_path / "runner"
    runner.write_bytes(b"\x7fELF runner")
    busybox = tmp_path / "busybox"
    busybox.write_bytes(b"bb" * 1001)  # a size that is not a multiple of 4
    setpriv = tmp_path / "setpriv"
    setpriv.write_bytes(b"sp")  # not dynamic: ldd names no shared objects
    out = tmp_path / "initrd.gz"
    size = vm_initramfs.build(str(out), str(runner), str(busybox), str(setpriv),
                              vm_guest.INIT, "PECS_CASE_TIMEOUT=1\n")
    assert size == os.path.getsize(out)
    members = {e.name: e for e in vm_initramfs.read_newc(gzip.decompress(out.read_bytes()))}
    console = members["dev/console"]
    assert stat.S_ISCHR(console.mode) and console.rdev == (5, 1)
    assert members["init"].data.decode() == vm_guest.INIT
    assert members["init"].mode == stat.S_IFREG | 0o755
    assert members["pecs/runner"].data == b"\x7fELF runner"
    assert members["bin/busybox"].data == b"bb" * 1001
    assert members["pecs/setpriv"].data == b"sp"
    assert members["tmp"].mode == stat.S_IFDIR | 0o1777
    # Every member's directory comes before it: the kernel does not create parents.
    names = [e.name for e in vm_initramfs.read_newc(gzip.decompress(out.read_bytes()))]
    for i, n in enumerate(names):
        if "/" in n:
            assert n.rsplit("/", 1)[0] in names[:i], n


def test_initramfs_carries_what_a_dynamic_setpriv_loads(tmp_path: pathlib.Path) -> None:
    libs = vm_initramfs.shared_objects("/bin/sh")
    if not libs:
        pytest.skip("/bin/sh is not dynamic here")
    assert any("libc.so" in l for l in libs)
    assert any("ld-linux" in l for l in libs)


def test_newc_refuses_garbage() -> None:
    with pytest.raises(vm_initramfs.InitramfsError):
        list(vm_initramfs.read_newc(b"not a cpio archive at all"))


def test_spec_and_label(tmp_path: pathlib.Path) -> None:
    kernel = tmp_path / "vmlinuz-6.1.0-50-cloud-amd64"
    kernel.write_bytes(b"k")
    binary = tmp_path / "bin" / "conformance" / "pecs-syscall-static"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"r")
    loc = Locator(str(tmp_path), str(tmp_path / "bin"))
    impl = vm.parse(str(kernel), loc)
    assert (impl.label, impl.kind, impl.kernel) == ("linux-6.1", "vm", str(kernel))
    assert impl.argv == [str(binary)]
    assert vm.parse("old=" + str(kernel), loc).label == "old"
    with pytest.raises(SpecError):
        vm.parse(str(tmp_path / "missing"), loc)
    assert vm.default_label("/boot/bzImage") == "bzImage"
    # Debian names 6.12's images by release, 6.1's by ABI
    assert vm.default_label("/x/vmlinuz-6.12.118+deb12-cloud-amd64") == "linux-6.12"


def test_monitor_socket_fits_a_unix_socket(tmp_path: pathlib.Path) -> None:
    """A long TMPDIR (Bazel's sandbox gives one of ~170 bytes) would make qemu fail to
    bind the monitor: the socket moves to a folder of its own under /tmp."""
    import shutil
    import socket
    import tempfile
    short_dir = tempfile.mkdtemp(prefix="pv-", dir="/tmp")
    try:
        assert vm.monitor_socket(short_dir) == os.path.join(short_dir, "monitor.sock")
    finally:
        shutil.rmtree(short_dir)
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    moved = vm.monitor_socket(str(deep))
    assert moved is not None and moved.startswith("/tmp/pecs-mon-")
    assert len(os.fsencode(moved)) <= vm.SUN_PATH_MAX
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.bind(moved)  # what qemu does with it
    finally:
        shutil.rmtree(os.path.dirname(moved))


def test_qemu_argv_bounds_the_guest() -> None:
    argv = vm.qemu_argv("/k", "/i", 2, "tcg")
    append = argv[argv.index("-append") + 1]
    assert "panic=-1" in append.split() and "console=ttyS0" in append.split()
    # one host thread for every vCPU: see vm.TCG_ACCEL
    assert "-no-reboot" in argv and argv[argv.index("-accel") + 1] == "tcg,thread=single"
    # One clocksource under emulation: see vm.TCG_APPEND
    assert set(vm.TCG_APPEND.split()) <= set(append.split())
    if "PECS_VM_APPEND" not in os.environ:
        assert {"clocksource=tsc", "no_timer_check"} <= set(append.split())
    kvm = vm.qemu_argv("/k", "/i", 2, "kvm")
    assert "clocksource=tsc" not in kvm[kvm.index("-append") + 1]
    assert kvm[kvm.index("-cpu") + 1] == "host"


# A stand-in for qemu: checks the initramfs it is given, then prints what the guest's
# init would for each pass in /pecs/config ("hang" in the kernel's name: prints and hangs).
FAKE_QEMU = r'''#!%(python)s
import base64, gzip, hashlib, json, shlex, sys, time
sys.path.insert(0, %(harness)r)
from pecs_harness import vm_initramfs
argv = sys.argv[1:]
kernel, initrd = argv[argv.index("-kernel") + 1], argv[argv.index("-initrd") + 1]
with open(initrd, "rb") as f:
    members = {e.name: e for e in vm_initramfs.read_newc(gzip.decompress(f.read()))}
assert members["pecs/runner"].data == b"static runner", "not the runner it was given"
if "kvmfail" in kernel and argv[argv.index("-accel") + 1] == "kvm":
    print("qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69")
    sys.stdout.flush()
    import os
    os.abort()
print("@@PECS guest 6.1.0-99-fake cpus=2\r")
if "quiet" in kernel:
    # Answers magic SysRq as a kernel would: a break on the monitor, then the key on the
    # serial line (stdin).
    import os, socket
    mon = argv[argv.index("-monitor") + 1]
    assert mon.startswith("unix:") and "sysrq_always_enabled" in argv[argv.index("-append") + 1]
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(mon[5:].split(",")[0])
    srv.listen(1)
    sys.stdout.flush()
    conn, _ = srv.accept()
    for _ in range(3):
        cmd = b""
        while not cmd.endswith(b"\n"):
            cmd += conn.recv(1)
        assert cmd == b"chardev-send-break serial0\n", cmd
        key = os.read(0, 1).decode()
        print("[  99.0] sysrq: key %%s\r" %% key)
        sys.stdout.flush()
    time.sleep(600)
if "hang" in kernel:
    sys.stdout.flush()
    open(kernel + ".printed", "w").close()  # the line is in the console now
    time.sleep(600)
for line in members["pecs/config"].data.decode().splitlines():
    words = shlex.split(line)
    if not words or words[0] != "pass":
        continue
    label, who = words[1], words[2]
    results = {"format": "pecs-results-1", "impl": "syscall", "features": [],
               "host": {"kernel_release": "6.1.0-99-fake", "privileged": who == "root",
                        "paranoid": 2},
               "results": [{"id": "Required.A", "status": "PASS", "raw_status": "PASS"},
                           {"id": "Required.B", "status": "FAIL", "raw_status": "FAIL",
                            "message": "old answer"}],
               "counts": {}}
    raw = json.dumps(results).encode()
    print("@@PECS pass %%s begin\r" %% label)
    print("@@PECS result %%s rc=1\r" %% label)
    print("@@B " + base64.b64encode(gzip.compress(raw)).decode() + "\r")
    print("@@PECS end %%s sha256=%%s\r" %% (label, hashlib.sha256(raw).hexdigest()))
print("@@PECS done\r")
'''


def _fake_setup(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> pathlib.Path:
    import shutil
    if not (shutil.which("busybox") or os.path.isfile("/bin/busybox")) or \
            not shutil.which("setpriv"):
        pytest.skip("busybox or setpriv missing on this host")
    harness = os.path.dirname(os.path.dirname(os.path.abspath(vm.__file__)))
    bindir = tmp_path / "path"
    bindir.mkdir()
    qemu = bindir / vm.QEMU
    qemu.write_text(FAKE_QEMU % {"python": sys.executable, "harness": harness})
    qemu.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ.get("PATH", "")))
    runner = tmp_path / "bin" / "conformance" / "pecs-syscall-static"
    runner.parent.mkdir(parents=True)
    runner.write_bytes(b"static runner")
    (tmp_path / "vmlinuz-6.1.0-99-fake").write_bytes(b"kernel")
    (tmp_path / "vmlinuz-6.1.0-99-hang").write_bytes(b"kernel")
    (tmp_path / "vmlinuz-6.1.0-99-kvmfail").write_bytes(b"kernel")
    (tmp_path / "vmlinuz-6.1.0-99-quiet").write_bytes(b"kernel")
    (tmp_path / "exp.txt").write_text("Required.B  # the old answer, a bug fixed later\n")
    return tmp_path


def _drive(tmp_path: pathlib.Path, kernel: str, *extra: str) -> tuple[int, dict[str, Any]]:
    from pecs_harness import cli
    out = tmp_path / "out"
    rc = cli.main(["run", "--quiet", "--root", str(tmp_path), "--bin", str(tmp_path / "bin"),
                   "--out", str(out), "--impl", "vm:" + str(tmp_path / kernel),
                   "--expectations", "linux-6.1=" + str(tmp_path / "exp.txt"), *extra])
    with open(out / "summary.json", encoding="utf-8") as f:
        return rc, json.load(f)


def test_driver_gates_each_pass_of_a_guest(tmp_path: pathlib.Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root = _fake_setup(tmp_path, monkeypatch)
    rc, summary = _drive(root, "vmlinuz-6.1.0-99-fake")
    impls = {i["label"]: i for i in summary["implementations"]}
    assert sorted(impls) == ["linux-6.1", "linux-6.1-paranoid3", "linux-6.1-unprivileged",
                             "linux-6.1-unprivileged-paranoid3"]
    for label, i in impls.items():
        assert i["kind"] == "vm" and i["error"] is None, i
        # Every other pass falls back to linux-6.1's file: B is a known failure.
        assert i["counts"]["passed"] == 1 and i["counts"]["xfail"] == 1, i
        assert i["host"]["kernel_release"] == "6.1.0-99-fake"
        assert (root / "out" / (label + ".json")).is_file()
    assert "as uid 65534" in impls["linux-6.1-unprivileged"]["source"]
    assert (root / "out" / "linux-6.1.console.log").is_file()
    assert rc == 0


def test_two_kernels_side_by_side_each_with_its_file(tmp_path: pathlib.Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """./pecs report's matrix: 6.1 and 6.12 booted one after the other in one run, eight
    passes, each kernel's four gated by its own file, all columns of one report."""
    from pecs_harness import cli
    root = _fake_setup(tmp_path, monkeypatch)
    (root / "vmlinuz-6.12.99+deb12-cloud-amd64").write_bytes(b"kernel")
    # 6.12 lists B; 6.1 lists nothing, so B fails there and gates the run.
    (root / "none.txt").write_text("# nothing known\n")
    out = root / "out"
    rc = cli.main(["run", "--quiet", "--root", str(root), "--bin", str(root / "bin"),
                   "--out", str(out),
                   "--impl", "vm:" + str(root / "vmlinuz-6.1.0-99-fake"),
                   "--impl", "vm:" + str(root / "vmlinuz-6.12.99+deb12-cloud-amd64"),
                   "--expectations", "linux-6.1=" + str(root / "none.txt"),
                   "--expectations", "linux-6.12=" + str(root / "exp.txt")])
    summary = json.loads((out / "summary.json").read_text())
    impls = {i["label"]: i for i in summary["implementations"]}
    passes = ["", "-unprivileged", "-paranoid3", "-unprivileged-paranoid3"]
    assert list(impls) == ["linux-6.1" + p for p in passes] + ["linux-6.12" + p for p in passes]
    for label, i in impls.items():
        want = (1, 0) if label.startswith("linux-6.12") else (0, 1)
        assert (i["counts"]["xfail"], i["counts"]["failed"]) == want, i
    assert rc == 1
    assert (out / "linux-6.1.console.log").is_file() and (out / "linux-6.12.console.log").is_file()
    md = (out / "report.md").read_text()
    header = next(l for l in md.splitlines() if l.startswith("| area |"))
    assert header.count("linux-6.1") == 8 and header.count("linux-6.12") == 4, header


def test_a_guest_kvm_cannot_start_boots_again_under_tcg(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _fake_setup(tmp_path, monkeypatch)
    monkeypatch.setattr(vm, "accel", lambda: "kvm")
    rc, summary = _drive(root, "vmlinuz-6.1.0-99-kvmfail")
    assert rc == 0
    for i in summary["implementations"]:
        assert i["error"] is None, i
        assert i["counts"]["passed"] == 1 and i["counts"]["xfail"] == 1, i
        assert "TCG" in i["source"], i["source"]
    assert "failed to set MSR" in (root / "out" / "linux-6.1.kvm.console.log").read_text()


def test_a_guest_that_fails_under_tcg_is_not_booted_again() -> None:
    assert vm.kvm_refused(-6, "qemu-system-x86_64: error: failed to set MSR 0x10a\n")
    assert not vm.kvm_refused(None, "")  # stopped at the run's limit
    assert not vm.kvm_refused(1, "[    0.000000] Linux version 6.1.0\nKernel panic\n")
    assert not vm.kvm_refused(0, "")


def test_driver_names_a_hung_guest(tmp_path: pathlib.Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    root = _fake_setup(tmp_path, monkeypatch)
    rc, summary = _drive(root, "vmlinuz-6.1.0-99-hang", "--run-timeout", "2")
    assert rc == 1
    for i in summary["implementations"]:
        assert i["label"].startswith("linux-6.1")
        assert "did not power off within 2 s" in (i["error"] or ""), i
        assert "console tail:" in i["error"]
        # The stand-in may not have printed within the 2 s on a loaded host; once it
        # has, its line is in the tail.
        if (root / "vmlinuz-6.1.0-99-hang.printed").exists():
            assert "@@PECS guest 6.1.0-99-fake" in i["error"]


def test_a_quiet_guest_is_asked_for_its_state_and_stopped(
        tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _fake_setup(tmp_path, monkeypatch)
    monkeypatch.setattr(vm, "QUIET_MARGIN_S", 0)
    assert vm.quiet_limit(1) == 1 + vm.CASE_DEADLINE_PATIENCE
    # --timeout 1: quiet for 4 s is a hang, long before the run's limit.
    rc, summary = _drive(root, "vmlinuz-6.1.0-99-quiet", "--timeout", "1",
                         "--run-timeout", "300")
    assert rc == 1
    for i in summary["implementations"]:
        assert "printed nothing for" in (i["error"] or ""), i
    console = (root / "out" / "linux-6.1.console.log").read_text()
    assert "sysrq: key 9" in console and "sysrq: key w" in console and \
        "sysrq: key l" in console, console


def test_the_guest_dies_with_the_driver(tmp_path: pathlib.Path) -> None:
    """qemu is killed when the process that started it dies (PR_SET_PDEATHSIG)."""
    pidfile = tmp_path / "pid"
    # A parent that starts a long sleep the way vm._boot starts qemu, then dies.
    code = ("import subprocess, sys\nfrom pecs_harness import vm\n"
            "p = subprocess.Popen(['sleep', '600'], preexec_fn=vm._die_with_parent)\n"
            "open(sys.argv[1], 'w').write(str(p.pid))\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
        os.path.abspath(vm.__file__))))
    subprocess.run([sys.executable, "-c", code, str(pidfile)], env=env, check=True,
                   timeout=60)
    pid = int(pidfile.read_text())
    for _ in range(600):  # the kernel delivers the signal at the parent's exit
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with open("/proc/%d/stat" % pid) as f:
            if f.read().split(")")[-1].split()[0] == "Z":
                return  # killed, waiting for init to reap it
        time.sleep(0.1)
    os.kill(pid, 9)
    pytest.fail("the child outlived its parent")


def test_report_names_each_kind_of_difference() -> None:
    from pecs_harness import report_versions as rv
    bug = {"status": "XFAIL", "message": "56 bytes",
           "expectation": {"reason": "kernel bug in 6.1.176, fixed in 6.1.192"}}
    assert rv.kind(bug) == rv.FIXED_LATER
    assert rv.label(bug) == "XFAIL (kernel bug fixed later)"
    listed = {"status": "XFAIL", "message": "", "expectation": {"reason": "not built yet"}}
    assert rv.kind(listed) == rv.DIVERGENCE
    assert rv.kind({"status": "FAIL", "message": "x"}) == rv.DIVERGENCE
    assert rv.kind({"status": "XPASS", "message": "x"}) == rv.DIVERGENCE
    older = {"status": "ENV_SKIP", "message": "aux_action does not exist before Linux 6.12"}
    assert rv.kind(older) == rv.VERSION
    assert rv.kind({"status": "ENV_SKIP", "message": "needs CAP_PERFMON or root"}) is None
    assert rv.label({"status": "PASS", "message": ""}) == "PASS"
