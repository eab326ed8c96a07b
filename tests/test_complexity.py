"""Complexity measures (ResNet paper §4, companion §2) against hand-derived values."""

import cmath
import math
import time

import mpmath
import numpy as np
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
from resnetlearn.targets.activations import Z
from resnetlearn.targets.complexity import describe
from resnetlearn.targets.taylor import SeriesBudgetError, radius_of_convergence


def close(a, b, rel=1e-12):
    return abs(mpmath.mpf(a) - mpmath.mpf(b)) <= rel * abs(mpmath.mpf(b))


def test_monomial_by_hand():
    # z^3: c_3 = 1. ℭ_s = C*·(3+1) ; companion: C*·4^1.75 ; ℭ_ε = C*^3 (1 + (log(1/ε)/3)^{3/2})
    assert complexity_s("z**3").value == 40000
    assert close(complexity_s("z**3", variant="companion").value, 1e4 * 4**1.75)
    eps = 0.01
    want = 1e12 * (1 + (math.log(1 / eps) / 3) ** 1.5)
    assert close(complexity_eps("z**3", eps).value, want, 1e-14)


def test_polynomial_by_hand_including_constant_term_convention():
    # phi = 1 + 2z − z²/2, R = 2: ℭ_s = C*(1·1 + 2·2·2 + 3·½·4) = 15 C*
    phi = activation("poly", coeffs=[1, 2, -0.5])
    assert complexity_s(phi, R=2).value == 15 * 10**4
    # ℭ_ε with C* = 10, R = 1, log(1/ε) = 4:
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
    # first part of ℭ_ε for e^z − 1 is Σ_{i≥1} C*^i / i! = e^{C*} − 1; the second part is
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
    # ℭ_s at R = 1 converges for tanh (radius π/2 > 1): C*(tan 1 + sec² 1), as in the closed form below; not at R = 2
    assert close(complexity_s("tanh", R=1).value, 10**4 * (mpmath.tan(1) + mpmath.sec(1) ** 2), 1e-12)
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
        assert close(r["F"]["C_s"].value, 2e4 * math.sqrt(d))  # ℭ_s(√d·z) = C*·2·√d
        assert r["G"]["C_s"].value == 11 * 10**4  # ℭ_s(z^10) = 11 C*
        assert close(r["G∘F"]["C_s"].value / r["G"]["C_s"].value, d**5)  # the talk's d^5
    assert compose("z**2", "sin").expr == sympy.sin(Z) ** 2


def test_describe_line_for_the_sliders():
    assert describe("sin").startswith("C_s(sin, R=1.0) = 27182.8")  # C*·e with C* = 10⁴
    assert describe("z**3", R=2, C_star=10).startswith("C_s(z**3, R=2) = 320")  # C*·(3+1)·2³
    line = describe("tanh", 1e-3)
    assert "series diverges" in line and "degree 15" in line
    # inside tanh's radius π/2 the slider's largest R = 1.5 now has a value: C*(tan 1.5 + 1.5 sec² 1.5)
    assert describe("tanh", R=1.5).startswith("C_s(tanh, R=1.5) = 3.13876e+6")
    assert "diverges (R ≥ radius of convergence 1.5708" in describe("tanh", R=2)


# ---- radius of convergence --------------------------------------------------------------------

def _tanh_quadratic_radius():
    # tanh(z² + z) has poles where z² + z = ±iπ(k + ½); the nearest come from k = 0:
    # z = (−1 ± sqrt(1 ± 2πi))/2
    return min(abs((-1 + s * cmath.sqrt(1 + t * 2j * math.pi)) / 2) for s in (1, -1) for t in (1, -1))


@pytest.mark.parametrize(
    "spec, want",
    [
        ("tanh", math.pi / 2),
        ("tanh(3*z)", math.pi / 6),
        ("sigmoid", math.pi),  # 1/(1+e^{-z}): poles at z = iπ(2k+1)
        ("1/(1+exp(-z))", math.pi),  # the same function written by hand
        ("log(1+exp(z))", math.pi),  # softplus: branch points where e^z = −1
        ("(exp(2*z)-1)/(exp(2*z)+1)", math.pi / 2),  # tanh from exponentials
        ("1/(1-z)", 1.0),
        ("1/(4+z**2)", 2.0),
        ("(1-z**2)/(1-z)", math.inf),  # = 1 + z once cancelled
        ("log(1+z)", 1.0),
        ("sqrt(1+z)", 1.0),
        ("atan(2*z)", 0.5),  # branch points at z = ±i/2
        ("asin(z/3)", 3.0),
        ("tan(z)", math.pi / 2),
        ("tanh(z**2+z)", _tanh_quadratic_radius()),
        ("sin", math.inf),
        ("exp(sin(z))*cos(z**3)", math.inf),
        ("z**7 - z", math.inf),
    ],
)
def test_radius_of_convergence_from_the_singularities(spec, want):
    got = radius_of_convergence(spec)
    assert got == want if math.isinf(want) else math.isclose(got, want, rel_tol=1e-12)


