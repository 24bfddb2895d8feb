"""Stress mode: the suite run K times per implementation while busy loops load every core.

A verdict that depends on the schedule is a false divergence waiting to happen: it turns the
gate red when nothing changed. So each case must give the same verdict (its status after the
expectations file) in every run, and every run must pass its gate. The report names each
case that did not, with the verdicts seen, how often, and one message to start from.

The busy loops are separate processes (Python threads would share one core through the
GIL). Each one stops by itself after a time limit, dies with the driver (PR_SET_PDEATHSIG),
and is killed by its pid when the stress ends, so none outlives the command.
"""
import ctypes
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from types import TracebackType

from .case_result import CaseResult
from .results import GatedRun

# The loop checks the clock rarely: the point is to burn the core, not to read the time.
_BUSY = ("import time\n"
         "end = time.monotonic() + float(%r)\n"
         "while time.monotonic() < end:\n"
         "    for _ in range(100000):\n"
         "        pass\n")

_PR_SET_PDEATHSIG = 1
BAD_VERDICTS = ("FAIL", "XPASS", "BROKEN", "CRASH")


def _die_with_parent() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the time limit and the kill by pid still end it


class Loader:
    """n busy processes, each ending by itself after limit_s seconds at the latest."""

    def __init__(self, n: int, limit_s: float) -> None:
        self.n = max(0, int(n))
        self.limit_s = limit_s
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self) -> "Loader":
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(
                [sys.executable, "-c", _BUSY % self.limit_s], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                preexec_fn=_die_with_parent))
        return self

    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []

    def __enter__(self) -> "Loader":
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class Case:
    """One case over the runs: its verdict in each run that produced results."""

    def __init__(self, case_id: str) -> None:
        self.id = case_id
        self.verdicts: list[str] = []       # one per run, "MISSING" where that run lacks the case
        self.messages: dict[str, str] = {}  # verdict -> first message seen with it

    def add(self, status: str, message: str) -> None:
        self.verdicts.append(status)
        if message and status not in self.messages:
            self.messages[status] = message

    def seen(self) -> list[tuple[str, int]]:
        """[(verdict, times)], most frequent first, ties in order of first appearance."""
        order: list[str] = []
        for v in self.verdicts:
            if v not in order:
                order.append(v)
        return sorted(((v, self.verdicts.count(v)) for v in order), key=lambda vc: -vc[1])

    def changed(self) -> bool:
        return len(set(self.verdicts)) > 1

    def sample(self) -> str:
        """A message from the least usual verdict: that is the run that needs explaining."""
        for verdict, _ in reversed(self.seen()):
            if verdict in self.messages:
                return self.messages[verdict]
        return ""


def compare(result_lists: Sequence[Sequence[CaseResult]]) -> list[Case]:
    """Cases by id from several runs' results; a case absent from a run counts as the
    verdict MISSING there."""
    ids = sorted({r.id for results in result_lists for r in results})
    cases = {i: Case(i) for i in ids}
    for results in result_lists:
        by_id = {r.id: r for r in results}
        for i in ids:
            r = by_id.get(i)
            if r is None:
                cases[i].add("MISSING", "absent from this run's results")
            else:
                cases[i].add(r.status, r.message)
    return [cases[i] for i in ids]


class Outcome:
    """One implementation's stress: its runs and what they say together."""

    def __init__(self, label: str, runs: list[GatedRun]) -> None:
        self.label = label
        self.runs = runs                       # results.GatedRun, one per run
        self.broken = [(n, r.error) for n, r in enumerate(runs, 1) if r.data is None]
        good = [r for r in runs if r.data is not None]
        self.cases = compare([r.results for r in good])
        self.changed = [c for c in self.cases if c.changed()]
        # The gate's own problems (a bad expectations file, stale lines, failures that
        # repeat in every run) in the runs that produced results.
        self.gate_failures = [(n, r.problems) for n, r in enumerate(runs, 1)
                              if r.data is not None and not r.ok]

    @property
    def ok(self) -> bool:
        return not (self.broken or self.changed or self.gate_failures)


