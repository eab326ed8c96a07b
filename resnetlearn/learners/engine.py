"""The batched SGD engine behind :func:`resnetlearn.learners.training.train_models` (arXiv v3 §8.1).

All G models of one call share the architecture, mode and width, and differ in learning rate, weight decay and
seed. Their parameters are stacked; the summed loss gives each model exactly its own gradient, and the
hand-written momentum update uses per-model learning rates and weight decays. Each model's initialisation and
mini-batch order come from its own seed, so a model trained inside a batch matches the same model trained alone.

:class:`Model` forms the model of a training mode (the mode's record, :data:`resnetlearn.learners.modes.MODES`,
says what SGD moves and how the output is formed); with a :class:`FrozenGate` the same engine trains the talk's
frozen-gate network instead of the ReLU network. :class:`State` holds one batch's parameters and runs its epochs
(eagerly, or replayed as a CUDA graph by :mod:`resnetlearn.learners.capture`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import KW_ONLY, dataclass, field

import torch

from .. import validation as V
from ..validation import Interval, NoneOr, Options, validate_fields, validate_params
from . import networks
from .capture import CapturedEpochs
from .modes import MODES, Mode, mode_of

DIVERGENCE_LOSS = 1e8
"""A mini-batch loss above this (or non-finite) marks a model as diverged."""


@validate_params({"arch": Options(networks.ARCHITECTURES), "mode": Options(MODES), "phase": NoneOr(Options((1, 2)))})
def trainable_names(arch: str, mode: str, phase: int | None = None) -> list[str]:
    """Which parameters a mode trains (§8.1), read from ``arch``'s layer graph and the mode's record
    (:attr:`Mode.trains_hidden`, :attr:`Mode.trains_readout`): ``all`` every one, ``hidden`` all but the
    readout A, ``last`` A alone, ``ntk`` every one (as a displacement). Layer-wise training (ResNet paper §2.1's
    remark), for a mode that trains the network itself: ``phase`` 1 the first block's (what out₁ depends on; A
    only if the mode trains it), ``phase`` 2 what only the residual branch depends on."""
    rec, how = networks.ARCHITECTURES[arch], mode_of(mode)
    names, readout = list(networks.param_shapes(arch, 1, 1, 2)), rec.readout_params
    if phase is None:
        return how.trainable(names, readout)
    if not how.trains_network:  # the phase against the mode
        raise ValueError(f"layer-wise training needs a mode that trains the network itself, not {mode!r}")
    if phase == 1:
        keep = rec.params_of(rec.out1) - (set() if how.trains_readout else readout)
    else:
        keep = rec.params_of(rec.res) - rec.params_of(rec.out1)
    return [n for n in names if n in keep]


@dataclass(frozen=True)
class FrozenGate:
    """The talk's frozen-gate network in place of the ReLU network
    (:func:`~resnetlearn.learners.networks.gated_forward_parts`):
    every ReLU becomes gate(gate pre-activation)·(value pre-activation), the gates frozen at their random
    initialisation and the values (initialised equal to them) trained. ``smooth`` None: the indicator
    1[· ≥ 0]; a number: the talk's smoothed indicator sigmoid(·/smooth)."""

    smooth: float | None = None

    parameter_constraints = {"smooth": NoneOr(Interval(float, 0, closed="right"))}

    def __post_init__(self):
        validate_fields(self)


@dataclass(frozen=True)
class Model:
    """The model SGD trains for one architecture and training mode (with ``gate``, the frozen-gate network):
    the tensors SGD moves (:meth:`start`, :meth:`trainable`), the function of them that is the model
    (:meth:`parts`, :meth:`output`) and the parameters it ends with (:meth:`params`), each as the mode's
    record (:class:`~resnetlearn.learners.modes.Mode`) says."""

    arch: str
    mode: Mode
    gate: FrozenGate | None = None

    @property
    def linearised(self) -> bool:
        """SGD moves the displacement Δ = θ − θ₀ of the network linearised at θ₀ (mode ``ntk``)."""
        return self.mode.linearised

    @property
    def defined_at_init(self) -> bool:
        """The model is a function of θ₀ as well (a readout on the initial features; the linearisation)."""
        return self.mode.defined_at_init

    def initial(self, p0: dict) -> dict:
        """The model's initial parameters: ``p0``, and with a gate the values' copies of the gates."""
        return networks.with_values(self.arch, p0) if self.gate else p0

    def start(self, p0: dict) -> dict:
        """The tensors SGD moves: the displacement Δ = θ − θ₀ from 0 when linearised, else the parameters."""
        if self.linearised:
            return {n: torch.zeros_like(v) for n, v in p0.items()}
        return {n: v.clone() for n, v in p0.items()}

    def trainable(self, phase: int | None = None) -> list[str]:
        """The names SGD updates (:func:`trainable_names`; with a gate, the values in place of the gates)."""
        names = trainable_names(self.arch, self.mode.name, phase)
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
        if self.mode.linearised:
            return networks.forward_linearized(self.arch, p0, variables, x)
        if self.mode.initial_features:  # a readout on the features of the initial network (conjugate kernel)
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
        if self.mode.initial_features:
            with torch.no_grad():
                phi1, phi2 = networks.readout_features(self.arch, p0, x)
            return torch.bmm(phi1 + phi2, variables["A"].transpose(1, 2))
        if self.mode.linearised:
            return networks.forward_linearized(self.arch, p0, variables, x)[0]
        out1, res = self._branches(x, variables)
        return out1 if phase == 1 else out1 + res

    def params(self, p0: dict, variables: dict) -> dict:
        """The trained parameters: θ₀ + Δ when linearised (mode ``ntk``, while the model is the linearisation
        at θ₀)."""
        return {n: p0[n] + v if self.linearised else v for n, v in variables.items()}


