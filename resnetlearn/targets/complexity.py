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

Both are weighted sums Σ_i w(i)|c_i| x^i of the Taylor coefficients of phi
(x = C*·R for ℭ_ε, x = R for ℭ_s). They converge when x is below the radius
of convergence of phi's Taylor series at 0 (:mod:`resnetlearn.targets.radius`,
:func:`radius_of_convergence`) and are summed by
:mod:`resnetlearn.targets.weighted_sums` from the coefficients of
:mod:`resnetlearn.targets.taylor`; a series that does not converge raises
:class:`NonConvergentSeriesError`, one that cannot be summed within the
budgets a :class:`SeriesBudgetError`.

The values are astronomically large (ℭ_ε(sin z) ≈ sinh(10^4)), so results
are returned as a :class:`Complexity` holding an ``mpmath.mpf``.

When a series diverges (tanh, sigmoid at C*·R = 10^4 for ℭ_ε) ``truncate=True``
asks for the route of Example 4.1: truncate the series at the smallest
degree D whose Taylor polynomial is within ε of phi on [−R, R]
(D = Θ(log 1/ε)) and measure that polynomial.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass

import mpmath
import numpy as np
import sympy

from .. import validation as V
from ..validation import Boolean, Custom, Interval, NoneOr, Options, validate_params
from .activations import Activation, Z, activation, resolve  # noqa: F401  (activation re-exported)
from .power_series import DPS
from .radius import radius_text
from .taylor import (
    BUDGET_RULE,
    HEAD,
    TIME_BUDGET,
    NonConvergentSeriesError,
    SeriesBudgetError,
    TaylorSeries,
    budget,
    radius_of_convergence,
    series_of,
)
from .weighted_sums import Weight, weighted_sum

C_STAR = 10**4
"""The constant C* of §4 ("sufficiently large, e.g. 10^4")."""

VARIANTS = ("resnet", "companion")


@dataclass(frozen=True)
class Complexity:
    """One complexity value with how it was obtained.

    ``float(c)`` gives the value (``inf`` beyond float range), ``c.log10`` its base-10 logarithm, ``str(c)`` six
    significant digits.

    Parameters
    ----------
    measure : str
        ``"C_eps"`` (ℭ_ε) or ``"C_s"`` (ℭ_s).
    activation : str
        The name of the activation measured.
    value : mpmath.mpf
        The value, often far beyond float range.
    R : float
        The radius R of [−R, R] (keyword-only, as every field below).
    C_star : float
        The constant C* used.
    n_terms : int
        The number of Taylor coefficients summed.
    eps : float or None, default None
        The accuracy ε of ℭ_ε, or of the truncation for ℭ_s.
    variant : str or None, default None
        ``"resnet"`` or ``"companion"`` for ℭ_s.
    truncation_degree : int or None, default None
        The degree D when the truncation of Example 4.1 was used.
    radius : float or None, default None
        The radius of convergence of the series that was summed.
    """

    measure: str
    activation: str
    value: mpmath.mpf
    _: KW_ONLY
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
# Parameter checks
# --------------------------------------------------------------------------------------------


def _C_star(name, C_star):
    if isinstance(C_star, (int, float)) and C_star == math.inf:
        raise ValueError(f"{name} must be a finite number in (0, inf), got inf: C* is a large but fixed "
                         "constant of §4 (e.g. 10^4), and with C* = ∞ every non-polynomial measure is infinite")
    return V.real(name, C_star, lo=0, lo_open=True)


EPS = Interval(float, 0, 1, closed="neither")
"""An accuracy ε in (0, 1)."""
RADIUS = Interval(float, 0)
"""The radius R of the interval [−R, R] the measures look at: at least 0."""
C_STAR_RULE = Custom(_C_star, [0, -1.0, math.inf, math.nan, "1"], "Interval(float, (0, inf))")
"""C* of §4: a finite number above 0."""
VARIANT = Options(VARIANTS)
SERIES = {"tol": Interval(float, 0, 1, closed="neither"), "max_terms": Interval(int, 1),
          "max_degree": Interval(int, 1), "time_budget": BUDGET_RULE}
