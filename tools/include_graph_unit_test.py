"""tools/include_graph.py on small made-up trees: each rule fails when it should."""

from __future__ import annotations

import os
import tempfile
import unittest
from typing import Dict, List

import include_graph  # next to this file, so on sys.path as the script's own folder


def tree(files: Dict[str, str]) -> str:
    root = tempfile.mkdtemp(prefix="include_graph_")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as fh:
            fh.write(text)
    return root


def problems(files: Dict[str, str]) -> List[str]:
    return include_graph.check(include_graph.build_graph(tree(files)))


BASE = {
    "abi/include/pecs/abi.h": "#include <stdint.h>\n",
    "ref/include/pecs/ref.h": '#include "pecs/abi.h"\n',
    "ref/ring/ring.h": "",
    "ref/ring/ring_test.c": '#include "ref/ring/ring.h"\n#include "ref/record/record.h"\n',
    "ref/record/record.h": '#include "pecs/abi.h"\n',
    "ref/event/event.h": '#include "ref/record/record.h"\n#include "pecs/ref.h"\n',
    "ref/engine/engine.c": '#include "ref/event/event.h"\n',
}


class IncludeGraphTest(unittest.TestCase):
    def test_a_layered_tree_passes(self) -> None:
        self.assertEqual(problems(BASE), [])

    def test_components_are_folders(self) -> None:
        self.assertEqual(include_graph.component("ref/event/event_ioctl.c"), "ref/event")
        self.assertEqual(include_graph.component("conformance/adapters/pipe/pipe.c"),
                         "conformance/adapters")
        self.assertEqual(include_graph.component("vectors/tools/capture_sample.c"), "vectors")
        self.assertEqual(include_graph.component("abi/include/pecs/abi.h"), "abi")

    def test_an_upward_arrow_fails(self) -> None:
        files = dict(BASE)
        files["ref/record/record.c"] = '#include "ref/event/event.h"\n'
        found = problems(files)
        self.assertTrue(any(p.startswith("upward arrow ref/record -> ref/event") for p in found),
                        found)

    def test_a_circle_fails(self) -> None:
        files = dict(BASE)
        files["ref/event/event_rb.c"] = '#include "ref/engine/engine.h"\n'
        files["ref/engine/engine.h"] = ""
        found = problems(files)
        self.assertTrue(any(p.startswith("circle between ref/engine, ref/event") for p in found),
                        found)

    def test_a_sideways_arrow_fails(self) -> None:
        files = dict(BASE)
        files["ref/host/host.c"] = '#include "ref/ring/ring.h"\n'
        found = problems(files)
        self.assertTrue(any(p.startswith("sideways arrow ref/host -> ref/ring") for p in found),
                        found)

    def test_a_folder_missing_from_the_layers_fails(self) -> None:
        files = dict(BASE)
        files["newpart/x.c"] = '#include "pecs/abi.h"\n'
        found = problems(files)
        self.assertTrue(any(p.startswith("newpart: not in the layer table") for p in found),
                        found)

    def test_an_allowance_the_code_no_longer_needs_fails(self) -> None:
        files = dict(BASE)
        files["ref/ring/ring_test.c"] = '#include "ref/ring/ring.h"\n'
        found = problems(files)
        self.assertTrue(any("ALLOWED lists ref/ring -> ref/record" in p for p in found), found)

    def test_includes_resolve_as_the_build_finds_them(self) -> None:
        r = include_graph.Resolver([
            "abi/include/pecs/abi.h",
            "conformance/framework/runner.h",
            "conformance/toolkit/ring.h",
            "ref/ring/ring.h",
            "ref/profiler/unwind.h",
        ])
        self.assertEqual(r.resolve("ref/profiler/unwind.c", "unwind.h"),
                         ("ref/profiler/unwind.h", ""))
        self.assertEqual(r.resolve("vectors/x.c", "pecs/abi.h"), ("abi/include/pecs/abi.h", ""))
        self.assertEqual(r.resolve("conformance/tests/t.c", "runner.h"),
                         ("conformance/framework/runner.h", ""))
        self.assertEqual(r.resolve("conformance/cases/c.c", "pecs/toolkit/ring.h"),
                         ("conformance/toolkit/ring.h", ""))
        header, why = r.resolve("x/y.c", "ring.h")
        self.assertIsNone(header)
        self.assertIn("more than one", why)
        header, why = r.resolve("x/y.c", "pecs/missing.h")
        self.assertIsNone(header)
        self.assertIn("no header", why)

    def test_an_unresolved_include_fails(self) -> None:
        files = dict(BASE)
        files["ref/event/event.c"] = '#include "pecs/nowhere.h"\n'
        found = problems(files)
        self.assertTrue(any('#include "pecs/nowhere.h" names no header' in p for p in found),
                        found)

    def test_the_text_lists_layers_top_first(self) -> None:
        text = include_graph.render_text(include_graph.build_graph(tree(BASE)))
        self.assertLess(text.index("ref/engine "), text.index("ref/event "))
        self.assertIn("ref/record*", text)
        self.assertIn("ref/ring -> ref/record: ", text)

    def test_the_dot_output_is_a_digraph(self) -> None:
        dot = include_graph.render_dot(include_graph.build_graph(tree(BASE)))
        self.assertTrue(dot.startswith("digraph pecs {"))
        self.assertIn('"ref/engine" -> "ref/event";', dot)
        self.assertIn('"ref/ring" -> "ref/record" [style=dashed];', dot)

    def test_the_doc_must_show_the_current_graph(self) -> None:
        text = include_graph.render_text(include_graph.build_graph(tree(BASE)))
        doc = "# Architecture\n\nbefore\n\n" + include_graph.doc_block("old\n") + "\nafter\n"
        self.assertIn("--update-docs", include_graph.doc_problems(doc, text)[0])
        updated = include_graph.update_doc(doc, text)
        self.assertEqual(include_graph.doc_problems(updated, text), [])
        self.assertTrue(updated.startswith("# Architecture\n\nbefore\n\n"))
        self.assertTrue(updated.endswith("\nafter\n"))
        self.assertIn("no include-graph block", include_graph.doc_problems("# none\n", text)[0])


if __name__ == "__main__":
    unittest.main()
