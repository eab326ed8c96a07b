"""tools/code_metrics.py measures the package's structure; these tests check the metric itself on
small synthetic packages written here (what each count must find, and what it must not), not thresholds on the
real package."""

import importlib.util
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("code_metrics", ROOT / "tools" / "code_metrics.py")
cm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cm)

RECORDS = {
    "networks.py": """
        ARCHITECTURES = {a.name: a for a in (
            Architecture("2layer", "two layers"),
            Architecture("2layer_signs", "fixed signs"),
            Architecture("newnet", "added today"),
        )}

        def check(arch):
            return arch == "2layer"  # a record answering: not counted
    """,
    "kernel_registry.py": """
        KERNEL_REGISTRY = {e.name: e for e in (KernelEntry("gaussian", None), KernelEntry("ntk_inf", None))}
    """,
    "training.py": """
        MODES = ("all", "hidden")

        def outputs(mode):
            if mode == "hidden":
                return 1
            return 2
    """,
}


def _package(tmp_path, files):
    """Write ``files`` (path under resnetlearn/ → source) and return the root to measure."""
    for rel, src in {**RECORDS, **files}.items():
        p = tmp_path / "resnetlearn" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(src).lstrip())
    (tmp_path / "resnetlearn" / "__init__.py").touch()
    (tmp_path / "benchmarks").mkdir(exist_ok=True)
    return tmp_path


def test_name_lists_are_read_from_the_records(tmp_path):
    m = cm.measure(_package(tmp_path, {}))
    assert m["name_lists"]["architecture"] == ["2layer", "2layer_signs", "newnet"]
    assert m["name_lists"]["kernel"] == ["gaussian", "ntk_inf"]
    assert m["name_lists"]["mode"] == ["all", "hidden"]
    # training.py is no record: its mode branch counts; networks.py's comparison does not
    assert m["learner_name_comparisons_by_file"] == {
        "resnetlearn/training.py": [{"line": 4, "names": ["hidden"], "categories": ["mode"]}]}


def test_comparisons_with_every_kind_mode_and_architecture(tmp_path):
    m = cm.measure(_package(tmp_path, {"figs.py": """
        def f(p, args, s):
            a = p["model"] == "2layer_signs"
            b = p["model"] in ("hand_built", "kernel")
            c = s == "ntk_inf:2layer"
            d = s.startswith("ntk_")
            e = p["model"] != "newnet"
            g = p["mode"] == "other" or label(p) == "2layer(hidden)"
            h = args.figure == "all"
            match s:
                case "gaussian":
                    pass
            return {"2layer": 1, "gaussian": 2}
    """}))
    hits = m["learner_name_comparisons_by_file"]["resnetlearn/figs.py"]
    assert [(h["line"], h["names"], h["categories"]) for h in hits] == [
        (2, ["2layer_signs"], ["architecture"]),
        (3, ["hand_built", "kernel"], ["kind"]),
        (4, ["ntk_inf:2layer"], ["kind"]),  # a kernel spec
        (5, ["ntk_inf"], ["kind"]),  # "ntk_" begins a kernel name
        (6, ["newnet"], ["architecture"]),  # read from ARCHITECTURES, no list to edit
        (7, ["2layer(hidden)"], ["architecture", "mode"]),  # a network's label names both
        (10, ["gaussian"], ["kind"]),  # a match case
    ]  # "other" is no learner; args.figure == "all" is the CLI's every-figure choice, not a mode
    assert m["learner_name_comparisons_outside_records"] == 8  # the seven above and training.py's mode branch
    assert m["learner_name_comparisons_by_category"] == {"kind": 4, "mode": 2, "architecture": 3}
    assert m["name_keyed_tables_by_file"] == {"resnetlearn/figs.py": [12]}


def test_a_missing_name_list_is_an_error(tmp_path):
    root = _package(tmp_path, {})
    (root / "resnetlearn" / "training.py").write_text("X = 1\n")
    with pytest.raises(ValueError, match="mode"):
        cm.measure(root)


def test_private_names_across_modules_and_subpackages(tmp_path):
    m = cm.measure(_package(tmp_path, {
        "store.py": "_version = 1\n",
        "tables.py": """
            from . import store
            from .store import _version

            def v():
                return store._version, store.__name__
        """,
        "learners/__init__.py": "",
        "learners/net.py": "from ..store import _version\nfrom .fit import _step\n",
        "learners/fit.py": "_step = 1\n",
        "learners/registry.py": "KERNEL_REGISTRY = {}\n\ndef f(s):\n    return s == 'gaussian'\n",
    }))
    # a module that defines KERNEL_REGISTRY is a record wherever it lives: its comparison is not counted
    assert "learners.registry" in m["records"] and "resnetlearn/learners/registry.py" not in str(
        m["learner_name_comparisons_by_file"])
    assert m["private_imports"] == ["learners.net:1 store._version", "learners.net:2 learners.fit._step",
                                    "tables:2 store._version", "tables:5 store._version"]
    assert m["private_names_imported_across_modules"] == 4
    assert m["private_names_imported_across_subpackages"] == 1  # learners/ → the top level; fit is a sibling


