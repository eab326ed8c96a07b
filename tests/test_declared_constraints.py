"""Bad input is refused before any work, generated from what each function and record declares.

Every callable that declares its parameters (:func:`resnetlearn.validation.validate_params`) or record that
declares its fields (``parameter_constraints``) is collected from the modules below; for every declared parameter
and every value its constraint refuses (:meth:`~resnetlearn.validation.Constraint.bad_values`) the call must raise a
ValueError or TypeError naming the parameter, and the function's own body must not be entered (a trace hook
raises if it is, so a value wrongly accepted fails at once instead of starting a training run).
"""

from __future__ import annotations

import importlib
import inspect
import sys

import pytest
import torch

from resnetlearn import validation as V
from resnetlearn.learners.training import Learner

MODULES = ("resnetlearn.classroom.check", "resnetlearn.classroom.experiments", "resnetlearn.targets.concept",
           "resnetlearn.targets.complexity", "resnetlearn.targets.taylor", "resnetlearn.targets.activations",
           "resnetlearn.learners.training", "resnetlearn.learners.search", "resnetlearn.learners.engine",
           "resnetlearn.learners.networks", "resnetlearn.learners.hand_built", "resnetlearn.kernels.checks",
           "resnetlearn.kernels.classical", "resnetlearn.kernels.parities", "resnetlearn.kernels.infinite",
           "resnetlearn.kernels.empirical_ntk", "resnetlearn.kernels.conjugate_kernel",
           "resnetlearn.kernels.initial_network", "resnetlearn.kernels.registry", "resnetlearn.kernels.ridge",
           "resnetlearn.kernels.experiments")

_MATRIX = torch.ones(3, 3, dtype=torch.float64)
VALID = {"n": 4, "d": 10, "k": 4, "eps": 0.1, "val_fraction": 0.2, "n_train": 100, "n_test": 100, "coeffs": [1.0],
         "c": 1.0, "arch": "2layer", "mode": "last", "m": 4, "learner": Learner("2layer", "last", m=4),
         "lrs": [0.1], "wds": [0.0], "seeds": [0, 1], "n_eval": 10, "n_models": 2, "lo": 0.01, "hi": 1.0, "wd": 0.0,
         "epochs": 2, "n1": 3, "n2": 3, "max_degree": 2, "widths": [4], "name": "gaussian", "params": {},
         "ridge": 0.1, "ridges": [0.1], "X1": _MATRIX, "X": _MATRIX, "x": _MATRIX, "X_test": _MATRIX,
         "centers": _MATRIX, "K": _MATRIX, "K_test": _MATRIX, "Phi": _MATRIX, "K_tests": [_MATRIX],
         "Phi_tests": [_MATRIX]}
"""Valid values for declared parameters that have no default (the others keep their defaults)."""


class BodyEntered(Exception):
    """The function's body started although an argument was refused by its declaration."""


def _declared_callables():
    from resnetlearn.kernels.experiments import KernelPredictor
    from resnetlearn.learners.hand_built import HAND_BUILT
    from resnetlearn.learners.training import TrainResult
    from resnetlearn.targets.concept import FunctionTarget, parity_instance, random_concept

    found = {}
    for name in MODULES:
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if inspect.isfunction(obj) and obj.__module__ == name and V.declared_constraints(obj):
                found[f"{name}.{attr}"] = obj
            if inspect.isclass(obj) and obj.__module__ == name and V.declared_constraints(obj):
                found[f"{name}.{attr}"] = obj
    inst = parity_instance()  # methods: bound to an instance
    found["ParityInstance.sample"] = inst.sample
    found["Target.reference_errors"] = random_concept(4, 2).reference_errors
    found["FunctionTarget.__init__"] = FunctionTarget
    found["HandBuiltConstruction.build"] = HAND_BUILT.build
    # the bodies are never entered, so records holding nothing bind the methods
    found["TrainResult.predict"] = TrainResult(*[None] * 10).predict
    found["KernelPredictor.__call__"] = KernelPredictor(None, None, None, 0.0).__call__
    return found


