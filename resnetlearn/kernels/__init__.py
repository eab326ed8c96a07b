"""Kernel methods, done exactly (ResNet paper §3.1–3.2, §7; arXiv v3 §8.1).

A kernel method predicts 𝔎(x) = Σ_n K(x, x_n)·a_n (eq 3.1); this module
computes the Gram matrices K(x, x'), :mod:`resnetlearn.kernels.ridge` solves for the
coefficients (kernel ridge regression, eq 3.2), :mod:`resnetlearn.kernels.registry`
names the kernels and their grids, :mod:`resnetlearn.kernels.experiments` runs them.

Kernels (all Gram matrices in float64), one entry each in
:data:`resnetlearn.kernels.registry.KERNEL_REGISTRY` (name → Gram function,
accepted keywords, label, the hyperparameter grid the experiments search, memory need):

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
  variance σ_b², by the arc-cosine recursion. No infinite-width kernel is
  named after the §6 ResNet the experiments train (``3resnet``: shared A,
  bottleneck V with k columns), and whether its empirical NTK settles depends
  on the scaling (:func:`ntk_spread`): with fan-in scaled weights it keeps a
  seed-to-seed spread at any width; under §8.1's N(0, 1/m) entries, what the
  experiments use, its spread shrinks like 1/√m.

Every architecture's kernel side follows from its one entry of
:data:`resnetlearn.learners.networks.ARCHITECTURES`: the hidden representation and the
back-propagated signals of the empirical NTK from its layer graph (evaluated in
float64 with the parameterisation's multipliers); the infinite-width recursions are the kernels' own
(:data:`resnetlearn.kernels.recursions.RECURSIONS`); :func:`network_archs` and :func:`infinite_archs` read
which architectures have kernels here when asked.

On the hypercube all these inner-product kernels act degree by degree on
parities, which is why none of them can learn the degree-8 composite signal
of the §8.1 instance from a few thousand samples (see :func:`parity_counts`).
"""

from __future__ import annotations

import itertools
import math

import torch

from .. import memory
from .. import validation as V
from ..learners import networks
from .recursions import NO_LIMIT, RECURSIONS

F64 = torch.float64
PARAMETERIZATIONS = ("standard", "ntk")
OUTPUTS = ("mean", "per_output", "full")


def network_archs() -> tuple[str, ...]:
    """Architectures of :data:`resnetlearn.learners.networks.ARCHITECTURES` with conjugate and empirical NTK
    kernels here (``kernels=True``: not §8.2's 2layer_signs), read from the registry at each call."""
    return tuple(n for n, a in networks.ARCHITECTURES.items() if a.kernels)


def infinite_archs() -> tuple[str, ...]:
    """Architectures with an infinite-width limit here (a recursion in :data:`RECURSIONS`: not the §6 ``3resnet``,
    see :func:`ntk_spread`), in the reverse order of :data:`resnetlearn.learners.networks.ARCHITECTURES`."""
    return tuple(n for n in reversed(networks.ARCHITECTURES) if n in RECURSIONS)


# ----------------------------------------------------------------- checks
def as_matrix(X, name="X") -> torch.Tensor:
    """X as a finite float64 2-d (N, d) tensor (the inputs of every Gram function and ridge solver here),
    or a TypeError/ValueError that names ``name``."""
    if not isinstance(X, torch.Tensor):
        try:
            X = torch.as_tensor(X)
        except (TypeError, ValueError, RuntimeError) as e:
            raise TypeError(f"{name} must be a 2-d (N, d) tensor or array, got {type(X).__name__}") from e
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-d (N, d) tensor, got shape {tuple(X.shape)}")
    return V.tensor(name, X.to(F64), ndim=2)


def as_targets(Y, n: int, name="Y") -> torch.Tensor:
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
    X1 = as_matrix(X1, "X1")
    X2 = X1 if X2 is None else as_matrix(X2, "X2")
    if X2 is not X1:
        V.compatible("X1", X1, "X2", X2, what="dimension d")
    check_gram_memory(X1.shape[0], X2.shape[0], device=X1.device)
    return X1, X2


def check_gram_memory(n1: int, n2: int, *, copies: int = 3, device=None) -> None:
    """Refuse (:class:`resnetlearn.memory.InsufficientMemoryError`, a ValueError) an n1×n2 kernel
    computation whose ``copies`` float64 matrices would not fit in the memory available on ``device``
    (the inputs' device: GPU memory for CUDA tensors, RAM otherwise; :func:`resnetlearn.memory.check_memory`),
    naming the number of samples that fits."""
    n1, n2 = V.integer("n1", n1, lo=0), V.integer("n2", n2, lo=0)
    square = n1 == n2  # an N×N Gram matrix: name the N that fits
    memory.check_memory(memory.gram_bytes(n1, n2, copies), what=f"a {n1}×{n2} kernel computation ({copies} float64 "
                        "copies)", width_name="N (samples)" if square else None, width=n1 if square else None,
                        need_at=(lambda n: memory.gram_bytes(n, n, copies)) if square else None, device=device)


