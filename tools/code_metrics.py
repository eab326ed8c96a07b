"""Structure of the package, measured: the counts that keep one definition per idea and one record per learner
(each should stay low).

Read from the source with :mod:`ast` and :mod:`tokenize` (nothing is imported or run); every module under
``resnetlearn/``, subpackages included (a module's *subpackage* is its parent folder under ``resnetlearn/``):

* learner-name comparisons outside the records: comparisons (``==``, ``!=``, ``in``, ``not in``), ``match`` cases
  and ``startswith``/``endswith`` calls against a learner *kind* (``"hand_built"``, ``"kernel"``, a kernel name of
  ``KERNEL_REGISTRY`` or a kernel spec ``"name:arch"``), a training *mode* (``MODES``), an *architecture* name
  (``ARCHITECTURES``) or a network's label ``"arch(mode)"`` (both), in modules other than the records
  (:data:`RECORDS`, and wherever ``ARCHITECTURES`` or ``KERNEL_REGISTRY`` is defined, so a record keeps its place
  when it moves). The name lists are read from the
  source (the ``Architecture(...)`` entries of ``ARCHITECTURES``, the ``KernelEntry(...)`` entries of
  ``KERNEL_REGISTRY``, the ``MODES`` tuple), so a new architecture or kernel is counted without editing this
  file; beside them, dict literals keyed by two or more of these names (name-keyed tables);
* learner-kind checks by identity or type outside the records: ``kind_of(r) is X`` / ``is not X``,
  ``type(x) is X`` and ``isinstance(x, X)`` / ``issubclass(x, X)`` where ``X`` is a learner record class
  (:data:`KIND_CLASSES`) or a ``kind_of`` result, in modules other than the records (a module defining a
  record class is one too, wherever it lives); these compare no string, so the name comparisons above miss them;
* private (underscore) names imported across modules and across subpackages: ``from .m import _x`` and
  ``m._x`` on an imported package module;
* import direction by subpackage order (:data:`LAYERS`: classroom → reproduce → kernels → learners → targets, so
  kernels may import learners and learners may not import kernels; the top-level helpers ``validation``,
  ``memory``, ``device``, ``version`` lie below every subpackage, so anyone may import them; the package's own
  ``__init__``/``__main__`` lie above all). Between two subpackages the order decides; inside one subpackage (or
  among the helpers) the module-level import graph does: a target the importer already reaches is downward, one
  that reaches the importer is upward, anything else sideways. Counted: module-level imports that point upward
  (target 0); deferred imports (import statements inside a function body) that point sideways or upward with no
  comment on the statement's lines, or just before it on a line of its own or after the block header that opens
  it, saying why (target 0); deferred imports that point downward, listed as "could be at module level";
* modules over 600 (and 750) lines; functions over 80 lines; counted in lines of code (:func:`code_lines`: blank
  lines, comments and docstrings left out, so documenting a function never makes it "long");
* figure-name branches outside the figure definitions (``resnetlearn/reproduce/figures.py``);
* calls passing more than four arguments by position (package and the script folders, :data:`SCRIPTS`);
* the largest module (lines); modules that branch on an architecture's name (records included);
* the import graph between the package's modules: cycles, and the number of internal imports;
* style words (:data:`STYLE_WORDS`: colours, markers, lines, legend families) under the subpackages that hold no
  presentation (:data:`STYLE_FREE`): class fields, functions and methods, keyword arguments, attributes and dict
  keys so named (prose is not counted); how a figure draws a learner is the classroom's
  (``resnetlearn/classroom/styles.py``);
* the reproduction's records named in the learners (:data:`REPRODUCTION_RECORDS` under ``learners/``);
* functions taking more than :data:`MAX_PARAMETERS` parameters.

    python tools/code_metrics.py [--json FILE]
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ("benchmarks", "probes", "tools", "gpu", "course")
"""The folders of scripts beside the package, counted for positional calls."""
FIGURE_NAMES = {"fig2a", "fig2b", "fig3", "fig4", "fig4b", "thm3", "thm2", "companion"}
KIND_WORDS = {"hand_built", "kernel"}
"""Learner kinds that no registry names: the §8.2 hand-built network (``model="hand_built"``) and the figure
points' ``mode="kernel"`` marking a kernel learner."""
RECORDS = {"kernels", "kernels.registry", "kernels.recursions", "learners.networks", "reproduce.learner",
           "learners.modes", "classroom.styles"}