def stress(run_one: Callable[[int], GatedRun], label: str, runs: int,
           say: Callable[[str], None] = print) -> Outcome:
    """Calls run_one(n) for n in 1..runs (each returns a results.GatedRun) and compares."""
    done: list[GatedRun] = []
    for n in range(1, runs + 1):
        start = time.monotonic()
        run = run_one(n)
        done.append(run)
        say("stress %s: run %d/%d: %s (%.0fs)" % (
            label, n, runs, run.error if run.data is None else
            ("gate ok" if run.ok else "gate FAIL"), time.monotonic() - start))
    return Outcome(label, done)


def describe(outcome: Outcome, nruns: int, load: int) -> list[str]:
    """The report lines for one implementation, closing with its verdict."""
    lines: list[str] = []
    for c in outcome.changed:
        lines.append("  changed: %s: %s" % (c.id, ", ".join(
            "%s x%d" % vc for vc in c.seen())))
        if c.sample():
            lines.append("           %s" % c.sample())
    for n, error in outcome.broken:
        lines.append("  run %d broke: %s" % (n, error))
    # One line per problem, not per run: a case failing in every run carries a different
    # measured figure in each message, so it is keyed by its verdict and id.
    repeated: dict[str, tuple[str, list[int]]] = {}
    for n, problems in outcome.gate_failures:
        for p in problems:
            head = p.split(": ", 1)[0]
            key = head if head.split(" ", 1)[0] in BAD_VERDICTS else p
            repeated.setdefault(key, (p, []))[1].append(n)
    for p, ns in repeated.values():
        lines.append("  gate failed in run%s %s: %s" % (
            "s" if len(ns) > 1 else "", ",".join(map(str, ns)), p))
    lines.append("stress %s: %d case(s) over %d run(s) with %d busy loop(s): %d changed "
                 "verdict, %d run(s) broke, %d run(s) failed the gate: %s" % (
                     outcome.label, len(outcome.cases), nruns, load, len(outcome.changed),
                     len(outcome.broken), len(outcome.gate_failures),
                     "ok" if outcome.ok else "FAIL"))
    return lines


def write_junit(outcomes: Sequence[Outcome], nruns: int, path: str) -> None:
    """One JUnit test per implementation and case (stable over the runs and gated ok), and one
    per implementation for its runs as a whole, so the closing tally of ./pecs test counts
    them."""
    suites = ET.Element("testsuites")
    for o in outcomes:
        suite = ET.SubElement(suites, "testsuite", name="stress." + o.label)
        whole = ET.SubElement(suite, "testcase", classname="stress." + o.label,
                              name="AllRunsCompleteAndGate")
        if o.broken or o.gate_failures:
            text = ["run %d broke: %s" % b for b in o.broken]
            text += ["run %d: %s" % (n, "; ".join(p)) for n, p in o.gate_failures]
            ET.SubElement(whole, "failure", message="runs broke or failed the gate").text = \
                "\n".join(text)
        for c in o.cases:
            tc = ET.SubElement(suite, "testcase", classname="stress." + o.label, name=c.id)
            if c.changed():
                ET.SubElement(tc, "failure", message="verdict changed over %d runs: %s" % (
                    nruns, ", ".join("%s x%d" % vc for vc in c.seen()))).text = c.sample()
            elif c.verdicts and c.verdicts[0] in BAD_VERDICTS + ("MISSING",):
                ET.SubElement(tc, "failure", message="%s in every run" % c.verdicts[0]).text = \
                    c.sample()
            elif c.verdicts and c.verdicts[0] in ("UNSUPPORTED", "ENV_SKIP"):
                ET.SubElement(tc, "skipped", message="%s in every run" % c.verdicts[0])
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)
