"""Taylor coefficients by power-series arithmetic: the numeric engine behind the
complexity sums (ResNet paper §4; companion §2).

Where the complexity of an activation phi is summed inside a finite radius
of convergence, thousands of Taylor coefficients of phi(x·y) are needed,
far more than sympy's exact series gives in reasonable time. :func:`jet`
computes them from the expression tree with the standard power-series
recurrences (exp, log, powers, sin/cos, sinh/cosh, tan/tanh and the inverse
functions, each written as the ODE its series satisfies), in one of two
scalar types: numpy longdouble (:data:`LONGDOUBLE`: fast, about 19 digits)
or mpmath numbers in object arrays (:data:`MPMATH`: slow, :data:`DPS`
digits; used for short heads that ring series cannot expand). An expression
outside these rules, or arithmetic that overflows, raises
:class:`Unsupported`, and the caller falls back to exact coefficients.
"""

from __future__ import annotations

import mpmath
import numpy as np
import sympy

from .activations import Z

DPS = 40
"""Decimal digits of mpmath arithmetic throughout the complexity computations."""
LD = np.longdouble


class Unsupported(Exception):
    pass


def longdouble(v) -> np.longdouble:
    if isinstance(v, sympy.Basic):
        v = sympy.N(v, 25)
        return LD(str(v))
    return LD(mpmath.nstr(mpmath.mpf(v), 24, strip_zeros=False))


def to_mpf(v) -> mpmath.mpf:
    return mpmath.mpf(np.format_float_scientific(LD(v), unique=True))


class _Backend:
    """Scalar type of the power-series engine: numpy longdouble (fast, ~19 digits) or
    mpmath numbers in object arrays (slow, DPS digits; used for short exact-quality heads)."""

    def __init__(self, dtype, conv, funcs):
        self.dtype, self.conv, self.f = dtype, conv, funcs

    def zeros(self, n):
        out = np.zeros(n, dtype=self.dtype)
        if self.dtype is object:
            out[:] = mpmath.mpf(0)
        return out

    def arange(self, n):
        return np.arange(n, dtype=self.dtype) if self.dtype is not object else np.array(
            [mpmath.mpf(i) for i in range(n)], dtype=object)


_NAMES = ("exp", "log", "sin", "cos", "sinh", "cosh", "tan", "tanh", "atan", "atanh", "asin", "acos", "asinh")
_NP_NAMES = {"atan": "arctan", "atanh": "arctanh", "asin": "arcsin", "acos": "arccos", "asinh": "arcsinh"}
LONGDOUBLE = _Backend(LD, longdouble, {k: getattr(np, _NP_NAMES.get(k, k)) for k in _NAMES})
MPMATH = _Backend(object, lambda v: mpmath.mpf(sympy.N(v, DPS)) if isinstance(v, sympy.Basic) else mpmath.mpf(v),
                {k: getattr(mpmath, k) for k in _NAMES})


def _mul(a, b):
    n = len(a)
    for p, q in ((a, b), (b, a)):
        nz = np.flatnonzero(p)
        if len(nz) <= 16:
            out = np.zeros(n, dtype=a.dtype) * a[0]
            for j in nz:
                out[j:] += p[j] * q[: n - j]
            return out
    return np.convolve(a, b)[:n]


def _exp_s(B, a):
    n = len(a)
    ja = B.arange(n) * a
    b = B.zeros(n)
    b[0] = B.f["exp"](a[0])
    for k in range(1, n):
        b[k] = np.dot(ja[1 : k + 1], b[k - 1 :: -1]) / k
    return b


def _log_s(B, a):
    n = len(a)
    a0 = a[0]
    if not a0 > 0:
        raise Unsupported
    b, jb = B.zeros(n), B.zeros(n)
    b[0] = B.f["log"](a0)
    for k in range(1, n):
        b[k] = (a[k] - (np.dot(jb[1:k], a[k - 1 : 0 : -1]) if k > 1 else 0) / k) / a0
        jb[k] = k * b[k]
    return b


def _pow_s(B, a, p):
    n = len(a)
    a0 = a[0]
    if a0 == 0 or (a0 < 0 and p != int(p)):
        raise Unsupported
    ja = B.arange(n) * a
    b = B.zeros(n)
    b[0] = a0**p
    for k in range(1, n):
        s1 = np.dot(ja[1 : k + 1], b[k - 1 :: -1])
        s0 = np.dot(a[1 : k + 1], b[k - 1 :: -1])
        b[k] = ((p + 1) * s1 - k * s0) / (k * a0)
    return b


def _ipow_s(B, a, m: int):
    if m == 0:
        out = B.zeros(len(a))
        out[0] = B.conv(1)
        return out
    if a[0] != 0 and m > 4:
        return _pow_s(B, a, B.conv(m))
    result, base = None, a
    while m:
        if m & 1:
            result = base if result is None else _mul(result, base)
        m >>= 1
        if m:
            base = _mul(base, base)
    return result


