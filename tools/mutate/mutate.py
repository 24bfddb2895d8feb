#!/usr/bin/python3
"""Mutation score of the conformance suite over ref/: seeds single-line mutants
(tools/mutate/mutants.py) into ref's C sources one at a time, rebuilds the ref runner and
runs the ref suite on each, as root and as uid 65534 with no capabilities.

  python3 tools/mutate/mutate.py run --count 200 --seed 1      # measure (docs/mutation.md)
  python3 tools/mutate/mutate.py list --count 200 --seed 1     # the mutants, nothing run
  python3 tools/mutate/mutate.py report                        # print the last results
  python3 tools/mutate/mutate.py recheck                       # rerun the survivors now

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


def score(results: List[Dict[str, object]]) -> Dict[str, Dict[str, int]]:
    per: Dict[str, Dict[str, int]] = {}
    for r in results:
        c = per.setdefault(mt.component(str(r["path"])), {})
        c[str(r["status"])] = c.get(str(r["status"]), 0) + 1
    return per


def print_report(results: List[Dict[str, object]], judgements: Dict[str, Tuple[str, str]],
                 out=sys.stdout) -> None:
    per = score(results)
    out.write("%-10s %7s %6s %4s %8s %8s %9s %6s\n" % (
        "component", "mutants", "killed", "hang", "survived", "unstable", "stillborn",
        "score"))
    tot: Dict[str, int] = {}
    for comp in sorted(per) + ["all"]:
        c = tot if comp == "all" else per[comp]
        if comp != "all":
            for k, v in c.items():
                tot[k] = tot.get(k, 0) + v
        dead = c.get("killed", 0) + c.get("hang", 0)
        live = c.get("survived", 0) + c.get("unstable", 0)
        counted = dead + live
        out.write("%-10s %7d %6d %4d %8d %8d %9d %6s\n" % (
            comp, counted + c.get("stillborn", 0), c.get("killed", 0), c.get("hang", 0),
            c.get("survived", 0), c.get("unstable", 0), c.get("stillborn", 0),
            "%.0f%%" % (100.0 * dead / counted) if counted else "-"))
    stale = [r for r in results if r["status"] == "stale"]
    if stale:
        out.write("%d stale (line changed since the run, not counted): %s\n" % (
            len(stale), "; ".join(str(r["describe"]) for r in stale)))
    survivors = [r for r in results if r["status"] in ("survived", "unstable")]
    verdicts: Dict[str, int] = {}
    for r in survivors:
        v, why = judgements.get(mt.judge_key(str(r["describe"])), ("unjudged", ""))
        verdicts[v] = verdicts.get(v, 0) + 1
        out.write("survivor %s%s\n  %s: %s\n" % (r["describe"],
                                                " (unstable)" if r["status"] == "unstable"
                                                else "", v, why))
    dead = tot.get("killed", 0) + tot.get("hang", 0)
    observable = dead + verdicts.get("gap", 0) + verdicts.get("unjudged", 0)
    if survivors:
        out.write("survivors judged: %s\n" % ", ".join(
            "%s %d" % kv for kv in sorted(verdicts.items())))
    if observable:
        out.write("killed %d of %d observable mutants (%.0f%%): equivalent and unreachable "
                  "survivors set aside\n" % (dead, observable, 100.0 * dead / observable))


def cmd_run(args: argparse.Namespace) -> int:
    chosen = mt.sample(ref_sources(ROOT), args.count, args.seed)
    # Run in a shuffled order, so a run cut short is still spread over the components.
    random.Random(args.seed).shuffle(chosen)
    if args.shard:
        # One share of the same sample per scratch tree: shards run side by side, and
        # their results.jsonl files together are the whole sample.
        k, n = (int(x) for x in args.shard.split("/"))
        chosen = chosen[k::n]
    os.makedirs(args.work, exist_ok=True)
    log = os.path.join(args.work, "results.jsonl")
    done: Dict[str, Dict[str, object]] = {}
    if args.resume and os.path.exists(log):
        with open(log, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                done[str(r["ident"])] = r
    elif os.path.exists(log):
        os.unlink(log)
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
    print("mutate: %d mutants, seed %d, timeout %.0f s each" % (len(chosen), args.seed,
                                                               args.timeout), flush=True)
    results = []
    for i, m in enumerate(chosen):
        if m.ident in done:
            results.append(done[m.ident])
            continue
        r = try_mutant(sc, m, args.timeout)
        if r["status"] == "survived":
            again = try_mutant(sc, m, args.timeout)
            if again["status"] in ("killed", "hang"):
                r = dict(again, status="unstable")
        r.update(ident=m.ident, path=m.path, line=m.line, kind=m.kind,
                 describe=m.describe())
        results.append(r)
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(r) + "\n")
        print("[%d/%d] %-9s %5.1fs %s" % (i + 1, len(chosen), r["status"],
                                          float(r.get("seconds", 0)), m.describe()),
              flush=True)
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
    for m in mt.sample(ref_sources(ROOT), args.count, args.seed):
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
    ap.add_argument("--seed", type=int, default=1)
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
