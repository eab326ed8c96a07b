"""Complexity measures ℭ_ε and ℭ_s of smooth activations (ResNet paper §4;
companion paper §2), computed from exact Taylor coefficients.

For phi(z) = Σ_i c_i z^i, radius R and a large constant C* (default 10^4):

* ResNet paper §4 / companion §2:
  ℭ_ε(phi, R) = Σ_i ((C* R)^i + (sqrt(log(1/ε)/i) · C* R)^i) |c_i|
* ResNet paper §4 (stated at R = 1; the R^i factor extends it as in the
  companion): ℭ_s(phi, R) = C* Σ_i (i+1) R^i |c_i|          (variant "resnet")
* companion paper §2: ℭ_s(phi, R) = C* Σ_i (i+1)^1.75 R^i |c_i| (variant "companion")

Convention for i = 0 in ℭ_ε: the second summand (sqrt(log(1/ε)/i) C* R)^i
is read as its limit i → 0+, which is 1. So the constant term contributes
2|c_0| to ℭ_ε (and C*|c_0| to ℭ_s); R = 0 is allowed and gives exactly
these constant-term values (0^0 = 1, as usual for power series).

Both measures are Σ_i w(i)|c_i| x^i with a weight w that grows slower than
any geometric sequence (w(i) = C*(i+1)^p for ℭ_s, 1 + (L/√i)^i for ℭ_ε), at
x = R for ℭ_s and x = C*·R for ℭ_ε. Such a series converges when x is below
the radius of convergence r of phi's Taylor series at 0 and diverges when
x > r (Cauchy–Hadamard). So convergence is decided by comparing x with r,
which :func:`radius_of_convergence` computes from the expression:

* polynomials, exp, sin, cos, sinh, cosh and their sums, products and
  compositions: r = ∞;
* rational functions: the smallest |root| of the (cancelled) denominator;
* tanh(u), tan(u), log(u), u^a (a not a non-negative integer), asin, acos,
  atanh, atan, asinh of an argument u that is a polynomial or rational
  function: the nearest z where u hits a singular value (tanh: iπ(k+½);
  tan: π(k+½); log, u^a: 0; asin, acos, atanh: ±1; atan, asinh: ±i), found
  with polynomial root finding (mpmath.polyroots); u = a + b·exp(v) with v
  polynomial is handled for the finite singular sets (so 1/(1+exp(-z))
  has r = π, log(1+exp(z)) has r = π);
* sums and products: the minimum over the terms. Singularities can cancel
  between terms (tanh(z)·cosh(z) = sinh(z)); so whenever two or more terms
  depend on z and one has a finite radius, the value is cross-checked
  against the coefficients, and if
  the coefficient estimate below exceeds 1.2× the minimum the estimate is
  used instead;
* anything else (e.g. tanh(sin(z))): an estimate from the coefficients: a
  least-squares fit of log|c_i| = a + β·log i − i·log r over the block
  maxima (blocks of 8) of the nonzero c_i with 80 ≤ i < 160 (fewer where
  only fewer coefficients can be computed). With an estimated radius the
  series is summed only for x ≤ 0.9 r, reported divergent for x ≥ 1.1 r,
  and in between a :class:`SeriesBudgetError` says it cannot be decided.

The known activations get their textbook radii: tanh(cz) π/(2|c|),
sigmoid(cz) π/|c|, 1/(1−z) 1, entire functions ∞. At x = r exactly the
series is not summed (convergence on the circle depends on the singularity)
and :class:`NonConvergentSeriesError` is raised.

How the sums are carried out:

* coefficients: an exact rational head (64 terms) from sympy's ring series;
  where ring series cannot expand the expression (e.g. exp(-z) inside a
  quotient) the power-series recurrences below in 40-digit mpmath instead;
* polynomials: the finite sum, exactly;
* entire functions: the head above, and for
  the long tail the closed-form coefficient formula of sympy's formal power
  series when one exists (sin, cos, exp...; checked against the exact
  head), since with C* = 10^4 the terms only start to shrink past degree
  ~10^4. The sum stops once consecutive term ratios are below 1 and
  decreasing and the geometric tail bound is below ``tol`` times the sum.
  Without a coefficient formula only ``max_degree`` coefficients exist, and
  a sum that needs more (e.g. exp(sin z) at C*·R = 10^4) raises
  :class:`SeriesBudgetError` instead of a divergence claim;
* finite radius, x < r: the number of terms is chosen from q = x/r (about
  1.5·(ln(1/tol) + 10)/ln(1/q)), and the Taylor coefficients of phi(x·y)
  are computed numerically in extended precision (numpy longdouble) by the
  standard power-series recurrences (exp, log, powers, sin/cos, tan/tanh,
  the inverse functions); the first 64 are replaced by the exact ones (and
  must agree with them to 1e-12, or the numeric route is abandoned). The
  tail after N terms is estimated as envelope·q^N/(1 − q·e^{γ/N}), with γ
  the polynomial growth of the terms over q^i between N/4 and N; more terms
  are taken (doubling, up to 2^15 or ``max_terms``) until it is below
  ``tol`` times the sum; if that is not enough (x/r within ~0.1% of 1) a
  :class:`SeriesBudgetError` reports the partial sum. So
  ℭ_s(1/(1−z), R = 0.99) = C*/(1 − 0.99)^2 = 10^8 (5696 terms) and
  ℭ_s(tanh, R = 1.5) = C*(tan 1.5 + 1.5 sec² 1.5) ≈ 3.13876·10^6 agree with
  these closed forms to better than 1e-12 (the tests check it). Where the
  recurrences do not apply, exact coefficients up to ``max_degree`` are
  summed with the same tail estimate.

The values are astronomically large (ℭ_ε(sin z) ≈ sinh(10^4)), so results
are returned as a :class:`Complexity` holding an ``mpmath.mpf``.

When a series diverges (tanh, sigmoid at C*·R = 10^4 for ℭ_ε) ``truncate=True``
asks for the route of Example 4.1: truncate the series at the smallest
degree D whose Taylor polynomial is within ε of phi on [−R, R]
(D = Θ(log 1/ε)) and measure that polynomial.
"""

