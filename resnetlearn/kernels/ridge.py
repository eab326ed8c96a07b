"""Kernel ridge regression, solved exactly (ResNet paper eq 3.1–3.3).

A kernel method predicts 𝔎(x) = Σ_n K(x, x_n)·a_n (eq 3.1) with the
coefficients of regularised least squares (eq 3.2); with a ridge λ this is
kernel ridge regression, (K + λI)·a = Y. Linear regression over an explicit
feature map φ (eq 3.3) is the same with K = φφᵀ.

One API, four functions on tensors:

* :func:`krr_fit` — the coefficients a of (K + λI)a = Y for one ridge (a Cholesky solve, eq 3.2);
* :func:`krr_predict` — 𝔎(x) = Σ_n K(x, x_n)a_n (eq 3.1);
* :func:`ridge_path` — the predictions for a whole ridge path from one eigendecomposition of K,
  optionally with an unpenalised label mean (what the kernel experiments search);
* :func:`feature_path` — the same over an explicit feature map (eq 3.3), in the primal when there
  are fewer features than samples.

Every solver regularises by one rule, :func:`effective_ridges`: the ridge as given, unless it is
negligible on a numerically singular K, where a jitter is added with a warning. The Gram matrices
come from :mod:`resnetlearn.kernels`.
"""

from __future__ import annotations

import math
import warnings

import torch

from ..validation import Boolean, Interval, Reals, validate_params
from . import F64, as_targets
from .checks import Matrices, Matrix

GRAM = Matrix(square=True)
RIDGES = Reals(lo=0)


@validate_params({"K": GRAM, "ridge": Interval(float, 0)})
def krr_fit(K: torch.Tensor, Y: torch.Tensor, ridge: float) -> torch.Tensor:
    """Coefficients a of (K + λI)a = Y (eq 3.2 with a squared-norm penalty).

    A float64 Cholesky solve when K + λI is well-conditioned; otherwise the
    ridge is raised by the jitter of :func:`effective_ridges` (with a
    warning) and the system solved from the eigendecomposition of K, exactly
    as :func:`ridge_path` does, so both solvers give the same answer.

    The rule reads K's extreme eigenvalues; when :func:`_keeps_ridge` proves
    from the Cholesky factorisation and cheap bounds that the rule keeps λ
    silently, the eigenvalues (≈ 4 Cholesky factorisations of time) are not
    computed: same decision, same Cholesky solve, same numbers."""
    Y = as_targets(Y, K.shape[0])
    L, info = torch.linalg.cholesky_ex(K + ridge * torch.eye(K.shape[0], dtype=F64, device=K.device))
    factored = int(info) == 0
    if factored and _keeps_ridge(K, ridge):
        return torch.cholesky_solve(Y, L)
    eigs = torch.linalg.eigvalsh(K)
    (lam_eff,) = effective_ridges(eigs, [ridge])
    if lam_eff == ridge and factored:
        return torch.cholesky_solve(Y, L)
    del L
    lam, Q = torch.linalg.eigh(K)
    return Q @ ((Q.T @ Y) / (lam.clamp_min(0) + lam_eff)[:, None])


def _lower_sums(K, block: int = 1024) -> tuple[float, float, float]:
    """Σ K_ij, Σ |K_ij| and Σ K_ij² over the lower triangle j ≤ i (the part LAPACK reads), by row blocks."""
    s = a = q = 0.0
    for i in range(0, K.shape[0], block):
        low = K[i:i + block].tril(diagonal=i)
        s, a, q = s + float(low.sum()), a + float(low.abs().sum()), q + float((low * low).sum())
    return s, a, q


