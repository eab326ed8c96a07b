"""Complexity measures 𝔆_ε and 𝔆_s of smooth activations (ResNet paper §4;
companion paper §2), computed from exact Taylor coefficients.

For phi(z) = Σ_i c_i z^i, radius R and a large constant C* (default 10^4):

* ResNet paper §4 / companion §2:
  𝔆_ε(phi, R) = Σ_i ((C* R)^i + (sqrt(log(1/ε)/i) · C* R)^i) |c_i|
* ResNet paper §4 (stated at R = 1; the R^i factor extends it as in the
  companion): 𝔆_s(phi, R) = C* Σ_i (i+1) R^i |c_i|          (variant "resnet")
* companion paper §2: 𝔆_s(phi, R) = C* Σ_i (i+1)^1.75 R^i |c_i| (variant "companion")

Convention for i = 0 in 𝔆_ε: the second summand (sqrt(log(1/ε)/i) C* R)^i
is read as its limit i → 0+, which is 1. So the constant term contributes
2|c_0| to 𝔆_ε (and C*|c_0| to 𝔆_s). The paper's activations e^{cz} − 1,
sin, z^p have c_0 = 0, where the convention does not matter.

The values are astronomically large (𝔆_ε(sin z) ≈ sinh(10^4)), so sums are
carried out in mpmath arbitrary precision and returned as a
:class:`Complexity` holding an ``mpmath.mpf``.

Coefficients come from sympy: exact rational head terms from ring series,
and, for entire functions with a closed-form coefficient formula (sympy's
formal power series: sin, cos, exp, polynomials...), the formula for the
long tail, since with C* = 10^4 the terms only start to shrink past
degree ~10^4. Series with a finite radius of convergence (tanh: π/2,
sigmoid: π) diverge at C*·R ≥ radius: these raise
:class:`NonConvergentSeriesError` unless ``truncate=True`` asks for the
route of Example 4.1: truncate the series at the smallest degree D whose
Taylor polynomial is within ε of phi on [−R, R] (D = Θ(log 1/ε)), and
measure that polynomial.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np
import sympy
from sympy.polys.ring_series import rs_series
from sympy.series.formal import Coeff, FormalPowerSeries

from .activations import Activation, Z, activation

C_STAR = 10**4
"""The constant C* of §4 ("sufficiently large, e.g. 10^4")."""

VARIANTS = ("resnet", "companion")
_DPS = 40
_HEAD = 64
_SLOW_MAX_DEGREE = 80


class NonConvergentSeriesError(ValueError):
    """The Taylor series defining a complexity does not converge."""


@dataclass(frozen=True)
class Complexity:
    """One complexity value with how it was obtained.

    ``value`` is an ``mpmath.mpf`` (often far beyond float range);
    ``n_terms`` is the number of Taylor coefficients summed;
    ``truncation_degree`` is D when the Example 4.1 route was used.
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

    def __float__(self) -> float:
        return float(self.value) if self.value < mpmath.mpf("1e308") else math.inf

    @property
    def log10(self) -> float:
        """log10 of the value (finite even when the value overflows a float)."""
        return float(mpmath.log10(self.value)) if self.value > 0 else -math.inf

    def __str__(self) -> str:
        return mpmath.nstr(self.value, 6)


