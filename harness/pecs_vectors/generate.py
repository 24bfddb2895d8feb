"""Writes or checks the generated vector files.

    python3 -m pecs_vectors.generate --check   # exit 1 and print a diff if a file is stale
    python3 -m pecs_vectors.generate --write   # rewrite them
"""

import argparse
import difflib
import importlib
import os
import sys
from typing import TextIO


from . import document
from .areas import attr_sizes, ioctl_requests, mmap_page, read_format, record_layout

AREAS = (read_format, mmap_page, attr_sizes, ioctl_requests, record_layout)


def default_vectors_dir() -> str:
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "vectors"))


# Sibling modules that generate further vector files; each has render() -> {path: text}.
# Listed by name so the package still works where one of them is absent.
OTHER_GENERATORS = ("stream_gen",)


def render() -> dict[str, str]:
    """{relative path under vectors/: file text} for every generated file."""
    out = {area.PATH: document.dumps(area.build().to_dict()) for area in AREAS}
    for name in OTHER_GENERATORS:
        try:
            module = importlib.import_module("." + name, __package__)
        except ModuleNotFoundError as e:
            if e.name != "%s.%s" % (__package__, name):
                raise
            continue
        out.update(module.render())
    return out


def check(vectors_dir: str, out: TextIO = sys.stdout) -> int:
    """0 when every file matches what the generator writes, else 1 (with a diff on out)."""
    stale = 0
    for path, text in render().items():
        full = os.path.join(vectors_dir, path)
        try:
            with open(full, encoding="utf-8") as f:
                current = f.read()
        except FileNotFoundError:
            current = ""
        if current != text:
            stale += 1
            out.writelines(difflib.unified_diff(
                current.splitlines(True), text.splitlines(True),
                "a/vectors/" + path, "b/vectors/" + path))
    if stale:
        out.write("%d vector file(s) differ from the generator; run python3 -m pecs_vectors.generate --write\n" % stale)
    return 1 if stale else 0


def write(vectors_dir: str, out: TextIO = sys.stdout) -> int:
    for path, text in render().items():
        full = os.path.join(vectors_dir, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
        out.write("wrote vectors/%s\n" % path)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare with the checked-in files")
    mode.add_argument("--write", action="store_true", help="rewrite the checked-in files")
    p.add_argument("--vectors-dir", default=default_vectors_dir())
    args = p.parse_args(argv)
    return check(args.vectors_dir) if args.check else write(args.vectors_dir)


if __name__ == "__main__":
    sys.exit(main())