def check_network_memory(arch: str, n_points: int, *, k: int, m: int, device=None) -> None:
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
    h_paper = 2h², so both name the same family.
    :func:`resnetlearn.kernels.experiments.kernel_errors`
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
def _mults(arch, p, parameterization, *, sigma_w2=1.0, sigma_b2=1.0):
    """Per-parameter output multipliers: 1 (standard, as the paper's networks)
    or σ_w/√fan_in for weights and σ_b for biases (NTK parameterisation; the biases are those of
    the architecture's layer graph, :attr:`resnetlearn.learners.networks.Architecture.bias_of`)."""
    V.choice("parameterization", parameterization, PARAMETERIZATIONS)
    sw, sb = _sigmas(sigma_w2, sigma_b2)
    if parameterization == "standard":
        if (sw, sb) != (1.0, 1.0):
            raise ValueError("sigma_w2 and sigma_b2 apply to parameterization='ntk' only; the standard "
                             "parameterisation takes the weights as drawn")
        return {n: 1.0 for n in p}
    biases = set(networks.ARCHITECTURES[arch].bias_of.values())
    return {n: (math.sqrt(sb) if n in biases else math.sqrt(sw / p[n].shape[1])) for n in p}


class _Float64Ops:
    """The ops of :func:`resnetlearn.learners.networks.evaluate` for one model in float64, each parameter
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


def _uses(arch, p, X, *, mult, act):
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


def check_arch(arch, allowed, *, what: str) -> networks.Architecture:
    """The :class:`resnetlearn.learners.networks.Architecture` named ``arch`` if it is one of ``allowed`` (e.g.
    :func:`network_archs`), else a ValueError naming ``what`` kernel is missing and, where the
    kernels say why it has none (:data:`NO_LIMIT`), why."""
    known = networks.ARCHITECTURES
    if isinstance(arch, str) and arch in known and arch not in allowed and NO_LIMIT.get(arch):
        raise ValueError(f"no {what} kernel for arch {arch!r}: {NO_LIMIT[arch]}; allowed: {allowed}")
    V.choice("arch", arch, allowed)
    return known[arch]


def single_model(params: dict, arch: str, d: int | None = None) -> dict:
    """The float64 parameters of one model of ``arch`` (a leading model axis of size 1, as
    :func:`resnetlearn.learners.networks.init_params` draws, is dropped), checked against the architecture's
    parameter names and, if given, the input dimension ``d``."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of tensors, got {type(params).__name__}")
    rec = networks.ARCHITECTURES[arch]
    biases = set(rec.bias_of.values())
    out = {}
    for n, v in params.items():
        v = torch.as_tensor(v).to(F64)
        if v.ndim == (1 if n in biases else 2) + 1:
            if v.shape[0] != 1:
                raise ValueError(f"params: pass the parameters of a single model (model axis of size 1), "
                                 f"got {n} of shape {tuple(v.shape)}")
            v = v[0]
        out[n] = V.tensor(f"params[{n!r}]", v)
    want = set(networks.param_shapes(arch, 1, 1, 2))
    if set(out) != want:
        raise ValueError(f"params for arch {arch!r} must hold {sorted(want)}, got {sorted(out)}")
    first = next(la.weight for la in rec.layers if la.inp == "x")  # the layer that reads the input
    if d is not None and out[first].shape[1] != d:
        raise ValueError(f"inputs have d = {d} but the network (params) expects d = {out[first].shape[1]}")
    return out


def _network(arch, X, params, *, m, k, seed, init, n_points):
    """One model's float64 parameters: ``params`` as given, or drawn as :func:`networks.init_params` does
    (after checking that a width-m network and its kernel on ``n_points`` inputs fit in memory)."""
    if params is not None:
        if any(v is not None for v in (m, k, seed, init)):
            raise ValueError("pass either params or (m, k, seed, init), not both")
        return single_model(params, arch, X.shape[1])
    m = V.integer("m", 1000 if m is None else m, lo=1)
    k = V.integer("k", 1 if k is None else k, lo=1)
    seed = V.seeds("seed", 0 if seed is None else seed)[0]
    init = V.choice("init", "paper" if init is None else init, networks.INITS)
    check_network_memory(arch, n_points, k=k, m=m, device=X.device)
    return single_model(networks.init_params(arch, d=X.shape[1], k=k, m=m, seeds=[seed], init=init, dtype=F64), arch)


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
    entry = check_arch(arch, network_archs(), what="features")
    X = as_matrix(X)
    p = single_model(params, arch, X.shape[1])
    return _forward(entry.name, p, X, _mults(arch, p, parameterization, sigma_w2=sigma_w2, sigma_b2=sigma_b2))["phi"]


