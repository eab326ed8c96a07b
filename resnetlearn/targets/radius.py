"""Radius of convergence of an activation's Taylor series at 0 (ResNet paper §4;
companion §2): where the complexity sums Σ_i w(i)|c_i| x^i stop converging.

Both measures weigh |c_i| x^i by a w(i) that grows slower than any geometric
sequence, so their series converge when x is below the radius r of phi's
Taylor series and diverge when x > r (Cauchy–Hadamard). :func:`structural_radius`
reads r from the expression tree:

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
  depend on z and one has a finite radius, the caller cross-checks the value
  against the coefficients and uses the estimate below if it exceeds 1.2×
  the minimum;
* anything else (e.g. tanh(sin(z))) raises :class:`NoClosedForm`, and
  :func:`radius_fit` estimates r from the coefficients: a least-squares fit
  of log|c_i| = a + β·log i − i·log r over the block maxima (blocks of 8) of
  the nonzero c_i with 80 ≤ i < 160 (fewer where only fewer coefficients can
  be computed).

The known activations get their textbook radii: tanh(cz) π/(2|c|),
sigmoid(cz) π/|c|, 1/(1−z) 1, entire functions ∞.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import sympy

from .activations import Z
from .power_series import DPS

FIT_DEGREE = 160
"""Coefficients up to this degree enter :func:`radius_fit`."""


class NoClosedForm(Exception):
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
    return [mpmath.mpmathify(complex(sympy.N(c, DPS))) if not c.is_Rational else mpmath.mpf(c.p) / c.q
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
    raise NoClosedForm


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
            raise NoClosedForm  # no pruning bound for an infinite set of targets
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
        raise NoClosedForm
    a, rest = u.as_independent(Z, as_Add=True)
    b, g = rest.as_independent(Z, as_Add=False)
    if not (isinstance(g, sympy.exp) and g.args[0].is_polynomial(Z)):
        raise NoClosedForm
    a, b = mpmath.mpmathify(complex(sympy.N(a, DPS))), mpmath.mpmathify(complex(sympy.N(b, DPS)))
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


def structural_radius(e: sympy.Expr, flags: list):
    """Radius of convergence at 0 from the expression tree (see the module docstring)."""
    inf = mpmath.inf
    if not e.has(Z) or e.is_polynomial(Z):
        return inf
    if e.is_rational_function(Z):
        num, den = sympy.fraction(sympy.cancel(sympy.together(e)))
        return _min_root_abs(_poly_mp(den)) if den.has(Z) else inf
    if e.is_Add or e.is_Mul:
        parts = [a for a in e.args if a.has(Z)]
        radii = [structural_radius(a, flags) for a in parts]
        if len(parts) > 1 and any(r != inf for r in radii):
            flags.append(True)
        return min(radii)
    if e.is_Pow:
        b, x = e.args
        if x.has(Z):  # b**x = exp(x·log b)
            return min(structural_radius(x, flags), structural_radius(b, flags),
                       _preimage_radius(b, [[0]], True))
        if x.is_Integer and x >= 0:
            return structural_radius(b, flags)
        return min(structural_radius(b, flags), _preimage_radius(b, [[0]], True))
    u = e.args[0] if e.args else None
    if isinstance(e, (sympy.exp, sympy.sin, sympy.cos, sympy.sinh, sympy.cosh)):
        return structural_radius(u, flags)
    if isinstance(e, sympy.tanh):
        return min(structural_radius(u, flags), _preimage_radius(u, _tanh_targets(), False))
    if isinstance(e, sympy.tan):
        return min(structural_radius(u, flags), _preimage_radius(u, _tan_targets(), False))
    for cls, targets in _FINITE_TARGETS.items():
        if isinstance(e, cls):
            return min(structural_radius(u, flags), _preimage_radius(u, [targets], True))
    raise NoClosedForm


def radius_fit(series):
    """Radius estimate from the coefficients of ``series`` (a :class:`~resnetlearn.targets.taylor.TaylorSeries`;
    the rule is in the module docstring)."""
    n = min(series.max_degree, FIT_DEGREE)
    coeffs = series.coeffs(n)
    n = len(coeffs)
    with mpmath.workdps(DPS):
        pts = [(i, float(mpmath.log(abs(mpmath.mpf(c.evalf(DPS))))))
               for i, c in enumerate(coeffs) if i >= max(1, n // 2) and c != 0]
        if not pts:
            pts = [(i, float(mpmath.log(abs(mpmath.mpf(c.evalf(DPS))))))
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


def radius_text(series) -> str:
    """The radius of ``series`` for messages: "∞ (entire function)", a multiple of π, or an estimate."""
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
