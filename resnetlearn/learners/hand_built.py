"""The solution of arXiv v3 §8.2 built by hand (footnote 16): a learner that is constructed, not searched for.

A two-layer network aᵀσ(Wx) with fixed output signs is trained by SGD on all 2^6 inputs of the d = 6 problem (so
its test error is exact), then padded to the figure's d and widened to its m by duplicating rows: the same
function at every width, with the ‖W‖_F that Figure 4 sets beside SGD's runs. :data:`HAND_BUILT` holds its one
definition (architecture, mode, width, learning rate, mini-batch, when its learning rate drops) and
:meth:`HandBuiltConstruction.build` builds it.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import torch

from ..targets.concept import Sample, parity6_target
from ..validation import Interval, validate_params
from .training import Learner, Protocol, RunOptions, TrainResult, train_models

__all__ = ["HandBuiltConstruction", "HAND_BUILT", "Construction"]


@dataclass
class Construction:
    """What :meth:`HandBuiltConstruction.build` leaves: the trained d = 6 network and the network it describes.

    Parameters
    ----------
    trained : TrainResult
        The d = 6 network trained on all 64 inputs, its test error exact.
    W : torch.Tensor
        The first-layer weights of the network in d dimensions at width m, (m, d).
    A : torch.Tensor
        Its output weights, (1, m).
    """

    trained: TrainResult
    W: torch.Tensor
    A: torch.Tensor


@dataclass(frozen=True)
class HandBuiltConstruction:
    """The solution built by hand for §8.2 (arXiv v3 footnote 16), defined once.

    aᵀσ(Wx), trained by SGD on all 2^d₀ inputs of the d₀-dimensional problem so that its test error is exact, then
    padded to the figure's d and widened to its m (:meth:`build`).

    Parameters
    ----------
    arch : str, default "2layer_signs"
        The architecture: W moves, the ±1/√m signs a stay.
    mode : str, default "hidden"
        The training mode.
    d : int, default 6
        d₀, the dimension it is trained in (footnote 16: d = 6).
    m : int, default 200
        The width it is trained at (footnote 16: m = 200).
    lr : float, default 0.5
        The learning rate (ours).
    batch_size : int, default 16
        The mini-batch size (ours).
    lr_drop_fraction : fractions.Fraction, default Fraction(2, 3)
        Where its learning rate drops (divided by 10), as a fraction of its epochs (ours: two thirds, not §8.1's
        half).
    """

    arch: str = "2layer_signs"
    mode: str = "hidden"
    d: int = 6
    m: int = 200
    lr: float = 0.5
    batch_size: int = 16
    lr_drop_fraction: Fraction = Fraction(2, 3)
    """Where its learning rate drops, as a fraction of its epochs (ours: two thirds, not §8.1's half)."""

    def lr_drop_epoch(self, epochs: int) -> int:
        """The epoch its learning rate drops at: ⌊epochs · :attr:`lr_drop_fraction`⌋ (exact: 533 of 800).

        Parameters
        ----------
        epochs : int
            The epochs of its training.

        Returns
        -------
        int
            The epoch of the drop.
        """
        return math.floor(epochs * self.lr_drop_fraction)

    def sample(self) -> Sample:
        """All 2^d inputs of {±1/√d}^d with their labels (:func:`parity6_target`), in float64."""
        x = torch.tensor(list(itertools.product((1.0, -1.0), repeat=self.d)), dtype=torch.float64) / self.d**0.5
        return Sample(x, parity6_target(self.d)(x), None, None)

    def steps(self, epochs: int) -> int:
        """The SGD steps of its training: ``epochs`` passes over the 2^d inputs.

        Parameters
        ----------
        epochs : int
            The epochs of its training.

        Returns
        -------
        int
            ``epochs`` · ⌈2^d / batch_size⌉.
        """
        return epochs * math.ceil(2**self.d / self.batch_size)

    @validate_params({"wd": Interval(float, 0), "d": Interval(int, 1), "m": Interval(int, 1),
                      "epochs": Interval(int, 1)})
    def build(self, wd: float, *, d: int, m: int, epochs: int, cancel=None) -> Construction:
        """Train aᵀσ(Wx) on all 2^:attr:`d` inputs, then carry it to d dimensions and width m.

        The network of width :attr:`m` is trained on :meth:`sample` (so its test error is exact) for ``epochs`` epochs
        (the lr drops after :attr:`lr_drop_fraction` of them), in float64 on the CPU. W is then padded with d − 6 zero
        columns (the 6 used columns scaled by √(d/6), since inputs are ±1/√d) and its rows (and the output signs) are
        duplicated up to width ``m`` with rescaling by √(200/m): the same function, the same test error,
        ‖W‖_F = √(d/6)·‖W₆‖_F at every width.

        Parameters
        ----------
        wd : float
            The weight decay, >= 0.
        d : int
            The figure's dimension, >= the construction's :attr:`d` (keyword-only, as the parameters below).
        m : int
            The figure's width, a multiple of the construction's :attr:`m`.
        epochs : int
            The epochs of training, >= 1.
        cancel : threading.Event, callable or None, default None
            Stops the training between two SGD steps when set or returning True (``trained.interrupted``).

        Returns
        -------
        Construction
            The trained network and its W (m, d) and A (1, m).

        Raises
        ------
        ValueError
            ``d`` below the construction's d₀, or ``m`` not a multiple of its width (at least that width).
        """
        if d < self.d:  # d and m against the construction's own d₀ and width
            raise ValueError(f"d must be an integer in [{self.d}, inf] (the construction's d₀ and more), got {d}")
        if m < self.m:
            raise ValueError(f"m must be an integer in [{self.m}, inf] (the construction's width and more), got {m}")
        if m % self.m:
            raise ValueError(f"m = {m}: the construction widens its width-{self.m} network by duplicating rows, so m "
                             f"must be a multiple of {self.m} (e.g. {self.m * max(1, round(m / self.m))})")
        full = self.sample()
        res = train_models(full, full, Learner(self.arch, self.mode, m=self.m), lrs=[self.lr], wds=[wd], seeds=[0],
                           protocol=Protocol(epochs=epochs, batch_size=self.batch_size,
                                             lr_drop_epoch=self.lr_drop_epoch(epochs), eval_every=epochs),
                           progress=False, options=RunOptions(dtype=torch.float64, device="cpu", cancel=cancel))
        Wd = torch.zeros(self.m, d, dtype=torch.float64)
        Wd[:, :self.d] = res.params["W"][0] * (d / self.d) ** 0.5
        scale = (self.m / m) ** 0.5
        return Construction(res, Wd.repeat(m // self.m, 1) * scale, res.params["A"][0].repeat(1, m // self.m) * scale)


HAND_BUILT = HandBuiltConstruction()
"""§8.2's hand-built solution, footnote 16."""