from __future__ import annotations

import contextlib
import functools
import math
import signal
import threading
import time
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy
from sympy.polys.ring_series import rs_series
from sympy.series.formal import Coeff, FormalPowerSeries

from . import validation as V
from .activations import Activation, Z, _resolve, activation  # noqa: F401  (activation re-exported)

C_STAR = 10**4
"""The constant C* of §4 ("sufficiently large, e.g. 10^4")."""

VARIANTS = ("resnet", "companion")
_DPS = 40
_HEAD = 64
_SLOW_MAX_DEGREE = 80
_FIT_DEGREE = 160
_ENGINE_MAX = 2**15
_LD = np.longdouble


class NonConvergentSeriesError(ValueError):
    """The Taylor series defining a complexity does not converge (x ≥ radius of convergence)."""


class SeriesBudgetError(ValueError):
    """The series converges (or may), but cannot be summed or decided within the
    allowed number of terms / coefficients (``max_terms``, ``max_degree``)."""


TIME_BUDGET = 120.0
"""Default wall-clock budget (seconds) of one complexity computation (``time_budget``)."""
_deadline_state = threading.local()


def _time_budget(value) -> float | None:
    return None if value is None else V.real("time_budget", value, lo=0, lo_open=True)


@contextlib.contextmanager
def _budget(seconds: float | None, what: str):
    """Stop the computation with a :class:`SeriesBudgetError` after ``seconds``.

    In the main thread a SIGALRM timer interrupts even a long sympy call (the
    exact series of exp(exp(exp(z))) does not return within minutes); in
    other threads, or while another timer is set, the summation loops check
    the deadline between terms."""
    if seconds is None or getattr(_deadline_state, "deadline", None) is not None:
        yield  # no budget, or an outer computation's budget already runs
        return
    message = (f"{what} gave no answer within time_budget = {seconds:g} s (the exact Taylor coefficients or the "
               "series take longer); raise time_budget (time_budget=None: no limit), or lower max_degree / "
               "max_terms")
    _deadline_state.deadline, _deadline_state.message = time.monotonic() + seconds, message
    use_alarm = (threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
                 and signal.getitimer(signal.ITIMER_REAL)[0] == 0)

    def on_alarm(signum, frame):
        raise SeriesBudgetError(message)

    old = signal.signal(signal.SIGALRM, on_alarm) if use_alarm else None
    try:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, seconds)
        yield
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        _deadline_state.deadline = None


