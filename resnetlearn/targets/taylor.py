"""Taylor coefficients c_i of an activation at 0 and their radius of convergence
(the series whose weighted sums are the complexities of ResNet paper §4 and
companion §2).

:class:`TaylorSeries` holds an exact rational head (64 terms) from sympy's
ring series; where ring series cannot expand the expression (e.g. exp(-z)
inside a quotient) the power-series recurrences of
:mod:`resnetlearn.targets.power_series` in 40-digit mpmath give it instead. For
entire functions the long tail comes from the closed-form coefficient
formula of sympy's formal power series when one exists (sin, cos, exp...;
checked against the exact head), since with C* = 10^4 the terms of ℭ_ε only
start to shrink past degree ~10^4; otherwise a longer ring series up to
``max_degree``. The radius comes from :mod:`resnetlearn.targets.radius`.

Long computations are bounded in time (:func:`budget`, the ``time_budget``
of the measures): a computation that runs past it stops with a
:class:`SeriesBudgetError` naming it.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
import time

import mpmath
import sympy
from sympy.polys.ring_series import rs_series
from sympy.series.formal import Coeff, FormalPowerSeries

from ..validation import Interval, NoneOr, validate_params
from .activations import Activation, Z, resolve
from .power_series import DPS, MPMATH, Unsupported, jet
from .radius import NoClosedForm, radius_fit, structural_radius

HEAD = 64
"""Number of exact Taylor coefficients computed first."""
_SLOW_MAX_DEGREE = 80


class NonConvergentSeriesError(ValueError):
    """The Taylor series defining a complexity does not converge (x ≥ radius of convergence)."""


class SeriesBudgetError(ValueError):
    """The series converges (or may), but cannot be summed or decided within the
    allowed number of terms / coefficients (``max_terms``, ``max_degree``)."""



TIME_BUDGET = 20.0
"""Default wall-clock budget (seconds) of one complexity computation (``time_budget``): short enough for a notebook
cell; every call of the notebooks answers well within it (notebook 02's code runs in 7.7 s in all)."""
_deadline_state = threading.local()


BUDGET_RULE = NoneOr(Interval(float, 0, closed="right"))
"""What ``time_budget`` accepts: seconds above 0, or None (no budget)."""


def time_budget_seconds(value) -> float | None:
    return BUDGET_RULE.check("time_budget", value)


@contextlib.contextmanager
def budget(seconds: float | None, what: str):
    """Stop the computation with a :class:`SeriesBudgetError` after ``seconds``.

    In the main thread a SIGALRM timer interrupts even a long sympy call (the
    exact series of exp(exp(exp(z))) does not return within minutes); in
    other threads, or while another timer is set, the summation loops check
    the deadline between terms."""
    if seconds is None or getattr(_deadline_state, "deadline", None) is not None:
        yield  # no budget, or an outer computation's budget already runs
        return
    message = (f"{what} gave no answer within time_budget = {seconds:g} s (the exact Taylor coefficients or the "
               f"series take longer); raise time_budget to allow more, e.g. time_budget={max(120, 6 * seconds):g} "
               "(time_budget=None: no limit), or lower max_degree / max_terms")
    _deadline_state.deadline, _deadline_state.message = time.monotonic() + seconds, message
    use_alarm = (threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
                 and signal.getitimer(signal.ITIMER_REAL)[0] == 0)

    def on_alarm(signum, frame):
        raise _BudgetAlarm  # not an Exception: sympy's and our own `except Exception` fallbacks must not swallow it

    old = signal.signal(signal.SIGALRM, on_alarm) if use_alarm else None
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        except _BudgetAlarm:
            raise SeriesBudgetError(message) from None
    finally:
        if use_alarm:
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
            except _BudgetAlarm:  # it fired just as the computation ended: the answer stands
                pass
            finally:
                signal.signal(signal.SIGALRM, old)
        _deadline_state.deadline = None


class _BudgetAlarm(BaseException):
    """Raised by the SIGALRM handler of :func:`budget` and turned into a SeriesBudgetError there."""


def check_deadline() -> None:
    deadline = getattr(_deadline_state, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise SeriesBudgetError(_deadline_state.message)


def constant_form(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` itself, or the constant it equals identically (cos(z)**2 + sin(z)**2 → 1).

    A cheap numeric test first (equal values at three points to 30 digits);
    only then sympy's ``simplify`` must confirm it exactly, so other
    expressions are left exactly as given."""
    if not expr.free_symbols:
        return expr
    try:
        f = sympy.lambdify(Z, expr, modules="mpmath")
        with mpmath.workdps(40):
            v0 = mpmath.mpmathify(f(mpmath.mpf(0)))
            same = all(abs(mpmath.mpmathify(f(mpmath.mpf(z))) - v0) <= mpmath.mpf(10) ** -30 * max(1, abs(v0))
                       for z in ("0.0937", "-0.211", "0.377"))
    except (TypeError, ValueError, ZeroDivisionError, ArithmeticError):
        return expr
    if not same:
        return expr
    simple = sympy.simplify(expr)
    return simple if not simple.free_symbols else expr



class TaylorSeries:
    """Taylor coefficients c_i of an activation at 0 and their radius of convergence.

    Exact rational head from ring series; for entire functions, beyond the
    head, the closed-form coefficient formula of sympy's formal power series
    when one exists (checked against the exact head), otherwise a longer ring
    series up to ``max_degree``.
    """

    def __init__(self, act, *, max_degree: int = 400):
        self.act = act
        self.expr = act.expr if isinstance(act, Activation) else act
        self.max_degree = max_degree
        expr = constant_form(self.expr)
        if not expr.is_polynomial(Z) and expr.is_rational_function(Z):
            cancelled = sympy.cancel(expr)
            if cancelled.is_polynomial(Z):
                expr = cancelled
        if expr.is_polynomial(Z):
            p = sympy.Poly(sympy.expand(expr), Z)
            self.degree = 0 if p.is_zero else p.degree()  # the zero function: degree −∞ for sympy, c_0 = 0 here
            self._exact = [sympy.Integer(0)] * (self.degree + 1)
            for (i,), c in p.terms():
                self._exact[i] = c
            self.radius, self.radius_exact, self.radius_note = mpmath.inf, True, ""
            self._formula_cache = (None,)
            return
        self.degree = None
        self._exact = self._ring_coeffs(min(HEAD, max_degree))
        with mpmath.workdps(DPS):
            self.radius, self.radius_exact, self.radius_note = self._radius()
        self._formula_cache = None if self.radius == mpmath.inf else (None,)

    @property
    def _formula(self):
        """Closed-form coefficient formula (entire functions only), looked up on first use."""
        if self._formula_cache is None:
            self._formula_cache = (self._fps_formula(),)
        return self._formula_cache[0]

    def _ring_coeffs(self, n: int) -> list[sympy.Expr]:
        try:
            s = rs_series(self.expr, Z, n).as_expr()
            if not sympy.sympify(s).is_polynomial(Z):
                raise ValueError("ring series left the expression unexpanded")
        except Exception:
            # ring series cannot handle this expression (e.g. exp(-z) inside a quotient):
            # the same power-series recurrences as the numeric route, in DPS-digit mpmath
            try:
                with mpmath.workdps(DPS + 10):
                    c = jet(self.expr, 1, n, B=MPMATH)
                return [sympy.Float(v, DPS) if v != 0 else sympy.Integer(0) for v in c]
            except Unsupported:
                pass
            # otherwise sympy's general (slow) series, with the degree capped to bound the cost
            self.max_degree = min(self.max_degree, _SLOW_MAX_DEGREE)
            n = min(n, self.max_degree)
            s = sympy.series(self.expr, Z, 0, n).removeO()
        p = sympy.Poly(sympy.expand(s), Z)
        out = [sympy.Integer(0)] * n
        for (i,), c in p.terms():
            if i < n:
                out[i] = c
        return out

    def _fps_formula(self):
        try:
            f = sympy.fps(self.expr, Z)
        except Exception:  # pragma: no cover
            return None
        if not isinstance(f, FormalPowerSeries):
            return None
        k = f.ak.variables[0]
        if sympy.simplify(f.xk.formula.subs(f.xk.variables[0], k) - Z**k) != 0:
            return None
        formula = f.ak.formula.replace(lambda e: isinstance(e, Coeff), lambda e: 0)
        fn = sympy.lambdify(k, formula, modules="mpmath")
        start = int(f.ak.interval.inf)
        n = len(self._exact)
        with mpmath.workdps(DPS):
            for i in range(max(start, n - 8), n):
                exact = mpmath.mpf(sympy.Abs(self._exact[i]).evalf(DPS))
                got = abs(mpmath.mpmathify(fn(i)))
                if abs(got - exact) > mpmath.mpf(10) ** (-20) * max(exact, mpmath.mpf(1e-300)):
                    return None  # formula disagrees with the exact series: do not trust it
        return fn

    def _radius(self):
        flags: list[bool] = []
        try:
            r = structural_radius(self.expr, flags)
        except NoClosedForm:
            est = radius_fit(self)
            return est, False, "estimated from the Taylor coefficients"
        if flags and r != mpmath.inf:
            est = radius_fit(self)
            if est > mpmath.mpf("1.2") * r:
                return est, False, (f"estimated from the Taylor coefficients; singularities of the terms "
                                    f"at |z| = {float(r):.6g} appear to cancel")
        return r, True, ""

    @property
    def is_polynomial(self) -> bool:
        return self.degree is not None

    def abs_coeff(self, i: int) -> mpmath.mpf:
        """|c_i| as an mpmath number."""
        if self.is_polynomial and i > self.degree:
            return mpmath.mpf(0)
        if i < len(self._exact):
            return abs(mpmath.mpf(sympy.Abs(self._exact[i]).evalf(DPS)))
        if self._formula is not None:
            return abs(mpmath.mpmathify(self._formula(i)))
        if i >= self.max_degree:
            raise IndexError(i)
        check_deadline()
        self._exact = self._ring_coeffs(min(self.max_degree, max(2 * len(self._exact), i + 1)))
        return self.abs_coeff(i)

    def coeffs(self, n: int) -> list[sympy.Expr]:
        """Exact coefficients c_0 .. c_{n-1} (sympy numbers; fewer when the slow series caps the degree)."""
        if self.is_polynomial:
            return [self._exact[i] if i <= self.degree else sympy.Integer(0) for i in range(n)]
        if n > len(self._exact):
            self._exact = self._ring_coeffs(n)
        return self._exact[:n]


@functools.lru_cache(maxsize=128)
def _series_for(expr: sympy.Expr, max_degree: int) -> TaylorSeries:
    return TaylorSeries(expr, max_degree=max_degree)


def series_of(act: Activation, max_degree: int) -> TaylorSeries:
    return _series_for(act.expr, max_degree)


@validate_params({"max_degree": Interval(int, 1)})
def radius_of_convergence(act, *, max_degree: int = 400) -> float:
    """Radius of convergence of the Taylor series of an activation at 0
    (math.inf for entire functions); :mod:`resnetlearn.targets.radius` says how it is
    found (exact for the known activations and rational / polynomial arguments,
    an estimate from the coefficients otherwise)."""
    act = resolve(act, {}, "act")
    return float(series_of(act, max_degree).radius)