def test_radius_estimated_from_coefficients_where_no_closed_form():
    # tanh(sin z): poles where sin z = ±iπ/2, i.e. z = ±i·asinh(π/2); found by the coefficient fit
    assert math.isclose(radius_of_convergence("tanh(sin(z))"), math.asinh(math.pi / 2), rel_tol=1e-4)
    # tanh(z)·cosh(z) = sinh(z): the poles of tanh cancel, and the cross-check notices it
    assert radius_of_convergence("tanh(z)*cosh(z)") > 100


# ---- worked cases -------------------------------------------------------------------------------

def test_geometric_series_near_its_radius():
    # 1/(1−z) = Σ z^i: ℭ_s = C* Σ (i+1) R^i = C*/(1−R)², = 10^4/0.01² = 10^8 at R = 0.99
    R = mpmath.mpf(0.99)
    c = complexity_s("1/(1-z)", R=0.99)
    assert close(c.value, 10**4 / (1 - R) ** 2, 1e-12) and close(c.value, 1e8, 1e-12)
    assert c.n_terms > 2000 and c.radius == 1.0  # terms chosen from R/radius, not a fixed 64
    # companion: C* Σ (i+1)^1.75 R^i = C* Li_{−1.75}(R)/R
    assert close(complexity_s("1/(1-z)", R=0.99, variant="companion").value,
                 10**4 * mpmath.polylog(-1.75, R) / R, 1e-12)
    # ℭ_ε with C* = 1, R = 0.9, ε = 0.01: Σ 0.9^i + |c_0| + Σ_{i≥1} (L·0.9/√i)^i, L² = log 100
    L, x = mpmath.sqrt(mpmath.log(100)), mpmath.mpf(0.9)
    want = 1 / (1 - x) + 1 + mpmath.nsum(lambda i: (L * x / mpmath.sqrt(i)) ** i, [1, mpmath.inf])
    assert close(complexity_eps("1/(1-z)", 0.01, R=0.9, C_star=1).value, want, 1e-12)


def test_tanh_and_sigmoid_inside_their_radius():
    # |c_i| of tanh are the coefficients of tan (tanh z = −i tan(iz)), so
    # Σ (i+1)|c_i| R^i = d/dR (R tan R) = tan R + R sec² R
    for R in (0.5, 1.0, 1.5, 1.56):
        r = mpmath.mpf(R)
        assert close(complexity_s("tanh", R=R).value, 10**4 * (mpmath.tan(r) + r * mpmath.sec(r) ** 2), 1e-12)
    # 3.14e6: tan 1.5 = 14.1014, sec² 1.5 = 199.850, so C*(14.1014 + 299.775) = 3.13876e6
    assert close(complexity_s("tanh", R=1.5).value, mpmath.mpf("3138764.867"), 1e-9)
    # sigmoid = ½ + ½ tanh(z/2): Σ|c_i| y^i = ½ + ½ tan(y/2), so ℭ_s = C* d/dR(R/2 + R tan(R/2)/2)
    for R in (1.0, 3.0):
        r = mpmath.mpf(R)
        want = 10**4 * (mpmath.mpf(1) / 2 + mpmath.tan(r / 2) / 2 + r * mpmath.sec(r / 2) ** 2 / 4)
        assert close(complexity_s("sigmoid", R=R).value, want, 1e-12)
    assert close(complexity_eps("tanh", 1e-3, R=1.5, C_star=1).value, _tanh_eps_by_hand(1e-3, 1.5), 1e-12)


def _tanh_eps_by_hand(eps, R):
    """ℭ_ε(tanh) with C* = 1 and C*R < π/2: tan(R) + Σ_n (L·R/√(2n−1))^{2n−1} |c_{2n−1}|, L = √log(1/ε),
    with |c_{2n−1}| = 2^{2n}(2^{2n}−1)|B_{2n}|/(2n)! (Bernoulli numbers)."""
    L, x = mpmath.sqrt(mpmath.log(1 / mpmath.mpf(eps))), mpmath.mpf(R)

    def term(n):
        k = 2 * n - 1
        c = 2 ** (2 * n) * (2 ** (2 * n) - 1) * abs(mpmath.bernoulli(2 * n)) / mpmath.factorial(2 * n)
        return (L * x / mpmath.sqrt(k)) ** k * c

    return mpmath.tan(x) + mpmath.nsum(term, [1, mpmath.inf])


