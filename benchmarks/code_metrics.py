"""Structure of the package, measured: the counts issue "One definition per idea" asks to bring down.

Read from the source with :mod:`ast` (nothing is imported or run):

* figure-name branches outside the figure definitions: comparisons (``==``, ``!=``, ``in``, ``not in``) and
  ``match`` cases against a figure's name, in modules other than ``resnetlearn/figures.py``;
* calls passing more than four arguments by position (package and ``benchmarks/``);
* the largest module (lines);
* modules that branch on an architecture's name (a comparison with, or ``startswith`` of, an architecture);
* the import graph between the package's modules: cycles, and imports pointing upward (a module importing one
  that sits later in a topological order of the graph; with no cycle this is 0 by construction, so the count is
  reported against the order of first definition instead: a module importing one that itself imports it).

    python benchmarks/code_metrics.py [--json FILE]
"""

from __future__ import annotations

import argparse
import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "resnetlearn"
FIGURE_NAMES = {"fig2a", "fig2b", "fig3", "fig4", "fig4b", "thm3", "thm2", "companion"}
ARCH_NAMES = {"3resnet", "3layer", "2layer", "3resnet_eq21"}


def _constants(node: ast.AST) -> set[str]:
    """String constants directly in a comparison operand (a constant, or a tuple/list/set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _branches_on(tree: ast.AST, names: set[str], *, prefix: bool = False) -> list[int]:
    """Line numbers of comparisons / match cases / startswith calls against one of ``names``."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            found = set().union(*(_constants(x) for x in [node.left, *node.comparators]))
            if found & names:
                lines.append(node.lineno)
        elif isinstance(node, ast.match_case):
            pats = [n.value.value for n in ast.walk(node.pattern)
                    if isinstance(n, ast.MatchValue) and isinstance(n.value, ast.Constant)]
            if set(pats) & names:
                lines.append(node.pattern.lineno)
        elif (prefix and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and node.args
              and _constants(node.args[0]) & names):
            lines.append(node.lineno)
    return lines


def _positional_calls(tree: ast.AST) -> list[int]:
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Call) and len([a for a in n.args if not isinstance(a, ast.Starred)]) > 4]


def _imports(tree: ast.AST, module: str) -> set[str]:
    """Package-internal modules imported by ``module`` (relative and absolute imports)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 or (node.module or "").startswith("resnetlearn"):
                base = (node.module or "").removeprefix("resnetlearn").lstrip(".")
                if base:
                    out.add(base.split(".")[0])
                else:
                    out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name.split(".")[1] for a in node.names if a.name.startswith("resnetlearn."))
    return {m for m in out if m != module}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def measure() -> dict:
    modules = sorted(p for p in PACKAGE.glob("*.py"))
    bench = sorted((ROOT / "benchmarks").glob("*.py"))
    trees = {p: ast.parse(p.read_text(), filename=str(p)) for p in modules + bench}
    lines = {p.stem: len(p.read_text().splitlines()) for p in modules}
    fig = {p.relative_to(ROOT).as_posix(): _branches_on(trees[p], FIGURE_NAMES)
           for p in modules if p.name != "figures.py"}
    arch = {p.relative_to(ROOT).as_posix(): _branches_on(trees[p], ARCH_NAMES, prefix=True) for p in modules}
    pos = {p.relative_to(ROOT).as_posix(): _positional_calls(trees[p]) for p in modules + bench}
    graph = {p.stem: _imports(trees[p], p.stem) for p in modules}
    largest = max(lines, key=lines.get)
    return {
        "modules": len(modules),
        "largest_module": {"name": largest, "lines": lines[largest]},
        "modules_over_750_lines": {k: v for k, v in sorted(lines.items()) if v > 750},
        "figure_name_branches_outside_figures": sum(map(len, fig.values())),
        "figure_name_branches_by_file": {k: v for k, v in fig.items() if v},
        "calls_with_more_than_4_positional_args": sum(map(len, pos.values())),
        "positional_calls_by_file": {k: len(v) for k, v in pos.items() if v},
        "modules_branching_on_architecture_names": sorted(k for k, v in arch.items() if v),
        "architecture_branches_by_file": {k: v for k, v in arch.items() if v},
        "import_cycles": _cycles(graph),
        "internal_imports": sum(map(len, graph.values())),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args()
    m = measure()
    print(f"modules: {m['modules']}; largest: {m['largest_module']['name']} ({m['largest_module']['lines']} lines); "
          f"over 750 lines: {m['modules_over_750_lines']}")
    print(f"figure-name branches outside figures.py: {m['figure_name_branches_outside_figures']} "
          f"{m['figure_name_branches_by_file']}")
    print(f"calls with > 4 positional arguments: {m['calls_with_more_than_4_positional_args']} "
          f"{m['positional_calls_by_file']}")
    print(f"modules branching on architecture names: {len(m['modules_branching_on_architecture_names'])} "
          f"{m['architecture_branches_by_file']}")
    print(f"import cycles: {len(m['import_cycles'])} {m['import_cycles']}; internal imports: {m['internal_imports']}")
    if args.json:
        Path(args.json).write_text(json.dumps(m, indent=1) + "\n")


if __name__ == "__main__":
    main()
