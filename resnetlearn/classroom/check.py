"""Numeric self-checks for the notebooks' exercises.

Each function takes a student's ``answer`` and prints one fixed line:

* ``answer = None`` (how the notebooks are committed): "not answered yet —
  hint: …";
* the right value: "correct — …" with the reason;
* a typical wrong value: "not quite — …" naming the slip it comes from;
* anything else: "not quite — …" with the hint again.

It returns True / False / None (not answered). Only exact quantities are
checked (closed forms of the papers' instances, compared to a relative
tolerance of 1e-6, or to 0.5 % where a rounded answer is natural), so the
lines are the same on every machine and strict nbval can check them.
"""

from __future__ import annotations

import math
import textwrap

from ..validation import Interval, validate_params

REL_TOL = 1e-6


_MAX_D = 1000
"""Largest input dimension the checks accept (so that C(d, j) and d^{degree/2} stay finite floats)."""
_MAX_DEGREE = 100


ALPHA = Interval(float, 0, 1, closed="left")
"""α of §8.1's target: in [0, 1)."""
K = Interval(int, 1)


def _close(a: float, b, rel: float) -> bool:
    try:
        return math.isclose(a, b, rel_tol=rel, abs_tol=1e-15)
    except OverflowError:  # a typical slip (e.g. d^degree) too large for a float: not the answer
        return False


WIDTH = 96
"""Columns of a printed verdict: wider lines wrap mid-word in a 1280-pixel JupyterLab with its file browser open."""


def _say(text: str) -> None:
    print(textwrap.fill(text, WIDTH, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False))


def _check(name: str, answer, right: float, *, why: str, hint: str, wrong: dict | None = None,
           rel: float = REL_TOL) -> bool | None:
    if answer is None:
        _say(f"{name}: not answered yet — hint: {hint}")
        return None
    try:
        value = float(answer)
    except (TypeError, ValueError):
        _say(f"{name}: not quite — give a number (got {answer!r}); hint: {hint}")
        return False
    except OverflowError:  # an integer beyond any float (10**400, a slip such as d**degree): not the answer
        _say(f"{name}: not quite — a number of {len(str(abs(int(answer))))} digits is far from the "
             f"answer; hint: {hint}")
        return False
    if _close(value, right, rel):
        _say(f"{name}: correct — {why}")
        return True
    for w, msg in (wrong or {}).items():
        if _close(value, w, rel):
            _say(f"{name}: not quite — {msg}")
            return False
    _say(f"{name}: not quite — hint: {hint}")
    return False


@validate_params({"k": K, "alpha": ALPHA})
def k_alpha_squared(answer, *, k: int = 15, alpha: float = 0.3) -> bool | None:
    """Check the error of a model that learns β·F exactly and nothing of α·G(F) (arXiv v3 §8.1).

    The right value is E‖α·G(F(x))‖² = k·α² (1.35 for k = 15, α = 0.3).

    Parameters
    ----------
    answer : number or None
        The student's answer; None (as the notebooks are committed) prints the hint.
    k : int, default 15
        The number of outputs, at least 1.
    alpha : float, default 0.3
        α, in [0, 1).

    Returns
    -------
    bool or None
        True when correct, False when not, None when not answered; the verdict is printed either way.
    """
    return _check("k·α²", answer, k * alpha**2,
                  why=f"each of the k = {k} outputs misses α·G_i = ±{alpha:g}, so the error is k·α² = {k * alpha**2:g}",
                  hint="the error is summed over the k outputs; each misses α·G_i(F(x)) with G_i = ±1",
                  wrong={alpha**2: "that is α², the error of one output; the test error sums over all k outputs",
                   k * alpha: "that is k·α; the error is squared, so each output contributes α²",
                   k * (1 + alpha**2): "that is the error of predicting 0; a model that knows β·F misses only α·G(F)",
                   alpha: "that is α itself; the test error is a squared norm summed over the k outputs"})


