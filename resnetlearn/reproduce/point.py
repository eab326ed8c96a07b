"""A figure point as a record: one learner, the data it learns from, its search and its protocol.

A point of a figure (:mod:`~resnetlearn.reproduce.figures`) is one learner (:mod:`~resnetlearn.reproduce.learner`) at
one width or sample size with its whole search: a network its lr × wd grid by SGD with the selected cell retrained
on fresh seeds (arXiv v3 §8.1), a kernel its ridge and parameter search (§7), the hand-built solution its
construction (§8.2, footnote 16). :class:`Point` holds these parts as records and is what a run passes (the
figures' builders, :func:`resnetlearn.reproduce.points.run_point`, the work estimate through :meth:`Point.sgd_work`);
it answers its :attr:`Point.id` among its figure's points. The flat configuration lives only at the store's
boundary: :meth:`Point.config` writes the configuration the results store keys
(:meth:`resnetlearn.reproduce.store.ResultsStore.key`) and a stored row holds, and :meth:`Point.of_config` reads
one back, so :meth:`Point.key` is byte for byte the key every stored point already has (a key that changed would
recompute the point).

Which keys a configuration carries is part of its key: ``alpha`` and ``beta`` always (None where the target
has none); ``d``, ``k``, ``validation``, ``grid_seeds``, ``batch_size``, ``panel``, ``n_val`` only when set;
``init`` only when it is not §8.1's ``"paper"``; ``wd`` only for the hand-built solution (its weight decay).
"""

from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY, dataclass

from .fit import BATCH
from .learner import HandBuilt, Kernel, Network, from_row, kind_of
from .store import ResultsStore


@dataclass(frozen=True)
class Data:
    """What a point learns from: its target (one of :data:`resnetlearn.reproduce.figures.TARGETS` with its α, β and,
    where the target has them, d and k), ``n_train`` training and ``n_test`` test samples."""

    target: str
    n_train: int | None
    n_test: int
    _: KW_ONLY
    alpha: float | None
    beta: float | None
    d: int | None = None
    k: int | None = None


@dataclass(frozen=True)
class Search:
    """How a point chooses its learner's hyperparameters: the lr × wd grid (networks), the rule that selects
    a cell (``select``: test or validation error, with the ``validation`` samples' rule), the fresh seeds the
    selected cell is retrained with, and the seeds every cell trains (``grid_seeds``; None: seed 0 alone)."""

    lrs: tuple
    wds: tuple
    select: str
    rerun_seeds: tuple
    _: KW_ONLY
    validation: str | None = None
    grid_seeds: tuple | None = None
    n_val: int | None = None
    """The size of a fresh validation set (None: :func:`resnetlearn.learners.search.default_val_size`)."""

    def validation_rule(self) -> dict:
        """How a ``select="val"`` search finds its validation samples, as keyword arguments of
        :func:`~resnetlearn.learners.search.validation_split` (and :class:`resnetlearn.reproduce.fit.Samples`): its
        ``validation`` (``"fresh"``, which :func:`resnetlearn.reproduce.figures.points` writes into every
        ``select="val"`` point, with ``n_val`` as ``val_size``), or ``"holdout"`` for a point that names none.
        Invariant: a configuration without ``validation`` means the holdout rule, because the stored points
        without that key were computed by it and their store keys must keep meaning what they meant.
        Empty for ``select="test"``."""
        if self.select != "val":
            return {}
        rule = self.validation or "holdout"
        return dict(validation=rule, val_size=self.n_val) if rule == "fresh" else dict(validation=rule)


@dataclass(frozen=True)
class Schedule:
    """A point's SGD protocol where it differs by point: its epochs and mini-batch (None: §8.1's 50)."""

    epochs: int
    batch_size: int | None = None


