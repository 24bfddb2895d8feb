"""The counter of tools/source_limits.py on small fixtures."""

from __future__ import annotations

import os
import tempfile
import unittest
from typing import Dict, List

# This file's folder is the first on sys.path, here and under Bazel.
import source_limits as sl


def body(n: int, indent: str = "\t") -> List[str]:
    return [f"{indent}x{i} = {i};" for i in range(n)]


class CFunctions(unittest.TestCase):
    def names(self, text: str) -> List[str]:
        return [f.name for f in sl.c_functions(text)]

    def test_brace_on_its_own_line(self) -> None:
        text = "\n".join(["static int f(int a,", "\t\t int b)", "{"] + body(3) + ["}", ""])
        (f,) = sl.c_functions(text)
        self.assertEqual((f.name, f.line, f.length), ("f", 1, 7))

    def test_brace_at_end_of_signature(self) -> None:
        text = "\n".join(["int g(void) {"] + body(2) + ["}"])
        (f,) = sl.c_functions(text)
        self.assertEqual((f.name, f.length), ("g", 4))

    def test_case_macro_is_a_function_named_by_its_first_argument(self) -> None:
        text = "\n".join(["PECS_CASE(open_twice, \"open.twice\", .flags = 1) {"] + body(1) +
                         ["}", "PECS_CASE(other, \"x\")", "{", "}"])
        self.assertEqual(self.names(text), ["PECS_CASE(open_twice)", "PECS_CASE(other)"])

    def test_not_functions(self) -> None:
        text = "\n".join([
            "struct s {", "\tint a;", "};",
            "static const int t[] = {", "\t1,", "};",
            "static const struct s v = {.a = sizeof(int)};",
            "#define M(x) do { \\", "\t(x); \\", "} while (0)",
            "/* int fake(void) {", "} */",
            "extern \"C\" {",
            "}",
        ])
        self.assertEqual(self.names(text), [])

    def test_attributes_comments_and_strings_do_not_confuse(self) -> None:
        text = "\n".join([
            "/* A comment that says f(x) { */",
            "__attribute__((noinline, no_sanitize(\"address\"))) void",
            "spin(unsigned n)",
            "{",
            "\tconst char *s = \"}\\n{\";",
            "\tchar c = '}';",
            "}",
        ])
        (f,) = sl.c_functions(text)
        self.assertEqual((f.name, f.line, f.length), ("spin", 2, 6))

    def test_long_function_is_an_offender(self) -> None:
        text = "\n".join(["void big(void)", "{"] + body(79) + ["}", "void ok(void)", "{"] +
                         body(77) + ["}", ""])
        got = sl.check_text("x/big.c", text)
        self.assertEqual([o.message() for o in got],
                         ["x/big.c:1: function big is 82 lines (limit 80)"])


class PyFunctions(unittest.TestCase):
    def test_methods_and_nested_functions(self) -> None:
        text = "\n".join([
            "@decorator",
            "def top(a):",
            "    def inner():",
            "        return 1",
            "    return inner",
            "class C:",
            "    async def m(self):",
            "        pass",
        ])
        got = [(f.name, f.line, f.length) for f in sl.py_functions(text)]
        self.assertEqual(got, [("top", 2, 4), ("top.inner", 3, 2), ("C.m", 7, 2)])

    def test_syntax_error_is_a_problem(self) -> None:
        got = sl.check_text("b.py", "def f(:\n")
        self.assertEqual([o.message() for o in got], ["b.py:1: cannot parse the file"])

    def test_long_file(self) -> None:
        text = "x = 1\n" * 601
        got = sl.check_text("a.py", text)
        self.assertEqual([o.message() for o in got], ["a.py:1: file is 601 lines (limit 600)"])


class Allowlist(unittest.TestCase):
    def tree(self, files: Dict[str, str], allow: str) -> str:
        root = tempfile.mkdtemp()
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as fh:
                fh.write(text)
        os.makedirs(os.path.join(root, "tools"), exist_ok=True)
        with open(os.path.join(root, sl.ALLOW_FILE), "w") as fh:
            fh.write(allow)
        return root

    def problems(self, root: str) -> List[str]:
        entries, problems = sl.read_allowlist(os.path.join(root, sl.ALLOW_FILE))
        return problems + sl.judge(sl.check_tree(root), entries)

    def test_allowed_offender_passes_and_stale_entry_fails(self) -> None:
        big = "\n".join(["void big(void)", "{"] + body(90) + ["}", ""])
        root = self.tree({"ref/a.c": big, "ref/b.c": "int ok(void)\n{\n}\n"},
                         "# comment\nref/a.c:big  # being cut\nref/b.c:ok  # stale\n")
        self.assertEqual(self.problems(root), [
            f"{sl.ALLOW_FILE}:3: stale entry ref/b.c:ok: now within the limits (or gone); "
            "delete the line"])

    def test_entry_needs_a_reason(self) -> None:
        big = "x = 1\n" * 700
        root = self.tree({"harness/a.py": big}, "harness/a.py\n")
        self.assertEqual(self.problems(root),
                         [f"{sl.ALLOW_FILE}:1: entry without a reason after '#'"])

    def test_bazel_outputs_and_third_party_are_not_read(self) -> None:
        big = "x = 1\n" * 700
        root = self.tree({"third_party/a.py": big, "ref/bazel-out/a.py": big,
                          "bazel-bin/a.py": big, "out/a.py": big}, "")
        self.assertEqual(self.problems(root), [])

    def test_every_other_folder_is_read_without_being_named(self) -> None:
        big = "x = 1\n" * 700
        root = self.tree({"newfolder/a.c": big, "top.py": big}, "")
        self.assertEqual(self.problems(root),
                         ["newfolder/a.c:1: file is 700 lines (limit 600)",
                          "top.py:1: file is 700 lines (limit 600)"])


if __name__ == "__main__":
    unittest.main()
