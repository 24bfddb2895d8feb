"""The mutant generator of tools/mutate on a small fixture (testdata/fixture_c.txt)."""
from __future__ import annotations

import io
import os
import tempfile
import unittest

# This file's folder is the first on sys.path, here and under Bazel.
import mutants as mt
import mutate

HERE = os.path.dirname(os.path.abspath(__file__))


def fixture() -> str:
    with open(os.path.join(HERE, "testdata", "fixture_c.txt"), encoding="utf-8") as f:
        return f.read()


class Sites(unittest.TestCase):
    def setUp(self) -> None:
        self.all = mt.sites("ref/x/fixture.c", fixture())

    def at(self, line: int, kind: str) -> list[str]:
        return [m.mutated.strip() for m in self.all if m.line == line and m.kind == kind]

    def test_nothing_in_comments_strings_or_preprocessor(self) -> None:
        self.assertEqual({m.line for m in self.all if m.line in (1, 2, 4, 7)}, set())

    def test_comparisons_flip_and_move_off_by_one(self) -> None:
        got = self.at(11, "cmp")
        self.assertIn("if (n >= 0 || n >= LIMIT) return -EINVAL;", got)
        self.assertIn("if (n < 0 || n < LIMIT) return -EINVAL;", got)
        self.assertIn("if (n < 0 || n > LIMIT) return -EINVAL;", got)

    def test_shifts_and_arrows_are_not_comparisons(self) -> None:
        got = self.at(12, "cmp")
        # only `>` (after the shift) and `!=`; never the `<<`, `>>` or `->`
        self.assertEqual(sorted(got), sorted([
            "if (t->flags << 2 <= n && t->x >> 1 != 0)",
            "if (t->flags << 2 > n && t->x >> 1 == 0)",
        ]))
        self.assertEqual(self.at(14, "cmp"), [])

    def test_logic_swaps(self) -> None:
        self.assertEqual(self.at(11, "logic"), ["if (n < 0 && n >= LIMIT) return -EINVAL;"])

    def test_guards(self) -> None:
        self.assertEqual(self.at(11, "guard"), [""])
        self.assertEqual(self.at(10, "guard"), [";"])
        self.assertEqual(self.at(13, "guard"), [";"])

    def test_errno_swap(self) -> None:
        self.assertEqual(self.at(10, "errno"), ["return -EINVAL;"])
        self.assertEqual(self.at(13, "errno"), ["return -EPERM;"])

    def test_literals_move_by_one_but_not_in_char_constants(self) -> None:
        got = self.at(15, "literal")
        # s[0], 3 and 0; the 'x' stays
        self.assertEqual(len(got), 3)
        self.assertIn("return s[1] == 'x' ? 3 : 0;", got)
        self.assertIn("return s[0] == 'x' ? 3 : 1;", got)
        self.assertTrue(all("'x'" in g for g in got))


class Sample(unittest.TestCase):
    def files(self) -> dict[str, str]:
        text = fixture()
        return {"ref/a/one.c": text, "ref/b/two.c": text + text, "ref/c/three.c": text}

    def test_deterministic_by_seed(self) -> None:
        a = [m.ident for m in mt.sample(self.files(), 8, seed=3)]
        b = [m.ident for m in mt.sample(self.files(), 8, seed=3)]
        c = [m.ident for m in mt.sample(self.files(), 8, seed=4)]
        self.assertEqual(a, b)
        self.assertNotEqual(a, c)

    def test_spread_by_size_over_every_component(self) -> None:
        got = mt.sample(self.files(), 8, seed=1)
        per = {}
        for m in got:
            per[mt.component(m.path)] = per.get(mt.component(m.path), 0) + 1
        self.assertEqual(len(got), 8)
        self.assertEqual(set(per), {"a", "b", "c"})
        self.assertGreater(per["b"], per["a"])

    def test_one_mutant_per_line(self) -> None:
        got = mt.sample(self.files(), 30, seed=1)
        self.assertEqual(len({(m.path, m.line) for m in got}), len(got))



class Judgements(unittest.TestCase):
    def test_a_key_holding_a_bitwise_or_keeps_its_verdict(self) -> None:
        key = "ref/x.c literal: `put(a | f(1));` -> `put(a | f(2));`"
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# a comment | gap | not a line\n")
            f.write(key + " | equivalent | the field is 0 in every record written\n")
            f.write("ref/y.c guard: `return -EINVAL;` -> `;` | gap | no case asks\n")
        try:
            got = mutate.load_judgements(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(got[key], ("equivalent", "the field is 0 in every record written"))
        self.assertEqual(got["ref/y.c guard: `return -EINVAL;` -> `;`"], ("gap", "no case asks"))
        self.assertEqual(len(got), 2)


class Report(unittest.TestCase):
    """The report of a run of two seeds: each seed's scores apart, then both."""

    def results(self) -> list[dict[str, object]]:
        def r(seed: int, path: str, status: str, describe: str) -> dict[str, object]:
            return {"seed": seed, "path": path, "status": status, "describe": describe}
        return [
            r(11, "ref/a/one.c", "killed", "ref/a/one.c:1 cmp: `a` -> `b`"),
            r(11, "ref/a/one.c", "survived", "ref/a/one.c:2 guard: `x` -> `;`"),
            r(11, "ref/b/two.c", "hang", "ref/b/two.c:3 cmp: `c` -> `d`"),
            r(22, "ref/b/two.c", "survived", "ref/b/two.c:4 literal: `0` -> `1`"),
            r(22, "ref/b/two.c", "killed", "ref/b/two.c:5 errno: `e` -> `f`"),
            r(22, "ref/a/one.c", "stillborn", "ref/a/one.c:6 cmp: `g` -> `h`"),
        ]

    def report(self) -> str:
        judged = {mt.judge_key("ref/a/one.c:2 guard: `x` -> `;`"): ("gap", "no case asks"),
                  mt.judge_key("ref/b/two.c:4 literal: `0` -> `1`"):
                      ("equivalent", "the value is never read")}
        out = io.StringIO()
        mutate.print_report(self.results(), judged, out)
        return out.getvalue()

    def test_each_seed_scored_apart_then_together(self) -> None:
        got = self.report()
        # seed 11: 2 killed (one a hang) of 3 observable (a gap); seed 22: the
        # equivalent survivor set aside, the stillborn not counted
        self.assertIn("seed 11: killed 2 of 3 observable mutants (67%)", got)
        self.assertIn("seed 22: killed 1 of 1 observable mutants (100%)", got)
        self.assertIn("per seed: 11 67%, 22 100%; all: killed 3 of 4 observable (75%)", got)

    def test_survivors_carry_their_judgement_and_why(self) -> None:
        got = self.report()
        self.assertIn("gap: no case asks", got)
        self.assertIn("equivalent: the value is never read", got)

    def test_per_component_rows(self) -> None:
        rows = [ln.split() for ln in self.report().splitlines()]
        # seed 11's row of component b: 1 mutant, a hang, observable 100%
        self.assertIn(["b", "1", "0", "1", "0", "0", "0", "0", "0", "100%", "100%"], rows)
        # seed 11's a: one killed, one gap
        self.assertIn(["a", "2", "1", "0", "1", "0", "0", "1", "0", "50%", "50%"], rows)

    def test_fresh_seeds_differ(self) -> None:
        seeds = {mutate.fresh_seed() for _ in range(8)}
        self.assertGreater(len(seeds), 1)
        self.assertTrue(all(0 < x < 2 ** 31 for x in seeds))


if __name__ == "__main__":
    unittest.main()
