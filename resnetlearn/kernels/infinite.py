"""The infinite-width limits (NNGP, NTK) of ``2layer``, ``3layer`` and ``3resnet_eq21`` (the residual network of
eq 2.1 *as written*) in the NTK parameterisation with weight variance σ_w² and bias variance σ_b², by the
arc-cosine recursion of its architecture (:data:`resnetlearn.kernels.recursions.RECURSIONS`). No infinite-width
kernel is named after the §6 ResNet the experiments train (``3resnet``: shared A, bottleneck V with k columns); see
:func:`resnetlearn.kernels.ntk_spread`."""

from __future__ import annotations

import torch

from ..learners import networks
from ..validation import Interval, validate_params
from .checks import F64, GRAMS, pair
from .initial_network import SIGMA_B2, SIGMA_W2, KernelArch, Parameterization
from .recursions import RECURSIONS


def infinite_archs() -> tuple[str, ...]:
    """The architectures that have an infinite-width limit here.

    Those with a recursion in :data:`~resnetlearn.kernels.recursions.RECURSIONS` (not the §6 ``3resnet``, see
    :func:`~resnetlearn.kernels.ntk_spread`), read from :data:`resnetlearn.learners.networks.ARCHITECTURES` at each
    call.

    Returns
    -------
    tuple of str
        Their names.
    """
    return tuple(n for n in reversed(networks.ARCHITECTURES) if n in RECURSIONS)


@validate_params({**GRAMS, "arch": KernelArch(infinite_archs, "infinite-width"), "sigma_w2": SIGMA_W2,
                  "sigma_b2": SIGMA_B2, "block": Interval(int, 1)})
def infinite_width(X1, X2=None, arch: str = "2layer", *, sigma_w2: float = 1.0, sigma_b2: float = 1.0,
                   block: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """(NNGP, NTK) of an infinitely wide ReLU network with one output.

    NTK parameterisation: weights N(0, 1) multiplied by σ_w/√fan_in, biases N(0, 1) multiplied by σ_b (no output
    bias). The first layer gives Σ₁ = Θ₁ = σ_w²·x·x'/d + σ_b²; a ReLU then a dense layer map (Σ, Θ) to
    Σ' = σ_w²κ₁(Σ) + σ_b², Θ' = Σ' + σ_w²κ₀(Σ)·Θ (κ: the ReLU moments,
    :func:`~resnetlearn.kernels.recursions.relu_moments`); the output layer to (σ_w²κ₁(Σ), σ_w²κ₁(Σ) + σ_w²κ₀(Σ)·Θ).

    ``3resnet_eq21`` is the limit of eq 2.1 as written, out = A(σ(h₁) + σ(h₂)), h₂ = Uσ(h₁) + b₂ with U m×m: the sum
    of the 2layer branch's and the 3layer branch's kernels plus the cross term of the branches' means,
    σ_w²(μ₁(x)μ₂(x') + μ₂(x)μ₁(x')) with μ(x) = E σ(h) = √(Σ(x,x)/2π). No limit is computed here for the §6
    ``3resnet`` the experiments train: in this parameterisation (fan-in) its empirical NTK keeps a seed-to-seed spread
    at any width (:func:`~resnetlearn.kernels.ntk_spread`).

    Parameters
    ----------
    X1 : torch.Tensor or array_like
        The first inputs, (N1, d).
    X2 : torch.Tensor, array_like or None, default None
        The second inputs, (N2, d) with the same d; None: X1 itself.
    arch : str, default "2layer"
        The architecture, one of :func:`infinite_archs`.
    sigma_w2 : float, default 1.0
        σ_w², the weight variance, > 0 (keyword-only, as the parameters below).
    sigma_b2 : float, default 1.0
        σ_b², the bias variance, >= 0.
    block : int, default 128
        Rows of X1 processed at once, >= 1 (memory only; the values do not depend on it).

    Returns
    -------
    nngp : torch.Tensor
        The NNGP kernel, (N1, N2), float64.
    ntk : torch.Tensor
        The NTK, (N1, N2), float64.
    """
    scaling = Parameterization("ntk", sigma_w2=sigma_w2, sigma_b2=sigma_b2)
    sw, sb = scaling.sigma_w2, scaling.sigma_b2
    X1, X2 = pair(X1, X2)
    d = X1.shape[1]
    qb = sw * (X2**2).sum(1) / d + sb
    nngp = torch.empty(X1.shape[0], X2.shape[0], dtype=F64, device=X1.device)
    ntk_ = torch.empty_like(nngp)
    for s in range(0, X1.shape[0], block):
        x = X1[s:s + block]
        S1 = sw * (x @ X2.T) / d + sb
        nngp[s:s + block], ntk_[s:s + block] = RECURSIONS[arch](S1, sw * (x**2).sum(1) / d + sb, qb, sw=sw, sb=sb)
    return nngp, ntk_
