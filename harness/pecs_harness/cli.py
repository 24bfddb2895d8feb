"""The pecs driver's command line: one registry of commands (COMMANDS), each with its
options built from shared groups, and one dispatch. A usage or setup error is one line on
stderr and exit status 2."""
import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from . import choose, commands, discovery, impls

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

EPILOG = """implementations (--impl, repeatable):
""" + (impls.__doc__ or "").split("\n", 2)[2] + """
examples:
  python3 -m pecs_harness run                       # ref, kernel (root, unprivileged), example
  python3 -m pecs_harness run --impl plugin:mine=./libmine.so --filter 'Required.Read.*'
  python3 -m pecs_harness run --strict --impl plugin:mine=./libmine.so   # no 'draft:' reasons
  python3 -m pecs_harness report out/               # re-render from the results in out/
  python3 -m pecs_harness report --baseline old/summary.json out/   # and what changed since
  python3 -m pecs_harness diff before.json after.json  # regressions, fixes, XFAILs moved
  python3 -m pecs_harness expectations out/mine.json --write conformance/expectations/mine.txt
  python3 -m pecs_harness report --out out import:starnix=from-starnix.json
  python3 -m pecs_harness capture                   # record this kernel's answers
  python3 -m pecs_harness crosscheck                # captured vectors vs this kernel
  python3 -m pecs_harness stress --impl ref --runs 10   # verdicts steady with every core busy

exit status: 0 when every implementation passes its gate, 1 when one does not,
2 for usage or setup errors (a runner or plugin missing, a runner that refuses the
implementation before any case): one line, and no report.
"""

STRESS_EPILOG = """examples:
  python3 -m pecs_harness stress --impl ref --runs 10          # 10 runs, every core busy
  python3 -m pecs_harness stress --impl syscall --load 4 --filter 'Required.Read.*'

A case passes the stress when it gives the same verdict (its status after the expectations
file) in every run and every run passes its gate.

exit status: 0 when every case kept its verdict and every run passed its gate; 1 when a
case changed verdict or a run failed its gate; 2 when a run broke (no results) or for
usage and setup errors.
"""


# ---- option groups, shared by the commands that take them ----