"""Modules (dotted names under the package; a subpackage's ``__init__`` is the subpackage's name) that define the
architectures, the kernels' Grams and registry, the modes and the learner records: comparisons with a learner's
name there are the records answering, not counted. Any module defining ``ARCHITECTURES`` or ``KERNEL_REGISTRY``
is a record too, wherever it lives."""
LAYERS = ("targets", "learners", "kernels", "reproduce", "classroom")
"""The subpackages from the bottom up: an import points downward when its target lies earlier in this tuple.
Top-level modules (``validation``, ``memory``, ``device``, ``version``) lie below all of them; the package's
``__init__`` and ``__main__`` above all."""
TOP = {"__init__", "__main__"}
KIND_CLASSES = {"Network", "Learner", "Kernel", "HandBuilt"}
"""The learner record classes (``Network`` is ``training.Learner`` under its records' name): a comparison of a
learner's kind by identity (``kind_of(r) is Network``) or a type check against one of them asks the kind."""
KIND_OF = {"kind_of"}
"""Calls whose result is a learner's kind (a record class): ``kind_of(row) is ...``. (``type(x) is X`` counts when
``X`` is a record class; ``type(a) is type(b)`` asks no learner's kind.)"""
NOT_LEARNERS = {"figure"}
"""Operands that hold something other than a learner although their values share a learner's name
(``args.figure == "all"``, the command line's every-figure choice): a comparison with one is not counted."""
PREFIX_MIN = 4
"""A ``startswith`` argument of at least this many characters that begins a learner name (``"conj"``,
``"nngp"``) counts as that name."""
MODULE_LINES, FUNCTION_LINES = 600, 80
STYLE_WORDS = {"colour", "color", "colours", "colors", "marker", "markers", "dash", "linestyle", "line", "family",
               "legend", "style", "styles", "trained_layers"}
"""Names that say how a figure draws something (also counted: any name ending in ``_style``, ``_colour`` or
``_color``)."""
STYLE_FREE = ("learners", "kernels", "targets")
"""The subpackages that hold no presentation."""
REPRODUCTION_RECORDS = {"Point", "Search"}
"""The reproduction's records (a figure point, its search), which the plain learners do not name."""
MAX_PARAMETERS = 10


# ---------------------------------------------------------------- modules and their names

def _modules(package: Path) -> dict[str, Path]:
    """Dotted module name (relative to the package; ``__init__`` for the package itself) → file."""
    out = {}
    for p in sorted(package.rglob("*.py")):
        parts = list(p.relative_to(package).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1] or ["__init__"]
        out[".".join(parts)] = p
    return out


def _subpackage(path: Path, package: Path) -> str:
    return path.parent.relative_to(package).as_posix().replace("/", ".") if path.parent != package else ""


def _assigned(tree: ast.AST, name: str) -> ast.AST | None:
    """The value assigned to module-level ``name`` (plain or annotated assignment)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return node.value
    return None


def _entry_names(value: ast.AST, call: str) -> set[str]:
    """First positional string of every ``call(...)`` inside ``value`` (an entry's name)."""
    return {n.args[0].value for n in ast.walk(value)
            if isinstance(n, ast.Call) and getattr(n.func, "id", getattr(n.func, "attr", None)) == call
            and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)}