def _check_deadline() -> None:
    deadline = getattr(_deadline_state, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise SeriesBudgetError(_deadline_state.message)


def _constant_form(expr: sympy.Expr) -> sympy.Expr:
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


@dataclass(frozen=True)
class Complexity:
    """One complexity value with how it was obtained.

    ``value`` is an ``mpmath.mpf`` (often far beyond float range);
    ``n_terms`` is the number of Taylor coefficients summed;
    ``truncation_degree`` is D when the Example 4.1 route was used;
    ``radius`` is the radius of convergence of the series that was summed.
    """

    measure: str
    activation: str
    value: mpmath.mpf
    R: float
    C_star: float
    n_terms: int
    eps: float | None = None
    variant: str | None = None
    truncation_degree: int | None = None
    radius: float | None = None

    def __float__(self) -> float:
        return float(self.value) if self.value < mpmath.mpf("1e308") else math.inf

    @property
    def log10(self) -> float:
        """log10 of the value (finite even when the value overflows a float)."""
        return float(mpmath.log10(self.value)) if self.value > 0 else -math.inf

    def __str__(self) -> str:
        return mpmath.nstr(self.value, 6)


# --------------------------------------------------------------------------------------------
# Taylor coefficients
# --------------------------------------------------------------------------------------------


class TaylorSeries:
    """Taylor coefficients c_i of an activation at 0 and their radius of convergence.

    Exact rational head from ring series; for entire functions, beyond the
    head, the closed-form coefficient formula of sympy's formal power series
    when one exists (checked against the exact head), otherwise a longer ring
    series up to ``max_degree``.
    """

    def __init__(self, act, max_degree: int = 400):
        self.act = act
        self.expr = act.expr if isinstance(act, Activation) else act
        self.max_degree = max_degree
        expr = _constant_form(self.expr)
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
        self._exact = self._ring_coeffs(min(_HEAD, max_degree))
        with mpmath.workdps(_DPS):
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
            # the same power-series recurrences as the numeric route, in _DPS-digit mpmath
            try:
                with mpmath.workdps(_DPS + 10):
                    c = _jet(self.expr, 1, n, _MPB)
                return [sympy.Float(v, _DPS) if v != 0 else sympy.Integer(0) for v in c]
            except _Unsupported:
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
        with mpmath.workdps(_DPS):
            for i in range(max(start, n - 8), n):
                exact = mpmath.mpf(sympy.Abs(self._exact[i]).evalf(_DPS))
                got = abs(mpmath.mpmathify(fn(i)))
                if abs(got - exact) > mpmath.mpf(10) ** (-20) * max(exact, mpmath.mpf(1e-300)):
                    return None  # formula disagrees with the exact series: do not trust it
        return fn

    def _radius(self):
        flags: list[bool] = []
        try:
            r = _structural_radius(self.expr, flags)
        except _NoClosedForm:
            est = _radius_fit(self)
            return est, False, "estimated from the Taylor coefficients"
        if flags and r != mpmath.inf:
            est = _radius_fit(self)
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
            return abs(mpmath.mpf(sympy.Abs(self._exact[i]).evalf(_DPS)))
        if self._formula is not None:
            return abs(mpmath.mpmathify(self._formula(i)))
        if i >= self.max_degree:
            raise IndexError(i)
        _check_deadline()
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
    return TaylorSeries(expr, max_degree)


def _series(act: Activation, max_degree: int) -> TaylorSeries:
    return _series_for(act.expr, max_degree)


# --------------------------------------------------------------------------------------------
# Radius of convergence
# --------------------------------------------------------------------------------------------


class _NoClosedForm(Exception):
    pass


def _tanh_targets():
    k = 0
    while True:
        s = mpmath.pi * (k + mpmath.mpf(1) / 2)
        yield [mpmath.mpc(0, s), mpmath.mpc(0, -s)]
        k += 1


def _tan_targets():
    k = 0
    while True:
        s = mpmath.pi * (k + mpmath.mpf(1) / 2)
        yield [mpmath.mpc(s), mpmath.mpc(-s)]
        k += 1


_FINITE_TARGETS = {
    sympy.log: [0], sympy.asin: [1, -1], sympy.acos: [1, -1], sympy.atanh: [1, -1],
    sympy.atan: [1j, -1j], sympy.asinh: [1j, -1j],
}


def _poly_mp(u: sympy.Expr) -> list:
    """Coefficients (low to high) of a polynomial in Z as mpmath complex numbers."""
    p = sympy.Poly(sympy.expand(u), Z)
    coeffs = p.all_coeffs()[::-1]
    return [mpmath.mpmathify(complex(sympy.N(c, _DPS))) if not c.is_Rational else mpmath.mpf(c.p) / c.q
            for c in coeffs]


def _min_root_abs(coeffs_low: list):
    """Smallest |root| of the polynomial Σ coeffs_low[j] z^j (inf if it has none)."""
    cs = list(coeffs_low)
    while len(cs) > 1 and cs[-1] == 0:
        cs.pop()
    if len(cs) <= 1:
        return mpmath.inf
    if len(cs) == 2:
        return abs(cs[0] / cs[1])
    for steps in (100, 400, 2000):
        try:
            roots = mpmath.polyroots(cs[::-1], maxsteps=steps, extraprec=2 * len(cs) + 30)
            return min(abs(x) for x in roots)
        except mpmath.libmp.libhyper.NoConvergence:
            continue
    raise _NoClosedForm


def _bound_radius(abs_coeffs: list, target) -> mpmath.mpf:
    """Smallest ρ ≥ 0 with Σ_j |u_j| ρ^j ≥ target: no z with |z| < ρ can have |u(z)| = target."""
    def U(rho):
        return sum(a * rho**j for j, a in enumerate(abs_coeffs))
    if U(0) >= target:
        return mpmath.mpf(0)
    hi = mpmath.mpf(1)
    while U(hi) < target:
        hi *= 2
    lo = mpmath.mpf(0)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if U(mid) < target else (lo, mid)
    return lo


def _preimage_radius(u: sympy.Expr, targets, finite: bool):
    """min |z| over solutions of u(z) = s, s in ``targets`` (an iterable of lists of
    values with nondecreasing modulus), for u polynomial, rational, or a + b·exp(v)
    with v polynomial (finite target sets only)."""
    if u.is_polynomial(Z):
        uc = _poly_mp(u)
        abs_u = [abs(c) for c in uc]
        best = mpmath.inf
        for level in targets:
            if _bound_radius(abs_u, min(abs(mpmath.mpmathify(s)) for s in level)) >= best:
                break
            for s in level:
                best = min(best, _min_root_abs([uc[0] - mpmath.mpmathify(s)] + uc[1:]))
        return best
    if u.is_rational_function(Z):
        if not finite:
            raise _NoClosedForm  # no pruning bound for an infinite set of targets
        num, den = sympy.fraction(sympy.cancel(sympy.together(u)))
        nc, dc = _poly_mp(num), _poly_mp(den)
        n = max(len(nc), len(dc))
        nc, dc = nc + [0] * (n - len(nc)), dc + [0] * (n - len(dc))
        best = mpmath.inf
        for level in targets:
            for s in level:
                s = mpmath.mpmathify(s)
                best = min(best, _min_root_abs([a - s * b for a, b in zip(nc, dc)]))
        return best
    if not finite:
        raise _NoClosedForm
    a, rest = u.as_independent(Z, as_Add=True)
    b, g = rest.as_independent(Z, as_Add=False)
    if not (isinstance(g, sympy.exp) and g.args[0].is_polynomial(Z)):
        raise _NoClosedForm
    a, b = mpmath.mpmathify(complex(sympy.N(a, _DPS))), mpmath.mpmathify(complex(sympy.N(b, _DPS)))
    vc = _poly_mp(g.args[0])
    abs_v = [abs(c) for c in vc]
    best = mpmath.inf
    for level in targets:
        for s in level:
            w = (mpmath.mpmathify(s) - a) / b
            if w == 0:
                continue  # exp never vanishes
            base = mpmath.log(w)
            m = 0
            while True:
                lower = max(mpmath.mpf(0), 2 * mpmath.pi * m - abs(base))
                if m > 0 and _bound_radius(abs_v, lower) >= best:
                    break
                for sign in ((1,) if m == 0 else (1, -1)):
                    t = base + 2j * mpmath.pi * m * sign
                    best = min(best, _min_root_abs([vc[0] - t] + vc[1:]))
                m += 1
    return best


def _structural_radius(e: sympy.Expr, flags: list):
    """Radius of convergence at 0 from the expression tree (see the module docstring)."""
    inf = mpmath.inf
    if not e.has(Z) or e.is_polynomial(Z):
        return inf
    if e.is_rational_function(Z):
        num, den = sympy.fraction(sympy.cancel(sympy.together(e)))
        return _min_root_abs(_poly_mp(den)) if den.has(Z) else inf
    if e.is_Add or e.is_Mul:
        parts = [a for a in e.args if a.has(Z)]
        radii = [_structural_radius(a, flags) for a in parts]
        if len(parts) > 1 and any(r != inf for r in radii):
            flags.append(True)
        return min(radii)
    if e.is_Pow:
        b, x = e.args
        if x.has(Z):  # b**x = exp(x·log b)
            return min(_structural_radius(x, flags), _structural_radius(b, flags),
                       _preimage_radius(b, [[0]], True))
        if x.is_Integer and x >= 0:
            return _structural_radius(b, flags)
        return min(_structural_radius(b, flags), _preimage_radius(b, [[0]], True))
    u = e.args[0] if e.args else None
    if isinstance(e, (sympy.exp, sympy.sin, sympy.cos, sympy.sinh, sympy.cosh)):
        return _structural_radius(u, flags)
    if isinstance(e, sympy.tanh):
        return min(_structural_radius(u, flags), _preimage_radius(u, _tanh_targets(), False))
    if isinstance(e, sympy.tan):
        return min(_structural_radius(u, flags), _preimage_radius(u, _tan_targets(), False))
    for cls, targets in _FINITE_TARGETS.items():
        if isinstance(e, cls):
            return min(_structural_radius(u, flags), _preimage_radius(u, [targets], True))
    raise _NoClosedForm


def _radius_fit(series: TaylorSeries):
    """Radius estimate from the coefficients (documented rule in the module docstring)."""
    n = min(series.max_degree, _FIT_DEGREE)
    coeffs = series.coeffs(n)
    n = len(coeffs)
    with mpmath.workdps(_DPS):
        pts = [(i, float(mpmath.log(abs(mpmath.mpf(c.evalf(_DPS))))))
               for i, c in enumerate(coeffs) if i >= max(1, n // 2) and c != 0]
        if not pts:
            pts = [(i, float(mpmath.log(abs(mpmath.mpf(c.evalf(_DPS))))))
                   for i, c in enumerate(coeffs) if i >= 1 and c != 0]
    if not pts:
        return mpmath.inf
    blocks: dict[int, tuple[int, float]] = {}
    for i, lv in pts:
        k = i // 8
        if k not in blocks or lv > blocks[k][1]:
            blocks[k] = (i, lv)
    pts = sorted(blocks.values())
    if len(pts) < 3:
        i, lv = pts[-1]
        return mpmath.exp(-mpmath.mpf(lv) / i)
    A = np.array([[1.0, math.log(i), -float(i)] for i, _ in pts])
    y = np.array([lv for _, lv in pts])
    sol = np.linalg.lstsq(A, y, rcond=None)[0]
    return mpmath.exp(mpmath.mpf(float(sol[2])))


def _radius_text(series: TaylorSeries) -> str:
    r = series.radius
    if r == mpmath.inf:
        return "∞ (entire function)"
    if not series.radius_exact:
        return f"≈ {float(r):.6g} ({series.radius_note})"
    f = r / mpmath.pi
    for q in range(1, 13):
        p = int(mpmath.nint(f * q))
        if p > 0 and abs(f * q - p) < mpmath.mpf(10) ** (-25):
            num = "π" if p == 1 else f"{p}π"
            return (num if q == 1 else f"{num}/{q}") + f" ≈ {float(r):.6g}"
    return f"{float(r):.6g}"


def radius_of_convergence(act, max_degree: int = 400) -> float:
    """Radius of convergence of the Taylor series of an activation at 0
    (math.inf for entire functions); see the module docstring for how it is
    found (exact for the known activations and rational / polynomial arguments,
    an estimate from the coefficients otherwise)."""
    act = _resolve(act, {}, "act")
    max_degree = V.integer("max_degree", max_degree, lo=1)
    return float(_series(act, max_degree).radius)


# --------------------------------------------------------------------------------------------
# Numeric Taylor coefficients of phi(x·y) (extended precision power-series arithmetic)
# --------------------------------------------------------------------------------------------


class _Unsupported(Exception):
    pass


def _ld(v) -> np.longdouble:
    if isinstance(v, sympy.Basic):
        v = sympy.N(v, 25)
        return _LD(str(v))
    return _LD(mpmath.nstr(mpmath.mpf(v), 24, strip_zeros=False))


def _to_mp(v) -> mpmath.mpf:
    return mpmath.mpf(np.format_float_scientific(_LD(v), unique=True))


class _Backend:
    """Scalar type of the power-series engine: numpy longdouble (fast, ~19 digits) or
    mpmath numbers in object arrays (slow, _DPS digits; used for short exact-quality heads)."""

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
_LDB = _Backend(_LD, _ld, {k: getattr(np, _NP_NAMES.get(k, k)) for k in _NAMES})
_MPB = _Backend(object, lambda v: mpmath.mpf(sympy.N(v, _DPS)) if isinstance(v, sympy.Basic) else mpmath.mpf(v),
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
        raise _Unsupported
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
        raise _Unsupported
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


def _jet(expr: sympy.Expr, x, n: int, B: _Backend = _LDB) -> np.ndarray:
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
                raise _Unsupported(type(e).__name__)
        memo[e] = out
        return out

    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            return rec(expr)
        except (FloatingPointError, ZeroDivisionError, TypeError) as exc:
            raise _Unsupported(str(exc)) from None


# --------------------------------------------------------------------------------------------
# Weighted sums Σ w(i)|c_i| x^i
# --------------------------------------------------------------------------------------------


class _Weight:
    """w(i) for one of the measures, as an mpmath scalar function and a longdouble vector."""

    def __init__(self, kind: str, param):
        self.kind, self.param = kind, param  # ("s", power) or ("eps", L)

    def __call__(self, i: int):
        if self.kind == "s":
            return mpmath.mpf(i + 1) ** self.param
        if i == 0:
            return mpmath.mpf(2)  # both summands read as 1 at i = 0 (see module docstring)
        return 1 + (self.param / mpmath.sqrt(i)) ** i

    def vector(self, n: int) -> np.ndarray:
        i = np.arange(n, dtype=_LD)
        if self.kind == "s":
            p = self.param
            return (i + 1) if p == 1 else (i + 1) ** _ld(p)
        L = _ld(self.param)
        with np.errstate(divide="ignore", under="ignore"):
            w = 1 + (L / np.sqrt(np.maximum(i, 1))) ** i
        w[0] = 2
        return w


def _weighted_sum(series: TaylorSeries, x, weight: _Weight, tol: float, max_terms: int,
                  what: str, name: str, xname: str, hint: str):
    """Σ_i w(i)|c_i| x^i and the number of terms used (see the module docstring)."""
    if series.is_polynomial:
        n = series.degree + 1
        return mpmath.fsum(weight(i) * series.abs_coeff(i) * x**i for i in range(n)), n
    if x == 0:
        return weight(0) * series.abs_coeff(0), 1
    r = series.radius
    if r == mpmath.inf:
        return _sum_entire(series, x, weight, tol, max_terms, what, name, xname)
    rtext = _radius_text(series)
    if series.radius_exact and x >= r or not series.radius_exact and x >= mpmath.mpf("1.1") * r:
        raise NonConvergentSeriesError(
            f"{what} of {name} does not converge: {xname} = {mpmath.nstr(x, 8)} is not below the radius of "
            f"convergence {rtext} of its Taylor series at 0, so the terms grow like ({xname}/radius)^i. {hint}"
        )
    if not series.radius_exact and x > mpmath.mpf("0.9") * r:
        raise SeriesBudgetError(
            f"{what} of {name}: {xname} = {mpmath.nstr(x, 8)} is within 10% of the estimated radius of "
            f"convergence {rtext}, too close to decide convergence from the coefficients. {hint}"
        )
    return _sum_inside(series, x, weight, tol, max_terms, what, name, xname)


def _sum_entire(series, x, weight, tol, max_terms, what, name, xname):
    """Entire functions: sum until consecutive ratios fall below 1, decrease, and the
    geometric tail bound is below tol·sum."""
    if series._formula is not None and max_terms > 4 * _HEAD:
        # quick check that the terms have peaked before max_terms (a huge C*·R would need more)
        last = [max_terms - 1, max_terms - 2]
        half = [max_terms // 2, max_terms // 2 - 1]
        t_last = max(weight(j) * series.abs_coeff(j) * x**j for j in last)
        t_half = max(weight(j) * series.abs_coeff(j) * x**j for j in half)
        if t_last > t_half:
            raise SeriesBudgetError(
                f"{what} of {name}: the function is entire, so the series converges, but with "
                f"{xname} = {mpmath.nstr(x, 8)} its terms are still growing at degree max_terms = {max_terms}; "
                f"raise max_terms or lower {xname}"
            )
    total, prev, prev_rho = mpmath.mpf(0), None, None
    for i in range(max_terms):
        if i % 256 == 0:
            _check_deadline()
        try:
            c = series.abs_coeff(i)
        except IndexError:
            raise SeriesBudgetError(
                f"{what} of {name}: the function is entire (radius ∞), so the series converges, but with "
                f"{xname} = {mpmath.nstr(x, 8)} its terms have not started to shrink by degree "
                f"{series.max_degree}, the last Taylor coefficient computed (max_degree; no closed-form "
                "coefficient formula is known for this expression); raise max_degree or lower "
                f"{xname}"
            ) from None
        t = weight(i) * c * x**i
        if t == 0:
            continue
        total += t
        if prev is not None:
            rho = t / prev
            if rho < 1 and (prev_rho is None or rho <= prev_rho) and t * rho / (1 - rho) <= tol * total:
                return total, i + 1
            prev_rho = rho
        prev = t
    raise SeriesBudgetError(
        f"{what} of {name}: the function is entire, so the series converges, but {max_terms} terms "
        f"(max_terms) were not enough to reach the relative tolerance {tol}; raise max_terms"
    )


def _tail_estimate(t: np.ndarray, q) -> mpmath.mpf:
    """Σ_{i≥N} t_i estimated from the envelope t_i/q^i on [N/4, N/2) and [N/2, N)."""
    n = len(t)
    lq = mpmath.log(q)

    def env(lo, hi):
        best = None
        for i in np.flatnonzero(t[lo:hi]) + lo:
            g = mpmath.log(_to_mp(t[i])) - i * lq
            if best is None or g > best[1]:
                best = (int(i), g)
        return best

    end, mid = env(n // 2, n), env(n // 4, n // 2)
    if end is None:
        return mpmath.mpf(0)
    gamma = mpmath.mpf(0)
    if mid is not None and end[0] > mid[0]:
        gamma = max(mpmath.mpf(0), (end[1] - mid[1]) / (mpmath.log(end[0]) - mpmath.log(mid[0])))
    ratio = q * mpmath.exp(gamma / n)
    if ratio >= 1:
        return mpmath.inf
    envelope_n = mpmath.exp(end[1] + gamma * (mpmath.log(n) - mpmath.log(end[0])))
    return envelope_n * q**n / (1 - ratio)


def _initial_terms(q, tol: float) -> int:
    n = 1.5 * (math.log(1 / tol) + 10) / float(-mpmath.log(q)) + 64
    return int(min(max(256, 64 * math.ceil(n / 64)), _ENGINE_MAX))


def _sum_inside(series, x, weight, tol, max_terms, what, name, xname):
    """Finite radius r, x < r: numeric coefficients of phi(x·y), head replaced by the exact ones."""
    q = x / series.radius
    cap = min(max_terms, _ENGINE_MAX)
    n = min(_initial_terms(q, tol), cap)
    head = len(series._exact)
    exact_terms = [series.abs_coeff(i) * x**i for i in range(head)]
    while True:
        try:
            a = np.abs(_jet(series.expr, x, n))
        except _Unsupported:
            return _sum_exact_inside(series, x, weight, tol, q, what, name, xname)
        h = min(head, n)
        scale = max(exact_terms[:h])
        if scale > 0 and max(abs(_to_mp(a[i]) - exact_terms[i]) for i in range(h)) > mpmath.mpf(1e-12) * scale:
            return _sum_exact_inside(series, x, weight, tol, q, what, name, xname)
        t = weight.vector(n) * a
        for i in range(h):
            t[i] = _ld(weight(i) * exact_terms[i])
        total = _to_mp(np.sum(t[h:])) + mpmath.fsum(weight(i) * exact_terms[i] for i in range(h))
        tail = _tail_estimate(t, q)
        if tail <= tol * total:
            return total, n
        _check_deadline()
        if n >= cap:
            raise SeriesBudgetError(
                f"{what} of {name}: the series converges ({xname} = {mpmath.nstr(x, 8)} is below the radius "
                f"{_radius_text(series)}), but {xname}/radius = {mpmath.nstr(q, 8)} is so close to 1 that "
                f"{n} terms leave an estimated relative tail of {mpmath.nstr(tail / total, 3)} > tol = {tol} "
                f"(partial sum {mpmath.nstr(total, 8)}); raise max_terms (at most {_ENGINE_MAX} are used) "
                f"or tol, or lower {xname}"
            )
        n = min(2 * n, cap)


def _sum_exact_inside(series, x, weight, tol, q, what, name, xname):
    """Fallback when the numeric route cannot handle the expression: exact coefficients up to max_degree."""
    total, terms = mpmath.mpf(0), []
    i = 0
    for i in range(series.max_degree):
        _check_deadline()
        try:
            c = series.abs_coeff(i)
        except IndexError:
            break
        t = weight(i) * c * x**i
        terms.append(t)
        total += t
        if i + 1 >= _HEAD and (i + 1) & i == 0:  # at 64, 128, 256, ...
            tail = _tail_estimate(np.array([_ld(v) for v in terms], dtype=_LD), q)
            if tail <= tol * total:
                return total, i + 1
    raise SeriesBudgetError(
        f"{what} of {name}: the series converges ({xname} = {mpmath.nstr(x, 8)} is below the radius "
        f"{_radius_text(series)}), but the {len(terms)} exact Taylor coefficients available (max_degree) "
        f"do not reach the relative tolerance {tol}; raise max_degree or lower {xname}"
    )


# --------------------------------------------------------------------------------------------
# Parameter checks
# --------------------------------------------------------------------------------------------


def _eps(eps, name="eps"):
    return V.real(name, eps, lo=0, hi=1, lo_open=True, hi_open=True)


def _R(R):
    return V.real("R", R, lo=0)


def _C_star(C_star):
    if not V._is_bool(C_star) and isinstance(C_star, (int, float)) and C_star == math.inf:
        raise ValueError("C_star must be a finite number in (0, inf), got inf: C* is a large but fixed "
                         "constant of §4 (e.g. 10^4), and with C* = ∞ every non-polynomial measure is infinite")
    return V.real("C_star", C_star, lo=0, lo_open=True)


def _common(R, C_star, tol, max_terms, max_degree):
    return (_R(R), _C_star(C_star), V.real("tol", tol, lo=0, hi=1, lo_open=True, hi_open=True),
            V.integer("max_terms", max_terms, lo=1), V.integer("max_degree", max_degree, lo=1))


# --------------------------------------------------------------------------------------------
# Truncation (Example 4.1)
# --------------------------------------------------------------------------------------------


def truncation_degree(act, eps: float, R: float = 1.0, max_degree: int = 400) -> int:
    """Smallest D with max_{|z|≤R} |phi(z) − Σ_{i≤D} c_i z^i| ≤ ε (Example 4.1).

    Checked on 2001 points of [−R, R] (in float64, or in mpmath when the terms
    c_i R^i are so large that float64 rounding could hide an error of ε).
    Raises :class:`NonConvergentSeriesError` when R is not below the radius
    of convergence (the Taylor polynomials then do not converge on [−R, R])
    and :class:`SeriesBudgetError` when R is below it but no D ≤ max_degree
    suffices.
    """
    act = _resolve(act, {}, "act")
    eps = _eps(eps)
    R = _R(R)
    max_degree = V.integer("max_degree", max_degree, lo=1)
    return _truncation_degree(act, _series(act, max_degree), eps, R, max_degree)


def _truncation_degree(act, series: TaylorSeries, eps: float, R: float, max_degree: int) -> int:
    if R == 0:
        return 0
    r = series.radius
    if r != mpmath.inf and (R >= r if series.radius_exact else R >= mpmath.mpf("1.1") * r):
        raise NonConvergentSeriesError(
            f"Example 4.1 truncation of {act.name}: R = {R} is not below the radius of convergence "
            f"{_radius_text(series)} of its Taylor series at 0, so its Taylor polynomials do not converge "
            f"on [-R, R] and no degree is within eps = {eps}; lower R"
        )
    n_max = series.degree + 1 if series.is_polynomial else min(max_degree, series.max_degree)
    zs = np.linspace(-R, R, 2001)
    u = zs / R
    f = sympy.lambdify(Z, act.expr, modules="numpy")
    with np.errstate(all="ignore"):
        target = np.broadcast_to(np.asarray(f(zs), dtype=float), zs.shape)
    approx = np.zeros_like(zs)
    upow = np.ones_like(zs)
    big = 0.0
    coeffs = series.coeffs(min(n_max, _HEAD))
    with mpmath.workdps(_DPS):
        scaled = []
        for D in range(n_max):
            if D >= len(coeffs):
                coeffs = series.coeffs(min(n_max, 2 * len(coeffs)))
                if D >= len(coeffs):
                    break
            a = mpmath.mpf(coeffs[D].evalf(_DPS)) * mpmath.mpf(R) ** D
            scaled.append(a)
            with np.errstate(all="ignore"):
                af = float(a) if abs(a) < mpmath.mpf("1e300") else math.inf
                big = max(big, abs(af))
                approx = approx + af * upow
                upow = upow * u
            if big * 1e-13 <= eps and math.isfinite(big) and np.max(np.abs(target - approx)) <= eps:
                return D
    # float64 could not certify: either the terms are still large, or rounding hides the answer
    tail = max((abs(a) for a in scaled[-8:]), default=mpmath.mpf(0))
    if tail > eps:
        raise SeriesBudgetError(
            f"Example 4.1 truncation of {act.name}: R = {R} is below the radius of convergence "
            f"{_radius_text(series)}, so some Taylor polynomial is within eps = {eps} on [-R, R], but at degree "
            f"{len(scaled) - 1} (max_degree) the terms |c_i| R^i are still ≈ {mpmath.nstr(tail, 3)}; "
            "raise max_degree or lower R"
        )
    top = max(abs(a) for a in scaled)
    dps = int(20 + max(0, float(mpmath.log10(top / eps))))
    if dps > 300:  # pragma: no cover - the tail check above catches these in practice
        raise SeriesBudgetError(f"Example 4.1 truncation of {act.name}: terms too large to evaluate (R = {R})")
    with mpmath.workdps(dps):
        fm = sympy.lambdify(Z, act.expr, modules="mpmath")
        pts = [mpmath.mpf(float(v)) for v in zs]
        tgt = [fm(p) for p in pts]
        acc = [mpmath.mpf(0)] * len(pts)
        cs = [mpmath.mpf(c.evalf(dps + 5)) for c in series.coeffs(len(scaled))]
        for D, c in enumerate(cs):
            acc = [s + c * p**D for s, p in zip(acc, pts)]
            if max(abs(t - s) for t, s in zip(tgt, acc)) <= eps:
                return D
    raise SeriesBudgetError(
        f"Example 4.1 truncation of {act.name}: no Taylor polynomial of degree ≤ {len(scaled) - 1} "
        f"(max_degree) is within eps = {eps} on [-{R}, {R}]; raise max_degree"
    )


def _truncated(act: Activation, eps: float, R: float, max_degree: int):
    series = _series(act, max_degree)
    D = _truncation_degree(act, series, eps, R, max_degree)
    coeffs = series.coeffs(D + 1)
    expr = sum(c * Z**i for i, c in enumerate(coeffs))
    return Activation.custom(f"{act.name}[deg≤{D}]", expr), D


# --------------------------------------------------------------------------------------------
# The measures
# --------------------------------------------------------------------------------------------


def complexity_eps(
    act,
    eps: float,
    R: float = 1.0,
    C_star: float = C_STAR,
    *,
    truncate: bool = False,
    tol: float = 1e-12,
    max_terms: int = 10**6,
    max_degree: int = 400,
    time_budget: float | None = TIME_BUDGET,
) -> Complexity:
    """ℭ_ε(phi, R) (ResNet paper §4, companion §2): the network-size measure.

    Converges iff C*·R is below the radius of convergence of phi's Taylor
    series (otherwise :class:`NonConvergentSeriesError`). ``truncate=True``
    measures the degree-D Taylor polynomial that is ε-close to phi on
    [−R, R] instead of the full series (Example 4.1; the route for tanh and
    sigmoid, whose radii π/2 and π are far below C*·R = 10^4). An expression
    that is identically constant is measured as that constant
    (cos(z)**2 + sin(z)**2 as 1, the zero function as 0). A computation that
    takes longer than ``time_budget`` seconds (None: no limit) stops with a
    :class:`SeriesBudgetError` naming it.
    """
    act = _resolve(act, {}, "act")
    eps = _eps(eps)
    R, C_star, tol, max_terms, max_degree = _common(R, C_star, tol, max_terms, max_degree)
    truncate = V.boolean("truncate", truncate)
    time_budget = _time_budget(time_budget)
    with _budget(time_budget, f"ℭ_ε of {act.name}"):
        return _complexity_eps(act, eps, R, C_star, truncate, tol, max_terms, max_degree)


def _complexity_eps(act, eps, R, C_star, truncate, tol, max_terms, max_degree) -> Complexity:
    D = None
    if truncate:
        act, D = _truncated(act, eps, R, max_degree)
    series = _series(act, max_degree)
    with mpmath.workdps(_DPS):
        L = mpmath.sqrt(mpmath.log(1 / mpmath.mpf(eps)))
        x = mpmath.mpf(C_star) * mpmath.mpf(R)
        value, n = _weighted_sum(
            series, x, _Weight("eps", L), tol, max_terms, "ℭ_ε", act.name, "C*·R",
            "Pass truncate=True to use the truncation of Example 4.1, or lower R or C_star.",
        )
    return Complexity("C_eps", act.name, value, R, C_star, n, eps=eps, truncation_degree=D,
                      radius=float(series.radius))


def complexity_s(
    act,
    R: float = 1.0,
    C_star: float = C_STAR,
    variant: str = "resnet",
    *,
    truncate_eps: float | None = None,
    tol: float = 1e-12,
    max_terms: int = 10**6,
    max_degree: int = 400,
    time_budget: float | None = TIME_BUDGET,
) -> Complexity:
    """ℭ_s(phi, R): the sample-complexity measure.

    ``variant="resnet"`` weighs |c_i| by (i+1) (ResNet paper §4);
    ``variant="companion"`` by (i+1)^1.75 (companion paper §2); both by R^i
    and the factor C*. Converges iff R is below the radius of convergence
    (C* only scales the value). ``truncate_eps`` applies Example 4.1's
    truncation at that accuracy first. Constant expressions and
    ``time_budget`` as in :func:`complexity_eps` (the zero function has ℭ_s = 0).
    """
    act = _resolve(act, {}, "act")
    R, C_star, tol, max_terms, max_degree = _common(R, C_star, tol, max_terms, max_degree)
    variant = V.choice("variant", variant, VARIANTS)
    if truncate_eps is not None:
        truncate_eps = _eps(truncate_eps, "truncate_eps")
    time_budget = _time_budget(time_budget)
    with _budget(time_budget, f"ℭ_s of {act.name}"):
        return _complexity_s(act, R, C_star, variant, truncate_eps, tol, max_terms, max_degree)


def _complexity_s(act, R, C_star, variant, truncate_eps, tol, max_terms, max_degree) -> Complexity:
    D = None
    if truncate_eps is not None:
        act, D = _truncated(act, truncate_eps, R, max_degree)
    series = _series(act, max_degree)
    power = 1 if variant == "resnet" else mpmath.mpf("1.75")
    with mpmath.workdps(_DPS):
        value, n = _weighted_sum(
            series, mpmath.mpf(R), _Weight("s", power), tol, max_terms, "ℭ_s", act.name, "R",
            "ℭ_s converges only for R below the radius (C* does not matter); lower R, or pass "
            "truncate_eps= to use the truncation of Example 4.1.",
        )
        value = mpmath.mpf(C_star) * value
    return Complexity(
        "C_s", act.name, value, R, C_star, n, eps=truncate_eps, variant=variant, truncation_degree=D,
        radius=float(series.radius),
    )


def compose(outer, inner) -> Activation:
    """The univariate composition outer(inner(z)) as a new activation."""
    outer, inner = _resolve(outer, {}, "outer"), _resolve(inner, {}, "inner")
    return Activation.custom(f"({outer.name})∘({inner.name})", outer.expr.subs(Z, inner.expr))


def composition_blowup(outer, inner, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR,
                       variant: str = "resnet") -> dict[str, dict[str, Complexity]]:
    """ℭ_ε and ℭ_s of inner (F), outer (G) and their composition G∘F.

    The point of ResNet paper §2.1: ℭ(G∘F) can be far larger than ℭ(F) and
    ℭ(G); kernel methods pay for ℭ(G∘F), the ResNet only for ℭ(F), ℭ(G).
    """
    eps, R, C_star = _eps(eps), _R(R), _C_star(C_star)
    variant = V.choice("variant", variant, VARIANTS)
    out = {}
    for label, a in (("F", _resolve(inner, {}, "inner")), ("G", _resolve(outer, {}, "outer")),
                     ("G∘F", compose(outer, inner))):
        out[label] = {
            "C_eps": complexity_eps(a, eps, R, C_star),
            "C_s": complexity_s(a, R, C_star, variant),
        }
    return out


def linear_power_example(d: int, degree: int = 10, **kw) -> dict[str, dict[str, Complexity]]:
    """The running example of ResNet paper §2.1 and the talk: F(x) = √d·⟨w, x⟩
    with ‖w‖ = 1 (a linear map of norm √d) and G(z) = z^degree.

    Then G(F(x)) = d^{degree/2}⟨w, x⟩^degree: ℭ_s(F) = 2C*√d and ℭ_s(G) =
    (degree+1)C* stay small while ℭ_s(G∘F) = (degree+1)C*·d^{degree/2}
    (d^5 times ℭ_s(G) for degree 10, as in the talk).
    """
    d = V.integer("d", d, lo=1)
    degree = V.integer("degree", degree, lo=1, hi=1000)
    inner = Activation.custom(f"sqrt({d})*z", sympy.sqrt(d) * Z)
    outer = _resolve("power", {"p": degree}, "degree")
    return composition_blowup(outer, inner, **kw)


def concept_complexity(concept, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR,
                       variant: str = "resnet", truncate: bool = False) -> dict[str, dict[str, Complexity]]:
    """ℭ(F) and ℭ(G) of a Concept 1 target: the maximum over its
    activations F_{r,i} (resp. G_{r,i}) (ResNet paper §5)."""
    eps, R, C_star = _eps(eps), _R(R), _C_star(C_star)
    variant = V.choice("variant", variant, VARIANTS)
    truncate = V.boolean("truncate", truncate)
    out = {}
    for part in ("F", "G"):
        acts = getattr(getattr(concept, part, None), "activations", None)
        if acts is None:
            raise TypeError(f"concept must be a Concept 1 target with F and G networks, got {type(concept).__name__}")
        ce = [complexity_eps(a, eps, R, C_star, truncate=truncate) for a in acts]
        cs = [complexity_s(a, R, C_star, variant, truncate_eps=eps if truncate else None) for a in acts]
        out[part] = {"C_eps": max(ce, key=lambda c: c.value), "C_s": max(cs, key=lambda c: c.value)}
    return out


def describe(act, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR) -> str:
    """One line with ℭ_s and ℭ_ε of an activation (Def. 2.1 / eq. 2.2), for the
    notebook sliders; where ℭ_ε's series diverges (tanh, sigmoid) it reports
    the truncated measure of Example 4.1 and says so instead of failing."""
    shown_R = R
    act = _resolve(act, {}, "act")
    eps, R, C_star = _eps(eps), _R(R), _C_star(C_star)
    try:
        cs = complexity_s(act, R=R, C_star=C_star)
        cs_text = f"C_s({cs.activation}, R={shown_R}) = {cs}"
    except NonConvergentSeriesError:
        cs_text = (f"C_s({act.name}, R={shown_R}) diverges (R ≥ radius of convergence "
                   f"{radius_of_convergence(act):.6g})")
    try:
        ce = complexity_eps(act, eps, R=R, C_star=C_star)
        ce_text = f"C_eps(eps={eps:g}) = {ce}"
    except NonConvergentSeriesError:
        try:
            ce = complexity_eps(act, eps, R=R, C_star=C_star, truncate=True)
            ce_text = (f"C_eps(eps={eps:g}) = {ce} (series diverges; Example 4.1 truncation at degree "
                       f"{ce.truncation_degree})")
        except NonConvergentSeriesError:
            ce_text = (f"C_eps(eps={eps:g}) diverges (R ≥ radius of convergence, so not even the "
                       "Example 4.1 truncation converges)")
    return f"{cs_text}    {ce_text}"
