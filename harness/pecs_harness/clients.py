"""Real clients: Linux's own perf, unmodified, on the kernel and on implementations put
under it by the interposer (interpose/, libpecs_interpose.so), side by side.

    python3 -m pecs_harness.clients --lib LIB --spin SPIN [--impl ref] [--impl PLUGIN.so]

Each implementation runs the same commands as the kernel: `perf record` and `perf
report` (clients_record.py; with --spin-nofp also `perf record --call-graph dwarf`), selected `perf test` entries (clients_perftest.py), and
`perf stat -e
task-clock,cpu-clock,page-faults,context-switches -- spin`, and the same of `sh -c 'spin;
spin'`, whose counts are those of the processes the shell forks (inherit). spin
(interpose/clients/spin.c) prints its own CPU time and page faults from getrusage(), so every comparison is
a ratio within one run (perf's count over the program's own account), and the kernel's
ratio is compared with the implementation's: the verdicts do not depend on how busy the
machine is, only on whether each side counted what the program did. Clocks must agree
within 5%, page faults within 10%; context switches depend on the schedule and are shown
only.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Sequence

from pecs_harness.clients_report import (DWARF_RECORD_CLIENT, SHELL_CLIENT,
                                         SHELL_RECORD_CLIENT, STAT_EVENTS, label, markdown,
                                         print_table)

# The largest difference of the implementation's ratio from the kernel's, per event.
TOLERANCE = {"task-clock": 0.05, "cpu-clock": 0.05, "page-faults": 0.10}
SPIN_ARGS = ("300", "4096")  # millions of iterations (~0.3-0.5 s of CPU), pages touched
# The forking variant: a shell that runs spin twice, so the counts are those of the
# processes the traced one forks (inherit). Each as long as the single run: ref reads a
# child's CPU time to a clock tick, and over ~0.7 s a tick (10 ms) stays under 2%.
SHELL_SPIN_ARGS = SPIN_ARGS


@dataclass
class StatRun:
    impl: str
    counts: Dict[str, Optional[float]] = field(default_factory=dict)
    own_cpu_ns: int = 0
    own_faults: int = 0
    error: str = ""


@dataclass
class Check:
    client: str
    item: str
    values: Dict[str, str]
    verdicts: Dict[str, str]  # impl -> pass / fail / shown
    reasons: Dict[str, str]


def impl_env(impl: str, lib: str) -> Dict[str, str]:
    env = dict(os.environ)
    if impl != "kernel":
        env["PECS_IMPL"] = impl
        env["LD_PRELOAD"] = lib
    return env


def parse_stat_csv(text: str) -> Dict[str, Optional[float]]:
    """perf stat -x, lines: value,unit,event,...; '<not counted>' reads as None."""
    counts: Dict[str, Optional[float]] = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or line.startswith("#"):
            continue
        event = parts[2].split(":")[0]
        if event not in STAT_EVENTS:
            continue
        try:
            value = float(parts[0])
        except ValueError:
            counts[event] = None
            continue
        # perf prints the clocks in msec
        counts[event] = value * 1e6 if parts[1] == "msec" else value
    return counts


def parse_spin(text: str) -> Dict[str, int]:
    """The sum of what each spin run printed: 'spin: cpu_ns=N faults=N'."""
    total: Dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith("spin: "):
            for k, v in (w.split("=") for w in line[6:].split()):
                total[k] = total.get(k, 0) + int(v)
    return total


def stat_workload(spin: str, shell: bool) -> List[str]:
    if not shell:
        return [spin] + list(SPIN_ARGS)
    one = " ".join([spin] + list(SHELL_SPIN_ARGS))
    return ["sh", "-c", "%s; %s" % (one, one)]


def run_perf_stat(perf: str, impl: str, lib: str, spin: str, work: str,
                  shell: bool = False) -> StatRun:
    out = os.path.join(work, "stat-%s%s.csv" % (impl.replace("/", "_"), "-sh" if shell else ""))
    cmd = [perf, "stat", "-x,", "-o", out, "-e", ",".join(STAT_EVENTS), "--"]
    cmd += stat_workload(spin, shell)
    run = StatRun(impl=impl)
    try:
        p = subprocess.run(cmd, env=impl_env(impl, lib), capture_output=True, text=True,
                           timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        run.error = str(e)
        return run
    own = parse_spin(p.stdout)
    if p.returncode != 0 or not own:
        run.error = "perf stat exited %d: %s" % (p.returncode, p.stderr.strip()[-300:])
        return run
    run.own_cpu_ns, run.own_faults = own["cpu_ns"], own["faults"]
    with open(out) as f:
        run.counts = parse_stat_csv(f.read())
    return run


def ratio(run: StatRun, event: str) -> Optional[float]:
    """The event's count over the program's own account of the same thing."""
    v = run.counts.get(event)
    own = run.own_faults if event == "page-faults" else run.own_cpu_ns
    if v is None or not own:
        return None
    return v / own


def show(run: StatRun, event: str) -> str:
    if run.error:
        return "error"
    v = run.counts.get(event)
    if v is None:
        return "<not counted>"
    text = "%.2f ms" % (v / 1e6) if event.endswith("clock") else "%d" % v
    r = ratio(run, event) if event in TOLERANCE else None
    return text + (" (%.3fx own)" % r if r is not None else "")


def compare_stat(kernel: StatRun, runs: Sequence[StatRun],
                 client: str = "perf stat") -> List[Check]:
    checks = []
    for event in STAT_EVENTS:
        c = Check(client, event, {"kernel": show(kernel, event)}, {}, {})
        kr = ratio(kernel, event)
        for run in runs:
            c.values[run.impl] = show(run, event)
            r = ratio(run, event)
            if event not in TOLERANCE:
                c.verdicts[run.impl] = "shown"
                c.reasons[run.impl] = "depends on the schedule"
            elif kr is None:
                c.verdicts[run.impl] = "fail"
                c.reasons[run.impl] = "the kernel did not count it: %s" % (kernel.error or
                                                                           "not counted")
            elif r is None:
                c.verdicts[run.impl] = "fail"
                c.reasons[run.impl] = run.error or "not counted"
            else:
                off = abs(r / kr - 1.0)
                ok = off <= TOLERANCE[event]
                c.verdicts[run.impl] = "pass" if ok else "fail"
                c.reasons[run.impl] = "%.1f%% from the kernel (limit %d%%)" % (
                    100 * off, 100 * TOLERANCE[event])
        checks.append(c)
    return checks


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="pecs_harness.clients", description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, help="libpecs_interpose.so")
    ap.add_argument("--spin", required=True, help="the workload (interpose/clients/spin.c)")
    ap.add_argument("--spin-nofp", help="spin without frame pointers: adds the "
                    "perf record --call-graph dwarf check")
    ap.add_argument("--perf", default="perf")
    ap.add_argument("--impl", action="append", help="ref (default) or a plugin's path")
    ap.add_argument("--gate", action="append",
                    help="implementations whose failed checks fail the exit status "
                         "(default: ref)")
    ap.add_argument("--json", help="write the checks here")
    ap.add_argument("--markdown", help="write them as the report's section here")
    args = ap.parse_args(argv)
    impls = args.impl or ["ref"]
    gate = args.gate if args.gate is not None else ["ref"]
    perf = shutil.which(args.perf)
    if not perf:
        print("pecs clients: no perf: install Debian's linux-perf", file=sys.stderr)
        return 2
    lib, spin = os.path.abspath(args.lib), os.path.abspath(args.spin)
    # Imported here: clients_record builds on this module's Check.
    from pecs_harness import clients_perftest, clients_record as rec
    with tempfile.TemporaryDirectory() as work:
        kernel = run_perf_stat(perf, "kernel", lib, spin, work)
        runs = [run_perf_stat(perf, i, lib, spin, work) for i in impls]
        ksh = run_perf_stat(perf, "kernel", lib, spin, work, shell=True)
        shs = [run_perf_stat(perf, i, lib, spin, work, shell=True) for i in impls]
        krec = rec.run_perf_record(perf, "kernel", lib, spin, work)
        recs = [rec.run_perf_record(perf, i, lib, spin, work) for i in impls]
        krsh = rec.run_perf_record(perf, "kernel", lib, spin, work, shell=True)
        rshs = [rec.run_perf_record(perf, i, lib, spin, work, shell=True) for i in impls]
        nofp = os.path.abspath(args.spin_nofp) if args.spin_nofp else ""
        kdw = rec.run_perf_record(perf, "kernel", lib, nofp, work, dwarf=True) if nofp else None
        dws = [rec.run_perf_record(perf, i, lib, nofp, work, dwarf=True)
               for i in impls] if nofp else []
    checks = compare_stat(kernel, runs) + compare_stat(ksh, shs, SHELL_CLIENT)
    checks += rec.compare_record(krec, recs)
    checks += rec.compare_record(krsh, rshs, SHELL_RECORD_CLIENT)
    if kdw:
        checks += rec.compare_record(kdw, dws, DWARF_RECORD_CLIENT)
    checks += clients_perftest.compare_entries(perf, lib, impls)
    print_table([asdict(c) for c in checks], impls)
    for c in checks:
        for i in impls:
            if c.verdicts.get(i) == "fail":
                print("%s, %s on %s: %s" % (c.client, c.item, label(i), c.reasons.get(i, "")))
    for name, err in [(r.impl, r.error) for r in [kernel] + runs + [ksh] + shs] + \
            [(r.impl, r.error) for r in [krec] + recs + [krsh] + rshs + ([kdw] if kdw else []) +
             dws]:
        if err:
            print("%s: %s" % (label(name), err))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"impls": impls, "checks": [asdict(c) for c in checks]}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(markdown(impls, [asdict(c) for c in checks]))
    failed = [c for c in checks for i in gate if c.verdicts.get(i) == "fail"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
