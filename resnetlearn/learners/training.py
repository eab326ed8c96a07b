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

What each mode means is one record of :data:`resnetlearn.learners.modes.MODES`; the batched engine that
trains G models at once (and, with a :class:`FrozenGate`, the talk's frozen-gate network instead of the ReLU
network) is :mod:`resnetlearn.learners.engine`; the lr × wd search over such calls is
:mod:`resnetlearn.learners.search`. This module holds the learner record, the protocol and :func:`train_models`,
the one call that trains.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, asdict, dataclass, field

import torch
from tqdm.auto import tqdm

from .. import memory
from ..device import select_device
from ..validation import (
    Boolean,
    FloatDtype,
    Instance,
    Interval,
    NoneOr,
    Noted,
    Options,
    Reals,
    Seeds,
    Tensor,
    validate_fields,
    validate_params,
)
from . import networks
from .engine import Data, FrozenGate, Log, Model, State
from .modes import MODES, Mode, mode_of

VAL_FRACTION = 0.2
"""The validation part of a search that selects on validation (``select="val"``), relative to the N training
samples: a fresh validation set has ⌈0.2·N⌉ samples (:func:`default_val_size`), a hold-out takes the last
round(0.2·N) of them. Ours (the paper selects on the test set)."""
POSITIVE = Interval(int, 1)
LRS = Noted(Reals(lo=0, lo_open=True), "learning rates")
"""Learning rates: one per model, or one for all, each > 0."""
WDS = Noted(Reals(lo=0), "weight decays")
"""Weight decays: one per model, or one for all, each >= 0."""


@validate_params({"arch": Options(networks.ARCHITECTURES), "n_models": POSITIVE, "n_eval": POSITIVE,
                  "mode": Options(MODES), "dtype": FloatDtype()})
def training_bytes(arch: str, d: int, k: int, m: int, *, n_models: int = 1, n_eval: int,
                   mode: str = "all", dtype=torch.float32) -> int:
    """Bytes held while training ``n_models`` networks of width ``m`` together.

    The accounting of :mod:`resnetlearn.memory`'s docstring, from the layer graph's shapes at any width
    (:meth:`~resnetlearn.learners.networks.Architecture.shapes`).

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`resnetlearn.learners.networks.ARCHITECTURES`.
    d : int
        The input dimension.
    k : int
        The number of outputs.
    m : int
        The width.
    n_models : int, default 1
        The number of models trained together, >= 1 (keyword-only, as the parameters below).
    n_eval : int
        The largest number of samples one forward pass sees, >= 1 (:func:`sample_sizes`).
    mode : {"all", "hidden", "last", "ntk"}, default "all"
        The training mode (:data:`~resnetlearn.learners.modes.MODES`; a linearised mode holds twice the
        activations).
    dtype : torch.dtype, default torch.float32
        A floating dtype.

    Returns
    -------
    int
        The bytes.
    """
    # the layer graph's shapes at any width (not param_shapes, which refuses an odd m for 2layer_signs): the memory
    # check's hint (memory.check_memory) tries every width below a refused one
    P = sum(math.prod(s) for s in networks.ARCHITECTURES[arch].shapes(d, k, m).values())
    acts = memory.ACTIVATION_COPIES * (2 if mode_of(mode).linearised else 1) * n_eval * m
    return memory.itemsize(dtype) * n_models * (memory.PARAM_COPIES * P + acts + n_eval * (d + k))