def conjugate(X1, X2=None, arch: str = "2layer", *, m: int | None = None, k: int | None = None,
              seed: int | None = None, init: str | None = None, params: dict | None = None) -> torch.Tensor:
    """The conjugate kernel ⟨φ(x), φ(x')⟩ of a network at initialisation
    (arXiv v3 §8.1 "last", Daniely's conjugate kernel [12]); φ is
    :func:`features`. ``params`` (one model) or (m = 1000, k = 1, seed = 0,
    init = "paper") define the network; for the §6 ResNet φ depends on A₀,
    hence on k."""
    check_arch(arch, network_archs(), what="conjugate")
    X1, X2 = _pair(X1, X2)
    p = _network(arch, X1, params, m=m, k=k, seed=seed, init=init,
                 n_points=X1.shape[0] + (0 if X2 is X1 else X2.shape[0]))
    f1 = features(arch, p, X1)
    f2 = f1 if X2 is X1 else features(arch, p, X2)
    return f1 @ f2.T


def _ntk_parts(arch, p, X1, X2, *, mult):
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
    check_arch(arch, network_archs(), what="ntk")
    outputs = V.choice("outputs", outputs, OUTPUTS)
    X1, X2 = _pair(X1, X2)
    p = _network(arch, X1, params, m=m, k=k, seed=seed, init=init,
                 n_points=X1.shape[0] + (0 if X2 is X1 else X2.shape[0]))
    mult = _mults(arch, p, parameterization, sigma_w2=sigma_w2, sigma_b2=sigma_b2)
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


def jacobian(arch: str, params: dict, X, *, parameterization: str = "standard", sigma_w2: float = 1.0,
             sigma_b2: float = 1.0) -> torch.Tensor:
    """The explicit Jacobian ∂f_c(x_n)/∂θ as (k, N, P), P = all parameters
    (flattened in the order of ``params``); Θ_full = J Jᵀ. For small networks
    (the primal form of the NTK regression)."""
    check_arch(arch, network_archs(), what="jacobian")
    X = as_matrix(X)
    p = single_model(params, arch, X.shape[1])
    mult = _mults(arch, p, parameterization, sigma_w2=sigma_w2, sigma_b2=sigma_b2)
    k, N = p["A"].shape[0], X.shape[0]
    check_gram_memory(k * N, sum(v.numel() for v in p.values()), copies=2, device=X.device)
    bias_of = networks.ARCHITECTURES[arch].bias_of
    blocks = {}
    for name, us in _uses_of(arch, p, X, mult).items():
        blocks[name] = mult[name] * sum(torch.einsum("cni,nj->cnij", d, inp) for d, inp in us).reshape(k, N, -1)
        if name in bias_of:
            blocks[bias_of[name]] = mult[bias_of[name]] * sum(d for d, _ in us)
    return torch.cat([blocks[n] for n in p], dim=2)


def _uses_of(arch, p, X, mult):
    return _uses(arch, p, X, mult=mult, act=_forward(arch, p, X, mult))


def vjp(arch: str, p: dict, X: torch.Tensor, coef: torch.Tensor) -> dict:
    """Jᵀ·coef = Σ_{c,n} coef[c, n]·∇_θ f_c(x_n), as a dict like ``p`` (coef: (k, N)), J the Jacobian of
    the network ``arch`` with the float64 parameters ``p`` of one model (:func:`single_model`) on the
    inputs X (N, d), standard parameterisation: the displacement θ − θ₀ = Jᵀa of a dual NTK solution."""
    mult = {n: 1.0 for n in p}
    out, bias_of = {}, networks.ARCHITECTURES[arch].bias_of
    for name, us in _uses_of(arch, p, X, mult).items():
        out[name] = mult[name] * sum(torch.einsum("cn,cni,nj->ij", coef, d, inp) for d, inp in us)
        if name in bias_of:
            out[bias_of[name]] = mult[bias_of[name]] * sum(torch.einsum("cn,cni->i", coef, d) for d, _ in us)
    return out


def jvp(arch: str, p: dict, X: torch.Tensor, delta: dict) -> torch.Tensor:
    """J·δ = ⟨∇_θ f_c(x_n), δ⟩ as (k, N) for a parameter displacement δ (a dict like ``p``), J as in
    :func:`vjp`: the linearised network's change f₀ + J·δ on new inputs without a test Gram matrix."""
    mult = {n: 1.0 for n in p}
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
    check_arch(arch, network_archs(), what="ntk")
    widths = [V.integer(f"widths[{i}]", w, lo=1) for i, w in enumerate(V.sequence("widths", widths))]
    if not widths:
        raise ValueError("widths must name at least one width")
    seeds = V.seeds("seeds", seeds)
    if len(seeds) < 2:
        raise ValueError(f"seeds must name at least two seeds to measure a spread, got {seeds}")
    k = V.integer("k", k, lo=1)
    init = V.choice("init", init, networks.INITS)
    parameterization = V.choice("parameterization", parameterization, PARAMETERIZATIONS)
    X = as_matrix(X)
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


