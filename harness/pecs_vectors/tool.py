"""pecs vector tools.

Run from harness/:  /usr/bin/python3 -m pecs_vectors.tool <command>

  lint       validate every file under vectors/ (schema, tcIds, sources, hex, history)
  regen      rewrite the generated files (= python3 -m pecs_vectors.generate --write)
  check      exit 1 with a diff if a generated file is stale (= python3 -m pecs_vectors.generate --check)

Replaying captured vectors against the running kernel needs the capture tool and the
driver's privilege handling: python3 -m pecs_harness crosscheck.
"""

import argparse
import sys


from . import generate, lint


def _cmd_lint(args: argparse.Namespace) -> int:
    problems = lint.lint(args.vectors_dir, history=not args.no_history, rev=args.rev)
    for p in problems:
        print(p)
    files = lint.vector_files(args.vectors_dir)
    print("lint: %d file(s), %d problem(s)" % (len(files), len(problems)))
    return 1 if problems else 0


def _cmd_regen(args: argparse.Namespace) -> int:
    return generate.write(args.vectors_dir)


def _cmd_check(args: argparse.Namespace) -> int:
    rc = generate.check(args.vectors_dir)
    if rc == 0:
        print("check: generated vector files are up to date")
    return rc


COMMANDS = {
    "lint": (_cmd_lint, "validate every vector file"),
    "regen": (_cmd_regen, "rewrite the generated vector files"),
    "check": (_cmd_check, "fail with a diff if generated files are stale"),
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="pecs_vectors.tool", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vectors-dir", default=generate.default_vectors_dir(),
                   help="the vectors/ folder (default: the one next to harness/)")
    sub = p.add_subparsers(dest="command", metavar="command")
    sub.required = True
    for name, (_fn, help_text) in COMMANDS.items():
        sp = sub.add_parser(name, help=help_text)
        if name == "lint":
            sp.add_argument("--no-history", action="store_true",
                            help="skip the comparison with the last commit")
            sp.add_argument("--rev", default="HEAD",
                            help="git revision whose tcIds must keep their meaning (default HEAD)")
    args = p.parse_args(argv)
    return COMMANDS[args.command][0](args)


if __name__ == "__main__":
    sys.exit(main())
