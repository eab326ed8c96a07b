"""Complexity measures (ResNet paper §4, companion §2) against hand-derived values."""

import math

import mpmath
import pytest
import sympy

from resnetlearn import (
    NonConvergentSeriesError,
    activation,
    complexity_eps,
    complexity_s,
    compose,
    linear_power_example,
    truncation_degree,
)
from resnetlearn.activations import Z


def close(a, b, rel=1e-12):
    return abs(mpmath.mpf(a) - mpmath.mpf(b)) <= rel * abs(mpmath.mpf(b))


def test_monomial_by_hand():
    # z^3: c_3 = 1. 𝔆_s = C*·(3+1) ; companion: C*·4^1.75 ; 𝔆_ε = C*^3 (1 + (log(1/ε)/3)^{3/2})
    assert complexity_s("z**3").value == 40000
    assert close(complexity_s("z**3", variant="companion").value, 1e4 * 4**1.75)
    eps = 0.01
    want = 1e12 * (1 + (math.log(1 / eps) / 3) ** 1.5)
    assert close(complexity_eps("z**3", eps).value, want, 1e-14)


def test_polynomial_by_hand_including_constant_term_convention():
    # phi = 1 + 2z − z²/2, R = 2: 𝔆_s = C*(1·1 + 2·2·2 + 3·½·4) = 15 C*
    phi = activation("poly", coeffs=[1, 2, -0.5])
    assert complexity_s(phi, R=2).value == 15 * 10**4
    # 𝔆_ε with C* = 10, R = 1, log(1/ε) = 4:
    #   i=0: 2·1 (both summands are 1 at i = 0) ; i=1: (10 + 2·10)·2 = 60 ; i=2: (100 + (√2·10)²)·½ = 150
    c = complexity_eps(phi, math.exp(-4), R=1, C_star=10)
    assert close(c.value, 212)
    assert c.n_terms == 3


def test_sin_against_closed_form_of_its_series():
    # Σ_{i odd} (i+1) t^i / i! = t·cosh t + sinh t, with t = cR
    for c, R in [(1, 1.0), (3, 1.0), (2, 0.5)]:
        t = c * R
        want = 1e4 * (t * mpmath.cosh(t) + mpmath.sinh(t))
        assert close(complexity_s(activation("sin", c=c), R=R).value, want, 1e-11)


def test_cos_and_exp_closed_forms():
    e = mpmath.e
    assert close(complexity_s("cos").value, 1e4 * e, 1e-11)  # Σ_even (i+1)/i! = cosh 1 + sinh 1
    assert close(complexity_s("exp").value, 1e4 * (2 * e - 1), 1e-11)  # Σ_{i≥1} (i+1)/i!
    # first part of 𝔆_ε for e^z − 1 is Σ_{i≥1} C*^i / i! = e^{C*} − 1; the second part is
    # negligible next to it (its terms peak near i ≈ C*^{2/3}), so the total matches to 1e-10
    assert close(complexity_eps("exp", 0.01).value, mpmath.exp(10**4) - 1, 1e-10)


def test_sin_eps_with_huge_C_star_sums_ten_thousand_terms():
    c = complexity_eps("sin", 0.01)
    assert close(c.value, mpmath.sinh(10**4), 1e-10)
    assert c.n_terms > 10**4  # the terms (10^4)^i/i! only shrink after i = 10^4
    assert round(c.log10) == 4343


def test_sin_eps_against_independent_sum_small_C_star():
    L = mpmath.sqrt(mpmath.log(100))
    want = mpmath.nsum(
        lambda j: (2 ** (2 * j + 1) + (L * 2 / mpmath.sqrt(2 * j + 1)) ** (2 * j + 1)) / mpmath.factorial(2 * j + 1),
        [0, mpmath.inf],
    )
    assert close(complexity_eps("sin", 0.01, C_star=2).value, want, 1e-12)


def test_tanh_sigmoid_diverge_at_large_C_star_and_truncation_route():
    for name in ("tanh", "sigmoid"):
        with pytest.raises(NonConvergentSeriesError, match="truncate=True"):
            complexity_eps(name, 0.01)
    # 𝔆_s at R = 1 converges for tanh (radius π/2 > 1) but not at R = 2
    assert complexity_s("tanh", R=1).value > 10**4
    with pytest.raises(NonConvergentSeriesError):
        complexity_s("tanh", R=2)
    # Example 4.1: truncate at the smallest degree D that is ε-close on [−R, R]
    D3, D6 = truncation_degree("tanh", 1e-3), truncation_degree("tanh", 1e-6)
    assert D3 % 2 == 1 and D6 > D3  # tanh is odd; D grows like log(1/ε)
    tanh = activation("tanh")
    coeffs = [float(c) for c in sympy.Poly(sympy.series(tanh.expr, Z, 0, D6 + 2).removeO(), Z).all_coeffs()[::-1]]
    zs = [i / 1000 for i in range(-1000, 1001)]

    def sup_err(D):
        return max(abs(math.tanh(z) - sum(c * z**i for i, c in enumerate(coeffs[: D + 1]))) for z in zs)

    assert sup_err(D3) <= 1e-3 < sup_err(D3 - 2)
    c = complexity_eps("tanh", 1e-3, truncate=True)
    assert c.truncation_degree == D3 and math.isfinite(c.log10)


def test_nonconvergent_geometric_series_is_an_error_not_a_number():
    with pytest.raises(NonConvergentSeriesError, match="radius of convergence"):
        complexity_s("1/(1-z)", R=1)
    assert close(complexity_s("1/(1-z)", R=0.5).value, 1e4 * 4)  # C*·Σ(i+1)/2^i = 4C*


def test_composition_blowup_d_to_the_fifth():
    for d in (4, 30, 100):
        r = linear_power_example(d)
        assert close(r["F"]["C_s"].value, 2e4 * math.sqrt(d))  # 𝔆_s(√d·z) = C*·2·√d
        assert r["G"]["C_s"].value == 11 * 10**4  # 𝔆_s(z^10) = 11 C*
        assert close(r["G∘F"]["C_s"].value / r["G"]["C_s"].value, d**5)  # the talk's d^5
    assert compose("z**2", "sin").expr == sympy.sin(Z) ** 2


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: complexity_eps("sin", 0), "eps"),
        (lambda: complexity_eps("sin", 1.5), "eps"),
        (lambda: complexity_s("sin", R=-1), "R"),
        (lambda: complexity_s("sin", C_star=0), "C_star"),
        (lambda: complexity_s("sin", variant="kernel"), "variant"),
        (lambda: complexity_s("relu"), "unknown activation"),
        (lambda: linear_power_example(0), "d must be"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_describe_line_for_the_sliders():
    from resnetlearn.complexity import describe

    assert describe("sin").startswith("C_s(sin, R=1.0) = 27182.8")  # C*·e with C* = 10⁴
    assert describe("z**3", R=2, C_star=10).startswith("C_s(z**3, R=2) = 320")  # C*·(3+1)·2³
    line = describe("tanh", 1e-3)
    assert "series diverges" in line and "degree 15" in line
