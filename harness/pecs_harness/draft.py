"""pecs_harness expectations: draft an expectations file from a run, or bring one up to
date with it.

From a results file (shards as FILE,FILE) and, with --write FILE, the file as it is:
  - every line whose cases still fail is kept as written, reason and conditions included;
  - a line whose conditions do not hold on this run's host is kept: the run cannot judge it;
  - a line matching no case of the run, or only cases that now pass, is removed (the gate
    would call it stale or XPASS);
  - each root cause of the run becomes one `@root-cause ENTRY ERRNO` line that explains
    every failure following from it, rather than a line a case;
  - every other failing case no active line lists is added, with its failure message as
    the reason to replace: "draft: <message>"; cases failing at one check site go under
    one comment naming it;
  - a new file starts with `@features` (the claimed set) and `@floor` (the run's passes).
A refusal the host facts do not explain is never accepted for you: add `@accept-refusal`
yourself, with the reason.
The changes are listed on stderr (+ added, - removed); the file goes to --write FILE or
stdout. Exit status: 0, or 2 when the results cannot be read.
"""
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from . import expectations as expect_mod
from . import results as results_mod
from .case_result import CaseResult, shared_sites
from .rootcause import RootCause
from .statuses import RAW_FAILURES


@dataclass
class Draft:
    text: str
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: int = 0


def _reason(message: str) -> str:
    # A '#' would start the reason early for a reader, and a newline would end the line.
    text = " ".join((message or "no message").replace("#", "no.").split())
    return "draft: " + (text if len(text) <= 160 else text[:157] + "...")


def _removal(line: expect_mod.Line, results: list[CaseResult]) -> str | None:
    """Why an active line goes, or None to keep it."""
    matched = [r for r in results if line.matches(r.id)]
    if not matched:
        return "matches no case of this run"
    if all(r.raw_status == "PASS" for r in matched):
        return "its case%s pass%s now" % (("s", "") if len(matched) > 1 else ("", "es"))
    return None


def draft(data: results_mod.ResultsData, existing_text: str, path: str,
          causes: Sequence[RootCause]) -> Draft:
    results = [CaseResult.from_json(r) for r in data["results"]]
    host = data.get("host", {})
    lines, _errors = expect_mod.parse_all(existing_text, path)
    written, _ = expect_mod.directives(existing_text, path)
    by_lineno = {l.lineno: l for l in lines}
    active = expect_mod.active_lines(lines, host)
    active_nos = {l.lineno for l in active}
    d = Draft("")
    out: list[str] = []
    if not existing_text.strip():
        # A new file puts the run as a whole under the gate too.
        out.append("# The run as a whole (docs/implementing.md, \"Green means something\").")
        out.append("@features %s  # what %s claims: a change fails the gate until written "
                   "here" % (",".join(sorted(set(data.get("features", [])))) or "-",
                             data.get("impl", "?")))
        passed = sum(1 for r in results if r.raw_status == "PASS")
        out.append("@floor %d  # draft: the passes of the run this file was drafted from" %
                   passed)
        d.added.extend(out[1:])
    for no, raw in enumerate(existing_text.splitlines(), 1):
        line = by_lineno.get(no)
        why = _removal(line, results) if line and no in active_nos else None
        if why:
            d.removed.append("%s:%d: %s (%s)" % (path, no, raw.strip(), why))
            continue
        d.kept += 1 if line else 0
        out.append(raw)
    listed = [l for l in active if not _removal(l, results)]
    new = [r for r in results if r.raw_status in RAW_FAILURES and
           not any(l.matches(r.id) for l in listed)]
    # What a cause explains needs no line of its own: one @root-cause line says it once.
    said = {c.entry: c for c in written.causes}
    for c in written.causes:
        new = [r for r in new if not RootCause(c.entry, c.errno, 0, 0).explains(r)]
    blocks: list[tuple[str, list[str]]] = []
    for cause in causes:
        mine = [r for r in new if cause.explains(r)]
        if not mine or cause.entry in said:
            continue
        new = [r for r in new if r not in mine]
        blocks.append(("# root cause: %s" % cause.text, [
            "@root-cause %s %s  # draft: explains %d failing case(s), e.g. %s" % (
                cause.entry, cause.errno, len(mine), mine[0].id)]))
    width = max([len(r.id) for r in new] + [0])
    for title, cases in _by_site(new, data.get("impl", "?")):
        blocks.append((title, ["%-*s  # %s" % (width, r.id, _reason(r.message)) for r in cases]))
    for title, texts in blocks:
        if out and out[-1].strip():
            out.append("")
        out.append(title)
        out.extend(texts)
        d.added.extend(texts)
    d.text = "\n".join(out) + "\n" if out else ""
    return d


def _by_site(cases: list[CaseResult], impl: str) -> list[tuple[str, list[CaseResult]]]:
    """The failures under the check site two or more of them share, then the rest."""
    groups = [("# check site %s: replace each draft reason with the real one" % site, mine)
              for site, mine in shared_sites(cases, lambda r: r.message).items()]
    shared = {r.id for _, mine in groups for r in mine}
    rest = [r for r in cases if r.id not in shared]
    if rest:
        groups.append(("# failing in the run of %s: replace each draft reason with the real "
                       "one" % impl, rest))
    return groups


def main(spec: str, write: str | None) -> int:
    try:
        data = results_mod.merge_shards([results_mod.load(p) for p in spec.split(",") if p],
                                        spec)
    except results_mod.ResultsError as e:
        print("pecs_harness expectations: %s" % e, file=sys.stderr)
        return 2
    existing = ""
    if write and os.path.exists(write):
        with open(write, encoding="utf-8") as f:
            existing = f.read()
    run = results_mod.Run("draft", "import", spec, data)
    d = draft(data, existing, write or "(new)", run.root_causes)
    for text in d.removed:
        print("- %s" % text, file=sys.stderr)
    for text in d.added if write else []:  # on stdout they are the output itself
        print("+ %s" % text, file=sys.stderr)
    print("expectations: kept %d line(s), removed %d, added %d%s" % (
        d.kept, len(d.removed), len(d.added),
        "; give each 'draft:' line its real reason" if d.added else ""), file=sys.stderr)
    if write:
        with open(write, "w", encoding="utf-8") as f:
            f.write(d.text)
    else:
        sys.stdout.write(d.text)
    return 0