@validate_params({"k": K, "alpha": ALPHA, "beta": Interval(float, 0)})
def zero_predictor_error(answer, *, k: int = 15, alpha: float = 0.3, beta: float = 1.0) -> bool | None:
    """Check the error of predicting 0 (arXiv v3 §8.1).

    The right value is E‖β·F + α·G(F)‖² = k(β² + α²) (16.35 for k = 15, α = 0.3, β = 1).

    Parameters
    ----------
    answer : number or None
        The student's answer; None (as the notebooks are committed) prints the hint.
    k : int, default 15
        The number of outputs, at least 1.
    alpha : float, default 0.3
        α, in [0, 1).
    beta : float, default 1.0
        β, at least 0.

    Returns
    -------
    bool or None
        True when correct, False when not, None when not answered; the verdict is printed either way.
    """
    right = k * (beta**2 + alpha**2)
    return _check("error of predicting 0", answer, right,
                  why=f"distinct parities are orthonormal, so the cross term vanishes: k(β² + α²) = {right:g}",
                  hint="expand E‖β·F + α·G(F)‖²; F_i and G_i(F) are distinct parities",
                  wrong={k * beta**2: "that is only E‖β·F‖²; the composite part α·G(F) adds k·α²",
                   k * (beta + alpha) ** 2: "that is k(β + α)²; the cross term 2αβ·E[F_i·G_i(F)] is 0 "
                                            "because F_i and G_i(F) are different parities",
                   k * alpha**2: "that is k·α², the error of a model that already knows β·F"})


@validate_params({"k_G": Interval(int, 1), "p_F": Interval(int, 1)})
def composite_degree(answer, *, k_G: int = 4, p_F: int = 2) -> bool | None:
    """Check the degree of G_i(F(x)) as a parity of x (arXiv v3 §8.1).

    G is a product of k_G = 4 coordinates of F, each a product of p_F = 2 inputs, so the right value is 8.

    Parameters
    ----------
    answer : number or None
        The student's answer; None (as the notebooks are committed) prints the hint.
    k_G : int, default 4
        The coordinates of F that G multiplies, at least 1.
    p_F : int, default 2
        The inputs each coordinate of F multiplies, at least 1.

    Returns
    -------
    bool or None
        True when correct, False when not, None when not answered; the verdict is printed either way.
    """
    right = k_G * p_F
    return _check("degree of G(F(x)) in x", answer, right,
                  why=f"(x1x2)(x3x4)(x5x6)(x7x8) = x1⋯x8: a single parity of degree {right}",
                  hint="multiply out G_i(y) = ±y1y2y3y4 with y_j = x_{2j-1}x_{2j}, using x_j² = 1",
                  wrong={k_G: "4 is the degree of G as a function of y = F(x); in x each y_j is itself "
                         "a product of two inputs",
                   p_F: "2 is the degree of F; the composite signal multiplies four of F's coordinates",
                   16: "the four pairs x1x2, …, x7x8 share no coordinate, so the degrees add to 8, not 16"})


@validate_params({"d": Interval(int, 1, _MAX_D), "degree": Interval(int, 0, "d")})
def parities_up_to_degree(answer, *, d: int = 30, degree: int = 2) -> bool | None:
    """Check Σ_{j ≤ degree} C(d, j), the number of parities (Walsh functions) of degree at most ``degree`` on {±1}^d.

    466 for d = 30, degree 2.

    Parameters
    ----------
    answer : number or None
        The student's answer; None (as the notebooks are committed) prints the hint.
    d : int, default 30
        The dimension, in [1, 1000].
    degree : int, default 2
        The largest degree, in [0, d].

    Returns
    -------
    bool or None
        True when correct, False when not, None when not answered; the verdict is printed either way.
    """
    right = sum(math.comb(d, j) for j in range(degree + 1))
    return _check(f"parities of degree ≤ {degree} in d = {d}", answer, right,
                  why=f"Σ_j≤{degree} C({d}, j) = {right:,}",
                  hint="count the subsets S of the d coordinates with |S| ≤ degree (the empty set is the constant)",
                  wrong={math.comb(d, degree): f"that counts degree exactly {degree}; add the lower degrees "
                                          "(and the constant)",
                   right - 1: "you left out the constant function (the empty set, degree 0)",
                   d**degree: f"that is d^{degree}, ordered tuples with repetition; a parity is a set "
                               "of distinct coordinates"})


