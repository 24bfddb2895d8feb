"""A Linux kernel image as an implementation: `--impl vm:[LABEL=]KERNEL`.

The kernel boots in qemu-system-x86_64 (KVM when /dev/kvm is usable, TCG emulation
otherwise) from an initramfs built here (vm_initramfs.py) that holds the static runner,
busybox and setpriv. The guest runs the suite as root (LABEL) and as uid 65534 with no
capabilities (LABEL-unprivileged), each pass with its sysctls set, and prints each results
file framed on the serial console (vm_guest.py). Every pass then is a run like any other:
gated by its expectations file, a column in the report. The host facts in the results are
the guest's: the runner reads them inside the guest.

Everything is bounded: the whole boot by --run-timeout, each case by --timeout. A guest
that panics, hangs or stops short gives each pass it did not finish an error naming what
happened, with the console's tail.
"""
import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from . import execute, vm_guest, vm_initramfs
from . import results as results_mod
from .impls import Impl, Locator, SpecError
from .statuses import STATUSES

QEMU = "qemu-system-x86_64"
# The first two passes at the paranoid level Linux ships (2). Debian's kernels boot at 3, a
# Debian patch that refuses every unprivileged open after the attr is checked: two more
# passes run there, where the unprivileged one skips each case that opens.
SYSCTLS = {"kernel.perf_event_paranoid": "2"}
PARANOID3 = {"kernel.perf_event_paranoid": "3"}
MEMORY_MB = 1024
# Under TCG a loaded host makes the guest's watchdog mark the TSC unstable: CLOCK_MONOTONIC
# then reads the HPET while the task and CPU clocks (sched_clock) still read the TSC, whose
# boot calibration is off by some percent, and the two disagree (a task clock counting more
# than the wall-clock time). One clocksource for both keeps them consistent.
# no_timer_check: on a loaded host the boot's check that the timer interrupt arrives
# through the IO-APIC can time out under emulation, and the kernel then panics ("IO-APIC +
# timer doesn't work!", seen at load 22); the check says nothing about perf.
TCG_APPEND = os.environ.get("PECS_VM_APPEND", "tsc=reliable clocksource=tsc no_timer_check")
# One host thread runs every vCPU in turn. With a thread per vCPU (qemu's default), on a
# loaded host a 6.12 guest died twice of an int3 Oops in the scheduler (finish_task_switch,
# __schedule) in its third pass: a vCPU ran the breakpoint text_poke_bp puts there while
# perf_sched_events' jump label is patched, after the patch was done (2 of 4 full boots
# of 6.12.118, at load 3 to 20). With one thread no vCPU runs while another writes
# code, and the suite runs its cases one at a time: five boots at load 10 to 16 took 36
# to 75 s, against 54 to 74 s with a thread per vCPU at load 12 to 20, and none died.
TCG_ACCEL = "tcg,thread=single"
# Inside the guest the runner prints a line per case and bounds each case by --timeout,
# given again at most CASE_DEADLINE_PATIENCE times while the guest's CPUs are saturated
# (conformance/framework/case_deadline.h). A console quiet for longer than that, plus
# this margin, is a guest that no longer runs its cases: waiting for the whole run's
# limit would only hide where it stopped.
CASE_DEADLINE_PATIENCE = 3
QUIET_MARGIN_S = 60
# Asked of a quiet guest before it is stopped, as magic SysRq keys on its serial line: the
# console's loglevel raised (else the dumps print below it), the tasks blocked in the
# kernel, and a backtrace of each CPU. What a hang looks like from inside is then in the
# console; nothing else can say whether the kernel or the emulator stopped.
SYSRQ_KEYS = "9wl"


@dataclass(frozen=True)
class VmImpl(Impl):
    kernel: str = ""


def default_label(kernel: str) -> str:
    """linux-6.1 for vmlinuz-6.1.0-50-cloud-amd64; else the file's name."""
    m = re.match(r"(?:vmlinuz|bzImage)-(\d+\.\d+)", os.path.basename(kernel))
    return "linux-" + m.group(1) if m else os.path.basename(kernel)


def parse(arg: str, loc: Locator) -> VmImpl:
    label, eq, kernel = arg.partition("=")
    if not eq or "/" in label:
        label, kernel = default_label(arg), arg
    if not kernel:
        raise SpecError("vm: needs a kernel image: vm:[LABEL=]KERNEL")
    if not os.path.isfile(kernel):
        raise SpecError("vm: no such kernel image %s" % kernel)
    runner = loc.runner("syscall-static", "conformance/pecs-syscall-static")
    kernel = os.path.abspath(kernel)
    return VmImpl(label, "vm", [runner], source="kernel image " + kernel, kernel=kernel)


