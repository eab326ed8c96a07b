"""Every public callable of resnetlearn is documented in one format, numpydoc's (the format of NumPy and
scikit-learn): a one-line summary, a ``Parameters`` section whose entries are exactly the signature's parameters,
and a ``Returns`` (or ``Yields``) section where the function gives something back.

The public callables are the functions and classes named in the ``__all__`` of ``resnetlearn``, its subpackages and
its top-level helper modules (a module named there contributes its own ``__all__``, or, lacking one, the public
functions and classes it defines), and the public methods of those classes that take parameters. Each docstring is
parsed with :mod:`numpydoc.docscrape`, the parser numpydoc's Sphinx extension uses, so a section it cannot read
fails here as it would in a built manual.

Run as a script (``python tests/test_docstring_format.py``) it prints how many names are covered and how many pass.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import textwrap
import types
import warnings

import pytest

numpydoc_docscrape = pytest.importorskip("numpydoc.docscrape")

ROOT_MODULES = ("resnetlearn", "resnetlearn.reproduce", "resnetlearn.targets", "resnetlearn.classroom",
                "resnetlearn.learners", "resnetlearn.kernels", "resnetlearn.device", "resnetlearn.memory",
                "resnetlearn.threads", "resnetlearn.validation")
"""The modules whose ``__all__`` (or public definitions) make the public face."""
CONVERTING: tuple[str, ...] = ()
"""Packages whose docstrings are still being brought to the format: their cases are expected to fail, not
required to (none: every case is required to pass)."""
RETURNS_NOTHING = (None, "None", "NoReturn", "typing.NoReturn")
"""Return annotations that mean "nothing comes back"."""


def _module_names(module: types.ModuleType) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [name for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
            and obj.__module__ == module.__name__]


def _public_objects(module: types.ModuleType, seen_modules: set[str]) -> dict[str, object]:
    """Qualified name → function or class, reached from ``module``'s public names, descending into modules."""
    if module.__name__ in seen_modules:
        return {}
    seen_modules.add(module.__name__)
    found: dict[str, object] = {}
    for name in _module_names(module):
        obj = getattr(module, name, None)
        if obj is None:
            obj = importlib.import_module(f"{module.__name__}.{name}")
        if isinstance(obj, types.ModuleType):
            if obj.__name__.startswith("resnetlearn"):
                found.update(_public_objects(obj, seen_modules))
        elif (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__.startswith("resnetlearn"):
            found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def _methods(cls: type) -> dict[str, object]:
    """The class's own public methods (plain, class and static) that take parameters besides self or cls."""
    found = {}
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        func = attr.__func__ if isinstance(attr, (classmethod, staticmethod)) else attr
        if not inspect.isfunction(func) or func.__qualname__ != f"{cls.__qualname__}.{name}":
            continue  # a field whose default is a function defined elsewhere is not a method
        if _signature_names(attr, func):
            found[f"{cls.__module__}.{cls.__qualname__}.{name}"] = (attr, func)
    return found


def _signature_names(attr, func) -> list[str]:
    """Parameter names as numpydoc writes them (``*args``, ``**kwargs``), without self or cls."""
    params = list(inspect.signature(func).parameters.values())
    if not isinstance(attr, staticmethod) and "." in func.__qualname__ and params \
            and params[0].name in ("self", "cls"):
        params = params[1:]
    return [_written(p) for p in params]


def _written(param: inspect.Parameter) -> str:
    if param.kind is inspect.Parameter.VAR_POSITIONAL:
        return f"*{param.name}"
    if param.kind is inspect.Parameter.VAR_KEYWORD:
        return f"**{param.name}"
    return param.name


def _constructor_names(cls: type) -> list[str]:
    """The constructor's parameters when the project defines it (``__init__``, ``__new__`` or dataclass fields),
    else none."""
    for klass in cls.__mro__:
        if "__init__" in vars(klass) or "__new__" in vars(klass):
            if not klass.__module__.startswith("resnetlearn"):
                return []
            break
    try:
        params = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError):
        return []
    return [_written(p) for p in params]