def test_other_finite_radius_closed_forms():
    # log(1+z): |c_i| = 1/i, Σ_{i≥1} (i+1)R^i/i = R/(1−R) − log(1−R)
    r = mpmath.mpf(0.9)
    assert close(complexity_s("log(1+z)", R=0.9).value, 10**4 * (r / (1 - r) - mpmath.log(1 - r)), 1e-12)
    # atan: |c_i| series is atanh, Σ (i+1)|c_i| R^i = atanh R + R/(1−R²)
    r = mpmath.mpf(0.95)
    assert close(complexity_s("atan(z)", R=0.95).value, 10**4 * (mpmath.atanh(r) + r / (1 - r**2)), 1e-12)
    # sqrt(1+z) = 1 + z/2 − z²/8 + ...: Σ|c_i| y^i = 2 − sqrt(1−y), ℭ_s = C* d/dR(R(2 − sqrt(1−R)))
    r = mpmath.mpf(0.9)
    assert close(complexity_s("sqrt(1+z)", R=0.9).value,
                 10**4 * (2 - mpmath.sqrt(1 - r) + r / (2 * mpmath.sqrt(1 - r))), 1e-12)


def test_R_zero_is_the_constant_term():
    # with 0^0 = 1 only i = 0 survives: ℭ_s = C*|c_0|, ℭ_ε = 2|c_0|
    assert complexity_s("sin", R=0).value == 0
    assert complexity_s("cos", R=0).value == 10**4
    assert complexity_s("sigmoid", R=0).value == 5000
    assert complexity_eps("cos", 0.01, R=0).value == 2
    assert complexity_eps("tanh", 0.01, R=0).value == 0
    assert truncation_degree("sin", 0.01, R=0) == 0


def test_C_star_infinite_is_rejected_at_once():
    t = time.perf_counter()
    for call in (lambda: complexity_s("sin", C_star=math.inf), lambda: complexity_eps("sin", 0.01, C_star=np.inf),
                 lambda: describe("sin", C_star=float("inf"))):
        with pytest.raises(ValueError, match=r"C_star must be a finite number in \(0, inf\), got inf"):
            call()
    assert time.perf_counter() - t < 1


def test_divergence_is_decided_by_the_radius_and_says_so():
    with pytest.raises(NonConvergentSeriesError, match=r"C\*·R = 10000\.0 is not below the radius of convergence π/2"):
        complexity_eps("tanh", 0.01)
    with pytest.raises(NonConvergentSeriesError, match=r"R = 3\.2 is not below the radius of convergence π ≈ 3\.14159"):
        complexity_s("sigmoid", R=3.2)
    with pytest.raises(NonConvergentSeriesError, match="R = 1.0 is not below the radius of convergence 1 "):
        complexity_s("1/(1-z)", R=1)
    # with C* = 1 the same ℭ_ε converges (C*·R = 1 < π/2), to the Bernoulli series of the test below at x = 1
    assert close(complexity_eps("tanh", 0.01, C_star=1).value, _tanh_eps_by_hand(0.01, 1.0), 1e-12)
    # float(π/2) is just below π/2: convergent, but too close to sum; a budget error, not a wrong number
    with pytest.raises(SeriesBudgetError, match="so close to 1"):
        complexity_s("tanh", R=math.pi / 2, max_terms=4096)


