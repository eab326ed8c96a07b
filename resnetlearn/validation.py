"""Declared parameter checks, shared by every public entry point.

In the spirit of scikit-learn's parameter constraints: each public function
states what it accepts (a range, a set of choices, an integer or a real)
beside its parameters, as a table of :class:`Constraint` objects given to
:func:`validate_params` (a function) or a record's ``parameter_constraints``
(:func:`validate_fields`, from its ``__post_init__``); the declarations can
be listed (:func:`declared_constraints`), and the bad-input tests are generated
from them. The checks run before any long work starts. A constraint states
one parameter's own domain (:class:`Interval`, :class:`Options`,
:class:`Boolean`, :class:`Seeds`, :class:`Reals`, :class:`ListOf`,
:class:`Tensor`, :class:`Instance` of a record, ...); what relates parameters
to each other (shapes that must agree, one seed that must differ from
another) is checked in the function's body, after its declarations. Every error is
a ``ValueError`` (``TypeError`` for a value of the wrong kind) whose message
names the parameter and the allowed values. Nothing is clipped, rounded or
broadcast silently: ``2.5`` is not an integer, ``"12"`` is not a list of
seeds, ``0.99`` outside [0, 0.95] is an error, not 0.95.

numpy and torch scalars are accepted wherever Python numbers are
(``np.int64(3)`` is an integer, ``np.float32(0.3)`` a real); booleans are
not numbers here.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence

import torch

MAX_SEED = 2**63 - 1
"""Seeds must fit torch's generator (a signed 64-bit integer)."""


def _is_tensor_scalar(value) -> bool:
    return isinstance(value, torch.Tensor) and value.ndim == 0


def _is_bool(value) -> bool:
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return True
    return _is_tensor_scalar(value) and value.dtype == torch.bool


def _range_text(lo, hi, lo_open: bool, hi_open: bool) -> str:
    left = "(" if lo_open else "["
    right = ")" if hi_open else "]"
    return f"{left}{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}{right}"


def _in_range(v, *, lo, hi, lo_open, hi_open) -> bool:
    if lo is not None and (v < lo or (lo_open and v == lo)):
        return False
    if hi is not None and (v > hi or (hi_open and v == hi)):
        return False
    return True


