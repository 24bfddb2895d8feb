#!/usr/bin/env python3
"""The package graph of pecs's C code, drawn from its #include lines, and its rules.

Every C file belongs to a component: its top-level folder, or for ref/ and conformance/
the folder below (ref/event, conformance/cases, ...). A quoted #include is resolved to the
header it names and becomes an arrow from the includer's component to the header's.
The check fails when
  - components include each other in a circle;
  - an arrow points up or sideways in LAYERS (the layer table below), unless ALLOWED
    lists it with its reason;
  - a component is missing from LAYERS (a new folder must say where it stands);
  - a quoted include names no header of the tree, or more than one.

Run it from anywhere:
  python3 tools/include_graph.py           check the tree this file sits in
  python3 tools/include_graph.py --text    print the graph by layer (docs/architecture.md)
  python3 tools/include_graph.py --dot     print it for Graphviz
  python3 tools/include_graph.py --update-docs
                                           rewrite the graph in docs/architecture.md
  python3 tools/include_graph.py --root D  another checkout
or `bazel test //tools:include_graph_test`. The check also fails when the graph in
docs/architecture.md (between the include-graph markers) is not the --text output.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

# Bottom first. A component may include components of lower layers only. Arrows are
# #include lines, so they point from user to used: ref/event includes ref/attr to copy an
# attr, although attrs flow from the engine through attr into the event.
LAYERS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("the base: the ABI, the data the seam carries, versioned-struct loading",
     ("abi", "opts")),
    ("leaves over the base: vectors, ref's API vocabulary and its leaf components",
     ("vectors", "ref/include", "ref/uaccess", "ref/host", "ref/ring")),
    ("ref: encoders, stream readers, policy", ("ref/record", "ref/stream", "ref/policy")),
    ("ref: attr copy", ("ref/attr",)),
    ("ref: events", ("ref/event",)),
    ("ref: the engine (the API's implementation)", ("ref/engine",)),
    ("ref: on top of the engine's API", ("ref/profiler", "ref/tests")),
    ("the suite's seam", ("conformance/include",)),
    ("the suite's runner core", ("conformance/framework",)),
    ("the case toolkit", ("conformance/toolkit",)),
    ("the suite's users of its core",
     ("conformance/cases", "conformance/adapters", "conformance/tools", "conformance/tests",
      "conformance/differential")),
    ("on top: tests, examples and tools outside the suite",
     ("benchmarks", "examples", "fuzz", "harness", "interpose", "tools")),
)

# Arrows the layers forbid but the code needs, each with its reason.
ALLOWED: Dict[Tuple[str, str], str] = {
    ("ref/ring", "ref/record"): "the ring's tests fill it with encoded records",
}

# Folders whose subfolders are components of their own.
SPLIT = ("ref", "conformance")
# Top-level entries that hold no code of pecs's own.
SKIP_TOP = ("third_party", "out")
C_SUFFIXES = (".c", ".h")
DOC = os.path.join("docs", "architecture.md")
DOC_BEGIN = "<!-- include-graph: begin (python3 tools/include_graph.py --update-docs) -->"
DOC_END = "<!-- include-graph: end -->"
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


@dataclass
class Graph:
    """Component arrows, each with the first include line that drew it."""
    edges: Dict[Tuple[str, str], str] = field(default_factory=dict)
    components: Set[str] = field(default_factory=set)
    problems: List[str] = field(default_factory=list)

    def targets(self, src: str) -> List[str]:
        return sorted(d for (s, d) in self.edges if s == src)


def component(path: str) -> str:
    """The component owning a path relative to the root ('ref/event/event.h' -> 'ref/event')."""
    parts = path.split("/")
    if parts[0] in SPLIT and len(parts) > 2:
        return parts[0] + "/" + parts[1]
    return parts[0]


def layer_of() -> Dict[str, int]:
    return {c: i for i, (_, comps) in enumerate(LAYERS) for c in comps}


def source_files(root: str) -> Iterator[str]:
    """C sources and headers under root, relative with '/', sorted."""
    found: List[str] = []
    for top in sorted(os.listdir(root)):
        if top.startswith((".", "bazel-")) or top in SKIP_TOP:
            continue
        base = os.path.join(root, top)
        if not os.path.isdir(base):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith((".", "__"))]
            for f in filenames:
                if f.endswith(C_SUFFIXES):
                    found.append(os.path.relpath(os.path.join(dirpath, f), root)
                                 .replace(os.sep, "/"))
    return iter(sorted(found))


def includes(text: str) -> Iterator[str]:
    for line in text.splitlines():
        m = INCLUDE_RE.match(line)
        if m:
            yield m.group(1)


class Resolver:
    """Finds the header an include names, as the build's include paths would.

    Tried in order: next to the includer; a header whose path ends with the spelling
    (cc_library `includes`, such as abi/include for "pecs/abi.h", or the root for
    "ref/ring/ring.h"); the same with leading folders of the spelling dropped, one at a
    time (`include_prefix`, such as "pecs/toolkit/ring.h" for conformance/toolkit/ring.h).
    """

    def __init__(self, files: Iterable[str]):
        self.headers = sorted(f for f in files if f.endswith(".h"))
        self.header_set = set(self.headers)

    def _ending(self, spelling: str) -> List[str]:
        return [h for h in self.headers if h == spelling or h.endswith("/" + spelling)]

    def resolve(self, includer: str, spelling: str) -> Tuple[Optional[str], str]:
        """(header, "") or (None, why)."""
        local = os.path.normpath(os.path.join(os.path.dirname(includer), spelling))
        if local.replace(os.sep, "/") in self.header_set:
            return local.replace(os.sep, "/"), ""
        parts = spelling.split("/")
        for drop in range(len(parts)):
            hits = self._ending("/".join(parts[drop:]))
            if len(hits) == 1:
                return hits[0], ""
            if len(hits) > 1:
                return None, "names more than one header: " + ", ".join(hits)
        return None, "names no header of the tree"


def build_graph(root: str, files: Optional[Sequence[str]] = None) -> Graph:
    files = list(source_files(root)) if files is None else list(files)
    resolver = Resolver(files)
    g = Graph()
    for path in files:
        src = component(path)
        g.components.add(src)
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for spelling in includes(text):
            header, why = resolver.resolve(path, spelling)
            if header is None:
                g.problems.append('%s: #include "%s" %s' % (path, spelling, why))
                continue
            dst = component(header)
            if dst != src:
                g.edges.setdefault((src, dst), "%s includes %s" % (path, header))
    return g


def cycles(g: Graph) -> List[List[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in g.targets(v):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc: List[str] = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1:
                out.append(sorted(scc))

    for v in sorted(g.components | {d for (_, d) in g.edges}):
        if v not in index:
            visit(v)
    return sorted(out)


def check(g: Graph) -> List[str]:
    """Every rule the graph breaks, one message each; empty when it keeps them all."""
    problems = list(g.problems)
    layer = layer_of()
    for c in sorted(g.components | {d for (_, d) in g.edges}):
        if c not in layer:
            problems.append("%s: not in the layer table; add it to LAYERS in "
                            "tools/include_graph.py, above what it includes" % c)
    for scc in cycles(g):
        problems.append("circle between " + ", ".join(scc) + ": " +
                        "; ".join(g.edges[(s, d)] for (s, d) in sorted(g.edges)
                                  if s in scc and d in scc))
    for (src, dst), why in sorted(g.edges.items()):
        if src not in layer or dst not in layer or (src, dst) in ALLOWED:
            continue
        if layer[dst] >= layer[src]:
            kind = "sideways" if layer[dst] == layer[src] else "upward"
            problems.append("%s arrow %s -> %s (%s)" % (kind, src, dst, why))
    for (src, dst) in sorted(ALLOWED):
        if (src, dst) not in g.edges:
            problems.append("ALLOWED lists %s -> %s, which the code no longer needs: "
                            "remove it" % (src, dst))
    return problems


def wrap(head: str, words: Sequence[str], limit: int = 92) -> List[str]:
    """head followed by words joined with ", ", continued under the first word."""
    lines = [head]
    for i, w in enumerate(words):
        sep = ", " if i + 1 < len(words) else ""
        if len(lines[-1]) + len(w) + len(sep) > limit and lines[-1].strip() != head.strip():
            lines[-1] = lines[-1].rstrip()
            lines.append(" " * len(head))
        lines[-1] += w + sep
    return lines


def render_text(g: Graph) -> str:
    """The graph by layer, top first: each component and what it includes."""
    layer = layer_of()
    present = g.components | {d for (_, d) in g.edges}
    width = max(len(c) for c in present) if present else 0
    lines: List[str] = []
    for i in range(len(LAYERS) - 1, -1, -1):
        title, comps = LAYERS[i]
        shown = [c for c in comps if c in present]
        if not shown:
            continue
        lines.append("%2d  %s" % (i, title))
        for c in shown:
            targets = g.targets(c)
            marks = ["%s*" % t if (c, t) in ALLOWED else t for t in targets]
            lines.extend(wrap("      %-*s -> " % (width, c), marks or ["(nothing)"]))
    unknown = sorted(c for c in present if c not in layer)
    for c in unknown:
        lines.append("??  %s -> %s" % (c, ", ".join(g.targets(c))))
    if any(e in ALLOWED for e in g.edges):
        lines.append("")
        for (src, dst), why in sorted(ALLOWED.items()):
            if (src, dst) in g.edges:
                lines.append("*   %s -> %s: %s" % (src, dst, why))
    return "\n".join(lines) + "\n"


def render_dot(g: Graph) -> str:
    layer = layer_of()
    present = g.components | {d for (_, d) in g.edges}
    lines = ["digraph pecs {", "  rankdir=BT;", "  node [shape=box, fontname=monospace];"]
    for i, (title, comps) in enumerate(LAYERS):
        shown = [c for c in comps if c in present]
        if shown:
            lines.append('  { rank=same; %s }  // %d: %s' %
                         (" ".join('"%s";' % c for c in shown), i, title))
    for c in sorted(present):
        if c not in layer:
            lines.append('  "%s" [color=red];' % c)
    for (src, dst) in sorted(g.edges):
        style = " [style=dashed]" if (src, dst) in ALLOWED else ""
        lines.append('  "%s" -> "%s"%s;' % (src, dst, style))
    lines.append("}")
    return "\n".join(lines) + "\n"


def doc_block(text: str) -> str:
    """The graph as docs/architecture.md shows it, markers included."""
    return "%s\n```\n%s```\n%s" % (DOC_BEGIN, text, DOC_END)


def doc_problems(doc: str, text: str) -> List[str]:
    """Why the doc's graph is not `text`; empty when it is."""
    begin, end = doc.find(DOC_BEGIN), doc.find(DOC_END)
    if begin < 0 or end < begin:
        return ["%s has no include-graph block (%s ... %s)" % (DOC, DOC_BEGIN, DOC_END)]
    if doc[begin:end + len(DOC_END)] != doc_block(text):
        return ["the graph in %s is not the tree's: run python3 tools/include_graph.py "
                "--update-docs" % DOC]
    return []