class TaylorSeries:
    """Taylor coefficients c_i of an activation at 0, from sympy.

    Exact rational head from ring series; for i beyond the head, the
    closed-form coefficient formula of sympy's formal power series when one
    exists (checked against the exact head), otherwise a longer ring series
    up to ``max_degree``.
    """

    def __init__(self, act: Activation, max_degree: int = 400):
        self.act = act
        self.expr = act.expr
        self.max_degree = max_degree
        poly = self.expr.is_polynomial(Z)
        self.degree = sympy.Poly(self.expr, Z).degree() if poly else None
        n_head = self.degree + 1 if poly else _HEAD
        self._exact = self._ring_coeffs(n_head)
        self._formula = None if poly else self._fps_formula()

    def _ring_coeffs(self, n: int) -> list[sympy.Expr]:
        try:
            s = rs_series(self.expr, Z, n).as_expr()
            if not sympy.sympify(s).is_polynomial(Z):
                raise ValueError("ring series left the expression unexpanded")
        except Exception:
            # ring series cannot handle this expression: sympy's general (slow)
            # series, so cap the degree to keep the cost bounded
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
        with mpmath.workdps(_DPS):
            for i in range(max(start, _HEAD - 8), _HEAD):
                exact = mpmath.mpf(sympy.Abs(self._exact[i]).evalf(_DPS))
                got = abs(mpmath.mpmathify(fn(i)))
                if abs(got - exact) > mpmath.mpf(10) ** (-20) * max(exact, mpmath.mpf(1e-300)):
                    return None  # formula disagrees with the exact series: do not trust it
        return fn

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
        self._exact = self._ring_coeffs(min(self.max_degree, 2 * len(self._exact)))
        return self.abs_coeff(i)

    def coeffs(self, n: int) -> list[sympy.Expr]:
        """Exact coefficients c_0 .. c_{n-1} (sympy numbers)."""
        if self.is_polynomial:
            return [self._exact[i] if i <= self.degree else sympy.Integer(0) for i in range(n)]
        if n > len(self._exact):
            self._exact = self._ring_coeffs(n)
        return self._exact[:n]


def _check(R, C_star, eps=None, variant=None, tol=1e-12):
    if not (isinstance(R, (int, float)) and R >= 0 and math.isfinite(R)):
        raise ValueError(f"R must be a finite number >= 0, got {R!r}")
    if not (isinstance(C_star, (int, float)) and C_star > 0):
        raise ValueError(f"C_star must be > 0, got {C_star!r}")
    if eps is not None and not (0 < eps < 1):
        raise ValueError(f"eps must lie in (0, 1), got {eps!r}")
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if not (0 < tol < 1):
        raise ValueError(f"tol must lie in (0, 1), got {tol!r}")


def _weight_eps(C_star, R, eps):
    L = mpmath.sqrt(mpmath.log(1 / mpmath.mpf(eps)))
    CR = mpmath.mpf(C_star) * R

    def w(i):
        if i == 0:
            return mpmath.mpf(2)  # both summands read as 1 at i = 0 (see module docstring)
        return CR**i + (L / mpmath.sqrt(i) * CR) ** i

    return w


def _weight_s(C_star, R, variant):
    power = 1 if variant == "resnet" else mpmath.mpf("1.75")
    return lambda i: mpmath.mpf(C_star) * mpmath.mpf(i + 1) ** power * mpmath.mpf(R) ** i


def _sum(series: TaylorSeries, weight, tol: float, max_terms: int, what: str):
    """Σ_i weight(i)|c_i| to relative tolerance ``tol``.

    Infinite series stop once the ratio ρ of consecutive non-zero terms is
    below 1 and no larger than the previous ratio, and the geometric tail
    bound t·ρ/(1−ρ) is below tol times the partial sum (valid while ratios
    keep decreasing, as they do for the entire activations and for
    geometric-type series inside their radius). At degrees 64, 128, ...
    a series whose largest term is still in the second half is declared
    divergent unless its coefficients show an infinite radius of
    convergence (|c_i|^(-1/i) still growing, as for sin, cos, exp).
    """
    if series.is_polynomial:
        n = series.degree + 1
        return mpmath.fsum(weight(i) * series.abs_coeff(i) for i in range(n)), n
    total, prev, prev_rho = mpmath.mpf(0), None, None
    peak_i, peak = 0, mpmath.mpf(0)
    i = 0
    for i in range(max_terms):
        if i >= _HEAD and (i & (i - 1)) == 0 and 2 * peak_i >= i and not _radius_growing(series, i):
            break
        try:
            c = series.abs_coeff(i)
        except IndexError:
            break
        if c == 0:
            continue
        t = weight(i) * c
        total += t
        if t > peak:
            peak_i, peak = i, t
        if prev is not None:
            rho = t / prev
            if rho < 1 and (prev_rho is None or rho <= prev_rho) and t * rho / (1 - rho) <= tol * total:
                return total, i + 1
            prev_rho = rho
        prev = t
    raise NonConvergentSeriesError(
        f"{what} of {series.act.name}: the weighted Taylor series does not converge "
        f"(terms still growing at degree {i}; estimated radius of convergence "
        f"{_radius_estimate(series)}). tanh and sigmoid have finite radius (π/2 and π); "
        "pass truncate=True to use the truncation of Example 4.1, or lower R / C_star."
    )