def _returns_something(func) -> bool:
    """Whether the function gives a value back: by its return annotation, or, unannotated, by a ``return value``
    or ``yield`` in its own body."""
    func = inspect.unwrap(func)
    annotation = inspect.signature(func).return_annotation
    if annotation is not inspect.Signature.empty:
        return annotation not in RETURNS_NOTHING
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body[0]

    def own_nodes(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            yield child
            yield from own_nodes(child)

    return any((isinstance(n, ast.Return) and n.value is not None and not
                (isinstance(n.value, ast.Constant) and n.value.value is None))
               or isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(body))


def _documented(doc) -> list[str]:
    """Names in the ``Parameters`` section (an entry ``x, y : float`` documents both)."""
    names = []
    for param in doc["Parameters"]:
        names += [name.strip() for name in param.name.split(",") if name.strip()]
    return names


def problems(qualname: str, obj, attr=None) -> list[str]:
    """What in ``obj``'s docstring breaks the format (empty when it holds)."""
    is_class = inspect.isclass(obj)
    # a method that overrides a documented one without a docstring of its own shares the base's (inspect.getdoc)
    raw = vars(obj).get("__doc__") if is_class else inspect.getdoc(obj)
    if not raw or not raw.strip():
        return ["no docstring"]
    found = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            if is_class:
                doc = numpydoc_docscrape.ClassDoc(obj, config={"show_class_members": False})
            else:
                doc = numpydoc_docscrape.FunctionDoc(obj, role="meth" if attr is not None else "func")
        except Exception as error:  # numpydoc raises ValueError and its own ParseError on unreadable sections
            return [f"numpydoc cannot parse it: {error}"]
    found += [f"numpydoc warns: {w.message}" for w in caught]
    if not "".join(doc["Summary"]).strip():
        found.append("no one-line summary")
    if is_class:
        expected = _constructor_names(obj)
        documented = _documented(doc)
        if expected and not documented:  # a record may list its fields as Attributes
            documented = [name.strip() for a in doc["Attributes"] for name in a.name.split(",") if name.strip()]
    else:
        expected = _signature_names(attr if attr is not None else obj, obj)
        documented = _documented(doc)
    if sorted(documented) != sorted(expected):
        missing = [n for n in expected if n not in documented]
        extra = [n for n in documented if n not in expected]
        found.append(f"Parameters differ from the signature: missing {missing}, not in the signature {extra}")
    if not is_class and _returns_something(obj) and not (doc["Returns"] or doc["Yields"]):
        found.append("returns a value but has no Returns (or Yields) section")
    return found


def public_callables() -> dict[str, tuple]:
    """Qualified name → (object, the attribute as the class holds it, or None) for every public callable."""
    seen: set[str] = set()
    objects: dict[str, object] = {}
    for name in ROOT_MODULES:
        objects.update(_public_objects(importlib.import_module(name), seen))
    cases = {}
    for qualname, obj in sorted(objects.items()):
        cases[qualname] = (obj, None)
        if inspect.isclass(obj):
            for method_name, (attr, func) in sorted(_methods(obj).items()):
                cases[method_name] = (func, attr)
    return cases


CASES = public_callables()


def _converting(qualname: str) -> bool:
    return qualname.startswith(CONVERTING)


@pytest.mark.parametrize("qualname", [
    pytest.param(q, marks=pytest.mark.xfail(reason="being converted", strict=False)) if _converting(q) else q
    for q in CASES])
def test_docstring_follows_numpydoc(qualname):
    obj, attr = CASES[qualname]
    assert problems(qualname, obj, attr) == []


def test_the_enumeration_reaches_every_layer():
    """The cases above are the public face, not an empty list: names from each layer are among them, and the
    checker itself rejects a docstring that misses a parameter."""
    for name in ("resnetlearn.targets.complexity.complexity_eps", "resnetlearn.reproduce.running.run_figure",
                 "resnetlearn.device.select_device", "resnetlearn.classroom.plots",
                 "resnetlearn.learners.search.grid_search", "resnetlearn.kernels.classical.gaussian"):
        assert any(q.startswith(name) for q in CASES), name

    def half_documented(a, b=1):
        """Add.

        Parameters
        ----------
        a : int
            First.

        Returns
        -------
        int
            The sum.
        """
        return a + b

    assert problems("half_documented", half_documented) == [
        "Parameters differ from the signature: missing ['b'], not in the signature []"]
    counts = _counts()
    print(f"{counts['covered']} public names covered, {counts['passing']} pass" + (
        f" ({counts['converting']} in {', '.join(CONVERTING)}, {counts['converting_passing']} of them pass)"
        if CONVERTING else ""))


def _counts() -> dict[str, int]:
    passing = {q for q, (obj, attr) in CASES.items() if not problems(q, obj, attr)}
    converting = {q for q in CASES if _converting(q)}
    return {"covered": len(CASES), "passing": len(passing), "converting": len(converting),
            "converting_passing": len(passing & converting)}


if __name__ == "__main__":
    verbose = "-v" in sys.argv
    for q, (obj, attr) in CASES.items():
        found = problems(q, obj, attr)
        if found and (verbose or not _converting(q)):
            print(q, "::", "; ".join(found))
    counts = _counts()
    print(f"{counts['covered']} public names covered, {counts['passing']} pass" + (
        f" ({counts['converting']} in {', '.join(CONVERTING)}, {counts['converting_passing']} of them pass)"
        if CONVERTING else ""))