def _keeps_ridge(K, ridge: float) -> bool:
    """True only if :func:`effective_ridges` on the eigenvalues ``eigvalsh(K)`` would return ``ridge``
    unchanged, without a warning or an error; called after K + ridge·I has been factored.

    S is the symmetric matrix of K's lower triangle (what eigvalsh and Cholesky read), λ its
    eigenvalues, n its size, ε the float64 epsilon. Bounds: λ_max ≥ max K_ii and λ_max ≥ 1ᵀS1/n
    (Rayleigh quotients), λ_max ≤ ‖S‖_F, each sum widened by its worst-case rounding γ_{n²}·Σ|terms|
    (t_lo ≤ λ_max ≤ t_hi). eigvalsh is backward stable: its eigenvalues are within err = 10·n·ε·t_hi
    of λ (the usual p(n)·ε·‖S‖₂ bound, p(n) = 10n here). A Cholesky factorisation of S + sI that
    completes proves λ_min > −s − 4γ_{n+1}(Σ|K_ii| + n|s|) (Demmel's backward error |E| ≤ γ_{n+1}|Rᵀ||R|).
    The rule keeps λ silently when (i) its largest computed eigenvalue top > 0 and its smallest
    low ≥ −PSD_TOL·top (no error): guaranteed by t_lo > err and λ_min ≥ −floor with floor =
    PSD_TOL·(t_lo − err) − 2·err; (ii) not λ ≤ ε·top (no jitter) and (iii) (top + λ)/(max(low, 0) + λ)
    ≤ COND_LIMIT (no warning): both follow from λ ≥ 2(t_hi + err)/(COND_LIMIT − 1), because then
    (top + λ)/λ ≤ 1 + (COND_LIMIT − 1)/2. λ_min ≥ −floor is proved by the factorisation of K + λI
    already made when λ + 4γ_{n+1}(Σ|K_ii| + nλ) ≤ floor, else by one more factorisation at the
    largest shift s with s + 4γ_{n+1}(Σ|K_ii| + n|s|) ≤ floor. Anything unproved returns False and
    the eigenvalues decide, so the decision is always the rule's.
    """
    n, eps = K.shape[0], torch.finfo(F64).eps
    gamma = lambda m: m * eps / (1 - m * eps)  # noqa: E731  (γ_m of the rounding-error analysis)
    if n * n * eps >= 0.01:
        return False
    d = K.diagonal()
    s_low, a_low, q_low = _lower_sums(K)
    tr, tr_abs, d2 = float(d.sum()), float(d.abs().sum()), float((d * d).sum())
    g = 2 * gamma(n * n)
    quad = 2 * s_low - tr  # 1ᵀS1
    t_lo = max(float(d.max()), (quad - g * (2 * a_low + tr_abs)) / n)
    t_hi = math.sqrt(max(2 * q_low - d2, 0.0) + g * (2 * q_low + d2)) * (1 + g)
    err = 10 * n * eps * t_hi
    if ridge < 2 * (t_hi + err) / (COND_LIMIT - 1) or t_lo <= err:
        return False  # a jitter or a warning is possible: let the eigenvalues decide
    floor = PSD_TOL * (t_lo - err) - 2 * err
    c = 4 * gamma(n + 1)
    if c * n >= 0.5:
        return False
    if ridge + c * (tr_abs + n * ridge) <= floor:
        return True  # the factorisation of K + λI already proves λ_min ≥ −floor
    target = floor - 0.01 * abs(floor) - c * tr_abs
    shift = target / (1 + c * n) if target >= 0 else target / (1 - c * n)
    _, info = torch.linalg.cholesky_ex(K + shift * torch.eye(n, dtype=F64, device=K.device))
    return int(info) == 0


