"""The empirical neural tangent kernel of a finite network at initialisation, ⟨∇_θ f_c(x), ∇_θ f_c'(x')⟩, by
per-layer contractions of activations and back-propagated signals (no N×k×P Jacobian), with the Jacobian
products the linearised network needs (:func:`jacobian`, :func:`vjp`, :func:`jvp`) and the kernel's
seed-to-seed spread (:func:`ntk_spread`): whether it settles depends on the scaling. With fan-in scaled
weights the §6 ResNet's keeps a spread at any width; under §8.1's N(0, 1/m) entries, what the experiments use,
its spread shrinks like 1/√m."""

from __future__ import annotations

import torch

from ..learners import networks
from ..validation import Interval, ListOf, Noted, Options, Seeds, validate_params
from .checks import F64, GRAMS, MATRIX, check_gram_memory, check_network_memory, pair
from .initial_network import (
    NETWORK,
    PARAMETERIZATION,
    PARAMETERIZATIONS,
    PARAMS,
    KernelArch,
    Parameterization,
    draw_network,
    multipliers,
    network_archs,
    signals,
    single_model,
)

OUTPUTS = ("mean", "per_output", "full")


def _ntk_parts(arch, p, X1, X2, *, mult):
    U1 = signals(arch, p, X1, mult)
    U2 = U1 if X2 is X1 else signals(arch, p, X2, mult)
    bias_of = networks.ARCHITECTURES[arch].bias_of
    for name, uses1 in U1.items():
        c2 = mult[name] ** 2
        bias = bias_of.get(name)
        b2 = mult[bias] ** 2 if bias else 0.0
        for d1_, in1 in uses1:
            for d2_, in2 in U2[name]:
                yield d1_, d2_, c2 * (in1 @ in2.T) + b2  # signals, and weight + bias part of the layer


@validate_params({**GRAMS, "arch": KernelArch(network_archs, "ntk"), **NETWORK,
                  "parameterization": PARAMETERIZATION, "outputs": Options(OUTPUTS)})
def ntk(X1, X2=None, arch: str = "2layer", *, params: dict | None = None, m: int | None = None,
        k: int | None = None, seed: int | None = None, init: str | None = None,
        parameterization: str | Parameterization = "standard", outputs: str = "mean") -> torch.Tensor:
    """Empirical NTK Θ_cc'(x, x') = ⟨∇_θ f_c(x), ∇_θ f_c'(x')⟩ at initialisation, all parameters.

    Per layer, ∂f_c/∂W = δ_c ⊗ a (a: the layer's input, δ_c: the signal back-propagated from output c), so each layer
    adds (δ_c·δ_c')(a·a' + [bias]): contractions of N×m matrices only. The network is given by ``params`` or drawn
    from (m, k, seed, init), not both.

    Parameters
    ----------
    X1 : torch.Tensor or array_like
        The first inputs, (N1, d).
    X2 : torch.Tensor, array_like or None, default None
        The second inputs, (N2, d) with the same d; None: X1 itself.
    arch : str, default "2layer"
        The architecture, one of :func:`~resnetlearn.kernels.network_archs`.
    params : dict of str to torch.Tensor or None, default None
        The parameters of one model instead of a drawn network (keyword-only, as every parameter below).
    m : int or None, default None
        The width of the network drawn, >= 1 (None: 1000).
    k : int or None, default None
        Its number of outputs, >= 1 (None: 1).
    seed : int or None, default None
        Its seed, in [0, 2**63 - 1] (None: 0).
    init : {"paper", "fan_in", "companion", "ntk"} or None, default None
        Its initialisation (:data:`resnetlearn.learners.networks.INITS`; None: ``"paper"``, arXiv v3 §8.1).
    parameterization : {"standard", "ntk"} or Parameterization, default "standard"
        ``"standard"`` takes the parameters as drawn; ``"ntk"`` (or a
        :class:`~resnetlearn.kernels.initial_network.Parameterization` with its σ_w², σ_b²) multiplies weights by
        σ_w/√fan_in and biases by σ_b (the convention of :func:`~resnetlearn.kernels.infinite_width`).
    outputs : {"mean", "per_output", "full"}, default "mean"
        ``"mean"``: the output-averaged kernel (1/k)Σ_c Θ_cc; ``"per_output"``: each Θ_cc; ``"full"``: every Θ_cc',
        the kernel of the linearised multi-output network that training mode ``ntk`` fits.

    Returns
    -------
    torch.Tensor
        float64, of shape (N1, N2) for ``"mean"``, (k, N1, N2) for ``"per_output"``, (k, N1, k, N2) for ``"full"``.

    Raises
    ------
    ValueError
        Both ``params`` and one of (m, k, seed, init) are given, or the network or the kernel would not fit in
        memory.
    """
    X1, X2 = pair(X1, X2)
    p = draw_network(arch, X1, params, m=m, k=k, seed=seed, init=init,
                     n_points=X1.shape[0] + (0 if X2 is X1 else X2.shape[0]))
    mult = multipliers(arch, p, parameterization)
    k = p["A"].shape[0]
    n1, n2 = X1.shape[0], X2.shape[0]
    if outputs == "full":
        check_gram_memory(k * n1, k * n2, device=X1.device)
    shape = {"mean": (n1, n2), "per_output": (k, n1, n2), "full": (k, n1, k, n2)}[outputs]
    out = torch.zeros(shape, dtype=F64, device=X1.device)
    for d1_, d2_, inner in _ntk_parts(arch, p, X1, X2, mult=mult):
        if outputs == "per_output":
            out += torch.bmm(d1_, d2_.transpose(1, 2)) * inner
        elif outputs == "full":
            prod = d1_.reshape(k * n1, -1) @ d2_.reshape(k * n2, -1).T
            out += prod.view(k, n1, k, n2) * inner[None, :, None, :]
        else:
            D1 = d1_.permute(1, 0, 2).reshape(n1, -1)
            D2 = d2_.permute(1, 0, 2).reshape(n2, -1)
            out += (D1 @ D2.T) * inner / k
    return out