def _root(series: TaylorSeries, i: int):
    """|c_j|^(-1/j) for the last non-zero c_j with j ≤ i (None if none)."""
    for j in range(i, 0, -1):
        c = series.abs_coeff(j)
        if c != 0:
            return c ** (-mpmath.mpf(1) / j)
    return None


def _radius_growing(series: TaylorSeries, i: int) -> bool:
    """Root-test evidence of an infinite radius: |c_j|^(-1/j) grew by > 1.5×
    from degree i/2 to degree i."""
    if series._formula is None:
        return False
    a, b = _root(series, i // 2), _root(series, i)
    return a is not None and b is not None and b > 1.5 * a


def _radius_estimate(series: TaylorSeries) -> str:
    coeffs = series.coeffs(min(series.max_degree, 200))
    nz = [(i, abs(mpmath.mpf(c.evalf(_DPS)))) for i, c in enumerate(coeffs) if c != 0 and i > 0]
    if not nz:
        return "infinite"
    i, c = nz[-1]
    return f"≈ {float(mpmath.mpf(c) ** (-1.0 / i)):.3g}"


def truncation_degree(act, eps: float, R: float = 1.0, max_degree: int = 400) -> int:
    """Smallest D with max_{|z|≤R} |phi(z) − Σ_{i≤D} c_i z^i| ≤ ε (Example 4.1).

    Checked on 2001 points of [−R, R] in float64; raises
    :class:`NonConvergentSeriesError` when no D ≤ max_degree works
    (R beyond the radius of convergence).
    """
    act = activation(act)
    _check(R, 1, eps)
    series = TaylorSeries(act, max_degree=max_degree)
    zs = np.linspace(-R, R, 2001)
    f = sympy.lambdify(Z, act.expr, modules="numpy")
    target = np.broadcast_to(np.asarray(f(zs), dtype=float), zs.shape)
    approx = np.zeros_like(zs)
    coeffs = [float(c) for c in series.coeffs(max_degree)]
    for D, c in enumerate(coeffs):
        approx = approx + c * zs**D
        if np.max(np.abs(target - approx)) <= eps:
            return D
    raise NonConvergentSeriesError(
        f"no Taylor polynomial of {act.name} of degree ≤ {max_degree} is within eps={eps} "
        f"on [-{R}, {R}]: R exceeds the radius of convergence"
    )


def _truncated(act: Activation, eps: float, R: float, max_degree: int) -> Activation:
    D = truncation_degree(act, eps, R, max_degree)
    coeffs = TaylorSeries(act, max_degree).coeffs(D + 1)
    expr = sum(c * Z**i for i, c in enumerate(coeffs))
    return Activation.custom(f"{act.name}[deg≤{D}]", expr), D


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
) -> Complexity:
    """𝔆_ε(phi, R) (ResNet paper §4, companion §2): the network-size measure.

    ``truncate=True`` measures the degree-D Taylor polynomial that is ε-close
    to phi on [−R, R] instead of the full series (Example 4.1; needed for
    tanh and sigmoid, whose series diverge at C*·R ≥ their radius).
    """
    act = activation(act)
    _check(R, C_star, eps, tol=tol)
    D = None
    if truncate:
        act, D = _truncated(act, eps, R, max_degree)
    with mpmath.workdps(_DPS):
        series = TaylorSeries(act, max_degree)
        value, n = _sum(series, _weight_eps(C_star, R, eps), tol, max_terms, "𝔆_ε")
    return Complexity("C_eps", act.name, value, R, C_star, n, eps=eps, truncation_degree=D)


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
) -> Complexity:
    """𝔆_s(phi, R): the sample-complexity measure.

    ``variant="resnet"`` weighs |c_i| by (i+1) (ResNet paper §4);
    ``variant="companion"`` by (i+1)^1.75 (companion paper §2); both by R^i.
    ``truncate_eps`` applies Example 4.1's truncation at that accuracy first.
    """
    act = activation(act)
    _check(R, C_star, truncate_eps, variant, tol)
    D = None
    if truncate_eps is not None:
        act, D = _truncated(act, truncate_eps, R, max_degree)
    with mpmath.workdps(_DPS):
        series = TaylorSeries(act, max_degree)
        value, n = _sum(series, _weight_s(C_star, R, variant), tol, max_terms, "𝔆_s")
    return Complexity(
        "C_s", act.name, value, R, C_star, n, eps=truncate_eps, variant=variant, truncation_degree=D
    )


