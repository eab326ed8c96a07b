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
    """``value`` as a Python int in [lo, hi].

    numpy and torch integer scalars are accepted; booleans and floats are refused.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    value : int
        The value.
    lo : int or None, default None
        The least value allowed; None: no bound.
    hi : int or None, default None
        The greatest value allowed; None: no bound.

    Returns
    -------
    int

    Raises
    ------
    TypeError
        If ``value`` is a boolean or not an integer.
    ValueError
        If it lies outside [lo, hi].
    """
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
    """``value`` as a finite Python float in the given interval.

    Ints and numpy/torch scalars are accepted; a single-precision number is read as the decimal it was written as
    (``np.float32(0.3)`` is 0.3). Booleans are refused.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    value : float
        The value.
    lo : float or None, default None
        The lower end; None: no bound.
    hi : float or None, default None
        The upper end; None: no bound.
    lo_open : bool, default False
        Whether ``lo`` itself is excluded.
    hi_open : bool, default False
        Whether ``hi`` itself is excluded.
    allow_inf : bool, default False
        Whether ±inf is accepted (NaN never is).

    Returns
    -------
    float

    Raises
    ------
    TypeError
        If ``value`` is a boolean or not a real number.
    ValueError
        If it is NaN, infinite (unless allowed) or outside the interval.
    """
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
    """``value`` if it is a Python or numpy bool (not 0/1, not a string).

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    value : bool
        The value.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``value`` is not a bool.
    """
    if not _is_bool(value):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def choice(name: str, value, allowed: Iterable):
    """``value`` if it is one of ``allowed``, compared by type and equality (strings exactly).

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    value : object
        The value.
    allowed : iterable
        The allowed values.

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    ValueError
        If ``value`` is not allowed; the message lists the allowed values.
    """
    allowed = tuple(allowed)
    if isinstance(value, str) or not isinstance(value, (list, dict, set)):
        for a in allowed:
            if type(a) is type(value) and a == value:
                return value
    raise ValueError(f"unknown {name} {value!r}; allowed: {', '.join(map(repr, allowed))}")


