#!/usr/bin/python3
"""report.py OUTDIR: rewrites the report from the results files in OUTDIR.

Kept for scripts that call it; the driver is `python3 -m pecs_harness report`."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from pecs_harness.cli import main  # noqa: E402

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print("usage: report.py OUTDIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(["report", "--out", sys.argv[1]]))
