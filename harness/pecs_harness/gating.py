"""The gate: a run's expectations file re-applied to its raw statuses, and every problem
that fails it, grouped under the root cause or the check site it shares with others."""
import dataclasses
from collections.abc import Collection, Sequence

from . import expectations as expect_mod
from .case_result import CaseResult, Expectation, shared_sites
from .results import AS_WRITTEN, GatedRun, ProblemGroup, Run
from .rootcause import RootCause
from .statuses import RAW_FAILURES, count

def _directive_problems(run: Run, d: expect_mod.Directives, counts: dict[str, int]) -> list[str]:
    out = []
    where = d.path or "its expectations file"
    if d.floor_line and not run.partial and counts["passed"] < d.floor:
        out.append("%d passed, below the floor of %d in %s:%d: a regression, or lower the "
                   "floor there with the reason" % (counts["passed"], d.floor, d.path,
                                                    d.floor_line))
    mine = sorted(set(run.data.get("features", []))) if run.data else []
    if d.features is not None and run.data is not None and mine != d.features:
        added = sorted(set(mine) - set(d.features))
        dropped = sorted(set(d.features) - set(mine))
        out.append("the claimed features changed from %s:%d (%s%s): if that is meant, "
                   "write '@features %s # why' there" % (
                       d.path, d.features_line,
                       " ".join("+" + f for f in added),
                       (" " if added and dropped else "") + " ".join("-" + f for f in dropped),
                       ",".join(mine) or "-"))
    if run.refusal and not d.accept_refusal_line:
        out.append("%s; the host facts allow the call (privileged %s, perf_event_paranoid "
                   "%s), so the implementation refused it and its %d ENV_SKIPs are not the "
                   "host's: fix it, or accept it with '@accept-refusal # why' in %s" % (
                       run.refusal, "yes" if run.host.get("privileged") else "no",
                       run.host.get("paranoid", "?"), counts["env_skipped"], where))
    return out


def _explained(results: list[CaseResult], causes: Sequence[expect_mod.CauseLine]
               ) -> tuple[list[CaseResult], dict[str, int]]:
    """Results with each failure no line lists made XFAIL by the @root-cause line that
    explains it; and how many cases each such line explained, by entry point."""
    used = {c.entry: 0 for c in causes}
    out = []
    for r in results:
        if r.status in RAW_FAILURES and r.expectation is None:
            for c in causes:
                if RootCause(c.entry, c.errno, 0, 0).explains(r):
                    r = _xfail(r, Expectation(c.path, c.lineno, c.reason))
                    used[c.entry] += 1
                    break
        out.append(r)
    return out, used


def _xfail(r: CaseResult, why: Expectation) -> CaseResult:
    return dataclasses.replace(r, status="XFAIL", expectation=why)


def gate(run: Run, all_case_ids: Collection[str], strict: bool = False) -> GatedRun:
    """The verdict of run.want_expectations applied to the raw statuses. all_case_ids: every
    case of the suite, for stale lines; strict: 'draft:' reasons fail the gate, else they
    are warnings."""
    want = run.want_expectations
    results = run.results
    accepted: dict[str, str] = {}
    warnings: list[str] = []
    if want is AS_WRITTEN:
        assert run.data is not None  # only imported results are kept as written
        shown: str | None = "%s (as applied by the runner)" % run.data["expectations"]
        stale = ["%s:%d: '%s' matches no case in this suite" % (
            run.data["expectations"], s["line"], s["pattern"]) for s in run.data.get("stale", [])]
        errors = list(run.data.get("expectation_errors", []))
        counts = count(results)
        problems = list(run.data.get("gate_problems", []))
    else:
        path = want if isinstance(want, str) else None
        lines: list[expect_mod.Line] = []
        errors = []
        directives = expect_mod.Directives()
        if path:
            directives, errors = expect_mod.load_directives(path)
            # A bad line costs only the gate: the good lines still apply, and every result
            # stays in the report.
            lines, line_errors = expect_mod.load_all(path)
            errors = line_errors + errors
        results = [expect_mod.apply(lines, run.host, r) for r in results]
        results, used = _explained(results, directives.causes)
        stale = [expect_mod.stale_message(l) for l in expect_mod.stale(lines, all_case_ids)]
        accepted = {c.entry: c.where() for c in directives.causes if used[c.entry]}
        shown = path
        counts = count(results)
        problems = _directive_problems(run, directives, counts)
        # Like a stale line, judged on the whole suite only (as directives.c does).
        if not run.partial and run.data is not None:
            problems += ["%s: '@root-cause %s %s' explains no failing case of this run: "
                         "delete the line" % (c.where(), c.entry, c.errno)
                         for c in directives.causes if not used[c.entry]]
        drafts = expect_mod.load_drafts(path) if path else []
        if drafts and strict:
            problems.append("%d line(s) still have a 'draft:' reason (%s): --strict wants "
                            "the real reasons" % (len(drafts), ", ".join(drafts)))
        elif drafts:
            warnings.append("%d line(s) of %s still have a 'draft:' reason: replace each with "
                            "the real one (--strict fails the gate on them)" % (len(drafts), path))
    counts["stale"] = len(stale)
    groups = _groups(run, results, shown, errors, problems, stale)
    flat = _flat(run, results, shown, errors, problems, stale)
    return GatedRun(run, shown, tuple(results), counts, tuple(stale), tuple(errors),
                    tuple(problems), tuple(warnings), tuple(flat), tuple(groups), accepted)


