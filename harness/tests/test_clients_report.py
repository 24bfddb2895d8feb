"""The console table of ./pecs clients (pecs_harness/clients_report.py): every column
starts at the same place on every line, however long a `perf test` entry name is."""
import io
from typing import Any, Dict, List

from pecs_harness import clients_report as cr

LONG = "PERF_RECORD_* events & perf_sample fields, and a name longer than any column"


def check(client: str, item: str, kernel: str, ref: str, verdict: str) -> Dict[str, Any]:
    return {"client": client, "item": item, "values": {"kernel": kernel, "ref": ref},
            "verdicts": {"ref": verdict}, "reasons": {"ref": ""}}


CHECKS = [check("perf stat", "task-clock", "310.00 ms (1.000x own)",
                "309.00 ms (0.997x own)", "pass"),
          check("perf test", LONG, "Ok", "Ok", "pass"),
          check("perf test", "Event times", "Ok", "FAILED!", "fail")]


def table(max_column: int = cr.MAX_COLUMN) -> List[str]:
    out = io.StringIO()
    cr.print_table(CHECKS, ["ref"], out, max_column=max_column)
    return out.getvalue().splitlines()


def column_starts(lines: List[str]) -> List[int]:
    head = lines[0]
    return [head.index(h) for h in ("client", "check", "kernel", "ref")]


def test_columns_stay_aligned_when_a_name_is_longer_than_its_column() -> None:
    lines = table()
    cols = column_starts(lines)
    body = lines[1:]
    # Each value sits at its column's start, on some line of its row.
    for text in ("310.00 ms (1.000x own)", "PASS 309.00 ms (0.997x own)",
                 "FAIL FAILED!", "Event times"):
        line = next(l for l in body if text in l)
        assert line.index(text) in cols, (text, line)
    # The long name wraps within its column: no line is wider than all the columns.
    assert max(len(l) for l in lines) <= cols[-1] + len("PASS 309.00 ms (0.997x own)")
    check_col = slice(cols[1], cols[2])
    wrapped = " ".join(l[check_col].strip() for l in body if l[check_col].strip()
                       and "Event times" not in l and "task-clock" not in l)
    assert wrapped == LONG


def test_widths_follow_the_content() -> None:
    lines = table()
    cols = column_starts(lines)
    # client's column is as wide as "perf stat" (its widest text), plus the gap.
    assert cols[1] - cols[0] == len("perf stat") + 2
    # check's column is capped by max_column, not by the long name.
    assert cols[2] - cols[1] == cr.MAX_COLUMN + 2
    narrow = table(max_column=20)
    assert column_starts(narrow)[2] - column_starts(narrow)[1] == 20 + 2
    assert all(len(l) <= 4 * 22 for l in narrow)


def test_markdown_names_each_command() -> None:
    md = cr.markdown(["ref"], CHECKS)
    assert "| `perf test` (the entry found by name in `perf test list`) | Event times | Ok |" \
        " FAIL FAILED! () |" in md


def test_the_shell_workload_sums_each_spin_run() -> None:
    from pecs_harness import clients

    out = "spin: cpu_ns=100 faults=7\nsomething else\nspin: cpu_ns=50 faults=3\n"
    assert clients.parse_spin(out) == {"cpu_ns": 150, "faults": 10}
    cmd = clients.stat_workload("/x/spin", shell=True)
    assert cmd[:2] == ["sh", "-c"] and cmd[2].count("/x/spin") == 2
    assert clients.stat_workload("/x/spin", shell=False)[0] == "/x/spin"
