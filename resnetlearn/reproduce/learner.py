"""The learners the experiments compare, one record each, and the one place a stored row becomes one.

A learner is one of three kinds, each a record that answers for itself (its name, its label in tables and
legends; how a figure draws it is the classroom's, :mod:`resnetlearn.classroom.styles`):

* :class:`Network` — an architecture of :data:`resnetlearn.learners.networks.ARCHITECTURES` trained by SGD in one
  of the modes of arXiv v3 §8.1, at a width and an initialisation: the plain learner of the engine
  (:class:`resnetlearn.learners.training.Learner`, whose fields it keeps) with what the reproduction asks of it
  (how a stored row names it, what its search costs, its fit);
* :class:`Kernel` — a named kernel of :data:`resnetlearn.kernels.registry.KERNEL_REGISTRY`, on an
  architecture where it is a network's kernel (the spec ``"ntk_inf:2layer"``), tuned by ridge regression
  (§3.1, §7);
* :class:`HandBuilt` — the small-norm solution of §8.2, footnote 16, built by hand.

Each has ``fit(samples, search, *, schedule, device)``: the learner fitted to a figure point's samples
(:class:`resnetlearn.reproduce.fit.Samples`, drawn by each learner in its own dtype) by the point's search
(:class:`resnetlearn.reproduce.point.Search`), returning a result whose ``predict(x)`` is the selected model
(:mod:`resnetlearn.reproduce.fit`: the §8.1 grid by SGD, the §3.1/§7 kernel ridge search, the §8.2 construction).

A stored row names its learner by the keys ``model`` and ``mode`` (kept because they are in the store's
keys); :func:`from_row` is the one place that reads a kind from them, so no other code compares a learner's
kind, mode or architecture name.
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass

from ..kernels.registry import KERNEL_REGISTRY
from ..learners.hand_built import HAND_BUILT
from ..learners.modes import MODES
from ..learners.networks import ARCHITECTURES, param_shapes
from ..learners.search import VAL_FRACTION
from ..learners.training import Learner
from .fit import (
    HandBuiltFit,
    KernelFit,
    NetworkFit,
    Samples,
    checked_schedule,
    fit_hand_built,
    fit_kernel,
    fit_network,
    hand_built_target,
)

__all__ = ["Network", "Kernel", "HandBuilt", "kind_of", "from_row", "label_of", "named"]

KERNEL_MODE = "kernel"
"""The ``mode`` a stored row of a kernel point carries."""
HAND_BUILT_MODE = "-"
"""The ``mode`` a stored row of a hand-built point carries."""


# ----------------------------------------------------------------- networks
class Network(Learner):
    """A network as the reproduction keeps it: the plain learner (architecture, mode, width ``m``, initialisation;
    :class:`resnetlearn.learners.training.Learner`) with the answers a figure point, its store and its work estimate
    ask of every learner record."""

    trained_by_sgd = True
    """Whether it is trained by SGD (the work a run's progress counts)."""
    variant_key = None
    """A network's points of one figure differ by their width, N and data alone (see :attr:`HandBuilt.variant_key`)."""
    grid_searched = True
    """Whether a figure point of it searches an lr × wd grid by SGD and retrains the selected cell on fresh seeds
    (§8.1): its rows carry a width, seeds and the grid's runs."""
    constructed = False
    """Whether it is built by a construction instead of searched for (the hand-built solution of §8.2)."""

    def row_fields(self) -> dict:
        """How a stored row names it: ``model`` (its architecture), ``mode`` and, when it is not §8.1's,
        ``init`` (the stored keys of the points that never named one stay as they are)."""
        return dict(model=self.arch, mode=self.mode, **({} if self.init == "paper" else {"init": self.init}))

    def sgd_work(self, point, *, dims, batch_size: int) -> tuple[Network, list[tuple[int, int, int]], int]:
        """The SGD a figure point of this network costs (the work estimate's per-learner part,
        :mod:`resnetlearn.reproduce.work_estimate`; ``point`` a :class:`resnetlearn.reproduce.point.Point`): the
        network trained (itself), its batched trainings — (networks trained together, SGD steps, parameters of
        one) for the lr × wd grid and for the fresh-seed reruns of the selected cell — and the mini-batch,
        ``batch_size``. ``dims()`` is the point's target's (d, k); a holdout validation trains on N less its
        :data:`~resnetlearn.learners.search.VAL_FRACTION`."""
        d, k = dims()
        search, n_train = point.search, point.data.n_train
        holdout = search.validation_rule().get("validation") == "holdout"
        n_fit = n_train - (round(VAL_FRACTION * n_train) if holdout else 0)
        steps = point.protocol.epochs * math.ceil(n_fit / batch_size)
        params = sum(math.prod(s) for s in param_shapes(self.arch, d, k, self.m).values())
        groups = [len(search.lrs) * len(search.wds) * len(search.grid_seeds or [0]), len(search.rerun_seeds or [])]
        return self, [(g, steps, params) for g in groups if g], batch_size

    def fit(self, samples: Samples, search, *, schedule, device=None, cancel=None, checkpoints=None) -> NetworkFit:
        """This network fitted to ``samples`` by ``search`` (a :class:`resnetlearn.reproduce.point.Search`; arXiv
        v3 §8.1): the lr × wd grid trained by SGD for ``schedule`` on samples drawn in float32 on ``device``, the
        selected cell retrained on fresh seeds, and for a (last)/(ntk) network its exact kernel solution
        (:func:`resnetlearn.reproduce.fit.fit_network`); the result's ``predict(x)`` is the selected run's outputs.
        ``cancel`` (an Event or a callable returning True) stops the training between two SGD steps; the fit is
        then marked ``interrupted``. ``checkpoints`` (:class:`~resnetlearn.reproduce.checkpoints.Checkpoints`) keeps
        each finished group of models, so a later run resumes part-way."""
        return fit_network(self, samples, search, schedule=schedule, device=device, cancel=cancel,
                           checkpoints=checkpoints)


# ----------------------------------------------------------------- kernels
@dataclass(frozen=True)
class Kernel:
    """A named kernel, on architecture ``arch`` where it is a network's kernel (conjugate, NTK, infinite
    width), tuned by its ridge and parameter search (:func:`resnetlearn.kernels.experiments.kernel_errors`)."""

    name: str
    arch: str | None = None
    _: KW_ONLY
    m: int | None = None
    """The width of the network behind a finite-width kernel (a figure point carries one for every kernel)."""

    @classmethod
    def of_spec(cls, spec: str, *, m: int | None = None) -> Kernel:
        """The kernel a spec ``"name"`` or ``"name:arch"`` names."""
        name, _, arch = str(spec).partition(":")
        return cls(name, arch or None, m=m)

    trained_by_sgd = False
    """Whether the point trains networks by SGD (the work a run's progress counts)."""
    variant_key = None
    """A kernel's points of one figure differ by their width, N and data alone (see :attr:`HandBuilt.variant_key`)."""
    grid_searched = False
    """No lr × wd grid by SGD: a ridge and parameter search, with no seeds (:attr:`Network.grid_searched`)."""
    constructed = False
    """Searched for, not built by a construction."""
    kernel_method = False
    """Not a network trained by SGD as a kernel method, with an exact solution beside it
    (:attr:`Network.kernel_method`): the ridge solution is the kernel's own result."""

    def sgd_work(self, point, *, dims=None, batch_size=None) -> None:
        """No SGD: a kernel point's ridge solves are not counted in the work estimate."""
        return None

    def row_fields(self) -> dict:
        """How a stored row names it: ``model`` (its spec) and ``mode`` ``"kernel"``."""
        return dict(model=self.spec, mode=KERNEL_MODE)

    def fit(self, samples: Samples, search, *, schedule=None, device=None, cancel=None,
            checkpoints=None) -> KernelFit:
        """This kernel fitted to ``samples`` by the ridge and parameter search that ``search.select`` chooses
        (arXiv v3 §3.1, the §7 hard instance; :func:`resnetlearn.reproduce.fit.fit_kernel`), in float64; a network
        point's ``schedule`` and ``device`` play no part, nor ``cancel`` (a kernel's solve is not stopped part-way) or
        ``checkpoints`` (it is one solve). Its ``predict(x)`` is the selected ridge solution."""
        if self.m is None:
            raise ValueError(f"kernel {self.spec!r} needs m, the width of the network behind a finite kernel")
        return fit_kernel(self.spec, samples, search, m=self.m)

    @property
    def spec(self) -> str:
        """``name`` or ``name:arch``, as the kernel experiments and the stored rows name it."""
        return f"{self.name}:{self.arch}" if self.arch else self.name

    @property
    def label(self) -> str:
        """Its name in the reproduction's tables, verdicts and legends (:func:`label_of`): its spec, as the stored
        rows' ``model`` holds it. The readable name the kernel experiments print (``"NTK (∞ width) 2layer"``) is
        another thing, :func:`resnetlearn.kernels.registry.kernel_label`, defined once there (the kernels sit below
        the records and cannot read this one)."""
        return self.spec


# ----------------------------------------------------------------- the hand-built solution
@dataclass(frozen=True)
class HandBuilt:
    """The footnote-16 construction of arXiv v3 §8.2: a small-norm two-layer network with fixed output
    signs that fits the degree-6 parity, built from d = 6 and widened (its ‖W‖_F is Figure 4's reference),
    with weight decay ``wd`` (which tells the constructions of one figure apart)."""

    wd: float | None = None
    _: KW_ONLY
    m: int | None = None
    """The width it is widened to (duplicated rows, the same function and ‖W‖_F)."""

    NAME = "hand_built"
    """How stored rows name it (their ``model``)."""
    trained_by_sgd = True
    """The construction starts from a network trained by SGD on the 64 inputs of d = 6 (footnote 16)."""
    variant_key = "wd"
    """The configuration key, besides the learner's name, mode and width, whose value tells its points of one
    figure apart (:attr:`resnetlearn.reproduce.point.Point.id`, :func:`resnetlearn.reproduce.figures.point_label`):
    the constructions of §8.2 differ by their weight decay. None for a network or a kernel (a network row's
    ``wd`` is its selected cell's, not the learner's)."""
    grid_searched = False
    """One network per point, no lr × wd grid and no fresh seeds (:attr:`Network.grid_searched`)."""
    constructed = True
    """Built by a construction, not searched for: a reference that Figure 4 sets beside SGD's runs, one run per
    point, told apart from the other constructions by its ``wd``."""
    kernel_method = False
    """Not a kernel method (:attr:`Network.kernel_method`)."""

    @property
    def name(self) -> str:
        return self.NAME

    def sgd_work(self, point, *, dims=None, batch_size=None) -> tuple[Network, list[tuple[int, int, int]], int]:
        """The SGD its construction costs (:data:`resnetlearn.learners.hand_built.HAND_BUILT`): one network trained
        for the epochs of ``point`` (a :class:`resnetlearn.reproduce.point.Point`) on all the inputs of the d = 6
        problem, in its own mini-batches (the point's target and mini-batch play no part); the form of
        :meth:`Network.sgd_work`."""
        hb = HAND_BUILT
        params = sum(math.prod(s) for s in param_shapes(hb.arch, hb.d, 1, hb.m).values())
        return Network(hb.arch, hb.mode, m=hb.m), [(1, hb.steps(point.protocol.epochs), params)], hb.batch_size

    def fit(self, samples: Samples, search=None, *, schedule, device=None, cancel=None,
            checkpoints=None) -> HandBuiltFit:
        """The footnote-16 construction (:func:`resnetlearn.reproduce.fit.fit_hand_built`) for ``samples``' target
        dimension d, trained for ``schedule.epochs`` epochs with this record's ``wd`` and widened to its ``m``: a
        construction, not a search (``search``, ``device`` and ``checkpoints`` play no part; it is trained in float64
        on the CPU).
        Its ``predict(x)`` is the d-dimensional network it describes."""
        if not isinstance(samples, Samples):
            raise TypeError(f"samples must be a resnetlearn.reproduce.fit.Samples, got {type(samples).__name__}")
        if self.m is None or self.wd is None:
            raise ValueError("the hand-built solution needs its wd and width m (HandBuilt(wd, m=...))")
        d = hand_built_target(samples.target)
        return fit_hand_built(self.wd, d=d, m=self.m, epochs=checked_schedule(schedule).epochs, cancel=cancel)

    def row_fields(self) -> dict:
        """How a stored row names it: ``model`` ``"hand_built"``, ``mode`` ``"-"`` and its ``wd``."""
        return dict(model=self.NAME, mode=HAND_BUILT_MODE, wd=self.wd)

    @property
    def label(self) -> str:
        return self.NAME


# ----------------------------------------------------------------- rows
def kind_of(row: dict) -> type[Network | Kernel | HandBuilt]:
    """Which kind of learner a stored row (or a point's configuration) names by its ``model`` and ``mode``:
    the one place that reads a kind from them."""
    if row.get("mode") == KERNEL_MODE:
        return Kernel
    if row.get("model") == HandBuilt.NAME:
        return HandBuilt
    return Network


def from_row(row: dict) -> Network | Kernel | HandBuilt:
    """The learner a stored row (or a point's configuration) names (:func:`kind_of`)."""
    kind = kind_of(row)
    if kind is Kernel:
        return Kernel.of_spec(row["model"], m=row.get("m"))
    if kind is HandBuilt:
        return HandBuilt(row.get("wd"), m=row.get("m"))
    return Network(row["model"], row["mode"], m=row["m"], init=row.get("init") or "paper")


def named(model: str, mode: str | None = None) -> Network | Kernel | HandBuilt | None:
    """The learner a name stands for, as legends and labels name it (an architecture with its mode, a kernel
    spec, ``hand_built``); None when the name is none of these."""
    if model in ARCHITECTURES:
        return Network(model, mode if mode in MODES else "all", m=1)
    if model == HandBuilt.NAME:
        return HandBuilt()
    kern = Kernel.of_spec(model)
    return kern if kern.name in KERNEL_REGISTRY else None


def label_of(row: dict, *, with_mode: bool = True) -> str:
    """The one name of a learner: ``model(mode)``, e.g. ``3resnet(all)``; a kernel or a hand-built
    solution by its name alone, and every learner so with ``with_mode=False``. (The row key ``model``
    holds the architecture or kernel; it is a stored key and keeps its name.)"""
    if with_mode and row.get("mode") in MODES:  # a network's row (a row may lack its width: a name alone)
        return from_row(dict(row, m=row.get("m") or 1)).label
    if kind_of(row) is not Network:  # a kernel by its spec, the hand-built solution by its name: their records'
        return from_row(row).label
    return str(row["model"])
