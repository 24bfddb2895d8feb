"""The perf record checks' parsers and verdicts (pecs_harness/clients_record.py), on
perf 6.1's output as it prints it."""
from typing import List, Tuple

from pecs_harness import clients_record as rec

REPORT = """
    95.16%  [.] spin_hot
     1.04%  [.] memset
     0.69%  [k] pvm_irq_enable
"""

SCRIPT = """\
\t    55d0c1a0e150 spin_hot
\t    55d0c1a0e1a0 spin_work
\t    55d0c1a0e1f0 main
\t    7f5d0b8a4d8f __libc_start_call_main

\t    55d0c1a0e150 spin_hot
\t    7f5d0b8a4d8f [unknown]

\t    7f5d0b9a0000 memset
\t    7f5d0b9a1000 _dl_start
"""


def test_parse_report_keeps_order_and_share() -> None:
    assert rec.parse_report(REPORT) == [(95.16, "spin_hot"), (1.04, "memset"),
                                        (0.69, "pvm_irq_enable")]


def test_parse_script_counts_hot_samples_and_their_chains() -> None:
    assert rec.parse_script(SCRIPT) == (2, 1)


def run(impl: str, top: List[Tuple[float, str]], samples: int = 10, chained: int = 10,
        error: str = "") -> rec.RecordRun:
    return rec.RecordRun(impl=impl, top=top, samples=samples, with_chain=chained, error=error)


def test_same_top_symbol_with_enough_share_passes() -> None:
    k = run("kernel", [(95.0, "spin_hot")])
    top, chain = rec.compare_record(k, [run("ref", [(90.0, "spin_hot")])])
    assert top.verdicts["ref"] == "pass" and chain.verdicts["ref"] == "pass"


def test_other_top_symbol_or_low_share_or_broken_chain_fails() -> None:
    k = run("kernel", [(95.0, "spin_hot")])
    other = run("a", [(95.0, "memset")])
    low = run("b", [(60.0, "spin_hot")])
    nochain = run("c", [(95.0, "spin_hot")], samples=10, chained=5)
    broken = run("d", [], error="perf record exited 255")
    top, chain = rec.compare_record(k, [other, low, nochain, broken])
    assert top.verdicts == {"a": "fail", "b": "fail", "c": "pass", "d": "fail"}
    assert chain.verdicts["c"] == "fail" and chain.verdicts["d"] == "fail"
    assert "memset" in top.reasons["a"] and "exited 255" in top.reasons["d"]


# perf test (pecs_harness/clients_perftest.py)
from pecs_harness import clients_perftest as pt  # noqa: E402

LIST = """  4: mmap interface tests
  4:1: Read samples using the mmap interface
  4:2: User space counter reading of instructions
 25: Software clock events period values
"""

RUN = """  4: mmap interface tests                                            :
  4.1: Read samples using the mmap interface                         : FAILED!
  4.2: User space counter reading of instructions                    : Skip (permissions)
"""


def test_perf_test_list_gives_top_level_numbers_by_name() -> None:
    got = pt.parse_list(LIST)
    assert got["Read samples using the mmap interface"] == "4"
    assert got["Software clock events period values"] == "25"


def test_perf_test_verdict_of_a_subtest() -> None:
    assert pt.parse_verdict(RUN, "Read samples using the mmap interface") == "FAILED!"
    assert pt.parse_verdict(RUN, "User space counter reading of instructions") == \
        "Skip (permissions)"
    assert pt.parse_verdict(RUN, "mmap interface tests") == ""


def test_perf_test_verdicts() -> None:
    assert pt.verdict("Ok", "ref", "Ok")[0] == "pass"
    assert pt.verdict("Ok", "ref", "FAILED!")[0] == "fail"
    assert pt.verdict("Skip (permissions)", "ref", "FAILED!")[0] == "shown"


def test_the_shell_workload_runs_spin_twice_and_names_its_client() -> None:
    cmd = rec.record_workload("/x/spin", shell=True)
    assert cmd[:2] == ["sh", "-c"] and cmd[2].count("/x/spin") == 2
    assert rec.record_workload("/x/spin", shell=False)[0] == "/x/spin"
    k = run("kernel", [(95.0, "spin_hot")])
    top, chain = rec.compare_record(k, [run("ref", [(90.0, "spin_hot")])], "perf record (sh -c)")
    assert top.client == chain.client == "perf record (sh -c)"