@validate_params({"k": K, "p_G": Interval(int, 1), "C_s_G": Interval(float, 0, closed="right")})
def theorem1_alpha_max(answer, *, k: int = 15, p_G: int = 8, C_s_G: float = 5e4) -> bool | None:
    """Check Theorem 1's range α < Θ̃(1/(k·p_G·ℭ_s(G))) for §8.1, with constants and logs dropped.

    The right value is 1/(15·8·5·10⁴) ≈ 1.67·10⁻⁷, checked to 0.5 %.

    Parameters
    ----------
    answer : number or None
        The student's answer; None (as the notebooks are committed) prints the hint.
    k : int, default 15
        The number of outputs, at least 1.
    p_G : int, default 8
        The units per output of G, at least 1.
    C_s_G : float, default 5e4
        ℭ_s(G), above 0.

    Returns
    -------
    bool or None
        True when correct, False when not, None when not answered; the verdict is printed either way.
    """
    right = 1 / (k * p_G * C_s_G)
    return _check("Theorem 1's largest α (orders of magnitude)", answer, right,
                  why=f"1/(k·p_G·ℭ_s(G)) = 1/{k * p_G * C_s_G:.0f} ≈ {right:.3g}: far below the experiments' α = 0.3",
                  hint="read the range of α in Theorem 1 (§6); ℭ_s(G) = 5·10⁴ for z⁴, p_G = 8, k = 15",
                  wrong={1 / (p_G * C_s_G): "you dropped the factor k = 15",
                   1 / (k * C_s_G): "you dropped p_G = 8 (G_i is a sum of 8 polarised powers)",
                   1 / C_s_G: "the range also carries k·p_G",
                   1 / (k * p_G * C_s_G) ** 4: "the fourth power belongs to the error bound, not to the range of α"},
                  rel=5e-3)


@validate_params({"d": Interval(int, 1, _MAX_D), "k": Interval(int, 1, "d")})
def kernel_n_max_arxiv(answer, *, d: int = 30, k: int = 4) -> bool | None:
    """Check the largest N covered by arXiv v3 Theorem 2 (restated in §7.1): N ≤ C(d, k)/1000.

    27.405 for d = 30, k = 4, checked to 0.5 %.

    Parameters
    ----------
    answer : number or None
        The student's answer; None (as the notebooks are committed) prints the hint.
    d : int, default 30
        The dimension, in [1, 1000].
    k : int, default 4
        The degree of the parity, in [1, d].

    Returns
    -------
    bool or None
        True when correct, False when not, None when not answered; the verdict is printed either way.
    """
    right = math.comb(d, k) / 1000
    return _check("largest N covered by arXiv v3 Theorem 2", answer, right,
                  why=f"C({d}, {k})/1000 = {right:g}: the shipped experiments with N = 250–5000 lie outside it",
                  hint="the restated Theorem 2 in arXiv v3 §7.1 bounds N by a binomial coefficient over 1000",
                  wrong={math.comb(d, k): "that is C(d, k) itself; the theorem keeps a factor 1/1000 of it",
                   d ** (k / 2): "d^{k/2} is the NeurIPS version's scale (with log factors); "
                                  "arXiv v3 states C(d, k)/1000"},
                  rel=5e-3)


@validate_params({"d": Interval(int, 1, _MAX_D), "degree": Interval(int, 1, _MAX_DEGREE)})
def composition_ratio(answer, *, d: int = 30, degree: int = 10) -> bool | None:
    """Check ℭ_s(G∘F)/ℭ_s(G) for F = √d⟨w, x⟩, G(z) = z^degree (§2.1 and the talk).

    The right value is d^{degree/2} (d⁵ = 24,300,000 for d = 30).

    Parameters
    ----------
    answer : number or None
        The student's answer; None (as the notebooks are committed) prints the hint.
    d : int, default 30
        The dimension, in [1, 1000].
    degree : int, default 10
        The power of G, in [1, 100].

    Returns
    -------
    bool or None
        True when correct, False when not, None when not answered; the verdict is printed either way.
    """
    right = d ** (degree / 2)
    return _check("ℭ_s(G∘F)/ℭ_s(G)", answer, right,
                  why=f"G(F(x)) = d^{degree / 2:g}·⟨w, x⟩^{degree}: every coefficient is multiplied by "
                  f"d^{degree / 2:g} = {right:,.0f}",
                  hint="write G(F(x)) as a power of ⟨w, x⟩ and read off the coefficient",
                  wrong={d**degree: f"(√d)^{degree} = d^{degree / 2:g}, not d^{degree}",
                   d ** 0.5: f"√d is the factor of F alone; G raises it to the power {degree}"})