def name_lists(trees: dict[str, ast.AST]) -> dict[str, set[str]]:
    """The learner names the package defines, read from its source: ``architecture`` (``ARCHITECTURES``'s
    ``Architecture`` entries), ``kernel`` (``KERNEL_REGISTRY``'s ``KernelEntry`` entries), ``mode`` (``MODES``).
    Each must be found (a metric that silently counts against an empty list would read 0)."""
    found = {"architecture": set(), "kernel": set(), "mode": set()}
    for tree in trees.values():
        if (v := _assigned(tree, "ARCHITECTURES")) is not None:
            found["architecture"] |= _entry_names(v, "Architecture")
        if (v := _assigned(tree, "KERNEL_REGISTRY")) is not None:
            found["kernel"] |= _entry_names(v, "KernelEntry")
        if (v := _assigned(tree, "MODES")) is not None:
            found["mode"] |= _constants(v) | _entry_names(v, "Mode")
    missing = [k for k, v in found.items() if not v]
    if missing:
        raise ValueError(f"code_metrics: no {missing} found (ARCHITECTURES / KERNEL_REGISTRY / MODES moved?)")
    return found


def _categories(value: str, names: dict[str, set[str]]) -> set[str]:
    """Which learner names a string is: an architecture, a mode, a kind (a kernel name or spec, or a kind word), or
    a network's label ``"arch(mode)"`` (both an architecture and a mode)."""
    arch, paren, mode = value.partition("(")
    if paren and mode.endswith(")") and arch in names["architecture"] and mode[:-1] in names["mode"]:
        return {"architecture", "mode"}
    cats = {c for c in ("architecture", "mode") if value in names[c]}
    if value in KIND_WORDS or value in names["kernel"] or (":" in value and value.partition(":")[0] in names["kernel"]):
        cats.add("kind")
    return cats


def _style_word(name) -> bool:
    return isinstance(name, str) and (name.lower() in STYLE_WORDS or name.lower().endswith(("_style", "_colour",
                                                                                                 "_color")))


def style_names(tree: ast.AST) -> list[str]:
    """``line name`` of every style word in ``tree``: a class field (annotated or assigned in a class body), a
    function or method, a keyword argument (in a call or a definition), an attribute or a string dict key."""
    hits = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ClassDef):
            for st in node.body:
                targets = [st.target] if isinstance(st, ast.AnnAssign) else st.targets if isinstance(st, ast.Assign) \
                    else []
                names += [(st.lineno, t.id) for t in targets if isinstance(t, ast.Name)]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.append((node.lineno, node.name))
            names += [(a.lineno, a.arg) for a in node.args.args + node.args.kwonlyargs]
        elif isinstance(node, ast.keyword):
            names.append((node.value.lineno, node.arg))
        elif isinstance(node, ast.Attribute):
            names.append((node.lineno, node.attr))
        elif isinstance(node, ast.Dict):
            names += [(k.lineno, k.value) for k in node.keys if isinstance(k, ast.Constant)]
        hits += [f"{line} {name}" for line, name in names if _style_word(name)]
    return sorted(set(hits), key=lambda h: (int(h.split()[0]), h.split()[1]))


def names_used(tree: ast.AST, wanted: set[str]) -> list[str]:
    """``line name`` of every use of a name of ``wanted`` (a name, an attribute, an import, or a word of a string
    such as a docstring's reference)."""
    hits = []
    word = re.compile(r"\b(" + "|".join(map(re.escape, sorted(wanted))) + r")\b")
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            hits += [(node.lineno, w) for w in word.findall(node.value)]
        if isinstance(node, ast.Name) and node.id in wanted:
            hits.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in wanted:
            hits.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom):
            hits += [(node.lineno, a.name) for a in node.names if a.name in wanted]
    return [f"{line} {name}" for line, name in sorted(set(hits))]


def long_signatures(tree: ast.AST, limit: int = MAX_PARAMETERS) -> list[str]:
    """``name (n)`` of every function or method taking more than ``limit`` parameters (``self``/``cls`` not
    counted; ``*args`` and ``**kwargs`` count one each)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs] + [p.arg for p in (a.vararg, a.kwarg) if p]
            n = len([p for p in params if p not in ("self", "cls")])
            if n > limit:
                out.append(f"{node.name} ({n})")
    return out


# ---------------------------------------------------------------- comparisons

def _constants(node: ast.AST) -> set[str]:
    """String constants directly in a comparison operand (a constant, or a tuple/list/set of them)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
    return set()


