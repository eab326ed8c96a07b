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
    """φ(x), the representation the readout A of one model acts on, out = A·φ.

    2layer σ(h₁); 3layer σ(h₂); 3resnet_eq21 σ(h₁) + σ(Uσ(h₁) + b₂) (eq 2.1). For the §6 ``3resnet`` the readout
    also feeds the second block (out₁ = A·σ(h₁) enters V), so φ is taken with that inner A frozen at the given
    (initial) A₀: φ₀ = σ(h₁) + σ(V·A₀·σ(h₁) + b₂). Training only a readout on φ₀ (mode ``last``) is then regression
    with the conjugate kernel φ₀φ₀ᵀ; at A = A₀ the network's output is A₀·φ₀.

    Parameters
    ----------
    arch : str
        The architecture, one of :func:`~resnetlearn.kernels.network_archs`.
    params : dict of str to torch.Tensor
        The parameters of one model of ``arch`` (:func:`~resnetlearn.kernels.single_model`; a model axis of size 1
        is dropped).
    X : torch.Tensor or array_like
        The inputs, (N, d), with the d the network takes.
    parameterization : {"standard", "ntk"} or Parameterization, default "standard"
        How the parameters enter the outputs, as in :func:`~resnetlearn.kernels.ntk` (keyword-only).

    Returns
    -------
    torch.Tensor
        φ(X), (N, m), float64.
    """
    p = single_model(params, arch, X.shape[1])
    return forward(arch, p, X, multipliers(arch, p, parameterization))["phi"]


@validate_params({**GRAMS, "arch": KernelArch(network_archs, "conjugate"), **NETWORK})
def conjugate(X1, X2=None, arch: str = "2layer", *, m: int | None = None, k: int | None = None,
              seed: int | None = None, init: str | None = None, params: dict | None = None) -> torch.Tensor:
    """The conjugate kernel ⟨φ(x), φ(x')⟩ of a network at initialisation.

    This is arXiv v3 §8.1's "last" (Daniely's conjugate kernel [12]); φ is :func:`features`. The network is given by
    ``params`` or drawn from (m, k, seed, init), not both; for the §6 ResNet φ depends on A₀, hence on k.

    Parameters
    ----------
    X1 : torch.Tensor or array_like
        The first inputs, (N1, d).
    X2 : torch.Tensor, array_like or None, default None
        The second inputs, (N2, d) with the same d; None: X1 itself.
    arch : str, default "2layer"
        The architecture, one of :func:`~resnetlearn.kernels.network_archs`.
    m : int or None, default None
        The width of the network drawn, >= 1 (None: 1000; keyword-only, as every parameter below).
    k : int or None, default None
        Its number of outputs, >= 1 (None: 1).
    seed : int or None, default None
        Its seed, in [0, 2**63 - 1] (None: 0).
    init : {"paper", "fan_in", "companion", "ntk"} or None, default None
        Its initialisation (:data:`resnetlearn.learners.networks.INITS`; None: ``"paper"``, arXiv v3 §8.1).
    params : dict of str to torch.Tensor or None, default None
        The parameters of one model instead of a drawn network.

    Returns
    -------
    torch.Tensor
        The Gram matrix, (N1, N2), float64.

    Raises
    ------
    ValueError
        Both ``params`` and one of (m, k, seed, init) are given, or the network and its kernel would not fit in
        memory.
    """
    X1, X2 = pair(X1, X2)
    p = draw_network(arch, X1, params, m=m, k=k, seed=seed, init=init,
                     n_points=X1.shape[0] + (0 if X2 is X1 else X2.shape[0]))
    f1 = features(arch, p, X1)
    f2 = f1 if X2 is X1 else features(arch, p, X2)
    return f1 @ f2.T
