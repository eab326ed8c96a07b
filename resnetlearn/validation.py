"""Declared parameter checks, shared by every public entry point.

In the spirit of scikit-learn's parameter constraints: each public function
states what it accepts (a range, a set of choices, an integer or a real)
and calls one of these checks before any long work starts. Every error is
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
from collections.abc import Iterable, Sequence

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

    ``rules`` maps a field name to ``(check, bounds)``: one of this module's checks and its keyword
    arguments, e.g. ``{"m": (integer, {"lo": 1})}``. Each field is replaced by what its check returns
    (a Python int for ``np.int64(3)``). A configuration declares its rules once, as a table (like
    scikit-learn's ``_parameter_constraints``), and configurations that share fields share the table.
    """
    for name, (check, bounds) in rules.items():
        object.__setattr__(obj, name, check(name, getattr(obj, name), **bounds))


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
