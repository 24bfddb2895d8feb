"""The bodies of the driver's commands that run or gate implementations: run, report,
stress and capture. cli.py maps the command line onto them; a setup error is raised
(discovery.SetupError, impls.SpecError) for cli.py to print in one line."""
import argparse
import dataclasses
import glob
import json
import os

from . import behaviours as behaviours_mod
from . import choose, console, discovery, execute, gating, impls, model, report_html
from . import expectations as expect_mod
from . import results as results_mod
from . import version as version_mod
from .output import write_reports


def _run_one(args: argparse.Namespace, impl: impls.Impl, out: str,
             progress: execute.Progress) -> tuple[results_mod.GatedRun, list[str]]:
    """Runs impl into out and returns its gated run and every case id it holds."""
    to_run = impl
    if impl.expectations and expect_mod.load_all(impl.expectations)[1]:
        # A runner stops at a bad line before running anything (older ones), so it gets no
        # file: the gate below applies the good lines and fails with the bad ones.
        to_run = dataclasses.replace(impl, expectations=None)
    data, error, ids = execute.run(to_run, out, progress, args.filter, args.timeout,
                                   args.run_timeout)
    run = results_mod.Run(impl.label, impl.kind, impl.source, data, error,
                          want_expectations=impl.expectations, partial=bool(args.filter))
    # The runner's own --list is the whole suite it holds: gate now, so the line with
    # its counts appears as each implementation finishes.
    done = gating.gate(run, set(ids) | set(r.id for r in run.results), args.strict)
    console.gated(done, progress)
    return done, ids


def _preflight(chosen: list[impls.Impl]) -> None:
    """Every runner starts before any runs: a setup error costs seconds, not a suite run."""
    for impl in chosen:
        if impl.kind not in ("import", "vm"):
            discovery.check(impl)


Slot = results_mod.GatedRun | results_mod.Run  # a run gated as it ended, or still to gate


def run(args: argparse.Namespace) -> int:
    progress = execute.Progress(quiet=args.quiet)
    chosen = choose.choose(args, progress)
    _preflight(chosen)
    os.makedirs(args.out, exist_ok=True)
    slots: list[Slot] = []
    all_ids: set[str] = set()
    labels = choose.Labels()
    progress.say("pecs: running %d implementation(s) into %s" % (len(chosen), args.out))
    for impl in chosen:
        if impl.kind == "import":
            slots.append(choose.imported(args, impl, labels))
            continue
        if impl.kind == "vm":  # one boot, a run per pass: vm.py
            slots.extend(_vm_runs(args, impl, labels, progress))
            continue
        done, ids = _run_one(args, choose.labelled(args, impl, labels), args.out, progress)
        all_ids.update(ids)
        slots.append(done)
    return _finish(args, slots, all_ids, progress)


def _vm_runs(args: argparse.Namespace, impl: impls.Impl, labels: choose.Labels,
             progress: execute.Progress) -> list[results_mod.Run]:
    from . import vm
    assert isinstance(impl, vm.VmImpl)
    impl = dataclasses.replace(impl, label=labels.unique(impl.label))
    labels.reserve(impl.label + "-unprivileged")
    return vm.run(impl, args.out, progress, args.filter, args.timeout, args.run_timeout,
                  lambda label: choose.expectations_for(args, label))


def _finish(args: argparse.Namespace, slots: list[Slot], all_ids: set[str],
            progress: execute.Progress) -> int:
    """Gates the runs not gated yet against every case id known, then writes the reports
    and prints the summary; the exit status of the gates."""
    for s in slots:
        all_ids.update(r.id for r in s.results)
    if any(isinstance(s, results_mod.Run) for s in slots):
        all_ids.update(discovery.suite_ids(args.root))
    runs = []
    for s in slots:
        if isinstance(s, results_mod.Run):
            s = gating.gate(s, all_ids, args.strict)
            console.gated(s, progress)
        runs.append(s)
    path = args.behaviours or os.path.join(args.root, "docs", "behaviours.md")
    summary = model.build(runs, behaviours_mod.load(path),
                          os.path.relpath(path, args.root) if path.startswith(args.root)
                          else path, root=os.path.abspath(args.root),
                          suite_version=version_mod.checkout_version(args.root)).to_json()
    baseline = None
    if getattr(args, "baseline", None):
        try:
            baseline = report_html.load_baseline(args.baseline)
        except report_html.BaselineError as e:
            raise discovery.SetupError(str(e))
    write_reports(summary, args.out, baseline, os.path.relpath(args.root, args.out))
    console.print_summary(summary, args.out)
    return 0 if summary["ok"] else 1


def cores() -> int:
    """The cores this process may run on: a container or taskset may allow fewer than the
    machine has, and loading cores we cannot use would only slow the loops down."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def stress(args: argparse.Namespace) -> int:
    from . import stress as stress_mod
    progress = execute.Progress(quiet=args.quiet, every=30.0)
    if args.runs < 1:
        raise impls.SpecError("--runs wants at least 1")
    chosen = choose.choose(args, progress)
    _preflight(chosen)
    load = args.load if args.load is not None else cores()
    outcomes: list[stress_mod.Outcome] = []
    labels = choose.Labels()

    def say(text: str) -> None:
        if not args.quiet:
            print(text, flush=True)

    with stress_mod.Loader(load, args.load_limit) as loader:
        print("stress: %d run(s) each of %s, %d busy loop(s) (pids %s)" % (
            args.runs, ", ".join(i.label for i in chosen), load,
            " ".join(map(str, loader.pids())) or "none"), flush=True)
        for impl in chosen:
            impl = choose.labelled(args, impl, labels)

            def run_one(n: int, impl: impls.Impl = impl) -> results_mod.GatedRun:
                out = os.path.join(args.out, impl.label, "run-%d" % n)
                os.makedirs(out, exist_ok=True)
                return _run_one(args, impl, out, progress)[0]

            outcome = stress_mod.stress(run_one, impl.label, args.runs, say)
            for line in stress_mod.describe(outcome, args.runs, load):
                print(line, flush=True)
            outcomes.append(outcome)
    if args.junit:
        stress_mod.write_junit(outcomes, args.runs, args.junit)
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


def report(args: argparse.Namespace) -> int:
    loc = impls.Locator(args.root)
    labels = choose.Labels()
    slots: list[Slot] = [choose.imported(args, impls.parse(spec, loc), labels)
                         for spec in _report_inputs(args)]
    if not slots:
        raise discovery.SetupError("no results files found in %s" %
                                   " ".join(args.inputs or [args.out]))
    return _finish(args, slots, set(), execute.Progress(quiet=args.quiet))


def capture(args: argparse.Namespace) -> int:
    from . import capture as capture_mod
    tool = args.capture or capture_mod.default_tool(args.root)
    out = args.out or os.path.join(args.root, capture_mod.DEFAULT_FILE)
    try:
        doc = capture_mod.capture(tool, out)
    except (capture_mod.CaptureError, OSError) as e:
        raise discovery.SetupError(str(e))
    print("capture: %d vectors from Linux %s written to %s; run the vector lint before "
          "committing (a published tcId never changes meaning)" % (
              doc["numberOfTests"], doc["testGroups"][0]["kernel"]["release"], out))
    return 0
