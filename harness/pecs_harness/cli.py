"""The pecs driver's command line."""
import argparse
import copy
import glob
import json
import os
import sys

from . import behaviours as behaviours_mod
from . import expectations as expect_mod
from . import clients_report, execute, impls, junit, model, report_html, report_md
from . import version as version_mod
from . import results as results_mod

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_IMPLS = ["ref", "syscall", "syscall-unprivileged", "starnix_snapshot"]

EPILOG = """implementations (--impl, repeatable):
""" + (impls.__doc__ or "").split("\n", 2)[2] + """
examples:
  python3 -m pecs_harness run                       # ref, kernel (root, unprivileged), example
  python3 -m pecs_harness run --impl plugin:mine=./libmine.so --filter 'Required.Read.*'
  python3 -m pecs_harness report out/               # re-render from the results in out/
  python3 -m pecs_harness report --baseline old/summary.json out/   # and what changed since
  python3 -m pecs_harness diff before.json after.json  # regressions, fixes, XFAILs moved
  python3 -m pecs_harness expectations out/mine.json --write conformance/expectations/mine.txt
  python3 -m pecs_harness report --out out import:starnix=from-starnix.json
  python3 -m pecs_harness capture                   # record this kernel's answers
  python3 -m pecs_harness crosscheck                # captured vectors vs this kernel
  python3 -m pecs_harness stress --impl ref --runs 10   # verdicts steady with every core busy

exit status: 0 when every implementation passes its gate, 1 when one does not,
2 for usage or setup errors.
"""


