#!/usr/bin/python3
"""Mutation score of the conformance suite over ref/: seeds single-line mutants
(tools/mutate/mutants.py) into ref's C sources one at a time, rebuilds the ref runner and
runs the ref suite on each, as root and as uid 65534 with no capabilities.

  python3 tools/mutate/mutate.py run --count 200 --runs 3      # 3 fresh seeds (docs/mutation.md)
  python3 tools/mutate/mutate.py run --count 200 --seed 1      # one sample again, by its seed
  python3 tools/mutate/mutate.py list --count 200 --seed 1     # the mutants, nothing run
  python3 tools/mutate/mutate.py report                        # print the last results
  python3 tools/mutate/mutate.py recheck                       # rerun the survivors now

Without --seed every sample is drawn from a fresh seed, printed before it runs: a score
that holds only on the sample the cases were written against measures that sample. The
report gives each seed's score apart, per component, and the survivors with their
judgements and the reasons for them.

A mutant is killed when a run fails (a failing case, a crash) or hangs (the per-mutant
timeout; reported as "hang"); it survives when both runs pass. Each survivor is run once
more: one killed then is "unstable" and counted as surviving (the suite cannot be relied
on to see it). A mutant that does not build is "stillborn" and not counted. Survivors
are judged in tools/mutate/judgements.txt: equivalent, unreachable or gap, with why.

Runs happen in a scratch copy of the tree with an output base of its own, so the checkout
and its Bazel cache are never touched; one mutant at a time.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from typing import Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutants as mt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JUDGEMENTS = os.path.join(ROOT, "tools", "mutate", "judgements.txt")
RUNNER = "bazel-bin/conformance/pecs-ref"


def ref_sources(root: str) -> Dict[str, str]:
    """ref's engine sources: every .c under ref/ but the tests and their support."""
    out = {}
    for d, _, names in os.walk(os.path.join(root, "ref")):
        for n in names:
            if not n.endswith(".c") or "_test" in n:
                continue
            path = os.path.relpath(os.path.join(d, n), root)
            if path.startswith("ref/tests/"):
                continue
            with open(os.path.join(root, path), encoding="utf-8") as f:
                out[path] = f.read()
    return out


JUDGEMENT_LINE = re.compile(r"^(.*) \| (equivalent|unreachable|gap) \| ([^|]*)$")


def load_judgements(path: str = JUDGEMENTS) -> Dict[str, Tuple[str, str]]:
    """{judge key: (verdict, why)} from lines `key | verdict | why`, the key being the
    survivor as the report prints it without its line number (mutants.judge_key)."""
    out: Dict[str, Tuple[str, str]] = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            # The key is a line of C, which may hold " | " itself: the verdict is the
            # last field but one.
            m = JUDGEMENT_LINE.match(line.rstrip("\n"))
            if m:
                out[m.group(1).strip()] = (m.group(2), m.group(3).strip())
    return out


