"""The conjugate kernel ⟨φ(x), φ(x')⟩ of a network at initialisation (arXiv v3 §8.1 "last"; Daniely's conjugate
kernel [12]), φ the last hidden representation the readout acts on (:func:`features`): training only the
readout (mode ``last``) is exactly this kernel's ridge regression."""

from __future__ import annotations

import torch

from ..validation import validate_params
from .checks import GRAMS, MATRIX, pair
from .initial_network import (
    NETWORK,
    PARAMETERIZATION,
    PARAMS,
    KernelArch,
    Parameterization,
    draw_network,
    forward,
    multipliers,
    network_archs,
    single_model,
)


@validate_params({"arch": KernelArch(network_archs, "features"), "params": PARAMS, "X": MATRIX,
                  "parameterization": PARAMETERIZATION})
def features(arch: str, params: dict, X, *, parameterization: str | Parameterization = "standard") -> torch.Tensor:
    """φ(x), the representation the readout A acts on, out = A·φ (one model).

    2layer σ(h₁); 3layer σ(h₂); 3resnet_eq21 σ(h₁) + σ(Uσ(h₁) + b₂) (eq 2.1).
    For the §6 ``3resnet`` the readout also feeds the second block
    (out₁ = A·σ(h₁) enters V), so φ is taken with that inner A frozen at the
    given (initial) A₀: φ₀ = σ(h₁) + σ(V·A₀·σ(h₁) + b₂). Training only a
    readout on φ₀ (mode ``last``) is then regression with the conjugate
    kernel φ₀φ₀ᵀ; at A = A₀ the network's output is A₀·φ₀. ``parameterization`` as in
    :func:`~resnetlearn.kernels.ntk`.
    """
    p = single_model(params, arch, X.shape[1])
    return forward(arch, p, X, multipliers(arch, p, parameterization))["phi"]


@validate_params({**GRAMS, "arch": KernelArch(network_archs, "conjugate"), **NETWORK})
def conjugate(X1, X2=None, arch: str = "2layer", *, m: int | None = None, k: int | None = None,
              seed: int | None = None, init: str | None = None, params: dict | None = None) -> torch.Tensor:
    """The conjugate kernel ⟨φ(x), φ(x')⟩ of a network at initialisation
    (arXiv v3 §8.1 "last", Daniely's conjugate kernel [12]); φ is
    :func:`features`. ``params`` (one model) or (m = 1000, k = 1, seed = 0,
    init = "paper") define the network; for the §6 ResNet φ depends on A₀,
    hence on k."""
    X1, X2 = pair(X1, X2)
    p = draw_network(arch, X1, params, m=m, k=k, seed=seed, init=init,
                     n_points=X1.shape[0] + (0 if X2 is X1 else X2.shape[0]))
    f1 = features(arch, p, X1)
    f2 = f1 if X2 is X1 else features(arch, p, X2)
    return f1 @ f2.T
