#!/usr/bin/python3
"""report.py OUTDIR: rewrites the report from the results files in OUTDIR.

Kept for scripts that call it; the driver is `python3 -m pecs_harness report`, which this
starts with harness/ on PYTHONPATH."""
import os
import sys


def main(argv: list) -> int:
    if len(argv) != 1 or argv[0].startswith("-"):
        print("usage: report.py OUTDIR", file=sys.stderr)
        return 2
    harness = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join(p for p in (harness, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path)
    cmd = [sys.executable, "-m", "pecs_harness", "report", "--out", argv[0]]
    os.execve(sys.executable, cmd, env)
    return 2  # not reached: execve replaces this process or raises


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