"""How far a series is summed: its relative tolerance, its number of terms, its degree, its time budget."""


# --------------------------------------------------------------------------------------------
# Truncation (Example 4.1)
# --------------------------------------------------------------------------------------------


@validate_params({"eps": EPS, "R": RADIUS, "max_degree": Interval(int, 1)})
def truncation_degree(act, eps: float, *, R: float = 1.0, max_degree: int = 400) -> int:
    """Smallest D with max_{|z|≤R} |phi(z) − Σ_{i≤D} c_i z^i| ≤ ε (Example 4.1).

    The gap is checked on 2001 points of [−R, R], in float64, or in mpmath when the terms c_i R^i are so large that
    float64 rounding could hide an error of ε.

    Parameters
    ----------
    act : str, sympy.Expr or Activation
        The activation phi, read by :func:`~resnetlearn.targets.activations.resolve`.
    eps : float
        The accuracy ε, in (0, 1).
    R : float, default 1.0
        The half-width of the interval, at least 0 (R = 0 gives D = 0).
    max_degree : int, default 400
        The highest degree tried, at least 1.

    Returns
    -------
    int
        The degree D.

    Raises
    ------
    NonConvergentSeriesError
        If R is not below the radius of convergence (the Taylor polynomials then do not converge on [−R, R]).
    SeriesBudgetError
        If R is below it but no D ≤ ``max_degree`` suffices.
    """
    act = resolve(act, {}, "act")
    return _truncation_degree(act, series_of(act, max_degree), eps=eps, R=R, max_degree=max_degree)