def _sincos_s(B, a, hyperbolic: bool):
    n = len(a)
    ja = B.arange(n) * a
    s, c = B.zeros(n), B.zeros(n)
    s[0], c[0] = (B.f["sinh"](a[0]), B.f["cosh"](a[0])) if hyperbolic else (B.f["sin"](a[0]), B.f["cos"](a[0]))
    sign = 1 if hyperbolic else -1
    for k in range(1, n):
        s[k] = np.dot(ja[1 : k + 1], c[k - 1 :: -1]) / k
        c[k] = sign * np.dot(ja[1 : k + 1], s[k - 1 :: -1]) / k
    return s, c


def _tan_s(B, a, hyperbolic: bool):
    """t = tan(a) (t' = a'(1 + t²)) or tanh(a) (t' = a'(1 − t²))."""
    n = len(a)
    sign = -1 if hyperbolic else 1
    ja = B.arange(n) * a
    t, w = B.zeros(n), B.zeros(n)
    t[0] = B.f["tanh" if hyperbolic else "tan"](a[0])
    w[0] = 1 + sign * t[0] * t[0]
    for k in range(1, n):
        t[k] = np.dot(ja[1 : k + 1], w[k - 1 :: -1]) / k
        w[k] = sign * np.dot(t[: k + 1], t[k::-1])
    return t


def _integrate_s(B, a, d, b0):
    """b with b(0) = b0 and b' = a'·d: b_k = (Σ_j j a_j d_{k−j}) / k."""
    n = len(a)
    b = _mul(B.arange(n) * a, d)
    b[1:] = b[1:] / B.arange(n)[1:]
    b[0] = b0
    return b


def jet(expr: sympy.Expr, x, n: int, *, B: _Backend = LONGDOUBLE) -> np.ndarray:
    """Taylor coefficients c_i x^i (i < n) of expr, computed by power-series recurrences."""
    x_b = B.conv(x)
    memo: dict = {}

    def const(v):
        out = B.zeros(n)
        out[0] = v
        return out

    def rec(e):
        if e in memo:
            return memo[e]
        if not e.has(Z):
            out = const(B.conv(e))
        elif e == Z:
            out = B.zeros(n)
            if n > 1:
                out[1] = x_b
        elif e.is_Add:
            out = sum((rec(t) for t in e.args[1:]), rec(e.args[0]).copy())
        elif e.is_Mul:
            out = rec(e.args[0])
            for t in e.args[1:]:
                out = _mul(out, rec(t))
        elif e.is_Pow:
            b, p = e.args
            if p.has(Z):
                out = _exp_s(B, _mul(rec(p), _log_s(B, rec(b))))
            elif p.is_Integer and p >= 0:
                out = _ipow_s(B, rec(b), int(p))
            else:
                out = _pow_s(B, rec(b), B.conv(p))
        else:
            u = rec(e.args[0]) if len(e.args) == 1 else None
            one = B.conv(1)
            if isinstance(e, sympy.exp):
                out = _exp_s(B, u)
            elif isinstance(e, sympy.log):
                out = _log_s(B, u)
            elif isinstance(e, (sympy.sin, sympy.cos)):
                out = _sincos_s(B, u, False)[0 if isinstance(e, sympy.sin) else 1]
            elif isinstance(e, (sympy.sinh, sympy.cosh)):
                out = _sincos_s(B, u, True)[0 if isinstance(e, sympy.sinh) else 1]
            elif isinstance(e, (sympy.tan, sympy.tanh)):
                out = _tan_s(B, u, isinstance(e, sympy.tanh))
            elif isinstance(e, (sympy.atan, sympy.atanh)):
                sq = _mul(u, u)
                d = _pow_s(B, const(one) + sq if isinstance(e, sympy.atan) else const(one) - sq, B.conv(-1))
                out = _integrate_s(B, u, d, B.f["atan" if isinstance(e, sympy.atan) else "atanh"](u[0]))
            elif isinstance(e, (sympy.asin, sympy.acos, sympy.asinh)):
                sq = _mul(u, u)
                d = _pow_s(B, const(one) + sq if isinstance(e, sympy.asinh) else const(one) - sq,
                           B.conv(sympy.Rational(-1, 2)))
                if isinstance(e, sympy.acos):
                    out = -_integrate_s(B, u, d, -B.f["acos"](u[0]))
                else:
                    out = _integrate_s(B, u, d, B.f["asin" if isinstance(e, sympy.asin) else "asinh"](u[0]))
            else:
                raise Unsupported(type(e).__name__)
        memo[e] = out
        return out

    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            return rec(expr)
        except (FloatingPointError, ZeroDivisionError, TypeError) as exc:
            raise Unsupported(str(exc)) from None
