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
two-layer theorem allows.

The NTK mode needs the network linearised at its initialisation,
f₀(x) + ⟨∇_θ f₀(x), θ − θ₀⟩. :func:`forward` can push a tangent (θ − θ₀)
through the network alongside the primal pass (forward-mode by hand: for a
dense layer d(Wx+b) = dW·x + W·dx + db, and dσ(h) = 1[h > 0]·dh), which
autograd then differentiates like any other function.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Architecture:
    """One learner network of this module: what the rest of the package needs to know about it.

    ``residual``: the network splits as out = out₁ + residual (the ResNets; training reports
    out₁ against β·F and the residual against α·G(F)); ``formula``: the network in one line.
    """

    name: str
    formula: str
    residual: bool


ARCHITECTURES: dict[str, Architecture] = {a.name: a for a in (
    Architecture("3resnet", "out₁ + A·σ(V·out₁ + b₂), out₁ = A·σ(W x + b₁) (§6: shared A, V m×k)", True),
    Architecture("3resnet_eq21", "A(σ(h₁) + σ(U σ(h₁) + b₂)), h₁ = W x + b₁ (eq 2.1 as written, U m×m)", True),
    Architecture("3layer", "A·σ(V σ(W x + b₁) + b₂)", False),
    Architecture("2layer", "A·σ(W x + b₁)", False),
    Architecture("2layer_signs", "aᵀσ(W x), a ∈ {±1/√m}^m fixed, m/2 of each sign (arXiv v3 §8.2)", False),
)}
"""Every architecture, by name (adding one is one entry)."""
ARCHS = tuple(ARCHITECTURES)
INITS = ("paper", "fan_in", "companion")


def param_shapes(arch: str, d: int, k: int, m: int) -> dict[str, tuple[int, ...]]:
    """Shapes of one model's parameters (without the model axis)."""
    check_arch(arch)
    for name, v in (("d", d), ("k", k), ("m", m)):
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if arch == "2layer_signs":
        if m % 2:
            raise ValueError(f"2layer_signs needs an even width m (m/2 output weights of each sign), got {m}")
        return {"W": (m, d), "A": (k, m)}
    shapes = {"W": (m, d), "b1": (m,)}
    if arch == "3resnet":
        shapes.update(V=(m, k), b2=(m,))
    elif arch in ("3resnet_eq21", "3layer"):
        shapes.update(V=(m, m), b2=(m,))
    shapes["A"] = (k, m)
    return shapes


def check_arch(arch: str) -> str:
    if not isinstance(arch, str) or arch not in ARCHS:
        raise ValueError(f"unknown model {arch!r}; allowed: {ARCHS}")
    return arch


def _fan_in(name: str, shape: tuple[int, ...], shapes) -> int:
    if name.startswith("b"):
        return shapes["W" if name == "b1" else "V"][1]
    return shape[1]


def init_params(arch: str, d: int, k: int, m: int, seeds, init: str = "paper",
                device=None, dtype=torch.float32) -> dict[str, torch.Tensor]:
    """Stacked initial parameters for len(seeds) models (arXiv v3 §8.1).

    Drawn in float64 on the CPU from each model's own seed, then moved:
    identical across batch compositions and devices.
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    shapes = param_shapes(arch, d, k, m)
    out = {name: [] for name in shapes}
    for seed in seeds:
        gen = torch.Generator().manual_seed(int(seed))
        for name, shape in shapes.items():
            if arch == "2layer_signs" and name == "A":  # fixed ±1/√m, half of each sign (§8.2)
                signs = torch.ones(shape[1], dtype=torch.float64)
                signs[torch.randperm(shape[1], generator=gen)[: shape[1] // 2]] = -1
                out[name].append(signs.expand(shape).clone() / m**0.5)
                continue
            std = (_fan_in(name, shape, shapes) ** -0.5 if init == "fan_in" else
                   1.0 if init == "companion" and name == "A" else (1 / m) ** 0.5)
            out[name].append(torch.randn(*shape, generator=gen, dtype=torch.float64) * std)
    return {n: torch.stack(v).to(device=device, dtype=dtype) for n, v in out.items()}


def _dense(x, W, b, dx=None, dW=None, db=None):
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


def _inputs(p: dict, x) -> torch.Tensor:
    """``x`` as (G, n, d) for the G models of ``p``; refuses, naming both, a dimension other than
    the d the first layer W (G, m, d) takes, and a model axis other than G."""
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

    ``x``: (G, n, d) or (n, d) (shared by all models). With ``tangent`` (a
    dict like ``p``), returns ((out₁, dout₁), (res, dres)) instead.
    """
    x = _inputs(p, x)
    t = tangent or {}
    tg = tangent is not None
    h1, dh1 = _dense(x, p["W"], p.get("b1"), None, t.get("W"), t.get("b1"))
    a1, da1 = _relu(h1, dh1)
    A, dA = p["A"].transpose(1, 2), t.get("A")

    def readout(a, da):
        o = torch.bmm(a, A)
        if not tg:
            return o, None
        return o, torch.bmm(da, A) + torch.bmm(a, dA.transpose(1, 2))

    if arch in ("2layer", "2layer_signs"):
        first, second = readout(a1, da1), None
    elif arch == "3layer":
        h2, dh2 = _dense(a1, p["V"], p["b2"], da1, t.get("V"), t.get("b2"))
        first, second = readout(*_relu(h2, dh2)), None
    elif arch == "3resnet":
        first = readout(a1, da1)
        h2, dh2 = _dense(first[0], p["V"], p["b2"], first[1], t.get("V"), t.get("b2"))
        second = readout(*_relu(h2, dh2))
    elif arch == "3resnet_eq21":
        first = readout(a1, da1)
        h2, dh2 = _dense(a1, p["V"], p["b2"], da1, t.get("V"), t.get("b2"))
        second = readout(*_relu(h2, dh2))
    else:
        check_arch(arch)
    if second is None:
        zero = torch.zeros_like(first[0])
        second = (zero, zero if tg else None)
    return (first, second) if tg else (first[0], second[0])