@dataclass(frozen=True)
class Learner:
    """What is trained, apart from its SGD hyperparameters.

    Training, the grid search and the race pass this one record instead of four loose arguments; it knows nothing of
    figure points or storage. Two learners are equal when they train the same network (architecture, mode, width,
    initialisation). Every field is checked when the record is made (``parameter_constraints``).

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`resnetlearn.learners.networks.ARCHITECTURES` (eq 2.1 / §6 of arXiv v3).
    mode : {"all", "hidden", "last", "ntk"}, default "all"
        The weights SGD moves, a key of :data:`MODES` (arXiv v3 §8.1).
    m : int
        The width, >= 1 (keyword-only, as ``init``).
    init : {"paper", "fan_in", "companion", "ntk"}, default "paper"
        The initialisation, one of :data:`resnetlearn.learners.networks.INITS` (``"paper"`` is arXiv v3 §8.1's).
    """

    arch: str
    mode: str = "all"
    _: KW_ONLY
    m: int
    init: str = "paper"

    parameter_constraints = {"arch": Options(networks.ARCHITECTURES), "mode": Options(MODES),
                             "m": Noted(POSITIVE, "width"), "init": Options(networks.INITS)}

    def __post_init__(self):
        validate_fields(self)

    def __eq__(self, other) -> bool:
        """Two learners are equal when they train the same network (architecture, mode, width, initialisation),
        whichever record holds them (the reproduction's record of a network is this learner)."""
        if not isinstance(other, Learner):
            return NotImplemented
        return (self.arch, self.mode, self.m, self.init) == (other.arch, other.mode, other.m, other.init)

    def __hash__(self) -> int:
        return hash((self.arch, self.mode, self.m, self.init))

    @staticmethod
    def check(value) -> None:
        """Refuse anything but a Learner, naming it ``learner`` (:data:`LEARNER`).

        Parameters
        ----------
        value : object
            The value to check.

        Raises
        ------
        TypeError
            ``value`` is not a :class:`Learner`.
        """
        LEARNER.check("learner", value)

    @property
    def label(self) -> str:
        """``arch(mode)``, the name tables and plots give this learner."""
        return f"{self.arch}({self.mode})"

    @property
    def name(self) -> str:
        """The learner without its mode: its architecture."""
        return self.arch

    @property
    def mode_record(self) -> Mode:
        """Its training mode's record (:data:`resnetlearn.learners.modes.MODES`)."""
        return MODES[self.mode]

    @property
    def kernel_method(self) -> bool:
        """Whether SGD trains a kernel method (mode ``last``: the conjugate kernel, ``ntk``: the NTK, §8.1),
        whose exact ridge solution a figure point computes beside it."""
        return self.mode_record.kernel_method


