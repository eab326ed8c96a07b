"""The work ahead of a run, said before the first point: points, networks, SGD steps and their time here.

Each network point trains its lr × wd grid and the fresh-seed reruns of its selected cell as batched
programs (:func:`resnetlearn.learners.search.grid_search`); :func:`estimate_work` counts their SGD steps and
times a few real steps on the device (a step of G networks of P parameters costs about a + b·G·P), and
:func:`point_work` is the share of one point, by which the progress bar of
:func:`resnetlearn.reproduce.running.run_figure` advances. Kernel solves and evaluations are not counted.
"""

from __future__ import annotations

import functools
import math
import os
import time
from dataclasses import dataclass

from .. import memory
from ..device import select_device
from ..learners.networks import param_shapes
from ..learners.training import Protocol, RunOptions, train_models, training_bytes
from ..targets.concept import parity_instance
from .figures import point_records
from .learner import Network
from .point import Point
from .points import BATCH, target_of
from .store import ResultsStore


@functools.cache
def _target_dims(target: str, *, d, k, alpha, beta) -> tuple[int, int]:
    """(d, k) of a point's target (built once per distinct target)."""
    t = target_of(dict(target=target, d=d, k=k, alpha=alpha, beta=beta))
    return t.d, t.k


def _sgd_work(point: Point):
    """The SGD of one point (:meth:`Point.sgd_work <resnetlearn.reproduce.point.Point.sgd_work>`), with its
    target's dimensions built once per distinct target."""
    data = point.data
    return point.sgd_work(dims=functools.partial(_target_dims, data.target, d=data.d, k=data.k, alpha=data.alpha,
                                                 beta=data.beta))


STEP_OVERHEAD = 50_000
"""The fixed cost of one SGD step (Python, kernel launches) in parameter-updates: timed on the 2-core CPU,
a step of G networks of P parameters cost about as much as G·P + 20 000 to 70 000 parameter-updates."""


def point_work(point: Point) -> float:
    """The relative cost of a point, by which the progress bar advances.

    Σ over its batched trainings of steps × (networks × parameters + :data:`STEP_OVERHEAD`); 0 for a point that
    trains no network by SGD.

    Parameters
    ----------
    point : Point
        The point.

    Returns
    -------
    float
    """
    work = _sgd_work(point)
    if work is None:
        return 0.0
    return float(sum(n * (g * params + STEP_OVERHEAD) for g, n, params in work[1]))


def _seconds_per_step(learner, *, models: int, device) -> float:
    """Wall time of one SGD step of ``models`` networks of ``learner`` (a Learner) here, measured on a few steps."""
    sample = parity_instance().sample(3 * BATCH, seed=0)  # 3 steps an epoch

    def run(epochs: int) -> float:
        t0 = time.perf_counter()
        train_models(sample, sample, learner, lrs=[1e-3] * models, wds=[0.0] * models, seeds=list(range(models)),
                     protocol=Protocol(epochs=epochs, batch_size=BATCH, eval_every=epochs), progress=False,
                     options=RunOptions(device=device))
        return time.perf_counter() - t0

    run(1)  # warm-up: allocations, first-call costs
    # 5 epochs minus 1 epoch: 12 steps without the set-up and the evaluations both calls share; the median
    # of three such differences (the machine may be busy with other work)
    return max(0.0, sorted(run(5) - run(1) for _ in range(3))[1]) / 12


