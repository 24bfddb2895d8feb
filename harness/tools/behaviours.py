#!/usr/bin/python3
"""Keeps docs/behaviours.md true to the cases.

The catalogue is hand-written Markdown: tables whose rows are
    | ID | behaviour | source | cases | vectors | ref |
The `cases` column is derived from the cases a built runner lists (each case names the
behaviour ids it covers) and the `ref` column from a results file of the
reference engine, so neither can drift.

  behaviours.py check               fail when a case cites an unknown id, a row has no
                                    source, or a cases column is out of date
  behaviours.py write [--ref F]     rewrite the cases column (and ref from results F)
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "behaviours.md")

# Run as a script from a checkout, harness/ is not on the path yet.
sys.path.insert(1, os.path.join(ROOT, "harness"))
from pecs_harness import behaviours as catalogue  # noqa: E402


def declared_cases(runner: str) -> dict[str, list[str]]:
    """{case id: [behaviour ids]} as a built runner lists them (`RUNNER --list`).

    The binary is asked rather than the sources parsed, because some cases are stamped
    out by macros and only the linked registry knows them all."""
    listing = subprocess.run([runner, "--list"], check=True, capture_output=True,
                             text=True).stdout
    out: dict[str, list[str]] = {}
    for line in listing.splitlines():
        parts = line.split("\t")
        if len(parts) != 3 or not parts[2].startswith("behaviours="):
            continue
        out[parts[0]] = [b.strip() for b in parts[2][len("behaviours="):].split(",")
                         if b.strip()]
    return out


def short(case_id: str) -> str:
    return case_id.split(".", 1)[1] if case_id.startswith("Required.") else case_id


def ref_status(results_path: str) -> dict[str, str]:
    """{behaviour id: status word} from a ref results JSON file."""
    data = json.load(open(results_path))
    per: dict[str, list[str]] = {}
    for r in data["results"]:
        for b in r.get("behaviours", []):
            per.setdefault(b, []).append(r["status"])
    words = {}
    for b, statuses in per.items():
        if all(s == "PASS" for s in statuses):
            words[b] = "pass"
        elif any(s in ("FAIL", "XPASS", "BROKEN", "CRASH") for s in statuses):
            words[b] = "fail"
        elif any(s == "XFAIL" for s in statuses):
            words[b] = "xfail (listed)"
        elif any(s == "PASS" for s in statuses):
            words[b] = "partial: " + ", ".join(sorted(set(statuses) - {"PASS"})).lower()
        else:
            words[b] = ", ".join(sorted(set(statuses))).lower()
    return words


def process(runner: str, write: bool, ref_results: str | None = None, doc: str = DOC) -> list[str]:
    cases = declared_cases(runner)
    by_behaviour: dict[str, list[str]] = {}
    for cid, bs in cases.items():
        for b in bs:
            by_behaviour.setdefault(b, []).append(cid)
    refs = ref_status(ref_results) if ref_results else None
    lines = open(doc, encoding="utf-8").read().split("\n")
    known: set[str] = set()
    problems: list[str] = []
    out = list(lines)
    for i, _header, cells in catalogue.table_rows(lines):
        n = i + 1
        if len(cells) != 6:
            problems.append(f"{doc}:{n}: a row needs 6 cells (id, behaviour, source, cases, "
                            f"vectors, ref), found {len(cells)}")
            continue
        bid = cells[0]
        if bid in known:
            problems.append(f"{doc}:{n}: behaviour id {bid} is listed twice")
        known.add(bid)
        if not cells[2] or cells[2] == "-":
            problems.append(f"{doc}:{n}: {bid} has no source")
        want = ", ".join(short(c) for c in sorted(by_behaviour.get(bid, []))) or "-"
        if cells[3] != want:
            if write:
                cells[3] = want
            else:
                problems.append(f"{doc}:{n}: cases of {bid} are out of date: run "
                                f"harness/tools/behaviours.py write")
        if refs is not None and bid in refs:
            cells[5] = refs[bid]
        out[i] = "| " + " | ".join(cells) + " |"
    for cid, bs in sorted(cases.items()):
        for b in bs:
            if b not in known:
                problems.append(f"{cid} covers behaviour {b}, which docs/behaviours.md "
                                "does not list: add a row with its source")
    if write:
        open(doc, "w", encoding="utf-8").write("\n".join(out))
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["check", "write"])
    ap.add_argument("--ref", help="results JSON of the ref adapter, for the ref column")
    ap.add_argument("--runner", default=os.path.join(ROOT, "bazel-bin", "conformance",
                                                      "pecs-syscall"),
                    help="a built pecs runner, asked for its cases with --list")
    ap.add_argument("--doc", default=DOC)
    args = ap.parse_args(argv)
    problems = process(args.runner, args.command == "write", args.ref, args.doc)
    for p in problems:
        print(p, file=sys.stderr)
    if args.command == "check":
        print(f"behaviours: {len(problems)} problem(s)")
    return 1 if problems and args.command == "check" else 0


if __name__ == "__main__":
    sys.exit(main())