def check_fields(obj, rules: dict) -> None:
    """Check the fields of a frozen dataclass in place, from its ``__post_init__``.

    Each field is replaced by what its check returns (a Python int for ``np.int64(3)``). A configuration declares its
    rules once, as a table (like scikit-learn's ``_parameter_constraints``), and configurations that share fields
    share the table. A record whose class declares ``parameter_constraints`` is checked by :func:`validate_fields`
    instead.

    Parameters
    ----------
    obj : dataclass instance
        The record.
    rules : dict
        Field name → a :class:`Constraint` (``{"m": Interval(int, 1, None)}``) or ``(check, bounds)``, one of this
        module's checks and its keyword arguments (``{"m": (integer, {"lo": 1})}``). A constraint's bound may name a
        field checked before it.

    Raises
    ------
    TypeError, ValueError
        From the first field that fails its check.
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
    """What one parameter accepts, declared beside it (scikit-learn's ``_parameter_constraints`` entries).

    :meth:`check` returns the value as the function uses it or raises an error naming the parameter and what is
    allowed; :meth:`bad_values` gives values it refuses, from which the bad-input tests are generated.
    """

    def check(self, name: str, value, others: dict | None = None):
        """The value as the function uses it, or an error naming the parameter and what is allowed.

        Parameters
        ----------
        name : str
            The parameter's name, used in the message.
        value : object
            The value given.
        others : dict or None, default None
            The checked values of the parameters declared before this one (a bound may name one of them).

        Returns
        -------
        object
            The checked (possibly converted) value.

        Raises
        ------
        TypeError
            For a value of the wrong kind.
        ValueError
            For a value of the right kind outside what is allowed.
        """
        raise NotImplementedError

    def bad_values(self, others: dict | None = None) -> list:
        """Values outside this constraint (each must make :meth:`check` raise).

        Parameters
        ----------
        others : dict or None, default None
            The checked values of the parameters declared before this one, for bounds that name them.

        Returns
        -------
        list
        """
        raise NotImplementedError


def _bound(bound, others):
    """A bound: a number, or the name of a parameter checked before this one (``Interval(int, 0, "d")``)."""
    if isinstance(bound, str):
        return (others or {})[bound]
    return bound


class Interval(Constraint):
    """An integer or a finite real in [lo, hi].

    Parameters
    ----------
    kind : {int, float}
        ``int`` checks with :func:`integer`, ``float`` with :func:`real`.
    lo : int, float, str or None, default None
        The lower end; None: open-ended; a string names a parameter declared before this one (its checked value).
    hi : int, float, str or None, default None
        The upper end, likewise.
    closed : {"both", "left", "right", "neither"}, default "both"
        Which ends belong; an integer interval is always ``"both"``.
    allow_inf : bool, default False
        Whether a real may be ±inf.

    Raises
    ------
    ValueError
        If ``kind`` or ``closed`` is not one of the allowed values, or an integer interval is not closed.
    """

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
    """One of ``allowed`` (:func:`choice`: compared by type and equality), like scikit-learn's ``StrOptions``.

    Parameters
    ----------
    allowed : iterable, mapping or callable
        The allowed values. A registry (a dict, whose keys are the choices) or a function returning the choices is
        read at each check, so an entry added later is allowed.
    what : str or None, default None
        What a value is, named in the error (``unknown kernel 'x' for name; allowed: ...``); None: :func:`choice`'s
        message.
    """

    def __init__(self, allowed: Iterable | Mapping | Callable, *, what: str | None = None):
        self._allowed = allowed if isinstance(allowed, Mapping) or callable(allowed) else tuple(allowed)
        self.what = what

    @property
    def allowed(self) -> tuple:
        """The choices as they are now: a registry (a dict) or a function declared as the choices is read at each
        check, so an entry added later is allowed."""
        return tuple(self._allowed() if callable(self._allowed) else self._allowed)

    def check(self, name, value, others=None):
        """The value, or an error naming ``name`` and the allowed values.

        Parameters
        ----------
        name : str
            The parameter's name, used in the message.
        value : object
            The value given.
        others : dict or None, default None
            Unused; part of :meth:`Constraint.check`'s signature.

        Returns
        -------
        object
            ``value``.

        Raises
        ------
        ValueError
            If ``value`` is not one of the choices; with ``what``, the message says ``unknown WHAT``.
        """
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
    """A list of seeds in [0, 2**63 - 1] (one integer is one seed), at least ``at_least`` of them.

    Parameters
    ----------
    at_least : int, default 1
        The fewest seeds accepted; 0 lets the list be empty.
    """

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
    """A non-empty list whose every entry ``inner`` accepts; one value is a list of one (:func:`sequence`).

    An entry that fails is named with its index (``widths[2]``) in the error.

    Parameters
    ----------
    inner : Constraint
        The constraint on each entry.
    what : str, default "value"
        What an entry is, named in the error for an empty list.
    """

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
    """An instance of ``cls``: a record the function reads; a TypeError otherwise, saying how one is made.

    Parameters
    ----------
    cls : type
        The class.
    text : str or None, default None
        What the error calls the expected value; None: the class's name.
    """

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
    """``inner`` with a note after the parameter's name in its errors: ``m (width) must be ...``.

    Parameters
    ----------
    inner : Constraint
        The constraint.
    note : str or callable
        What the parameter means, or a function of the parameters checked before it (a dict) returning the note,
        e.g. what leaving the parameter out gives.
    """

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
    """A torch tensor of the given rank(s) with no NaN or inf (:func:`tensor`).

    Parameters
    ----------
    ndim : int, tuple of int or None, default None
        The allowed numbers of dimensions; None: any.
    """

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
    """A list of finite reals, each in an interval (:func:`reals`).

    Parameters
    ----------
    nonempty : bool, default True
        Whether an empty list is refused.
    **bounds
        ``lo``, ``hi``, ``lo_open``, ``hi_open``, ``allow_inf`` of :func:`real`, applied to each value.
    """

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
    """None, or a value ``inner`` accepts.

    Parameters
    ----------
    inner : Constraint
        The constraint on a value that is not None.
    """

    def __init__(self, inner: Constraint):
        self.inner = inner

    def check(self, name, value, others=None):
        return None if value is None else self.inner.check(name, value, others)

    def bad_values(self, others=None):
        return [v for v in self.inner.bad_values(others) if v is not None]

    def __repr__(self):
        return f"NoneOr({self.inner!r})"


class Custom(Constraint):
    """A check of this module's shape ``check(name, value)``, with refused examples given by hand.

    For a rule the other constraints do not express (``C_star`` may not be inf, with a sentence of its own).

    Parameters
    ----------
    check : callable
        ``check(name, value)`` → the checked value, raising as this module's checks do.
    bad : list
        Values it refuses.
    text : str
        Its repr.
    """

    def __init__(self, check, bad: list, text: str):
        self._check, self._bad, self.text = check, list(bad), text

    def check(self, name, value, others=None):
        return self._check(name, value)

    def bad_values(self, others=None):
        return list(self._bad)

    def __repr__(self):
        return self.text


def validate_params(constraints: dict[str, Constraint], *, convert: bool = True):
    """Declare what a function's parameters accept (scikit-learn's ``validate_params``).

    The decorated function checks each declared argument, in declaration order and defaults included, before its body
    runs, calls the body with the checked values, and lists its declarations as ``parameter_constraints``
    (:func:`declared_constraints`).

    Parameters
    ----------
    constraints : dict of str to Constraint
        Parameter name → what it accepts; a parameter not named is not checked.
    convert : bool, default True
        Whether the body receives the checked values; False checks without replacing them (for a body that prints
        an argument as it was given).

    Returns
    -------
    callable
        The decorator.

    Raises
    ------
    ValueError
        At decoration, if a declaration names no parameter of the function.
    """
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
    """Check a record's fields against its class's ``parameter_constraints``, from its ``__post_init__``.

    Each field is replaced by its checked value (:func:`check_fields`).

    Parameters
    ----------
    obj : dataclass instance
        The record; its class declares ``parameter_constraints``.
    """
    check_fields(obj, type(obj).parameter_constraints)


def declared_constraints(obj) -> dict[str, Constraint]:
    """What a function or record declares it accepts.

    Parameters
    ----------
    obj : callable or type or object
        A function decorated by :func:`validate_params`, or a record class (or instance) declaring
        ``parameter_constraints``.

    Returns
    -------
    dict of str to Constraint
        Parameter name → constraint; empty where nothing is declared.
    """
    got = getattr(obj, "parameter_constraints", None)
    return dict(got) if isinstance(got, dict) else {}


def sequence(name: str, values, *, allow_scalar: bool = True) -> list:
    """A list from a list, tuple, 1-d array or tensor, or from one scalar.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    values : sequence, numpy.ndarray, torch.Tensor or number
        The values; strings, sets and dicts are refused.
    allow_scalar : bool, default True
        Whether one number (or a 0-d array or tensor) is read as a list of one.

    Returns
    -------
    list

    Raises
    ------
    TypeError
        If ``values`` is a string, set, dict, another non-sequence, or a refused scalar.
    ValueError
        If an array or tensor has more than one dimension.
    """
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
    """A non-empty list of integer seeds in [0, 2**63 - 1]; one integer is one seed.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    values : int or sequence of int
        The seeds.

    Returns
    -------
    list of int

    Raises
    ------
    TypeError, ValueError
        If the list is empty or a seed is not an integer in range (named with its index).
    """
    out = [integer(f"{name}[{i}]", s, lo=0, hi=MAX_SEED) for i, s in enumerate(sequence(name, values))]
    if not out:
        raise ValueError(f"{name} must name at least one seed, got an empty list")
    return out


def reals(name: str, values, *, nonempty: bool = True, **bounds) -> list[float]:
    """A list of finite reals, each checked like :func:`real`; one number is a list of one.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    values : float or sequence of float
        The values.
    nonempty : bool, default True
        Whether an empty list is refused.
    **bounds
        Keyword arguments of :func:`real` (``lo``, ``hi``, ``lo_open``, ``hi_open``, ``allow_inf``).

    Returns
    -------
    list of float

    Raises
    ------
    TypeError, ValueError
        If the list is empty (when refused) or a value fails (named with its index).
    """
    out = [real(f"{name}[{i}]", v, **bounds) for i, v in enumerate(sequence(name, values))]
    if nonempty and not out:
        raise ValueError(f"{name} must hold at least one value, got an empty list")
    return out


def tensor(name: str, t, *, ndim: int | tuple[int, ...] | None = None, finite: bool = True) -> torch.Tensor:
    """A tensor of the given rank(s), with no NaN or inf.

    Parameters
    ----------
    name : str
        The parameter's name, used in the message.
    t : torch.Tensor
        The tensor.
    ndim : int, tuple of int or None, default None
        The allowed numbers of dimensions; None: any.
    finite : bool, default True
        Whether a floating tensor must hold only finite values.

    Returns
    -------
    torch.Tensor
        ``t``.

    Raises
    ------
    TypeError
        If ``t`` is not a tensor.
    ValueError
        If its rank is not allowed or it holds NaN or inf.
    """
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    ranks = (ndim,) if isinstance(ndim, int) else ndim
    if ranks is not None and t.ndim not in ranks:
        raise ValueError(f"{name} must have {' or '.join(map(str, ranks))} dimensions, got shape {tuple(t.shape)}")
    if finite and t.is_floating_point() and not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} contains NaN or inf")
    return t


def compatible(train_name: str, train_x, test_name: str, test_x, what: str = "features d") -> None:
    """Check that two data tensors (train/test, x/x') share their last dimension, dtype and device.

    Parameters
    ----------
    train_name : str
        The first tensor's name, for the message.
    train_x : torch.Tensor
        The first tensor.
    test_name : str
        The second tensor's name.
    test_x : torch.Tensor
        The second tensor.
    what : str, default "features d"
        What the last dimension is, for the message.

    Raises
    ------
    ValueError
        If they differ in any of the three.
    """
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
    """Whether ``value`` is a finite Python number (an int or float, not a bool).

    A result that exists, where a diverged run's error is NaN, inf or missing (None).

    Parameters
    ----------
    value : object
        The value.

    Returns
    -------
    bool
    """
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def float_dtype(dtype) -> torch.dtype:
    """``dtype`` if it is a floating torch dtype (the networks and kernels compute in float32 or float64).

    Parameters
    ----------
    dtype : torch.dtype
        The dtype.

    Returns
    -------
    torch.dtype

    Raises
    ------
    ValueError
        If ``dtype`` is not a floating torch dtype.
    """
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating torch dtype (e.g. torch.float32 or torch.float64), got {dtype!r}")
    return dtype


def cancelled(cancel) -> bool:
    """Whether a long run's ``cancel`` asks it to stop.

    Parameters
    ----------
    cancel : threading.Event, callable or None
        None (never), an event (stop once it is set) or a callable (stop once it returns True).

    Returns
    -------
    bool
    """
    if cancel is None:
        return False
    return bool(cancel()) if callable(cancel) else bool(cancel.is_set())