def compose(outer, inner) -> Activation:
    """The univariate composition outer(inner(z)) as a new activation."""
    outer, inner = activation(outer), activation(inner)
    return Activation.custom(f"({outer.name})∘({inner.name})", outer.expr.subs(Z, inner.expr))


def composition_blowup(outer, inner, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR,
                       variant: str = "resnet") -> dict[str, dict[str, Complexity]]:
    """𝔆_ε and 𝔆_s of inner (F), outer (G) and their composition G∘F.

    The point of ResNet paper §2.1: 𝔆(G∘F) can be far larger than 𝔆(F) and
    𝔆(G); kernel methods pay for 𝔆(G∘F), the ResNet only for 𝔆(F), 𝔆(G).
    """
    out = {}
    for label, a in (("F", activation(inner)), ("G", activation(outer)), ("G∘F", compose(outer, inner))):
        out[label] = {
            "C_eps": complexity_eps(a, eps, R, C_star),
            "C_s": complexity_s(a, R, C_star, variant),
        }
    return out


def linear_power_example(d: int, degree: int = 10, **kw) -> dict[str, dict[str, Complexity]]:
    """The running example of ResNet paper §2.1 and the talk: F(x) = √d·⟨w, x⟩
    with ‖w‖ = 1 (a linear map of norm √d) and G(z) = z^degree.

    Then G(F(x)) = d^{degree/2}⟨w, x⟩^degree: 𝔆_s(F) = 2C*√d and 𝔆_s(G) =
    (degree+1)C* stay small while 𝔆_s(G∘F) = (degree+1)C*·d^{degree/2}
    (d^5 times 𝔆_s(G) for degree 10, as in the talk).
    """
    if not (isinstance(d, int) and d > 0):
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if not (isinstance(degree, int) and degree > 0):
        raise ValueError(f"degree must be a positive integer, got {degree!r}")
    inner = Activation.custom(f"sqrt({d})*z", sympy.sqrt(d) * Z)
    outer = activation("power", p=degree)
    return composition_blowup(outer, inner, **kw)


def concept_complexity(concept, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR,
                       variant: str = "resnet", truncate: bool = False) -> dict[str, dict[str, Complexity]]:
    """𝔆(F) and 𝔆(G) of a Concept 1 target: the maximum over its
    activations F_{r,i} (resp. G_{r,i}) (ResNet paper §5)."""
    out = {}
    for part in ("F", "G"):
        acts = getattr(concept, part).activations
        ce = [complexity_eps(a, eps, R, C_star, truncate=truncate) for a in acts]
        cs = [complexity_s(a, R, C_star, variant, truncate_eps=eps if truncate else None) for a in acts]
        out[part] = {"C_eps": max(ce, key=lambda c: c.value), "C_s": max(cs, key=lambda c: c.value)}
    return out


def describe(act, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR) -> str:
    """One line with 𝔆_s and 𝔆_ε of an activation (Def. 2.1 / eq. 2.2), for the
    notebook sliders; where 𝔆_ε's series diverges (tanh, sigmoid) it reports
    the truncated measure of Example 4.1 and says so instead of failing."""
    cs = complexity_s(act, R=R, C_star=C_star)
    try:
        ce, note = complexity_eps(act, eps, R=R, C_star=C_star), ""
    except NonConvergentSeriesError:
        ce = complexity_eps(act, eps, R=R, C_star=C_star, truncate=True)
        note = f" (series diverges; Example 4.1 truncation at degree {ce.truncation_degree})"
    return f"C_s({cs.activation}, R={R}) = {cs}    C_eps(eps={eps:g}) = {ce}{note}"
