"""Real clients, sampling: `perf record -e cpu-clock -g -- spin`, then `perf report
--stdio` and `perf script`, on the kernel and on each implementation under the interposer;
the same of `sh -c 'spin; spin'`, whose samples come from the forked processes; and
`perf record --call-graph dwarf` of spin built without frame pointers, whose callers
perf finds only by unwinding the sampled registers and user stack copy (REGS_USER,
STACK_USER) with the binaries' unwind tables.

The checks compare what a person reads, not exact percentages: the top symbol of
`perf report` is the same as the kernel's, it holds at least MIN_TOP_SHARE of the
samples on each side, and of the samples `perf script` shows in it, at least
MIN_CHAIN_SHARE carry the callchain through its callers (spin_hot <- spin_work <- main).
cpu-clock samples the program's own CPU time, so the shares do not depend on how busy
the machine is.
"""
import os
import subprocess
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from pecs_harness.clients import Check, impl_env

RECORD_SPIN_ARGS = ("300", "10")
HOT = "spin_hot"
CALLERS = ("spin_work", "main")
MIN_TOP_SHARE = 0.80
MIN_CHAIN_SHARE = 0.90
TOP_N = 3


@dataclass
class RecordRun:
    impl: str
    top: List[Tuple[float, str]] = field(default_factory=list)  # (percent, symbol)
    samples: int = 0          # samples perf script shows in HOT
    with_chain: int = 0       # of those, the ones whose chain goes through CALLERS
    error: str = ""


def parse_report(text: str) -> List[Tuple[float, str]]:
    """`perf report --stdio --no-children --sort sym -q` lines: '  95.16%  [.] spin_hot'."""
    top = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].endswith("%") and parts[1].startswith("["):
            try:
                top.append((float(parts[0][:-1]), " ".join(parts[2:])))
            except ValueError:
                continue
    return top


def parse_script(text: str) -> Tuple[int, int]:
    """Samples of `perf script -F ip,sym` (blank-line separated frames) whose first
    frame is HOT, and of those the ones whose next frames are CALLERS."""
    hot = chained = 0
    for block in text.split("\n\n"):
        syms = [ln.split(None, 1)[1].strip() for ln in block.splitlines()
                if len(ln.split(None, 1)) == 2]
        if not syms or syms[0] != HOT:
            continue
        hot += 1
        if tuple(syms[1:1 + len(CALLERS)]) == CALLERS:
            chained += 1
    return hot, chained


def _run(cmd: Sequence[str], env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), env=env, capture_output=True, text=True, timeout=600)


def record_workload(spin: str, shell: bool) -> List[str]:
    """spin, or a shell that runs it twice: the samples then come from the processes
    perf record's child forks, which its inherit follows."""
    one = [spin] + list(RECORD_SPIN_ARGS)
    return ["sh", "-c", "%s; %s" % (" ".join(one), " ".join(one))] if shell else one


def run_perf_record(perf: str, impl: str, lib: str, spin: str, work: str,
                    shell: bool = False, dwarf: bool = False) -> RecordRun:
    data = os.path.join(work, "record-%s%s%s.data" % (impl.replace("/", "_"),
                                                      "-sh" if shell else "",
                                                      "-dwarf" if dwarf else ""))
    run = RecordRun(impl=impl)
    graph = ["--call-graph", "dwarf"] if dwarf else ["-g"]
    try:
        p = _run([perf, "record", "-q", "-e", "cpu-clock"] + graph + ["-o", data, "--"]
                 + record_workload(spin, shell), impl_env(impl, lib))
        if p.returncode != 0:
            # One line: the report's table cells hold it.
            run.error = "perf record exited %d: %s" % (p.returncode,
                                                        " ".join(p.stderr.split())[-300:])
            return run
        # The readers run on the kernel: only the recording is the implementation's.
        r = _run([perf, "report", "-i", data, "--stdio", "--no-children", "--sort", "sym",
                  "-q"])
        s = _run([perf, "script", "-i", data, "-F", "ip,sym"])
    except (OSError, subprocess.TimeoutExpired) as e:
        run.error = str(e)
        return run
    run.top = parse_report(r.stdout)
    run.samples, run.with_chain = parse_script(s.stdout)
    if not run.top:
        run.error = "perf report shows no samples: %s" % (r.stderr.strip()[-300:] or
                                                          "empty report")
    return run


def show_top(run: RecordRun) -> str:
    if run.error:
        return "error"
    return ", ".join("%s %.1f%%" % (sym, pct) for pct, sym in run.top[:TOP_N])


def show_chain(run: RecordRun) -> str:
    if run.error:
        return "error"
    return "%d of %d %s samples" % (run.with_chain, run.samples, HOT)


def _top_ok(kernel: RecordRun, run: RecordRun) -> Tuple[str, str]:
    if run.error:
        return "fail", run.error
    if kernel.error or not kernel.top:
        return "fail", "the kernel's perf record failed: %s" % kernel.error
    ksym, sym, pct = kernel.top[0][1], run.top[0][1], run.top[0][0]
    if sym != ksym:
        return "fail", "top symbol %s, the kernel's is %s" % (sym, ksym)
    if pct < 100 * MIN_TOP_SHARE:
        return "fail", "%s holds %.1f%% (at least %d%%)" % (sym, pct, 100 * MIN_TOP_SHARE)
    return "pass", "same top symbol as the kernel, %.1f%% (at least %d%%)" % (
        pct, 100 * MIN_TOP_SHARE)


def _chain_ok(run: RecordRun) -> Tuple[str, str]:
    if run.error:
        return "fail", run.error
    if not run.samples:
        return "fail", "no sample in %s" % HOT
    share = run.with_chain / run.samples
    verdict = "pass" if share >= MIN_CHAIN_SHARE else "fail"
    return verdict, "%.0f%% through %s (at least %d%%)" % (
        100 * share, " <- ".join(CALLERS), 100 * MIN_CHAIN_SHARE)


def compare_record(kernel: RecordRun, runs: Sequence[RecordRun],
                   client: str = "perf record") -> List[Check]:
    top = Check(client, "perf report top", {"kernel": show_top(kernel)}, {}, {})
    chain = Check(client, "perf script chain", {"kernel": show_chain(kernel)}, {}, {})
    for run in runs:
        top.values[run.impl] = show_top(run)
        top.verdicts[run.impl], top.reasons[run.impl] = _top_ok(kernel, run)
        chain.values[run.impl] = show_chain(run)
        chain.verdicts[run.impl], chain.reasons[run.impl] = _chain_ok(run)
    return [top, chain]