@validate_params({"K_test": Matrix()})
def krr_predict(K_test: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
    """𝔎(x) = Σ_n K(x, x_n) a_n (eq 3.1), without a mean term; K_test (n_test, N), coef (N,) or (N, k)."""
    coef = torch.as_tensor(coef).to(device=K_test.device, dtype=F64)
    if coef.ndim not in (1, 2) or coef.shape[0] != K_test.shape[1]:
        raise ValueError(f"K_test and coef disagree: K_test has N = {K_test.shape[1]} columns (shape "
                         f"{tuple(K_test.shape)}) but coef has shape {tuple(coef.shape)}; coef must be (N,) or "
                         f"(N, k) with N = {K_test.shape[1]} training points")
    return K_test @ coef


COND_LIMIT = 1 / torch.finfo(F64).eps
"""Condition number of K + λI beyond which float64 keeps no correct digit of the solution (2^52 ≈ 4.5·10^15)."""
SINGULAR = 1e-8
"""K counts as numerically singular when its smallest eigenvalue is below SINGULAR × its largest."""
JITTER = 1e-10
"""The jitter added to a negligible ridge on a numerically singular K, as a multiple of K's largest
eigenvalue (the condition number is then at most about 1/JITTER = 10^10)."""
PSD_TOL = 1e-8
"""A Gram matrix whose smallest eigenvalue is below −PSD_TOL × its largest is not a kernel matrix."""


class IllConditionedWarning(UserWarning):
    """A kernel system K + λI too ill-conditioned for float64."""


def effective_ridges(eigs: torch.Tensor, ridges, *, what: str = "K") -> list[float]:
    """The ridges every solver here uses, given the eigenvalues of the Gram matrix (K, or ΦᵀΦ).

    The one regularisation rule shared by :func:`krr_fit`, :func:`ridge_path`,
    :func:`feature_path` and the exact network solutions
    (eigenvalues below 0 are round-off and count as 0):

    * a ridge λ ≤ ε·λ_max (ε the float64 epsilon; ridge 0 included) cannot
      regularise anything in float64. If moreover K is numerically singular
      (λ_min ≤ SINGULAR·λ_max: nearly duplicate training points, fewer
      features than samples), the solution along the smallest eigenvectors is
      round-off divided by round-off, and two solvers of the same system
      disagree by orders of magnitude. Then λ is raised by JITTER·λ_max and
      an :class:`IllConditionedWarning` names the condition number and the jitter;
    * otherwise λ stays as given (well-conditioned problems are solved
      exactly as asked); a condition number κ = (λ_max + λ)/(λ_min + λ)
      above :data:`COND_LIMIT` still draws the warning.

    Both tests read λ_max (accurate to round-off) and compare λ_min with
    10⁸ times the round-off level, so every solver takes the same decision.
    Raises when K has no positive eigenvalue or one below −PSD_TOL·λ_max.
    """
    top, low = float(eigs.max()), float(eigs.min())
    if top == 0 and low == 0 and min(ridges) > 0:  # K = 0: every positive ridge predicts the mean
        return list(ridges)
    if top <= 0 or low < -PSD_TOL * top:
        raise ValueError(f"{what} + ridge·I is not positive definite: {what} has the eigenvalues {low:.3g} (smallest) "
                         f"and {top:.3g} (largest), so {what} is not a kernel (Gram) matrix; is it a valid kernel "
                         "matrix?")
    low = max(low, 0.0)
    eps = torch.finfo(F64).eps
    out, jittered, poor = [], [], []
    for r in ridges:
        cond = (top + r) / (low + r) if low + r > 0 else math.inf
        if r <= eps * top and low <= SINGULAR * top:
            jittered.append((r, cond))
            r = r + JITTER * top
        elif cond > COND_LIMIT:
            poor.append((r, cond))
        out.append(r)
    if jittered:
        conds = ", ".join(f"ridge {r:.3g}: condition number {c:.3g}" for r, c in jittered)
        warnings.warn(f"{what} + ridge·I is singular in float64 ({conds}; nearly duplicate training points, or a "
                      f"ridge that is 0 or below {eps:.2g} × largest eigenvalue): solved with the ridge raised by "
                      f"a jitter {JITTER:g} × largest eigenvalue {top:.3g} = {JITTER * top:.3g}. Pass a larger "
                      "ridge to choose the regularisation yourself.", IllConditionedWarning, stacklevel=3)
    if poor:
        conds = ", ".join(f"ridge {r:.3g}: condition number {c:.3g}" for r, c in poor)
        warnings.warn(f"{what} + ridge·I is ill-conditioned beyond float64 precision ({conds} > {COND_LIMIT:.2g}): "
                      "the solution keeps no correct digit along the smallest eigenvectors; use a larger ridge.",
                      IllConditionedWarning, stacklevel=3)
    return out


@validate_params({"K": GRAM, "K_tests": Matrices(), "ridges": RIDGES, "center": Boolean()})
def ridge_path(K: torch.Tensor, Y: torch.Tensor, K_tests, ridges, *, center: bool = True) -> list[torch.Tensor]:
    """Predictions for every ridge λ from one eigendecomposition K = QΛQᵀ: a(λ) = Q diag(1/(Λ + λ)) Qᵀ(Y − ȳ),
    𝔎(x) = ȳ + K_test·a(λ), one (R, n_test, k) tensor per test Gram matrix of ``K_tests`` (each
    (n_test, N); e.g. the test points' and the training points' own). The unpenalised mean ȳ
    (``center=True``) makes λ → ∞ predict the mean of the labels and λ → 0 interpolate them;
    ``center=False`` is the plain form of eq 3.2 (a network without an output bias), as
    :func:`krr_fit` solves it. Eigenvalues below zero (round-off) are clipped at 0; the ridges are
    those of :func:`effective_ridges`."""
    Y = as_targets(Y, K.shape[0])
    for i, Kt in enumerate(K_tests):  # the test Grams against K
        if Kt.shape[1] != K.shape[0]:
            raise ValueError(f"K_tests[{i}] must be (n_test, N={K.shape[0]}), got {tuple(Kt.shape)}")
    y_mean = Y.mean(0) if center else None
    lam, Q = torch.linalg.eigh(K)
    lams = effective_ridges(lam, ridges)
    lam = lam.clamp_min(0)  # round-off below zero
    QtY = Q.T @ (Y if y_mean is None else Y - y_mean)
    outs = []
    for Kt in K_tests:
        KQ = Kt @ Q
        pred = torch.stack([KQ @ (QtY / (lam + r)[:, None]) for r in lams])
        outs.append(pred if y_mean is None else y_mean + pred)
    return outs


@validate_params({"Phi": Matrix(), "Phi_tests": Matrices(), "ridges": RIDGES, "center": Boolean()})
def feature_path(Phi: torch.Tensor, Y: torch.Tensor, Phi_tests, ridges, *, center: bool = True) -> list[torch.Tensor]:
    """Linear regression over an explicit feature map (eq 3.3) for every ridge λ:
    w(λ) = (ΦᵀΦ + λI)⁻¹Φᵀ(Y − ȳ), predictions ȳ + Φ_test·w(λ), one (R, n_test, k) tensor per
    feature matrix of ``Phi_tests``. With fewer features than samples this is solved in the primal from
    one eigendecomposition of ΦᵀΦ; otherwise it is :func:`ridge_path` with K = ΦΦᵀ (the dual, the
    same predictions). ``center`` as in :func:`ridge_path`."""
    for i, Pt in enumerate(Phi_tests):  # the test features against Phi
        if Pt.shape[1] != Phi.shape[1]:
            raise ValueError(f"Phi and Phi_tests[{i}] must have the same number of features; got "
                             f"{tuple(Phi.shape)}, {tuple(Pt.shape)}")
    Y = as_targets(Y, Phi.shape[0])
    if Phi.shape[1] > Phi.shape[0]:
        return ridge_path(Phi @ Phi.T, Y, [Pt @ Phi.T for Pt in Phi_tests], ridges, center=center)
    y_mean = Y.mean(0) if center else None
    lam, Q = torch.linalg.eigh(Phi.T @ Phi)
    lams = effective_ridges(lam, ridges, what="ΦᵀΦ")
    lam = lam.clamp_min(0)
    QtPY = Q.T @ (Phi.T @ (Y if y_mean is None else Y - y_mean))
    ws = [Q @ (QtPY / (lam + r)[:, None]) for r in lams]
    outs = [torch.stack([Pt @ w for w in ws]) for Pt in Phi_tests]
    return outs if y_mean is None else [y_mean + o for o in outs]
