"""The network behind a finite-width kernel: one model at initialisation, evaluated in float64.

Every architecture's kernel side follows from its one entry of :data:`resnetlearn.learners.networks.ARCHITECTURES`:
its hidden representation (:func:`forward`) and the back-propagated signals of its empirical NTK (:func:`signals`)
come from its layer graph, evaluated in float64 with the multipliers of a :class:`Parameterization` (the standard
one, the paper's networks as drawn, or the NTK parameterisation with weight variance σ_w² and bias variance σ_b²).
:func:`network_archs` reads the architectures that have such kernels from that registry when asked;
:func:`single_model` and :func:`draw_network` give one model's float64 parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .. import validation as V
from ..learners import networks
from ..validation import MAX_SEED, Constraint, Instance, Interval, NoneOr, Noted, Options, validate_fields
from .checks import F64, check_network_memory
from .recursions import NO_LIMIT

PARAMETERIZATIONS = ("standard", "ntk")
SIGMA_W2 = Interval(float, 0, closed="right")
"""σ_w², the weight variance of the NTK parameterisation: > 0."""
SIGMA_B2 = Interval(float, 0)
"""σ_b², its bias variance: >= 0."""


@dataclass(frozen=True)
class Parameterization:
    """How a network's parameters enter its outputs, in the standard or the NTK parameterisation.

    Wherever a kernel takes one, the name alone stands for it with σ_w² = σ_b² = 1. Every field is checked when the
    record is made (``parameter_constraints``).

    Parameters
    ----------
    name : {"standard", "ntk"}, default "standard"
        ``"standard"``: each parameter as drawn (the paper's networks); ``"ntk"``: each weight times σ_w/√fan_in
        and each bias times σ_b, the entries N(0, 1) (the convention of :func:`resnetlearn.kernels.infinite_width`).
    sigma_w2 : float, default 1.0
        σ_w², the weight variance of ``"ntk"``, > 0.
    sigma_b2 : float, default 1.0
        σ_b², its bias variance, >= 0.

    Raises
    ------
    ValueError
        A field is out of its range, or ``"standard"`` is given σ's other than 1 (it takes none).
    """

    name: str = "standard"
    sigma_w2: float = 1.0
    sigma_b2: float = 1.0

    parameter_constraints = {"name": Noted(Options(PARAMETERIZATIONS), "the parameterization"),
                             "sigma_w2": SIGMA_W2, "sigma_b2": SIGMA_B2}

    def __post_init__(self):
        validate_fields(self)
        if self.name == "standard" and (self.sigma_w2, self.sigma_b2) != (1.0, 1.0):  # the σ's against the name
            raise ValueError("sigma_w2 and sigma_b2 apply to parameterization='ntk' only; the standard "
                             "parameterisation takes the weights as drawn")

    @classmethod
    def of(cls, parameterization) -> Parameterization:
        """``parameterization`` as a record.

        Parameters
        ----------
        parameterization : {"standard", "ntk"} or Parameterization
            A :class:`Parameterization`, kept as it is, or a name, read with σ_w² = σ_b² = 1 (:data:`PARAMETERIZATION`).

        Returns
        -------
        Parameterization
            The record.

        Raises
        ------
        ValueError
            The name is not one of :data:`PARAMETERIZATIONS`.
        """
        return PARAMETERIZATION.check("parameterization", parameterization)


class ParameterizationOf(Constraint):
    """A :class:`Parameterization`, or the name of one (one of :data:`PARAMETERIZATIONS`, with σ_w² = σ_b² = 1),
    given as the record."""

    def check(self, name, value, others=None):
        if isinstance(value, Parameterization):
            return value
        return Parameterization(V.choice(name, value, PARAMETERIZATIONS))

    def bad_values(self, others=None):
        return ["mean_field", 3]

    def __repr__(self):
        return f"Parameterization | Options({', '.join(map(repr, PARAMETERIZATIONS))})"


PARAMETERIZATION = ParameterizationOf()


def network_archs() -> tuple[str, ...]:
    """The architectures with conjugate and empirical NTK kernels here.

    Those of :data:`resnetlearn.learners.networks.ARCHITECTURES` with ``kernels=True`` (not §8.2's 2layer_signs),
    read from the registry at each call.

    Returns
    -------
    tuple of str
        Their names.
    """
    return tuple(n for n, a in networks.ARCHITECTURES.items() if a.kernels)


def check_arch(arch, allowed, *, what: str) -> networks.Architecture:
    """The architecture named ``arch``, if it has the kernel asked for.

    Parameters
    ----------
    arch : str
        The architecture's name.
    allowed : sequence of str
        The architectures that have the kernel (e.g. :func:`network_archs`).
    what : str
        The kernel, as the error names it (keyword-only).

    Returns
    -------
    resnetlearn.learners.networks.Architecture
        Its record.

    Raises
    ------
    ValueError
        ``arch`` is not one of ``allowed``; where the kernels say why it has none
        (:data:`resnetlearn.kernels.recursions.NO_LIMIT`), the error says why.
    """
    known = networks.ARCHITECTURES
    if isinstance(arch, str) and arch in known and arch not in allowed and NO_LIMIT.get(arch):
        raise ValueError(f"no {what} kernel for arch {arch!r}: {NO_LIMIT[arch]}; allowed: {allowed}")
    V.choice("arch", arch, allowed)
    return known[arch]


class KernelArch(Constraint):
    """An architecture that has ``what`` kernel: one of ``allowed()`` (e.g. :func:`network_archs`, read at each
    check), refused as :func:`check_arch` refuses, saying why where the kernels know."""

    def __init__(self, allowed, what: str):
        self.allowed, self.what = allowed, what

    def check(self, name, value, others=None):
        return check_arch(value, self.allowed(), what=self.what).name

    def bad_values(self, others=None):
        return ["no such arch", 3] + [a for a in networks.ARCHITECTURES if a not in self.allowed()][:1]

    def __repr__(self):
        return f"KernelArch({self.allowed.__name__}())"


PARAMS = Instance(dict, "dict of tensors")
"""The parameters of one network, checked against its architecture by :func:`single_model`."""
NETWORK = {"params": NoneOr(PARAMS), "m": NoneOr(Interval(int, 1)), "k": NoneOr(Interval(int, 1)),
           "seed": NoneOr(Interval(int, 0, MAX_SEED)), "init": NoneOr(Options(networks.INITS))}
"""What the functions drawing a network for a finite kernel accept (:func:`draw_network`): its ``params``, or its
width, outputs, seed and initialisation (None: 1000, 1, 0, ``"paper"``)."""


def single_model(params: dict, arch: str, d: int | None = None) -> dict:
    """The float64 parameters of one model of ``arch``, checked against the architecture.

    A leading model axis of size 1, as :func:`resnetlearn.learners.networks.init_params` draws, is dropped.

    Parameters
    ----------
    params : dict of str to torch.Tensor
        The parameters, by name (those of :func:`resnetlearn.learners.networks.param_shapes`), finite.
    arch : str
        The architecture, a key of :data:`resnetlearn.learners.networks.ARCHITECTURES`.
    d : int or None, default None
        The input dimension the first layer must take (None: not checked).

    Returns
    -------
    dict of str to torch.Tensor
        The parameters in float64, without a model axis.

    Raises
    ------
    ValueError
        A model axis other than 1, other parameter names than the architecture's, a non-finite entry, or a first
        layer that takes another dimension than ``d``.
    """
    PARAMS.check("params", params)
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


def draw_network(arch, X, params, *, m, k, seed, init, n_points) -> dict:
    """One model's float64 parameters for the inputs X: ``params`` as given (:func:`single_model`), or drawn
    as :func:`resnetlearn.learners.networks.init_params` does with (m = 1000, k = 1, seed = 0, init = "paper")
    (after checking that a width-m network and its kernel on ``n_points`` inputs fit in memory). The arguments are
    those :data:`NETWORK` declares, checked; here they are checked against each other."""
    if params is not None:
        if any(v is not None for v in (m, k, seed, init)):
            raise ValueError("pass either params or (m, k, seed, init), not both")
        return single_model(params, arch, X.shape[1])
    m, k = 1000 if m is None else m, 1 if k is None else k
    seed, init = 0 if seed is None else seed, "paper" if init is None else init
    check_network_memory(arch, n_points, k=k, m=m, device=X.device)
    return single_model(networks.init_params(arch, d=X.shape[1], k=k, m=m, seeds=[seed], init=init, dtype=F64), arch)


def multipliers(arch: str, p: dict, parameterization: Parameterization) -> dict:
    """Per-parameter output multipliers of ``parameterization``: 1 (standard, as the paper's networks)
    or σ_w/√fan_in for weights and σ_b for biases (NTK parameterisation; the biases are those of
    the architecture's layer graph, :attr:`resnetlearn.learners.networks.Architecture.bias_of`)."""
    if parameterization.name == "standard":
        return {n: 1.0 for n in p}
    sw, sb = parameterization.sigma_w2, parameterization.sigma_b2
    biases = set(networks.ARCHITECTURES[arch].bias_of.values())
    return {n: (math.sqrt(sb) if n in biases else math.sqrt(sw / p[n].shape[1])) for n in p}


class _Float64Ops:
    """The ops of :func:`resnetlearn.learners.networks.evaluate` for one model in float64, each parameter
    times its multiplier (:func:`multipliers`): dense mult_W·x Wᵀ + mult_b·b, readout mult_A·a Aᵀ."""

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


def forward(arch: str, p: dict, X: torch.Tensor, mult: dict) -> dict:
    """Every node of the architecture's layer graph up to what the readout reads, and
    ``phi`` = φ₁ + φ₂ (out = A·φ; :meth:`networks.Architecture.phi_nodes`)."""
    rec = networks.ARCHITECTURES[arch]
    act = networks.evaluate(arch, _Float64Ops(p, mult), X, rec.phi_nodes)
    phi = act[rec.phi_nodes[0]]
    return dict(act, phi=phi if len(rec.phi_nodes) == 1 else phi + act[rec.phi_nodes[1]])


def signals(arch: str, p: dict, X: torch.Tensor, mult: dict) -> dict:
    """For every weight of the float64 model ``p`` on the inputs X, with the multipliers ``mult``
    (:func:`multipliers`), its uses (δ, input): ∂f_c/∂θ = Σ_u mult·δ_{u,c} ⊗ input_u with δ of shape
    (k, N, fan_out) (the bias of a dense weight has the same δ), derived from the architecture's
    layer graph by back-propagating ∂f_c/∂node from the outputs (∂f_c/∂out = I) in reverse
    order: a readout sends mult_A·g·A back, a ReLU multiplies by σ'(h), a dense layer sends
    mult_W·g·W back. A shared readout A is used once per readout (the §6 ResNet reads with A
    twice); uses whose δ is the identity are merged into one, δ ⊗ (a + a')."""
    rec, act = networks.ARCHITECTURES[arch], forward(arch, p, X, mult)
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