def test_truncation_degree_on_entire_and_finite_radius_functions():
    t = time.perf_counter()
    with pytest.raises(SeriesBudgetError) as info:
        truncation_degree("sin", 0.01, R=1e6)
    msg = str(info.value)
    assert "below the radius of convergence ∞ (entire function)" in msg and "raise max_degree" in msg
    assert "exceeds the radius" not in msg
    assert time.perf_counter() - t < 5
    with pytest.raises(NonConvergentSeriesError, match="R = 2.0 is not below the radius of convergence π/2"):
        truncation_degree("tanh", 0.01, R=2)
    # sin on [−3, 3] to 1e-6: the smallest odd D whose Taylor polynomial is within 1e-6 on the same grid
    D = truncation_degree("sin", 1e-6, R=3)
    assert D % 2 == 1
    zs = np.linspace(-3, 3, 2001)

    def err(D):
        return max(abs(math.sin(z) - sum((-1) ** k * z ** (2 * k + 1) / math.factorial(2 * k + 1)
                                         for k in range((D + 1) // 2))) for z in zs)

    assert err(D) <= 1e-6 < err(D - 2)


def test_entire_series_that_would_need_too_many_terms_fail_fast():
    t = time.perf_counter()
    with pytest.raises(SeriesBudgetError, match="entire, so the series converges"):
        complexity_eps("sin", 0.01, C_star=1e7)  # the terms (10^7)^i/i! peak at i ≈ 10^7 > max_terms
    assert time.perf_counter() - t < 5


VALIDATION = [
    (lambda: complexity_eps("sin", 0), ValueError, r"eps must lie in \(0, 1\)"),
    (lambda: complexity_eps("sin", 1.5), ValueError, r"eps must lie in \(0, 1\)"),
    (lambda: complexity_eps("sin", float("nan")), ValueError, "eps must be a finite number"),
    (lambda: complexity_eps("sin", "0.1"), TypeError, "eps must be a real number"),
    (lambda: complexity_s("sin", R=-1), ValueError, r"R must lie in \[0, inf\]"),
    (lambda: complexity_s("sin", R=math.inf), ValueError, "R must be a finite number"),
    (lambda: complexity_s("sin", R="1"), TypeError, "R must be a real number"),
    (lambda: complexity_s("sin", C_star=0), ValueError, r"C_star must lie in \(0, inf\]"),
    (lambda: complexity_s("sin", C_star=-5), ValueError, "C_star must lie in"),
    (lambda: complexity_s("sin", C_star=float("nan")), ValueError, "C_star must be a finite number"),
    (lambda: complexity_s("sin", variant="kernel"), ValueError,
     "unknown variant 'kernel'; allowed: 'resnet', 'companion'"),
    (lambda: complexity_s("sin", tol=0), ValueError, r"tol must lie in \(0, 1\)"),
    (lambda: complexity_s("sin", max_terms=0), ValueError, "max_terms must be an integer in"),
    (lambda: complexity_s("sin", max_terms=2.5), TypeError, "max_terms must be an integer"),
    (lambda: complexity_s("sin", max_degree=0), ValueError, "max_degree must be an integer in"),
    (lambda: complexity_s("sin", truncate_eps=2), ValueError, r"truncate_eps must lie in \(0, 1\)"),
    (lambda: complexity_eps("sin", 0.01, truncate="yes"), TypeError, "truncate must be True or False"),
    (lambda: complexity_s("relu"), ValueError, "unknown activation 'relu' for act"),
    (lambda: complexity_s(42), TypeError, "act must be a registry name"),
    (lambda: complexity_s("log(z)"), ValueError, r"act 'log\(z\)' is not analytic at z = 0"),
    (lambda: linear_power_example(0), ValueError, r"d must be an integer in \[1, inf\]"),
    (lambda: linear_power_example(2.5), TypeError, "d must be an integer"),
    (lambda: linear_power_example(4, degree=0), ValueError, "degree must be an integer in"),
    (lambda: compose("log(z)", "sin"), ValueError, r"outer 'log\(z\)' is not analytic"),
    (lambda: compose("sin", "1/z"), ValueError, r"inner '1/z' is not analytic"),
    (lambda: rl_composition_blowup("z**2", "sin", eps=2), ValueError, "eps must lie in"),
    (lambda: rl_concept_complexity(object()), TypeError, "concept must be a Concept 1 target"),
    (lambda: rl_concept_complexity(None, R=-1), ValueError, "R must lie in"),
    (lambda: describe("sin", eps=0), ValueError, "eps must lie in"),
    (lambda: truncation_degree("sin", 0), ValueError, "eps must lie in"),
    (lambda: truncation_degree("sin", 0.01, R=-1), ValueError, "R must lie in"),
    (lambda: truncation_degree("sin", 0.01, max_degree=0), ValueError, "max_degree must be an integer"),
    (lambda: radius_of_convergence(5), TypeError, "act must be a registry name"),
]


def rl_composition_blowup(*a, **k):
    from resnetlearn import composition_blowup

    return composition_blowup(*a, **k)


def rl_concept_complexity(*a, **k):
    from resnetlearn import concept_complexity

    return concept_complexity(*a, **k)


@pytest.mark.parametrize("call, exc, match", VALIDATION)
def test_bad_inputs_name_the_parameter(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_numpy_and_torch_scalars_are_accepted():
    import torch

    assert close(complexity_s("sin", R=np.float32(0.5)).value, 1e4 * (0.5 * mpmath.cosh(0.5) + mpmath.sinh(0.5)), 1e-11)
    assert complexity_s("z**3", C_star=np.int64(10)).value == 40
    assert complexity_s("z**3", R=torch.tensor(2.0), C_star=10).value == 320
    assert close(complexity_eps("z**3", np.float64(0.01)).value, 1e12 * (1 + (math.log(100) / 3) ** 1.5), 1e-14)
    assert linear_power_example(np.int64(4))["G∘F"]["C_s"].value == 11 * 10**4 * 4**5