def test_deferred_imports_and_their_direction(tmp_path):
    m = cm.measure(_package(tmp_path, {
        "low.py": "X = 1\n",
        "up.py": "from . import mid\n",
        "side.py": "Y = 2\n",
        "mid.py": """
            from . import low


            def f():
                import json
                from .low import X
                from .up import mid  # up imports mid back: deferred to break the cycle
                from .side import Y
                # plotly is optional; side draws with it
                from . import side
                try:  # side again: optional too
                    from .side import Y as Z
                except ImportError:
                    Z = None
                return json, X, mid, Y, side, Z
        """,
    }))
    assert m["deferred_imports_list"] == [
        "mid:5 -> (outside) [outside]",
        "mid:6 -> low [downward]",
        "mid:7 -> up [upward, commented]",
        "mid:8 -> side [sideways]",
        "mid:10 -> side [sideways, commented]",  # the comment on the line before
        "mid:12 -> side [sideways, commented]",  # the comment on the block header before
    ]  # mid:8 is not commented by the comment that ends mid:7, a statement of its own
    assert (m["deferred_imports"], m["deferred_internal_imports"], m["deferred_sideways_or_upward_uncommented"]) \
        == (6, 5, 1)


def test_long_modules_and_functions(tmp_path):
    body80 = "def ok():\n" + "    x = 1\n" * 78 + "    return x\n"  # 80 lines: within the limit
    body81 = "class C:\n    def long(self):\n" + "        x = 1\n" * 79 + "        return x\n"  # 81 lines
    m = cm.measure(_package(tmp_path, {"big.py": body80 + body81 + "Z = 0\n" * (601 - 80 - 82)}))
    assert m["modules_over_600_lines"] == {"big": 601}
    assert m["functions_over_80_lines"] == 1
    assert m["long_functions_by_file"] == {"resnetlearn/big.py": ["C.long:82 (81 lines)"]}


def test_docstrings_comments_and_blank_lines_are_not_lines_of_code(tmp_path):
    doc = '    """One line.\n\n    Parameters\n    ----------\n    x : int\n        a value.\n    """\n'
    body = "def f(x):\n" + doc + "    # a comment\n\n" + "    y = (x +\n         1)\n" + "    return y\n"
    source = '"""Module."""\n' + body
    tree = cm.ast.parse(source)
    assert sorted(cm.code_lines(source, tree)) == [2, 12, 13, 14]  # def, the two lines of y = ..., return
    m = cm.measure(_package(tmp_path, {"doc.py": source + "Z = 0\n" * 600}))
    assert m["modules_over_600_lines"] == {"doc": 604}  # 17 lines of text, 4 of them code, + 600
    long_doc = "def g():\n" + '    """' + "text\n" * 200 + '"""\n' + "    return 1\n"
    assert cm.long_functions(cm.ast.parse(long_doc), code=cm.code_lines(long_doc, cm.ast.parse(long_doc))) == []


def test_the_real_name_lists_are_complete():
    """The names the metric reads by AST are those the package defines (read here by importing it)."""
    from resnetlearn.kernels import registry as kernel_registry
    from resnetlearn.learners import networks, training

    m = cm.measure()
    assert m["name_lists"]["architecture"] == sorted(networks.ARCHITECTURES)
    assert "2layer_signs" in m["name_lists"]["architecture"]
    assert m["name_lists"]["kernel"] == sorted(kernel_registry.KERNEL_REGISTRY)
    assert m["name_lists"]["mode"] == sorted(training.MODES)


def test_records_are_dotted_module_names(tmp_path):
    """A record is named by its dotted module name: the kernels' Grams in ``kernels/__init__.py`` and
    ``learners/modes.py`` are records; a ``reproduce/__init__.py`` or ``reproduce/modes.py`` (same file stems) are
    not."""
    branch = "def f(mode):\n    return mode == 'hidden'\n"
    m = cm.measure(_package(tmp_path, {
        "kernels/__init__.py": branch, "learners/__init__.py": "", "learners/modes.py": branch,
        "reproduce/__init__.py": branch, "reproduce/modes.py": branch}))
    assert {"kernels", "learners.modes"} <= set(m["records"])
    assert not {"reproduce", "reproduce.modes"} & set(m["records"])
    assert sorted(m["learner_name_comparisons_by_file"]) == [
        "resnetlearn/reproduce/__init__.py", "resnetlearn/reproduce/modes.py", "resnetlearn/training.py"]


LAYERED = {
    "validation.py": "X = 1\n",
    "targets/__init__.py": "",
    "targets/concept.py": "from ..validation import X\n",  # a helper: anyone may import it
    "learners/__init__.py": "",
    "learners/fit.py": "from ..targets import concept\n",
    "kernels/__init__.py": "from ..learners import fit\n",  # kernels may import learners
    "reproduce/__init__.py": "",
    "reproduce/store.py": "from .. import kernels\n",
    "classroom/__init__.py": "",
    "classroom/plots.py": "from ..reproduce import store\n",
    "classroom/live.py": "from . import plots\n",
    "classroom/race.py": "X = 1\n",
}