@dataclass
class WorkEstimate:
    """What a run will compute, said before it starts.

    The wall time is that of the SGD steps, extrapolated from steps measured on this device; kernel solves and
    evaluations are not counted.

    Parameters
    ----------
    points : int
        The points not yet stored.
    kernel_points : int
        Of them, those that train no network by SGD.
    networks : int
        The networks they train.
    steps : int
        The SGD steps in all (networks × steps each).
    seconds : float
        The time of those steps here.
    device : str
        The device timed.
    batch_sizes : tuple of int, default (50,)
        The mini-batch sizes of the steps.
    damaged : int, default 0
        Of ``points``, those whose stored file exists but fails its checks (moved aside and recomputed).
    peak : tuple of (int, str) or None, default None
        The memory the largest network needs to train alone, in bytes, and its name.
    available : tuple of (int or None, str), default (None, "")
        The memory this process may plan with on the device and what it is
        (:func:`resnetlearn.memory.available_bytes`).
    """

    points: int
    kernel_points: int
    networks: int
    steps: int
    seconds: float
    device: str
    batch_sizes: tuple[int, ...] = (BATCH,)
    damaged: int = 0
    """Of ``points``, those whose stored file exists but fails its checks (moved aside and recomputed)."""
    peak: tuple[int, str] | None = None
    """The memory the largest network needs to train alone (bytes, its name), :func:`training_bytes`."""
    available: tuple[int | None, str] = (None, "")
    """The memory this process may plan with on the device (:func:`resnetlearn.memory.available_bytes`)."""

    def memory_text(self) -> str:
        """``; the largest network, 2layer_signs(hidden) m = 100000, needs about 3.1 GiB to train alone (…)``."""
        if self.peak is None:
            return ""
        need, name = self.peak
        have, kind = self.available
        limit = memory.MEMORY_FRACTION * have if have is not None else None
        room = ("" if limit is None else
                f"; {memory.MEMORY_FRACTION:.0%} of the {kind} here is {need_gib(limit)}, so "
                + ("it fits (a grid trains in as many chunks as memory needs)" if need <= limit else
                   "it does not fit here: its point will be refused when it starts; run it on a device with more "
                   "memory"))
        return f"; the largest network, {name}, needs about {need_gib(need)} to train alone{room}"

    def text(self, scale: str, workers: int = 0) -> str:
        """The estimate in one paragraph, for the command line.

        Parameters
        ----------
        scale : str
            The scale, named in the text.
        workers : int, default 0
            With more than 1, the best time with that many workers is added (on the CPU, at most as many as its cores).

        Returns
        -------
        str
        """
        kern = f" and {self.kernel_points} kernel point(s)" if self.kernel_points else ""
        if self.damaged:
            kern += (f" ({self.damaged} of them stored but damaged: the file(s) will be moved aside and the "
                     f"point(s) recomputed)")
        if not self.networks:
            return f"work ahead at scale {scale}: {self.points} point(s) to compute, no network training{kern}"
        par = ""
        if workers > 1:
            at_most = min(workers, os.cpu_count() or 1) if self.device == "cpu" else workers
            par = f"; with {workers} workers at best {_duration(self.seconds / at_most)}"
        batches = " and ".join(map(str, self.batch_sizes))
        return (f"work ahead at scale {scale}: {self.points} point(s) to compute{kern}; {self.networks:,} networks "
                f"trained for {self.steps:,} SGD steps in all (mini-batches of {batches}); from steps timed just now "
                f"on {self.device}, the steps alone take roughly {_duration(self.seconds)} in one process{par} "
                f"(set-up, evaluation and kernel solves come on top){self.memory_text()}")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def estimate_work(figures, scale: str, *, device=None, select: str = "test", store=None,
                  probe_width: int = 200) -> WorkEstimate:
    """Estimate the work of running ``figures`` at ``scale`` before starting.

    For every point not yet in ``store``: the networks it trains × the SGD steps of each (epochs × batches), and the
    time of those steps on ``device``. Each (architecture, mode) is timed on a few real steps of 4 networks at width 10
    and at ``probe_width``; a step of G networks with P parameters each is taken to cost a + b·G·P (a: the per-step
    overhead, b: the arithmetic), which fits wide networks best.

    Parameters
    ----------
    figures : iterable of str
        The figures.
    scale : {"tiny", "quick", "cpu", "paper"}
        The scale.
    device : str or None, default None
        The device timed (see :func:`resnetlearn.device.select_device`).
    select : {"test", "val"}, default "test"
        The selection rule, as in :func:`~resnetlearn.reproduce.running.run_figure`.
    store : path-like or None, default None
        A store folder; a stored file is verified as the run will, and a damaged one counts as work ahead.
    probe_width : int, default 200
        The wider of the two timed widths.

    Returns
    -------
    WorkEstimate
    """
    dev = select_device(device)
    st = ResultsStore(store) if store is not None else None
    pending, damaged = [], 0
    for p in (p for fig in figures for p in point_records(fig, scale, device=device, select=select)):
        stored = st.path(p.config()) if st is not None else None
        if stored is not None and stored.exists():
            if st.verify(stored) is None:  # the run will reuse it
                continue
            damaged += 1
        pending.append(p)
    work = [w for p in pending if (w := _sgd_work(p)) is not None]
    cost: dict[tuple, tuple[float, float]] = {}
    networks = steps = 0
    seconds = 0.0
    for net, batches, _ in work:
        key = (net.arch, net.mode)
        if key not in cost:
            widths = (10, probe_width)  # d = 30, k = 15
            t = [_seconds_per_step(Network(net.arch, net.mode, m=w), models=4, device=dev) for w in widths]
            P = [sum(math.prod(s) for s in param_shapes(net.arch, 30, 15, w).values()) for w in widths]
            b = max(0.0, (t[1] - t[0]) / (4 * (P[1] - P[0])))
            cost[key] = (max(0.0, t[0] - 4 * b * P[0]), b)
        a, b = cost[key]
        for g, n_steps, params in batches:
            networks += g
            steps += g * n_steps
            seconds += n_steps * (a + b * g * params)
    batches = tuple(sorted({batch for _, _, batch in work})) or (BATCH,)
    return WorkEstimate(points=len(pending), kernel_points=len(pending) - len(work), networks=networks, steps=steps,
                        seconds=seconds, device=str(dev), batch_sizes=batches, damaged=damaged,
                        peak=_peak_memory(pending), available=memory.available_bytes(dev))


def _peak_memory(points: list[Point]) -> tuple[int, str] | None:
    """The memory (bytes) of training the largest network among ``points`` alone, and its name: parameters,
    gradients, momentum and activations for its largest evaluation set (:func:`training_bytes`)."""
    best = None
    for p in points:
        if not (p.learner.trained_by_sgd and p.learner.grid_searched):  # a network with its lr × wd grid
            continue
        data = p.data
        d, k = _target_dims(data.target, d=data.d, k=data.k, alpha=data.alpha, beta=data.beta)
        need = training_bytes(p.learner.arch, d, k, p.learner.m, n_eval=max(data.n_train, data.n_test),
                              mode=p.learner.mode)
        if best is None or need > best[0]:
            best = (need, f"{p.learner.label} m = {p.learner.m}")
    return best


def need_gib(n: float) -> str:
    """Bytes as GiB with one decimal (MiB below 1 GiB)."""
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"
