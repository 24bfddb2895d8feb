"""Profiler-stream vectors: FXT and symbolizer-markup streams, what they decode to, and the
PERF_RECORD_SAMPLE bytes an engine must write for them.

Everything is built from the formats' bit layouts (the FXT spec's [lo..hi] fields, the
markup spec's grammar) and the UAPI sample layout, with this package's own packing
helpers. Nothing is parsed back and no pecs C code is consulted: each builder records the
outcome it expects while it appends bytes. The parts:

    stream_sample.py    the PERF_RECORD_SAMPLE bytes of a decoded sample
    stream_outcome.py   a stream's bytes beside the samples and error they must give
    fxt_pack.py         FXT records packed bit by bit, and the Fxt stream builder
    markup_pack.py      the Markup stream builder
    stream_emit.py      notes, references and the common streamTest shape
    fxt_vectors.py      the FXT vectors
    markup_vectors.py   the markup vectors

    python3 -m pecs_vectors.stream_gen --check | --write

tcIds are handed out in the order tests are added and published ids never change meaning
(docs/vectors.md; lint enforces it): add new tests at the end of a file's last builder, never between
existing ones.
"""

import argparse
import os
import sys

from . import document
from .fxt_vectors import build_fxt
from .markup_vectors import build_markup

FXT_PATH = "fxt/fxt_stream.json"
MARKUP_PATH = "markup/markup_stream.json"


def render() -> dict[str, str]:
    return {FXT_PATH: document.dumps(build_fxt().to_dict()),
            MARKUP_PATH: document.dumps(build_markup().to_dict())}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--write", action="store_true")
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--vectors-dir", default=os.path.normpath(os.path.join(here, "..", "..", "vectors")))
    args = p.parse_args(argv)
    stale = 0
    for path, text in render().items():
        full = os.path.join(args.vectors_dir, path)
        if args.write:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
            print("wrote vectors/%s" % path)
            continue
        try:
            with open(full, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            print("vectors/%s differs from the generator" % path)
            stale += 1
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