def forward(arch: str, p: dict, x: torch.Tensor) -> torch.Tensor:
    """out(x) for every model: (G, n, k)."""
    out1, res = forward_parts(arch, p, x)
    return out1 + res


def forward_linearized(arch: str, p0: dict, delta: dict, x: torch.Tensor):
    """The network linearised at p0 (the NTK model): f(p0) + J(p0)·delta.

    Returns (out, out₁-part, residual-part), each (G, n, k).
    """
    (o1, do1), (r, dr) = forward_parts(arch, p0, x, tangent=delta)
    return o1 + r + do1 + dr, o1 + do1, r + dr


def readout_features(arch: str, p: dict, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The hidden representations the output layer A reads: (φ₁, φ₂), each (G, n, m),
    with out₁ = A·φ₁ and residual = A·φ₂ (φ₂ = 0 for the plain networks).

    With ``p`` the initial weights, φ = φ₁ + φ₂ is the random feature map of
    the conjugate kernel (§3.1; training only the readout is regression on
    it, mode ``last``). For the §6 ResNet, A also sits inside the residual's
    input (V·out₁ = V·A·φ₁), so φ₂ = σ(V·A₀·φ₁ + b₂) uses the *initial* A₀:
    a readout trained on these features does not change them, as a kernel
    method must not.
    """
    x = _inputs(p, x)
    a1 = torch.relu(_dense(x, p["W"], p.get("b1"))[0])
    if arch in ("2layer", "2layer_signs"):
        return a1, torch.zeros_like(a1)
    if arch == "3layer":
        return torch.relu(_dense(a1, p["V"], p["b2"])[0]), torch.zeros_like(a1)
    if arch == "3resnet":
        return a1, torch.relu(_dense(torch.bmm(a1, p["A"].transpose(1, 2)), p["V"], p["b2"])[0])
    if arch == "3resnet_eq21":
        return a1, torch.relu(_dense(a1, p["V"], p["b2"])[0])
    check_arch(arch)
    raise AssertionError("unreachable")


def features(arch: str, p: dict, x: torch.Tensor, A0: torch.Tensor | None = None) -> torch.Tensor:
    """φ = φ₁ + φ₂ of :func:`readout_features`, the representation the readout A acts on: (G, n, width).

    Plain networks and eq 2.1: out = A·φ exactly, with φ = σ(h₁) (2layer,
    2layer_signs), σ(Vσ(h₁) + b₂) (3layer), σ(h₁) + σ(Uσ(h₁) + b₂) (3resnet_eq21).
    The §6 ``3resnet`` uses A twice (out₁ = A·σ(h₁) feeds the second block), so
    φ is defined with the inner A frozen at ``A0`` (default: ``p["A"]``, i.e.
    call it with the initial parameters): φ₀ = σ(h₁) + σ(V·A₀·σ(h₁) + b₂), and
    out = A₀·φ₀ at A = A₀. A readout trained on φ₀ (mode ``last``) is linear
    regression on fixed features — the conjugate kernel φ₀φ₀ᵀ
    (resnetlearn.kernels.features is the same map for one model, with the
    NTK parameterisation as an option).
    """
    phi1, phi2 = readout_features(arch, p if A0 is None else {**p, "A": A0}, x)
    return phi1 + phi2