def _constraints(obj):
    if inspect.isclass(obj) and not V.declared_constraints(obj):  # a class whose __init__ is declared
        return V.declared_constraints(obj.__init__)
    return V.declared_constraints(obj)


def _base_arguments(obj) -> dict:
    """Keyword arguments that bind every required parameter: a valid value where one is declared, else None
    (the body is never reached, so a placeholder suffices)."""
    sig = inspect.signature(obj)
    declared = _constraints(obj)
    return {n: (VALID[n] if n in declared else None) for n, p in sig.parameters.items()
            if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _others(obj, base: dict) -> dict:
    """The other parameters' values a bound such as ``Interval(int, 0, "d")`` reads: given or default."""
    sig = inspect.signature(obj)
    vals = {n: p.default for n, p in sig.parameters.items() if p.default is not inspect.Parameter.empty}
    return {**vals, **base}


def _cases():
    for label, obj in _declared_callables().items():
        base = _base_arguments(obj)
        for name, constraint in _constraints(obj).items():
            for bad in constraint.bad_values(_others(obj, base)):
                yield pytest.param(obj, base, name, bad, id=f"{label}-{name}={bad!r}")


def _body(obj):
    fn = obj.__init__ if inspect.isclass(obj) else obj
    return getattr(inspect.unwrap(fn), "__code__", None)


def _call_guarded(obj, kwargs):
    body = _body(obj)

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code is body and not inspect.isclass(obj):
            raise BodyEntered(obj)
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        return obj(**kwargs)
    finally:
        sys.settrace(old)


CASES = list(_cases())


def test_every_converted_entry_point_declares_its_parameters():
    found = _declared_callables()
    for must in ("resnetlearn.classroom.check.k_alpha_squared", "resnetlearn.classroom.experiments.laziness",
                 "resnetlearn.classroom.experiments.beta_sweep", "resnetlearn.classroom.experiments.block_laziness",
                 "resnetlearn.classroom.experiments.Setup", "resnetlearn.targets.concept.data_split",
                 "resnetlearn.targets.complexity.complexity_s", "resnetlearn.targets.taylor.radius_of_convergence",
                 "resnetlearn.learners.training.Learner", "resnetlearn.learners.training.Protocol",
                 "resnetlearn.learners.training.RunOptions", "resnetlearn.learners.training.train_models",
                 "resnetlearn.learners.search.Selection", "resnetlearn.learners.search.grid_search",
                 "resnetlearn.learners.search.search_split", "resnetlearn.learners.engine.FrozenGate",
                 "resnetlearn.kernels.classical.gaussian", "resnetlearn.kernels.empirical_ntk.ntk",
                 "resnetlearn.kernels.infinite.infinite_width", "resnetlearn.kernels.ridge.ridge_path",
                 "resnetlearn.kernels.initial_network.Parameterization",
                 "resnetlearn.kernels.experiments.KernelSearch", "resnetlearn.kernels.experiments.kernel_errors",
                 "resnetlearn.kernels.experiments.network_kernel_errors"):
        assert must in found, must
    for label, obj in found.items():
        params = inspect.signature(obj).parameters
        for name, c in _constraints(obj).items():
            assert name in params, (label, name)
            assert isinstance(c, V.Constraint) and repr(c), (label, name)
    assert len(CASES) > 1000  # several refused values for every declared parameter


def test_every_declared_method_is_generated():
    """A method that declares its parameters is bound to an instance above, so its bad values are generated too."""
    bound = {getattr(obj, "__func__", None) for obj in _declared_callables().values()}
    for name in MODULES:
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if not (inspect.isclass(cls) and cls.__module__ == name):
                continue
            for attr, fn in vars(cls).items():
                if attr != "__init__" and inspect.isfunction(fn) and V.declared_constraints(fn):
                    assert fn in bound, f"{name}.{cls.__name__}.{attr}"


@pytest.mark.parametrize(("obj", "base", "name", "bad"), CASES)
def test_declared_parameter_refuses_bad_value_before_any_work(obj, base, name, bad):
    with pytest.raises((ValueError, TypeError)) as err:
        _call_guarded(obj, {**base, name: bad})
    assert not isinstance(err.value, BodyEntered)
    assert name in str(err.value), str(err.value)


def test_constraints_list_and_check_as_declared():
    from resnetlearn.classroom.check import parities_up_to_degree

    got = V.declared_constraints(parities_up_to_degree)
    assert list(got) == ["d", "degree"]
    assert repr(got["degree"]) == "Interval(int, [0, d])"
    with pytest.raises(ValueError, match=r"degree must be an integer in \[0, 5\], got 6"):
        parities_up_to_degree(466, d=5, degree=6)  # the bound is the checked d, not its default


def test_a_record_checks_its_fields_in_order_with_notes_that_read_them():
    from resnetlearn.learners.training import Learner, Protocol, train_models

    assert list(V.declared_constraints(Protocol))[-1] == "lr_drop_epoch"  # read after epochs, its bound
    assert Protocol(epochs=100).lr_drop_epoch == 50
    with pytest.raises(ValueError, match=r"lr_drop_epoch \(left out: epochs // 2 = 5; .*\[0, 10\], got 11"):
        Protocol(epochs=10, lr_drop_epoch=11)
    with pytest.raises(ValueError, match=r"^m \(width\) must be an integer in \[1, inf\], got 0$"):
        Learner("2layer", m=0)
    with pytest.raises(TypeError, match=r"learner must be a Learner\(arch, mode, m=\.\.\., init=\.\.\.\), got str"):
        V.declared_constraints(train_models)["learner"].check("learner", "2layer")


def test_options_read_a_registry_at_each_check():
    registry = {"a": 1}
    allowed = V.Options(registry)
    with pytest.raises(ValueError, match=r"unknown kind 'b'; allowed: 'a'$"):
        allowed.check("kind", "b")
    registry["b"] = 2  # an entry added later is allowed
    assert allowed.check("kind", "b") == "b"
    with pytest.raises(ValueError, match=r"unknown kernel 'c' for name; allowed: 'a', 'b'"):
        V.Options(registry, what="kernel").check("name", "c")


def test_lists_of_seeds_and_values_name_the_entry_refused():
    assert V.Seeds(at_least=0).check("rerun_seeds", ()) == []
    with pytest.raises(ValueError, match=r"seeds must name at least 2 seeds, got \[3\]"):
        V.Seeds(at_least=2).check("seeds", [3])
    assert V.ListOf(V.Interval(int, 1), what="width").check("widths", (4, 8)) == [4, 8]
    with pytest.raises(ValueError, match=r"widths\[1\] must be an integer in \[1, inf\], got 0"):
        V.ListOf(V.Interval(int, 1), what="width").check("widths", [4, 0])
    with pytest.raises(ValueError, match="widths must name at least one width, got an empty list"):
        V.ListOf(V.Interval(int, 1), what="width").check("widths", [])


def test_checked_values_reach_the_body_converted():
    np = pytest.importorskip("numpy")

    @V.validate_params({"m": V.Interval(int, 1), "lr": V.Interval(float, 0, closed="neither")})
    def f(m, *, lr=0.1):
        return m, lr

    m, lr = f(np.int64(3), lr=np.float32(0.3))
    assert (type(m), m, type(lr), lr) == (int, 3, float, 0.3)
    assert V.declared_constraints(f) == f.parameter_constraints
    with pytest.raises(ValueError, match="has no parameter x"):
        V.validate_params({"x": V.Boolean()})(lambda y: y)