class Scratch:
    """A copy of the tree to mutate, built with its own Bazel output base."""

    def __init__(self, work: str, jobs: int) -> None:
        self.tree = os.path.join(work, "tree")
        self.base = os.path.join(work, "output_base")
        self.jobs = jobs

    def sync(self) -> None:
        os.makedirs(self.tree, exist_ok=True)
        subprocess.run(["rsync", "-a", "--delete", "--exclude=/bazel-*", "--exclude=/.git",
                        "--exclude=/out", ROOT + "/", self.tree + "/"], check=True)

    def build(self) -> bool:
        cmd = ["bazel", "--output_base=" + self.base, "build", "--noshow_progress",
               "--color=no", "--jobs=%d" % self.jobs,
               # A mutant is judged by what it does, not by the warnings it draws
               # (an emptied `if` body, `a && b || c`): they stay warnings here.
               "--copt=-Wno-error", "//conformance:pecs-ref"]
        return subprocess.run(cmd, cwd=self.tree, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0

    def shutdown(self) -> None:
        subprocess.run(["bazel", "--output_base=" + self.base, "shutdown"], cwd=self.tree,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def run_suite(tree: str, unprivileged: bool, timeout: float) -> Tuple[str, str]:
    """('pass'|'fail'|'hang', the failing lines) for one run of the ref runner."""
    runner = os.path.join(tree, RUNNER)
    exp = os.path.join(tree, "conformance", "expectations", "ref.txt")
    args = ["--quiet", "--expectations", exp]
    if unprivileged:
        cmd = ["sh", os.path.join(tree, "conformance", "run_unprivileged.sh"), runner, exp,
               "--quiet"]
    else:
        cmd = [runner] + args
    p = subprocess.Popen(cmd, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)  # the runner and anything it started
        p.communicate()
        return "hang", "no result in %.0f s" % timeout
    if p.returncode == 0:
        return "pass", ""
    lines = [ln for ln in out.splitlines()
             if ln.startswith(("FAIL", "CRASH", "BROKEN", "XPASS", "pecs ref:"))]
    return "fail", "; ".join(lines[:3]) or "exit %d" % p.returncode


def try_mutant(sc: Scratch, m: mt.Mutant, timeout: float) -> Dict[str, object]:
    """Builds and runs one mutant; the source is restored whatever happens."""
    path = os.path.join(sc.tree, m.path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    if lines[m.line - 1] != m.original:
        return {"status": "stale", "detail": "the line changed"}
    lines[m.line - 1] = m.mutated
    start = time.monotonic()
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        if not sc.build():
            return {"status": "stillborn", "detail": "does not build",
                    "seconds": time.monotonic() - start}
        status, detail = "survived", ""
        for unpriv in (False, True):
            r, d = run_suite(sc.tree, unpriv, timeout)
            if r != "pass":
                status = "hang" if r == "hang" else "killed"
                detail = ("unprivileged: " if unpriv else "root: ") + d
                break
        return {"status": status, "detail": detail, "seconds": time.monotonic() - start}
    finally:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def fresh_seed() -> int:
    """A seed no one chose: from the system's entropy, below 2^31 so it is easy to type."""
    return random.SystemRandom().randrange(1, 2 ** 31)


def verdict_of(r: Dict[str, object], judgements: Dict[str, Tuple[str, str]]) -> str:
    """killed (hangs too), stillborn, stale, or a survivor's judgement (unjudged when it
    has none)."""
    st = str(r["status"])
    if st in ("killed", "hang"):
        return "killed"
    if st in ("survived", "unstable"):
        return judgements.get(mt.judge_key(str(r["describe"])), ("unjudged", ""))[0]
    return st


def tally(results: List[Dict[str, object]],
          judgements: Dict[str, Tuple[str, str]]) -> Dict[str, Dict[str, int]]:
    """{component: {status or verdict: count}}, "all" included."""
    per: Dict[str, Dict[str, int]] = {"all": {}}
    for r in results:
        for comp in (mt.component(str(r["path"])), "all"):
            c = per.setdefault(comp, {})
            for k in {str(r["status"]), verdict_of(r, judgements)}:
                c[k] = c.get(k, 0) + 1
    return per


def observable(c: Dict[str, int]) -> Tuple[int, int]:
    """(killed, observable): the survivors judged equivalent or unreachable set aside."""
    dead = c.get("killed", 0)
    return dead, dead + c.get("gap", 0) + c.get("unjudged", 0)


def pct(a: int, b: int) -> str:
    return "%.0f%%" % (100.0 * a / b) if b else "-"


def print_table(results: List[Dict[str, object]], judgements: Dict[str, Tuple[str, str]],
                out) -> Tuple[int, int]:
    per = tally(results, judgements)
    out.write("%-10s %7s %6s %4s %8s %5s %5s %5s %5s %6s %10s\n" % (
        "component", "mutants", "killed", "hang", "survived", "equiv", "unrch", "gap",
        "unjdg", "raw", "observable"))
    for comp in sorted(k for k in per if k != "all") + ["all"]:
        c = per[comp]
        dead, obs = observable(c)
        counted = dead + c.get("survived", 0) + c.get("unstable", 0)
        out.write("%-10s %7d %6d %4d %8d %5d %5d %5d %5d %6s %10s\n" % (
            comp, counted + c.get("stillborn", 0), c.get("killed", 0) - c.get("hang", 0),
            c.get("hang", 0), c.get("survived", 0) + c.get("unstable", 0),
            c.get("equivalent", 0), c.get("unreachable", 0), c.get("gap", 0),
            c.get("unjudged", 0), pct(dead, counted), pct(dead, obs)))
    return observable(per["all"])


def print_report(results: List[Dict[str, object]], judgements: Dict[str, Tuple[str, str]],
                 out=sys.stdout) -> None:
    """Each seed's table (per component: raw and observable score), its survivors with
    their judgements, then all seeds together."""
    seeds: List[object] = []
    for r in results:
        if r.get("seed") not in seeds:
            seeds.append(r.get("seed"))
    scores = []
    for seed in seeds:
        mine = [r for r in results if r.get("seed") == seed]
        out.write("seed %s: %d mutants\n" % ("unknown" if seed is None else seed, len(mine)))
        dead, obs = print_table(mine, judgements, out)
        scores.append((seed, dead, obs))
        for r in mine:
            if r["status"] in ("survived", "unstable"):
                v, why = judgements.get(mt.judge_key(str(r["describe"])),
                                        ("unjudged", "no line in tools/mutate/judgements.txt"))
                out.write("  survivor %s%s\n    %s: %s\n" % (
                    r["describe"], " (unstable)" if r["status"] == "unstable" else "", v, why))
        stale = [r for r in mine if r["status"] == "stale"]
        if stale:
            out.write("  %d stale (line changed since the run, not counted): %s\n" % (
                len(stale), "; ".join(str(r["describe"]) for r in stale)))
        out.write("  seed %s: killed %d of %d observable mutants (%s)\n\n" % (
            seed, dead, obs, pct(dead, obs)))
    if len(seeds) > 1:
        out.write("all %d seeds together:\n" % len(seeds))
        dead, obs = print_table(results, judgements, out)
        out.write("per seed: %s; all: killed %d of %d observable (%s)\n" % (
            ", ".join("%s %s" % (s, pct(d, o)) for s, d, o in scores), dead, obs,
            pct(dead, obs)))


def run_sample(sc: Scratch, args: argparse.Namespace, seed: int, log: str,
               done: Dict[Tuple[object, str], Dict[str, object]]) -> List[Dict[str, object]]:
    """Runs the sample of one seed, appending each result to log."""
    chosen = mt.sample(ref_sources(ROOT), args.count, seed)
    # Run in a shuffled order, so a run cut short is still spread over the components.
    random.Random(seed).shuffle(chosen)
    if args.shard:
        # One share of the same sample per scratch tree: shards run side by side, and
        # their results.jsonl files together are the whole sample.
        k, n = (int(x) for x in args.shard.split("/"))
        chosen = chosen[k::n]
    print("mutate: seed %d: %d mutants, timeout %.0f s each (again: --seed %d)" % (
        seed, len(chosen), args.timeout, seed), flush=True)
    results = []
    for i, m in enumerate(chosen):
        if (seed, m.ident) in done:
            results.append(done[(seed, m.ident)])
            continue
        r = try_mutant(sc, m, args.timeout)
        if r["status"] == "survived":
            again = try_mutant(sc, m, args.timeout)
            if again["status"] in ("killed", "hang"):
                r = dict(again, status="unstable")
        r.update(seed=seed, ident=m.ident, path=m.path, line=m.line, kind=m.kind,
                 describe=m.describe())
        results.append(r)
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(r) + "\n")
        print("[%d/%d] %-9s %5.1fs %s" % (i + 1, len(chosen), r["status"],
                                          float(r.get("seconds", 0)), m.describe()),
              flush=True)
    return results


def cmd_run(args: argparse.Namespace) -> int:
    os.makedirs(args.work, exist_ok=True)
    log = os.path.join(args.work, "results.jsonl")
    done: Dict[Tuple[object, str], Dict[str, object]] = {}
    if args.resume and os.path.exists(log):
        with open(log, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                done[(r.get("seed"), str(r["ident"]))] = r
    elif os.path.exists(log):
        os.unlink(log)
    if args.seed is not None:
        seeds = [args.seed + i for i in range(args.runs)]
    elif done:
        # --resume without --seed: the seeds the log was drawn from, then fresh ones
        seeds = list(dict.fromkeys(s for s, _ in done if isinstance(s, int)))[:args.runs]
        seeds += [fresh_seed() for _ in range(args.runs - len(seeds))]
    else:
        seeds = [fresh_seed() for _ in range(args.runs)]
    print("mutate: seeds %s" % ", ".join(str(x) for x in seeds), flush=True)
    sc = Scratch(args.work, args.jobs)
    sc.sync()
    if not sc.build():
        print("mutate: the unmutated tree does not build", file=sys.stderr)
        return 2
    for unpriv in (False, True):
        r, d = run_suite(sc.tree, unpriv, args.timeout)
        if r != "pass":
            print("mutate: the unmutated suite does not pass (%s): %s" % (r, d),
                  file=sys.stderr)
            return 2
    results = []
    for seed in seeds:
        results += run_sample(sc, args, seed, log, done)
    sc.build()  # leave the scratch runner unmutated
    sc.shutdown()
    print_report(results, load_judgements())
    return 0


def cmd_recheck(args: argparse.Namespace) -> int:
    """Runs the survivors of the last run again on the tree as it is now (after new
    cases): each is killed, survives, or is stale (its line changed)."""
    log = os.path.join(args.work, "results.jsonl")
    with open(log, encoding="utf-8") as f:
        results = [json.loads(line) for line in f]
    sc = Scratch(args.work, args.jobs)
    sc.sync()
    if not sc.build():
        print("mutate: the unmutated tree does not build", file=sys.stderr)
        return 2
    for r in results:
        if r["status"] not in ("survived", "unstable"):
            continue
        if args.only and not any(o in str(r["describe"]) for o in args.only):
            continue
        m = mt.Mutant(str(r["path"]), int(r["line"]), str(r["kind"]), 0, "", "")
        with open(os.path.join(ROOT, m.path), encoding="utf-8") as f:
            text = f.read()
        # The same change, wherever the line is now.
        found = [x for x in mt.sites(m.path, text)
                 if x.judge_key == mt.judge_key(str(r["describe"]))]
        if not found:
            r.update(status="stale", detail="the mutated line is gone or changed")
        else:
            # Identical lines of one file share the key: the one nearest the old line.
            m = min(found, key=lambda x: abs(x.line - int(r["line"])))
            again = try_mutant(sc, m, args.timeout)
            r.update(status=again["status"], detail=again["detail"], line=m.line,
                     describe=m.describe(), rechecked=True)
        print("recheck %-9s %s" % (r["status"], r["describe"]), flush=True)
    sc.build()
    sc.shutdown()
    with open(log, "w", encoding="utf-8") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    print_report(results, load_judgements())
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    seed = fresh_seed() if args.seed is None else args.seed
    print("# seed %d" % seed)
    for m in mt.sample(ref_sources(ROOT), args.count, seed):
        print(m.describe())
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    log = os.path.join(args.work, "results.jsonl")
    with open(log, encoding="utf-8") as f:
        results = [json.loads(line) for line in f]
    print_report(results, load_judgements())
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["run", "list", "report", "recheck"])
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=None,
                    help="the sample's seed (with --runs N: seed, seed+1, ...); without it "
                         "each sample draws a fresh one and prints it")
    ap.add_argument("--runs", type=int, default=1,
                    help="run: how many samples of --count mutants, each of its own seed")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds for one run of the suite before the mutant counts as a hang")
    ap.add_argument("--work", default="/tmp/pecs-mutate",
                    help="the scratch tree, its output base and results.jsonl")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", action="append", default=[],
                    help="recheck: only the survivors whose description contains this "
                         "(repeatable), e.g. ref/event/event_rb.c:256")
    ap.add_argument("--resume", action="store_true",
                    help="keep the results of mutants already run in --work")
    ap.add_argument("--shard", default="",
                    help="run: K/N runs only every Nth mutant of the sample from the Kth "
                         "(0-based), in its own --work")
    args = ap.parse_args(argv)
    if args.command == "run" and shutil.which("rsync") is None:
        print("mutate: rsync is needed for the scratch copy", file=sys.stderr)
        return 2
    return {"run": cmd_run, "list": cmd_list, "report": cmd_report,
            "recheck": cmd_recheck}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