def integer(name: str, value, *, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` as a Python int in [lo, hi]; accepts numpy/torch integer scalars, rejects bools and floats."""
    if _is_bool(value):
        raise TypeError(f"{name} must be an integer, got the boolean {value!r}")
    if _is_tensor_scalar(value) and not value.dtype.is_floating_point and not value.dtype.is_complex:
        value = int(value.item())
    if not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    v = int(value)
    if not _in_range(v, lo=lo, hi=hi, lo_open=False, hi_open=False):
        raise ValueError(f"{name} must be an integer in {_range_text(lo, hi, False, False)}, got {v}")
    return v


def real(name: str, value, *, lo: float | None = None, hi: float | None = None, lo_open: bool = False,
         hi_open: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a finite Python float in the given interval; accepts ints and numpy/torch scalars."""
    if _is_bool(value):
        raise TypeError(f"{name} must be a real number, got the boolean {value!r}")
    if _is_tensor_scalar(value):
        value = _short_float(value.item()) if value.dtype in (torch.float32, torch.float16, torch.bfloat16) \
            else value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    v = _short_float(value) if type(value).__name__ in ("float32", "float16") else float(value)
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be a finite number in {_range_text(lo, hi, lo_open, hi_open)}, got {v}")
    if not _in_range(v, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open):
        raise ValueError(f"{name} must lie in {_range_text(lo, hi, lo_open, hi_open)}, got {v:g}")
    return v


def _short_float(value) -> float:
    """A single-precision number as the decimal it was written as (np.float32(0.3) -> 0.3, not 0.30000001)."""
    return float(f"{float(value):.7g}") if math.isfinite(float(value)) else float(value)


def boolean(name: str, value) -> bool:
    """A Python/numpy bool (not 0/1, not a string)."""
    if not _is_bool(value):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(name: str, value, allowed: Iterable):
    """``value`` if it is one of ``allowed`` (compared by equality, strings exactly)."""
    allowed = tuple(allowed)
    if isinstance(value, str) or not isinstance(value, (list, dict, set)):
        for a in allowed:
            if type(a) is type(value) and a == value:
                return value
    raise ValueError(f"unknown {name} {value!r}; allowed: {', '.join(map(repr, allowed))}")


def check_fields(obj, rules: dict) -> None:
    """Check the fields of a frozen dataclass in place, from its ``__post_init__``.

    ``rules`` maps a field name to a :class:`Constraint` (``{"m": Interval(int, 1, None)}``) or to
    ``(check, bounds)``: one of this module's checks and its keyword arguments, e.g. ``{"m": (integer, {"lo": 1})}``.
    Each field is replaced by what its check returns (a Python int for ``np.int64(3)``). A configuration declares
    its rules once, as a table (like scikit-learn's ``_parameter_constraints``), and configurations that share
    fields share the table. A record whose class declares ``parameter_constraints`` is checked by
    :func:`validate_fields` instead.
    """
    values = {}
    for name, rule in rules.items():
        value = getattr(obj, name)
        if isinstance(rule, Constraint):
            values[name] = rule.check(name, value, values)
        else:
            check, bounds = rule
            values[name] = check(name, value, **bounds)
        object.__setattr__(obj, name, values[name])


# ----------------------------------------------------------------- declared constraints
class Constraint:
    """What one parameter accepts, declared beside it (scikit-learn's ``_parameter_constraints`` entries):
    :meth:`check` returns the value as the function uses it or raises an error naming the parameter and what is
    allowed; :meth:`bad_values` gives values it refuses, from which the bad-input tests are generated."""

    def check(self, name: str, value, others: dict | None = None):
        raise NotImplementedError

    def bad_values(self, others: dict | None = None) -> list:
        """Values outside this constraint (each must make :meth:`check` raise)."""
        raise NotImplementedError


def _bound(bound, others):
    """A bound: a number, or the name of a parameter checked before this one (``Interval(int, 0, "d")``)."""
    if isinstance(bound, str):
        return (others or {})[bound]
    return bound


class Interval(Constraint):
    """An integer (``kind`` int: :func:`integer`) or a finite real (``kind`` float: :func:`real`) in [lo, hi];
    ``closed`` says which ends belong ("both", "left", "right", "neither"); None is an open-ended side, and a
    bound may name a parameter declared before this one (its checked value)."""

    def __init__(self, kind: type, lo=None, hi=None, *, closed: str = "both", allow_inf: bool = False):
        if kind not in (int, float):
            raise ValueError(f"kind must be int or float, got {kind!r}")
        if closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', got {closed!r}")
        if kind is int and closed != "both":
            raise ValueError("an integer interval is closed: write its bounds as the first and last integers")
        self.kind, self.lo, self.hi, self.closed, self.allow_inf = kind, lo, hi, closed, allow_inf

    def check(self, name, value, others=None):
        lo, hi = _bound(self.lo, others), _bound(self.hi, others)
        if self.kind is int:
            return integer(name, value, lo=lo, hi=hi)
        return real(name, value, lo=lo, hi=hi, lo_open=self.closed in ("right", "neither"),
                    hi_open=self.closed in ("left", "neither"), allow_inf=self.allow_inf)

    def bad_values(self, others=None):
        lo, hi = _bound(self.lo, others), _bound(self.hi, others)
        bad: list = [True, "1"]
        if self.kind is int:
            bad += [1.5]
            bad += [] if lo is None else [lo - 1]
            bad += [] if hi is None else [hi + 1]
        else:
            bad += [math.nan] + ([] if self.allow_inf else [math.inf])
            if lo is not None:
                bad += [lo - 1] + ([lo] if self.closed in ("right", "neither") else [])
            if hi is not None:
                bad += [hi + 1] + ([hi] if self.closed in ("left", "neither") else [])
        return bad

    def __repr__(self):
        left = "[" if self.kind is int or self.closed in ("both", "left") else "("
        right = "]" if self.kind is int or self.closed in ("both", "right") else ")"
        lo = "-inf" if self.lo is None else self.lo
        hi = "inf" if self.hi is None else self.hi
        return f"Interval({self.kind.__name__}, {left}{lo}, {hi}{right})"


class Options(Constraint):
    """One of ``allowed`` (:func:`choice`: compared by type and equality), like scikit-learn's ``StrOptions``."""

    def __init__(self, allowed: Iterable | Mapping | Callable, *, what: str | None = None):
        self._allowed = allowed if isinstance(allowed, Mapping) or callable(allowed) else tuple(allowed)
        self.what = what

    @property
    def allowed(self) -> tuple:
        """The choices as they are now: a registry (a dict) or a function declared as the choices is read at each
        check, so an entry added later is allowed."""
        return tuple(self._allowed() if callable(self._allowed) else self._allowed)

    def check(self, name, value, others=None):
        """The value, or an error naming ``name`` (``what``: ``unknown kernel 'x' for name; allowed: ...``)."""
        try:
            return choice(name, value, self.allowed)
        except ValueError:
            if self.what is None:
                raise
        raise ValueError(f"unknown {self.what} {value!r} for {name}; allowed: {', '.join(map(repr, self.allowed))}")

    def bad_values(self, others=None):
        return ["no such option", ["a list"]] + ([0.5] if not any(isinstance(a, float) for a in self.allowed) else [])

    def __repr__(self):
        return f"Options({', '.join(map(repr, self.allowed))})"


class Boolean(Constraint):
    """True or False (:func:`boolean`: not 0/1, not a string)."""

    def check(self, name, value, others=None):
        return boolean(name, value)

    def bad_values(self, others=None):
        return [1, "True", None]

    def __repr__(self):
        return "Boolean()"


class Seeds(Constraint):
    """A list of at least ``at_least`` seeds in [0, 2**63 - 1] (:func:`seeds`; ``at_least=0``: the list may be
    empty)."""

    def __init__(self, *, at_least: int = 1):
        self.at_least = at_least

    def check(self, name, value, others=None):
        out = [integer(f"{name}[{i}]", s, lo=0, hi=MAX_SEED) for i, s in enumerate(sequence(name, value))]
        if len(out) < self.at_least:
            least = "one seed" if self.at_least == 1 else f"{self.at_least} seeds"
            raise ValueError(f"{name} must name at least {least}, got {out or 'an empty list'}")
        return out

    def bad_values(self, others=None):
        return [[-1], [1.5], "12"] + ([list(range(self.at_least - 1))] if self.at_least else [])

    def __repr__(self):
        return "Seeds()" if self.at_least == 1 else f"Seeds(at_least={self.at_least})"


class ListOf(Constraint):
    """A non-empty list whose every entry ``inner`` accepts (``widths[2]`` named in an error); one value is a list
    of one (:func:`sequence`). ``what`` names an entry in the error for an empty list."""

    def __init__(self, inner: Constraint, *, what: str = "value"):
        self.inner, self.what = inner, what

    def check(self, name, value, others=None):
        out = [self.inner.check(f"{name}[{i}]", v, others) for i, v in enumerate(sequence(name, value))]
        if not out:
            raise ValueError(f"{name} must name at least one {self.what}, got an empty list")
        return out

    def bad_values(self, others=None):
        inner = [[v] for v in self.inner.bad_values(others) if not isinstance(v, (list, str))]
        return [[], "12"] + inner

    def __repr__(self):
        return f"ListOf({self.inner!r})"


class Instance(Constraint):
    """An instance of ``cls``: a record the function reads (a ``TypeError`` otherwise, saying how one is made:
    ``text``, default the class's name)."""

    def __init__(self, cls: type, text: str | None = None):
        self.cls, self.text = cls, text or cls.__name__

    def check(self, name, value, others=None):
        if not isinstance(value, self.cls):
            raise TypeError(f"{name} must be a {self.text}, got {type(value).__name__}")
        return value

    def bad_values(self, others=None):
        return ["a string", 3]

    def __repr__(self):
        return f"Instance({self.cls.__name__})"


class Noted(Constraint):
    """``inner`` with a note after the parameter's name in its errors, ``m (width) must be ...``: what the
    parameter means, or, as a function of the parameters checked before it, what leaving it out gives."""

    def __init__(self, inner: Constraint, note: str | Callable[[dict], str]):
        self.inner, self.note = inner, note

    def check(self, name, value, others=None):
        note = self.note(others or {}) if callable(self.note) else self.note
        return self.inner.check(f"{name} ({note})", value, others)

    def bad_values(self, others=None):
        return self.inner.bad_values(others)

    def __repr__(self):
        return f"{self.inner!r} ({self.note})" if isinstance(self.note, str) else repr(self.inner)


class Tensor(Constraint):
    """A torch tensor of the given rank(s) (None: any) with no NaN or inf (:func:`tensor`)."""

    def __init__(self, *, ndim: int | tuple[int, ...] | None = None):
        self.ndim = ndim

    def check(self, name, value, others=None):
        return tensor(name, value, ndim=self.ndim)

    def bad_values(self, others=None):
        ranks = (0,) if self.ndim is None else (self.ndim,) if isinstance(self.ndim, int) else self.ndim
        bad = [[[1.0]], torch.full((1,) * ranks[0], math.nan)]
        return bad + ([] if self.ndim is None else [torch.zeros((1,) * (max(ranks) + 1))])

    def __repr__(self):
        return f"Tensor(ndim={self.ndim!r})"


class Reals(Constraint):
    """A list of finite reals, each in an interval (:func:`reals`)."""

    def __init__(self, *, nonempty: bool = True, **bounds):
        self.nonempty, self.bounds = nonempty, bounds

    def check(self, name, value, others=None):
        return reals(name, value, nonempty=self.nonempty, **self.bounds)

    def bad_values(self, others=None):
        return [[math.nan], "12"] + ([[]] if self.nonempty else [])

    def __repr__(self):
        return f"Reals({', '.join(f'{k}={v!r}' for k, v in self.bounds.items())})"


class FloatDtype(Constraint):
    """A floating torch dtype (:func:`float_dtype`)."""

    def check(self, name, value, others=None):
        return float_dtype(value)

    def bad_values(self, others=None):
        return [torch.int64, "float32"]

    def __repr__(self):
        return "FloatDtype()"


class NoneOr(Constraint):
    """None, or a value ``inner`` accepts."""

    def __init__(self, inner: Constraint):
        self.inner = inner

    def check(self, name, value, others=None):
        return None if value is None else self.inner.check(name, value, others)

    def bad_values(self, others=None):
        return [v for v in self.inner.bad_values(others) if v is not None]

    def __repr__(self):
        return f"NoneOr({self.inner!r})"


class Custom(Constraint):
    """A check of this module's shape ``check(name, value)`` with refused examples given by hand: for a rule the
    other constraints do not express (``C_star`` may not be inf, with a sentence of its own)."""

    def __init__(self, check, bad: list, text: str):
        self._check, self._bad, self.text = check, list(bad), text

    def check(self, name, value, others=None):
        return self._check(name, value)

    def bad_values(self, others=None):
        return list(self._bad)

    def __repr__(self):
        return self.text


def validate_params(constraints: dict[str, Constraint], *, convert: bool = True):
    """Declare what a function's parameters accept (scikit-learn's ``validate_params``): the decorated function
    checks each declared argument, in declaration order and defaults included, before its body runs, calls the
    body with the checked values, and lists its declarations as ``parameter_constraints``
    (:func:`declared_constraints`). ``convert=False`` checks without replacing the values (for a body that prints
    an argument as it was given). A declaration naming no parameter of the function is refused at once."""
    import functools
    import inspect

    def decorate(fn):
        sig = inspect.signature(fn)
        unknown = [n for n in constraints if n not in sig.parameters]
        if unknown:
            raise ValueError(f"{fn.__qualname__} has no parameter {', '.join(unknown)}; "
                             f"its parameters: {', '.join(sig.parameters)}")

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            done: dict = {}
            for name, c in constraints.items():
                done[name] = c.check(name, bound.arguments[name], done)
            if not convert:
                return fn(*args, **kwargs)
            bound.arguments.update(done)
            return fn(*bound.args, **bound.kwargs)

        checked.parameter_constraints = dict(constraints)
        return checked

    return decorate


def validate_fields(obj) -> None:
    """Check a record's fields against its class's ``parameter_constraints`` (from its ``__post_init__``): each
    field is replaced by its checked value (:func:`check_fields`)."""
    check_fields(obj, type(obj).parameter_constraints)


def declared_constraints(obj) -> dict[str, Constraint]:
    """What a function decorated by :func:`validate_params`, or a record class (or instance) declaring
    ``parameter_constraints``, accepts: parameter name -> :class:`Constraint` (empty where nothing is declared)."""
    got = getattr(obj, "parameter_constraints", None)
    return dict(got) if isinstance(got, dict) else {}


def sequence(name: str, values, *, allow_scalar: bool = True) -> list:
    """A list from a list/tuple/1-d array/tensor (or one scalar); strings, sets and dicts are refused."""
    if isinstance(values, (str, bytes, set, frozenset, dict)):
        raise TypeError(f"{name} must be a list of numbers, got {values!r}")
    if isinstance(values, torch.Tensor) or type(values).__name__ == "ndarray":
        if values.ndim == 0:
            return [values.item()] if allow_scalar else _scalar_error(name, values)
        if values.ndim != 1:
            raise ValueError(f"{name} must be one-dimensional, got shape {tuple(values.shape)}")
        return list(values.tolist())
    if isinstance(values, Sequence):
        return list(values)
    if allow_scalar and (isinstance(values, numbers.Number) or _is_tensor_scalar(values)):
        return [values]
    raise TypeError(f"{name} must be a list of numbers, got {values!r} ({type(values).__name__})")


def _scalar_error(name, values):
    raise TypeError(f"{name} must be a list, got the scalar {values!r}")


def seeds(name: str, values) -> list[int]:
    """A non-empty list of integer seeds in [0, 2**63 - 1] (one integer is one seed)."""
    out = [integer(f"{name}[{i}]", s, lo=0, hi=MAX_SEED) for i, s in enumerate(sequence(name, values))]
    if not out:
        raise ValueError(f"{name} must name at least one seed, got an empty list")
    return out


def reals(name: str, values, *, nonempty: bool = True, **bounds) -> list[float]:
    """A list of finite reals, each checked like :func:`real` (one number is a list of one)."""
    out = [real(f"{name}[{i}]", v, **bounds) for i, v in enumerate(sequence(name, values))]
    if nonempty and not out:
        raise ValueError(f"{name} must hold at least one value, got an empty list")
    return out


def tensor(name: str, t, *, ndim: int | tuple[int, ...] | None = None, finite: bool = True) -> torch.Tensor:
    """A tensor of the given rank(s) with no NaN/inf."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    ranks = (ndim,) if isinstance(ndim, int) else ndim
    if ranks is not None and t.ndim not in ranks:
        raise ValueError(f"{name} must have {' or '.join(map(str, ranks))} dimensions, got shape {tuple(t.shape)}")
    if finite and t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or inf")
    return t


def compatible(train_name: str, train_x, test_name: str, test_x, what: str = "features d") -> None:
    """Same last dimension, dtype and device for two data tensors (train/test, x/x')."""
    if train_x.shape[-1] != test_x.shape[-1]:
        raise ValueError(f"{train_name} and {test_name} disagree in {what}: "
                         f"{train_x.shape[-1]} vs {test_x.shape[-1]} (shapes {tuple(train_x.shape)} and "
                         f"{tuple(test_x.shape)})")
    if train_x.dtype != test_x.dtype:
        raise ValueError(f"{train_name} and {test_name} have different dtypes: {train_x.dtype} vs {test_x.dtype}")
    if train_x.device != test_x.device:
        raise ValueError(f"{train_name} and {test_name} are on different devices: "
                         f"{train_x.device} vs {test_x.device}")


def is_finite(value) -> bool:
    """Whether ``value`` is a finite Python number (an int or float, not a bool): a result that exists, where a
    diverged run's error is NaN, inf or missing (None)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def float_dtype(dtype) -> torch.dtype:
    """``dtype`` if it is a floating torch dtype (the networks and kernels compute in float32 or float64)."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating torch dtype (e.g. torch.float32 or torch.float64), got {dtype!r}")
    return dtype


def cancelled(cancel) -> bool:
    """Whether a long run's ``cancel`` asks it to stop: None (never), a ``threading.Event`` that is set, or a
    callable returning True."""
    if cancel is None:
        return False
    return bool(cancel()) if callable(cancel) else bool(cancel.is_set())
