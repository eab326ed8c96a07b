"""Kernel ridge regression, solved exactly (ResNet paper eq 3.1–3.3).

A kernel method predicts 𝔎(x) = Σ_n K(x, x_n)·a_n (eq 3.1) with the
coefficients of regularised least squares (eq 3.2); with a ridge λ this is
kernel ridge regression, (K + λI)·a = Y. Linear regression over an explicit
feature map φ (eq 3.3) is the same with K = φφᵀ. Every solver here — the
Cholesky solve of :func:`krr_fit`/:class:`KernelRidge`, the eigendecomposition
of :func:`ridge_path`, the primal over features of :func:`feature_ridge` —
regularises by one rule, :func:`effective_ridges`: the ridge as given, unless
it is negligible on a numerically singular K, where a jitter is added with a
warning. The Gram matrices come from :mod:`resnetlearn.kernels`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import KW_ONLY, dataclass

import torch

from . import validation as V
from .kernels import F64, _as2d, _targets


def _check_ridge(ridge, name="ridge"):
    return V.real(name, ridge, lo=0)


@dataclass
class KernelRidge:
    """Kernel ridge regression (eq 3.1–3.2): (K + λI)a = Y − ȳ, prediction
    𝔎(x) = ȳ + Σ_n K(x, x_n)a_n. The unpenalised mean ȳ (``center=True``)
    makes λ → ∞ predict the mean of the labels and λ → 0 interpolate them;
    ``center=False`` is the plain form (a network without an output bias)."""

    ridge: float
    _: KW_ONLY
    center: bool = True
    coef: torch.Tensor | None = None
    y_mean: torch.Tensor | None = None

    def fit(self, K, Y) -> KernelRidge:
        K, Y = _check_gram(K, Y)
        center = V.boolean("center", self.center)
        self.y_mean = Y.mean(0) if center else torch.zeros(Y.shape[1], dtype=F64, device=Y.device)
        self.coef = krr_fit(K, Y - self.y_mean, self.ridge)
        return self

    def predict(self, K_test) -> torch.Tensor:
        if self.coef is None:
            raise ValueError("call fit(K, Y) before predict")
        K_test = _as2d(K_test, "K_test")
        if K_test.shape[1] != self.coef.shape[0]:
            raise ValueError(f"K_test must be (n_test, N={self.coef.shape[0]}), got {tuple(K_test.shape)}")
        return self.y_mean + K_test @ self.coef


def _check_gram(K, Y):
    K = _as2d(K, "K")
    if K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (N, N) Gram matrix, got {tuple(K.shape)}")
    return K, _targets(Y, K.shape[0])


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
    ridge = _check_ridge(ridge)
    K, Y = _check_gram(K, Y)
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


def krr_predict(K_test: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
    """𝔎(x) = Σ_n K(x, x_n) a_n (eq 3.1), without a mean term; K_test (n_test, N), coef (N,) or (N, k)."""
    K_test = _as2d(K_test, "K_test")
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

    The one regularisation rule shared by :func:`krr_fit`/:class:`KernelRidge`,
    :func:`ridge_path`, :func:`feature_ridge` and the exact network solutions
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


def _eig_path(K, Y, K_tests, lams):
    """Ridge-path predictions for several test Gram matrices from one eigendecomposition."""
    lam, Q = torch.linalg.eigh(K)
    lams = effective_ridges(lam, lams)
    lam = lam.clamp_min(0)  # round-off below zero
    QtY = Q.T @ Y
    outs = []
    for Kt in K_tests:
        KQ = Kt @ Q
        outs.append(torch.stack([KQ @ (QtY / (lam + r)[:, None]) for r in lams]))
    return outs


def _primal_path(Phi, Y, Phi_tests, lams):
    """Ridge path over explicit features: w(λ) = (ΦᵀΦ + λI)⁻¹ΦᵀY from one eigendecomposition of ΦᵀΦ."""
    lam, Q = torch.linalg.eigh(Phi.T @ Phi)
    lams = effective_ridges(lam, lams, what="ΦᵀΦ")
    lam = lam.clamp_min(0)
    QtPY = Q.T @ (Phi.T @ Y)
    ws = [Q @ (QtPY / (lam + r)[:, None]) for r in lams]
    return [torch.stack([Pt @ w for w in ws]) for Pt in Phi_tests]


def ridge_path(K: torch.Tensor, Y: torch.Tensor, K_test: torch.Tensor, ridges, *, center: bool = True) -> torch.Tensor:
    """Predictions on the test points for every ridge from one
    eigendecomposition K = QΛQᵀ: a(λ) = Q diag(1/(Λ + λ)) QᵀY. Returns
    (R, n_test, k), with the same mean handling as :class:`KernelRidge`.
    Eigenvalues below zero (round-off) are clipped at 0."""
    ridges = V.reals("ridges", ridges, lo=0)
    center = V.boolean("center", center)
    K, Y = _check_gram(K, Y)
    K_test = _as2d(K_test, "K_test")
    if K_test.shape[1] != K.shape[0]:
        raise ValueError(f"K_test must be (n_test, N={K.shape[0]}), got {tuple(K_test.shape)}")
    y_mean = Y.mean(0) if center else torch.zeros(Y.shape[1], dtype=F64, device=Y.device)
    return y_mean + _eig_path(K, Y - y_mean, [K_test], ridges)[0]


def feature_ridge(Phi: torch.Tensor, Y: torch.Tensor, Phi_test: torch.Tensor, ridge: float, *,
                  center: bool = True) -> torch.Tensor:
    """Linear regression over an explicit feature map (eq 3.3) with ridge λ:
    w = (ΦᵀΦ + λI)⁻¹Φᵀ(Y − ȳ), predictions ȳ + Φ_test·w — the primal form of
    :class:`KernelRidge` with K = ΦΦᵀ (used when there are fewer features than samples)."""
    ridge = _check_ridge(ridge)
    center = V.boolean("center", center)
    Phi, Phi_test = _as2d(Phi, "Phi"), _as2d(Phi_test, "Phi_test")
    if Phi.shape[1] != Phi_test.shape[1]:
        raise ValueError(f"Phi and Phi_test must have the same number of features; got {tuple(Phi.shape)}, "
                         f"{tuple(Phi_test.shape)}")
    Y = _targets(Y, Phi.shape[0])
    if Phi.shape[1] > Phi.shape[0]:
        return KernelRidge(ridge, center=center).fit(Phi @ Phi.T, Y).predict(Phi_test @ Phi.T)
    y_mean = Y.mean(0) if center else torch.zeros(Y.shape[1], dtype=F64, device=Y.device)
    w = krr_fit(Phi.T @ Phi, Phi.T @ (Y - y_mean), ridge)
    return y_mean + Phi_test @ w


@dataclass
class FeatureRidge:
    """:func:`feature_ridge` with the fit/predict interface of :class:`KernelRidge`:
    ``FeatureRidge(λ).fit(Φ, Y).predict(Φ_test)`` (eq 3.3)."""

    ridge: float
    _: KW_ONLY
    center: bool = True
    _train: tuple | None = None

    def fit(self, Phi, Y) -> FeatureRidge:
        Phi = _as2d(Phi, "Phi")
        self._train = (Phi, _targets(Y, Phi.shape[0]))
        return self

    def predict(self, Phi_test) -> torch.Tensor:
        if self._train is None:
            raise ValueError("call fit(Phi, Y) before predict")
        return feature_ridge(*self._train, Phi_test, self.ridge, center=self.center)
