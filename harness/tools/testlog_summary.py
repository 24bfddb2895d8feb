#!/usr/bin/python3
"""Adds up the test cases of one `bazel test` run and prints one closing line.

Bazel's own summary counts targets; a reader wants cases. Each C test reports through
cmocka (its "[  PASSED  ] N test(s)." lines); the others through the JUnit file beside the
log (pytest's --junitxml, the runner's own); failing those, a pytest summary line; a target
with none of these counts as one case with its outcome.
With --targets FILE (one test label a line, as `bazel query 'tests(//...)'` prints them)
exactly those targets' logs count, cached ones included, and a target without a log is a
failure; otherwise every log under the folder written since --since counts.
--junit FILE adds the cases of a JUnit file written outside Bazel (the stress mode's), and
--failed-step NAME counts a step of ./pecs test that failed without cases to show for it,
so the closing line covers every step.
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator

CMOCKA = re.compile(r"^\[\s+(PASSED|FAILED|SKIPPED)\s+\] (\d+) test\(s\)", re.M)
PYTEST = re.compile(r"^=+ (.*?) in [\d.]+s", re.M)
PYTEST_PART = re.compile(r"(\d+) (passed|failed|skipped|xfailed|xpassed|error|errors)")


def count_xml(path: str) -> tuple[int, int, int] | None:
    """(passed, failed, skipped) from a JUnit file, or None when it cannot be read."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return None
    p = f = s = 0
    for case in root.iter("testcase"):
        tags = {child.tag for child in case}
        if tags & {"failure", "error"}:
            f += 1
        elif "skipped" in tags:
            s += 1
        else:
            p += 1
    return (p, f, s) if p + f + s else None


def count_log(text: str) -> tuple[int, int, int] | None:
    """Returns (passed, failed, skipped) or None when the log has no runner summary."""
    found = CMOCKA.findall(text)
    if found:
        totals = {"PASSED": 0, "FAILED": 0, "SKIPPED": 0}
        for kind, n in found:
            totals[kind] += int(n)
        return totals["PASSED"], totals["FAILED"], totals["SKIPPED"]
    summaries = PYTEST.findall(text)
    if summaries:
        p = f = s = 0
        for kind_n in PYTEST_PART.findall(summaries[-1]):
            n, kind = int(kind_n[0]), kind_n[1]
            if kind in ("passed", "xfailed"):
                p += n
            elif kind in ("skipped",):
                s += n
            else:
                f += n
        return p, f, s
    return None


def target_dirs(testlogs: str, labels: list[str]) -> Iterator[tuple[str, str]]:
    for label in labels:
        pkg, _, name = label.lstrip("/").partition(":")
        yield label, os.path.join(testlogs, pkg, name)


def newest_run(folder: str) -> list[str]:
    """The logs of the target's latest run: its own test.log, or its shard_K_of_N or
    run_K_of_N logs, whichever set was written last (older sets are leftovers)."""
    groups: dict[str, list[str]] = {}
    if os.path.isfile(os.path.join(folder, "test.log")):
        groups["plain"] = [os.path.join(folder, "test.log")]
    if os.path.isdir(folder):
        for d in sorted(os.listdir(folder)):
            log = os.path.join(folder, d, "test.log")
            kind = d.split("_", 1)[0]
            if kind in ("shard", "run") and os.path.isfile(log):
                groups.setdefault(kind, []).append(log)
    if not groups:
        return []
    newest = {k: max(os.path.getmtime(l) for l in v) for k, v in groups.items()}
    if "shard" in groups and newest["shard"] >= newest.get("plain", 0):
        return groups["shard"]
    # run_K_of_N sets come from an explicit --runs_per_test; a plain log is this config's.
    return groups.get("plain") or groups.get("shard") or groups["run"]


def logs(args: argparse.Namespace) -> Iterator[tuple[str, str | None]]:
    """(folder, its test.log or None) for every log that counts."""
    if args.targets:
        with open(args.targets) as f:
            labels = [line.strip() for line in f if line.strip().startswith("//")]
        for label, folder in target_dirs(args.testlogs, labels):
            chosen = newest_run(folder)
            if not chosen:
                yield label, None
            for log in chosen:
                yield os.path.dirname(log), log
        return
    for root, _dirs, files in os.walk(args.testlogs, followlinks=True):
        if "test.log" in files:
            log = os.path.join(root, "test.log")
            if os.path.getmtime(log) >= args.since:
                yield root, log


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("testlogs", help="the bazel-testlogs folder")
    ap.add_argument("--since", type=float, default=0.0)
    ap.add_argument("--targets", help="file of test labels whose logs count")
    ap.add_argument("--junit", action="append", default=[], metavar="FILE",
                    help="a JUnit file whose cases count too (a missing one is a failure)")
    ap.add_argument("--failed-step", action="append", default=[], metavar="NAME",
                    help="a step that failed: one failure")
    args = ap.parse_args()
    passed = failed = skipped = targets = 0
    for path in args.junit:
        counted = count_xml(path)
        if counted is None:
            print(f"  no cases in {path}")
            failed += 1
            continue
        targets += 1
        p, f, s = counted
        passed, failed, skipped = passed + p, failed + f, skipped + s
        if f:
            print(f"  failing: {path} ({f} case(s))")
    for name in args.failed_step:
        print(f"  failing step: {name}")
        failed += 1
    for root, log in logs(args):
        if log is None:
            print(f"  no log: {root}")
            failed += 1
            continue
        targets += 1
        with open(log, errors="replace") as logfile:
            text = logfile.read()
        counted = count_log(text)
        if counted is None:
            counted = count_xml(os.path.join(os.path.dirname(log), "test.xml"))
        if counted is None:
            ok = os.path.exists(os.path.join(root, "test.xml")) and \
                'failures="0"' in open(os.path.join(root, "test.xml"), errors="replace").read()
            counted = (1, 0, 0) if ok else (0, 1, 0)
        p, f, s = counted
        passed, failed, skipped = passed + p, failed + f, skipped + s
        if f:
            print(f"  failing: {os.path.relpath(root, args.testlogs)}")
    if targets == 0:
        print("tests: no test log was written by this run", file=sys.stderr)
        return 1
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