class Cancelled(Exception):
    """Training stopped by its ``cancel`` (between two steps); :func:`train_models` catches it."""


def epoch_runner(state, x, y, capture: bool, *, explicit: bool):
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
                      f"(capture=False skips the attempt)", RuntimeWarning, stacklevel=4)
        return state


class State:
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
        self.model, self.protocol = Model(arch, mode_of(mode), gate), protocol
        self.p0 = self.model.initial(p0)
        self.lr0, self.wd = lr, wd
        drop = protocol.lr_drop_epoch  # Protocol stores an integer (epochs // 2 when left out)
        self.drop_epoch, self.lr_dropped = drop, lr / protocol.lr_drop_factor
        self.G = len(seeds)
        orders = [order_seed(s) for s in seeds] if order_seeds is None else order_seeds
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
                raise Cancelled
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


def order_seed(seed: int) -> int:
    """Seed of a model's mini-batch order, distinct from its initialisation seed."""
    return (int(seed) * 1_000_003 + 7919) % (2**63 - 1)


CURVES = ("train", "test", "out1_vs_base", "residual_vs_composite")
"""The learning curves a run logs (:meth:`State.evaluate`)."""


@dataclass
class Data:
    """One run's samples on the training device: training inputs and targets, test inputs and targets, and
    ``parts`` (β·F, α·G(F)) of the test targets for the ResNets' error decomposition (None where not given)."""

    xtr: torch.Tensor
    ytr: torch.Tensor
    xte: torch.Tensor
    yte: torch.Tensor
    _: KW_ONLY
    parts: tuple = (None, None)


@dataclass
class Log:
    """A run's epochs and what it logs of them: every phase of the protocol (layer-wise training: two), the
    errors (:data:`CURVES`, each a list of (G,) tensors) at ``epochs``, and ``callback`` every ``every`` epochs."""

    state: State
    data: Data
    _: KW_ONLY
    every: int
    callback: object = None
    curves: dict = field(default_factory=lambda: {n: [] for n in CURVES})
    epochs: list = field(default_factory=list)
    done: int = 0

    @property
    def phases(self) -> list:
        return [1, 2] if self.state.protocol.layerwise else [None]

    @property
    def total_epochs(self) -> int:
        return self.state.protocol.epochs * len(self.phases)

    def _evaluate(self) -> dict:
        d = self.data
        return self.state.evaluate(d.xtr, d.ytr, d.xte, d.yte, parts=d.parts)

    def _add(self, errs: dict) -> None:
        for n in self.curves:
            self.curves[n].append(errs[n])
        self.epochs.append(self.done)

    def run(self, *, capture: bool, explicit: bool, cancel, bar) -> bool:
        """Train every phase's epochs (:func:`epoch_runner`), logging as the protocol says; True when
        interrupted (``cancel`` or Ctrl-C), the state then being that of the last finished step."""
        state, d, protocol = self.state, self.data, self.state.protocol
        try:
            for phase in self.phases:
                state.start_phase(phase)
                runner = epoch_runner(state, d.xtr, d.ytr, capture, explicit=explicit)
                for epoch in range(protocol.epochs):
                    if V.cancelled(cancel):  # between epochs (a recorded epoch cannot stop inside)
                        raise Cancelled
                    runner.epoch(d.xtr, d.ytr, epoch, cancel)
                    self.done += 1
                    bar.update(1)
                    self._log_epoch()
        except (Cancelled, KeyboardInterrupt):
            return True
        return False

    def _log_epoch(self) -> None:
        done, last = self.done, self.done == self.total_epochs
        if done % self.state.protocol.eval_every == 0 or last or done % self.every == 0:
            self._add(self._evaluate())
            if self.callback is not None and (done % self.every == 0 or last):
                self.callback(dict(epoch=done, total_epochs=self.total_epochs, epochs=list(self.epochs),
                                   **{n: torch.stack(v).cpu() for n, v in self.curves.items()}))

    def finish(self) -> dict:
        """The final errors, logged at the last epoch done unless they already are."""
        final = self._evaluate()
        if not self.epochs or self.epochs[-1] != self.done:
            self._add(final)
        return final