def _operand_name(node: ast.AST) -> str | None:
    """The last identifier of an operand: ``x``, ``a.x``, ``a["x"]`` → ``"x"``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    return None


def _branch_constants(tree: ast.AST, *, prefix: bool = False):
    """(line, string constants, is a startswith/endswith call) of every comparison, ``match`` case and (with
    ``prefix``) ``startswith`` / ``endswith`` call."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if not any(_operand_name(x) in NOT_LEARNERS for x in operands):
                yield node.lineno, set().union(*(_constants(x) for x in operands)), False
        elif isinstance(node, ast.match_case):
            yield node.pattern.lineno, {n.value.value for n in ast.walk(node.pattern)
                                        if isinstance(n, ast.MatchValue) and isinstance(n.value, ast.Constant)
                                        and isinstance(n.value.value, str)}, False
        elif (prefix and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and node.args):
            yield node.lineno, _constants(node.args[0]), node.func.attr == "startswith"


def _branches_on(tree: ast.AST, names: set[str], *, prefix: bool = False) -> list[int]:
    """Line numbers of comparisons / match cases / startswith calls against one of ``names``."""
    return [line for line, found, _ in _branch_constants(tree, prefix=prefix) if found & names]


def name_comparisons(tree: ast.AST, names: dict[str, set[str]]) -> list[dict]:
    """Comparisons, match cases and startswith/endswith calls against a learner kind, mode or architecture:
    ``{"line", "names", "categories"}`` each, sorted by line."""
    out = []
    every = set().union(*names.values(), KIND_WORDS)
    for line, found, starts in _branch_constants(tree, prefix=True):
        if starts:  # "conj" begins "conjugate": the name it begins stands for it
            found = {next((n for n in sorted(every) if n.startswith(v)), v) if len(v) >= PREFIX_MIN else v
                     for v in found}
        hit = {v: _categories(v, names) for v in found}
        hit = {v: c for v, c in hit.items() if c}
        if hit:
            out.append({"line": line, "names": sorted(hit), "categories": sorted(set().union(*hit.values()))})
    return sorted(out, key=lambda h: h["line"])


def name_keyed_tables(tree: ast.AST, names: dict[str, set[str]]) -> list[int]:
    """Lines of dict literals keyed by two or more learner names (a second registry beside the records)."""
    return sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Dict)
                  and sum(1 for k in n.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
                          and _categories(k.value, names)) >= 2)


def _kind_operand(node: ast.AST) -> bool:
    """Whether an operand is a learner kind: a record class (:data:`KIND_CLASSES`, by name or attribute) or a
    ``kind_of(...)`` call."""
    if isinstance(node, ast.Call):
        return _operand_name(node.func) in KIND_OF
    return isinstance(node, (ast.Name, ast.Attribute)) and _operand_name(node) in KIND_CLASSES


def kind_checks(tree: ast.AST) -> list[int]:
    """Lines of learner-kind checks by identity or type: ``is`` / ``is not`` comparisons with a kind operand
    (:func:`_kind_operand`) on either side, and ``isinstance`` / ``issubclass`` calls against a record class."""
    out = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Compare):
            operands = [n.left, *n.comparators]
            if any(isinstance(op, (ast.Is, ast.IsNot)) and (_kind_operand(a) or _kind_operand(b))
                   for op, a, b in zip(n.ops, operands, operands[1:])):
                out.append(n.lineno)
        elif (isinstance(n, ast.Call) and _operand_name(n.func) in ("isinstance", "issubclass") and len(n.args) == 2
              and any(_kind_operand(c) for c in (n.args[1].elts if isinstance(n.args[1], ast.Tuple) else [n.args[1]]))):
            out.append(n.lineno)
    return sorted(out)


def _defines_record_class(tree: ast.AST) -> bool:
    return any(isinstance(n, ast.ClassDef) and n.name in KIND_CLASSES for n in tree.body)


def _positional_calls(tree: ast.AST) -> list[int]:
    return [n.lineno for n in ast.walk(tree)
            if isinstance(n, ast.Call) and len([a for a in n.args if not isinstance(a, ast.Starred)]) > 4]


# ---------------------------------------------------------------- imports

