"""Kernel methods, done exactly (ResNet paper §3.1–3.2, §7; arXiv v3 §8.1).

A kernel method predicts 𝔎(x) = Σ_n K(x, x_n)·a_n (eq 3.1) with the
coefficients of regularised least squares (eq 3.2); with a ridge λ this is
kernel ridge regression, (K + λI)·a = Y. Linear regression over an explicit
feature map φ (eq 3.3) is the same with K = φφᵀ. Every solver here (Cholesky,
eigendecomposition, primal over features) regularises by one rule,
:func:`effective_ridges`: the ridge as given, unless it is negligible on a
numerically singular K, where a jitter is added with a warning.

Kernels (all Gram matrices in float64), one entry each in :data:`KERNEL_REGISTRY`
(name → Gram function, accepted keywords, the hyperparameter grid the
experiments search):

* ``gaussian`` — exp(−‖x − x'‖² / (2h²)). §3.1 writes e^{−‖x−y‖²/h}; the two
  are the same family (h ↦ 2h²) and the bandwidth is searched anyway;
* ``arcsine`` — arcsin(⟨x, x'⟩ / (‖x‖‖x'‖)) as §3.1 writes it. It is an odd
  function of the cosine, so on the hypercube it has no even-degree part and
  cannot fit the degree-2 F at all. ``arcsine_bias`` appends a constant
  coordinate ‖x‖ (cosine (1 + ρ)/2), which restores every degree;
* ``conjugate`` — ⟨φ(x), φ(x')⟩ for the last hidden representation φ of a
  random network at initialisation (:func:`features`): training only the
  readout (mode ``last``) is exactly this kernel's ridge regression;
* ``ntk`` — the empirical neural tangent kernel of a finite network at
  initialisation, ⟨∇_θ f_c(x), ∇_θ f_c(x')⟩, by per-layer contractions of
  activations and back-propagated signals (no N×k×P Jacobian);
* ``nngp_inf``/``ntk_inf`` — the infinite-width limits of ``2layer``,
  ``3layer`` and ``3resnet_eq21`` (the residual network of eq 2.1 *as
  written*) in the NTK parameterisation with weight variance σ_w² and bias
  variance σ_b², by the arc-cosine recursion. The §6 ResNet the experiments
  train (``3resnet``: shared A, bottleneck V with k columns) has no such
  limit: with fan-in scaled weights its empirical NTK keeps a seed-to-seed
  spread at any width (:func:`ntk_spread`), so no infinite kernel is named
  after it.

Every architecture's kernel side — hidden representation, back-propagated
signals for the empirical NTK, infinite-width recursion — is one entry of
:data:`ARCH_KERNELS`.

On the hypercube all these inner-product kernels act degree by degree on
parities, which is why none of them can learn the degree-8 composite signal
of the §8.1 instance from a few thousand samples (see :func:`parity_counts`).

Experiments: :func:`kernel_errors` (every kernel on a target, each tuned over
its own grid and the ridge, edges flagged) and :func:`network_kernel_errors`
(the exact kernel-ridge solutions that the (last) and (ntk) learners of
arXiv v3 §8.1 stand for).
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from . import memory, networks
from . import validation as V
from .concept import Sample, Split, data_split, hold_out

F64 = torch.float64
NETWORK_ARCHS = tuple(n for n, a in networks.ARCHITECTURES.items() if a.kernels)
"""Architectures with conjugate and empirical NTK kernels here (not §8.2's 2layer_signs)."""
INF_ARCHS = tuple(n for n, a in reversed(networks.ARCHITECTURES.items()) if a.infinite)
"""Architectures with an infinite-width limit here (not the §6 ``3resnet``: see :func:`ntk_spread`)."""
PARAMETERIZATIONS = ("standard", "ntk")
OUTPUTS = ("mean", "per_output", "full")


# ----------------------------------------------------------------- checks
def _as2d(X, name="X") -> torch.Tensor:
    if not isinstance(X, torch.Tensor):
        try:
            X = torch.as_tensor(X)
        except (TypeError, ValueError, RuntimeError) as e:
            raise TypeError(f"{name} must be a 2-d (N, d) tensor or array, got {type(X).__name__}") from e
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-d (N, d) tensor, got shape {tuple(X.shape)}")
    return V.tensor(name, X.to(F64), ndim=2)


def _targets(Y, n: int, name="Y") -> torch.Tensor:
    """Labels as a finite float64 (n, k) tensor (a 1-d Y is one output)."""
    if not isinstance(Y, torch.Tensor):
        Y = torch.as_tensor(Y)
    Y = Y.to(F64)
    if Y.ndim == 1:
        Y = Y[:, None]
    V.tensor(name, Y, ndim=2)
    if Y.shape[0] != n:
        raise ValueError(f"{name} must have N = {n} rows, got {Y.shape[0]}")
    return Y


def _pair(X1, X2):
    X1 = _as2d(X1, "X1")
    X2 = X1 if X2 is None else _as2d(X2, "X2")
    if X2 is not X1:
        V.compatible("X1", X1, "X2", X2, "dimension d")
    check_memory(X1.shape[0], X2.shape[0])
    return X1, X2


def check_memory(n1: int, n2: int, copies: int = 3) -> None:
    """Refuse (:class:`resnetlearn.memory.InsufficientMemoryError`, a ValueError) an n1×n2 kernel
    computation whose ``copies`` float64 matrices would not fit in the memory available
    (:func:`resnetlearn.memory.check_memory`), naming the number of samples that fits."""
    n1, n2 = V.integer("n1", n1, lo=0), V.integer("n2", n2, lo=0)
    square = n1 == n2  # an N×N Gram matrix: name the N that fits
    memory.check_memory(memory.gram_bytes(n1, n2, copies), what=f"a {n1}×{n2} kernel computation ({copies} float64 "
                        "copies)", width_name="N (samples)" if square else None, width=n1 if square else None,
                        need_at=(lambda n: memory.gram_bytes(n, n, copies)) if square else None)


def _check_network_memory(arch: str, n_points: int, k: int, m: int, device=None) -> None:
    """Refuse, before the network is drawn, a width m whose parameters (twice: the draw and its
    float64 copy) and back-propagated signals δ (k × n × m per layer, a few layers) would not fit."""
    def need(w):
        P = sum(math.prod(s) for s in networks.param_shapes(arch, 1, k, w).values())
        return 8 * (2 * P + 6 * k * n_points * w)

    memory.check_memory(need(m), what=f"the {arch} network kernel on {n_points} inputs (k = {k})", width_name="m",
                        width=m, need_at=need, device=device)


def _sigmas(sigma_w2, sigma_b2):
    return (V.real("sigma_w2", sigma_w2, lo=0, lo_open=True), V.real("sigma_b2", sigma_b2, lo=0))


# ----------------------------------------------------------------- classical kernels
def gaussian(X1, X2=None, *, h: float = 1.0) -> torch.Tensor:
    """exp(−‖x − x'‖²/(2h²)), bandwidth h > 0.

    §3.1 writes the Gaussian kernel e^{−‖x−y‖²/h}; that is this kernel with
    h_paper = 2h², so both name the same family. :func:`kernel_errors`
    searches h as a multiple of the median pairwise distance."""
    h = V.real("h", h, lo=0, lo_open=True)
    X1, X2 = _pair(X1, X2)
    sq = (X1**2).sum(1)[:, None] + (X2**2).sum(1)[None, :] - 2 * X1 @ X2.T
    return torch.exp(-sq.clamp_min_(0) / (2 * h * h))


def _cosine(X1, X2):
    n1, n2 = X1.norm(dim=1), X2.norm(dim=1)
    if (n1 == 0).any() or (n2 == 0).any():
        raise ValueError("the arcsine kernel needs non-zero inputs (X1 and X2 rows)")
    return ((X1 @ X2.T) / n1[:, None] / n2[None, :]).clamp_(-1, 1)


def arcsine(X1, X2=None, *, bias: bool = False) -> torch.Tensor:
    """arcsin(cos∠(x, x')) (§3.1); ``bias=True`` uses (x, ‖x‖), i.e. arcsin((1 + cos)/2)."""
    bias = V.boolean("bias", bias)
    X1, X2 = _pair(X1, X2)
    c = _cosine(X1, X2)
    return torch.asin((1 + c) / 2 if bias else c)


# ----------------------------------------------------------------- architectures
def _mults(p, parameterization, sigma_w2=1.0, sigma_b2=1.0):
    """Per-parameter output multipliers: 1 (standard, as the paper's networks)
    or σ_w/√fan_in for weights and σ_b for biases (NTK parameterisation)."""
    V.choice("parameterization", parameterization, PARAMETERIZATIONS)
    sw, sb = _sigmas(sigma_w2, sigma_b2)
    if parameterization == "standard":
        if (sw, sb) != (1.0, 1.0):
            raise ValueError("sigma_w2 and sigma_b2 apply to parameterization='ntk' only; the standard "
                             "parameterisation takes the weights as drawn")
        return {n: 1.0 for n in p}
    return {n: (math.sqrt(sb) if n.startswith("b") else math.sqrt(sw / p[n].shape[1])) for n in p}


class _Float64Ops:
    """The ops of :func:`resnetlearn.networks.evaluate` for one model in float64, each parameter
    times its multiplier (:func:`_mults`): dense mult_W·x Wᵀ + mult_b·b, readout mult_A·a Aᵀ."""

    def __init__(self, p, mult):
        self.p, self.mult = p, mult

    def dense(self, x, w, b):
        h = self.mult[w] * x @ self.p[w].T
        return h if b is None else h + self.mult[b] * self.p[b]

    relu = staticmethod(torch.relu)

    def readout(self, a):
        return self.mult["A"] * a @ self.p["A"].T


def _step(h):
    return (h > 0).to(h.dtype)


def _eye(k, N, like):
    return torch.eye(k, dtype=like.dtype, device=like.device)[:, None, :].expand(k, N, k)


def _forward(arch, p, X, mult):
    """Every node of the architecture's layer graph up to what the readout reads, and
    ``phi`` = φ₁ + φ₂ (out = A·φ; :meth:`networks.Architecture.phi_nodes`)."""
    rec = networks.ARCHITECTURES[arch]
    act = networks.evaluate(arch, _Float64Ops(p, mult), X, rec.phi_nodes)
    phi = act[rec.phi_nodes[0]]
    return dict(act, phi=phi if len(rec.phi_nodes) == 1 else phi + act[rec.phi_nodes[1]])


def _uses(arch, p, X, mult, act):
    """For every weight, its uses (δ, input): ∂f_c/∂θ = Σ_u mult·δ_{u,c} ⊗ input_u with δ of shape
    (k, N, fan_out) (the bias of a dense weight has the same δ), derived from the architecture's
    layer graph by back-propagating ∂f_c/∂node from the outputs (∂f_c/∂out = I) in reverse
    order: a readout sends mult_A·g·A back, a ReLU multiplies by σ'(h), a dense layer sends
    mult_W·g·W back. A shared readout A is used once per readout (the §6 ResNet reads with A
    twice); uses whose δ is the identity are merged into one, δ ⊗ (a + a')."""
    rec = networks.ARCHITECTURES[arch]
    A, k, N = p["A"], p["A"].shape[0], X.shape[0]
    full = lambda g: _eye(k, N, A) if g is None else g  # noqa: E731  (None: the identity)
    grad = {n: None for n in (rec.out1, rec.res) if n}
    uses = {}
    for la in reversed(rec.layers):
        if la.out not in grad:
            continue
        g = grad[la.out]
        if la.kind == "relu":
            back = full(g) * _step(act[la.inp])
        elif la.kind == "readout":
            uses.setdefault("A", []).append((g, act[la.inp]))
            back = mult["A"] * A[:, None, :] if g is None else mult["A"] * g @ A
        else:
            uses.setdefault(la.weight, []).append((full(g), act[la.inp]))
            if la.inp == "x":
                continue
            back = mult[la.weight] * full(g) @ p[la.weight]
        grad[la.inp] = back if la.inp not in grad else full(grad[la.inp]) + back
    return {name: _merge_identity(us[::-1], full) for name, us in uses.items()}


def _merge_identity(uses, full):
    """Uses in forward order, those with the identity δ (None) merged into the first of them."""
    out, at = [], None
    for d, inp in uses:
        if d is None and at is not None:
            out[at] = (None, out[at][1] + inp)
            continue
        if d is None:
            at = len(out)
        out.append((d, inp))
    return [(full(d), inp) for d, inp in out]


ARCH_KERNELS = {n: a for n, a in networks.ARCHITECTURES.items() if a.kernels}
"""The architectures of :data:`resnetlearn.networks.ARCHITECTURES` with kernels here: each record's
layer graph gives the hidden representation and the back-propagated signals of the empirical NTK,
its ``infinite`` the infinite-width recursion."""


def _arch(arch, allowed, what):
    if isinstance(arch, str) and arch in ARCH_KERNELS and arch not in allowed and ARCH_KERNELS[arch].note:
        raise ValueError(f"no {what} kernel for arch {arch!r}: {ARCH_KERNELS[arch].note}; allowed: {allowed}")
    V.choice("arch", arch, allowed)
    return ARCH_KERNELS[arch]


def _single(params: dict, arch: str | None = None, d: int | None = None) -> dict:
    """Parameters of one model (a leading model axis of size 1 is dropped), float64, checked."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of tensors, got {type(params).__name__}")
    out = {}
    for n, v in params.items():
        v = torch.as_tensor(v).to(F64)
        if v.ndim == (1 if n.startswith("b") else 2) + 1:
            if v.shape[0] != 1:
                raise ValueError(f"params: pass the parameters of a single model (model axis of size 1), "
                                 f"got {n} of shape {tuple(v.shape)}")
            v = v[0]
        out[n] = V.tensor(f"params[{n!r}]", v)
    if arch is not None:
        want = set(networks.param_shapes(arch, 1, 1, 2))
        if set(out) != want:
            raise ValueError(f"params for arch {arch!r} must hold {sorted(want)}, got {sorted(out)}")
    if d is not None and out["W"].shape[1] != d:
        raise ValueError(f"inputs have d = {d} but the network (params) expects d = {out['W'].shape[1]}")
    return out


def _network(arch, X, params, m, k, seed, init, n_points):
    """One model's float64 parameters: ``params`` as given, or drawn as :func:`networks.init_params` does
    (after checking that a width-m network and its kernel on ``n_points`` inputs fit in memory)."""
    if params is not None:
        if any(v is not None for v in (m, k, seed, init)):
            raise ValueError("pass either params or (m, k, seed, init), not both")
        return _single(params, arch, X.shape[1])
    m = V.integer("m", 1000 if m is None else m, lo=1)
    k = V.integer("k", 1 if k is None else k, lo=1)
    seed = V.seeds("seed", 0 if seed is None else seed)[0]
    init = V.choice("init", "paper" if init is None else init, networks.INITS)
    _check_network_memory(arch, n_points, k, m, X.device)
    return _single(networks.init_params(arch, X.shape[1], k, m, [seed], init, dtype=F64))


def features(arch: str, params: dict, X, *, parameterization: str = "standard", sigma_w2: float = 1.0,
             sigma_b2: float = 1.0) -> torch.Tensor:
    """φ(x), the representation the readout A acts on, out = A·φ (one model).

    2layer σ(h₁); 3layer σ(h₂); 3resnet_eq21 σ(h₁) + σ(Uσ(h₁) + b₂) (eq 2.1).
    For the §6 ``3resnet`` the readout also feeds the second block
    (out₁ = A·σ(h₁) enters V), so φ is taken with that inner A frozen at the
    given (initial) A₀: φ₀ = σ(h₁) + σ(V·A₀·σ(h₁) + b₂). Training only a
    readout on φ₀ (mode ``last``) is then regression with the conjugate
    kernel φ₀φ₀ᵀ; at A = A₀ the network's output is A₀·φ₀.
    """
    entry = _arch(arch, NETWORK_ARCHS, "features")
    X = _as2d(X)
    p = _single(params, arch, X.shape[1])
    return _forward(entry.name, p, X, _mults(p, parameterization, sigma_w2, sigma_b2))["phi"]


def conjugate(X1, X2=None, arch: str = "2layer", *, m: int | None = None, k: int | None = None,
              seed: int | None = None, init: str | None = None, params: dict | None = None) -> torch.Tensor:
    """The conjugate kernel ⟨φ(x), φ(x')⟩ of a network at initialisation
    (arXiv v3 §8.1 "last", Daniely's conjugate kernel [12]); φ is
    :func:`features`. ``params`` (one model) or (m = 1000, k = 1, seed = 0,
    init = "paper") define the network; for the §6 ResNet φ depends on A₀,
    hence on k."""
    _arch(arch, NETWORK_ARCHS, "conjugate")
    X1, X2 = _pair(X1, X2)
    p = _network(arch, X1, params, m, k, seed, init, X1.shape[0] + (0 if X2 is X1 else X2.shape[0]))
    f1 = features(arch, p, X1)
    f2 = f1 if X2 is X1 else features(arch, p, X2)
    return f1 @ f2.T


def _ntk_parts(arch, p, X1, X2, mult):
    U1 = _uses_of(arch, p, X1, mult)
    U2 = U1 if X2 is X1 else _uses_of(arch, p, X2, mult)
    bias_of = networks.ARCHITECTURES[arch].bias_of
    for name, uses1 in U1.items():
        c2 = mult[name] ** 2
        bias = bias_of.get(name)
        b2 = mult[bias] ** 2 if bias else 0.0
        for d1_, in1 in uses1:
            for d2_, in2 in U2[name]:
                yield d1_, d2_, c2 * (in1 @ in2.T) + b2  # signals, and weight + bias part of the layer


def ntk(X1, X2=None, arch: str = "2layer", *, params: dict | None = None, m: int | None = None,
        k: int | None = None, seed: int | None = None, init: str | None = None,
        parameterization: str = "standard", sigma_w2: float = 1.0, sigma_b2: float = 1.0,
        outputs: str = "mean") -> torch.Tensor:
    """Empirical NTK Θ_cc'(x, x') = ⟨∇_θ f_c(x), ∇_θ f_c'(x')⟩ at initialisation, all parameters.

    Per layer, ∂f_c/∂W = δ_c ⊗ a (a: the layer's input, δ_c: the signal
    back-propagated from output c), so each layer adds
    (δ_c·δ_c')(a·a' + [bias]) — contractions of N×m matrices only.
    ``outputs``: ``"mean"`` the output-averaged kernel (1/k)Σ_c Θ_cc (N1, N2);
    ``"per_output"`` Θ_cc as (k, N1, N2); ``"full"`` every Θ_cc' as
    (k, N1, k, N2) — the kernel of the linearised multi-output network that
    training mode ``ntk`` fits. ``params`` (one model) or (m = 1000, k = 1,
    seed = 0, init = "paper") define the network; ``parameterization="ntk"``
    multiplies weights by σ_w/√fan_in and biases by σ_b (the convention of
    :func:`infinite_width`).
    """
    _arch(arch, NETWORK_ARCHS, "ntk")
    outputs = V.choice("outputs", outputs, OUTPUTS)
    X1, X2 = _pair(X1, X2)
    p = _network(arch, X1, params, m, k, seed, init, X1.shape[0] + (0 if X2 is X1 else X2.shape[0]))
    mult = _mults(p, parameterization, sigma_w2, sigma_b2)
    k = p["A"].shape[0]
    n1, n2 = X1.shape[0], X2.shape[0]
    if outputs == "full":
        check_memory(k * n1, k * n2)
    shape = {"mean": (n1, n2), "per_output": (k, n1, n2), "full": (k, n1, k, n2)}[outputs]
    out = torch.zeros(shape, dtype=F64, device=X1.device)
    for d1_, d2_, inner in _ntk_parts(arch, p, X1, X2, mult):
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


def jacobian(arch: str, params: dict, X, *, parameterization: str = "standard", sigma_w2: float = 1.0,
             sigma_b2: float = 1.0) -> torch.Tensor:
    """The explicit Jacobian ∂f_c(x_n)/∂θ as (k, N, P), P = all parameters
    (flattened in the order of ``params``); Θ_full = J Jᵀ. For small networks
    (the primal form of the NTK regression)."""
    _arch(arch, NETWORK_ARCHS, "jacobian")
    X = _as2d(X)
    p = _single(params, arch, X.shape[1])
    mult = _mults(p, parameterization, sigma_w2, sigma_b2)
    k, N = p["A"].shape[0], X.shape[0]
    check_memory(k * N, sum(v.numel() for v in p.values()), copies=2)
    bias_of = networks.ARCHITECTURES[arch].bias_of
    blocks = {}
    for name, us in _uses_of(arch, p, X, mult).items():
        blocks[name] = mult[name] * sum(torch.einsum("cni,nj->cnij", d, inp) for d, inp in us).reshape(k, N, -1)
        if name in bias_of:
            blocks[bias_of[name]] = mult[bias_of[name]] * sum(d for d, _ in us)
    return torch.cat([blocks[n] for n in p], dim=2)


def _uses_of(arch, p, X, mult):
    return _uses(arch, p, X, mult, _forward(arch, p, X, mult))


def _vjp(arch, p, X, coef, mult):
    """Jᵀ·coef = Σ_{c,n} coef[c, n]·∇_θ f_c(x_n), as a dict like ``p`` (coef: (k, N))."""
    out, bias_of = {}, networks.ARCHITECTURES[arch].bias_of
    for name, us in _uses_of(arch, p, X, mult).items():
        out[name] = mult[name] * sum(torch.einsum("cn,cni,nj->ij", coef, d, inp) for d, inp in us)
        if name in bias_of:
            out[bias_of[name]] = mult[bias_of[name]] * sum(torch.einsum("cn,cni->i", coef, d) for d, _ in us)
    return out


def _jvp(arch, p, X, delta, mult):
    """J·δ = ⟨∇_θ f_c(x_n), δ⟩ as (k, N) for a parameter displacement δ (a dict like ``p``)."""
    out, bias_of = 0, networks.ARCHITECTURES[arch].bias_of
    for name, us in _uses_of(arch, p, X, mult).items():
        for d, inp in us:
            out = out + mult[name] * torch.einsum("cni,ni->cn", d, inp @ delta[name].T)
            if name in bias_of:
                out = out + mult[bias_of[name]] * d @ delta[bias_of[name]]
    return out


def ntk_spread(arch: str, widths, seeds, X, *, k: int = 1, init: str = "paper",
               parameterization: str = "standard") -> list[dict]:
    """How much the empirical NTK at initialisation varies from seed to seed, per width m.

    For each m, the output-averaged NTK (:func:`ntk`) of every seed is
    computed on X; ``spread`` is the mean over Gram entries of their standard
    deviation across seeds, divided by the largest entry of the seed-averaged
    Gram; ``spread_max`` uses the largest standard deviation instead. A kernel
    that concentrates has spread ~ 1/√m.

    The networks are drawn with ``init`` (``"paper"``: every entry N(0, 1/m),
    arXiv v3 §8.1, what the experiments train; ``"fan_in"``: N(0, 1/fan_in))
    in the standard parameterisation, or with ``parameterization="ntk"``
    (weights N(0, 1) scaled by 1/√fan_in, the setting of :func:`infinite_width`).
    With fan-in scaling (``fan_in`` or ``ntk``) the §6 ``3resnet`` does not
    concentrate: out₁ = A·σ(h₁) is a k-dimensional random vector of order 1
    that feeds the second block through the m×k bottleneck V, so the spread
    stays put as m grows (use the target's k, e.g. 15 for the §8.1 instance),
    while 2layer, 3layer and 3resnet_eq21 shrink like 1/√m. With the paper's
    N(0, 1/m) entries out₁ is O(1/√m) and V·out₁ is negligible against b₂,
    so there the §6 network's NTK concentrates too.
    """
    _arch(arch, NETWORK_ARCHS, "ntk")
    widths = [V.integer(f"widths[{i}]", w, lo=1) for i, w in enumerate(V.sequence("widths", widths))]
    if not widths:
        raise ValueError("widths must name at least one width")
    seeds = V.seeds("seeds", seeds)
    if len(seeds) < 2:
        raise ValueError(f"seeds must name at least two seeds to measure a spread, got {seeds}")
    k = V.integer("k", k, lo=1)
    init = V.choice("init", init, networks.INITS)
    parameterization = V.choice("parameterization", parameterization, PARAMETERIZATIONS)
    X = _as2d(X)
    for m in widths:  # every width checked before the first network is drawn
        _check_network_memory(arch, X.shape[0], k, m, X.device)
    rows = []
    for m in widths:
        grams = []
        for s in seeds:
            if parameterization == "ntk":
                gen = torch.Generator().manual_seed(s)
                p = {n: torch.randn(shape, generator=gen, dtype=F64)
                     for n, shape in networks.param_shapes(arch, X.shape[1], k, m).items()}
            else:
                p = networks.init_params(arch, X.shape[1], k, m, [s], init, dtype=F64)
            grams.append(ntk(X, arch=arch, params=p, parameterization=parameterization))
        grams = torch.stack(grams)
        mean, std = grams.mean(0), grams.std(0)
        top = float(mean.abs().max())
        rows.append(dict(arch=arch, m=m, k=k, init=init if parameterization == "standard" else "N(0,1)",
                         parameterization=parameterization, n_seeds=len(seeds), n=X.shape[0], largest_entry=top,
                         spread=float(std.mean()) / top, spread_max=float(std.max()) / top))
    return rows


# ----------------------------------------------------------------- infinite width
def infinite_width(X1, X2=None, arch: str = "2layer", *, sigma_w2: float = 1.0, sigma_b2: float = 1.0,
                   block: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """(NNGP, NTK) of an infinitely wide ReLU network with one output.

    NTK parameterisation: weights N(0, 1) multiplied by σ_w/√fan_in, biases
    N(0, 1) multiplied by σ_b (no output bias). The first layer gives
    Σ₁ = Θ₁ = σ_w²·x·x'/d + σ_b²; a ReLU then a dense layer map (Σ, Θ) to
    Σ' = σ_w²κ₁(Σ) + σ_b², Θ' = Σ' + σ_w²κ₀(Σ)·Θ (κ: :func:`_relu_moments`);
    the output layer to (σ_w²κ₁(Σ), σ_w²κ₁(Σ) + σ_w²κ₀(Σ)·Θ). σ_w² = σ_b² = 1
    is the convention used before these became parameters.

    ``3resnet_eq21`` is the limit of eq 2.1 as written, out = A(σ(h₁) + σ(h₂)),
    h₂ = Uσ(h₁) + b₂ with U m×m: the sum of the 2layer branch's and the 3layer
    branch's kernels plus the cross term of the branches' means,
    σ_w²(μ₁(x)μ₂(x') + μ₂(x)μ₁(x')) with μ(x) = E σ(h) = √(Σ(x,x)/2π). The §6
    ``3resnet`` the experiments train has no such limit (:func:`ntk_spread`).
    Rows are processed in blocks of ``block``.
    """
    entry = _arch(arch, INF_ARCHS, "infinite-width")
    sw, sb = _sigmas(sigma_w2, sigma_b2)
    block = V.integer("block", block, lo=1)
    X1, X2 = _pair(X1, X2)
    d = X1.shape[1]
    qb = sw * (X2**2).sum(1) / d + sb
    nngp = torch.empty(X1.shape[0], X2.shape[0], dtype=F64, device=X1.device)
    ntk_ = torch.empty_like(nngp)
    for s in range(0, X1.shape[0], block):
        x = X1[s:s + block]
        S1 = sw * (x @ X2.T) / d + sb
        nngp[s:s + block], ntk_[s:s + block] = entry.infinite(S1, sw * (x**2).sum(1) / d + sb, qb, sw, sb)
    return nngp, ntk_


# ----------------------------------------------------------------- registry
@dataclass(frozen=True)
class KernelEntry:
    """One kernel of :data:`KERNEL_REGISTRY`.

    ``gram(X1, X2, **kw)`` is the Gram matrix; ``keywords`` the keywords
    :func:`kernel` accepts for it; ``archs`` the architectures of a
    ``"name:arch"`` spec (empty: none); ``grid`` the hyperparameters
    :func:`kernel_errors` searches besides the ridge (axis → values);
    ``build(ctx, arch, **point)`` turns one grid point into a Gram function
    for an experiment; ``hard_bounds`` the grid ends that cannot be extended
    (a choice there is not flagged as a grid edge, e.g. σ_b² = 0)."""

    name: str
    gram: Callable
    keywords: tuple[str, ...]
    grid: dict = field(default_factory=dict)
    build: Callable | None = None
    archs: tuple[str, ...] = ()
    default_arch: str | None = None
    hard_bounds: dict = field(default_factory=dict)
    description: str = ""


@dataclass
class _Context:
    """What an experiment's kernels may depend on: the training inputs, k, the network width and seed."""

    X_train: torch.Tensor
    k: int
    m: int
    seed: int
    _median: float | None = None

    @property
    def median(self) -> float:
        """Median distance between distinct training points (the first 500)."""
        if self._median is None:
            x = self.X_train[:500]
            dist = torch.cdist(x, x)
            iu = torch.triu_indices(len(x), len(x), 1)
            self._median = float(dist[iu[0], iu[1]].median()) if len(x) > 1 else 1.0
        return self._median

    def params(self, arch):
        # the §6 ResNet's kernels depend on its k outputs (A is shared by both blocks)
        kk = self.k if arch == "3resnet" else 1
        return networks.init_params(arch, self.X_train.shape[1], kk, self.m, [self.seed], "paper", dtype=F64)


BANDWIDTHS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
"""Gaussian bandwidths h as multiples of the median distance between training points.

On the §8.1 instance (N = 500, 1000) the test error falls from ~8.4 at 0.5×
to a plateau from ~2× on (best 32×: 5.04 and 2.22); beyond ~256× the Gram
matrix degenerates numerically. On the §7 hard instance (d = 30, k = 4) it
plateaus from ~8× on at 0.37–0.38, just above kα² = 0.36: a wide Gaussian
acts like a low-degree polynomial kernel, which is all it can use here. On a
plateau the choice between neighbours is not flagged (:func:`_grid_edges`)."""
SIGMA_W2 = (1.0, 2.0)
SIGMA_B2 = (0.0, 0.1, 1.0)
INF_GRID = {"sigma_w2": SIGMA_W2, "sigma_b2": SIGMA_B2}
"""(σ_w², σ_b²) searched for the infinite-width kernels (σ_b² = 0 is a hard lower bound)."""


def _inf_gram(which):
    def gram(X1, X2=None, arch="2layer", **kw):
        return infinite_width(X1, X2, arch, **kw)[which]
    return gram


def _inf_build(which):
    def build(ctx, arch, sigma_w2=1.0, sigma_b2=1.0):
        return lambda A, B: infinite_width(A, B, arch, sigma_w2=sigma_w2, sigma_b2=sigma_b2)[which]
    return build


def _network_build(fn):
    def build(ctx, arch):
        p = ctx.params(arch)
        return lambda A, B: fn(A, B, arch, params=p)
    return build


_NET_KW = ("arch", "params", "m", "k", "seed", "init")
KERNEL_REGISTRY: dict[str, KernelEntry] = {
    e.name: e for e in (
        KernelEntry("gaussian", gaussian, ("h",), {"h_rel": BANDWIDTHS},
                    lambda ctx, arch, h_rel: (lambda A, B, h=h_rel * ctx.median: gaussian(A, B, h=h)),
                    description="exp(−‖x − x'‖²/(2h²)), h = h_rel × median distance (§3.1 writes e^{−‖x−y‖²/h})"),
        KernelEntry("arcsine", arcsine, (), {}, lambda ctx, arch: arcsine,
                    description="arcsin(cos∠(x, x')) as §3.1 writes it (odd: no even degrees)"),
        KernelEntry("arcsine_bias", lambda X1, X2=None: arcsine(X1, X2, bias=True), (), {},
                    lambda ctx, arch: (lambda A, B: arcsine(A, B, bias=True)),
                    description="arcsine kernel of (x, ‖x‖): every degree"),
        KernelEntry("conjugate", conjugate, _NET_KW, {}, _network_build(conjugate), NETWORK_ARCHS, "2layer",
                    description="⟨φ₀(x), φ₀(x')⟩ of the network at initialisation (mode last)"),
        KernelEntry("ntk", ntk, _NET_KW + ("parameterization", "sigma_w2", "sigma_b2"), {}, _network_build(ntk),
                    NETWORK_ARCHS, "2layer", description="empirical NTK at initialisation, output-averaged"),
        KernelEntry("nngp_inf", _inf_gram(0), ("arch", "sigma_w2", "sigma_b2", "block"), INF_GRID,
                    _inf_build(0), INF_ARCHS, "2layer", {"sigma_b2": 0.0},
                    description="infinite-width NNGP (NTK parameterisation, σ_w², σ_b²)"),
        KernelEntry("ntk_inf", _inf_gram(1), ("arch", "sigma_w2", "sigma_b2", "block"), INF_GRID,
                    _inf_build(1), INF_ARCHS, "2layer", {"sigma_b2": 0.0},
                    description="infinite-width NTK (NTK parameterisation, σ_w², σ_b²)"),
    )
}
KERNELS = tuple(KERNEL_REGISTRY)


def kernel(name: str, X1, X2=None, **kw) -> torch.Tensor:
    """Gram matrix of a kernel by name (one of :data:`KERNELS`), with that
    kernel's keywords only (e.g. ``h`` for ``gaussian``, ``arch``,
    ``sigma_w2``, ``sigma_b2`` for ``ntk_inf``); any other keyword is an error."""
    entry = KERNEL_REGISTRY[V.choice("kernel", name, KERNELS)]
    for key in kw:
        if key not in entry.keywords:
            takes = ", ".join(entry.keywords) or "no keywords"
            hint = " (use the kernel 'arcsine_bias')" if (name, key) == ("arcsine", "bias") else ""
            raise TypeError(f"kernel {name!r} does not take the keyword {key!r}{hint}; it takes: {takes}")
    return entry.gram(X1, X2, **kw)


def parse_spec(spec: str) -> tuple[KernelEntry, str | None]:
    """'name' or 'name:arch' → (registry entry, architecture or None)."""
    if not isinstance(spec, str):
        raise TypeError(f"a kernel spec must be a string 'name' or 'name:arch', got {spec!r}")
    name, _, arch = spec.partition(":")
    if name not in KERNEL_REGISTRY:
        raise ValueError(f"unknown kernel {spec!r}; allowed: {KERNELS} (as 'name' or 'name:arch')")
    entry = KERNEL_REGISTRY[name]
    if not entry.archs:
        if arch:
            raise ValueError(f"kernel {name!r} takes no architecture, got {spec!r}")
        return entry, None
    arch = arch or entry.default_arch
    if arch not in entry.archs:
        extra = f" ({ARCH_KERNELS[arch].note})" if arch in ARCH_KERNELS and ARCH_KERNELS[arch].note else ""
        raise ValueError(f"kernel {name!r} exists for archs {entry.archs}, got {arch!r}{extra}")
    return entry, arch


# ----------------------------------------------------------------- ridge regression
def _check_ridge(ridge, name="ridge"):
    return V.real(name, ridge, lo=0)


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
    as :func:`ridge_path` does, so both solvers give the same answer."""
    ridge = _check_ridge(ridge)
    K, Y = _check_gram(K, Y)
    eigs = torch.linalg.eigvalsh(K)
    (lam_eff,) = effective_ridges(eigs, [ridge])
    if lam_eff == ridge:
        L, info = torch.linalg.cholesky_ex(K + ridge * torch.eye(K.shape[0], dtype=F64, device=K.device))
        if int(info) == 0:
            return torch.cholesky_solve(Y, L)
    lam, Q = torch.linalg.eigh(K)
    return Q @ ((Q.T @ Y) / (lam.clamp_min(0) + lam_eff)[:, None])


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


def ridge_path(K: torch.Tensor, Y: torch.Tensor, K_test: torch.Tensor, ridges, center: bool = True) -> torch.Tensor:
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


def feature_ridge(Phi: torch.Tensor, Y: torch.Tensor, Phi_test: torch.Tensor, ridge: float,
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
        return KernelRidge(ridge, center).fit(Phi @ Phi.T, Y).predict(Phi_test @ Phi.T)
    y_mean = Y.mean(0) if center else torch.zeros(Y.shape[1], dtype=F64, device=Y.device)
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
        Phi = _as2d(Phi, "Phi")
        self._train = (Phi, _targets(Y, Phi.shape[0]))
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
    d = V.integer("d", d, lo=1)
    max_degree = V.integer("max_degree", max_degree, lo=0, hi=d)
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


def _fmt(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _setting_label(name, point) -> str:
    if name == "gaussian":
        return f"h={point['h_rel']:g}×median"
    return " ".join(f"{a}={_fmt(v)}" for a, v in point.items())


def _grid_edges(grid: dict, point: dict, hard_bounds: dict, errors: dict | None = None,
                rtol: float = 0.01, profiled: str = "ridge_rel") -> list[str]:
    """The axes whose chosen value is an end of a grid of two or more values,
    other than an end that cannot be extended (``hard_bounds``, e.g. σ_b² = 0).

    With ``errors`` (tuple of values in the order of ``grid`` → selection
    error), an end is only reported when the next value inwards is worse by
    more than ``rtol`` (1 %): the best error there, with the other axes as
    chosen except the ``profiled`` one (the ridge), which is re-optimised.
    Along a flat axis — exactly flat like σ_w² of a bias-free 2layer kernel,
    which only scales it while the ridge is relative, or a plateau like the
    Gaussian's at large bandwidths or the ridgeless limit — the choice at the
    end is one of several equally good ones and is not reported.
    """
    axes = list(grid)
    edges = []
    for a, axis in enumerate(axes):
        values = sorted(set(grid[axis]))
        if len(values) < 2:
            continue
        v = point[axis]
        for end, inner, side in ((values[0], values[1], "lowest"), (values[-1], values[-2], "highest")):
            if v != end or hard_bounds.get(axis) == end:
                continue
            if errors is not None:
                here = errors[tuple(point[x] for x in axes)]
                inward = [e for key, e in errors.items() if key[a] == inner
                          and all(key[b] == point[x] for b, x in enumerate(axes) if b != a and x != profiled)]
                if inward and not min(inward) > here * (1 + rtol) + 1e-12:
                    continue  # flat: the neighbour does as well
            edges.append(f"{axis}={_fmt(v)} ({side})")
    return edges


def _resolve_grid(spec, entry, grids, bandwidths):
    grid = dict(entry.grid)
    if entry.name == "gaussian" and bandwidths is not None:
        grid["h_rel"] = tuple(V.reals("bandwidths", bandwidths, lo=0, lo_open=True))
    for key in (entry.name, spec):
        if key in grids:
            override = grids[key]
            if not isinstance(override, dict):
                raise TypeError(f"grids[{key!r}] must be a dict axis → values, got {override!r}")
            for axis, values in override.items():
                if axis not in entry.grid:
                    raise ValueError(f"grids[{key!r}]: kernel {entry.name!r} has no hyperparameter {axis!r}; "
                                     f"it has {tuple(entry.grid) or 'none'}")
                grid[axis] = tuple(V.reals(f"grids[{key!r}][{axis!r}]", values))
    return grid


def _given_split(split, target, *, n_train, n_test, select):
    """A split passed to :func:`kernel_errors`, checked against what it should hold, on the CPU."""
    if not isinstance(split, Split):
        raise TypeError(f"split must be a resnetlearn.concept.Split (from data_split), got {type(split).__name__}")
    if (split.val is not None) != (select == "val"):
        raise ValueError(f"select={select!r} needs a split {'with' if select == 'val' else 'without'} a validation "
                         "part (data_split's val_fraction)")
    parts = [("train", split.train), ("test", split.test)] + ([("val", split.val)] if split.val is not None else [])
    for name, part in parts:
        for t in ("x", "y"):
            if getattr(part, t).dtype != F64:
                raise ValueError(f"split.{name}.{t} must be float64 (data_split(..., dtype=torch.float64)); got "
                                 f"{getattr(part, t).dtype}: the kernels are computed in float64")
        if part.x.shape[1] != target.d or part.y.shape[1] != target.k:
            raise ValueError(f"split.{name} has d = {part.x.shape[1]}, k = {part.y.shape[1]}; the target has "
                             f"d = {target.d}, k = {target.k}")
    n_held = split.train.x.shape[0] + (0 if split.val is None else split.val.x.shape[0])
    if n_held != n_train or split.test.x.shape[0] != n_test:
        raise ValueError(f"split holds {n_held} training and {split.test.x.shape[0]} test samples; n_train = "
                         f"{n_train}, n_test = {n_test}")
    return split.to(device="cpu")


def kernel_errors(target, n_train: int, kernels=DEFAULT_KERNELS, *, select: str = "test",
                  val_fraction: float = 0.2, n_test: int = 2000, data_seed: int = 0, m: int = 1000,
                  kernel_seed: int = 0, ridges=RELATIVE_RIDGES, bandwidths=None, grids: dict | None = None,
                  split: Split | None = None, progress: bool = True) -> list[dict]:
    """Best test error of kernel ridge regression for each kernel, each tuned over its own grid.

    Data from :func:`resnetlearn.concept.data_split` (``n_train`` samples
    with ``data_seed``, ``n_test`` with ``data_seed + 1``, the validation part
    the last ``val_fraction`` of the training samples), as for the networks,
    so kernels and networks see identical samples; ``split`` passes that
    split already drawn (in float64, ``data_split(..., dtype=torch.float64)``,
    e.g. the one a race also trains its networks on, cast with
    :meth:`~resnetlearn.concept.Split.to`): then ``n_train``, ``n_test`` and
    ``data_seed`` describe it and its sizes are checked against them. Every kernel searches the
    ridge (``ridges``, multiples of the mean diagonal of its training Gram)
    and its own hyperparameters from :data:`KERNEL_REGISTRY`: the Gaussian
    bandwidth (``bandwidths`` × median distance, default :data:`BANDWIDTHS`),
    the infinite kernels' (σ_w², σ_b²) (:data:`INF_GRID`); ``grids``
    overrides a kernel's grid by name or spec, e.g.
    ``{"ntk_inf": {"sigma_w2": [1, 2, 4]}}``. The choice is made by test error
    (``select="test"``, as the paper selects) or on the last ``val_fraction``
    of the training samples (``select="val"``, the kernel then fitted on the
    rest only). The finite kernels (``conjugate``, ``ntk``) are those of a
    width-``m`` network drawn with ``kernel_seed`` (one output, except the
    §6 ResNet whose features depend on its k outputs); like every kernel here
    they are fitted with an unpenalised label mean (:class:`KernelRidge`).
    The exact solutions the (last)/(ntk) learners converge to — no mean, the
    residual of the initial network, the full multi-output NTK — are
    :func:`network_kernel_errors`.

    Returns one row per kernel: the selected ``setting`` (label), ``params``
    (its grid point), ``ridge_rel``, ``test_error``, ``sel_error``, the flags
    ``ridge_at_grid_edge`` and ``param_at_grid_edge`` (a choice at an end of
    its grid whose inward neighbour is more than 1 % worse, other than a hard
    bound such as σ_b² = 0: the optimum may lie beyond the grid; see
    :func:`_grid_edges`; ``grid_edges`` names them), and ``path``:
    (setting, ridge_rel, selection error) for every candidate.
    """
    from tqdm.auto import tqdm

    select = V.choice("select", select, ("test", "val"))
    n_train = V.integer("n_train", n_train, lo=2)
    n_test = V.integer("n_test", n_test, lo=1)
    val_fraction = V.real("val_fraction", val_fraction, lo=0, hi=1, lo_open=True, hi_open=True)
    data_seed = V.seeds("data_seed", data_seed)[0]
    kernel_seed = V.seeds("kernel_seed", kernel_seed)[0]
    m = V.integer("m", m, lo=1)
    ridges = V.reals("ridges", ridges, lo=0)
    progress = V.boolean("progress", progress)
    grids = {} if grids is None else grids
    if not isinstance(grids, dict):
        raise TypeError(f"grids must be a dict (kernel name or spec → {{axis: values}}), got {grids!r}")
    specs = V.sequence("kernels", kernels, allow_scalar=False) if not isinstance(kernels, str) else [kernels]
    if not specs:
        raise ValueError("kernels must name at least one kernel")
    plan = [(spec, *parse_spec(spec)) for spec in specs]  # every spec checked before any work
    plan = [(spec, entry, arch, _resolve_grid(spec, entry, grids, bandwidths)) for spec, entry, arch in plan]
    if split is None:
        split = data_split(target, n_train, n_test=n_test, seed=data_seed,
                           val_fraction=val_fraction if select == "val" else 0.0, dtype=F64)
    else:
        split = _given_split(split, target, n_train=n_train, n_test=n_test, select=select)
    Xtr, Ytr, Xte, Yte = split.train.x, split.train.y, split.test.x, split.test.y
    Xsel, Ysel = (Xte, Yte) if select == "test" else (split.val.x, split.val.y)
    ctx = _Context(Xtr, Ytr.shape[1], m, kernel_seed)
    n_points = Xtr.shape[0] + Xte.shape[0] + (0 if select == "test" else Xsel.shape[0])
    for _, entry, arch, _ in plan:
        if arch in NETWORK_ARCHS and entry.name in ("conjugate", "ntk"):
            _check_network_memory(arch, n_points, ctx.k if arch == "3resnet" else 1, m)
    y_mean = Ytr.mean(0)
    rows = []
    for spec, entry, arch, grid in tqdm(plan, desc=f"kernels N={n_train}", disable=not progress, leave=False):
        t0 = time.perf_counter()
        axes = list(grid)
        best, path, errors = None, [], {}
        for values in itertools.product(*(grid[a] for a in axes)):
            point = dict(zip(axes, values))
            label = _setting_label(entry.name, point)
            fn = entry.build(ctx, arch, **point)
            K = fn(Xtr, Xtr)
            lams = [r * float(K.diagonal().mean()) for r in ridges]
            pred = y_mean + _eig_path(K, Ytr - y_mean, [fn(Xsel, Xtr)], lams)[0]
            sel_err = torch.nan_to_num(((pred - Ysel) ** 2).sum(-1).mean(-1), nan=math.inf)
            for j, r in enumerate(ridges):
                path.append((label, r, float(sel_err[j])))
                errors[(*values, r)] = float(sel_err[j])
            i = int(torch.argmin(sel_err))
            if best is None or sel_err[i] < best["sel_error"]:
                best = dict(sel_error=float(sel_err[i]), label=label, point=point, i=i, lam=lams[i], fn=fn, K=K)
        if select == "test":
            test_error = best["sel_error"]
        else:
            fn = best["fn"]
            pred = y_mean + _eig_path(best["K"], Ytr - y_mean, [fn(Xte, Xtr)], [best["lam"]])[0][0]
            test_error = float(((pred - Yte) ** 2).sum(-1).mean())
        chosen = {**best["point"], "ridge_rel": ridges[best["i"]]}
        edges = _grid_edges({**grid, "ridge_rel": ridges}, chosen, entry.hard_bounds, errors)
        ridge_edge = any(e.startswith("ridge_rel=") for e in edges)
        rows.append(dict(kernel=spec, setting=best["label"], params=best["point"], ridge_rel=ridges[best["i"]],
                         n_train=n_train, n_fit=Xtr.shape[0], test_error=test_error, sel_error=best["sel_error"],
                         select=select, ridge_at_grid_edge=ridge_edge, param_at_grid_edge=len(edges) > ridge_edge,
                         grid_edges="; ".join(edges), n_test=n_test, data_seed=data_seed, m=m,
                         seconds=round(time.perf_counter() - t0, 2),
                         path=path))  # (setting, ridge_rel, selection error) of every candidate
    return rows


# ----------------------------------------------------------------- exact (last) / (ntk)
NETWORK_MODES = ("last", "ntk")
COUPLINGS = ("full", "per_output")


def _network_path(arch, p, mode, X, Y, X_test, ridges, relative, coupling):
    """Predictions (R, n, k) on X_test and on X for every ridge, the ridge
    scale (mean diagonal of the training Gram over all outputs), the solver
    used and the number of trainable features."""
    k, N = Y.shape[1], X.shape[0]
    if mode == "last":
        Phi, Phi_t = features(arch, p, X), features(arch, p, X_test)
        scale = float((Phi**2).sum()) / N
        lams = [r * scale for r in ridges] if relative else ridges
        if Phi.shape[1] <= N:
            pt, ptr = _primal_path(Phi, Y, [Phi_t, Phi], lams)
            return pt, ptr, scale, "primal", Phi.shape[1]
        K = Phi @ Phi.T
        pt, ptr = _eig_path(K, Y, [Phi_t @ Phi.T, K], lams)
        return pt, ptr, scale, "dual", Phi.shape[1]
    f0 = networks.forward(arch, {n: v[None] for n, v in p.items()}, X)[0]
    f0t = networks.forward(arch, {n: v[None] for n, v in p.items()}, X_test)[0]
    R = Y - f0  # the linearised network f₀ + J·(θ − θ₀) fits the residual of the initial network
    n_params = sum(v.numel() for v in p.values())
    if coupling == "per_output":
        Kc = ntk(X, arch=arch, params=p, outputs="per_output")
        Ktc = ntk(X_test, X, arch=arch, params=p, outputs="per_output")
        scale = float(torch.diagonal(Kc, dim1=1, dim2=2).mean())
        lams = [r * scale for r in ridges] if relative else ridges
        parts = [_eig_path(Kc[c], R[:, c:c + 1], [Ktc[c], Kc[c]], lams) for c in range(k)]
        pt = torch.cat([q[0] for q in parts], dim=2)
        ptr = torch.cat([q[1] for q in parts], dim=2)
        return f0t + pt, f0 + ptr, scale, "per_output", n_params
    r = R.T.reshape(-1, 1)  # rows ordered (output c, sample n)
    ones = {n: 1.0 for n in p}
    if n_params < k * N:  # primal: θ − θ₀ = (JᵀJ + λI)⁻¹Jᵀr over the P parameters
        check_memory(k * N, n_params, copies=2)
        J = jacobian(arch, p, X).reshape(k * N, -1)
        scale = float((J**2).sum()) / (k * N)
        lams = [r_ * scale for r_ in ridges] if relative else ridges
        lam, Q = torch.linalg.eigh(J.T @ J)
        lams = effective_ridges(lam, lams, what="JᵀJ")
        QtJr = Q.T @ (J.T @ r)
        flat = [Q @ (QtJr / (lam.clamp_min(0) + lr)[:, None]) for lr in lams]
        sizes = [v.numel() for v in p.values()]
        deltas = [{n: c.reshape(v.shape) for (n, v), c in zip(p.items(), w[:, 0].split(sizes))} for w in flat]
        train = [(J @ w).reshape(k, N) for w in flat]
        solver = "primal"
    else:  # dual: a = (Θ + λI)⁻¹r with the full (kN × kN) NTK, θ − θ₀ = Jᵀa
        check_memory(k * N, k * N, copies=3)
        K = ntk(X, arch=arch, params=p, outputs="full").reshape(k * N, k * N)
        scale = float(K.diagonal().mean())
        lams = [r_ * scale for r_ in ridges] if relative else ridges
        lam, Q = torch.linalg.eigh(K)
        lams = effective_ridges(lam, lams, what="Θ")
        lam = lam.clamp_min(0)
        Qtr = Q.T @ r
        del K
        coefs = [Q @ (Qtr / (lam + lr)[:, None]) for lr in lams]
        train = [(Q @ (lam[:, None] * (Q.T @ a))).reshape(k, N) for a in coefs]  # Θ·a = QΛQᵀa
        deltas = [_vjp(arch, p, X, a.reshape(k, N), ones) for a in coefs]
        solver = "dual"
    # test predictions f₀ + J(x)·(θ − θ₀): no test Gram matrix needed
    test = torch.stack([_jvp(arch, p, X_test, dl, ones).T for dl in deltas])
    return f0t + test, f0 + torch.stack([t.T for t in train]), scale, solver, n_params


def _sample_xy(sample, name):
    if not (hasattr(sample, "x") and hasattr(sample, "y")):
        raise TypeError(f"{name} must be a Sample with x and y (e.g. target.sample(n)), got {type(sample).__name__}")
    x = _as2d(sample.x, f"{name}.x")
    return x, _targets(sample.y, x.shape[0], f"{name}.y")


def network_krr(arch: str, params: dict, mode: str, X, Y, X_test, ridges, *, coupling: str = "full",
                relative: bool = False) -> torch.Tensor:
    """Predictions (R, n_test, k) of the exact ridge solution that training
    mode ``mode`` of a network with initial parameters ``params`` converges to,
    for every ridge λ.

    * ``last``: ridge regression of Y on φ₀ (:func:`features`), no intercept —
      the readout A minimising ½ mean‖Aφ₀ − y‖² + (wd/2)‖A‖² for λ = N·wd;
    * ``ntk``: the linearised network f₀ + J(θ − θ₀) (every parameter, as
      training mode ``ntk``), minimising ½ mean‖f − y‖² + (wd/2)‖θ − θ₀‖²:
      kernel ridge regression of the residual Y − f₀ with the empirical NTK,
      prediction f₀ + Θ·a. ``coupling="full"`` uses the whole multi-output
      kernel Θ_cc' — exactly the linearised network that training mode
      ``ntk`` fits (solved in the primal over the P parameters when P < N·k,
      else in the dual of size N·k: O((N·k)³) time, two (N·k)² matrices).
      ``"per_output"`` drops the cross-output blocks Θ_cc', c ≠ c', i.e. k
      independent kernel regressions with Θ_cc (k problems of size N). That
      is a different learner, not a small correction: it gives every output
      its own copy of the hidden layers' displacement, where the network
      shares one among its k outputs (the cross blocks vanish only as m → ∞,
      where Θ → Θ∞ ⊗ I_k). On the §8.1 instance, N = m = 500, 2layer:
      full 10.17, per_output 7.44.

    ``relative=True`` reads the ridges as multiples of the mean diagonal of
    the training Gram (over all outputs)."""
    arch = _arch(arch, NETWORK_ARCHS, "network").name
    mode = V.choice("mode", mode, NETWORK_MODES)
    coupling = V.choice("coupling", coupling, COUPLINGS)
    X, X_test = _as2d(X, "X"), _as2d(X_test, "X_test")
    V.compatible("X", X, "X_test", X_test, "dimension d")
    Y = _targets(Y, X.shape[0])
    p = _single(params, arch, X.shape[1])
    if p["A"].shape[0] != Y.shape[1]:
        raise ValueError(f"the network has k = {p['A'].shape[0]} outputs but Y has {Y.shape[1]} columns")
    ridges = V.reals("ridges", ridges, lo=0)
    return _network_path(arch, p, mode, X, Y, X_test, ridges, V.boolean("relative", relative), coupling)[0]


def network_kernel_errors(train, test, arch: str, m: int, mode: str, *, seed: int = 0, init: str = "paper",
                          ridges=RELATIVE_RIDGES, select: str = "test", holdout=None, val_fraction: float = 0.2,
                          coupling: str = "full", device=None) -> dict:
    """The exact kernel-ridge solution behind a (last) or (ntk) point of arXiv v3 §8.1.

    The network is drawn as training draws it (:func:`networks.init_params`
    with ``seed`` and ``init``, in float64); (last) is ridge regression with
    its conjugate kernel (features φ₀, :func:`features`), (ntk) kernel ridge
    regression of Y − f₀ with its empirical NTK over every parameter
    (:func:`network_krr`; ``coupling`` as there). The ridge path
    ``ridges`` (multiples of the mean diagonal of the training Gram) is
    searched; the ridge is selected by test error (``select="test"``, as the
    paper selects) or on held-out samples (``select="val"``: ``holdout`` if
    given, else the last ``val_fraction`` of ``train`` as
    :func:`resnetlearn.concept.data_split` holds out, and the fit uses the rest only).

    Returns a row: ``test_error``/``train_error`` at the selected ridge,
    ``ridge_rel``, ``ridge`` (λ) and ``wd_equivalent`` = λ/n_fit (the weight
    decay whose SGD optimum this is), ``ridge_at_grid_edge`` (the selected
    ridge is an end of ``ridges`` and the next one inwards is > 1 % worse, as
    :func:`kernel_errors` flags), ``f0_test_error``
    (the untrained network), the ``solver`` and ``path`` = (ridge_rel,
    selection error, test error) for every ridge.
    """
    t0 = time.perf_counter()
    arch = _arch(arch, NETWORK_ARCHS, "network").name
    mode = V.choice("mode", mode, NETWORK_MODES)
    m = V.integer("m", m, lo=1)
    seed = V.seeds("seed", seed)[0]
    init = V.choice("init", init, networks.INITS)
    ridges = V.reals("ridges", ridges, lo=0)
    select = V.choice("select", select, ("test", "val"))
    coupling = V.choice("coupling", coupling, COUPLINGS)
    Xtr, Ytr = _sample_xy(train, "train")
    Xte, Yte = _sample_xy(test, "test")
    V.compatible("train.x", Xtr, "test.x", Xte, "dimension d")
    if Ytr.shape[1] != Yte.shape[1]:
        raise ValueError(f"train.y and test.y disagree in k: {Ytr.shape[1]} vs {Yte.shape[1]}")
    n_train = Xtr.shape[0]
    if select == "val":
        if holdout is not None:
            Xsel, Ysel = _sample_xy(holdout, "holdout")
            V.compatible("train.x", Xtr, "holdout.x", Xsel, "dimension d")
        else:  # the validation rule of concept.data_split
            fit, val = hold_out(Sample(Xtr, Ytr, None, None), val_fraction)
            Xtr, Ytr, Xsel, Ysel = fit.x, fit.y, val.x, val.y
    elif holdout is not None:
        raise ValueError("holdout is used with select='val' only")
    else:
        Xsel, Ysel = Xte, Yte
    k, d = Ytr.shape[1], Xtr.shape[1]
    dev = torch.device("cpu") if device is None else torch.device(device)
    _check_network_memory(arch, Xtr.shape[0] + Xsel.shape[0] + Xte.shape[0], k, m, dev)
    p = {n: v[0].to(dev) for n, v in networks.init_params(arch, d, k, m, [seed], init, dtype=F64).items()}
    Xtr, Ytr, Xte, Yte, Xsel, Ysel = (t.to(dev) for t in (Xtr, Ytr, Xte, Yte, Xsel, Ysel))
    Xall = Xte if select == "test" else torch.cat([Xsel, Xte])
    pred, pred_tr, scale, solver, n_feat = _network_path(arch, p, mode, Xtr, Ytr, Xall, ridges, True, coupling)
    err = lambda P, Y: ((P - Y) ** 2).sum(-1).mean(-1).cpu()  # (R,)
    test_err = err(pred[:, -Xte.shape[0]:], Yte)
    sel_err = test_err if select == "test" else err(pred[:, :Xsel.shape[0]], Ysel)
    i = int(torch.argmin(torch.nan_to_num(sel_err, nan=math.inf)))
    f0 = networks.forward(arch, {n: v[None] for n, v in p.items()}, Xte)[0]
    return dict(arch=arch, mode=mode, m=m, k=k, seed=seed, init=init, coupling=coupling if mode == "ntk" else "-",
                solver=solver, n_features=n_feat, n_train=n_train, n_fit=Xtr.shape[0], n_test=Xte.shape[0],
                select=select, ridge_rel=ridges[i], ridge=ridges[i] * scale,
                wd_equivalent=ridges[i] * scale / Xtr.shape[0],
                ridge_at_grid_edge=bool(_grid_edges({"ridge_rel": ridges}, {"ridge_rel": ridges[i]}, {},
                                                    {(r,): float(e) for r, e in zip(ridges, sel_err)})),
                test_error=float(test_err[i]), train_error=float(err(pred_tr[i:i + 1], Ytr)[0]),
                sel_error=float(sel_err[i]), f0_test_error=float(err(f0[None], Yte)[0]),
                seconds=round(time.perf_counter() - t0, 2),
                path=[(ridges[j], float(sel_err[j]), float(test_err[j])) for j in range(len(ridges))])
