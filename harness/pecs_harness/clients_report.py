"""How the real clients' checks (pecs_harness/clients.py) are shown: on the console, as the
report's Markdown section and as its HTML section. All three take the checks as
clients.json holds them (dicts with client, item, values, verdicts, reasons)."""
import html
import json
import os
import sys
import textwrap
from typing import Any, Dict, List, Optional, Sequence, TextIO

STAT_EVENTS = ("task-clock", "cpu-clock", "page-faults", "context-switches")
SHELL_CLIENT = "perf stat (sh -c)"
SHELL_RECORD_CLIENT = "perf record (sh -c)"
DWARF_RECORD_CLIENT = "perf record --call-graph dwarf"

# The command each client ran: pieces of text, each a command line (True) or prose.
COMMANDS = {
    "perf stat": [("perf stat -e %s -- spin" % ",".join(STAT_EVENTS), True)],
    SHELL_CLIENT: [("perf stat -e %s -- sh -c 'spin; spin'" % ",".join(STAT_EVENTS), True),
                   (" (the counts of the processes the shell forks: inherit)", False)],
    "perf record": [("perf record -e cpu-clock -g -- spin", True), (", then ", False),
                    ("perf report --stdio", True), (" and ", False), ("perf script", True)],
    SHELL_RECORD_CLIENT: [("perf record -e cpu-clock -g -- sh -c 'spin; spin'", True),
                          (", then ", False), ("perf report --stdio", True), (" and ", False),
                          ("perf script", True),
                          (" (the samples of the processes the shell forks: inherit)", False)],
    DWARF_RECORD_CLIENT: [("perf record -e cpu-clock --call-graph dwarf -- spin_nofp", True),
                          (", then ", False), ("perf report --stdio", True), (" and ", False),
                          ("perf script", True),
                          (" (spin built without frame pointers: the callers come from "
                           "unwinding the sampled registers and stack)", False)],
    "perf test": [("perf test", True), (" (the entry found by name in ", False),
                  ("perf test list", True), (")", False)],
}

# The console's widest column; longer text wraps onto the following lines.
MAX_COLUMN = 44

Checks = Sequence[Dict[str, Any]]


def label(impl: str) -> str:
    return os.path.basename(impl) if "/" in impl else impl


def load(out_dir: str) -> Optional[Dict[str, Any]]:
    """OUT/clients.json as ./pecs clients wrote it, or None when it did not run."""
    path = os.path.join(out_dir, "clients.json")
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        data: Dict[str, Any] = json.load(f)
    return data


def _cell(c: Dict[str, Any], impl: str) -> str:
    return ("%s %s" % (c["verdicts"].get(impl, "").upper(), c["values"].get(impl, ""))).strip()


def table_rows(checks: Checks, impls: Sequence[str]) -> List[List[str]]:
    """The console's rows, the heading first: client, check, kernel, each implementation."""
    rows = [["client", "check", "kernel"] + [label(i) for i in impls]]
    for c in checks:
        rows.append([c["client"], c["item"], c["values"].get("kernel", "")] +
                    [_cell(c, i) for i in impls])
    return rows


def print_table(checks: Checks, impls: Sequence[str], out: TextIO = sys.stdout,
                max_column: int = MAX_COLUMN) -> None:
    """Each column as wide as its widest text up to max_column; longer text wraps, so a
    long `perf test` entry name stays in its column instead of pushing the others."""
    rows = table_rows(checks, impls)
    widths = [min(max_column, max(len(r[k]) for r in rows)) for k in range(len(rows[0]))]
    for row in rows:
        cells = [textwrap.wrap(text, w, break_long_words=True) or [""]
                 for text, w in zip(row, widths)]
        for n in range(max(len(lines) for lines in cells)):
            parts = [(lines[n] if n < len(lines) else "").ljust(w)
                     for lines, w in zip(cells, widths)]
            print("  ".join(parts).rstrip(), file=out)


def _command_md(client: str) -> str:
    return "".join("`%s`" % t if code else t for t, code in COMMANDS.get(client, [(client, False)]))


def markdown(impls: Sequence[str], checks: Checks) -> str:
    """The report's section: each command, with its result on each implementation."""
    cols = ["kernel"] + list(impls)
    out = ["## Real clients\n",
           "Linux's perf, unmodified, on the kernel and on each implementation under the "
           "interposer (`./pecs clients`; interpose/, harness/pecs_harness/clients.py). "
           "Each count is also shown over the program's own getrusage() account of the "
           "same run.\n",
           "| command | check | " + " | ".join(label(c) for c in cols) + " |",
           "|---|---|" + "---|" * len(cols)]
    for c in checks:
        cells = [c["values"].get("kernel", "")]
        for i in impls:
            cells.append("%s %s (%s)" % (c["verdicts"].get(i, "").upper(),
                                         c["values"].get(i, ""), c["reasons"].get(i, "")))
        out.append("| %s | %s | %s |" % (_command_md(c["client"]), c["item"], " | ".join(cells)))
    return "\n".join(out) + "\n"


def report_section(out_dir: str) -> str:
    """The Markdown section from OUT/clients.json when ./pecs clients wrote one, else ''."""
    data = load(out_dir)
    return "\n" + markdown(data["impls"], data["checks"]) if data else ""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


_VERDICT_CLASS = {"pass": "good", "fail": "bad", "shown": "none"}


def html_section(data: Optional[Dict[str, Any]]) -> str:
    """The same section for report.html (its CSS classes), or '' without clients.json."""
    if not data:
        return ""
    impls, checks = data["impls"], data["checks"]
    o = ["<h2>Real clients</h2>",
         "<p>Linux's perf, unmodified, on the kernel and on each implementation under the "
         "interposer (<code>./pecs clients</code>; interpose/, "
         "harness/pecs_harness/clients.py). Each count is also shown over the program's own "
         "getrusage() account of the same run.</p>",
         "<table id=clients><tr><th>command<th>check<th>kernel" +
         "".join("<th>%s" % _e(label(i)) for i in impls) + "</tr>"]
    for c in checks:
        cmd = "".join("<code>%s</code>" % _e(t) if code else _e(t)
                      for t, code in COMMANDS.get(c["client"], [(c["client"], False)]))
        row = ['<tr class=client data-client="%s" data-item="%s"><td>%s<td>%s<td>%s' % (
            _e(c["client"]), _e(c["item"]), cmd, _e(c["item"]),
            _e(c["values"].get("kernel", "")))]
        for i in impls:
            v = c["verdicts"].get(i, "")
            row.append('<td class="%s" data-impl="%s" data-verdict="%s"><b>%s</b> %s'
                       '<div class=msg>%s</div>' % (
                           _VERDICT_CLASS.get(v, "none"), _e(label(i)), _e(v), _e(v.upper()),
                           _e(c["values"].get(i, "")), _e(c["reasons"].get(i, ""))))
        o.append("".join(row) + "</tr>")
    o.append("</table>")
    return "\n".join(o)