@dataclass(frozen=True)
class Point:
    """One point of a figure: see the module docstring. A figure's point builder starts from a template
    (its learner None) and sets what differs per point with :meth:`replace`."""

    figure: str
    learner: Network | Kernel | HandBuilt | None
    _: KW_ONLY
    data: Data
    search: Search
    protocol: Schedule
    scale: str
    device: object = None
    panel: str | None = None

    @property
    def m(self) -> int | None:
        """The width: the network's, a finite-width kernel's network's, the hand-built solution's."""
        return self.learner.m

    def replace(self, **changes) -> Point:
        """This point with fields changed wherever they live (``n_train`` in :attr:`data`, ``lrs`` in
        :attr:`search`, ``epochs`` in :attr:`protocol`, ``learner`` here, ...)."""
        own, parts = {}, {name: {} for name in _PARTS}
        for name, value in changes.items():
            part = next((p for p, cls in _PARTS.items() if name in cls.__dataclass_fields__), None)
            (parts[part] if part else own)[name] = value
        parts = {p: dataclasses.replace(getattr(self, p), **c) for p, c in parts.items() if c}
        return dataclasses.replace(self, **own, **parts)

    @classmethod
    def of_config(cls, config: dict) -> Point:
        """The point a flat configuration (a store key's) describes. A key that is not one of
        :data:`CONFIG_KEYS` (a misspelt ``batchsize``) is refused, as is a configuration without one of
        :data:`REQUIRED_KEYS`, naming the key and the allowed ones: a key read by nobody would run the point
        without it and return the numbers of another point."""
        if not isinstance(config, dict):
            raise TypeError(f"config must be a dict (a point's flat configuration), got {type(config).__name__}")
        unknown = [k for k in config if k not in CONFIG_KEYS]
        if unknown:
            raise ValueError(f"unknown configuration key{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(map(repr, unknown))}; allowed: {', '.join(CONFIG_KEYS)}")
        missing = [k for k in REQUIRED_KEYS if k not in config]
        if missing:
            raise ValueError(f"the configuration lacks {', '.join(map(repr, missing))}; a point's configuration "
                             f"names {', '.join(REQUIRED_KEYS)} (optional: "
                             f"{', '.join(k for k in CONFIG_KEYS if k not in REQUIRED_KEYS)})")
        c = dict(config)
        tup = (lambda v: None if v is None else tuple(v))
        return cls(c["figure"], from_row(c),
                   data=Data(c["target"], c["n_train"], c["n_test"], alpha=c["alpha"], beta=c["beta"],
                             d=c.get("d"), k=c.get("k")),
                   search=Search(tup(c["lrs"]), tup(c["wds"]), c["select"], tup(c["rerun_seeds"]),
                                 validation=c.get("validation"), grid_seeds=tup(c.get("grid_seeds")),
                                 n_val=c.get("n_val")),
                   protocol=Schedule(c["epochs"], c.get("batch_size")),
                   scale=c["scale"], device=c.get("device"), panel=c.get("panel"))

    def config(self) -> dict:
        """The flat configuration: the learner's ``model``/``mode`` (and ``init``, ``wd`` where it has them),
        the data, search and protocol fields, with the optional keys only when set (see the module docstring)."""
        lst = (lambda v: None if v is None else list(v))
        out = dict(figure=self.figure, scale=self.scale, epochs=self.protocol.epochs, lrs=lst(self.search.lrs),
                   wds=lst(self.search.wds), n_test=self.data.n_test, select=self.search.select,
                   device=self.device, target=self.data.target, alpha=self.data.alpha, beta=self.data.beta,
                   rerun_seeds=lst(self.search.rerun_seeds), n_train=self.data.n_train, m=self.m,
                   **self.learner.row_fields())
        optional = dict(validation=self.search.validation, d=self.data.d, k=self.data.k,
                        grid_seeds=lst(self.search.grid_seeds), batch_size=self.protocol.batch_size,
                        panel=self.panel, n_val=self.search.n_val)
        return {**out, **{k: v for k, v in optional.items() if v is not None}}

    def key(self) -> str:
        """The results store's key of this point (:meth:`resnetlearn.reproduce.store.ResultsStore.key`)."""
        return ResultsStore.key(self.config())

    @property
    def id(self) -> tuple:
        """What tells this point from the others of its figure (:func:`point_id` of its configuration)."""
        return point_id(self.config())

    def sgd_work(self, *, dims) -> tuple | None:
        """The SGD this point costs, as its learner counts it (``sgd_work`` of the records of
        :mod:`resnetlearn.reproduce.learner`): (the network trained, its batched trainings — (models trained
        together, SGD steps, parameters of one model) for its lr × wd grid and for the fresh-seed reruns of the
        selected cell — and its mini-batch), or None for a point that trains no network. ``dims()``: its target's
        (d, k); the mini-batch is its protocol's (None: §8.1's :data:`~resnetlearn.reproduce.fit.BATCH`)."""
        batch = BATCH if self.protocol.batch_size is None else self.protocol.batch_size
        return self.learner.sgd_work(self, dims=dims, batch_size=batch)


def point_id(fields: dict) -> tuple:
    """What tells the points of one figure apart, read from a point's configuration (:meth:`Point.config`) or a
    stored row (which holds it): the learner's name and mode, its width, N, β, α, d, the value of its learner's
    ``variant_key`` (a hand-built solution's wd; None for the others) and the panel."""
    variant = kind_of(fields).variant_key
    return (fields.get("model"), fields.get("mode"), fields.get("m"), fields.get("n_train"), fields.get("beta"),
            fields.get("alpha"), fields.get("d"), fields.get(variant) if variant else None,
            fields.get("panel") or None)


REQUIRED_KEYS = ("figure", "scale", "target", "n_train", "n_test", "alpha", "beta", "lrs", "wds", "select",
                 "rerun_seeds", "epochs", "model")
"""The keys every point's configuration holds (the learner's ``mode`` and ``m`` as its kind needs them)."""

CONFIG_KEYS = (*REQUIRED_KEYS, "mode", "m", "device", "init", "wd", "validation", "d", "k", "grid_seeds",
               "batch_size", "panel", "n_val")
"""Every key a point's configuration may hold (:meth:`Point.config` writes them, :meth:`Point.of_config` reads
them); the store keys a point by exactly these, so none may change its name."""

_PARTS = {"data": Data, "search": Search, "protocol": Schedule}
"""The parts of a point :meth:`Point.replace` routes a field to."""
