"""The learner networks of the paper, batched over many models at once.

ResNet paper eq 2.1 and §6, arXiv v3 §8.1:

* ``3resnet`` (§6 form, the default): out₁(x) = A·σ(W x + b₁) and
  out(x) = out₁(x) + A·σ(V·out₁(x) + b₂), i.e. eq 2.1 with the bottleneck
  U = V·A (V is m×k). out₁ is the first block, A·σ(V·out₁ + b₂) the residual branch.
* ``3resnet_eq21``: eq 2.1 as written, out = A(σ(h₁) + σ(U σ(h₁) + b₂)), h₁ = W x + b₁, U m×m.
* ``3layer``: A·σ(V σ(W x + b₁) + b₂);  ``2layer``: A·σ(W x + b₁).
* ``2layer_signs``: aᵀσ(W x) without bias and with a ∈ {±1/√m}^m, exactly m/2 of
  each sign (arXiv v3 §8.2, Figure 4); meant to be trained in mode ``hidden``.

σ is the ReLU. Every parameter tensor carries a leading model axis G, so
G independent networks (different seeds, learning rates, ...) run as one
batched program (``torch.baddbmm``). Each model's initial weights come from
its own seed, so a model gets the same numbers inside a batch as alone.

Initialisation (arXiv v3 §8.1): all entries of A, W, V/U and the biases
i.i.d. N(0, 1/m) (``init="paper"``); the footnote's alternative, standard
deviation 1/√fan_in, is ``init="fan_in"``. ``init="companion"`` follows the
companion paper (§3 and §4, "Learning Process"): hidden weights and biases
N(0, 1/m) as in the paper, but the output layer A drawn N(0, ε_a²) with
ε_a = 1 — the value its three-layer theorem fixes and the largest its
two-layer theorem allows. ``init="ntk"`` is the NTK scaling of Yuanzhi Li's talk
(``beyond-kernels.talk-slides.md``, the two-layer slide after "The theorem is quite simple"):
for f = Σ_i a_i ReLU(⟨w_i, x⟩) it states "a_i ∼ N(0, 1), w_i⁽⁰⁾ ∼ N(0, 2/m)", with the output O(1)
at initialisation by cancellation; the NTK theorem slide (ALS'18) asks for N(0, 2/m) "for each
parameter in each hidden neuron". Here: A ∼ N(0, 1) and every hidden weight and bias (W, b₁, V,
U, b₂) ∼ N(0, 2/m). The talk's inputs lie on the unit ball (its slides "Theorem (AL'19)"; the
two-layer slide's ⟨w_i⁽⁰⁾, x⟩ ≈ 1/√m): feed it x/‖x‖ (``experiments.unit_inputs``, ``unit_norm=True``), and
each ``2layer`` output has variance 2 at initialisation at every m (E ReLU(h)² = Var h / 2,
Var h = 2(‖x‖² + 1)/m, summed over m units with readout variance 1). On §8.1's raw x ∈ {±1}^30
(‖x‖² = 30) that variance is still independent of m but about 31 per output, 465 summed over 15.
It is not the initialisation of Theorem 1 (NeurIPS §6, Table 1: A ∼ N(0, 1/m), W⁽⁰⁾ ∼ N(0, σ_w²)
with σ_w ∈ [m^(−1/2+0.01), m^(−0.01)], V⁽⁰⁾ ∼ N(0, σ_v²/m) with σ_v ∈ [polylog m, m^(3/8−0.01)]).

Every architecture is one entry of :data:`ARCHITECTURES`: its layer graph (from which the
parameters, their shapes, the forward pass and the empirical NTK's back-propagated signals
follow) and its output split. :func:`forward` is the network
trained in modes ``all`` and ``hidden``; the models of modes ``last`` and ``ntk`` are evaluated
by :meth:`resnetlearn.learners.training.TrainResult.predict`.

The NTK mode needs the network linearised at its initialisation,
f₀(x) + ⟨∇_θ f₀(x), θ − θ₀⟩. :func:`forward` can push a tangent (θ − θ₀)
through the network alongside the primal pass (forward-mode by hand: for a
dense layer d(Wx+b) = dW·x + W·dx + db, and dσ(h) = 1[h > 0]·dh), which
autograd then differentiates like any other function.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch

from ..validation import FloatDtype, Interval, Options, Seeds, validate_params


# ----------------------------------------------------------------- the layer graph
@dataclass(frozen=True)
class Layer:
    """One step of a network's layer graph: node ``out`` computed from node ``inp``.

    Parameters
    ----------
    kind : {"dense", "relu", "readout"}
        ``"dense"``: weight·inp + bias; ``"relu"``: σ(inp); ``"readout"``: A·inp with the output layer A (shared by
        every readout of a network).
    out : str
        The node computed.
    inp : str
        The node it reads (``"x"``: the input).
    weight : str or None, default None
        A dense layer's weight.
    bias : str or None, default None
        A dense layer's bias (None: no bias).
    """

    kind: str
    out: str
    inp: str
    weight: str | None = None
    bias: str | None = None


    @property
    def params(self) -> tuple[str, ...]:
        """The parameters this layer reads: a dense layer's weight and bias, a readout's A."""
        if self.kind == "readout":
            return ("A",)
        return tuple(n for n in (self.weight, self.bias) if n)


def dense(out: str, inp: str, weight: str, bias: str | None) -> Layer:
    """A dense layer ``out`` = weight·``inp`` + bias.

    Parameters
    ----------
    out : str
        The node computed.
    inp : str
        The node read (``"x"``: the input).
    weight : str
        The weight's name.
    bias : str or None
        The bias's name (None: no bias).

    Returns
    -------
    Layer
        The layer.
    """
    return Layer("dense", out, inp, weight=weight, bias=bias)


def relu(out: str, inp: str) -> Layer:
    """A ReLU layer ``out`` = σ(``inp``).

    Parameters
    ----------
    out : str
        The node computed.
    inp : str
        The node read.

    Returns
    -------
    Layer
        The layer.
    """
    return Layer("relu", out, inp)


def readout(out: str, inp: str) -> Layer:
    """A readout ``out`` = A·``inp`` with the network's output layer A.

    Parameters
    ----------
    out : str
        The node computed.
    inp : str
        The node read.

    Returns
    -------
    Layer
        The layer.
    """
    return Layer("readout", out, inp)


@functools.cache
def _plan(arch: str, want: tuple[str, ...] | None) -> tuple[Layer, ...]:
    """The layers of ``arch`` that the nodes ``want`` (None: both outputs) depend on, in order."""
    rec = ARCHITECTURES[arch]
    need = set(want or [n for n in (rec.out1, rec.res) if n])
    for layer in reversed(rec.layers):
        if layer.out in need:
            need.add(layer.inp)
    return tuple(la for la in rec.layers if la.out in need)


def evaluate(arch: str, ops, x, want=None) -> dict:
    """Every node of ``arch``'s layer graph that ``want`` depends on, computed by ``ops``.

    The one definition of every forward pass: the batched training forward, the kernels' float64 forward
    (:mod:`resnetlearn.kernels`) and the talk's frozen-gate network (:func:`gated_forward_parts`) are this graph under
    other ops.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    ops : object
        Computes each kind of layer: ``ops.dense(x, weight, bias)`` (parameter names), ``ops.relu(h)``,
        ``ops.readout(a)``.
    x : object
        The input, as ``ops`` takes it.
    want : iterable of str or None, default None
        The nodes wanted (None: both outputs, ``out1`` and ``res``).

    Returns
    -------
    dict
        Node name → value, ``"x"`` the input.

    Raises
    ------
    ValueError
        ``arch`` is not an architecture.
    """
    v = {"x": x}
    for layer in _plan(check_arch(arch), None if want is None else tuple(want)):
        if layer.kind == "dense":
            v[layer.out] = ops.dense(v[layer.inp], layer.weight, layer.bias)
        elif layer.kind == "relu":
            v[layer.out] = ops.relu(v[layer.inp])
        else:
            v[layer.out] = ops.readout(v[layer.inp])
    return v


# ----------------------------------------------------------------- the architectures
@dataclass(frozen=True)
class Architecture:
    """One learner network: everything the package knows about it, in one entry of :data:`ARCHITECTURES`.

    Parameters
    ----------
    name : str
        Its name, its key in :data:`ARCHITECTURES`.
    formula : str
        Its formula, as tables print it.
    layers : tuple of Layer
        The layer graph, which fixes the parameters and their shapes (hidden dense layers have width m, a readout k
        outputs), the forward pass (:func:`evaluate`) and the back-propagated signals of the empirical NTK (derived
        from it in :mod:`resnetlearn.kernels`).
    out1 : str
        The first output node.
    res : str or None, default None
        The residual output node, out = out₁ + residual (None: a plain network, out = out₁). The readout reads φ₁
        (the input of ``out1``) and φ₂ (that of ``res``).
    signs_readout : bool, default False
        A is fixed at ±1/√m, m/2 of each sign (arXiv v3 §8.2), not drawn.
    kernels : bool, default True
        The network has conjugate and empirical NTK kernels in :mod:`resnetlearn.kernels`.
    """

    name: str
    formula: str
    layers: tuple[Layer, ...]
    out1: str
    res: str | None = None
    signs_readout: bool = False
    kernels: bool = True

    @property
    def residual(self) -> bool:
        """Whether out = out₁ + residual (the ResNets: training reports out₁ against β·F and the
        residual against α·G(F))."""
        return self.res is not None

    @property
    def phi_nodes(self) -> tuple[str, ...]:
        """The nodes the readout reads: φ₁ (the input of ``out1``) and, for the ResNets, φ₂ (that of ``res``)."""
        reads = {la.out: la.inp for la in self.layers if la.kind == "readout"}
        return tuple(reads[n] for n in (self.out1, self.res) if n)

    @property
    def bias_of(self) -> dict[str, str]:
        """Each dense weight → its bias."""
        return {la.weight: la.bias for la in self.layers if la.kind == "dense" and la.bias}

    def params_of(self, *nodes: str) -> set[str]:
        """The parameters the graph's ``nodes`` depend on.

        Parameters
        ----------
        *nodes : str
            Nodes of the graph (e.g. ``params_of(out1)``: the first block's parameters).

        Returns
        -------
        set of str
            The parameter names.
        """
        return {n for la in _plan(self.name, nodes) for n in la.params}

    @property
    def readout_params(self) -> set[str]:
        """The output layer's parameters (A), which modes ``hidden`` and ``last`` tell apart (§8.1)."""
        return {n for la in self.layers if la.kind == "readout" for n in la.params}

    def shapes(self, d: int, k: int, m: int) -> dict[str, tuple[int, ...]]:
        """The shapes of one model's parameters, read from the layer graph at any width.

        Unlike :func:`param_shapes`, nothing is checked (an odd m is allowed for ``signs_readout``).

        Parameters
        ----------
        d : int
            The input dimension.
        k : int
            The number of outputs.
        m : int
            The width.

        Returns
        -------
        dict of str to tuple of int
            Parameter name → shape (without the model axis).
        """
        width = {"x": d}
        out = {}
        for la in self.layers:
            width[la.out] = k if la.kind == "readout" else m if la.kind == "dense" else width[la.inp]
            if la.kind == "dense":
                out[la.weight] = (m, width[la.inp])
                if la.bias:
                    out[la.bias] = (m,)
        out["A"] = (k, m)
        return out


_BLOCK1 = (dense("h1", "x", "W", "b1"), relu("a1", "h1"))
ARCHITECTURES: dict[str, Architecture] = {a.name: a for a in (
    Architecture("3resnet", "out₁ + A·σ(V·out₁ + b₂), out₁ = A·σ(W x + b₁) (§6: shared A, V m×k); "
                 "φ₀ = σ(h₁) + σ(V·A₀·σ(h₁) + b₂)",
                 _BLOCK1 + (readout("out1", "a1"), dense("h2", "out1", "V", "b2"), relu("a2", "h2"),
                            readout("res", "a2")), out1="out1", res="res"),
    Architecture("3resnet_eq21", "A(σ(h₁) + σ(Uσ(h₁) + b₂)) (eq 2.1 as written, U m×m); φ = σ(h₁) + σ(h₂)",
                 _BLOCK1 + (readout("out1", "a1"), dense("h2", "a1", "V", "b2"), relu("a2", "h2"),
                            readout("res", "a2")), out1="out1", res="res"),
    Architecture("3layer", "A·σ(V σ(h₁) + b₂); φ = σ(h₂)",
                 _BLOCK1 + (dense("h2", "a1", "V", "b2"), relu("a2", "h2"), readout("out1", "a2")), out1="out1"),
    Architecture("2layer", "A·σ(Wx + b₁); φ = σ(h₁)", _BLOCK1 + (readout("out1", "a1"),), out1="out1"),
    Architecture("2layer_signs", "aᵀσ(W x), a ∈ {±1/√m}^m fixed, m/2 of each sign (arXiv v3 §8.2)",
                 (dense("h1", "x", "W", None), relu("a1", "h1"), readout("out1", "a1")), out1="out1",
                 signs_readout=True, kernels=False),
)}
"""Every architecture, by name: adding one is one entry, its layer graph (its infinite-width recursion, if it has
one, is the kernels', :data:`resnetlearn.kernels.recursions.RECURSIONS`)."""
INITS = ("paper", "fan_in", "companion", "ntk")
ARCH = Options(ARCHITECTURES)
"""What a parameter naming an architecture accepts: a key of :data:`ARCHITECTURES` (read at each check)."""
POSITIVE = Interval(int, 1)


@validate_params({"arch": ARCH, "d": POSITIVE, "k": POSITIVE, "m": POSITIVE})

def param_shapes(arch: str, d: int, k: int, m: int) -> dict[str, tuple[int, ...]]:
    """Shapes of one model's parameters (without the model axis).

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    d : int
        The input dimension, >= 1.
    k : int
        The number of outputs, >= 1.
    m : int
        The width, >= 1 (even for an architecture with ``signs_readout``).

    Returns
    -------
    dict of str to tuple of int
        Parameter name → shape.

    Raises
    ------
    ValueError
        A value out of its range, or an odd m for ``2layer_signs``.
    """
    rec = ARCHITECTURES[arch]
    if rec.signs_readout and m % 2:  # the width against the architecture
        raise ValueError(f"{arch} needs an even width m (m/2 output weights of each sign), got {m}")
    return rec.shapes(d, k, m)


def check_arch(arch: str) -> str:
    """``arch`` if it names an architecture (:data:`ARCH`).

    For the functions that read an architecture from a parameter record rather than an argument.

    Parameters
    ----------
    arch : str
        The name to check.

    Returns
    -------
    str
        ``arch``.

    Raises
    ------
    ValueError
        ``arch`` is not a key of :data:`ARCHITECTURES`.
    """
    return ARCH.check("arch", arch)


@validate_params({"arch": ARCH, "seeds": Seeds(), "init": Options(INITS), "dtype": FloatDtype()})
def init_params(arch: str, d: int, k: int, m: int, seeds, init: str = "paper",
                device=None, dtype=torch.float32) -> dict[str, torch.Tensor]:
    """Stacked initial parameters for len(seeds) models (arXiv v3 §8.1).

    Drawn in float64 on the CPU from each model's own seed, then moved: identical across batch compositions and
    devices.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    d : int
        The input dimension, >= 1.
    k : int
        The number of outputs, >= 1.
    m : int
        The width, >= 1 (even for ``2layer_signs``).
    seeds : list of int
        One seed per model, each in [0, 2**63 - 1] (one int is a list of one).
    init : {"paper", "fan_in", "companion", "ntk"}, default "paper"
        ``"paper"``: every entry N(0, 1/m) (arXiv v3 §8.1); ``"fan_in"``: N(0, 1/fan_in) (its footnote);
        ``"companion"``: the paper's, with A ∼ N(0, 1) (the companion paper §3–§4, ε_a = 1); ``"ntk"``: the talk's NTK
        scaling, A ∼ N(0, 1) and every hidden weight and bias N(0, 2/m) (this module's docstring). The readout of
        ``2layer_signs`` is ±1/√m in every case.
    device : str, torch.device or None, default None
        Where the parameters are put (None: the CPU).
    dtype : torch.dtype, default torch.float32
        A floating dtype.

    Returns
    -------
    dict of str to torch.Tensor
        Parameter name → (G, ...) tensor, G = len(seeds).
    """
    shapes = param_shapes(arch, d, k, m)
    rec = ARCHITECTURES[arch]
    fan_in = {b: shapes[w][1] for w, b in rec.bias_of.items()} | {n: s[1] for n, s in shapes.items() if len(s) == 2}
    out = {name: [] for name in shapes}
    for seed in seeds:
        gen = torch.Generator().manual_seed(int(seed))
        for name, shape in shapes.items():
            if rec.signs_readout and name == "A":  # fixed ±1/√m, half of each sign (§8.2)
                signs = torch.ones(shape[1], dtype=torch.float64)
                signs[torch.randperm(shape[1], generator=gen)[: shape[1] // 2]] = -1
                out[name].append(signs.expand(shape).clone() / m**0.5)
                continue
            std = _std(init, name, fan_in[name], m)
            out[name].append(torch.randn(*shape, generator=gen, dtype=torch.float64) * std)
    return {n: torch.stack(v).to(device=device, dtype=dtype) for n, v in out.items()}


def _std(init: str, name: str, fan_in: int, m: int) -> float:
    """Standard deviation of parameter ``name``'s entries: N(0, 1/m) (``paper``, arXiv v3 §8.1),
    N(0, 1/fan_in) (``fan_in``, its footnote), the paper's with the readout A at ε_a = 1
    (``companion``, the companion paper §3-§4), or the talk's NTK scaling (``ntk``: A ∼ N(0, 1),
    every hidden weight and bias N(0, 2/m); talk slides, the two-layer "proper initialization")."""
    return {"paper": (1 / m) ** 0.5, "fan_in": fan_in ** -0.5,
            "companion": 1.0 if name == "A" else (1 / m) ** 0.5,
            "ntk": 1.0 if name == "A" else (2 / m) ** 0.5}[init]


# ----------------------------------------------------------------- the batched training forward
def _dense(x, W, b, *, dx=None, dW=None, db=None):
    """h = x Wᵀ + b batched over models (b may be None: no bias); with tangents, also dh."""
    h = torch.bmm(x, W.transpose(1, 2)) if b is None else torch.baddbmm(b.unsqueeze(1), x, W.transpose(1, 2))
    if dW is None:
        return h, None
    dh = torch.bmm(x, dW.transpose(1, 2)) if db is None else torch.baddbmm(db.unsqueeze(1), x, dW.transpose(1, 2))
    if dx is not None:
        dh = dh + torch.bmm(dx, W.transpose(1, 2))
    return h, dh


def _relu(h, dh):
    return torch.relu(h), None if dh is None else dh * (h > 0).to(dh.dtype)


class _Batched:
    """The ops of :func:`evaluate` for G models at once (``torch.baddbmm`` over the model axis), on
    (value, tangent) pairs: with a ``tangent`` dict like ``p`` the tangent is pushed forward too."""

    def __init__(self, p: dict, tangent: dict | None = None):
        self.p, self.t, self.tg = p, tangent or {}, tangent is not None
        self.A = p["A"].transpose(1, 2)

    def dense(self, x, weight, bias):
        return _dense(x[0], self.p[weight], self.p.get(bias), dx=x[1], dW=self.t.get(weight), db=self.t.get(bias))

    def relu(self, h):
        return _relu(*h)

    def readout(self, a):
        o = torch.bmm(a[0], self.A)
        if not self.tg:
            return o, None
        return o, torch.bmm(a[1], self.A) + torch.bmm(a[0], self.t["A"].transpose(1, 2))


def batched_inputs(p: dict, x) -> torch.Tensor:
    """``x`` as (G, n, d) for the G models of ``p``.

    Parameters
    ----------
    p : dict of str to torch.Tensor
        The parameters of G models, each with a leading model axis G (:func:`init_params`).
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.

    Returns
    -------
    torch.Tensor
        x, (G, n, d) (a shared x is expanded, not copied).

    Raises
    ------
    TypeError
        x is not a tensor.
    ValueError
        x has another rank, another dimension than the d the first layer W (G, m, d) takes, or a model axis other
        than G; the error names both.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor of shape (n, d) or (G, n, d), got {type(x).__name__}")
    G, d = p["A"].shape[0], p["W"].shape[-1]
    if x.ndim not in (2, 3):
        raise ValueError(f"x must have shape (n, d) or (G, n, d), got {tuple(x.shape)}")
    if x.shape[-1] != d:
        raise ValueError(f"x has dimension {x.shape[-1]} (shape {tuple(x.shape)}) but the networks take inputs "
                         f"of dimension d = {d} (W of shape {tuple(p['W'].shape)})")
    if x.ndim == 3 and x.shape[0] != G:
        raise ValueError(f"x of shape {tuple(x.shape)} has {x.shape[0]} models on its first axis but there are "
                         f"G = {G} networks; pass (n, d) to share x, or (G, n, d)")
    return x.unsqueeze(0).expand(G, *x.shape) if x.ndim == 2 else x


def forward_parts(arch: str, p: dict, x: torch.Tensor, tangent: dict | None = None):
    """(out₁, residual) for the ResNets, (out, 0) for the plain networks.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p : dict of str to torch.Tensor
        The parameters of G models, each with a leading model axis G (:func:`init_params`).
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.
    tangent : dict of str to torch.Tensor or None, default None
        A displacement like ``p``, pushed forward alongside the primal pass (forward mode by hand).

    Returns
    -------
    tuple
        (out₁, residual), each (G, n, k); with ``tangent``, ((out₁, dout₁), (res, dres)).
    """
    rec = ARCHITECTURES[check_arch(arch)]
    v = evaluate(arch, _Batched(p, tangent), (batched_inputs(p, x), None))
    first = v[rec.out1]
    if rec.res is None:
        zero = torch.zeros_like(first[0])
        second = (zero, zero if tangent is not None else None)
    else:
        second = v[rec.res]
    return (first, second) if tangent is not None else (first[0], second[0])


def activations(arch: str, p: dict, x: torch.Tensor) -> dict[str, torch.Tensor]:
    """Every pre-activation and activation of the G models on ``x``, by node of the layer graph.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p : dict of str to torch.Tensor
        The parameters of G models, each with a leading model axis G (:func:`init_params`).
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.

    Returns
    -------
    dict of str to torch.Tensor
        Node (``h1``, ``a1``, …, ``out1``, and ``res`` for the ResNets) → (G, n, width).
    """
    rec = ARCHITECTURES[check_arch(arch)]
    v = evaluate(arch, _Batched(p), (batched_inputs(p, x), None), [la.out for la in rec.layers])
    return {n: t[0] for n, t in v.items() if n != "x"}


def forward(arch: str, p: dict, x: torch.Tensor) -> torch.Tensor:
    """out(x) for every model: the network trained in modes ``all`` and ``hidden``.

    After mode ``last`` or ``ntk`` the trained model is not this function of the returned parameters (a readout on
    the initial features; the linearisation at θ₀): evaluate those with
    :meth:`resnetlearn.learners.training.TrainResult.predict`.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p : dict of str to torch.Tensor
        The parameters of G models, each with a leading model axis G (:func:`init_params`).
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.

    Returns
    -------
    torch.Tensor
        The outputs, (G, n, k).
    """
    out1, res = forward_parts(arch, p, x)
    return out1 + res


def forward_linearized(arch: str, p0: dict, delta: dict, x: torch.Tensor):
    """The network linearised at p0 (the NTK model): f(p0) + J(p0)·delta.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p0 : dict of str to torch.Tensor
        The parameters it is linearised at, (G, ...) each.
    delta : dict of str to torch.Tensor
        The displacement θ − θ₀, a dict like ``p0``.
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.

    Returns
    -------
    out : torch.Tensor
        The linearised output, (G, n, k).
    out1 : torch.Tensor
        Its out₁ part, (G, n, k).
    residual : torch.Tensor
        Its residual part, (G, n, k).
    """
    (o1, do1), (r, dr) = forward_parts(arch, p0, x, tangent=delta)
    return o1 + r + do1 + dr, o1 + do1, r + dr


def readout_features(arch: str, p: dict, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The hidden representations the output layer A reads: (φ₁, φ₂).

    out₁ = A·φ₁ and residual = A·φ₂ (φ₂ = 0 for the plain networks). With ``p`` the initial weights, φ = φ₁ + φ₂ is
    the random feature map of the conjugate kernel (§3.1; training only the readout is regression on it, mode
    ``last``). For the §6 ResNet, A also sits inside the residual's input (V·out₁ = V·A·φ₁), so
    φ₂ = σ(V·A₀·φ₁ + b₂) uses the *initial* A₀: a readout trained on these features does not change them, as a kernel
    method must not.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p : dict of str to torch.Tensor
        The parameters of G models, each with a leading model axis G (:func:`init_params`).
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.

    Returns
    -------
    phi1 : torch.Tensor
        φ₁, (G, n, m).
    phi2 : torch.Tensor
        φ₂, (G, n, m).
    """
    rec = ARCHITECTURES[check_arch(arch)]
    v = evaluate(arch, _Batched(p), (batched_inputs(p, x), None), rec.phi_nodes)
    phi1 = v[rec.phi_nodes[0]][0]
    return phi1, v[rec.phi_nodes[1]][0] if rec.res else torch.zeros_like(phi1)


def features(arch: str, p: dict, x: torch.Tensor, A0: torch.Tensor | None = None) -> torch.Tensor:
    """φ = φ₁ + φ₂ of :func:`readout_features`, the representation the readout A acts on.

    Plain networks and eq 2.1: out = A·φ exactly, with φ = σ(h₁) (2layer, 2layer_signs), σ(Vσ(h₁) + b₂) (3layer),
    σ(h₁) + σ(Uσ(h₁) + b₂) (3resnet_eq21). The §6 ``3resnet`` uses A twice (out₁ = A·σ(h₁) feeds the second block),
    so φ is defined with the inner A frozen at ``A0``: φ₀ = σ(h₁) + σ(V·A₀·σ(h₁) + b₂), and out = A₀·φ₀ at A = A₀. A
    readout trained on φ₀ (mode ``last``) is linear regression on fixed features: the conjugate kernel φ₀φ₀ᵀ
    (:func:`resnetlearn.kernels.features` is the same map for one model, with the NTK parameterisation as an
    option).

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p : dict of str to torch.Tensor
        The parameters of G models, each with a leading model axis G (:func:`init_params`).
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.
    A0 : torch.Tensor or None, default None
        The inner A, (G, k, m) (None: ``p["A"]``, i.e. call it with the initial parameters).

    Returns
    -------
    torch.Tensor
        φ, (G, n, width).
    """
    phi1, phi2 = readout_features(arch, p if A0 is None else {**p, "A": A0}, x)
    return phi1 + phi2


# ----------------------------------------------------------------- the talk's frozen gates
def value_name(param: str) -> str:
    """The value copy of a gate's weight or bias in the frozen-gate network (W → W2, b1 → b12).

    Parameters
    ----------
    param : str
        The gate's parameter name.

    Returns
    -------
    str
        The name of its value copy.
    """
    return param + "2"


def with_values(arch: str, p: dict) -> dict:
    """``p`` plus an identical copy (:func:`value_name`) of every dense weight and bias.

    These are the parameters of the frozen-gate network, which at these values equals the ReLU network exactly
    (1[h ≥ 0]·h = σ(h)).

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p : dict of str to torch.Tensor
        The parameters of ``arch``.

    Returns
    -------
    dict of str to torch.Tensor
        ``p`` and the value copies (cloned).
    """
    gates = set(p) - ARCHITECTURES[check_arch(arch)].readout_params
    return p | {value_name(n): p[n].clone() for n in p if n in gates}


class _Gated:
    """The ops of :func:`evaluate` that turn a layer graph into the talk's frozen-gate network: a dense
    layer gives the pair (gate pre-activation from the weight and bias, value pre-activation from their
    copies, :func:`value_name`), a ReLU becomes gate(gate pre-activation)·(value pre-activation), with the
    indicator gate 1[· ≥ 0] (``smooth`` None) or the logistic sigmoid(·/smooth); the readout is A."""

    def __init__(self, p: dict, smooth: float | None):
        self.p, self.smooth, self.A = p, smooth, p["A"].transpose(1, 2)

    def _dense(self, x, weight, bias):
        W = self.p[weight].transpose(1, 2)
        return torch.bmm(x, W) if bias is None else torch.baddbmm(self.p[bias].unsqueeze(1), x, W)

    def dense(self, x, weight, bias):
        return self._dense(x, weight, bias), self._dense(x, value_name(weight), bias and value_name(bias))

    def relu(self, h):
        gate = (h[0] >= 0).to(h[0].dtype) if self.smooth is None else torch.sigmoid(h[0] / self.smooth)
        return gate * h[1]

    def readout(self, a):
        return torch.bmm(a, self.A)


def gated_forward_parts(arch: str, p: dict, x: torch.Tensor, *, smooth: float | None = None):
    """(out₁, residual) of ``arch``'s frozen-gate network.

    The talk's network: every ReLU σ(⟨w, x⟩ + b) becomes gate(⟨w₁, x⟩ + b₁)·(⟨w₂, x⟩ + b₂), the gates (w₁, b₁) frozen
    at their initialisation, the values (w₂, b₂) trained. With the values equal to the gates and the hard gate this
    *is* the ReLU network.

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`ARCHITECTURES`.
    p : dict of str to torch.Tensor
        Gates and values, (G, ...) each (:func:`with_values`).
    x : torch.Tensor
        The inputs, (n, d) shared by all models or (G, n, d) one set per model, d the dimension W takes.
    smooth : float or None, default None
        None: the indicator gate 1[· ≥ 0]; a number s: the logistic gate sigmoid(·/s) (keyword-only).

    Returns
    -------
    tuple of torch.Tensor
        (out₁, residual), each (G, n, k) (residual zero for the plain networks).
    """
    rec = ARCHITECTURES[check_arch(arch)]
    v = evaluate(arch, _Gated(p, smooth), batched_inputs(p, x))
    return v[rec.out1], v[rec.res] if rec.res else torch.zeros_like(v[rec.out1])