@validate_params({"arch": KernelArch(network_archs, "jacobian"), "params": PARAMS, "X": MATRIX,
                  "parameterization": PARAMETERIZATION})
def jacobian(arch: str, params: dict, X, *, parameterization: str | Parameterization = "standard") -> torch.Tensor:
    """The explicit Jacobian ∂f_c(x_n)/∂θ of one model, for small networks.

    Θ_full = J Jᵀ: the primal form of the NTK regression.

    Parameters
    ----------
    arch : str
        The architecture, one of :func:`~resnetlearn.kernels.network_archs`.
    params : dict of str to torch.Tensor
        The parameters of one model of ``arch`` (:func:`~resnetlearn.kernels.single_model`).
    X : torch.Tensor or array_like
        The inputs, (N, d).
    parameterization : {"standard", "ntk"} or Parameterization, default "standard"
        As in :func:`ntk` (keyword-only).

    Returns
    -------
    torch.Tensor
        J, (k, N, P) float64, P all parameters flattened in the order of ``params``.

    Raises
    ------
    ValueError
        The Jacobian would not fit in memory.
    """
    p = single_model(params, arch, X.shape[1])
    mult = multipliers(arch, p, parameterization)
    k, N = p["A"].shape[0], X.shape[0]
    check_gram_memory(k * N, sum(v.numel() for v in p.values()), copies=2, device=X.device)
    bias_of = networks.ARCHITECTURES[arch].bias_of
    blocks = {}
    for name, us in signals(arch, p, X, mult).items():
        blocks[name] = mult[name] * sum(torch.einsum("cni,nj->cnij", d, inp) for d, inp in us).reshape(k, N, -1)
        if name in bias_of:
            blocks[bias_of[name]] = mult[bias_of[name]] * sum(d for d, _ in us)
    return torch.cat([blocks[n] for n in p], dim=2)


def vjp(arch: str, p: dict, X: torch.Tensor, coef: torch.Tensor) -> dict:
    """Jᵀ·coef = Σ_{c,n} coef[c, n]·∇_θ f_c(x_n), J the Jacobian of one network in the standard parameterisation.

    This is the displacement θ − θ₀ = Jᵀa of a dual NTK solution.

    Parameters
    ----------
    arch : str
        The architecture, one of :func:`~resnetlearn.kernels.network_archs` (not checked here).
    p : dict of str to torch.Tensor
        The float64 parameters of one model (:func:`~resnetlearn.kernels.single_model`).
    X : torch.Tensor
        The inputs, (N, d), float64.
    coef : torch.Tensor
        The coefficients, (k, N).

    Returns
    -------
    dict of str to torch.Tensor
        Jᵀ·coef, one entry per parameter of ``p``, each of that parameter's shape.
    """
    mult = {n: 1.0 for n in p}
    out, bias_of = {}, networks.ARCHITECTURES[arch].bias_of
    for name, us in signals(arch, p, X, mult).items():
        out[name] = mult[name] * sum(torch.einsum("cn,cni,nj->ij", coef, d, inp) for d, inp in us)
        if name in bias_of:
            out[bias_of[name]] = mult[bias_of[name]] * sum(torch.einsum("cn,cni->i", coef, d) for d, _ in us)
    return out