def _pairs(values: list[str] | None, what: str) -> dict[str, str]:
    out = {}
    for v in values or []:
        k, eq, path = v.partition("=")
        if not eq or not k:
            raise SystemExit("pecs_harness: %s wants LABEL=PATH, got '%s'" % (what, v))
        out[k] = path
    return out


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="out", help="output directory (default: out)")
    p.add_argument("--root", default=ROOT, help="the pecs checkout (default: %(default)s)")
    p.add_argument("--expectations", action="append", metavar="LABEL=FILE",
                   help="expectations file for an implementation (default: "
                        "conformance/expectations/<label>.txt when it exists; '' for none)")
    p.add_argument("--behaviours", metavar="FILE",
                   help="behaviours catalogue (default: docs/behaviours.md)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


STRESS_EPILOG = """examples:
  python3 -m pecs_harness stress --impl ref --runs 10          # 10 runs, every core busy
  python3 -m pecs_harness stress --impl syscall --load 4 --filter 'Required.Read.*'

A case passes the stress when it gives the same verdict (its status after the expectations
file) in every run and every run passes its gate.

exit status: 0 when every case kept its verdict and every run passed its gate; 1 when a
case changed verdict or a run failed its gate; 2 when a run broke (no results) or for
usage and setup errors.
"""


def _file_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The commands that only read results files: diff and expectations."""
    df = sub.add_parser("diff", help="what changed between two runs of one implementation: "
                                     "regressions, fixes, XFAIL messages changed",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description=(diff_doc() or ""))
    df.add_argument("a", metavar="A", help="the earlier run: results FILE[,FILE] or summary.json")
    df.add_argument("b", metavar="B", help="the later run, as A")
    df.add_argument("--label", help="the implementation, in summary files that hold several")
    df.add_argument("--force", action="store_true",
                    help="compare runs of different implementations anyway")
    ex = sub.add_parser("expectations", help="draft an expectations file from a results file, "
                                             "or update one",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description=(draft_doc() or ""))
    ex.add_argument("results", metavar="RESULTS", help="results FILE[,FILE] of the run")
    ex.add_argument("--write", metavar="FILE",
                    help="the expectations file to update (created when missing); "
                         "default: print the draft on stdout")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="pecs_harness", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Runs the pecs conformance suite against implementations, gates the "
                    "results with their expectations files and writes report.md, report.html "
                    "and summary.json.", epilog=EPILOG)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="run implementations, then write the report",
                         formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG)
    _common(run)
    run.add_argument("--impl", action="append", metavar="SPEC",
                     help="implementation to run (default: %s; the ones not built are "
                          "skipped with a note)" % ", ".join(DEFAULT_IMPLS))
    run.add_argument("--filter", help="case-id globs, as the runners take them")
    run.add_argument("--timeout", type=int, default=60, help="per-case limit in seconds")
    run.add_argument("--run-timeout", type=int, default=3600,
                     help="limit for one implementation's whole run in seconds")
    run.add_argument("--bin", help="where the built runners are (default: ROOT/bazel-bin)")
    run.add_argument("--runner", action="append", metavar="NAME=PATH",
                     help="use this runner binary for ref, syscall, plugin or pipe")
    st = sub.add_parser("stress", help="run the suite K times per implementation with every "
                                       "core loaded; report each case whose verdict changed",
                        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=STRESS_EPILOG)
    st.add_argument("--out", default=os.path.join("out", "stress"),
                    help="where each run's results go: OUT/LABEL/run-N/ (default: %(default)s)")
    st.add_argument("--root", default=ROOT, help="the pecs checkout (default: %(default)s)")
    st.add_argument("--expectations", action="append", metavar="LABEL=FILE",
                    help="expectations file for an implementation (as for run)")
    st.add_argument("--impl", action="append", metavar="SPEC",
                    help="implementation to stress (default: %s)" % ", ".join(DEFAULT_IMPLS))
    st.add_argument("--runs", type=int, default=10, metavar="K",
                    help="suite runs per implementation (default: %(default)s)")
    st.add_argument("--load", type=int, default=None, metavar="N",
                    help="busy loops running meanwhile (default: one per core, %d here)" %
                         _cores())
    st.add_argument("--load-limit", type=int, default=7200, metavar="SECONDS",
                    help="a busy loop ends by itself after this long (default: %(default)s)")
    st.add_argument("--filter", help="case-id globs, as the runners take them")
    st.add_argument("--timeout", type=int, default=60, help="per-case limit in seconds")
    st.add_argument("--run-timeout", type=int, default=1800,
                    help="limit for one run of the suite in seconds")
    st.add_argument("--bin", help="where the built runners are (default: ROOT/bazel-bin)")
    st.add_argument("--runner", action="append", metavar="NAME=PATH",
                    help="use this runner binary for ref, syscall, plugin or pipe")
    st.add_argument("--junit", metavar="FILE",
                    help="also write JUnit XML: one test per implementation and case")
    st.add_argument("--quiet", action="store_true", help="no progress lines")
    rep = sub.add_parser("report", help="write the report from results files already there")
    _common(rep)
    rep.add_argument("inputs", nargs="*", metavar="DIR|[LABEL=]FILE|import:SPEC",
                     help="results files (pecs-results-1) or directories of them "
                          "(default: the --out directory)")
    rep.add_argument("--baseline", metavar="OLD",
                     help="an earlier run's summary.json: the report shows what changed since")
    _file_commands(sub)
    cc = sub.add_parser("crosscheck", help="replay captured vectors against this kernel")
    cc.add_argument("--root", default=ROOT)
    cc.add_argument("--capture", help="the capture tool (default: "
                                      "ROOT/bazel-bin/conformance/tools/pecs-capture)")
    cc.add_argument("files", nargs="*", help="captured vector files "
                                               "(default: ROOT/vectors/captured/*.json)")
    capt = sub.add_parser("capture", help="record this kernel's answers to the capture tool's "
                                          "probes as linux-capture vectors")
    capt.add_argument("--root", default=ROOT)
    capt.add_argument("--capture", help="the capture tool (default: "
                                        "ROOT/bazel-bin/conformance/tools/pecs-capture)")
    capt.add_argument("--out", help="vector file to write (default: ROOT/vectors/captured/"
                                    "linux_capture.json)")
    return ap


def draft_doc() -> str | None:
    from . import draft
    return draft.__doc__


def diff_doc() -> str | None:
    from . import diff
    return diff.__doc__


def cmd_capture(args: argparse.Namespace) -> int:
    from . import capture
    tool = args.capture or capture.default_tool(args.root)
    out = args.out or os.path.join(args.root, capture.DEFAULT_FILE)
    try:
        doc = capture.capture(tool, out)
    except (capture.CaptureError, OSError) as e:
        print("pecs_harness: %s" % e, file=sys.stderr)
        return 2
    print("capture: %d vectors from Linux %s written to %s; run the vector lint before "
          "committing (a published tcId never changes meaning)" % (
              doc["numberOfTests"], doc["testGroups"][0]["kernel"]["release"], out))
    return 0


def _catalogue(args: argparse.Namespace) -> tuple[str, list[behaviours_mod.Row] | None]:
    path = args.behaviours or os.path.join(args.root, "docs", "behaviours.md")
    return path, behaviours_mod.load(path)


def _expectations_for(args: argparse.Namespace, label: str) -> str | None:
    given = _pairs(args.expectations, "--expectations")
    if label in given:
        p = given[label]
        return os.path.abspath(p) if p else None
    return impls.default_expectations(args.root, label)


def _unique(label: str, taken: set[str]) -> str:
    base, n = label, 2
    while label in taken:
        label = "%s-%d" % (base, n)
        n += 1
    taken.add(label)
    return label


def _choose(args: argparse.Namespace, progress: execute.Progress) -> list[impls.Impl] | None:
    """The implementations named by --impl (or the defaults); None after a message when one
    named cannot be run."""
    loc = impls.Locator(args.root, args.bin, _pairs(args.runner, "--runner"))
    chosen = []
    explicit = bool(args.impl)
    for spec in args.impl or DEFAULT_IMPLS:
        if spec == "syscall-unprivileged" and not explicit and os.geteuid() != 0:
            progress.say("pecs: not root: skipping syscall-unprivileged (the syscall run is "
                         "already unprivileged)")
            continue
        try:
            chosen.append(impls.parse(spec, loc))
        except impls.SpecError as e:
            if explicit:
                print("pecs_harness: %s" % e, file=sys.stderr)
                return None
            progress.say("pecs: skipping %s: %s" % (spec, e))
    if not chosen:
        print("pecs_harness: nothing to run", file=sys.stderr)
        return None
    return chosen


def _run_one(args: argparse.Namespace, impl: impls.Impl, out: str,
             progress: execute.Progress) -> tuple[results_mod.Run, list[str]]:
    """Runs impl into out and returns its gated results.Run and every case id it holds."""
    to_run = impl
    if impl.expectations and expect_mod.load_all(impl.expectations)[1]:
        # A runner stops at a bad line before running anything (older ones), so it gets no
        # file: the gate below applies the good lines and fails with the bad ones.
        to_run = copy.copy(impl)
        to_run.expectations = None
    data, error, ids = execute.run(to_run, out, progress, args.filter, args.timeout,
                                   args.run_timeout)
    run = results_mod.Run(impl.label, impl.kind, impl.source, data, error)
    run.want_expectations = impl.expectations
    run.partial = bool(args.filter)
    # The runner's own --list is the whole suite it holds: gate now, so the line with
    # its counts appears as each implementation finishes.
    _gate(run, set(ids) | set(r.id for r in run.results), progress)
    return run, ids


def cmd_run(args: argparse.Namespace) -> int:
    progress = execute.Progress(quiet=args.quiet)
    chosen = _choose(args, progress)
    if chosen is None:
        return 2
    os.makedirs(args.out, exist_ok=True)
    runs: list[results_mod.Run] = []
    all_ids: set[str] = set()
    taken: set[str] = set()
    progress.say("pecs: running %d implementation(s) into %s" % (len(chosen), args.out))
    for impl in chosen:
        if impl.kind == "import":
            runs.append(_import_run(args, impl, taken))
            continue
        if impl.kind == "vm":  # one boot, a run per pass: vm.py
            runs.extend(_vm_runs(args, impl, taken, progress))
            continue
        impl.label = _unique(impl.label, taken)
        impl.expectations = _expectations_for(args, impl.label)
        run, ids = _run_one(args, impl, args.out, progress)
        all_ids.update(ids)
        runs.append(run)
    return _finish(args, runs, all_ids, progress)


def _vm_runs(args: argparse.Namespace, impl: impls.Impl, taken: set[str],
             progress: execute.Progress) -> list[results_mod.Run]:
    from . import vm
    assert isinstance(impl, vm.VmImpl)
    impl.label = _unique(impl.label, taken)
    taken.add(impl.label + "-unprivileged")
    return vm.run(impl, args.out, progress, args.filter, args.timeout, args.run_timeout,
                  lambda label: _expectations_for(args, label))


def _cores() -> int:
    """The cores this process may run on: a container or taskset may allow fewer than the
    machine has, and loading cores we cannot use would only slow the loops down."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cmd_stress(args: argparse.Namespace) -> int:
    from . import stress
    progress = execute.Progress(quiet=args.quiet, every=30.0)
    if args.runs < 1:
        print("pecs_harness: --runs wants at least 1", file=sys.stderr)
        return 2
    chosen = _choose(args, progress)
    if chosen is None:
        return 2
    load = args.load if args.load is not None else _cores()
    outcomes: list[stress.Outcome] = []
    taken: set[str] = set()
    def say(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    with stress.Loader(load, args.load_limit) as loader:
        print("stress: %d run(s) each of %s, %d busy loop(s) (pids %s)" % (
            args.runs, ", ".join(i.label for i in chosen), load,
            " ".join(map(str, loader.pids())) or "none"), flush=True)
        for impl in chosen:
            impl.label = _unique(impl.label, taken)
            impl.expectations = _expectations_for(args, impl.label)

            def run_one(n: int, impl: impls.Impl = impl) -> results_mod.Run:
                out = os.path.join(args.out, impl.label, "run-%d" % n)
                os.makedirs(out, exist_ok=True)
                return _run_one(args, impl, out, progress)[0]

            outcome = stress.stress(run_one, impl.label, args.runs, say)
            for line in stress.describe(outcome, args.runs, load):
                print(line, flush=True)
            outcomes.append(outcome)
    if args.junit:
        stress.write_junit(outcomes, args.runs, args.junit)
    changed = sum(len(o.changed) for o in outcomes)
    gate = [o.label for o in outcomes if o.gate_failures]
    broke = [o.label for o in outcomes if o.broken]
    print("stress: %d implementation(s), %d run(s) each, %d busy loop(s): %d case(s) changed "
          "verdict%s%s: %s" % (
              len(outcomes), args.runs, load, changed,
              "; a run failed the gate: " + ", ".join(gate) if gate else "",
              "; a run broke: " + ", ".join(broke) if broke else "",
              "PASS" if all(o.ok for o in outcomes) else "FAIL"))
    if any(o.broken for o in outcomes):
        return 2
    return 0 if all(o.ok for o in outcomes) else 1


def _import_run(args: argparse.Namespace, impl: impls.Impl, taken: set[str]) -> results_mod.Run:
    """Results written elsewhere. Their expectations: --expectations, else
    conformance/expectations/<label>.txt, else the file the runner used if it is here, else
    the statuses as the runner gated them."""
    try:
        parts = [results_mod.load(p) for p in impl.imports]
        data = results_mod.merge_shards(parts, ", ".join(impl.imports))
    except results_mod.ResultsError as e:
        run = results_mod.Run(_unique(impl.label or "imported", taken), "import", impl.source,
                              None, str(e))
        run.want_expectations = None
        return run
    # The label is the implementation's: the one given, else the results file's name. The
    # runner's impl is the adapter's ("syscall" for the static binary run inside qemu),
    # and taking it would gate another system with Linux's own file.
    run = results_mod.Run(_unique(impl.label or _import_label(impl.imports) or data["impl"],
                                  taken), "import", impl.source, data)
    run.want_expectations = _expectations_for(args, run.label)
    if run.want_expectations is None:
        used = data.get("expectations")
        if used and os.path.isfile(used):
            run.want_expectations = used
        elif used and not _explicitly_none(args, run.label):
            run.want_expectations = results_mod.AS_WRITTEN
    return run


def _import_label(paths: list[str]) -> str:
    """"qemu" for qemu.json or pecs-qemu.json (a shard's "-shardN" suffix is kept)."""
    base = os.path.basename(paths[0]) if paths else ""
    if base.endswith(".json"):
        base = base[:-5]
    if base.startswith("pecs-"):
        base = base[5:]
    return base


def _explicitly_none(args: argparse.Namespace, label: str) -> bool:
    return _pairs(args.expectations, "--expectations").get(label, None) == ""


def _suite_ids(root: str) -> set[str]:
    """Every case id of this checkout's suite, from any built runner (they all link the same
    cases); empty when none is built. Results imported from a filtered run do not list every
    case, so stale lines are judged against these too."""
    for base in (os.path.join(root, "bazel-bin"), root):  # a checkout, or Bazel's runfiles
        for rel in ("conformance/pecs-syscall", "conformance/pecs-ref"):
            path = os.path.join(base, rel)
            if not os.path.isfile(path):
                continue
            try:
                return set(execute.list_cases([path], dict(os.environ)))
            except Exception:  # it does not start here: judge by the results alone
                continue
    return set()


def _finish(args: argparse.Namespace, runs: list[results_mod.Run], all_ids: set[str],
            progress: execute.Progress) -> int:
    for run in runs:
        all_ids.update(r.id for r in run.results)
    if any(not r.gated for r in runs):
        all_ids.update(_suite_ids(args.root))
    for run in runs:
        if not run.gated:
            _gate(run, all_ids, progress)
    path, catalogue = _catalogue(args)
    summary = model.build(runs, catalogue, os.path.relpath(path, args.root)
                          if path.startswith(args.root) else path, root=os.path.abspath(args.root),
                          suite_version=version_mod.checkout_version(args.root))
    try:
        baseline = report_html.load_baseline(args.baseline) if getattr(
            args, "baseline", None) else None
    except report_html.BaselineError as e:
        print("pecs_harness: %s" % e, file=sys.stderr)
        return 2
    write_reports(summary, args.out, baseline, os.path.relpath(args.root, args.out))
    print_console(summary, args.out)
    return 0 if summary["ok"] else 1


def _gate(run: results_mod.Run, all_ids: set[str], progress: execute.Progress) -> None:
    run.gate(run.want_expectations, all_ids)
    run.gated = True
    if run.root_cause:
        progress.say("  %s: root cause: %s" % (run.label, run.root_cause))
    progress.say("  %s: %s: %s" % (run.label, _counts_line(run.counts),
                                   "ok" if run.ok else "FAIL"))


def _counts_line(c: dict[str, int]) -> str:
    parts = ["%d %s" % (c[k], k) for k in ("passed", "failed", "xfail", "xpass", "unsupported",
                                           "env_skipped", "broken", "crashed", "stale") if c[k]]
    return ", ".join(parts) or "no cases"


def write_reports(summary: model.Summary, out: str, baseline: model.Summary | None = None,
                  source_root: str = "..") -> None:
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=1, sort_keys=False)
        f.write("\n")
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write(report_md.render(summary))
        f.write(clients_report.report_section(out))  # ./pecs clients' results, when there
    with open(os.path.join(out, "report.html"), "w", encoding="utf-8") as f:
        f.write(report_html.render(summary, clients_report.load(out), baseline, source_root))
    junit.write(summary, os.path.join(out, "junit.xml"))


def print_console(summary: model.Summary, out: str) -> None:
    cols = [("pass", "passed"), ("fail", "failed"), ("xfail", "xfail"), ("xpass", "xpass"),
            ("unsup", "unsupported"), ("env", "env_skipped"), ("broken", "broken"),
            ("crash", "crashed"), ("stale", "stale")]
    width = max([len(i["label"]) for i in summary["implementations"]] + [14])
    print()
    print("%-*s " % (width, "implementation") + " ".join("%6s" % c for c, _ in cols) + "  gate")
    for i in summary["implementations"]:
        print("%-*s " % (width, i["label"]) + " ".join("%6d" % i["counts"][k] for _, k in cols) +
              "  " + ("ok" if i["ok"] else "FAIL"))
    for i in summary["implementations"]:
        if i.get("root_cause"):
            print("  %s: root cause: %s" % (i["label"], i["root_cause"]))
        for a in i.get("assumed", []):
            print("  %s: assumed host fact: %s" % (i["label"], a))
    for i in summary["implementations"]:
        for p in i["problems"][:10]:
            print("  %s: %s" % (i["label"], p))
        if len(i["problems"]) > 10:
            print("  %s: ... %d more in the report" % (i["label"], len(i["problems"]) - 10))
    cov = summary["coverage"]
    if cov["found"]:
        print("coverage: %d behaviours, %d without a case, %d without a vector" % (
            len(cov["behaviours"]), len(cov["no_case"]), len(cov["no_vector"])))
    print("report: %s (also report.md, summary.json, junit.xml)  suite %s  verdict: %s" % (
        os.path.join(out, "report.html"), summary.get("suite_version", "unknown"),
        "PASS" if summary["ok"] else "FAIL"))


def _report_inputs(args: argparse.Namespace) -> list[str]:
    inputs = args.inputs or [args.out]
    specs = []
    for item in inputs:
        if item.startswith("import:"):
            specs.append(item)
        elif os.path.isdir(item):
            files = [p for p in sorted(glob.glob(os.path.join(item, "*.json")))
                     if os.path.basename(p) != "summary.json"]
            order = _previous_order(item)
            files.sort(key=lambda p: order.get(os.path.basename(p)[:-5], len(order)))
            specs.extend("import:%s=%s" % (os.path.basename(p)[:-5], p) for p in files)
        else:
            specs.append("import:" + item)
    return specs


def _previous_order(out: str) -> dict[str, int]:
    """Column order of the last report written there, so a re-render keeps it."""
    try:
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as f:
            labels = [i["label"] for i in json.load(f)["implementations"]]
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    return {label: n for n, label in enumerate(labels)}


def cmd_report(args: argparse.Namespace) -> int:
    loc = impls.Locator(args.root)
    runs: list[results_mod.Run] = []
    taken: set[str] = set()
    for spec in _report_inputs(args):
        try:
            impl = impls.parse(spec, loc)
        except impls.SpecError as e:
            print("pecs_harness: %s" % e, file=sys.stderr)
            return 2
        runs.append(_import_run(args, impl, taken))
    if not runs:
        print("pecs_harness: no results files found in %s" % " ".join(args.inputs or [args.out]),
              file=sys.stderr)
        return 2
    return _finish(args, runs, set(), execute.Progress(quiet=args.quiet))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "report":
        return cmd_report(args)
    if args.command == "stress":
        return cmd_stress(args)
    if args.command == "diff":
        from . import diff
        return diff.main(args.a, args.b, args.label, args.force)
    if args.command == "expectations":
        from . import draft
        return draft.main(args.results, args.write)
    if args.command == "capture":
        return cmd_capture(args)
    if args.command == "crosscheck":
        from . import crosscheck
        return crosscheck.main(args)
    build_parser().print_help()
    return 2