# ----------------------------------------------------------------- infinite width
def infinite_width(X1, X2=None, arch: str = "2layer", *, sigma_w2: float = 1.0, sigma_b2: float = 1.0,
                   block: int = 128) -> tuple[torch.Tensor, torch.Tensor]:
    """(NNGP, NTK) of an infinitely wide ReLU network with one output.

    NTK parameterisation: weights N(0, 1) multiplied by σ_w/√fan_in, biases
    N(0, 1) multiplied by σ_b (no output bias). The first layer gives
    Σ₁ = Θ₁ = σ_w²·x·x'/d + σ_b²; a ReLU then a dense layer map (Σ, Θ) to
    Σ' = σ_w²κ₁(Σ) + σ_b², Θ' = Σ' + σ_w²κ₀(Σ)·Θ (κ: :func:`~resnetlearn.kernels.recursions.relu_moments`);
    the output layer to (σ_w²κ₁(Σ), σ_w²κ₁(Σ) + σ_w²κ₀(Σ)·Θ). σ_w² = σ_b² = 1
    is the convention used before these became parameters.

    ``3resnet_eq21`` is the limit of eq 2.1 as written, out = A(σ(h₁) + σ(h₂)),
    h₂ = Uσ(h₁) + b₂ with U m×m: the sum of the 2layer branch's and the 3layer
    branch's kernels plus the cross term of the branches' means,
    σ_w²(μ₁(x)μ₂(x') + μ₂(x)μ₁(x')) with μ(x) = E σ(h) = √(Σ(x,x)/2π). No limit
    is computed here for the §6 ``3resnet`` the experiments train: in this
    parameterisation (fan-in) its empirical NTK keeps a seed-to-seed spread at
    any width (:func:`ntk_spread`).
    Rows are processed in blocks of ``block``.
    """
    check_arch(arch, infinite_archs(), what="infinite-width")
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
        nngp[s:s + block], ntk_[s:s + block] = RECURSIONS[arch](S1, sw * (x**2).sum(1) / d + sb, qb, sw=sw, sb=sb)
    return nngp, ntk_


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


def parity_reach(gram, centers, k: int) -> tuple[torch.Tensor, int]:
    """Rank counting, the argument behind the kernel lower bound (arXiv v3 §7.1 and
    Appendix D, Lemma D.2): how much of each degree-k parity the span of N kernel
    sections K(·, x_n) can reach, measured on the whole cube {±1/√d}^d of the §7
    hard instance (d = ``centers.shape[1]`` ≤ 16).

    ``gram(X1, X2)`` returns the Gram matrix of any kernel; ``centers`` are the N
    sample points x_n. For every S ⊆ [d] with |S| = k (in ``itertools.combinations``
    order) the result holds ‖P χ_S‖² / ‖χ_S‖², P the orthogonal projection (uniform
    measure on the cube) onto span{K(·, x_n)}: the largest share of χ_S that any
    weights w in Σ_n K(x, x_n) w_n can fit, even weights chosen knowing S. The χ_S
    are orthonormal, so these fractions sum to at most the span's rank (returned
    second, ≤ N): on average over the C(d, k) parities at most N / C(d, k),
    whatever the kernel."""
    centers = as_matrix(centers, "centers").to(F64)
    d = centers.shape[1]
    if d > 16:
        raise ValueError(f"parity_reach enumerates the cube {{±1/√d}}^d: d must be at most 16, got d={d}")
    k = V.integer("k", k, lo=0, hi=d)
    signs = torch.tensor(list(itertools.product((-1.0, 1.0), repeat=d)), dtype=F64)
    sections = torch.as_tensor(gram(signs / math.sqrt(d), centers), dtype=F64)  # 2^d × N
    if sections.shape != (signs.shape[0], centers.shape[0]):
        raise ValueError(f"gram returned shape {tuple(sections.shape)}, expected {(signs.shape[0], centers.shape[0])}")
    U, s, _ = torch.linalg.svd(sections, full_matrices=False)
    U = U[:, s > s[0] * 1e-10] if s.numel() and s[0] > 0 else U[:, :0]  # orthonormal basis of the span
    parities = torch.stack([signs[:, list(S)].prod(1) for S in itertools.combinations(range(d), k)], 1)
    parities /= math.sqrt(signs.shape[0])  # unit norm in ℝ^{2^d}
    return ((U.T @ parities) ** 2).sum(0), U.shape[1]
