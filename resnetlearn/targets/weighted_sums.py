"""Weighted sums Σ_i w(i)|c_i| x^i of Taylor coefficients: how the complexities
of ResNet paper §4 and companion §2 are summed.

Both measures are such a sum with a weight w that grows slower than any
geometric sequence (:class:`Weight`), so convergence is decided by comparing
x with the radius of convergence r (:mod:`resnetlearn.targets.radius`); at x = r
exactly the series is not summed (convergence on the circle depends on the
singularity) and :class:`NonConvergentSeriesError` is raised. With an
estimated radius the series is summed only for x ≤ 0.9 r, reported divergent
for x ≥ 1.1 r, and in between a :class:`SeriesBudgetError` says it cannot be
decided.

* polynomials: the finite sum, exactly;
* entire functions: the exact head, then the closed-form coefficient formula
  where one exists. The sum stops once consecutive term ratios are below 1
  and decreasing and the geometric tail bound is below ``tol`` times the sum.
  Without a coefficient formula only ``max_degree`` coefficients exist, and
  a sum that needs more (e.g. exp(sin z) at C*·R = 10^4) raises
  :class:`SeriesBudgetError` instead of a divergence claim;
* finite radius, x < r: the number of terms is chosen from q = x/r (about
  1.5·(ln(1/tol) + 10)/ln(1/q)), and the Taylor coefficients of phi(x·y)
  are computed numerically in extended precision by
  :func:`resnetlearn.targets.power_series.jet`; the first 64 are replaced by the
  exact ones (and must agree with them to 1e-12, or the numeric route is
  abandoned). The tail after N terms is estimated as
  envelope·q^N/(1 − q·e^{γ/N}), with γ the polynomial growth of the terms
  over q^i between N/4 and N; more terms are taken (doubling, up to 2^15 or
  ``max_terms``) until it is below ``tol`` times the sum; if that is not
  enough (x/r within ~0.1% of 1) a :class:`SeriesBudgetError` reports the
  partial sum. So ℭ_s(1/(1−z), R = 0.99) = C*/(1 − 0.99)^2 = 10^8 (5696
  terms) and ℭ_s(tanh, R = 1.5) = C*(tan 1.5 + 1.5 sec² 1.5) ≈ 3.13876·10^6
  agree with these closed forms to better than 1e-12 (tests/test_complexity.py
  checks it). Where the recurrences do not apply, exact coefficients up to
  ``max_degree`` are summed with the same tail estimate.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np

from .power_series import LD, Unsupported, jet, longdouble, to_mpf
from .radius import radius_text
from .taylor import HEAD, NonConvergentSeriesError, SeriesBudgetError, TaylorSeries, check_deadline

ENGINE_MAX = 2**15
"""Most terms the numeric route sums."""


class Weight:
    """w(i) for one of the measures, as an mpmath scalar function and a longdouble vector."""

    def __init__(self, kind: str, param):
        self.kind, self.param = kind, param  # ("s", power) or ("eps", L)

    def __call__(self, i: int):
        if self.kind == "s":
            return mpmath.mpf(i + 1) ** self.param
        if i == 0:
            return mpmath.mpf(2)  # both summands read as 1 at i = 0 (resnetlearn.targets.complexity's docstring)
        return 1 + (self.param / mpmath.sqrt(i)) ** i

    def vector(self, n: int) -> np.ndarray:
        i = np.arange(n, dtype=LD)
        if self.kind == "s":
            p = self.param
            return (i + 1) if p == 1 else (i + 1) ** longdouble(p)
        L = longdouble(self.param)
        with np.errstate(divide="ignore", under="ignore"):
            w = 1 + (L / np.sqrt(np.maximum(i, 1))) ** i
        w[0] = 2
        return w


def weighted_sum(series: TaylorSeries, x, weight: Weight, *, tol: float, max_terms: int,
                 what: str, name: str, xname: str, hint: str):
    """Σ_i w(i)|c_i| x^i and the number of terms used (see the module docstring)."""
    if series.is_polynomial:
        n = series.degree + 1
        return mpmath.fsum(weight(i) * series.abs_coeff(i) * x**i for i in range(n)), n
    if x == 0:
        return weight(0) * series.abs_coeff(0), 1
    r = series.radius
    if r == mpmath.inf:
        return _sum_entire(series, x, weight, tol=tol, max_terms=max_terms, what=what, name=name, xname=xname)
    rtext = radius_text(series)
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
    return _sum_inside(series, x, weight, tol=tol, max_terms=max_terms, what=what, name=name, xname=xname)


def _sum_entire(series, x, weight, *, tol, max_terms, what, name, xname):
    """Entire functions: sum until consecutive ratios fall below 1, decrease, and the
    geometric tail bound is below tol·sum."""
    if series._formula is not None and max_terms > 4 * HEAD:
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
            check_deadline()
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
            g = mpmath.log(to_mpf(t[i])) - i * lq
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
    return int(min(max(256, 64 * math.ceil(n / 64)), ENGINE_MAX))


def _sum_inside(series, x, weight, *, tol, max_terms, what, name, xname):
    """Finite radius r, x < r: numeric coefficients of phi(x·y), head replaced by the exact ones."""
    q = x / series.radius
    cap = min(max_terms, ENGINE_MAX)
    n = min(_initial_terms(q, tol), cap)
    head = len(series._exact)
    exact_terms = [series.abs_coeff(i) * x**i for i in range(head)]
    while True:
        try:
            a = np.abs(jet(series.expr, x, n))
        except Unsupported:
            return _sum_exact_inside(series, x, weight, tol=tol, q=q, what=what, name=name, xname=xname)
        h = min(head, n)
        scale = max(exact_terms[:h])
        if scale > 0 and max(abs(to_mpf(a[i]) - exact_terms[i]) for i in range(h)) > mpmath.mpf(1e-12) * scale:
            return _sum_exact_inside(series, x, weight, tol=tol, q=q, what=what, name=name, xname=xname)
        t = weight.vector(n) * a
        for i in range(h):
            t[i] = longdouble(weight(i) * exact_terms[i])
        total = to_mpf(np.sum(t[h:])) + mpmath.fsum(weight(i) * exact_terms[i] for i in range(h))
        tail = _tail_estimate(t, q)
        if tail <= tol * total:
            return total, n
        check_deadline()
        if n >= cap:
            raise SeriesBudgetError(
                f"{what} of {name}: the series converges ({xname} = {mpmath.nstr(x, 8)} is below the radius "
                f"{radius_text(series)}), but {xname}/radius = {mpmath.nstr(q, 8)} is so close to 1 that "
                f"{n} terms leave an estimated relative tail of {mpmath.nstr(tail / total, 3)} > tol = {tol} "
                f"(partial sum {mpmath.nstr(total, 8)}); raise max_terms (at most {ENGINE_MAX} are used) "
                f"or tol, or lower {xname}"
            )
        n = min(2 * n, cap)


def _sum_exact_inside(series, x, weight, *, tol, q, what, name, xname):
    """Fallback when the numeric route cannot handle the expression: exact coefficients up to max_degree."""
    total, terms = mpmath.mpf(0), []
    i = 0
    for i in range(series.max_degree):
        check_deadline()
        try:
            c = series.abs_coeff(i)
        except IndexError:
            break
        t = weight(i) * c * x**i
        terms.append(t)
        total += t
        if i + 1 >= HEAD and (i + 1) & i == 0:  # at 64, 128, 256, ...
            tail = _tail_estimate(np.array([longdouble(v) for v in terms], dtype=LD), q)
            if tail <= tol * total:
                return total, i + 1
    raise SeriesBudgetError(
        f"{what} of {name}: the series converges ({xname} = {mpmath.nstr(x, 8)} is below the radius "
        f"{radius_text(series)}), but the {len(terms)} exact Taylor coefficients available (max_degree) "
        f"do not reach the relative tolerance {tol}; raise max_degree or lower {xname}"
    )