def update_doc(doc: str, text: str) -> str:
    begin, end = doc.find(DOC_BEGIN), doc.find(DOC_END)
    if begin < 0 or end < begin:
        raise ValueError("%s has no include-graph block" % DOC)
    return doc[:begin] + doc_block(text) + doc[end + len(DOC_END):]


def default_root() -> str:
    # Under `bazel run` the tree is the workspace; under `bazel test` this file is a
    # runfiles link into it, hence realpath.
    ws = os.environ.get("BUILD_WORKSPACE_DIRECTORY")
    return ws or os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=default_root(), help="the pecs tree (default: this one)")
    out = ap.add_mutually_exclusive_group()
    out.add_argument("--text", action="store_true", help="print the graph by layer")
    out.add_argument("--dot", action="store_true", help="print the graph for Graphviz")
    out.add_argument("--update-docs", action="store_true",
                     help="rewrite the graph in " + DOC)
    args = ap.parse_args(argv)
    if not os.path.isdir(os.path.join(args.root, "ref")):
        print("include_graph: %s is not the pecs tree" % args.root, file=sys.stderr)
        return 2
    g = build_graph(args.root)
    text = render_text(g)
    doc_path = os.path.join(args.root, DOC)
    with open(doc_path, encoding="utf-8") as fh:
        doc = fh.read()
    if args.text:
        sys.stdout.write(text)
    elif args.dot:
        sys.stdout.write(render_dot(g))
    elif args.update_docs:
        doc = update_doc(doc, text)
        with open(doc_path, "w", encoding="utf-8") as fh:
            fh.write(doc)
    problems = check(g) + doc_problems(doc, text)
    for p in problems:
        print("include_graph: " + p, file=sys.stderr)
    if not problems and not (args.text or args.dot or args.update_docs):
        print("include_graph: %d components, %d arrows, no circles, none upward" %
              (len(g.components), len(g.edges)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