def _truncation_degree(act, series: TaylorSeries, *, eps: float, R: float, max_degree: int) -> int:
    if R == 0:
        return 0
    r = series.radius
    if r != mpmath.inf and (R >= r if series.radius_exact else R >= mpmath.mpf("1.1") * r):
        raise NonConvergentSeriesError(
            f"Example 4.1 truncation of {act.name}: R = {R} is not below the radius of convergence "
            f"{radius_text(series)} of its Taylor series at 0, so its Taylor polynomials do not converge "
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
    coeffs = series.coeffs(min(n_max, HEAD))
    with mpmath.workdps(DPS):
        scaled = []
        for D in range(n_max):
            if D >= len(coeffs):
                coeffs = series.coeffs(min(n_max, 2 * len(coeffs)))
                if D >= len(coeffs):
                    break
            a = mpmath.mpf(coeffs[D].evalf(DPS)) * mpmath.mpf(R) ** D
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
            f"{radius_text(series)}, so some Taylor polynomial is within eps = {eps} on [-R, R], but at degree "
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


def _truncated(act: Activation, eps: float, *, R: float, max_degree: int):
    series = series_of(act, max_degree)
    D = _truncation_degree(act, series, eps=eps, R=R, max_degree=max_degree)
    coeffs = series.coeffs(D + 1)
    expr = sum(c * Z**i for i, c in enumerate(coeffs))
    return Activation.custom(f"{act.name}[deg≤{D}]", expr), D


# --------------------------------------------------------------------------------------------
# The measures
# --------------------------------------------------------------------------------------------


@validate_params({"eps": EPS, "R": RADIUS, "C_star": C_STAR_RULE, "truncate": Boolean(), **SERIES})
def complexity_eps(
    act,
    eps: float,
    *,
    R: float = 1.0,
    C_star: float = C_STAR,
    truncate: bool = False,
    tol: float = 1e-12,
    max_terms: int = 10**6,
    max_degree: int = 400,
    time_budget: float | None = TIME_BUDGET,
) -> Complexity:
    """ℭ_ε(phi, R), the network-size measure (ResNet paper §4, companion §2).

    The series converges if and only if C*·R is below the radius of convergence of phi's Taylor series at 0. An
    expression that is identically constant is measured as that constant (cos(z)**2 + sin(z)**2 as 1, the zero
    function as 0).

    Parameters
    ----------
    act : str, sympy.Expr or Activation
        The activation phi, read by :func:`~resnetlearn.targets.activations.resolve`.
    eps : float
        The accuracy ε, in (0, 1).
    R : float, default 1.0
        The radius R, at least 0.
    C_star : float, default 10**4
        The constant C* of §4, finite and above 0.
    truncate : bool, default False
        Measure the degree-D Taylor polynomial that is ε-close to phi on [−R, R] instead of the full series
        (Example 4.1; the route for tanh and sigmoid, whose radii π/2 and π are far below C*·R = 10^4).
    tol : float, default 1e-12
        Relative tolerance at which the weighted sum stops, in (0, 1).
    max_terms : int, default 10**6
        Most Taylor terms summed, at least 1.
    max_degree : int, default 400
        Highest degree of the exact coefficients and of a truncation, at least 1.
    time_budget : float or None, default 20.0
        Wall-clock seconds the computation may take (above 0); ``None`` sets no limit. Past it a
        :class:`SeriesBudgetError` names the computation.

    Returns
    -------
    Complexity
        ``measure="C_eps"``.

    Raises
    ------
    NonConvergentSeriesError
        If the series does not converge at C*·R (and ``truncate`` is False).
    SeriesBudgetError
        If it cannot be summed within ``max_terms``, ``max_degree`` or ``time_budget``.
    """
    act = resolve(act, {}, "act")
    with budget(time_budget, f"ℭ_ε of {act.name}"):
        return _complexity_eps(act, eps, R=R, C_star=C_star, truncate=truncate, tol=tol, max_terms=max_terms,
                               max_degree=max_degree)


def _complexity_eps(act, eps, *, R, C_star, truncate, tol, max_terms, max_degree) -> Complexity:
    D = None
    if truncate:
        act, D = _truncated(act, eps, R=R, max_degree=max_degree)
    series = series_of(act, max_degree)
    with mpmath.workdps(DPS):
        L = mpmath.sqrt(mpmath.log(1 / mpmath.mpf(eps)))
        x = mpmath.mpf(C_star) * mpmath.mpf(R)
        value, n = weighted_sum(
            series, x, Weight("eps", L), tol=tol, max_terms=max_terms, what="ℭ_ε", name=act.name, xname="C*·R",
            hint="Pass truncate=True to use the truncation of Example 4.1, or lower R or C_star.",
        )
    return Complexity("C_eps", act.name, value, R=R, C_star=C_star, n_terms=n, eps=eps, truncation_degree=D,
                      radius=float(series.radius))


@validate_params({"R": RADIUS, "C_star": C_STAR_RULE, "variant": VARIANT, "truncate_eps": NoneOr(EPS), **SERIES})
def complexity_s(
    act,
    *,
    R: float = 1.0,
    C_star: float = C_STAR,
    variant: str = "resnet",
    truncate_eps: float | None = None,
    tol: float = 1e-12,
    max_terms: int = 10**6,
    max_degree: int = 400,
    time_budget: float | None = TIME_BUDGET,
) -> Complexity:
    """ℭ_s(phi, R), the sample-complexity measure.

    Both variants weigh |c_i| by R^i and multiply by C*; the series converges if and only if R is below the radius
    of convergence (C* only scales the value). Constant expressions are measured as in :func:`complexity_eps` (the
    zero function has ℭ_s = 0).

    Parameters
    ----------
    act : str, sympy.Expr or Activation
        The activation phi, read by :func:`~resnetlearn.targets.activations.resolve`.
    R : float, default 1.0
        The radius R, at least 0.
    C_star : float, default 10**4
        The constant C* of §4, finite and above 0.
    variant : {"resnet", "companion"}, default "resnet"
        ``"resnet"`` weighs |c_i| by (i+1) (ResNet paper §4); ``"companion"`` by (i+1)^1.75 (companion paper §2).
    truncate_eps : float or None, default None
        When given, in (0, 1): apply Example 4.1's truncation at this accuracy first.
    tol : float, default 1e-12
        Relative tolerance at which the weighted sum stops, in (0, 1).
    max_terms : int, default 10**6
        Most Taylor terms summed, at least 1.
    max_degree : int, default 400
        Highest degree of the exact coefficients and of a truncation, at least 1.
    time_budget : float or None, default 20.0
        Wall-clock seconds the computation may take (above 0); ``None`` sets no limit. Past it a
        :class:`SeriesBudgetError` names the computation.

    Returns
    -------
    Complexity
        ``measure="C_s"``.

    Raises
    ------
    NonConvergentSeriesError
        If R is not below the radius of convergence (and no truncation is asked for).
    SeriesBudgetError
        If it cannot be summed within ``max_terms``, ``max_degree`` or ``time_budget``.
    """
    act = resolve(act, {}, "act")
    with budget(time_budget, f"ℭ_s of {act.name}"):
        return _complexity_s(act, R=R, C_star=C_star, variant=variant, truncate_eps=truncate_eps, tol=tol,
                             max_terms=max_terms, max_degree=max_degree)


def _complexity_s(act, *, R, C_star, variant, truncate_eps, tol, max_terms, max_degree) -> Complexity:
    D = None
    if truncate_eps is not None:
        act, D = _truncated(act, truncate_eps, R=R, max_degree=max_degree)
    series = series_of(act, max_degree)
    power = 1 if variant == "resnet" else mpmath.mpf("1.75")
    with mpmath.workdps(DPS):
        value, n = weighted_sum(
            series, mpmath.mpf(R), Weight("s", power), tol=tol, max_terms=max_terms, what="ℭ_s", name=act.name,
            xname="R",
            hint="ℭ_s converges only for R below the radius (C* does not matter); lower R, or pass "
            "truncate_eps= to use the truncation of Example 4.1.",
        )
        value = mpmath.mpf(C_star) * value
    return Complexity(
        "C_s", act.name, value, R=R, C_star=C_star, n_terms=n, eps=truncate_eps, variant=variant, truncation_degree=D,
        radius=float(series.radius),
    )


def compose(outer, inner) -> Activation:
    """The univariate composition outer(inner(z)) as a new activation.

    Parameters
    ----------
    outer : str, sympy.Expr or Activation
        The outer function.
    inner : str, sympy.Expr or Activation
        The inner function.

    Returns
    -------
    Activation
        Named ``"(outer)∘(inner)"``.
    """
    outer, inner = resolve(outer, {}, "outer"), resolve(inner, {}, "inner")
    return Activation.custom(f"({outer.name})∘({inner.name})", outer.expr.subs(Z, inner.expr))


@validate_params({"eps": EPS, "R": RADIUS, "C_star": C_STAR_RULE, "variant": VARIANT})
def composition_blowup(outer, inner, *, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR,
                       variant: str = "resnet") -> dict[str, dict[str, Complexity]]:
    """ℭ_ε and ℭ_s of inner (F), outer (G) and their composition G∘F.

    The point of ResNet paper §2.1: ℭ(G∘F) can be far larger than ℭ(F) and ℭ(G); kernel methods pay for ℭ(G∘F),
    the ResNet only for ℭ(F) and ℭ(G).

    Parameters
    ----------
    outer : str, sympy.Expr or Activation
        G.
    inner : str, sympy.Expr or Activation
        F.
    eps : float, default 0.01
        The accuracy ε of ℭ_ε, in (0, 1).
    R : float, default 1.0
        The radius R, at least 0.
    C_star : float, default 10**4
        The constant C* of §4, finite and above 0.
    variant : {"resnet", "companion"}, default "resnet"
        The variant of ℭ_s (see :func:`complexity_s`).

    Returns
    -------
    dict
        ``{"F" | "G" | "G∘F": {"C_eps": Complexity, "C_s": Complexity}}``.
    """
    out = {}
    for label, a in (("F", resolve(inner, {}, "inner")), ("G", resolve(outer, {}, "outer")),
                     ("G∘F", compose(outer, inner))):
        out[label] = {
            "C_eps": complexity_eps(a, eps, R=R, C_star=C_star),
            "C_s": complexity_s(a, R=R, C_star=C_star, variant=variant),
        }
    return out


@validate_params({"d": Interval(int, 1), "degree": Interval(int, 1, 1000)})
def linear_power_example(d: int, *, degree: int = 10, **kw) -> dict[str, dict[str, Complexity]]:
    """The running example of ResNet paper §2.1 and the talk: F(x) = √d·⟨w, x⟩ and G(z) = z^degree.

    With ‖w‖ = 1, F is a linear map of norm √d, and G(F(x)) = d^{degree/2}⟨w, x⟩^degree: ℭ_s(F) = 2C*√d and
    ℭ_s(G) = (degree+1)C* stay small while ℭ_s(G∘F) = (degree+1)C*·d^{degree/2} (d^5 times ℭ_s(G) for degree 10,
    as in the talk).

    Parameters
    ----------
    d : int
        The input dimension, at least 1.
    degree : int, default 10
        The power of G, in [1, 1000].
    **kw
        ``eps``, ``R``, ``C_star``, ``variant`` of :func:`composition_blowup`.

    Returns
    -------
    dict
        As :func:`composition_blowup`, with F the univariate map z ↦ √d·z.
    """
    inner = Activation.custom(f"sqrt({d})*z", sympy.sqrt(d) * Z)
    outer = resolve("power", {"p": degree}, "degree")
    return composition_blowup(outer, inner, **kw)


@validate_params({"eps": EPS, "R": RADIUS, "C_star": C_STAR_RULE, "variant": VARIANT, "truncate": Boolean()})
def concept_complexity(concept, *, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR,
                       variant: str = "resnet", truncate: bool = False) -> dict[str, dict[str, Complexity]]:
    """ℭ(F) and ℭ(G) of a Concept 1 target: the maximum over its activations F_{r,i} (resp. G_{r,i}) (ResNet paper §5).

    Parameters
    ----------
    concept : Concept1
        A target whose ``F`` and ``G`` are networks with ``activations``.
    eps : float, default 0.01
        The accuracy ε of ℭ_ε, in (0, 1).
    R : float, default 1.0
        The radius R, at least 0.
    C_star : float, default 10**4
        The constant C* of §4, finite and above 0.
    variant : {"resnet", "companion"}, default "resnet"
        The variant of ℭ_s (see :func:`complexity_s`).
    truncate : bool, default False
        Use Example 4.1's truncation at accuracy ``eps`` for both measures.

    Returns
    -------
    dict
        ``{"F" | "G": {"C_eps": Complexity, "C_s": Complexity}}``, each the largest over the part's activations.

    Raises
    ------
    TypeError
        If ``concept`` has no ``F`` and ``G`` networks.
    """
    out = {}
    for part in ("F", "G"):
        acts = getattr(getattr(concept, part, None), "activations", None)
        if acts is None:
            raise TypeError(f"concept must be a Concept 1 target with F and G networks, got {type(concept).__name__}")
        ce = [complexity_eps(a, eps, R=R, C_star=C_star, truncate=truncate) for a in acts]
        cs = [complexity_s(a, R=R, C_star=C_star, variant=variant, truncate_eps=eps if truncate else None)
              for a in acts]
        out[part] = {"C_eps": max(ce, key=lambda c: c.value), "C_s": max(cs, key=lambda c: c.value)}
    return out


@validate_params({"eps": EPS, "R": RADIUS, "C_star": C_STAR_RULE}, convert=False)
def describe(act, eps: float = 0.01, R: float = 1.0, C_star: float = C_STAR) -> str:
    """One line with ℭ_s and ℭ_ε of an activation (Def. 2.1, eq 2.2), for the notebook sliders.

    Where ℭ_ε's series diverges (tanh, sigmoid) the line reports the truncated measure of Example 4.1 and says so;
    where a series diverges even so, it says that instead of failing.

    Parameters
    ----------
    act : str, sympy.Expr or Activation
        The activation.
    eps : float, default 0.01
        The accuracy ε, in (0, 1).
    R : float, default 1.0
        The radius R, at least 0.
    C_star : float, default 10**4
        The constant C* of §4, finite and above 0.

    Returns
    -------
    str
    """
    shown_R = R
    act = resolve(act, {}, "act")
    eps, R, C_star = EPS.check("eps", eps), RADIUS.check("R", R), C_STAR_RULE.check("C_star", C_star)
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