def test_module_level_imports_against_the_subpackage_order(tmp_path):
    """classroom → reproduce → kernels → learners → targets, helpers below all: only the imports against it count."""
    m = cm.measure(_package(tmp_path, LAYERED))
    assert (m["module_level_upward_imports"], m["import_cycles"]) == (0, [])
    m = cm.measure(_package(tmp_path, {
        **LAYERED,
        "learners/net.py": "from .. import kernels\n",  # learners must not import kernels
        "targets/series.py": "from ..reproduce import store\n",
        "memory.py": "from .learners import fit\n",  # a helper importing a subpackage points up
    }))
    assert m["module_level_upward_imports_list"] == [
        "learners.net:1 -> kernels", "memory:1 -> learners.fit", "targets.series:1 -> reproduce.store"]
    assert m["module_level_upward_imports"] == 3


def test_deferred_imports_by_the_subpackage_order(tmp_path):
    m = cm.measure(_package(tmp_path, {**LAYERED, "reproduce/points.py": """
        def f():
            from ..classroom import race
            from .. import kernels
            from ..targets import concept
            from ..validation import X
            from . import store
            return race, kernels, concept, X, store


        def g():
            # the classroom draws with plotly, an optional dependency
            from ..classroom import plots
            return plots
    """, "learners/fit.py": """
        from ..targets import concept


        def h():
            from .. import kernels
            return kernels, concept
    """, "classroom/live.py": """
        from . import plots


        def k():
            from . import race
            from . import plots as p
            return race, p
    """}))
    assert m["deferred_sideways_or_upward_uncommented_list"] == [
        "classroom.live:5 -> classroom.race [sideways]",  # neither reaches the other (inside one subpackage)
        "learners.fit:5 -> kernels [upward]",  # learners must not import kernels, not even late
        "reproduce.points:2 -> classroom.race [upward]",
        "reproduce.points:6 -> reproduce.store [sideways]",  # points does not reach store at module level
    ]
    assert m["deferred_sideways_or_upward_uncommented"] == 4
    assert "reproduce.points:12 -> classroom.plots [upward, commented]" in m["deferred_imports_list"]
    assert m["deferred_downward_list"] == [  # could be at module level
        "classroom.live:6 -> classroom.plots",  # live already imports plots at module level
        "reproduce.points:3 -> kernels",
        "reproduce.points:4 -> targets.concept",
        "reproduce.points:5 -> validation",  # a helper lies below every subpackage
    ]
    assert m["deferred_downward"] == 4


def test_import_cycles(tmp_path):
    m = cm.measure(_package(tmp_path, {**LAYERED, "classroom/race.py": "from . import live\n",
                                       "classroom/plots.py": "from . import race\n"}))
    assert m["import_cycles"] == [["classroom.live", "classroom.plots", "classroom.race"]]


def test_kind_checks_by_identity_or_type(tmp_path):
    # no string is compared here, so the name comparisons count none of these: the kind checks must
    m = cm.measure(_package(tmp_path, {
        "learner.py": """
            class HandBuilt:
                pass

            def check(x):
                return isinstance(x, HandBuilt)  # the record's own module: not counted
        """,
        "tables.py": """
            from .learner import HandBuilt, Kernel, Network, kind_of


            def f(r, x, a, b):
                hand = kind_of(r) is HandBuilt
                nets = kind_of(r) is not Kernel
                kind = kind_of(r)
                net = kind is Network
                t = type(x) is Network
                i = isinstance(x, (int, Kernel))
                same = type(a) is type(b)  # no learner's kind
                none = x is None
                return kind_of(r).trained_by_sgd, hand, nets, net, t, i, same, none
        """}))
    assert m["learner_name_comparisons_outside_records"] == 1  # only training.py's mode branch
    assert m["learner_kind_checks_by_file"] == {"resnetlearn/tables.py": [5, 6, 8, 9, 10]}
    assert m["learner_kind_checks_outside_records"] == 5


def test_style_words_records_and_long_signatures(tmp_path):
    m = cm.measure(_package(tmp_path, {
        "learners/look.py": '''
            """A Point of prose names the record."""
            from dataclasses import dataclass


            @dataclass
            class Net:
                colour: str
                width: int
                marker = "o"

                def line_style(self, legend=None):
                    return {"dash": 1, "width": 2}, self.colour


            def draw(x, a, b, c, d, e, f, g, h, i, j):
                return x.family, dict(color=1), Search
        ''',
        "classroom/draw.py": '''
            def plot(colour, marker):  # the classroom may draw
                return colour, marker
        ''',
    }))
    assert m["style_names_by_file"] == {"resnetlearn/learners/look.py": [
        "7 colour", "9 marker", "11 legend", "11 line_style", "12 colour", "12 dash", "16 color", "16 family"]}
    assert m["style_names_outside_classroom"] == 8
    assert m["reproduction_records_in_learners_by_file"] == {"resnetlearn/learners/look.py": ["1 Point", "16 Search"]}
    assert m["long_signatures_by_file"] == {"resnetlearn/learners/look.py": ["draw (11)"]}