@dataclass(frozen=True)
class Protocol:
    """The SGD protocol; defaults are those of arXiv v3 §8.1.

    Every field is checked (and numpy/torch scalars normalised) when the protocol is made.

    Parameters
    ----------
    epochs : int, default 800
        Passes over the training samples, >= 1 (arXiv v3 §8.1: 800).
    batch_size : int, default 50
        The mini-batch size, >= 1 (arXiv v3 §8.1: 50); at most the training samples SGD sees (:meth:`check`).
    momentum : float, default 0.9
        The SGD momentum, in [0, 1) (arXiv v3 §8.1: 0.9).
    lr_drop_epoch : int or None, default None
        The epoch at which the learning rate is divided by ``lr_drop_factor``, in [0, epochs]. None is half of
        ``epochs``, where arXiv v3 §8.1 drops the learning rate (÷10 at epoch 400 of 800); it is then stored as that
        number, so ``Protocol()`` drops at 400 and ``Protocol(epochs=100)`` at 50.
    lr_drop_factor : float, default 10.0
        What the learning rate is divided by at ``lr_drop_epoch``, >= 1 (arXiv v3 §8.1: 10; 1: no drop at all).
    eval_every : int, default 50
        Epochs between two evaluations of the errors (the curves), >= 1.
    layerwise : bool, default False
        Train the ResNet's blocks one after the other instead of jointly (ResNets and modes that train the network
        only).
    """

    epochs: int = 800
    batch_size: int = 50
    momentum: float = 0.9
    lr_drop_epoch: int | None = None
    lr_drop_factor: float = 10.0
    eval_every: int = 50
    layerwise: bool = False

    parameter_constraints = {
        "epochs": POSITIVE, "batch_size": POSITIVE, "momentum": Interval(float, 0, 1, closed="left"),
        "lr_drop_factor": Noted(Interval(float, 1), "the learning rate is divided by it"),
        "eval_every": POSITIVE, "layerwise": Boolean(),
        "lr_drop_epoch": NoneOr(Noted(Interval(int, 0, "epochs"), lambda checked: (
            f"left out: epochs // 2 = {checked['epochs'] // 2}; lr_drop_factor=1: no drop"))),
    }

    def __post_init__(self):
        """Every field checked (and numpy/torch scalars normalised) when the protocol is made."""
        validate_fields(self)
        if self.lr_drop_epoch is None:  # §8.1: the drop comes half-way through training
            object.__setattr__(self, "lr_drop_epoch", self.epochs // 2)

    def check(self, n_train: int, *, held_out: int = 0, why: str = "") -> None:
        """The checks that need the data: a mini-batch cannot exceed the samples SGD trains on.

        Parameters
        ----------
        n_train : int
            The number of training samples.
        held_out : int, default 0
            How many of them are set aside for validation (keyword-only); SGD sees the other ``n_train - held_out``, and
            the error says so.
        why : str, default ""
            The setting that holds them out, as the error names it (keyword-only).

        Raises
        ------
        ValueError
            ``batch_size`` exceeds the samples SGD sees.
        """
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
        """The same protocol shortened (lr drop at half-time), for classrooms and tests.

        Parameters
        ----------
        epochs : int, default 100
            The epochs, >= 1.
        **kw
            Any other field of :class:`Protocol`.

        Returns
        -------
        Protocol
            The protocol.
        """
        return cls(epochs=epochs, **kw)


PAPER_PROTOCOL = Protocol()
"""The full protocol of arXiv v3 §8.1."""
LEARNER = Instance(Learner, "Learner(arch, mode, m=..., init=...)")
PROTOCOL = Instance(Protocol)


@dataclass
class TrainResult:
    """Outcome of :func:`train_models` for G models.

    :meth:`predict` and :meth:`error` evaluate exactly the trained models in every mode (they keep θ₀ and, for
    ``ntk``, Δ itself), giving the reported errors bit for bit for models trained on the CPU (they compute on the CPU,
    so a GPU-trained result agrees up to rounding).

    Parameters
    ----------
    configs : list of dict
        One configuration per model (architecture, mode, width, lr, wd, seed, protocol, ...).
    test_error : torch.Tensor
        (G,) final test errors, E‖out(x) − y‖², NaN where diverged.
    train_error : torch.Tensor
        (G,) final training errors, NaN where diverged.
    diverged : torch.Tensor
        (G,) booleans.
    epochs : list of int
        The epochs at which ``curves`` were evaluated.
    curves : dict of str to torch.Tensor
        Name → (E, G) tensor at ``epochs``: train, test, and for the ResNets out1_vs_base = E‖out₁ − β·F‖²,
        residual_vs_composite = E‖residual − α·G(F)‖² on the test set.
    epochs_done : int
        Epochs finished.
    interrupted : bool
        True when training was cancelled (results are those of the last finished epoch).
    wall_time : float
        Seconds it took.
    params : dict of str to torch.Tensor
        The trained parameters. Mode ``last``: the trained readout A with every other weight at its initial value
        (the model is A·φ₀(x) with φ₀ from :func:`networks.readout_features` at initialisation, which for the §6
        ResNet is not ``networks.forward`` of these params); mode ``ntk``: θ₀ + Δ, while the model is the
        linearisation at θ₀.
    holdout_error : torch.Tensor or None, default None
        (G,) errors on the hold-out sample (None: no hold-out).
    learner : Learner or None, default None
        The learner trained (architecture, mode, width, initialisation).
    p0 : dict of str to torch.Tensor or None, default None
        The initial parameters (modes ``last`` and ``ntk``, whose models are defined at θ₀).
    displacement : dict of str to torch.Tensor or None, default None
        Mode ``ntk``: the trained Δ = θ − θ₀ (``params`` − ``p0`` would round differently).
    gate : FrozenGate or None, default None
        The frozen-gate network was trained in place of the ReLU network (its ``params`` hold gates and values).
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
    learner: Learner | None = None
    """The learner trained (architecture, mode, width, initialisation)."""
    p0: dict[str, torch.Tensor] | None = field(default=None, repr=False)
    """The initial parameters (modes ``last`` and ``ntk``, whose models are defined at θ₀)."""
    displacement: dict[str, torch.Tensor] | None = field(default=None, repr=False)
    """Mode ``ntk``: the trained Δ = θ − θ₀ (``params`` − ``p0`` would round differently)."""
    gate: FrozenGate | None = None
    """The frozen-gate network was trained in place of the ReLU network (its ``params`` hold gates and values)."""

    @validate_params({"x": Tensor(ndim=(2, 3)), "parts": Boolean(), "model": NoneOr(Interval(int, 0))})
    def predict(self, x: torch.Tensor, *, parts: bool = False, model: int | None = None):
        """The G trained models' outputs on ``x``.

        In modes ``all``/``hidden`` :func:`networks.forward` of ``params``; ``last`` the trained readout on the initial
        network's features A·φ₀(x); ``ntk`` the network linearised at θ₀ moved by Δ. Computed on the CPU in the dtype of
        ``params``.

        Parameters
        ----------
        x : torch.Tensor
            The inputs, (n, d), or (G, n, d), finite.
        parts : bool, default False
            Return (out, out₁, residual) instead of out (keyword-only).
        model : int or None, default None
            The index of one model, evaluated alone (G = 1 in the result; the models are independent), >= 0 and below G
            (None: all G; keyword-only).

        Returns
        -------
        torch.Tensor or tuple of torch.Tensor
            The outputs, (G, n, k); with ``parts=True``, (out, out₁, residual).

        Raises
        ------
        ValueError
            ``model`` is not the index of one of the G models.
        """
        dtype = self.params["A"].dtype
        x = x.to("cpu", dtype)
        one = self._one(model)
        net = Model(self.learner.arch, self.learner.mode_record, self.gate)
        with torch.no_grad():
            out = net.parts(x, p0=one(self.p0), variables=one(self.displacement if net.linearised else self.params))
        if model is not None and self.gate is not None:  # the gated network is evaluated whole, then cut
            out = tuple(o[model:model + 1] for o in out)
        return out if parts else out[0]

    def _one(self, model: int | None):
        """A function keeping model ``model`` of a dict of (G, ...) tensors (all of them for None, and for the
        frozen-gate network, evaluated whole); ``model`` against this result's G models."""
        G = self.test_error.shape[0]
        if model is not None and model >= G:
            raise ValueError(f"model must be an index in [0, {G}), got {model!r}")
        if model is None or self.gate is not None:
            return lambda tensors: tensors
        return lambda tensors: None if tensors is None else {k: v[model:model + 1] for k, v in tensors.items()}

    def error(self, sample) -> torch.Tensor:
        """E‖out(x) − y‖² of each model on ``sample``.

        This is the test error this result reports, when ``sample`` is its test set.

        Parameters
        ----------
        sample : Sample
            The sample (x, y), y of shape (n, k) or (G, n, k) (:class:`~resnetlearn.targets.concept.Sample`).

        Returns
        -------
        torch.Tensor
            (G,) float64, NaN where diverged.
        """
        y = Tensor(ndim=(2, 3)).check(f"{type(sample).__name__}.y", sample.y).to("cpu", self.params["A"].dtype)
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


def _per_model(name: str, vals: list[float], G: int) -> torch.Tensor:
    """Checked values (:data:`LRS`, :data:`WDS`) against the G models: one for each, or one for all."""
    if len(vals) == 1:
        vals = vals * G
    if len(vals) != G:
        raise ValueError(f"{name} must have one value per model ({G} seeds) or a single value, got {len(vals)}")
    return torch.tensor(vals, dtype=torch.float64)


def _check_sample(sample, name: str, G: int) -> None:
    """x (N, d) and y (N, k) or (G, N, k) (one target per model), the same N, finite; base/composite like y."""
    Tensor(ndim=2).check(f"{name}.x", sample.x)
    y = Tensor(ndim=(2, 3)).check(f"{name}.y", sample.y)
    if y.ndim == 3 and y.shape[0] != G:
        raise ValueError(f"{name}.y has a model axis of {y.shape[0]} but {G} models are trained "
                         f"(y must be (N, k) or (G, N, k))")
    if y.shape[-2] != sample.x.shape[0]:
        raise ValueError(f"{name}: x has {sample.x.shape[0]} samples but y has {y.shape[-2]}")
    for part in ("base", "composite"):
        t = getattr(sample, part, None)
        if t is not None and Tensor().check(f"{name}.{part}", t).shape[-2:] != y.shape[-2:]:
            raise ValueError(f"{name}.{part} must have the shape of {name}.y {tuple(y.shape)}, got {tuple(t.shape)}")


def _check_compatible(train, other, name: str) -> None:
    """The same input dimension d and number of outputs k as the training set (nothing broadcast)."""
    if other.x.shape[1] != train.x.shape[1]:
        raise ValueError(f"{name}.x has d = {other.x.shape[1]} features but train.x has d = {train.x.shape[1]}")
    if other.y.shape[-1] != train.y.shape[-1]:
        raise ValueError(f"{name}.y has k = {other.y.shape[-1]} outputs but train.y has k = {train.y.shape[-1]}")


@dataclass(frozen=True)
class RunOptions:
    """How a training runs, beyond what it trains.

    What it trains is the learner, its learning rates, weight decays and seeds, the protocol and the samples. This is
    one record that :func:`train_models` and the searches over it (:func:`resnetlearn.learners.search.grid_search`)
    pass along. Every field is checked when the record is made (``parameter_constraints``), the device when the
    training starts (:func:`resnetlearn.device.select_device`).

    Parameters
    ----------
    device : str, torch.device or None, default None
        Where it computes (None: the best available).
    dtype : torch.dtype, default torch.float32
        A floating dtype.
    capture : bool or None, default None
        Replay each epoch as a recorded CUDA graph (:mod:`resnetlearn.learners.capture`; None: on CUDA devices, eager
        elsewhere; True on a non-CUDA device is an error). The recorded kernels are the eager ones, and cancellation
        is then checked between epochs.
    callback : callable or None, default None
        Called as ``callback(info)`` every ``callback_every`` epochs with the latest errors (live plots).
    callback_every : int or None, default None
        Epochs between callbacks, >= 1 (None: the protocol's ``eval_every``).
    cancel : threading.Event, callable or None, default None
        Stops training cleanly after the current step when set or returning True, as Ctrl-C does.
    max_batch : int or None, default None
        How many models a search trains at once, >= 1 (memory; None: all of them); read by the searches.
    init_scale : float, default 1.0
        Multiplies every initial weight, > 0 (the talk's knob of the lazy regime; 1 is the paper's initialisation).
    gate : FrozenGate or None, default None
        Train the talk's frozen-gate network (:class:`~resnetlearn.learners.engine.FrozenGate`; modes ``all`` and
        ``hidden``) in place of the ReLU network.
    order_seeds : list of int or None, default None
        The seeds of the models' mini-batch orders, one per model, each in [0, 2**63 - 1] (None: derived from the
        initialisation seeds, apart from them).
    chunk_log : object or None, default None
        Where a search keeps its finished batches of models so that a later run resumes part-way (None: nowhere):
        anything with ``rows(role, combos)`` (the kept rows of those (lr, wd, seed) models, or None) and
        ``keep(role, combos, rows, seconds)``; read by the searches, as ``max_batch`` is.
    """

    device: object = None
    dtype: torch.dtype = torch.float32
    capture: bool | None = None
    callback: Callable | None = None
    callback_every: int | None = None
    cancel: object = None
    max_batch: int | None = None
    init_scale: float = 1.0
    gate: FrozenGate | None = None
    order_seeds: object = None
    chunk_log: object = None

    parameter_constraints = {"dtype": FloatDtype(), "capture": NoneOr(Boolean()), "callback_every": NoneOr(POSITIVE),
                             "max_batch": NoneOr(POSITIVE), "init_scale": Interval(float, 0, closed="right"),
                             "gate": NoneOr(Instance(FrozenGate)), "order_seeds": NoneOr(Seeds())}

    def __post_init__(self):
        validate_fields(self)


OPTIONS = NoneOr(Instance(RunOptions, "RunOptions(device=..., dtype=..., callback=..., cancel=..., ...)"))


@validate_params({"learner": LEARNER, "lrs": LRS, "wds": WDS, "seeds": Seeds(), "protocol": PROTOCOL,
                  "progress": Boolean(), "options": OPTIONS})
def train_models(train, test, learner: Learner, *, lrs, wds, seeds, protocol: Protocol = Protocol(),
                 holdout=None, progress: bool = True, options: RunOptions | None = None) -> TrainResult:
    """Train G = len(seeds) models of one :class:`Learner` (architecture, mode, width, initialisation) together.

    Ctrl-C stops training cleanly after the current step. Every argument, the samples against each other and the
    memory needed are checked before training starts.

    Parameters
    ----------
    train : Sample
        The training samples (:class:`~resnetlearn.targets.concept.Sample`: x (N, d), y (N, k), and for the error
        decomposition base, composite); y (and base, composite) may carry a leading model axis (G, N, k) to give
        each model its own target on the same inputs (e.g. a β sweep, arXiv v3 Figure 3).
    test : Sample
        The test samples, with the d and k of ``train``.
    learner : Learner
        What is trained.
    lrs : list of float
        The learning rates, each > 0: one per model, or one for all (keyword-only, as every parameter below). The
        paper's are chosen from {1, 2, 5}·10^−k (arXiv v3 §8.1).
    wds : list of float
        The weight decays, each >= 0: one per model, or one for all (arXiv v3 §8.1).
    seeds : list of int
        The initialisation seeds, one per model, each in [0, 2**63 - 1].
    protocol : Protocol, default Protocol()
        The SGD protocol (arXiv v3 §8.1's by default).
    holdout : Sample or None, default None
        Evaluated at the end into ``holdout_error`` (validation-based selection uses it).
    progress : bool, default True
        Show a progress bar.
    options : RunOptions or None, default None
        Where it computes, how a caller follows and stops it, and the talk's variations (:class:`RunOptions`; None:
        the defaults).

    Returns
    -------
    TrainResult
        The trained models, their errors and curves.

    Raises
    ------
    ValueError
        A value out of its range, samples that do not agree, a mini-batch larger than the training samples, a
        setting the learner cannot train with (layer-wise training or the frozen-gate network), or a batch that would
        not fit in memory.
    """
    options = RunOptions() if options is None else options
    device, dtype, capture, gate = options.device, options.dtype, options.capture, options.gate
    callback, callback_every, cancel = options.callback, options.callback_every, options.cancel
    _check_setting(learner, protocol, gate)
    G = len(seeds)
    order_seeds = _order_seeds(options.order_seeds, G)
    lr = _per_model("lrs (learning rates)", lrs, G)
    wd = _per_model("wds (weight decays)", wds, G)
    init_scale = options.init_scale
    _check_samples(train, test, holdout, G)
    dev = select_device(device)
    capture_asked, capture = _capture_choice(capture, dev)
    _check_memory(learner, train, test, holdout, G=G, device=dev, dtype=dtype)
    data = Data(train.x.to(dev, dtype), train.y.to(dev, dtype), test.x.to(dev, dtype), test.y.to(dev, dtype),
                parts=(None if test.base is None else test.base.to(dev, dtype),
                       None if test.composite is None else test.composite.to(dev, dtype)))
    N, d, k = data.xtr.shape[0], data.xtr.shape[1], data.ytr.shape[-1]
    protocol.check(N)
    drawn = networks.init_params(learner.arch, d=d, k=k, m=learner.m, seeds=seeds, init=learner.init, device=dev,
                                 dtype=dtype)
    p0 = {n: v * init_scale for n, v in drawn.items()}
    state = State(learner.arch, learner.mode, p0, lr=lr.to(dev, dtype), wd=wd.to(dev, dtype), protocol=protocol,
                  seeds=seeds, gate=gate, order_seeds=order_seeds)
    configs = [dict(model=learner.arch, mode=learner.mode, m=learner.m, lr=float(lr[g]), wd=float(wd[g]),
                    seed=seeds[g], init=learner.init, init_scale=init_scale, n_train=N, layerwise=protocol.layerwise,
                    **_protocol_dict(protocol))
               for g in range(G)]
    t0 = time.perf_counter()
    log = Log(state, data, every=callback_every or protocol.eval_every, callback=callback)
    with tqdm(total=log.total_epochs, desc=f"{learner.label} ×{G}", disable=not progress, leave=False) as bar:
        interrupted = log.run(capture=capture, explicit=capture_asked, cancel=cancel, bar=bar)
    return _result(state, log, learner, configs=configs, holdout=holdout, interrupted=interrupted, t0=t0, gate=gate)


def _check_setting(learner: Learner, protocol, gate) -> None:
    """The protocol and gate a learner can train with (checks between the arguments): layer-wise training for a
    ResNet, and layer-wise training and the frozen-gate network for a mode that trains the network itself
    (:attr:`Mode.trains_network`)."""
    network_modes = " or ".join(repr(n) for n, how in MODES.items() if how.trains_network)
    if protocol.layerwise and not networks.ARCHITECTURES[learner.arch].residual:
        resnets = [n for n, a in networks.ARCHITECTURES.items() if a.residual]
        raise ValueError(f"layerwise training applies to the ResNets ({', '.join(resnets)}) only")
    if protocol.layerwise and not learner.mode_record.trains_network:
        raise ValueError(f"layerwise training needs mode {network_modes}")
    if gate is not None and (not learner.mode_record.trains_network or protocol.layerwise):
        raise ValueError(f"the frozen-gate network trains in mode {network_modes}, not layer-wise")


def _order_seeds(order_seeds: list[int] | None, G: int) -> list[int] | None:
    """The checked mini-batch order seeds (:class:`RunOptions`) against the G models: one for each."""
    if order_seeds is None:
        return None
    if len(order_seeds) != G:
        raise ValueError(f"order_seeds must have one seed per model ({G}), got {len(order_seeds)}")
    return order_seeds


def _check_samples(train, test, holdout, G: int) -> None:
    """Each sample well formed (:func:`_check_sample`), the test and hold-out ones like the training one (checks
    of the samples' tensors against each other and the G models)."""
    for name, smp in (("train", train), ("test", test), ("holdout", holdout)):
        if smp is not None:
            _check_sample(smp, name, G)
    _check_compatible(train, test, "test")
    if holdout is not None:
        _check_compatible(train, holdout, "holdout")


def _capture_choice(capture: bool | None, dev: torch.device) -> tuple[bool, bool]:
    """(whether a CUDA graph was asked for explicitly, whether to record one): None records on CUDA only."""
    if capture and dev.type != "cuda":
        raise ValueError(f"capture=True records CUDA graphs and needs a CUDA device, got {dev.type!r}; "
                         "use capture=None (eager off CUDA) or False")
    return bool(capture), dev.type == "cuda" if capture is None else capture


def sample_sizes(train, test, holdout=None) -> dict:
    """The sizes :func:`training_bytes` reads from the samples of a training.

    Parameters
    ----------
    train : Sample
        The training samples.
    test : Sample
        The test samples.
    holdout : Sample or None, default None
        The hold-out samples, if any.

    Returns
    -------
    dict
        ``d``, ``k`` and ``n_eval``, the largest number of samples among them.
    """
    return dict(d=train.x.shape[-1], k=train.y.shape[-1],
                n_eval=max(train.x.shape[-2], test.x.shape[-2], 0 if holdout is None else holdout.x.shape[-2]))


@validate_params({"learner": LEARNER, "n_models": POSITIVE})
def models_that_fit(learner: Learner, n_models: int, *, d: int, k: int, n_eval: int, device=None,
                    dtype=torch.float32, have: int | None = None) -> int:
    """How many of ``n_models`` models of ``learner`` can train together in memory.

    :func:`resnetlearn.memory.largest_fitting` of :func:`training_bytes`: the limit :func:`train_models` checks.

    Parameters
    ----------
    learner : Learner
        What is trained.
    n_models : int
        The number of models wanted, >= 1.
    d : int
        The input dimension (keyword-only, as the parameters below).
    k : int
        The number of outputs.
    n_eval : int
        The largest number of samples one forward pass sees (:func:`sample_sizes`).
    device : str, torch.device or None, default None
        Where the memory is read (None: the CPU's RAM).
    dtype : torch.dtype, default torch.float32
        The training's dtype.
    have : int or None, default None
        The bytes available (None: read on ``device``, :func:`resnetlearn.memory.available_bytes`).

    Returns
    -------
    int
        ``n_models`` when all fit (or the memory cannot be read), 0 when not even one does.
    """
    need = lambda g: training_bytes(learner.arch, d, k, learner.m, n_models=g, n_eval=n_eval, mode=learner.mode,
                                    dtype=dtype)
    return memory.largest_fitting(need, n_models, device=device, have=have)


def _check_memory(learner: Learner, train, test, holdout, *, G: int, device, dtype) -> None:
    """Refuse a batch whose training would not fit in memory (:func:`training_bytes`)."""
    sizes = sample_sizes(train, test, holdout)
    need = lambda w: training_bytes(learner.arch, sizes["d"], sizes["k"], w, n_models=G, n_eval=sizes["n_eval"],
                                    mode=learner.mode, dtype=dtype)
    memory.check_memory(need(learner.m), what=f"training {G} {learner.label} model(s) on {sizes['n_eval']} samples",
                        width_name="m", width=learner.m, need_at=need, device=device)


def _result(state: State, log: Log, learner: Learner, *, configs, holdout, interrupted: bool, t0: float,
            gate) -> TrainResult:
    """The outcome of a finished (or interrupted) run: the final errors, NaN for a diverged model."""
    final = log.finish()
    # a model that blew up in its very last step has non-finite errors without a flagged loss
    div = (state.diverged | ~torch.isfinite(final["train"]) | ~torch.isfinite(final["test"])).cpu()
    nan = torch.full((state.G,), math.nan, dtype=torch.float64)
    hold = None
    if holdout is not None:
        dev, dtype = log.data.xtr.device, log.data.xtr.dtype
        xh, yh = holdout.x.to(dev, dtype), holdout.y.to(dev, dtype)
        with torch.no_grad():
            hold = ((state.outputs(xh)[0] - yh) ** 2).sum(-1).mean(-1).double().cpu()
        hold = torch.where(div, nan, hold)
    test_err = torch.where(div, nan, final["test"].double().cpu())
    train_err = torch.where(div, nan, final["train"].double().cpu())
    return TrainResult(configs=configs, test_error=test_err, train_error=train_err, diverged=div,
                       epochs=log.epochs, curves={n: torch.stack(v).double().cpu() for n, v in log.curves.items()},
                       epochs_done=log.done, interrupted=interrupted, wall_time=time.perf_counter() - t0,
                       params=state.final_params(), holdout_error=hold, learner=learner, gate=gate,
                       p0={n: v.detach().cpu() for n, v in state.p0.items()} if state.model.defined_at_init else None,
                       displacement=({n: v.detach().cpu() for n, v in state.vars.items()}
                                     if state.model.linearised else None))


def _protocol_dict(p: Protocol) -> dict:
    d = asdict(p)
    d.pop("layerwise")
    return d