def _advice(run: Run, shown: str | None) -> str:
    if shown:
        return "not in %s: fix it or list it with a reason" % shown
    return ("no expectations file for %s: fix it, or draft one with ./pecs expectations and "
            "give each line a reason" % run.label)


def _run_problems(run: Run, errors: list[str], problems: list[str],
                  stale: list[str]) -> list[str]:
    out = [run.error] if run.error else []
    short = run.data.get("incomplete") if run.data else None
    if short:
        out.append("the run stopped after %d of %d cases (the runner died or was killed): "
                   "the results hold only those" % (short["done"], short["selected"]))
    out += ["expectations: " + e for e in errors]
    out += ["gate: " + p for p in problems]
    out += ["stale: " + s for s in stale]
    return out


def _case_problem(r: CaseResult) -> str:
    if r.status == "XPASS":
        return "XPASS %s: %s" % (r.id, r.message)
    return "%s %s: %s" % (r.status, r.id, r.message or "no message")


def _failing(results: list[CaseResult]) -> list[CaseResult]:
    return [r for r in results if r.status in ("XPASS", "FAIL", "BROKEN", "CRASH")]


def _flat(run: Run, results: list[CaseResult], shown: str | None, errors: list[str],
          problems: list[str], stale: list[str]) -> list[str]:
    """Every problem on its own line, each case's with the advice (junit.xml, stress)."""
    run_level = _run_problems(run, errors, problems, stale)
    cases = [_case_problem(r) + ("" if r.status == "XPASS" else " (%s)" % _advice(run, shown))
             for r in _failing(results)]
    # The run as a whole first as it always was, but stale lines last.
    head = [p for p in run_level if not p.startswith("stale: ")]
    return head + cases + [p for p in run_level if p.startswith("stale: ")]


def _groups(run: Run, results: list[CaseResult], shown: str | None, errors: list[str],
            problems: list[str], stale: list[str]) -> list[ProblemGroup]:
    """The problems of the run as a whole; then each root cause's failures; then each check
    site two or more failures share; then the rest."""
    out = []
    run_level = _run_problems(run, errors, problems, stale)
    if run_level:
        out.append(ProblemGroup(None, None, tuple(run_level)))
    failing = _failing(results)
    advice = _advice(run, shown)
    for cause in run.root_causes:
        mine = [r for r in failing if r.status != "XPASS" and cause.explains(r)]
        if mine:
            out.append(ProblemGroup("root cause: " + cause.text, advice,
                                    tuple(_case_problem(r) for r in mine)))
            failing = [r for r in failing if r not in mine]
    for site, mine in shared_sites([r for r in failing if r.status != "XPASS"],
                                   lambda r: r.message).items():
        out.append(ProblemGroup("check site " + site, advice,
                                tuple(_case_problem(r) for r in mine)))
        failing = [r for r in failing if r not in mine]
    xpass = [r for r in failing if r.status == "XPASS"]
    rest = [r for r in failing if r.status != "XPASS"]
    if rest:
        out.append(ProblemGroup("failures", advice, tuple(_case_problem(r) for r in rest)))
    if xpass:
        out.append(ProblemGroup("listed as failing but passed", None,
                                tuple(_case_problem(r) for r in xpass)))
    return out