def jvp(arch: str, p: dict, X: torch.Tensor, delta: dict) -> torch.Tensor:
    """J·δ = ⟨∇_θ f_c(x_n), δ⟩ for a parameter displacement δ, J as in :func:`vjp`.

    This is the linearised network's change f₀ + J·δ on new inputs, without a test Gram matrix.

    Parameters
    ----------
    arch : str
        The architecture, one of :func:`~resnetlearn.kernels.network_archs` (not checked here).
    p : dict of str to torch.Tensor
        The float64 parameters of one model (:func:`~resnetlearn.kernels.single_model`).
    X : torch.Tensor
        The inputs, (N, d), float64.
    delta : dict of str to torch.Tensor
        The displacement δ, a dict like ``p``.

    Returns
    -------
    torch.Tensor
        J·δ, (k, N).
    """
    mult = {n: 1.0 for n in p}
    out, bias_of = 0, networks.ARCHITECTURES[arch].bias_of
    for name, us in signals(arch, p, X, mult).items():
        for d, inp in us:
            out = out + mult[name] * torch.einsum("cni,ni->cn", d, inp @ delta[name].T)
            if name in bias_of:
                out = out + mult[bias_of[name]] * d @ delta[bias_of[name]]
    return out


@validate_params({"arch": KernelArch(network_archs, "ntk"), "widths": ListOf(Interval(int, 1), what="width"),
                  "seeds": Noted(Seeds(at_least=2), "to measure a spread"), "X": MATRIX, "k": Interval(int, 1),
                  "init": Options(networks.INITS), "parameterization": Options(PARAMETERIZATIONS)})
def ntk_spread(arch: str, widths, seeds, X, *, k: int = 1, init: str = "paper",
               parameterization: str = "standard") -> list[dict]:
    """How much the empirical NTK at initialisation varies from seed to seed, per width m.

    For each m, the output-averaged NTK (:func:`ntk`) of every seed is computed on X; ``spread`` is the mean over Gram
    entries of their standard deviation across seeds, divided by the largest entry of the seed-averaged Gram;
    ``spread_max`` uses the largest standard deviation instead. A kernel that concentrates has spread ~ 1/√m.

    With fan-in scaling (``init="fan_in"`` or ``parameterization="ntk"``) the §6 ``3resnet`` does not concentrate:
    out₁ = A·σ(h₁) is a k-dimensional random vector of order 1 that feeds the second block through the m×k bottleneck
    V, so the spread stays put as m grows (use the target's k, e.g. 15 for the §8.1 instance), while 2layer, 3layer
    and 3resnet_eq21 shrink like 1/√m. With the paper's N(0, 1/m) entries out₁ is O(1/√m) and V·out₁ is negligible
    against b₂, so there the §6 network's NTK concentrates too. Every width's memory is checked before the first
    network is drawn.

    Parameters
    ----------
    arch : str
        The architecture, one of :func:`~resnetlearn.kernels.network_archs`.
    widths : list of int
        The widths m, each >= 1 (one int is a list of one).
    seeds : list of int
        At least two seeds, each in [0, 2**63 - 1].
    X : torch.Tensor or array_like
        The inputs, (N, d).
    k : int, default 1
        The number of outputs, >= 1 (keyword-only, as the parameters below).
    init : {"paper", "fan_in", "companion", "ntk"}, default "paper"
        The initialisation in the standard parameterisation (``"paper"``: every entry N(0, 1/m), arXiv v3 §8.1, what
        the experiments train; ``"fan_in"``: N(0, 1/fan_in)); not used with ``parameterization="ntk"``.
    parameterization : {"standard", "ntk"}, default "standard"
        ``"ntk"``: weights N(0, 1) scaled by 1/√fan_in in the forward pass, the setting of
        :func:`~resnetlearn.kernels.infinite_width`.

    Returns
    -------
    list of dict
        One row per width: ``arch``, ``m``, ``k``, ``init`` (``"N(0,1)"`` under ``"ntk"``), ``parameterization``,
        ``n_seeds``, ``n`` (N), ``largest_entry``, ``spread`` and ``spread_max``.

    Raises
    ------
    ValueError
        A width's network and kernel would not fit in memory.
    """
    for m in widths:  # every width checked before the first network is drawn
        check_network_memory(arch, X.shape[0], k=k, m=m, device=X.device)
    rows = []
    for m in widths:
        grams = []
        for s in seeds:
            if parameterization == "standard":
                p = networks.init_params(arch, d=X.shape[1], k=k, m=m, seeds=[s], init=init, dtype=F64)
            else:  # the NTK parameterisation: every entry N(0, 1), scaled in the forward pass
                gen = torch.Generator().manual_seed(s)
                p = {n: torch.randn(shape, generator=gen, dtype=F64)
                     for n, shape in networks.param_shapes(arch, X.shape[1], k, m).items()}
            grams.append(ntk(X, arch=arch, params=p, parameterization=parameterization))
        grams = torch.stack(grams)
        mean, std = grams.mean(0), grams.std(0)
        top = float(mean.abs().max())
        rows.append(dict(arch=arch, m=m, k=k, init=init if parameterization == "standard" else "N(0,1)",
                         parameterization=parameterization, n_seeds=len(seeds), n=X.shape[0], largest_entry=top,
                         spread=float(std.mean()) / top, spread_max=float(std.max()) / top))
    return rows
