"""Training the learner networks with the paper's SGD protocol, many models at once.

arXiv v3 §8.1: loss ½‖out(x) − y‖² (summed over the k outputs, averaged over
the mini-batch), PyTorch-style SGD with momentum 0.9, mini-batches of 50,
800 epochs, learning rate divided by 10 at epoch 400, weight decay, and
learning rate / weight decay chosen from {1, 2, 5}·10^−k. The test error is
the mean over test samples of ‖out(x) − y‖², so kα² is the threshold.

Training modes (§8.1, "Neural Networks Algorithms" and "Kernel Methods"):

* ``all`` — every weight trained;
* ``hidden`` — the output layer A stays at its initialisation (Theorem 1's setting);
* ``last`` — only A is trained: linear regression on random features, i.e. the
  conjugate kernel, a kernel method;
* ``ntk`` — the network replaced by its linearisation at initialisation,
  f₀ + ⟨∇f₀, θ − θ₀⟩, trained by the same optimiser (weight decay acts on
  θ − θ₀, which makes it ridge regression with the neural tangent kernel).

What each mode means (the tensors SGD moves and the model they define) is said once, by ``_Model``; with
a :class:`FrozenGate` the same engine trains the talk's frozen-gate network instead of the ReLU network.

All G models of one call share the architecture, mode and width, and differ
in learning rate, weight decay and seed. Their parameters are stacked; the
summed loss gives each model exactly its own gradient, and the hand-written
momentum update uses per-model learning rates and weight decays. Each
model's initialisation and mini-batch order come from its own seed, so a
model trained inside a batch matches the same model trained alone.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import KW_ONLY, asdict, dataclass, field, replace

import torch
from tqdm.auto import tqdm

from .. import memory
from .. import validation as V
from ..device import select_device
from . import networks
from .capture import CapturedEpochs

MODES = ("all", "hidden", "last", "ntk")
MODE_LOOKS = {"all": ("solid", None), "hidden": ("solid", None), "last": ("dot", "conjugate kernel"),
              "ntk": ("dash", "NTK")}
"""How a figure draws each mode: its line, and the family it puts a learner in (None: its architecture's;
a network trained in mode ``last`` is a conjugate-kernel method, in mode ``ntk`` an NTK method)."""
SELECTIONS = ("test", "val")
VALIDATIONS = ("fresh", "holdout")
"""Where ``select="val"`` finds its validation samples: ``"fresh"`` (the default) draws them anew from the
target's distribution and trains on all N samples; ``"holdout"`` carves the last fifth out of the N (the rule
before issue 29: SGD then sees 0.8·N samples, so a verdict mixes the selection rule with a smaller N)."""
VAL_FRACTION = 0.2
"""The validation part of a search that selects on validation (``select="val"``), relative to the N training
samples: a fresh validation set has ⌈0.2·N⌉ samples (:func:`default_val_size`), a hold-out takes the last
round(0.2·N) of them. Ours (the paper selects on the test set)."""
VAL_SEED_OFFSET = 2
"""A fresh validation set is drawn with ``data_seed + 2`` unless a seed is given (training samples use
``data_seed``, test samples ``data_seed + 1``: :func:`resnetlearn.targets.concept.data_split`)."""


def default_val_size(n_train: int) -> int:
    """The size of a fresh validation set when none is given: ⌈0.2·N⌉, a fifth of the training samples
    (the size the hold-out rule took out of them), at least 1. Ours."""
    return max(1, math.ceil(VAL_FRACTION * int(n_train)))


def validation_split(target, n_train: int, *, n_test: int, data_seed: int = 0, validation: str = "fresh",
                     val_size: int | None = None, val_seed: int | None = None, val_fraction: float = VAL_FRACTION,
                     device=None, dtype=torch.float32):
    """The samples of a search that selects on validation (``select="val"``), as a
    :class:`~resnetlearn.targets.concept.Split`.

    ``validation="fresh"``: the training part is the same ``n_train`` samples as with ``select="test"``
    (:func:`~resnetlearn.targets.concept.data_split` with ``data_seed``) and the validation part is ``val_size``
    (default :func:`default_val_size`) new samples of the same distribution drawn with ``val_seed`` (default
    ``data_seed +`` :data:`VAL_SEED_OFFSET`); the test part is unchanged. ``validation="holdout"``: the last
    ``val_fraction`` of the ``n_train`` samples are held out (the earlier rule, kept as a named option)."""
    from ..targets.concept import Split, data_split

    V.choice("validation", validation, VALIDATIONS)
    if validation == "holdout":
        if val_size is not None or val_seed is not None:
            raise ValueError("val_size and val_seed describe a fresh validation set; validation='holdout' "
                             "takes val_fraction")
        return data_split(target, n_train, n_test=n_test, seed=data_seed, val_fraction=val_fraction,
                          device=device, dtype=dtype)
    size = default_val_size(n_train) if val_size is None else V.integer("val_size", val_size, lo=1)
    seed = data_seed + VAL_SEED_OFFSET if val_seed is None else V.seeds("val_seed", val_seed)[0]
    if seed in (data_seed, data_seed + 1):
        raise ValueError(f"val_seed = {seed} would draw the training (seed {data_seed}) or test (seed "
                         f"{data_seed + 1}) samples again; a validation set needs a seed of its own")
    split = data_split(target, n_train, n_test=n_test, seed=data_seed, device=device, dtype=dtype)
    return Split(split.train, target.sample(size, seed=seed, device=device, dtype=dtype), split.test)
DIVERGENCE_LOSS = 1e8
"""A mini-batch loss above this (or non-finite) marks a model as diverged."""


@dataclass(frozen=True)
class Learner:
    """What is trained, apart from its SGD hyperparameters: an architecture (a
    :data:`resnetlearn.learners.networks.ARCHITECTURES` entry; eq 2.1 / §6 of arXiv v3), the weights SGD moves
    (``mode``, one of :data:`MODES`, §8.1), the width ``m`` and the initialisation (one of
    :data:`resnetlearn.learners.networks.INITS`; ``"paper"`` is §8.1's). Training, the grid search, the
    reproduce points and the race pass this one record instead of four loose arguments.
    """

    arch: str
    mode: str = "all"
    _: KW_ONLY
    m: int
    init: str = "paper"

    def __post_init__(self):
        V.choice("arch", self.arch, networks.ARCHITECTURES)
        V.choice("mode", self.mode, MODES)
        object.__setattr__(self, "m", V.integer("m (width)", self.m, lo=1))
        V.choice("init", self.init, networks.INITS)

    @staticmethod
    def check(value) -> None:
        """Refuse anything but a Learner (a function taking one names it ``learner``)."""
        if not isinstance(value, Learner):
            raise TypeError(f"learner must be a Learner(arch, mode, m=..., init=...), got {type(value).__name__}")

    @property
    def label(self) -> str:
        """``arch(mode)``, the name tables and plots give this learner."""
        return f"{self.arch}({self.mode})"

    @property
    def name(self) -> str:
        """The learner without its mode: its architecture."""
        return self.arch

    trained_by_sgd = True
    """Whether it is trained by SGD (the work a run's progress counts)."""

    def row_fields(self) -> dict:
        """How a stored row names it: ``model`` (its architecture), ``mode`` and, when it is not §8.1's,
        ``init`` (the stored keys of the points that never named one stay as they are)."""
        return dict(model=self.arch, mode=self.mode, **({} if self.init == "paper" else {"init": self.init}))

    def sgd_work(self, point: dict, *, dims, batch_size: int) -> tuple[Learner, list[tuple[int, int, int]], int]:
        """The SGD a figure point of this network costs (the work estimate's per-learner part,
        :mod:`resnetlearn.reproduce.work_estimate`): the network trained (itself), its batched trainings —
        (networks trained together, SGD steps, parameters of one) for the lr × wd grid and for the fresh-seed
        reruns of the selected cell (:func:`grid_search`) — and the mini-batch, ``batch_size``. ``dims()`` is
        the point's target's (d, k); a holdout validation trains on N less its :data:`VAL_FRACTION`."""
        d, k = dims()
        holdout = point["select"] == "val" and point.get("validation", "holdout") == "holdout"
        n_fit = point["n_train"] - (round(VAL_FRACTION * point["n_train"]) if holdout else 0)
        steps = point["epochs"] * math.ceil(n_fit / batch_size)
        params = sum(math.prod(s) for s in networks.param_shapes(self.arch, d, k, self.m).values())
        groups = [len(point["lrs"]) * len(point["wds"]) * len(point.get("grid_seeds") or [0]),
                  len(point.get("rerun_seeds") or [])]
        return self, [(g, steps, params) for g in groups if g], batch_size

    @property
    def kernel_method(self) -> bool:
        """Whether SGD trains a kernel method (mode ``last``: the conjugate kernel, ``ntk``: the NTK, §8.1),
        whose exact ridge solution a figure point computes beside it."""
        return self.mode in ("last", "ntk")

    @property
    def style(self) -> networks.Style:
        """Its architecture's colour and marker (:data:`resnetlearn.learners.networks.ARCHITECTURES`), its mode's line
        and family (:data:`MODE_LOOKS`)."""
        arch = networks.ARCHITECTURES[self.arch]
        line, family = MODE_LOOKS[self.mode]
        return replace(arch.style, line=line, family=family or arch.family)


@dataclass(frozen=True)
class Protocol:
    """The SGD protocol; defaults are those of arXiv v3 §8.1.

    ``lr_drop_epoch`` left out (or None) is half of ``epochs``, where §8.1
    drops the learning rate (÷10 at epoch 400 of 800); it is then stored as
    that number, so ``Protocol()`` drops at 400 and ``Protocol(epochs=100)``
    at 50. ``lr_drop_factor=1`` means no drop at all.
    """

    epochs: int = 800
    batch_size: int = 50
    momentum: float = 0.9
    lr_drop_epoch: int | None = None
    lr_drop_factor: float = 10.0
    eval_every: int = 50
    layerwise: bool = False

    def __post_init__(self):
        """Every field checked (and numpy/torch scalars normalised) when the protocol is made."""
        norm = dict(epochs=V.integer("epochs", self.epochs, lo=1),
                    batch_size=V.integer("batch_size", self.batch_size, lo=1),
                    momentum=V.real("momentum", self.momentum, lo=0, hi=1, hi_open=True),
                    lr_drop_factor=V.real("lr_drop_factor (the learning rate is divided by it)",
                                          self.lr_drop_factor, lo=1),
                    eval_every=V.integer("eval_every", self.eval_every, lo=1),
                    layerwise=V.boolean("layerwise", self.layerwise))
        if self.lr_drop_epoch is None:  # §8.1: the drop comes half-way through training
            norm["lr_drop_epoch"] = norm["epochs"] // 2
        else:
            norm["lr_drop_epoch"] = V.integer(f"lr_drop_epoch (left out: epochs // 2 = {norm['epochs'] // 2}; "
                                              f"lr_drop_factor=1: no drop)", self.lr_drop_epoch, lo=0,
                                              hi=norm["epochs"])
        for k, v in norm.items():
            object.__setattr__(self, k, v)

    def check(self, n_train: int, *, held_out: int = 0, why: str = "") -> None:
        """The checks that need the data: a mini-batch cannot exceed the samples SGD trains on.

        ``held_out`` of the ``n_train`` samples are set aside for validation (``why`` says by
        which setting); SGD sees the other ``n_train - held_out``, and the error says so."""
        n_fit = n_train - held_out
        if self.batch_size > n_fit:
            if held_out:
                raise ValueError(f"batch_size ({self.batch_size}) must not exceed the number of training samples "
                                 f"SGD sees, N = {n_fit}: of n_train = {n_train}, {held_out} are held out for "
                                 f"validation{' (' + why + ')' if why else ''}")
            raise ValueError(f"batch_size ({self.batch_size}) must not exceed the number of "
                             f"training samples N = {n_train}")

    @classmethod
    def quick(cls, epochs: int = 100, **kw) -> Protocol:
        """The same protocol shortened (lr drop at half-time), for classrooms and tests."""
        return cls(epochs=epochs, **kw)


PAPER_PROTOCOL = Protocol()
"""The full protocol of arXiv v3 §8.1."""


def trainable_names(arch: str, mode: str, phase: int | None = None) -> list[str]:
    """Which parameters a mode trains (§8.1), read from ``arch``'s layer graph: ``all`` every one, ``hidden``
    all but the readout A, ``last`` A alone. Layer-wise training (ResNet paper §2.1's remark): ``phase`` 1
    the first block's (what out₁ depends on; A only in mode ``all``), ``phase`` 2 what only the residual
    branch depends on."""
    V.choice("mode", mode, MODES)
    rec = networks.ARCHITECTURES[networks.check_arch(arch)]
    names, readout = list(networks.param_shapes(arch, 1, 1, 2)), rec.readout_params
    if phase == 1:
        keep = rec.params_of(rec.out1) - (set() if mode == "all" else readout)
    elif phase == 2:
        keep = rec.params_of(rec.res) - rec.params_of(rec.out1)
    else:
        keep = {"all": set(names), "hidden": set(names) - readout, "last": readout, "ntk": set(names)}[mode]
    return [n for n in names if n in keep]


@dataclass(frozen=True)
class FrozenGate:
    """The talk's frozen-gate network in place of the ReLU network
    (:func:`~resnetlearn.learners.networks.gated_forward_parts`):
    every ReLU becomes gate(gate pre-activation)·(value pre-activation), the gates frozen at their random
    initialisation and the values (initialised equal to them) trained. ``smooth`` None: the indicator
    1[· ≥ 0]; a number: the talk's smoothed indicator sigmoid(·/smooth)."""

    smooth: float | None = None

    def __post_init__(self):
        if self.smooth is not None:
            object.__setattr__(self, "smooth", V.real("smooth", self.smooth, lo=0, lo_open=True))


@dataclass(frozen=True)
class _Model:
    """The model SGD trains for one architecture and training mode (with ``gate``, the frozen-gate network):
    the one place that says what each mode of §8.1 means — which tensors SGD moves (:meth:`start`,
    :meth:`trainable`), which function of them is the model (:meth:`parts`, :meth:`output`) and which
    parameters it ends with (:meth:`params`)."""

    arch: str
    mode: str
    gate: FrozenGate | None = None

    @property
    def linearised(self) -> bool:
        """Mode ``ntk``: SGD moves the displacement Δ = θ − θ₀ of the network linearised at θ₀."""
        return self.mode == "ntk"

    @property
    def defined_at_init(self) -> bool:
        """The model is a function of θ₀ as well (``last``: a readout on the initial features; ``ntk``)."""
        return self.mode in ("last", "ntk")

    def initial(self, p0: dict) -> dict:
        """The model's initial parameters: ``p0``, and with a gate the values' copies of the gates."""
        return networks.with_values(self.arch, p0) if self.gate else p0

    def start(self, p0: dict) -> dict:
        """The tensors SGD moves: the displacement Δ = θ − θ₀ from 0 in mode ``ntk``, else the parameters."""
        if self.linearised:
            return {n: torch.zeros_like(v) for n, v in p0.items()}
        return {n: v.clone() for n, v in p0.items()}

    def trainable(self, phase: int | None = None) -> list[str]:
        """The names SGD updates (:func:`trainable_names`; with a gate, the values in place of the gates)."""
        names = trainable_names(self.arch, self.mode, phase)
        if self.gate is None:
            return names
        readout = networks.ARCHITECTURES[self.arch].readout_params
        return [n if n in readout else networks.value_name(n) for n in names]

    def _branches(self, x, variables):
        if self.gate is not None:
            return networks.gated_forward_parts(self.arch, variables, x, smooth=self.gate.smooth)
        return networks.forward_parts(self.arch, variables, x)

    def parts(self, x, *, p0: dict | None, variables: dict, phase: int | None = None):
        """(out, out₁, residual) of G models: ``variables`` are the trained tensors (mode ``ntk``: Δ from
        ``p0``); ``phase`` 1 of layer-wise training switches the residual branch off."""
        if self.mode == "ntk":
            return networks.forward_linearized(self.arch, p0, variables, x)
        if self.mode == "last":  # a readout on the features of the initial network (conjugate kernel)
            with torch.no_grad():
                phi1, phi2 = networks.readout_features(self.arch, p0, x)
            At = variables["A"].transpose(1, 2)
            out1, res = torch.bmm(phi1, At), torch.bmm(phi2, At)
            return out1 + res, out1, res
        out1, res = self._branches(x, variables)
        if phase == 1:
            res = torch.zeros_like(res)  # layer-wise phase 1: residual branch switched off
        return out1 + res, out1, res

    def output(self, x, *, p0: dict | None, variables: dict, phase: int | None = None):
        """out alone, what an SGD step fits: the first item of :meth:`parts` without its other two (mode
        ``last``: one product with φ₀ = φ₁ + φ₂; phase 1: out₁ itself)."""
        if self.mode == "last":
            with torch.no_grad():
                phi1, phi2 = networks.readout_features(self.arch, p0, x)
            return torch.bmm(phi1 + phi2, variables["A"].transpose(1, 2))
        if self.mode == "ntk":
            return networks.forward_linearized(self.arch, p0, variables, x)[0]
        out1, res = self._branches(x, variables)
        return out1 if phase == 1 else out1 + res

    def params(self, p0: dict, variables: dict) -> dict:
        """The trained parameters: θ₀ + Δ in mode ``ntk`` (while the model is the linearisation at θ₀)."""
        return {n: p0[n] + v if self.linearised else v for n, v in variables.items()}


@dataclass
class TrainResult:
    """Outcome of :func:`train_models` for G models.

    ``test_error``/``train_error``: (G,) final errors, NaN where diverged;
    ``params``: the trained parameters (mode ``last``: the trained readout A
    with every other weight at its initial value — the model is
    A·φ₀(x) with φ₀ from :func:`networks.readout_features` at initialisation,
    which for the §6 ResNet is not ``networks.forward`` of these params;
    mode ``ntk``: θ₀ + Δ, while the model is the linearisation at θ₀).
    :meth:`predict` and :meth:`error` evaluate exactly the trained models
    in every mode (they keep θ₀ and, for ``ntk``, Δ itself), giving the
    reported errors bit for bit for models trained on the CPU (they compute on the CPU, so a GPU-trained
    result agrees up to rounding);
    ``curves``: name → (E, G) tensor at ``epochs`` (train, test, and for the
    ResNets out1_vs_base = E‖out₁ − β·F‖², residual_vs_composite =
    E‖residual − α·G(F)‖² on the test set); ``interrupted`` is True when
    training was cancelled (results are those of the last finished epoch).
    """

    configs: list[dict]
    test_error: torch.Tensor
    train_error: torch.Tensor
    diverged: torch.Tensor
    epochs: list[int]
    curves: dict[str, torch.Tensor]
    epochs_done: int
    interrupted: bool
    wall_time: float
    params: dict[str, torch.Tensor] = field(repr=False)
    holdout_error: torch.Tensor | None = None
    arch: str = ""
    mode: str = "all"
    p0: dict[str, torch.Tensor] | None = field(default=None, repr=False)
    """The initial parameters (modes ``last`` and ``ntk``, whose models are defined at θ₀)."""
    displacement: dict[str, torch.Tensor] | None = field(default=None, repr=False)
    """Mode ``ntk``: the trained Δ = θ − θ₀ (``params`` − ``p0`` would round differently)."""
    gate: FrozenGate | None = None
    """The frozen-gate network was trained in place of the ReLU network (its ``params`` hold gates and values)."""

    def predict(self, x: torch.Tensor, *, parts: bool = False):
        """The G trained models' outputs on ``x`` ((n, d), or (G, n, d)), as (G, n, k): in modes
        ``all``/``hidden`` :func:`networks.forward` of ``params``; ``last`` the trained readout on
        the initial network's features A·φ₀(x); ``ntk`` the network linearised at θ₀ moved by Δ.
        Computed on the CPU in the dtype of ``params``. ``parts=True``: (out, out₁, residual)."""
        dtype = self.params["A"].dtype
        x = V.tensor("x", x, ndim=(2, 3)).to("cpu", dtype)
        model = _Model(self.arch, self.mode, self.gate)
        with torch.no_grad():
            out = model.parts(x, p0=self.p0, variables=self.displacement if model.linearised else self.params)
        return out if parts else out[0]

    def error(self, sample) -> torch.Tensor:
        """E‖out(x) − y‖² of each model on ``sample`` (x, y) as (G,) float64, NaN where diverged —
        the test error this result reports, when ``sample`` is its test set."""
        y = V.tensor(f"{type(sample).__name__}.y", sample.y, ndim=(2, 3)).to("cpu", self.params["A"].dtype)
        err = ((self.predict(sample.x) - y) ** 2).sum(-1).mean(-1).double()
        return torch.where(self.diverged, torch.full_like(err, math.nan), err)

    def rows(self) -> list[dict]:
        """One tidy row per model: its configuration and final errors."""
        out = []
        for g, cfg in enumerate(self.configs):
            row = dict(cfg)
            row.update(test_error=float(self.test_error[g]), train_error=float(self.train_error[g]),
                       diverged=bool(self.diverged[g]), epochs_done=self.epochs_done,
                       frobenius_W=float(self.params["W"][g].norm()))
            if self.holdout_error is not None:
                row["val_error"] = float(self.holdout_error[g])
            out.append(row)
        return out


def _per_model(name: str, values, G: int, **bounds) -> torch.Tensor:
    vals = V.reals(name, values, **bounds)
    if len(vals) == 1:
        vals = vals * G
    if len(vals) != G:
        raise ValueError(f"{name} must have one value per model ({G} seeds) or a single value, got {len(vals)}")
    return torch.tensor(vals, dtype=torch.float64)


def _check_sample(sample, name: str, G: int) -> None:
    """x (N, d) and y (N, k) or (G, N, k) (one target per model), the same N, finite; base/composite like y."""
    V.tensor(f"{name}.x", sample.x, ndim=2)
    y = V.tensor(f"{name}.y", sample.y, ndim=(2, 3))
    if y.ndim == 3 and y.shape[0] != G:
        raise ValueError(f"{name}.y has a model axis of {y.shape[0]} but {G} models are trained "
                         f"(y must be (N, k) or (G, N, k))")
    if y.shape[-2] != sample.x.shape[0]:
        raise ValueError(f"{name}: x has {sample.x.shape[0]} samples but y has {y.shape[-2]}")
    for part in ("base", "composite"):
        t = getattr(sample, part, None)
        if t is not None and V.tensor(f"{name}.{part}", t).shape[-2:] != y.shape[-2:]:
            raise ValueError(f"{name}.{part} must have the shape of {name}.y {tuple(y.shape)}, got {tuple(t.shape)}")


def _check_compatible(train, other, name: str) -> None:
    """The same input dimension d and number of outputs k as the training set (nothing broadcast)."""
    if other.x.shape[1] != train.x.shape[1]:
        raise ValueError(f"{name}.x has d = {other.x.shape[1]} features but train.x has d = {train.x.shape[1]}")
    if other.y.shape[-1] != train.y.shape[-1]:
        raise ValueError(f"{name}.y has k = {other.y.shape[-1]} outputs but train.y has k = {train.y.shape[-1]}")


class _Cancelled(Exception):
    pass


def train_models(train, test, learner: Learner, *, lrs, wds, seeds,
                 protocol: Protocol = Protocol(), device=None,
                 dtype=torch.float32, progress: bool = True, callback=None,
                 callback_every: int | None = None, cancel=None, holdout=None,
                 init_scale: float = 1.0, capture: bool | None = None, gate: FrozenGate | None = None,
                 order_seeds=None) -> TrainResult:
    """Train G = len(seeds) models of one :class:`Learner` (architecture, mode, width, initialisation) together.

    ``train``/``test``: :class:`~resnetlearn.targets.concept.Sample` objects (x, y,
    and for the error decomposition base, composite); y (and base,
    composite) may carry a leading model axis (G, N, k) to give each model
    its own target on the same inputs (e.g. a β sweep, arXiv v3 Figure 3). ``lrs``, ``wds``: one
    value per model (or one for all). ``callback(info)`` is called every
    ``callback_every`` epochs with the latest errors (for live plots);
    ``cancel`` (a ``threading.Event`` or a callable returning True) or
    Ctrl-C stops training cleanly after the current step. ``holdout`` (a
    Sample) is evaluated at the end into ``holdout_error`` (validation-based
    selection uses it). ``init_scale`` multiplies every initial weight (the
    talk's knob for the lazy regime; 1 is the paper's initialisation).
    ``capture``: replay each epoch as a recorded CUDA graph (:mod:`resnetlearn.learners.capture`; None: on CUDA
    devices, eager elsewhere; True on a non-CUDA device is an error). The recorded kernels are the eager
    ones; cancellation is then checked between epochs. ``gate``: train the frozen-gate network
    (:class:`FrozenGate`; modes ``all`` and ``hidden``) in place of the ReLU network. ``order_seeds``: the
    seeds of the models' mini-batch orders (default: derived from ``seeds``, apart from the initialisation's).
    """
    Learner.check(learner)
    arch, mode, m, init = learner.arch, learner.mode, learner.m, learner.init
    if not isinstance(protocol, Protocol):
        raise TypeError(f"protocol must be a Protocol, got {type(protocol).__name__}")
    if protocol.layerwise and not networks.ARCHITECTURES[arch].residual:
        resnets = [n for n, a in networks.ARCHITECTURES.items() if a.residual]
        raise ValueError(f"layerwise training applies to the ResNets ({', '.join(resnets)}) only")
    if protocol.layerwise and mode not in ("all", "hidden"):
        raise ValueError("layerwise training needs mode 'all' or 'hidden'")
    if gate is not None:
        if not isinstance(gate, FrozenGate):
            raise TypeError(f"gate must be a FrozenGate or None, got {type(gate).__name__}")
        if mode not in ("all", "hidden") or protocol.layerwise:
            raise ValueError("the frozen-gate network trains in mode 'all' or 'hidden', not layer-wise")
    seeds = V.seeds("seeds", seeds)
    G = len(seeds)
    if order_seeds is not None:
        order_seeds = V.seeds("order_seeds", order_seeds)
        if len(order_seeds) != G:
            raise ValueError(f"order_seeds must have one seed per model ({G}), got {len(order_seeds)}")
    lr = _per_model("lrs (learning rates)", lrs, G, lo=0, lo_open=True)
    wd = _per_model("wds (weight decays)", wds, G, lo=0)
    init_scale = V.real("init_scale", init_scale, lo=0, lo_open=True)
    if capture is not None:
        capture = V.boolean("capture", capture)
    callback_every = None if callback_every is None else V.integer("callback_every", callback_every, lo=1)
    for name, smp in (("train", train), ("test", test), ("holdout", holdout)):
        if smp is not None:
            _check_sample(smp, name, G)
    _check_compatible(train, test, "test")
    if holdout is not None:
        _check_compatible(train, holdout, "holdout")
    dev = select_device(device)
    if capture and dev.type != "cuda":
        raise ValueError(f"capture=True records CUDA graphs and needs a CUDA device, got {dev.type!r}; "
                         "use capture=None (eager off CUDA) or False")
    capture_asked, capture = bool(capture), dev.type == "cuda" if capture is None else capture
    V.float_dtype(dtype)
    n_eval = max(train.x.shape[-2], test.x.shape[-2], 0 if holdout is None else holdout.x.shape[-2])
    d_in, k_out = train.x.shape[-1], train.y.shape[-1]
    need = lambda w: memory.training_bytes(arch, d_in, k_out, w, n_models=G, n_eval=n_eval, mode=mode, dtype=dtype)
    memory.check_memory(need(m), what=f"training {G} {arch}({mode}) model(s) on {n_eval} samples",
                        width_name="m", width=m, need_at=need, device=dev)
    xtr, ytr = train.x.to(dev, dtype), train.y.to(dev, dtype)
    xte, yte = test.x.to(dev, dtype), test.y.to(dev, dtype)
    N, d, k = xtr.shape[0], xtr.shape[1], ytr.shape[-1]
    protocol.check(N)
    drawn = networks.init_params(arch, d=d, k=k, m=m, seeds=seeds, init=init, device=dev, dtype=dtype)
    p0 = {n: v * init_scale for n, v in drawn.items()}
    parts = (None if test.base is None else test.base.to(dev, dtype),
             None if test.composite is None else test.composite.to(dev, dtype))
    state = _State(arch, mode, p0, lr=lr.to(dev, dtype), wd=wd.to(dev, dtype), protocol=protocol, seeds=seeds,
                   gate=gate, order_seeds=order_seeds)
    configs = [dict(model=arch, mode=mode, m=m, lr=float(lr[g]), wd=float(wd[g]), seed=seeds[g],
                    init=init, init_scale=init_scale, n_train=N, layerwise=protocol.layerwise,
                    **_protocol_dict(protocol))
               for g in range(G)]
    phases = [1, 2] if protocol.layerwise else [None]
    total_epochs = protocol.epochs * len(phases)
    curves = {n: [] for n in ("train", "test", "out1_vs_base", "residual_vs_composite")}
    epochs_logged: list[int] = []
    every = callback_every or protocol.eval_every
    t0, done, interrupted = time.perf_counter(), 0, False
    bar = tqdm(total=total_epochs, desc=f"{arch}({mode}) ×{G}", disable=not progress, leave=False)
    try:
        for phase in phases:
            state.start_phase(phase)
            runner = _captured_or_eager(state, xtr, ytr, capture, explicit=capture_asked)
            for epoch in range(protocol.epochs):
                if V.cancelled(cancel):  # between epochs (a recorded epoch cannot stop inside)
                    raise _Cancelled
                runner.epoch(xtr, ytr, epoch, cancel)
                done += 1
                bar.update(1)
                if done % protocol.eval_every == 0 or done == total_epochs or done % every == 0:
                    errs = state.evaluate(xtr, ytr, xte, yte, parts=parts)
                    for n in curves:
                        curves[n].append(errs[n])
                    epochs_logged.append(done)
                    if callback is not None and (done % every == 0 or done == total_epochs):
                        callback(dict(epoch=done, total_epochs=total_epochs, epochs=list(epochs_logged),
                                      **{n: torch.stack(v).cpu() for n, v in curves.items()}))
    except (_Cancelled, KeyboardInterrupt):
        interrupted = True
    finally:
        bar.close()
    final = state.evaluate(xtr, ytr, xte, yte, parts=parts)
    if not epochs_logged or epochs_logged[-1] != done:
        for n in curves:
            curves[n].append(final[n])
        epochs_logged.append(done)
    # a model that blew up in its very last step has non-finite errors without a flagged loss
    div = (state.diverged | ~torch.isfinite(final["train"]) | ~torch.isfinite(final["test"])).cpu()
    nan = torch.full((G,), math.nan, dtype=torch.float64)
    hold = None
    if holdout is not None:
        xh, yh = holdout.x.to(dev, dtype), holdout.y.to(dev, dtype)
        with torch.no_grad():
            hold = ((state.outputs(xh)[0] - yh) ** 2).sum(-1).mean(-1).double().cpu()
        hold = torch.where(div, nan, hold)
    test_err = torch.where(div, nan, final["test"].double().cpu())
    train_err = torch.where(div, nan, final["train"].double().cpu())
    return TrainResult(configs=configs, test_error=test_err, train_error=train_err, diverged=div,
                       epochs=epochs_logged, curves={n: torch.stack(v).double().cpu() for n, v in curves.items()},
                       epochs_done=done, interrupted=interrupted, wall_time=time.perf_counter() - t0,
                       params=state.final_params(), holdout_error=hold, arch=arch, mode=mode, gate=gate,
                       p0={n: v.detach().cpu() for n, v in state.p0.items()} if state.model.defined_at_init else None,
                       displacement=({n: v.detach().cpu() for n, v in state.vars.items()}
                                     if state.model.linearised else None))


def _captured_or_eager(state, x, y, capture: bool, *, explicit: bool):
    """The epoch runner: a recorded CUDA graph when asked for, else the eager engine. When the
    recording was only the default (``capture=None`` on CUDA) and fails, say so and train eagerly."""
    if not capture:
        return state
    try:
        return CapturedEpochs(state, x, y)
    except RuntimeError as e:
        if explicit:
            raise
        warnings.warn(f"recording the training epoch as a CUDA graph failed ({e}); training eagerly "
                      f"(capture=False skips the attempt)", RuntimeWarning, stacklevel=3)
        return state


def _protocol_dict(p: Protocol) -> dict:
    d = asdict(p)
    d.pop("layerwise")
    return d


class _State:
    """Parameters, momentum buffers and per-model bookkeeping of one batch of G models.

    The SGD step is written for speed without host synchronisation: the
    trainable tensors, their momentum buffers and the per-model
    weight-decay views are built once per phase; divergence is a device-side
    mask folded into the learning rate (a diverged model's lr becomes 0 and
    its numbers are reported as NaN at the end), never a ``.any()`` in the
    step; the update is a handful of ``torch._foreach_*`` calls over all
    trainable tensors; mini-batches are gathered once per epoch.
    """

    def __init__(self, arch, mode, p0, *, lr, wd, protocol, seeds, gate=None, order_seeds=None):
        self.model, self.protocol = _Model(arch, mode, gate), protocol
        self.p0 = self.model.initial(p0)
        self.lr0, self.wd = lr, wd
        drop = protocol.lr_drop_epoch  # Protocol stores an integer (epochs // 2 when left out)
        self.drop_epoch, self.lr_dropped = drop, lr / protocol.lr_drop_factor
        self.G = len(seeds)
        orders = [_order_seed(s) for s in seeds] if order_seeds is None else order_seeds
        self.gens = [torch.Generator().manual_seed(s) for s in orders]
        self.alive = torch.ones(self.G, dtype=torch.bool, device=lr.device)
        self.vars = self.model.start(self.p0)
        self.phase = None

    @property
    def diverged(self) -> torch.Tensor:
        return ~self.alive

    def start_phase(self, phase):
        self.phase = phase
        names = self.model.trainable(phase)
        for n, v in self.vars.items():
            v.requires_grad_(n in names)
        self.trainable = [self.vars[n] for n in names]
        self.bufs = [torch.zeros_like(v) for v in self.trainable]
        self.shapes = [(self.G,) + (1,) * (v.ndim - 1) for v in self.trainable]
        self.wd_views = [self.wd.view(s) for s in self.shapes]

    def outputs(self, x):
        """(out, out₁, residual) for all models on x: (n, d) or (G, n, d)."""
        return self.model.parts(x, p0=self.p0, variables=self.vars, phase=self.phase)

    def epoch(self, x, y, epoch, cancel):
        N, B = x.shape[0], self.protocol.batch_size
        lr = self.lr_dropped if epoch >= self.drop_epoch else self.lr0
        perm = torch.stack([torch.randperm(N, generator=g) for g in self.gens])
        if x.device.type == "cuda":  # an asynchronous copy: no host synchronisation
            perm = perm.pin_memory().to(x.device, non_blocking=True)
        else:
            perm = perm.to(x.device)
        xe = x[perm]  # (G, N, d): every model's epoch of mini-batches, gathered once
        ye = y[perm] if y.ndim == 2 else torch.gather(y, 1, perm.unsqueeze(-1).expand(-1, -1, y.shape[-1]))
        for s in range(0, N, B):
            if V.cancelled(cancel):
                raise _Cancelled
            self.step(xe[:, s:s + B], ye[:, s:s + B], lr)

    def step(self, xb, yb, lr0):
        out = self.model.output(xb, p0=self.p0, variables=self.vars, phase=self.phase)
        loss = 0.5 * (out - yb).square().sum(-1).mean(-1)  # (G,): eq 6.1 averaged over the batch
        grads = torch.autograd.grad(loss.sum(), self.trainable)
        with torch.no_grad():
            # NaN fails the comparison too; a diverged model's lr is 0 from here on
            torch.logical_and(self.alive, loss <= DIVERGENCE_LOSS, out=self.alive)
            lr = lr0 * self.alive
            step = torch._foreach_mul(self.trainable, self.wd_views)  # weight decay, then the gradient
            torch._foreach_add_(step, grads)
            torch._foreach_mul_(self.bufs, self.protocol.momentum)
            torch._foreach_add_(self.bufs, step)
            torch._foreach_sub_(self.trainable, torch._foreach_mul(self.bufs, [lr.view(s) for s in self.shapes]))

    @torch.no_grad()
    def evaluate(self, xtr, ytr, xte, yte, *, parts):
        out_tr, _, _ = self.outputs(xtr)
        out, out1, res = self.outputs(xte)
        errs = {"train": ((out_tr - ytr) ** 2).sum(-1).mean(-1),
                "test": ((out - yte) ** 2).sum(-1).mean(-1)}
        base, comp = parts
        nan = torch.full_like(errs["test"], math.nan)
        resnet = networks.ARCHITECTURES[self.model.arch].residual
        errs["out1_vs_base"] = ((out1 - base) ** 2).sum(-1).mean(-1) if resnet and base is not None else nan
        errs["residual_vs_composite"] = (((res - comp) ** 2).sum(-1).mean(-1)
                                         if resnet and comp is not None else nan)
        return {n: torch.where(self.alive, v, nan) for n, v in errs.items()}

    def final_params(self):
        """Trained parameters on the CPU; a diverged model's are NaN (not silently finite)."""
        out = {}
        for n, w in self.model.params(self.p0, self.vars).items():
            w = w.detach()
            mask = self.alive.view((self.G,) + (1,) * (w.ndim - 1))
            out[n] = torch.where(mask, w, torch.full_like(w, math.nan)).cpu()
        return out


def _order_seed(seed: int) -> int:
    """Seed of a model's mini-batch order, distinct from its initialisation seed."""
    return (int(seed) * 1_000_003 + 7919) % (2**63 - 1)


def paper_grid(lo: float, hi: float) -> list[float]:
    """The values {1, 2, 5}·10^k lying in [lo, hi] (arXiv v3 §8.1's grid)."""
    if not (0 < lo <= hi):
        raise ValueError(f"need 0 < lo <= hi, got lo={lo!r}, hi={hi!r}")
    out = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for mant in (1, 2, 5):
            v = float(f"{mant}e{e}")
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                out.append(v)
    return out


@dataclass
class GridResult:
    """All runs of a grid search, the selected one and its reruns.

    ``select`` is ``"test"`` (pick the lowest test error, as arXiv v3 §8.1
    did: optimistic) or ``"val"`` (pick on validation samples, drawn fresh by default
    (:func:`validation_split`), then report that run's test error: honest). Every row records
    the rule, its ``role`` (``"grid"`` for the lr × wd search, ``"rerun"``
    for the selected cell retrained with a fresh initialisation seed) and
    whether it was selected. ``reruns`` are the rerun rows alone: they show
    whether the selected result survives a new initialisation.
    """

    rows: list[dict]
    best: dict | None
    select: str
    interrupted: bool
    wall_time: float
    reruns: list[dict] = field(default_factory=list)


def grid_search(target, learner: Learner, *, n_train: int, lrs, wds, seeds=(0,), rerun_seeds=(),
                select: str = "test", validation: str = "fresh", val_size: int | None = None,
                val_seed: int | None = None, val_fraction: float = VAL_FRACTION, n_test: int = 2000, data_seed: int = 0,
                protocol: Protocol = Protocol(), device=None,
                dtype=torch.float32, progress: bool = True, max_batch: int | None = None,
                callback=None, cancel=None) -> GridResult:
    """Train the whole lr × wd × seed grid of one :class:`Learner` on one target as batched programs,
    select the best run, then retrain the selected cell with ``rerun_seeds``.

    Data come from :func:`~resnetlearn.targets.concept.data_split` (``n_train`` with
    ``data_seed``, ``n_test`` with ``data_seed + 1``). With ``select="val"``
    the selection uses validation samples (:func:`validation_split`): by default
    (``validation="fresh"``) ``val_size`` new samples drawn with ``val_seed`` while SGD trains on all
    ``n_train``; ``validation="holdout"`` holds out the last ``val_fraction`` of the training samples
    instead. ``max_batch`` caps how many models train at once (memory).
    The reruns use the same data and mini-batch seeds derived from their own
    initialisation seed, so they measure the spread over initialisations
    that one shipped number hides.
    """
    from ..targets.concept import data_split

    Learner.check(learner)
    V.choice("select", select, SELECTIONS)
    lrs = V.reals("lrs (learning rates)", lrs, lo=0, lo_open=True)
    wds = V.reals("wds (weight decays)", wds, lo=0)
    seeds = V.seeds("seeds", seeds)
    rerun_seeds = V.seeds("rerun_seeds", rerun_seeds) if len(V.sequence("rerun_seeds", rerun_seeds)) else []
    if set(rerun_seeds) & set(seeds):
        raise ValueError(f"rerun_seeds must be fresh: {sorted(set(rerun_seeds) & set(seeds))} already in seeds")
    max_batch = None if max_batch is None else V.integer("max_batch", max_batch, lo=1)
    if select == "val":
        split = validation_split(target, n_train, n_test=n_test, data_seed=data_seed, validation=validation,
                                 val_size=val_size, val_seed=val_seed, val_fraction=val_fraction, device=device,
                                 dtype=dtype)
    else:
        split = data_split(target, n_train, n_test=n_test, seed=data_seed, device=device, dtype=dtype)
    if select == "val" and validation == "holdout" and isinstance(protocol, Protocol):  # name the hold-out
        n_val = split.val.x.shape[0]
        protocol.check(split.train.x.shape[0] + n_val, held_out=n_val,
                       why=f"select='val' with val_fraction = {val_fraction:g}")
    combos = [(lr, wd, s) for lr in lrs for wd in wds for s in seeds]
    kw = dict(protocol=protocol, device=device, dtype=dtype, progress=progress, callback=callback,
              cancel=cancel, holdout=split.val)
    rows, t0 = [], time.perf_counter()
    interrupted = _train_chunks(split, learner, combos, max_batch=max_batch, kw=kw, rows=rows, role="grid")
    key = "test_error" if select == "test" else "val_error"
    finite = [r for r in rows if not r["diverged"] and math.isfinite(r[key])]
    best = min(finite, key=lambda r: r[key]) if finite and not interrupted else None
    reruns = []
    if best is not None and rerun_seeds:
        interrupted = _train_chunks(split, learner, [(best["lr"], best["wd"], s) for s in rerun_seeds],
                                    max_batch=max_batch, kw=kw, rows=reruns, role="rerun")
    for r in rows + reruns:
        r.update(select=select, selected=r is best, n_test=n_test, data_seed=data_seed)
        if select == "val":
            r.update(validation=validation, n_val=split.val.x.shape[0])
    return GridResult(rows + reruns, best, select, interrupted=interrupted, wall_time=time.perf_counter() - t0,
                      reruns=reruns)


def _train_chunks(split, learner, combos, *, max_batch, kw, rows, role) -> bool:
    """Train (lr, wd, seed) combinations of ``learner`` in batches of at most ``max_batch``;
    append rows; True if interrupted."""
    size = max_batch or len(combos)
    for start in range(0, len(combos), size):
        chunk = combos[start:start + size]
        res = train_models(split.train, split.test, learner, lrs=[c[0] for c in chunk],
                           wds=[c[1] for c in chunk], seeds=[c[2] for c in chunk], **kw)
        rows += [dict(r, role=role) for r in res.rows()]
        if res.interrupted:
            return True
    return False
