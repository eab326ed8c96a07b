"""Kernel methods, done exactly (ResNet paper §3.1–3.2, §7).

A kernel method predicts 𝔎(x) = Σ_n K(x, x_n)·a_n (eq 3.1) with the
coefficients of regularised least squares (eq 3.2); with a ridge λ this is
kernel ridge regression, (K + λI)·a = Y. Linear regression over an explicit
feature map φ (eq 3.3) is the same with K = φφᵀ.

Kernels (all Gram matrices in float64):

* ``gaussian`` — exp(−‖x − x'‖² / (2h²));
* ``arcsine`` — arcsin(⟨x, x'⟩ / (‖x‖‖x'‖)) as §3.1 writes it. It is an odd
  function of the cosine, so on the hypercube it has no even-degree part and
  cannot fit the degree-2 F at all. ``arcsine_bias`` appends a constant
  coordinate ‖x‖ (cosine (1 + ρ)/2), which restores every degree;
* ``conjugate`` — ⟨φ(x), φ(x')⟩ for the last hidden layer φ of a random
  network at initialisation: training only A (mode ``last``) is exactly this;
* ``ntk`` — the empirical neural tangent kernel of a finite network at
  initialisation, ⟨∇_θ f_c(x), ∇_θ f_c(x')⟩, by per-layer contractions of
  activations and back-propagated signals (no N×k×P Jacobian);
* ``nngp_inf``/``ntk_inf`` — their infinite-width limits for ReLU networks
  in the NTK parameterisation (weights N(0,1), layer outputs scaled by
  1/√fan_in, biases N(0,1)), by the arc-cosine recursion.

On the hypercube all these inner-product kernels act degree by degree on
parities, which is why none of them can learn the degree-8 composite signal
of the §8.1 instance from a few thousand samples (see :func:`parity_counts`).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import torch

from . import networks

F64 = torch.float64
KERNELS = ("gaussian", "arcsine", "arcsine_bias", "conjugate", "ntk", "nngp_inf", "ntk_inf")
INF_ARCHS = ("2layer", "3layer", "3resnet_eq21")
NETWORK_ARCHS = ("3resnet", "3resnet_eq21", "3layer", "2layer")
"""Architectures with conjugate and empirical NTK kernels here (not §8.2's 2layer_signs)."""
MEMORY_FRACTION = 0.5
"""Refuse Gram matrices that would take more than this share of the RAM."""


# ----------------------------------------------------------------- checks
def _as2d(X, name="X") -> torch.Tensor:
    X = torch.as_tensor(X)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-d (N, d) tensor, got shape {tuple(X.shape)}")
    return X.to(F64)


def _pair(X1, X2):
    X1 = _as2d(X1, "X1")
    X2 = X1 if X2 is None else _as2d(X2, "X2")
    if X1.shape[1] != X2.shape[1]:
        raise ValueError(f"X1 and X2 must have the same dimension d; got {X1.shape[1]} and {X2.shape[1]}")
    check_memory(X1.shape[0], X2.shape[0])
    return X1, X2


def _total_ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return None


def check_memory(n1: int, n2: int, copies: int = 3) -> None:
    """Raise a ValueError (instead of crashing) when ``copies`` float64
    matrices of n1×n2 would not fit in ``MEMORY_FRACTION`` of the RAM."""
    need = 8 * n1 * n2 * copies
    ram = _total_ram()
    if ram is not None and need > MEMORY_FRACTION * ram:
        raise ValueError(
            f"a {n1}×{n2} kernel computation needs about {need / 2**30:.1f} GiB "
            f"({copies} float64 copies) but this machine has {ram / 2**30:.1f} GiB; "
            "use fewer samples, or a GPU machine with more memory"
        )


# ----------------------------------------------------------------- classical kernels
def gaussian(X1, X2=None, h: float = 1.0) -> torch.Tensor:
    """exp(−‖x − x'‖²/(2h²)) (§3.1's Gaussian kernel), bandwidth h > 0."""
    if not (isinstance(h, (int, float)) and h > 0 and math.isfinite(h)):
        raise ValueError(f"bandwidth h must be a finite number > 0, got {h!r}")
    X1, X2 = _pair(X1, X2)
    sq = (X1**2).sum(1)[:, None] + (X2**2).sum(1)[None, :] - 2 * X1 @ X2.T
    return torch.exp(-sq.clamp_min_(0) / (2 * h * h))


def _cosine(X1, X2):
    n1, n2 = X1.norm(dim=1), X2.norm(dim=1)
    if (n1 == 0).any() or (n2 == 0).any():
        raise ValueError("the arcsine kernel needs non-zero inputs")
    return ((X1 @ X2.T) / n1[:, None] / n2[None, :]).clamp_(-1, 1)


def arcsine(X1, X2=None, bias: bool = False) -> torch.Tensor:
    """arcsin(cos∠(x, x')) (§3.1); ``bias=True`` uses (x, ‖x‖), i.e. arcsin((1 + cos)/2)."""
    X1, X2 = _pair(X1, X2)
    c = _cosine(X1, X2)
    return torch.asin((1 + c) / 2 if bias else c)


# ----------------------------------------------------------------- network kernels
def _check_kernel_arch(arch: str) -> None:
    if arch not in NETWORK_ARCHS:
        raise ValueError(f"network kernels are available for {NETWORK_ARCHS}, got {arch!r}")


def _single(params: dict) -> dict:
    """Parameters of one model (drop a leading model axis of size 1)."""
    out = {}
    for n, v in params.items():
        v = torch.as_tensor(v).to(F64)
        if v.ndim == (1 if n.startswith("b") else 2) + 1:
            if v.shape[0] != 1:
                raise ValueError("pass the parameters of a single model (model axis of size 1)")
            v = v[0]
        out[n] = v
    return out


def _mults(arch, p, parameterization):
    """Per-layer output multipliers: 1 (standard, as the paper's networks)
    or 1/√fan_in for weights and 1 for biases (NTK parameterisation)."""
    if parameterization == "standard":
        return {n: 1.0 for n in p}
    if parameterization != "ntk":
        raise ValueError(f"parameterization must be 'standard' or 'ntk', got {parameterization!r}")
    return {n: (1.0 if n.startswith("b") else p[n].shape[1] ** -0.5) for n in p}


def _hidden(arch, p, X, mult):
    """Pre-activations and activations of the hidden layers (one model)."""
    h1 = mult["W"] * X @ p["W"].T + mult["b1"] * p["b1"]
    a1 = torch.relu(h1)
    mA = mult["A"]
    out1 = h2 = a2 = None
    if arch == "3layer" or arch == "3resnet_eq21":
        h2 = mult["V"] * a1 @ p["V"].T + mult["b2"] * p["b2"]
        a2 = torch.relu(h2)
    elif arch == "3resnet":
        out1 = mA * a1 @ p["A"].T
        h2 = mult["V"] * out1 @ p["V"].T + mult["b2"] * p["b2"]
        a2 = torch.relu(h2)
    return h1, a1, h2, a2, out1


def features(arch: str, params: dict, X, parameterization: str = "standard") -> torch.Tensor:
    """φ(x) with out(x) = A·φ(x): the last hidden representation (for the
    ResNets, the sum of the two blocks' activations, since out = A(σ(h₁) + σ(h₂)))."""
    _check_kernel_arch(arch)
    p = _single(params)
    X = _as2d(X)
    _, a1, _, a2, _ = _hidden(arch, p, X, _mults(arch, p, parameterization))
    if arch == "2layer":
        return a1
    if arch == "3layer":
        return a2
    return a1 + a2


def conjugate(X1, X2=None, arch: str = "2layer", m: int = 1000, k: int = 1, seed: int = 0,
              init: str = "paper", params: dict | None = None) -> torch.Tensor:
    """The conjugate kernel ⟨φ(x), φ(x')⟩ of a random network at
    initialisation (the kernel of training only A, arXiv v3 §8.1 "last").
    For the §6 ResNet φ depends on A through out₁, hence on k."""
    X1, X2 = _pair(X1, X2)
    if params is None:
        params = networks.init_params(arch, X1.shape[1], k, m, [seed], init, dtype=F64)
    f1 = features(arch, params, X1)
    f2 = f1 if X2 is X1 else features(arch, params, X2)
    return f1 @ f2.T


def _uses(arch, p, X, mult):
    """For every parameter, its uses u as (δ_u, input_u, multiplier, has_bias):
    ∂f_c/∂θ = Σ_u mult·δ_{u,c} ⊗ input_u, with δ of shape (k, N, fan_out)."""
    h1, a1, h2, a2, out1 = _hidden(arch, p, X, mult)
    A, mA = p["A"], mult["A"]
    k, N = A.shape[0], X.shape[0]
    eye = torch.eye(k, dtype=F64)[:, None, :].expand(k, N, k)  # e_c for every sample
    d1 = (h1 > 0).to(F64)
    if arch == "2layer":
        delta1 = mA * A[:, None, :] * d1  # (k, N, m)
        return {"A": [(eye, a1)], "W": [(delta1, X)]}
    d2 = (h2 > 0).to(F64)
    delta2 = mA * A[:, None, :] * d2
    if arch in ("3layer", "3resnet_eq21"):
        back = mult["V"] * delta2 @ p["V"]  # signal reaching a1 through the second layer
        if arch == "3resnet_eq21":
            back = back + mA * A[:, None, :]  # and through the skip connection (out = A(a1 + a2))
        delta1 = back * d1
        a_top = a2 if arch == "3layer" else a1 + a2
        return {"A": [(eye, a_top)], "V": [(delta2, a1)], "W": [(delta1, X)]}
    # §6 ResNet: out = out1 + A·a2, out1 = A·a1, h2 = V·out1 + b2 (A appears twice)
    g = eye + mult["V"] * delta2 @ p["V"]  # ∂f_c/∂out1, (k, N, k)
    delta1 = (mA * g @ A) * d1
    return {"A": [(g, a1), (eye, a2)], "V": [(delta2, out1)], "W": [(delta1, X)]}


_BIAS_OF = {"W": "b1", "V": "b2"}


def ntk(X1, X2=None, arch: str = "2layer", params: dict | None = None, m: int = 1000, k: int = 1,
        seed: int = 0, init: str = "paper", parameterization: str = "standard",
        per_output: bool = False) -> torch.Tensor:
    """Empirical NTK Θ_c(x, x') = ⟨∇_θ f_c(x), ∇_θ f_c(x')⟩ at initialisation.

    Per layer, ∂f_c/∂W = δ_c ⊗ a (a: the layer's input, δ_c: the signal
    back-propagated from output c), so each layer adds
    (δ_c·δ_c')(a·a' + [bias]) — contractions of N×m matrices only.
    Returns the output-averaged kernel (1/k)Σ_c Θ_c, or (k, N1, N2) with
    ``per_output=True``. ``params`` (one model) or (m, k, seed, init) define
    the network; ``parameterization="ntk"`` scales layers by 1/√fan_in.
    """
    X1, X2 = _pair(X1, X2)
    _check_kernel_arch(arch)
    if params is None:
        params = networks.init_params(arch, X1.shape[1], k, m, [seed], init, dtype=F64)
    p = _single(params)
    if p["W"].shape[1] != X1.shape[1]:
        raise ValueError(f"inputs have d = {X1.shape[1]} but the network expects d = {p['W'].shape[1]}")
    mult = _mults(arch, p, parameterization)
    U1 = _uses(arch, p, X1, mult)
    U2 = U1 if X2 is X1 else _uses(arch, p, X2, mult)
    k = p["A"].shape[0]
    out = torch.zeros((k, X1.shape[0], X2.shape[0]) if per_output else (X1.shape[0], X2.shape[0]), dtype=F64)
    for name, uses1 in U1.items():
        c2 = mult[name] ** 2
        bias = _BIAS_OF.get(name)
        b2 = mult[bias] ** 2 if bias else 0.0
        for d1_, in1 in uses1:
            for d2_, in2 in U2[name]:
                inner = c2 * (in1 @ in2.T) + b2  # weight part and bias part of this layer
                if per_output:
                    out += torch.bmm(d1_, d2_.transpose(1, 2)) * inner
                else:
                    D1 = d1_.permute(1, 0, 2).reshape(X1.shape[0], -1)
                    D2 = d2_.permute(1, 0, 2).reshape(X2.shape[0], -1)
                    out += (D1 @ D2.T) * inner / k
    return out


# ----------------------------------------------------------------- infinite width
def _relu_moments(S, q1, q2):
    """κ₁ = E[σ(u)σ(v)], κ₀ = E[σ'(u)σ'(v)] for (u, v) Gaussian with
    variances q1 (rows), q2 (columns) and covariance S (arc-cosine kernels).
    Computed in place on temporaries of S's size (this is the hot loop of the
    infinite-width Gram matrices)."""
    norm = torch.sqrt(q1[:, None] * q2[None, :])
    cos = torch.div(S, norm).clamp_(-1.0, 1.0)
    theta = torch.arccos(cos)
    k0 = torch.sub(math.pi, theta).div_(2 * math.pi)  # (π − θ)/2π
    k1 = torch.sin(theta).add_(theta.neg_().add_(math.pi).mul_(cos)).mul_(norm).div_(2 * math.pi)
    return k1, k0


def infinite_width(X1, X2=None, arch: str = "2layer", block: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """(NNGP, NTK) of an infinitely wide ReLU network, one output.

    NTK parameterisation, weights and biases N(0, 1): the first layer gives
    Σ₁ = x·x'/d + 1 = Θ₁; a ReLU then a dense layer map (Σ, Θ) to
    (κ₁(Σ) + 1, κ₁(Σ) + 1 + κ₀(Σ)·Θ); the output layer (no bias) to
    (κ₁(Σ), κ₁(Σ) + κ₀(Σ)·Θ).

    ``3resnet_eq21`` (out = A(σ(h₁) + σ(h₂))/√m, eq 2.1): its kernel is the
    sum of the 2layer branch's and the 3layer branch's kernels plus the
    cross term of the branches' means, μ₁(x)μ₂(x') + μ₂(x)μ₁(x') with
    μ(x) = E σ(h) = √(Σ(x,x)/2π) — ReLU outputs are not centred, so the
    branches are independent but not orthogonal. The gradient cross terms
    vanish at infinite width. Rows are processed in blocks of ``block``.
    """
    if arch not in INF_ARCHS:
        raise ValueError(f"infinite-width kernels exist here for {INF_ARCHS}, got {arch!r}")
    X1, X2 = _pair(X1, X2)
    nngp = torch.empty(X1.shape[0], X2.shape[0], dtype=F64)
    ntk = torch.empty_like(nngp)
    for s in range(0, X1.shape[0], block):
        a, b = _infinite_block(X1[s:s + block], X2, arch)
        nngp[s:s + block], ntk[s:s + block] = a, b
    return nngp, ntk


def _infinite_block(X1, X2, arch):
    d = X1.shape[1]
    S1 = (X1 @ X2.T).div_(d).add_(1)
    q1a, q1b = (X1**2).sum(1) / d + 1, (X2**2).sum(1) / d + 1
    k1, k0 = _relu_moments(S1, q1a, q1b)
    if arch == "2layer":
        return k1, k0.mul_(S1).add_(k1)
    S2 = k1 + 1
    T2 = k0.mul_(S1).add_(S2)  # Θ₂ = Σ₂ + κ₀(Σ₁)Θ₁ (k0 is not needed afterwards for the 3layer)
    q2a, q2b = q1a / 2 + 1, q1b / 2 + 1  # κ₁(q, q) = q/2
    k1b, k0b = _relu_moments(S2, q2a, q2b)
    if arch == "3layer":
        return k1b, k0b.mul_(T2).add_(k1b)
    # residual: NNGP = κ₁(Σ₁) + κ₁(Σ₂) + mean cross terms; NTK = NNGP + κ₀(Σ₁)Θ₁ + κ₀(Σ₂)Θ₂,
    # and κ₀(Σ₁)Θ₁ = Θ₂ − Σ₂ = T2 − S2
    mu1a, mu1b = torch.sqrt(q1a / (2 * math.pi)), torch.sqrt(q1b / (2 * math.pi))
    mu2a, mu2b = torch.sqrt(q2a / (2 * math.pi)), torch.sqrt(q2b / (2 * math.pi))
    nngp = k1.add_(k1b).add_(mu1a[:, None] * mu2b[None, :]).add_(mu2a[:, None] * mu1b[None, :])
    ntk = k0b.mul_(T2).add_(T2).sub_(S2).add_(nngp)
    return nngp, ntk


# ----------------------------------------------------------------- registry
def kernel(name: str, X1, X2=None, **kw) -> torch.Tensor:
    """Gram matrix of a kernel by name (one of :data:`KERNELS`)."""
    if name == "gaussian":
        return gaussian(X1, X2, **kw)
    if name == "arcsine":
        return arcsine(X1, X2)
    if name == "arcsine_bias":
        return arcsine(X1, X2, bias=True)
    if name == "conjugate":
        return conjugate(X1, X2, **kw)
    if name == "ntk":
        return ntk(X1, X2, **kw)
    if name == "nngp_inf":
        return infinite_width(X1, X2, **kw)[0]
    if name == "ntk_inf":
        return infinite_width(X1, X2, **kw)[1]
    raise ValueError(f"unknown kernel {name!r}; allowed: {KERNELS}")


# ----------------------------------------------------------------- ridge regression
def _check_ridge(ridge):
    if not (isinstance(ridge, (int, float)) and ridge >= 0 and math.isfinite(ridge)):
        raise ValueError(f"ridge must be a finite number >= 0, got {ridge!r}")
    return float(ridge)


@dataclass
class KernelRidge:
    """Kernel ridge regression (eq 3.1–3.2): (K + λI)a = Y − ȳ, prediction
    𝔎(x) = ȳ + Σ_n K(x, x_n)a_n. The unpenalised mean ȳ (``center=True``)
    makes λ → ∞ predict the mean of the labels and λ → 0 interpolate them;
    ``center=False`` is the plain form (a network without an output bias)."""

    ridge: float
    center: bool = True
    coef: torch.Tensor | None = None
    y_mean: torch.Tensor | None = None

    def fit(self, K, Y) -> KernelRidge:
        K, Y = _check_gram(K, Y)
        self.y_mean = Y.mean(0) if self.center else torch.zeros(Y.shape[1], dtype=F64)
        self.coef = krr_fit(K, Y - self.y_mean, self.ridge)
        return self

    def predict(self, K_test) -> torch.Tensor:
        if self.coef is None:
            raise ValueError("call fit(K, Y) before predict")
        K_test = torch.as_tensor(K_test).to(F64)
        if K_test.ndim != 2 or K_test.shape[1] != self.coef.shape[0]:
            raise ValueError(f"K_test must be (n_test, N={self.coef.shape[0]}), got {tuple(K_test.shape)}")
        return self.y_mean + K_test @ self.coef


def _check_gram(K, Y):
    K, Y = torch.as_tensor(K).to(F64), torch.as_tensor(Y).to(F64)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square (N, N) Gram matrix, got {tuple(K.shape)}")
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.shape[0] != K.shape[0]:
        raise ValueError(f"Y must have N = {K.shape[0]} rows, got {Y.shape[0]}")
    return K, Y


def krr_fit(K: torch.Tensor, Y: torch.Tensor, ridge: float, max_tries: int = 8) -> torch.Tensor:
    """Coefficients a of (K + λI)a = Y (eq 3.2 with a squared-norm penalty),
    by a float64 Cholesky; if K + λI is not numerically positive definite, a
    jitter of 1e-10 × mean diagonal is added and grown ×10 per try."""
    ridge = _check_ridge(ridge)
    K, Y = _check_gram(K, Y)
    scale = float(K.diagonal().mean().abs()) or 1.0
    jitter = 0.0
    for _ in range(max_tries):
        L, info = torch.linalg.cholesky_ex(K + (ridge + jitter) * torch.eye(K.shape[0], dtype=F64))
        if int(info) == 0:
            return torch.cholesky_solve(Y, L)
        jitter = 1e-10 * scale if jitter == 0 else jitter * 10
    raise ValueError(f"K + ridge·I is not positive definite even with jitter {jitter:.2g} "
                     f"(mean diagonal {scale:.3g}); is K a valid kernel matrix? try a larger ridge")


def krr_predict(K_test: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
    """𝔎(x) = Σ_n K(x, x_n) a_n (eq 3.1), without a mean term."""
    return torch.as_tensor(K_test).to(F64) @ coef


def ridge_path(K: torch.Tensor, Y: torch.Tensor, K_test: torch.Tensor, ridges, center: bool = True) -> torch.Tensor:
    """Predictions on the test points for every ridge from one
    eigendecomposition K = QΛQᵀ: a(λ) = Q diag(1/(Λ + λ)) QᵀY. Returns
    (R, n_test, k), with the same mean handling as :class:`KernelRidge`.
    Eigenvalues below zero (round-off) are clipped at 0."""
    ridges = [_check_ridge(r) for r in ridges]
    K, Y = _check_gram(K, Y)
    K_test = torch.as_tensor(K_test).to(F64)
    if K_test.ndim != 2 or K_test.shape[1] != K.shape[0]:
        raise ValueError(f"K_test must be (n_test, N={K.shape[0]}), got {tuple(K_test.shape)}")
    y_mean = Y.mean(0) if center else torch.zeros(Y.shape[1], dtype=F64)
    Y = Y - y_mean
    lam, Q = torch.linalg.eigh(K)
    lam = lam.clamp_min(0)
    QtY = Q.T @ Y
    KQ = K_test @ Q
    out = []
    for r in ridges:
        denom = lam + r
        if (denom <= 0).any():
            raise ValueError("ridge 0 with a singular kernel matrix: use a positive ridge")
        out.append(y_mean + KQ @ (QtY / denom[:, None]))
    return torch.stack(out)


def feature_ridge(Phi: torch.Tensor, Y: torch.Tensor, Phi_test: torch.Tensor, ridge: float,
                  center: bool = True) -> torch.Tensor:
    """Linear regression over an explicit feature map (eq 3.3) with ridge λ:
    w = (ΦᵀΦ + λI)⁻¹Φᵀ(Y − ȳ), predictions ȳ + Φ_test·w — the primal form of
    :class:`KernelRidge` with K = ΦΦᵀ (used when there are fewer features than samples)."""
    ridge = _check_ridge(ridge)
    Phi, Y, Phi_test = (torch.as_tensor(t).to(F64) for t in (Phi, Y, Phi_test))
    if Phi.ndim != 2 or Phi_test.ndim != 2 or Phi.shape[1] != Phi_test.shape[1]:
        raise ValueError(f"features must be (N, P) and (n_test, P); got {tuple(Phi.shape)}, {tuple(Phi_test.shape)}")
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.shape[0] != Phi.shape[0]:
        raise ValueError(f"Y must have N = {Phi.shape[0]} rows, got {Y.shape[0]}")
    if Phi.shape[1] > Phi.shape[0]:
        return KernelRidge(ridge, center).fit(Phi @ Phi.T, Y).predict(Phi_test @ Phi.T)
    y_mean = Y.mean(0) if center else torch.zeros(Y.shape[1], dtype=F64)
    w = krr_fit(Phi.T @ Phi, Phi.T @ (Y - y_mean), ridge)
    return y_mean + Phi_test @ w


@dataclass
class FeatureRidge:
    """:func:`feature_ridge` with the fit/predict interface of :class:`KernelRidge`:
    ``FeatureRidge(λ).fit(Φ, Y).predict(Φ_test)`` (eq 3.3)."""

    ridge: float
    center: bool = True
    _train: tuple | None = None

    def fit(self, Phi, Y) -> FeatureRidge:
        self._train = (torch.as_tensor(Phi).to(F64), torch.as_tensor(Y).to(F64))
        return self

    def predict(self, Phi_test) -> torch.Tensor:
        if self._train is None:
            raise ValueError("call fit(Phi, Y) before predict")
        return feature_ridge(*self._train, Phi_test, self.ridge, self.center)


# ----------------------------------------------------------------- parity counting
def parity_counts(d: int, max_degree: int) -> list[dict]:
    """How many parity monomials χ_S of each degree |S| = j exist in d
    dimensions, and the cumulative count up to j: an inner-product kernel on
    the hypercube spreads its capacity over all of them, so fitting a degree-j
    parity takes on the order of Σ_{i≤j} C(d, i) samples (§7, Theorem 2)."""
    if not (isinstance(d, int) and d > 0):
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if not (isinstance(max_degree, int) and 0 <= max_degree <= d):
        raise ValueError(f"max_degree must be an integer in [0, d={d}], got {max_degree!r}")
    rows, total = [], 0
    for j in range(max_degree + 1):
        c = math.comb(d, j)
        total += c
        rows.append(dict(degree=j, monomials=c, up_to_degree=total))
    return rows


# ----------------------------------------------------------------- experiments (Theorem 3)
DEFAULT_KERNELS = (
    "gaussian", "arcsine", "arcsine_bias",
    "conjugate:2layer", "conjugate:3layer", "conjugate:3resnet",
    "ntk:2layer", "ntk:3layer", "ntk:3resnet",
    "nngp_inf:2layer", "ntk_inf:2layer", "ntk_inf:3layer", "ntk_inf:3resnet_eq21",
)
RELATIVE_RIDGES = (1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
"""Ridges λ as multiples of the mean diagonal of the training Gram matrix."""
BANDWIDTHS = (0.25, 0.5, 1.0, 2.0, 4.0)
"""Gaussian bandwidths as multiples of the median training distance."""


def _gram_fn(spec: str, d: int, k: int, m: int, seed: int):
    """A function (X1, X2) → Gram matrix for a kernel spec 'name' or 'name:arch'."""
    name, _, arch = spec.partition(":")
    if name not in KERNELS or name == "gaussian" and arch:
        raise ValueError(f"unknown kernel {spec!r}; allowed: {DEFAULT_KERNELS} (gaussian takes bandwidths)")
    if name in ("arcsine", "arcsine_bias"):
        return lambda A, B: kernel(name, A, B)
    if name in ("nngp_inf", "ntk_inf"):
        return lambda A, B: kernel(name, A, B, arch=arch or "2layer")
    arch = arch or "2layer"
    # the §6 ResNet's kernels depend on its k outputs (A is shared by both blocks)
    kk = k if arch == "3resnet" else 1
    params = networks.init_params(arch, d, kk, m, [seed], "paper", dtype=F64)
    if name == "conjugate":
        return lambda A, B: conjugate(A, B, arch, params=params)
    return lambda A, B: ntk(A, B, arch, params=params)


def kernel_errors(target, n_train: int, kernels=DEFAULT_KERNELS, select: str = "test",
                  val_fraction: float = 0.2, n_test: int = 2000, data_seed: int = 0, m: int = 1000,
                  kernel_seed: int = 0, ridges=RELATIVE_RIDGES, bandwidths=BANDWIDTHS,
                  progress: bool = True) -> list[dict]:
    """Best test error of kernel ridge regression for each kernel.

    Same data convention as :func:`resnetlearn.training.grid_search`
    (``n_train`` samples with ``data_seed``, ``n_test`` with ``data_seed + 1``),
    so kernels and networks see identical samples. Each kernel's ridge (and
    bandwidth) is selected by test error (as the paper) or on a held-out part
    of the training samples (``select="val"``, then refitted on it only).
    Returns one row per kernel with the selection recorded.
    """
    from tqdm.auto import tqdm

    if select not in ("test", "val"):
        raise ValueError(f"select must be one of ('test', 'val'), got {select!r}")
    train = target.sample(n_train, seed=data_seed, dtype=F64)
    test = target.sample(n_test, seed=data_seed + 1, dtype=F64)
    Xtr, Ytr, Xte, Yte = train.x, train.y, test.x, test.y
    if select == "val":
        n_fit = n_train - max(1, int(round(val_fraction * n_train)))
        Xsel, Ysel, Xtr, Ytr = Xtr[n_fit:], Ytr[n_fit:], Xtr[:n_fit], Ytr[:n_fit]
    else:
        Xsel, Ysel = Xte, Yte
    rows = []
    for spec in tqdm(list(kernels), desc=f"kernels N={n_train}", disable=not progress, leave=False):
        t0 = time.perf_counter()
        if spec == "gaussian":
            med = float(torch.cdist(Xtr[:500], Xtr[:500]).median())
            candidates = [(f"h={b:g}×median", lambda A, B, h=b * med: gaussian(A, B, h=h)) for b in bandwidths]
        else:
            candidates = [("", _gram_fn(spec, Xtr.shape[1], Ytr.shape[1], m, kernel_seed))]
        best, path = None, []
        for label, fn in candidates:
            K = fn(Xtr, Xtr)
            scale = float(K.diagonal().mean())
            lam = [r * scale for r in ridges]
            Ksel = fn(Xsel, Xtr)
            sel_err = ((ridge_path(K, Ytr, Ksel, lam) - Ysel) ** 2).sum(-1).mean(-1)
            path += [(label, ridges[j], float(sel_err[j])) for j in range(len(ridges))]
            i = int(torch.argmin(torch.nan_to_num(sel_err, nan=math.inf)))
            if best is None or sel_err[i] < best[0]:
                best = (float(sel_err[i]), label, ridges[i], lam[i], fn, K)
        _, label, rel, lam, fn, K = best
        Kte = fn(Xte, Xtr)
        pred = KernelRidge(lam).fit(K, Ytr).predict(Kte)
        rows.append(dict(kernel=spec, setting=label, ridge_rel=rel, n_train=n_train, n_fit=Xtr.shape[0],
                         test_error=float(((pred - Yte) ** 2).sum(-1).mean()), select=select,
                         n_test=n_test, data_seed=data_seed, m=m, seconds=round(time.perf_counter() - t0, 2),
                         path=path))  # (setting, ridge_rel, selection error) of every candidate
    return rows

