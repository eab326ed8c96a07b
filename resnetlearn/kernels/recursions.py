"""The infinite-width recursions of the networks' kernels: the arc-cosine recursion of a ReLU network in the
NTK parameterisation, one function per architecture that has a limit (:data:`RECURSIONS`), and why the one
without has none (:data:`NO_LIMIT`).

Each recursion maps the first layer's covariance Σ₁ = Θ₁ (rows × columns) and the inputs' variances q_a (rows),
q_b (columns) to (NNGP, NTK), with sw = σ_w² and sb = σ_b²: a ReLU then a dense layer map (Σ, Θ) to
Σ' = σ_w²κ₁(Σ) + σ_b², Θ' = Σ' + σ_w²κ₀(Σ)·Θ, the output layer (no bias) to (σ_w²κ₁(Σ), σ_w²κ₁(Σ) + σ_w²κ₀(Σ)·Θ),
with the arc-cosine moments κ₁, κ₀ of :func:`relu_moments`. :func:`resnetlearn.kernels.infinite_width` runs
them on inputs; the layer graphs they follow are :data:`resnetlearn.learners.networks.ARCHITECTURES`'.
"""

from __future__ import annotations

import math

import torch

__all__ = ["RECURSIONS", "NO_LIMIT", "relu_moments"]


def relu_moments(S, qa, qb):
    """The arc-cosine moments κ₁ = E[σ(u)σ(v)] and κ₀ = E[σ'(u)σ'(v)] of the ReLU σ, (u, v) Gaussian.

    κ₁ = √(qa·qb)(sin θ + (π − θ)cos θ)/2π, κ₀ = (π − θ)/2π, cos θ = S/√(qa·qb). A zero variance (an input 0 with
    σ_b² = 0) gives κ₁ = 0, κ₀ = 1/2.

    Parameters
    ----------
    S : torch.Tensor
        The covariances of u (rows) and v (columns), (N1, N2).
    qa : torch.Tensor
        The variances of u, (N1,).
    qb : torch.Tensor
        The variances of v, (N2,).

    Returns
    -------
    k1 : torch.Tensor
        κ₁, (N1, N2).
    k0 : torch.Tensor
        κ₀, (N1, N2).
    """
    norm = torch.sqrt(qa[:, None] * qb[None, :])
    cos = torch.where(norm > 0, S / norm.clamp_min(1e-300), torch.ones_like(S)).clamp_(-1.0, 1.0)
    theta = torch.arccos(cos)
    k0 = (math.pi - theta) / (2 * math.pi)
    k1 = (torch.sin(theta) + (math.pi - theta) * cos) * norm / (2 * math.pi)
    return k1, k0


def _relu_dense(S, T, qa, qb, *, sw, sb):
    """A ReLU then a dense layer: (Σ, Θ, q) → (σ_w²κ₁ + σ_b², Σ' + σ_w²κ₀Θ, σ_w²q/2 + σ_b²)."""
    k1, k0 = relu_moments(S, qa, qb)
    S2 = sw * k1 + sb
    return S2, S2 + sw * k0 * T, sw * qa / 2 + sb, sw * qb / 2 + sb, k1, k0


def _inf_2layer(S1, qa, qb, *, sw, sb):
    k1, k0 = relu_moments(S1, qa, qb)
    nngp = sw * k1  # output layer: no bias
    return nngp, nngp + sw * k0 * S1


def _inf_3layer(S1, qa, qb, *, sw, sb):
    S2, T2, q2a, q2b, _, _ = _relu_dense(S1, S1, qa, qb, sw=sw, sb=sb)
    k1, k0 = relu_moments(S2, q2a, q2b)
    nngp = sw * k1
    return nngp, nngp + sw * k0 * T2


def _inf_eq21(S1, qa, qb, *, sw, sb):
    # out = σ_w/√m·A(a1 + a2): NNGP = σ_w²(κ₁(Σ₁) + κ₁(Σ₂) + μ₁μ₂' + μ₂μ₁'), μ = E σ(h) = √(q/2π)
    # (ReLU outputs are not centred, so the independent branches are not orthogonal);
    # NTK = NNGP + σ_w²κ₀(Σ₁)Θ₁ + σ_w²κ₀(Σ₂)Θ₂ (the gradient cross terms vanish at infinite width)
    S2, T2, q2a, q2b, k1a, k0a = _relu_dense(S1, S1, qa, qb, sw=sw, sb=sb)
    k1b, k0b = relu_moments(S2, q2a, q2b)
    mu1a, mu1b = torch.sqrt(qa / (2 * math.pi)), torch.sqrt(qb / (2 * math.pi))
    mu2a, mu2b = torch.sqrt(q2a / (2 * math.pi)), torch.sqrt(q2b / (2 * math.pi))
    nngp = sw * (k1a + k1b + mu1a[:, None] * mu2b[None, :] + mu2a[:, None] * mu1b[None, :])
    return nngp, nngp + sw * k0a * S1 + sw * k0b * T2


RECURSIONS = {"3resnet_eq21": _inf_eq21, "3layer": _inf_3layer, "2layer": _inf_2layer}
"""Each architecture with an infinite-width limit → its recursion (Σ₁, q_a, q_b, *, sw, sb) → (NNGP, NTK)."""

NO_LIMIT = {
    "3resnet": "no infinite-width kernel is named after the §6 ResNet. Whether its NTK settles depends on "
               "the scaling (see ntk_spread): with fan-in scaled weights out₁ = A·σ(h₁) has k = O(1) random "
               "coordinates of order 1 that feed the second block, so its NTK keeps a seed-to-seed spread "
               "at any width; under §8.1's N(0, 1/m) entries out₁ is O(1/√m) and the spread shrinks like "
               "1/√m. ntk_inf:3resnet_eq21 is the limit of eq 2.1 as written",
}
"""Why an architecture has no limit here, where a kernel asked for on it is refused with the reason."""