def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(node: ast.AST, module: str, is_package: bool, known: set[str]):
    """``(target module, imported name or None, bound name)`` for each name an import statement brings in from
    the package (the imported name is None when it is a module itself); nothing for an outside import."""
    def mod(parts):
        return ".".join(parts) or "__init__"

    if isinstance(node, ast.Import):
        for a in node.names:
            if a.name == "resnetlearn" or a.name.startswith("resnetlearn."):
                parts = a.name.split(".")[1:]
                yield mod(parts), None, a.asname or a.name.split(".")[0]
        return
    here = [] if module == "__init__" else module.split(".")
    if node.level:
        pkg = here if is_package else here[:-1]
        base = pkg[:len(pkg) - (node.level - 1)] + (node.module.split(".") if node.module else [])
    elif node.module and (node.module == "resnetlearn" or node.module.startswith("resnetlearn.")):
        base = node.module.split(".")[1:]
    else:
        return
    for a in node.names:
        if ".".join(base + [a.name]) in known:
            yield mod(base + [a.name]), None, a.asname or a.name
        else:
            yield mod(base), a.name, a.asname or a.name


def _function_depths(tree: ast.AST) -> dict[ast.AST, bool]:
    """Every import statement → whether it sits inside a function body (a deferred import)."""
    out = {}

    def visit(node, deferred):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out[child] = deferred
            visit(child, deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def _comment_lines(source: str) -> tuple[set[int], set[int]]:
    """Lines holding a comment, and lines whose comment speaks for the next line: a comment on a line of its own,
    or after a block header (``try:  # plotly is optional``), not after a statement of its own."""
    anywhere, ahead = set(), set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            anywhere.add(tok.start[0])
            code = tok.line[:tok.start[1]].strip()
            if not code or code.endswith(":"):
                ahead.add(tok.start[0])
    return anywhere, ahead


def _reach(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Every module → the modules its module-level imports reach (transitively)."""
    out = {}
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            v = todo.pop()
            if v not in seen:
                seen.add(v)
                todo.extend(graph.get(v, ()))
        out[start] = seen
    return out


def _layer(module: str) -> tuple[str, int]:
    """A module's group (its subpackage, the top-level helpers, or the package's own ``__init__``/``__main__``)
    and the group's rank in the import order (:data:`LAYERS`, helpers below, the package's entry points above)."""
    first = module.split(".")[0]
    if first in LAYERS:
        return first, LAYERS.index(first)
    if module in TOP:
        return "(top)", len(LAYERS)
    return "(helpers)", -1


def _direction(module: str, target: str, reach: dict[str, set[str]]) -> str:
    """``downward``, ``upward`` or ``sideways``: by the subpackage order between two groups; inside one group by
    the module-level import graph (a target the importer reaches is below it, one that reaches the importer is
    above it)."""
    (group, rank), (target_group, target_rank) = _layer(module), _layer(target)
    if group != target_group:
        return "downward" if target_rank < rank else "upward"
    return "downward" if target in reach[module] else "upward" if module in reach.get(target, ()) else "sideways"


def import_facts(package: Path, sources: dict[str, str], trees: dict[str, ast.AST]) -> dict:
    """The import graph (module-level and all), private names imported across modules and subpackages, the
    module-level imports that point upward, and the deferred imports with their direction."""
    files = _modules(package)
    known = set(files)
    sub = {m: _subpackage(p, package) for m, p in files.items()}
    graph_all = {m: set() for m in files}
    graph_top = {m: set() for m in files}
    private, deferred, top_edges = [], [], []
    for m, p in files.items():
        tree, is_pkg = trees[m], p.name == "__init__.py"
        depth = _function_depths(tree)
        module_names = {}
        for node, inside in depth.items():
            targets = [t for t in _resolve(node, m, is_pkg, known) if t[0] != m]
            for target, name, bound in targets:
                graph_all[m].add(target)
                if not inside:
                    graph_top[m].add(target)
                    top_edges.append((m, node.lineno, target))
                if name is None:
                    module_names[bound] = target
                elif _is_private(name):
                    private.append({"module": m, "line": node.lineno, "from": target, "name": name,
                                    "across_subpackages": sub[m] != sub[target]})
            if inside:
                deferred.append({"module": m, "node": node, "targets": sorted({t[0] for t in targets})})
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_names and _is_private(node.attr)):
                target = module_names[node.value.id]
                private.append({"module": m, "line": node.lineno, "from": target, "name": node.attr,
                                "across_subpackages": sub[m] != sub[target]})
    reach = _reach(graph_top)
    rows = []
    for d in deferred:
        m, node = d["module"], d["node"]
        kinds = [_direction(m, t, reach) for t in d["targets"]]
        direction = ("upward" if "upward" in kinds else "sideways" if "sideways" in kinds
                     else "downward" if kinds else "outside")
        anywhere, ahead = _comment_lines(sources[m])
        commented = node.lineno - 1 in ahead or any(ln in anywhere for ln in range(node.lineno, node.end_lineno + 1))
        rows.append({"module": m, "line": node.lineno, "targets": d["targets"], "direction": direction,
                     "commented": commented})
    upward = sorted({(m, line, t) for m, line, t in top_edges if _direction(m, t, reach) == "upward"})
    return {"graph": graph_all, "private": sorted(private, key=lambda r: (r["module"], r["line"])),
            "deferred": sorted(rows, key=lambda r: (r["module"], r["line"])),
            "upward": [{"module": m, "line": line, "target": t} for m, line, t in upward]}


def code_lines(source: str, tree: ast.AST) -> set[int]:
    """The numbers of the lines that hold code: a token other than a comment or a line break, outside every
    docstring (the first statement of a module, class or function when it is a string)."""
    lines = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
                            tokenize.ENDMARKER):
            lines.update(range(tok.start[0], tok.end[0] + 1))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.difference_update(range(first.lineno, first.end_lineno + 1))
    return lines


def long_functions(tree: ast.AST, limit: int = FUNCTION_LINES, code: set[int] | None = None) -> list[dict]:
    """Functions (and methods, nested ones too) longer than ``limit`` lines of code (``code``: the lines that hold
    code, :func:`code_lines`; None: every line), ``def`` to last line."""
    out = []

    def size(node) -> int:
        span = range(node.lineno, node.end_lineno + 1)
        return len(span) if code is None else sum(ln in code for ln in span)

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if not isinstance(child, ast.ClassDef) and size(child) > limit:
                    out.append({"name": name, "line": child.lineno, "lines": size(child)})
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sorted(out, key=lambda f: f["line"])


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


# ---------------------------------------------------------------- the report

def measure(root: Path = ROOT) -> dict:
    """Every count, for the package under ``root/resnetlearn`` (and the script folders for positional calls)."""
    package = root / "resnetlearn"
    files = _modules(package)
    bench = sorted(p for folder in SCRIPTS for p in (root / folder).glob("*.py"))
    sources = {m: p.read_text() for m, p in files.items()}
    trees = {m: ast.parse(s, filename=str(files[m])) for m, s in sources.items()}
    rel = {m: p.relative_to(root).as_posix() for m, p in files.items()}
    code = {m: code_lines(s, trees[m]) for m, s in sources.items()}
    lines = {m: len(code[m]) for m in sources}
    names = name_lists(trees)
    arch_names = names["architecture"]
    records = {m for m in files if m in RECORDS
               or any(_assigned(trees[m], n) is not None for n in ("ARCHITECTURES", "KERNEL_REGISTRY"))}
    outside = [m for m in files if m not in records]
    comparisons = {rel[m]: h for m in outside if (h := name_comparisons(trees[m], names))}
    tables = {rel[m]: t for m in outside if (t := name_keyed_tables(trees[m], names))}
    kind_outside = [m for m in outside if not _defines_record_class(trees[m])]
    kinds = {rel[m]: k for m in kind_outside if (k := kind_checks(trees[m]))}
    by_cat = {c: sum(1 for hs in comparisons.values() for h in hs if c in h["categories"])
              for c in ("kind", "mode", "architecture")}
    fig = {rel[m]: _branches_on(trees[m], FIGURE_NAMES) for m, p in files.items() if p.name != "figures.py"}
    arch = {rel[m]: _branches_on(trees[m], arch_names, prefix=True) for m in files}
    bench_trees = {p.relative_to(root).as_posix(): ast.parse(p.read_text(), filename=str(p)) for p in bench}
    pos = {**{rel[m]: _positional_calls(trees[m]) for m in files},
           **{k: _positional_calls(t) for k, t in bench_trees.items()}}
    imp = import_facts(package, sources, trees)
    graph = imp["graph"]
    deferred = imp["deferred"]
    internal = [d for d in deferred if d["targets"]]
    flagged = [d for d in internal if d["direction"] in ("sideways", "upward") and not d["commented"]]
    downward = [d for d in internal if d["direction"] == "downward"]
    funcs = {rel[m]: f for m in files if (f := long_functions(trees[m], code=code[m]))}
    largest = max(lines, key=lines.get)
    style_free = [m for m in files if m.split(".")[0] in STYLE_FREE]
    styles = {rel[m]: h for m in style_free if (h := style_names(trees[m]))}
    named_records = {rel[m]: h for m in files if m.split(".")[0] == "learners"
                     and (h := names_used(trees[m], REPRODUCTION_RECORDS))}
    signatures = {rel[m]: s for m in files if (s := long_signatures(trees[m]))}
    return {
        "modules": len(files),
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
        # the learner records and the name comparisons outside them
        "name_lists": {k: sorted(v) for k, v in names.items()} | {"kind_words": sorted(KIND_WORDS)},
        "records": sorted(records),
        "learner_name_comparisons_outside_records": sum(map(len, comparisons.values())),
        "learner_name_comparisons_by_category": by_cat,
        "learner_name_comparisons_by_file": comparisons,
        "name_keyed_tables_by_file": tables,
        "learner_kind_checks_outside_records": sum(map(len, kinds.values())),
        "learner_kind_checks_by_file": kinds,
        "private_names_imported_across_modules": len(imp["private"]),
        "private_names_imported_across_subpackages": sum(r["across_subpackages"] for r in imp["private"]),
        "private_imports": [f"{r['module']}:{r['line']} {r['from']}.{r['name']}" for r in imp["private"]],
        "import_order": [*reversed(LAYERS), "(top-level helpers)"],
        "module_level_upward_imports": len(imp["upward"]),
        "module_level_upward_imports_list": [f"{u['module']}:{u['line']} -> {u['target']}" for u in imp["upward"]],
        "deferred_imports": len(deferred),
        "deferred_internal_imports": len(internal),
        "deferred_sideways_or_upward_uncommented": len(flagged),
        "deferred_imports_list": [f"{d['module']}:{d['line']} -> {','.join(d['targets']) or '(outside)'} "
                                  f"[{d['direction']}{', commented' if d['commented'] else ''}]" for d in deferred],
        "deferred_sideways_or_upward_uncommented_list": [f"{d['module']}:{d['line']} -> {','.join(d['targets'])} "
                                                         f"[{d['direction']}]" for d in flagged],
        "deferred_downward": len(downward),
        "deferred_downward_list": [f"{d['module']}:{d['line']} -> {','.join(d['targets'])}" for d in downward],
        f"modules_over_{MODULE_LINES}_lines": {k: v for k, v in sorted(lines.items()) if v > MODULE_LINES},
        f"functions_over_{FUNCTION_LINES}_lines": sum(map(len, funcs.values())),
        "long_functions_by_file": {k: [f"{f['name']}:{f['line']} ({f['lines']} lines)" for f in v]
                                   for k, v in funcs.items()},
        "style_names_outside_classroom": sum(map(len, styles.values())),
        "style_names_by_file": styles,
        "reproduction_records_named_in_learners": sum(map(len, named_records.values())),
        "reproduction_records_in_learners_by_file": named_records,
        f"functions_over_{MAX_PARAMETERS}_parameters": sum(map(len, signatures.values())),
        "long_signatures_by_file": signatures,
    }


def report(m: dict) -> str:
    """The numbers as a reader would want them: one line per count, then the places."""
    out = [f"modules: {m['modules']}; largest: {m['largest_module']['name']} ({m['largest_module']['lines']} lines); "
           f"over 750 lines: {m['modules_over_750_lines']}",
           f"figure-name branches outside figures.py: {m['figure_name_branches_outside_figures']} "
           f"{m['figure_name_branches_by_file']}",
           f"calls with > 4 positional arguments: {m['calls_with_more_than_4_positional_args']} "
           f"{m['positional_calls_by_file']}",
           f"modules branching on architecture names: {len(m['modules_branching_on_architecture_names'])} "
           f"{m['architecture_branches_by_file']}",
           f"import cycles: {len(m['import_cycles'])} {m['import_cycles']}; internal imports: {m['internal_imports']}",
           "",
           f"learner-name comparisons outside the records {m['records']}: "
           f"{m['learner_name_comparisons_outside_records']} (by category, one comparison may be in two: "
           f"{m['learner_name_comparisons_by_category']})"]
    for f, hits in m["learner_name_comparisons_by_file"].items():
        out.append(f"  {f} ({len(hits)}): " + ", ".join(f"{h['line']} {'/'.join(h['names'])}" for h in hits))
    out.append(f"learner-kind checks by identity or type outside the records (kind_of(r) is X, isinstance(x, X), "
               f"X one of {sorted(KIND_CLASSES)}): {m['learner_kind_checks_outside_records']}")
    out += [f"  {f} ({len(v)}): {', '.join(map(str, v))}" for f, v in m["learner_kind_checks_by_file"].items()]
    out.append(f"name-keyed tables (dict literals keyed by learner names): {m['name_keyed_tables_by_file']}")
    out.append(f"private names imported across modules: {m['private_names_imported_across_modules']}; "
               f"across subpackages: {m['private_names_imported_across_subpackages']}")
    out += [f"  {r}" for r in m["private_imports"]]
    out.append(f"import order {' → '.join(m['import_order'])}: module-level imports pointing upward: "
               f"{m['module_level_upward_imports']}")
    out += [f"  {r}" for r in m["module_level_upward_imports_list"]]
    out.append(f"deferred imports: {m['deferred_imports']}; package-internal: {m['deferred_internal_imports']}; "
               f"sideways or upward without a comment: {m['deferred_sideways_or_upward_uncommented']}")
    out += [f"  {r}" for r in m["deferred_sideways_or_upward_uncommented_list"]]
    excused = [r for r in m["deferred_imports_list"] if r.endswith((" [sideways, commented]", " [upward, commented]"))]
    out.append(f"deferred imports pointing sideways or upward with a comment saying why: {len(excused)}")
    out += [f"  {r}" for r in excused]
    out.append(f"deferred imports pointing downward (could be at module level): {m['deferred_downward']}")
    out += [f"  {r}" for r in m["deferred_downward_list"]]
    out.append(f"modules over {MODULE_LINES} lines: {m[f'modules_over_{MODULE_LINES}_lines']}")
    out.append(f"functions over {FUNCTION_LINES} lines: {m[f'functions_over_{FUNCTION_LINES}_lines']}")
    for f, fs in m["long_functions_by_file"].items():
        out.append(f"  {f}: " + ", ".join(fs))
    out.append(f"style names under {', '.join(STYLE_FREE)}: {m['style_names_outside_classroom']}")
    out += [f"  {f}: {', '.join(v)}" for f, v in m["style_names_by_file"].items()]
    out.append(f"reproduction records ({', '.join(sorted(REPRODUCTION_RECORDS))}) named under learners: "
               f"{m['reproduction_records_named_in_learners']}")
    out += [f"  {f}: {', '.join(v)}" for f, v in m["reproduction_records_in_learners_by_file"].items()]
    out.append(f"functions over {MAX_PARAMETERS} parameters: {m[f'functions_over_{MAX_PARAMETERS}_parameters']}")
    out += [f"  {f}: {', '.join(v)}" for f, v in m["long_signatures_by_file"].items()]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the numbers to this file")
    args = ap.parse_args()
    m = measure()
    print(report(m))
    if args.json:
        Path(args.json).write_text(json.dumps(m, indent=1) + "\n")


if __name__ == "__main__":
    main()