def _root(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", default=ROOT, help="the pecs checkout (default: %(default)s)")


def _gating(p: argparse.ArgumentParser) -> None:
    """How runs are gated: the expectations files and how strict the gate is."""
    p.add_argument("--expectations", action="append", metavar="LABEL=FILE",
                   help="expectations file for an implementation (default: "
                        "conformance/expectations/<label>.txt when it exists; '' for none)")
    p.add_argument("--strict", action="store_true",
                   help="fail the gate on lines whose reason still starts with 'draft:' "
                        "(without it, the gate warns)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def _report_out(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="out", help="output directory (default: out)")
    p.add_argument("--behaviours", metavar="FILE",
                   help="behaviours catalogue (default: docs/behaviours.md)")


def _running(p: argparse.ArgumentParser, run_timeout: int, what: str) -> None:
    """Which implementations to run, and how."""
    p.add_argument("--impl", action="append", metavar="SPEC",
                   help="implementation to %s (default: %s; the ones not built are skipped "
                        "with a note)" % (what, ", ".join(choose.DEFAULT_IMPLS)))
    p.add_argument("--filter", help="case-id globs, as the runners take them")
    p.add_argument("--timeout", type=int, default=60, help="per-case limit in seconds")
    p.add_argument("--run-timeout", type=int, default=run_timeout,
                   help="limit for one run of an implementation's suite in seconds "
                        "(default: %(default)s)")
    p.add_argument("--bin", help="where the built runners are (default: ROOT/bazel-bin)")
    p.add_argument("--runner", action="append", metavar="NAME=PATH",
                   help="use this runner binary for ref, syscall, plugin or pipe")


def _capture_tool(p: argparse.ArgumentParser) -> None:
    _root(p)
    p.add_argument("--capture", help="the capture tool (default: "
                                     "ROOT/bazel-bin/conformance/tools/pecs-capture)")


# ---- the commands ----

def _args_run(p: argparse.ArgumentParser) -> None:
    _root(p)
    _report_out(p)
    _gating(p)
    _running(p, 3600, "run")


def _args_report(p: argparse.ArgumentParser) -> None:
    _root(p)
    _report_out(p)
    _gating(p)
    p.add_argument("inputs", nargs="*", metavar="DIR|[LABEL=]FILE|import:SPEC",
                   help="results files (pecs-results-1) or directories of them "
                        "(default: the --out directory)")
    p.add_argument("--baseline", metavar="OLD",
                   help="an earlier run's summary.json: the report shows what changed since")


def _args_stress(p: argparse.ArgumentParser) -> None:
    _root(p)
    _gating(p)
    _running(p, 1800, "stress")
    p.add_argument("--out", default=os.path.join("out", "stress"),
                   help="where each run's results go: OUT/LABEL/run-N/ (default: %(default)s)")
    p.add_argument("--runs", type=int, default=10, metavar="K",
                   help="suite runs per implementation (default: %(default)s)")
    p.add_argument("--load", type=int, default=None, metavar="N",
                   help="busy loops running meanwhile (default: one per core, %d here)" %
                        commands.cores())
    p.add_argument("--load-limit", type=int, default=7200, metavar="SECONDS",
                   help="a busy loop ends by itself after this long (default: %(default)s)")
    p.add_argument("--junit", metavar="FILE",
                   help="also write JUnit XML: one test per implementation and case")


def _args_diff(p: argparse.ArgumentParser) -> None:
    p.add_argument("a", metavar="A", help="the earlier run: results FILE[,FILE] or summary.json")
    p.add_argument("b", metavar="B", help="the later run, as A")
    p.add_argument("--label", help="the implementation, in summary files that hold several")
    p.add_argument("--force", action="store_true",
                   help="compare runs of different implementations anyway")


def _args_expectations(p: argparse.ArgumentParser) -> None:
    p.add_argument("results", metavar="RESULTS", help="results FILE[,FILE] of the run")
    p.add_argument("--write", metavar="FILE",
                   help="the expectations file to update (created when missing); "
                        "default: print the draft on stdout")


def _args_crosscheck(p: argparse.ArgumentParser) -> None:
    _capture_tool(p)
    p.add_argument("files", nargs="*", help="captured vector files "
                                            "(default: ROOT/vectors/captured/*.json)")


def _args_capture(p: argparse.ArgumentParser) -> None:
    _capture_tool(p)
    p.add_argument("--out", help="vector file to write (default: ROOT/vectors/captured/"
                                 "linux_capture.json)")


def _diff(args: argparse.Namespace) -> int:
    from . import diff
    return diff.main(args.a, args.b, args.label, args.force)


def _expectations(args: argparse.Namespace) -> int:
    from . import draft
    return draft.main(args.results, args.write)


def _crosscheck(args: argparse.Namespace) -> int:
    from . import crosscheck
    return crosscheck.main(args)


def _doc(module: str) -> str:
    import importlib
    return importlib.import_module("pecs_harness." + module).__doc__ or ""


@dataclass(frozen=True)
class Command:
    run: Callable[[argparse.Namespace], int]
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    epilog: str | None = None
    doc_of: str | None = None  # the module whose docstring describes the command


COMMANDS: dict[str, Command] = {
    "run": Command(commands.run, "run implementations, then write the report", _args_run,
                   EPILOG),
    "report": Command(commands.report, "write the report from results files already there",
                      _args_report),
    "stress": Command(commands.stress, "run the suite K times per implementation with every "
                                       "core loaded; report each case whose verdict changed",
                      _args_stress, STRESS_EPILOG),
    "diff": Command(_diff, "what changed between two runs of one implementation: "
                           "regressions, fixes, XFAIL messages changed", _args_diff,
                    doc_of="diff"),
    "expectations": Command(_expectations, "draft an expectations file from a results file, "
                                           "or update one", _args_expectations, doc_of="draft"),
    "crosscheck": Command(_crosscheck, "replay captured vectors against this kernel",
                          _args_crosscheck),
    "capture": Command(commands.capture, "record this kernel's answers to the capture tool's "
                                         "probes as linux-capture vectors", _args_capture),
}


class _Parser(argparse.ArgumentParser):
    """argparse's, but an unknown command says so in one line."""

    def error(self, message: str) -> NoReturn:
        raise SystemExit(_usage_error(self.prog, message))


def _usage_error(prog: str, message: str) -> int:
    if "invalid choice" in message and "argument COMMAND" in message:
        name = message.split("'")[1] if "'" in message else "?"
        message = "%s: unknown command (known: %s)" % (name, ", ".join(COMMANDS))
    print("%s: %s" % (prog, message), file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="pecs_harness", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Runs the pecs conformance suite against implementations, gates the "
                    "results with their expectations files and writes report.md, report.html "
                    "and summary.json.", epilog=EPILOG)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, c in COMMANDS.items():
        p = sub.add_parser(name, help=c.help, epilog=c.epilog,
                           description=_doc(c.doc_of) if c.doc_of else None,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        c.arguments(p)
    return ap


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return 2
    try:
        return COMMANDS[args.command].run(args)
    except (impls.SpecError, discovery.SetupError) as e:
        print("pecs_harness: %s" % e, file=sys.stderr)
        return 2