def accel() -> str:
    """kvm when this process may open /dev/kvm, tcg otherwise."""
    return "kvm" if os.access("/dev/kvm", os.R_OK | os.W_OK) else "tcg"


def quiet_limit(case_timeout: int) -> int:
    """Seconds the guest's console may stay quiet before the guest counts as hung."""
    return case_timeout * (1 + CASE_DEADLINE_PATIENCE) + QUIET_MARGIN_S


def qemu_argv(kernel: str, initrd: str, cpus: int, accel_: str,
              monitor: str | None = None) -> list[str]:
    return [QEMU, "-nodefaults", "-no-reboot", "-display", "none",
            "-monitor", "unix:%s,server=on,wait=off" % monitor if monitor else "none",
            "-serial", "stdio", "-accel", TCG_ACCEL if accel_ == "tcg" else accel_,
            "-cpu", "host" if accel_ == "kvm" else "max", "-smp", str(cpus),
            "-m", str(MEMORY_MB), "-kernel", kernel, "-initrd", initrd,
            # panic=-1: a panic reboots at once, and -no-reboot turns that into qemu's exit.
            # sysrq_always_enabled: Debian's default mask refuses the dumps SYSRQ_KEYS asks.
            "-append", "console=ttyS0 panic=-1 loglevel=3 rdinit=/init sysrq_always_enabled" +
            (" " + TCG_APPEND if accel_ == "tcg" and TCG_APPEND else "")]


def _tools() -> tuple[str, str, str] | str:
    """(qemu, busybox, setpriv), or what is missing."""
    found = {n: shutil.which(n) for n in (QEMU, "busybox", "setpriv")}
    bb = "/bin/busybox"
    if found["busybox"] is None and os.path.isfile(bb):
        found["busybox"] = bb
    missing = {QEMU: "qemu-system-x86", "busybox": "busybox-static", "setpriv": "util-linux"}
    lack = ["%s (Debian package %s)" % (n, missing[n]) for n, p in found.items() if p is None]
    if lack:
        return "not found: " + ", ".join(lack)
    return found[QEMU] or "", found["busybox"] or "", found["setpriv"] or ""


class Boot:
    """How a boot ended: qemu's exit status (None when it was stopped), the console text,
    and, when the guest was stopped for printing nothing, for how long."""

    def __init__(self, rc: int | None, text: str, quiet_s: int = 0) -> None:
        self.rc, self.text, self.quiet_s = rc, text, quiet_s


def _boot(argv: list[str], console: str, label: str, progress: execute.Progress,
          run_timeout: int, quiet_s: int, monitor: str | None = None) -> Boot:
    """Runs qemu with its console into the file, until it exits, the run's limit passes or
    the console stays quiet for quiet_s seconds."""
    start = last = heard = time.monotonic()
    size = 0
    quiet = 0
    with open(console, "wb") as out:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=out,
                             stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        rc: int | None = None
        while True:
            try:
                rc = p.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            grown = os.fstat(out.fileno()).st_size
            if grown != size:
                size, heard = grown, now
            if now - heard > quiet_s:
                quiet = int(now - heard)
                progress.say("  %s: the guest printed nothing for %d s: asking it for its "
                             "blocked tasks and CPU backtraces (SysRq), then stopping it" % (
                                 label, quiet))
                if monitor and p.stdin:
                    _sysrq(monitor, p.stdin, SYSRQ_KEYS, out)
                p.kill()
                p.wait()
                break
            if now - start > run_timeout:
                p.kill()
                p.wait()
                break
            if now - last >= progress.every:
                last = now
                progress.say("  %s: %d case(s) so far (%.0fs)" % (
                    label, _count_cases(console), now - start))
        if p.stdin:
            p.stdin.close()
    with open(console, "rb") as f:
        return Boot(rc, f.read().decode("utf-8", "replace"), quiet)


