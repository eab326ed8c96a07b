"""Running one point of a figure: a learner at one width (or N) with its whole search.

:func:`run_point` takes the point (a :class:`resnetlearn.reproduce.point.Point`), lets its learner fit the
point's samples by its search (:mod:`resnetlearn.reproduce.fit`: a network its lr × wd grid by SGD with the
selected cell retrained on fresh seeds (arXiv v3 §8.1), and for a (last)/(ntk) point also the exact kernel
solution it stands for; a kernel its ridge and parameter search (the §7 hard instance); ``hand_built`` the
construction of §8.2, footnote 16) and writes the dict the results store keeps. The figure's specification
(:mod:`resnetlearn.reproduce.figures`) gives the data seed and whether every grid run is kept.
"""

from __future__ import annotations

import dataclasses
import time

from ..targets.concept import companion_figure1, hard_instance, parity6_target, parity_instance
from .figures import point_label
from .figures import spec as figure_spec
from .fit import BATCH, RUN_KEYS, Samples
from .point import Point

__all__ = ["run_point", "samples_of", "validation_of", "target_of", "BATCH", "RUN_KEYS"]


def run_point(point: Point | dict, cancel=None, checkpoints=None) -> dict:
    """Train one point (a learner at one width, its whole search) and return what the results store keeps.

    Top-level so that executors can pickle it. A point is all or nothing: when training is interrupted (the engine
    catches Ctrl-C and reports it) this raises KeyboardInterrupt instead of returning numbers from a half-trained grid.

    Parameters
    ----------
    point : Point or dict
        A :class:`~resnetlearn.reproduce.point.Point`, or its flat configuration (:meth:`Point.config
        <resnetlearn.reproduce.point.Point.config>`: what a worker process, a stored file or a script hands over),
        read once here.
    cancel : threading.Event, callable or None, default None
        Stops the point as Ctrl-C does, looked at between SGD steps: an event that is set, or a callable that
        returns True (for a run in a thread, which Ctrl-C does not reach).
    checkpoints : Checkpoints or None, default None
        Keeps each finished group of a network's models (:class:`~resnetlearn.reproduce.checkpoints.Checkpoints`),
        so that an interrupted point resumes part-way; the point is still stored only when it finished, and its
        ``seconds`` add the kept groups' training time.

    Returns
    -------
    dict
        The learner's stored result, with ``seconds`` (wall time) and ``device``.

    Raises
    ------
    KeyboardInterrupt
        If training was interrupted or cancelled.
    """
    if not isinstance(point, Point):
        point = Point.of_config(point)
    t0 = time.perf_counter()
    fit = point.learner.fit(samples_of(point), point.search, schedule=point.protocol, device=point.device,
                            cancel=cancel, checkpoints=checkpoints)
    if fit.interrupted:
        raise KeyboardInterrupt(f"{point_label(point.config())} was interrupted during training")
    return {**fit.stored(keeps_grid=figure_spec(point.figure).keeps_grid),
            "seconds": round(time.perf_counter() - t0 + getattr(fit, "reused_seconds", 0.0), 2), "device": fit.device}


def samples_of(point: Point) -> Samples:
    """The samples a point's learner fits: its target (:func:`target_of`) with its N and test samples, drawn with
    its figure's data seed, and the validation samples its search selects on (:meth:`Search.validation_rule
    <resnetlearn.reproduce.point.Search.validation_rule>`)."""
    data = point.data
    return Samples(target_of(dataclasses.asdict(data)), data.n_train, data.n_test,
                   data_seed=figure_spec(point.figure).data_seed, **point.search.validation_rule())


def validation_of(config: dict) -> dict:
    """How a point configuration with ``select="val"`` finds its validation samples, as keyword arguments of
    :func:`~resnetlearn.learners.search.validation_split` (:meth:`resnetlearn.reproduce.point.Search.validation_rule`);
    empty for ``select="test"``."""
    return Point.of_config(config).search.validation_rule()


TARGET_BUILDERS = {
    "parity": lambda c: parity_instance(alpha=c["alpha"], beta=c["beta"]),  # §8.1: β·F + α·G(F)
    "parity6": lambda c: parity6_target(c["d"]),  # §8.2: a degree-6 parity in d dimensions
    "hard": lambda c: hard_instance(c["d"], c["k"], alpha=c["alpha"], seed=0),  # §7's hard instance, seed 0
    "companion": lambda c: companion_figure1(),  # the companion paper's Figure 1 target
}
"""How each target of :data:`resnetlearn.reproduce.figures.TARGETS` is built from a point's configuration."""


def target_of(config: dict):
    """The target a point learns, from its ``target`` (:data:`TARGET_BUILDERS`)."""
    return TARGET_BUILDERS[config["target"]](config)