def _sysrq(monitor: str, serial: IO[bytes], keys: str, out: IO[bytes],
           settle_s: float = 20.0) -> None:
    """Each key as a magic SysRq: a break on the serial line from qemu's monitor, then the
    key on the line. Waits until the console has been still for a while (the dumps are
    long under emulation), at most settle_s seconds after the last key."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5.0)
            s.connect(monitor)
            for k in keys:
                s.sendall(b"chardev-send-break serial0\n")
                # The break and the key travel by different ways (monitor, stdin); the
                # kernel takes a key up to 5 s after a break.
                time.sleep(0.5)
                serial.write(k.encode())
                serial.flush()
                time.sleep(1.0)
    except OSError:
        return
    end = time.monotonic() + settle_s
    size = -1
    while time.monotonic() < end:
        grown = os.fstat(out.fileno()).st_size
        if grown == size:
            break
        size = grown
        time.sleep(3.0)


def _die_with_parent() -> None:
    """In qemu's child before exec: SIGKILL when the driver dies, so a driver stopped by a
    signal (a timeout around it, ^C) leaves no guest running."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _count_cases(console: str) -> int:
    try:
        with open(console, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return 0
    return sum(1 for l in text.splitlines() if l.split(" ", 1)[0] in STATUSES)


def kvm_refused(rc: int | None, text: str) -> bool:
    """qemu itself failed before the guest printed its first line: not the kernel's doing."""
    return rc not in (None, 0) and vm_guest.parse(text).release is None and \
        "Linux version" not in text


def _last_line(text: str) -> str:
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    return lines[-1][:200] if lines else "no output"


def verdict(con: vm_guest.Console, boot: Boot, run_timeout: int, wanted: str) -> str | None:
    """Why the pass labelled wanted has no results, or None when it has."""
    got = con.passes.get(wanted)
    if got is not None and got.data is not None:
        return None
    rc, text = boot.rc, boot.text
    if got is not None and got.error:
        why = got.error
    elif "Kernel panic" in text:
        why = "the guest kernel panicked"
    elif boot.quiet_s and got is not None and got.began:
        why = ("the guest printed nothing for %d s during this pass, well past the runner's "
               "own limit on a case, and was stopped (hung); the tasks blocked in its "
               "kernel and its CPUs' backtraces (SysRq w, l) are in the console file" %
               boot.quiet_s)
    elif boot.quiet_s:
        why = "the guest printed nothing for %d s before this pass began and was stopped " \
              "(hung)" % boot.quiet_s
    elif rc is None:
        why = "the guest did not power off within %d s (hung, or too slow: --run-timeout)" % (
            run_timeout)
    elif con.release is None:
        why = "the guest never reached its init (qemu exit status %d)" % rc
    elif got is None or not got.began:
        why = "the guest stopped before this pass began (qemu exit status %d)" % rc
    else:
        why = "the guest stopped during this pass (qemu exit status %d)" % rc
    return "%s; console tail:\n%s" % (why, vm_guest.tail(text))


def passes(label: str) -> list[vm_guest.Pass]:
    return [vm_guest.Pass(label, False, dict(SYSCTLS)),
            vm_guest.Pass(label + "-unprivileged", True, dict(SYSCTLS)),
            vm_guest.Pass(label + "-paranoid3", False, dict(PARANOID3)),
            vm_guest.Pass(label + "-unprivileged-paranoid3", True, dict(PARANOID3))]


def _source(impl: VmImpl, con: vm_guest.Console, p: vm_guest.Pass, acc: str) -> str:
    got = con.passes.get(p.label)
    sysctls = ", ".join("%s=%s" % (k.split(".")[-1], v) for k, v in
                        sorted(got.sysctls.items()) if v) if got else ""
    # /proc/version ends "... Debian 6.1.192-3 (2025-01-02)": the point release
    build = re.search(r"(\d+\.\d+\.\d+\S*) \(\d{4}-\d\d-\d\d\)\s*$", con.build or "")
    release = (con.release or "?") + (" (%s)" % build.group(1) if build else "")
    return "Linux %s in qemu (%s, %s cpus), %s; %s; %s" % (
        release, acc.upper(), con.cpus or "?",
        "as uid 65534, no capabilities" if p.unprivileged else "as root",
        sysctls or "sysctls not reported", impl.source)


# sockaddr_un.sun_path holds 108 bytes, the final NUL included.
SUN_PATH_MAX = 107


def monitor_socket(work: str) -> str | None:
    """Where qemu's monitor listens: in work, or, when a long TMPDIR makes that path too
    long for a UNIX socket, in a folder of its own under /tmp (the caller removes it).
    None when neither fits: qemu then runs with -monitor none, and a guest that stops
    printing is stopped without its SysRq dumps."""
    path = os.path.join(work, "monitor.sock")
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        return path
    try:
        short = tempfile.mkdtemp(prefix="pecs-mon-", dir="/tmp")
    except OSError:
        return None
    path = os.path.join(short, "monitor.sock")
    if len(os.fsencode(path)) <= SUN_PATH_MAX:
        return path
    shutil.rmtree(short, ignore_errors=True)
    return None

def run(impl: VmImpl, out: str, progress: execute.Progress, filter_: str | None,
        case_timeout: int, run_timeout: int,
        expectations_for: Callable[[str], str | None]) -> list[results_mod.Run]:
    """Boots impl's kernel once for both passes; one run per pass, not gated yet."""
    plan = passes(impl.label)
    tools = _tools()
    acc = accel()
    if isinstance(tools, str):
        errors: dict[str, str] = {p.label: "cannot boot the VM: " + tools for p in plan}
        return _runs(impl, plan, vm_guest.Console(), errors, acc, expectations_for)
    qemu, busybox, setpriv = tools
    work = tempfile.mkdtemp(prefix="pecs-vm-")
    monitor: str | None = None
    try:
        initrd = os.path.join(work, "initramfs.cpio.gz")
        cfg = vm_guest.config(plan, case_timeout, filter_)
        try:
            vm_initramfs.build(initrd, impl.argv[0], busybox, setpriv, vm_guest.INIT, cfg)
        except vm_initramfs.InitramfsError as e:
            errs = {p.label: "cannot build the initramfs: %s" % e for p in plan}
            return _runs(impl, plan, vm_guest.Console(), errs, acc, expectations_for)
        console = os.path.join(out, impl.label + ".console.log")
        cpus = min(os.cpu_count() or 1, 4)
        progress.say("  %s: booting %s in qemu (%s), passes %s" % (
            impl.label, impl.kernel, acc.upper(), ", ".join(p.label for p in plan)))
        start = time.monotonic()
        monitor = monitor_socket(work)
        quiet_s = quiet_limit(case_timeout)
        argv = qemu_argv(impl.kernel, initrd, cpus, acc, monitor)
        argv[0] = qemu
        boot = _boot(argv, console, impl.label, progress, run_timeout, quiet_s, monitor)
        if acc == "kvm" and kvm_refused(boot.rc, boot.text):
            # /dev/kvm opens, yet KVM cannot run this guest: a nested hypervisor refusing
            # an MSR that -cpu host makes qemu set (seen here: "failed to set MSR 0x10a",
            # qemu aborting before the guest's first line). The kernel under test is the
            # same under emulation, only slower.
            os.replace(console, console[:-len(".console.log")] + ".kvm.console.log")
            progress.say("  %s: qemu could not start the guest under KVM (%s): booting it "
                         "again under TCG" % (impl.label, _last_line(boot.text)))
            acc = "tcg"
            argv = qemu_argv(impl.kernel, initrd, cpus, acc, monitor)
            argv[0] = qemu
            boot = _boot(argv, console, impl.label, progress, run_timeout, quiet_s, monitor)
        progress.say("  %s: guest finished in %.0f s of host time (console: %s)" % (
            impl.label, time.monotonic() - start, console))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if monitor and not monitor.startswith(work + os.sep):
            shutil.rmtree(os.path.dirname(monitor), ignore_errors=True)
    con = vm_guest.parse(boot.text)
    errors = {}
    for p in plan:
        why = verdict(con, boot, run_timeout, p.label)
        if why:
            errors[p.label] = why
    return _runs(impl, plan, con, errors, acc, expectations_for, out)


def _runs(impl: VmImpl, plan: list[vm_guest.Pass], con: vm_guest.Console,
          errors: dict[str, str], acc: str, expectations_for: Callable[[str], str | None],
          out: str | None = None) -> list[results_mod.Run]:
    runs = []
    for p in plan:
        got = con.passes.get(p.label)
        data = got.data if got and p.label not in errors else None
        if data is not None:
            try:
                results_mod.check(data, "%s (from the guest)" % p.label)
            except results_mod.ResultsError as e:
                data, errors[p.label] = None, str(e)
        if data is not None and out:
            _write_json(os.path.join(out, p.label + ".json"), data)
        # LABEL-unprivileged (and each -paranoid3 pass) takes its own file when there is
        # one, else LABEL's, whose [unprivileged] and [paranoid>=3] conditions select its
        # lines (as syscall-unprivileged does).
        exp = expectations_for(p.label)
        if exp is None:
            exp = expectations_for(impl.label)
        run = results_mod.Run(p.label, "vm", _source(impl, con, p, acc), data,
                              errors.get(p.label), want_expectations=exp)
        runs.append(run)
    return runs


def _write_json(path: str, data: results_mod.ResultsData) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
