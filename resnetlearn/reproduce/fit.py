"""A learner fitted to its samples by its search, and what the fit leaves: the selected model, which predicts.

Each learner record (:mod:`resnetlearn.reproduce.learner`) has ``fit(samples, search, *, schedule, device)``; the
work is done here, one function per kind of learner, and each returns a result with ``predict(x)`` (the selected
model's outputs (n, k) on inputs x), ``interrupted``, the ``device`` it ran on and :meth:`stored`, the dict the
results store keeps for a figure point (:func:`resnetlearn.reproduce.points.run_point`):

* :func:`fit_network` → :class:`NetworkFit`: the lr × wd grid by SGD, the selected cell retrained on fresh seeds
  (arXiv v3 §8.1), and for a (last)/(ntk) network the exact kernel solution it stands for;
* :func:`fit_kernel` → :class:`KernelFit`: a kernel's ridge and parameter search (§3.1, §7);
* :func:`fit_hand_built` → :class:`HandBuiltFit`: the construction of §8.2, footnote 16.

The learners do not all compute in one dtype, and one split cast to another dtype is not the other's numbers: the
networks draw their samples in float32 on their device, the kernels and the exact (last)/(ntk) solution in
float64. So a fit receives :class:`Samples`, what the samples are, and draws them in its own dtype
(:meth:`Samples.split`) by exactly the calls each of them always made.
"""

from __future__ import annotations

import math
import sys
from dataclasses import KW_ONLY, dataclass, field

import torch

from .. import validation as V
from ..device import select_device
from ..kernels.experiments import KernelPredictor, KernelSearch, kernel_errors_and_predictors, network_kernel_errors
from ..learners import networks
from ..learners.hand_built import HAND_BUILT
from ..learners.search import VALIDATIONS, GridResult, Selection, chunk_size, search_split, validation_split
from ..learners.selection import grid_edges
from ..learners.training import Learner, Protocol, RunOptions, TrainResult, models_that_fit, sample_sizes
from ..targets.concept import INSTANCES, Split, Target, data_split, parity6_target

BATCH = Protocol().batch_size
"""The mini-batch of a network point that names none (§8.1: 50); a point's ``batch_size`` overrides it."""

RUN_KEYS = ("role", "lr", "wd", "seed", "setting", "ridge_rel", "train_error", "test_error", "val_error", "diverged",
            "frobenius_W", "selected")
"""Columns of the per-run table (``FIG_runs.csv``): one row per trained model or kernel candidate."""


@dataclass(frozen=True)
class Samples:
    """What a learner fits: ``n_train`` training and ``n_test`` test samples of ``target`` drawn with ``data_seed``
    (:func:`resnetlearn.targets.concept.data_split`, the test samples with ``data_seed + 1``), and for a search that
    selects on validation (``validation`` not None) its validation samples
    (:func:`resnetlearn.learners.search.validation_split`: ``"fresh"``, ``val_size`` new samples, or ``"holdout"``,
    the last fifth of the N). Every learner of a figure point sees these same samples, each in its own dtype."""

    target: object
    n_train: int
    n_test: int
    _: KW_ONLY
    data_seed: int = 0
    validation: str | None = None
    val_size: int | None = None

    def __post_init__(self):
        if not isinstance(self.target, Target):
            raise TypeError(f"target must be a target object (a resnetlearn.targets.concept.Target, e.g. "
                            f"parity_instance() or parity6_target(40)), got {self.target!r} "
                            f"({type(self.target).__name__}); a named one is resnetlearn.targets.concept."
                            f"instance(name), name one of {', '.join(map(repr, INSTANCES))}")
        if self.validation is not None:
            V.choice("validation", self.validation, VALIDATIONS)
        if self.validation != "fresh" and self.val_size is not None:
            raise ValueError(f"val_size describes a fresh validation set; validation={self.validation!r} takes none")

    def rule(self) -> dict:
        """The validation keywords of :func:`~resnetlearn.learners.search.validation_split` (empty without one)."""
        if self.validation is None:
            return {}
        return dict(validation=self.validation, **({"val_size": self.val_size} if self.validation == "fresh" else {}))

    def split(self, *, dtype: torch.dtype, device=None) -> Split:
        """The samples in ``dtype`` on ``device`` (None: as the draw places them), drawn as every learner draws them."""
        if self.validation is None:
            return data_split(self.target, self.n_train, n_test=self.n_test, seed=self.data_seed, device=device,
                              dtype=dtype)
        return validation_split(self.target, self.n_train, n_test=self.n_test, data_seed=self.data_seed,
                                **self.rule(), device=device, dtype=dtype)

    def check(self, select: str) -> None:
        """Refuse samples whose validation part does not fit a search selecting by ``select``."""
        if (self.validation is None) != (select == "test"):
            raise ValueError(f"samples.validation = {self.validation!r} does not fit select={select!r}: a search "
                             "selects on validation samples (validation 'fresh' or 'holdout') exactly when "
                             "select='val'")


def _checked_samples(samples, search) -> Samples:
    """``samples`` if they are :class:`Samples` fitting ``search`` (a
    :class:`resnetlearn.reproduce.point.Search`: its ``select`` read first, then whether the samples hold the
    validation part it selects on), else an error naming what is wrong."""
    select = getattr(search, "select", None)
    if select is None:
        raise TypeError(f"search must be a resnetlearn.reproduce.point.Search (lrs, wds, select, ...), "
                        f"got {type(search).__name__}")
    V.choice("search.select", select, ("test", "val"))
    if not isinstance(samples, Samples):
        raise TypeError(f"samples must be a resnetlearn.reproduce.fit.Samples, got {type(samples).__name__}")
    samples.check(select)
    return samples


def checked_schedule(schedule):
    """``schedule`` if it is a point's SGD protocol (:class:`resnetlearn.reproduce.point.Schedule`: ``epochs`` an
    integer >= 1, ``batch_size`` None or an integer >= 1), else an error naming ``schedule``."""
    if not (hasattr(schedule, "epochs") and hasattr(schedule, "batch_size")):
        raise TypeError(f"schedule must be a resnetlearn.reproduce.point.Schedule(epochs, batch_size=None), the SGD "
                        f"protocol's epochs and mini-batch (None: {BATCH}), got {schedule!r}")
    V.integer("schedule.epochs", schedule.epochs, lo=1)
    if schedule.batch_size is not None:
        V.integer("schedule.batch_size", schedule.batch_size, lo=1)
    return schedule


def _refuse_interrupted(fit) -> None:
    """Refuse to read an interrupted fit's results: they would look like a finished one's (Ctrl-C semantics)."""
    if fit.interrupted:
        raise RuntimeError("this fit was interrupted (Ctrl-C): its results are partial; fit again")


# ----------------------------------------------------------------- networks (§8.1)
@dataclass
class NetworkFit:
    """A network's search (:func:`fit_network`): every run (``grid``), the selected one (``best``, empty when
    every run diverged) with its fresh-seed ``reruns``, and for a (last)/(ntk) network its ``exact`` kernel
    solution's errors."""

    grid: GridResult
    best: dict
    reruns: list[dict]
    _: KW_ONLY
    lrs: tuple
    wds: tuple
    exact: dict | None = None
    interrupted: bool = False
    device: str = "cpu"
    reused_seconds: float = 0.0

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """The selected run's outputs (n, k) on ``x``
        (:meth:`~resnetlearn.learners.training.TrainResult.predict`: its errors bit for bit, trained on the CPU)."""
        if not self.best:
            raise ValueError("no run was selected (every run of the grid diverged or training was interrupted)")
        return self.grid.predict(self.best, x)

    def stored(self, *, keeps_grid: bool = False) -> dict:
        """What the results store keeps: the runs, the selected test error, lr and wd (at a grid edge?), the
        seeds' errors, and with ``keeps_grid`` every grid run's (train error, test error, ‖W‖_F) (§8.2). Refused for
        an interrupted search (its runs are a partial grid)."""
        _refuse_interrupted(self)
        best, grid_rows = self.best, [r for r in self.grid.rows if r["role"] == "grid"]
        kept = {"train_error": best.get("train_error"), "frobenius_W": best.get("frobenius_W"),
                "grid": [[r["train_error"], r["test_error"], r["frobenius_W"]] for r in grid_rows
                         if not r["diverged"]]} if keeps_grid else {}
        runs = [{k: r.get(k) for k in RUN_KEYS if k in r} for r in self.grid.rows]
        seeds = [best.get("test_error", math.nan)] + [r["test_error"] for r in self.reruns] if best else []
        out = {**kept, "runs": runs, "test_error": best.get("test_error", math.nan), "lr": best.get("lr"),
               "wd": best.get("wd"), "lr_at_grid_edge": _at_edge("lr", best, self.lrs),
               "wd_at_grid_edge": _at_edge("wd", best, self.wds),
               "seed_errors": seeds, "diverged": sum(r["diverged"] for r in grid_rows), "grid_size": len(grid_rows)}
        return {**out, **(self.exact or {})}


def fit_network(learner: Learner, samples: Samples, search, *, schedule, device=None, cancel=None,
                checkpoints=None) -> NetworkFit:
    """The search of a network figure point (arXiv v3 §8.1): every lr × wd cell of ``search`` (a
    :class:`resnetlearn.reproduce.point.Search`) trained by SGD for ``schedule.epochs`` epochs in mini-batches of
    ``schedule.batch_size`` (None: :data:`BATCH`) on ``samples`` drawn in float32 on ``device``
    (:func:`~resnetlearn.learners.search.search_split`), the cell selected by test or validation error and
    retrained with the fresh ``rerun_seeds``; with ``grid_seeds`` every cell trains those seeds and seed 0 alone
    selects (:func:`_seed0_choice`). A (last)/(ntk) network also gets the exact kernel solution it stands for
    (:func:`_exact_kernel`, float64). An interrupted search (Ctrl-C, or ``cancel``: an Event or a callable returning
    True, looked at between SGD steps) returns at once, marked ``interrupted``. ``checkpoints`` (a
    :class:`~resnetlearn.reproduce.checkpoints.Checkpoints`; None: none) trains at most its ``models`` at once and
    keeps each finished group, reading back the groups an earlier run kept: the same rows, bit for bit."""
    Learner.check(learner)
    samples = _checked_samples(samples, search)
    schedule = checked_schedule(schedule)
    batch = BATCH if schedule.batch_size is None else schedule.batch_size
    protocol = Protocol(epochs=schedule.epochs, batch_size=batch, eval_every=schedule.epochs)
    grid_seeds = search.grid_seeds  # several seeds in every cell: the robust rule can be applied
    if grid_seeds and search.rerun_seeds:
        raise ValueError("search.grid_seeds and search.rerun_seeds cannot both be set: with grid_seeds the selected "
                         "cell's other seeds are its fresh seeds (seed 0 selects), so reruns would be a second set")
    split = samples.split(dtype=torch.float32, device=device)
    selection = Selection(seeds=grid_seeds or (0,), rerun_seeds=search.rerun_seeds, select=search.select,
                          validation=samples.validation or "fresh", data_seed=samples.data_seed)
    n_models = len(search.lrs) * len(search.wds) * len(grid_seeds or (0,))
    max_batch = _max_batch(learner, split, n_models, device=device, quiet=checkpoints is not None)
    log = None
    if checkpoints is not None:
        max_batch, log = min(max_batch or n_models, checkpoints.models), checkpoints.log()
        print(f"{learner.label} m = {learner.m}: training {n_models} models at most {max_batch} at a time, each "
              f"finished group kept in {checkpoints.folder}", file=sys.stderr, flush=True)
    options = RunOptions(device=device, max_batch=max_batch, cancel=cancel, chunk_log=log)
    g = search_split(split, learner, lrs=search.lrs, wds=search.wds, protocol=protocol, selection=selection,
                     progress=False, options=options)
    fit = dict(lrs=search.lrs, wds=search.wds, device=str(select_device(device)))
    if g.interrupted:  # the engine stopped early on Ctrl-C: these numbers are not the point's result
        return NetworkFit(g, {}, [], interrupted=True, **fit)
    best, reruns = g.best or {}, g.reruns
    if grid_seeds:  # the paper's rule reads seed 0 alone; the cell's other seeds play the fresh seeds' part
        best, reruns = _seed0_choice([r for r in g.rows if r["role"] == "grid"],
                                     "test_error" if search.select == "test" else "val_error")
    exact = _exact_kernel(learner, samples, select=search.select) if learner.kernel_method else None
    return NetworkFit(g, best, reruns, exact=exact, reused_seconds=log.reused_seconds if log else 0.0, **fit)


def _max_batch(learner: Learner, split: Split, n_models: int, *, device, quiet: bool = False) -> int | None:
    """How many of the grid's ``n_models`` networks train at once: all of them as one batched program where they fit
    in the memory this process may plan with on ``device`` (:func:`resnetlearn.memory.available_bytes`, its share of
    a GPU shared by several workers), else the fewest chunks that fit, all of one size but the last
    (:func:`~resnetlearn.learners.search.chunk_size`), said on stderr unless ``quiet``. The models are independent,
    so a chunk changes which models share a batched program, not what each learns: the two-layer networks' numbers
    are bit for bit those of one program, the three-layer ResNet's agree to float32 rounding (its batched kernels
    round differently for another number of models; :func:`~resnetlearn.learners.search.chunk_size`)."""
    if n_models < 1:  # an empty grid: refused by the search, naming it
        return None
    fits = models_that_fit(learner, n_models, **sample_sizes(split.train, split.test, split.val),
                           device=select_device(device))
    size = chunk_size(n_models, fits)
    if size is not None and fits and not quiet:
        print(f"{learner.label} m = {learner.m}: training {n_models} models in {math.ceil(n_models / size)} chunks "
              f"of ≤ {size} (memory)", file=sys.stderr, flush=True)
    return size


def _seed0_choice(grid_rows: list[dict], key: str) -> tuple[dict, list[dict]]:
    """In a grid trained with several seeds per cell: the seed-0 run with the lowest ``key`` error (arXiv v3
    §8.1's rule, as a one-seed grid selects) and the same cell's runs with the other seeds, in seed order; the
    ``selected`` flags are set to that one run."""
    seed0 = [r for r in grid_rows if r["seed"] == 0 and not r["diverged"] and math.isfinite(r[key])]
    best = min(seed0, key=lambda r: r[key]) if seed0 else None
    for r in grid_rows:
        r["selected"] = r is best
    if best is None:
        return {}, []
    return best, sorted((r for r in grid_rows if (r["lr"], r["wd"]) == (best["lr"], best["wd"]) and r["seed"] != 0),
                        key=lambda r: r["seed"])


def _at_edge(axis: str, best: dict, grid) -> bool:
    """Whether the selected lr or wd sits on an end of its grid (the optimum may lie outside: widen the grid),
    by the project's one grid-edge rule (:func:`~resnetlearn.learners.selection.grid_edges`); wd = 0 cannot be
    extended."""
    return bool(grid_edges({axis: grid}, {axis: best.get(axis)}, hard_bounds={"wd": 0.0}))


def _exact_kernel(learner: Learner, samples: Samples, *, select: str) -> dict:
    """The kernel method a (last)/(ntk) network stands for, solved exactly on the same samples drawn in float64:
    ridge regression with the conjugate kernel / empirical NTK of the same initial network (seed 0, the
    learner's init), the ridge chosen by the point's own selection rule
    (:func:`resnetlearn.kernels.experiments.network_kernel_errors`; with ``select="val"`` the same validation
    samples as the SGD grid).

    The NTK is used output by output (``coupling="per_output"``: the scalar empirical NTK of each
    output, the kernel usually meant by "the NTK"). It is cheap (an N × N Gram) and on §8.1 it is the
    stronger kernel: the fully coupled kN × kN kernel, which is what SGD on the linearised network
    converges to, did worse where we measured it (§8.1, N = m = 500: 10.2 vs 7.4), which is why this
    per-output kernel is the one computed here; the SGD-trained linear model stands beside it."""
    split = samples.split(dtype=torch.float64)
    r = network_kernel_errors(split.train, split.test, learner, seed=0, select=select, holdout=split.val,
                              coupling="per_output")
    return {"exact_test_error": r["test_error"], "exact_train_error": r["train_error"],
            "exact_ridge_rel": r["ridge_rel"], "exact_ridge_at_grid_edge": r["ridge_at_grid_edge"]}


# ----------------------------------------------------------------- kernels (§3.1, §7)
@dataclass
class KernelFit:
    """A kernel's search (:func:`fit_kernel`): its row of :func:`~resnetlearn.kernels.experiments.kernel_errors`
    (the selected setting and ridge, their test error, every candidate's selection error) and the selected
    kernel ridge solution (``predictor``)."""

    row: dict
    predictor: KernelPredictor = field(repr=False)
    interrupted: bool = False
    device: str = "cpu"

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """The selected kernel ridge solution's outputs (n, k) on ``x``, in float64 on the CPU (as every fit's; it
        is computed where its training samples are)."""
        return self.predictor(x).cpu()

    def stored(self, *, keeps_grid: bool = False) -> dict:
        """What the results store keeps: every candidate (setting, ridge, selection error), the selected one's
        test error, ridge and setting, and whether they sit at an edge of their grid."""
        r = self.row
        err = "test_error" if r["select"] == "test" else "val_error"
        runs = [{"setting": lab, "ridge_rel": rel, err: e, "selected": (lab, rel) == (r["setting"], r["ridge_rel"])}
                for lab, rel, e in r["path"]]
        return {"runs": runs, "test_error": r["test_error"], "ridge_rel": r["ridge_rel"], "setting": r["setting"],
                "ridge_at_grid_edge": r.get("ridge_at_grid_edge"), "param_at_grid_edge": r.get("param_at_grid_edge"),
                "grid_edges": r.get("grid_edges")}


def fit_kernel(spec: str, samples: Samples, search, *, m: int) -> KernelFit:
    """The search of kernel ``spec`` (the kernel behind a width-``m`` network where it is a finite one): its ridge
    and parameters chosen by ``search.select`` on ``samples`` (arXiv v3 §3.1, the §7 hard instance), by
    :func:`~resnetlearn.kernels.experiments.kernel_errors_and_predictors`, which draws the samples in float64
    itself (as it always did for a figure point: on a GPU machine its Grams are then computed where the draw lands,
    where a split handed to it would be moved to the CPU)."""
    samples = _checked_samples(samples, search)
    rows, predictors = kernel_errors_and_predictors(samples.target, samples.n_train, kernels=[spec],
                                                    search=KernelSearch(search.select, **samples.rule()),
                                                    n_test=samples.n_test, data_seed=samples.data_seed, m=m,
                                                    progress=False)
    return KernelFit(rows[0], predictors[0], device=str(predictors[0].train.x.device))


# ----------------------------------------------------------------- the hand-built solution (§8.2)
@dataclass
class HandBuiltFit:
    """The footnote-16 construction (:func:`fit_hand_built`): the d = 6 network trained on all 64 inputs
    (``trained``, its test error exact) and the network it describes in d dimensions at width m, whose first-layer
    weights are ``W`` (m, d) and output weights ``A`` (1, m)."""

    trained: TrainResult = field(repr=False)
    W: torch.Tensor = field(repr=False)
    A: torch.Tensor = field(repr=False)
    wd: float
    interrupted: bool = False
    device: str = "cpu"

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """The d-dimensional network's outputs (n, 1) on ``x`` (n, d), in float64 on the CPU: on {±1/√d}^d the
        d = 6 network's outputs on the first six coordinates, so its error on the §8.2 target is the stored one.
        Refused when its training was interrupted (a half-trained network is not the construction)."""
        _refuse_interrupted(self)
        x = V.tensor("x", x, ndim=2).to("cpu", torch.float64)
        if x.shape[1] != self.W.shape[1]:
            raise ValueError(f"x has d = {x.shape[1]}; the hand-built network is built for d = {self.W.shape[1]}")
        return networks.forward(HAND_BUILT.arch, {"W": self.W[None], "A": self.A[None]}, x)[0]

    def stored(self, *, keeps_grid: bool = False) -> dict:
        """What the results store keeps: its one run, its (exact) test error, equal to its train error on all the
        inputs of d = 6, and ‖W‖_F of the d-dimensional, width-m network (Figure 4's reference). Refused when its
        training was interrupted."""
        _refuse_interrupted(self)
        error, norm = float(self.trained.test_error[0]), float(self.W.norm())
        run = {"wd": self.wd, "seed": 0, "train_error": error, "test_error": error, "frobenius_W": norm,
               "selected": True}
        return {"runs": [run], "test_error": error, "train_error": error, "frobenius_W": norm}


def hand_built_target(target) -> int:
    """The input dimension d of ``target`` when it is the one the footnote-16 construction solves, §8.2's degree-6
    parity :func:`~resnetlearn.targets.concept.parity6_target` (one output, inputs in {±1/√d}^d, d >= 6; checked
    on its own inputs); ValueError naming the target otherwise: the construction's network answers that parity
    and nothing else, so its error on another target would be neither the stored one nor its shape."""
    d, k = getattr(target, "d", None), getattr(target, "k", None)
    ok = isinstance(d, int) and d >= HAND_BUILT.d and k == 1 and getattr(target, "input_dist", None) == \
        parity6_target(max(d, HAND_BUILT.d)).input_dist
    if ok:
        x = parity6_target(d).sample(64, seed=0, dtype=torch.float64).x
        ok = bool(torch.equal(target(x), parity6_target(d)(x)))
    if not ok:
        raise ValueError(f"the hand-built solution (§8.2, footnote 16) solves only the degree-6 parity "
                         f"parity6_target(d) with d >= {HAND_BUILT.d} (one output, inputs in {{±1/√d}}^d); "
                         f"samples.target is {getattr(target, 'name', target)!r} (d = {d}, k = {k}): fit a network "
                         f"or a kernel to it instead")
    return d


def fit_hand_built(wd: float, *, d: int, m: int, epochs: int, cancel=None) -> HandBuiltFit:
    """§8.2 footnote 16: the construction (:meth:`resnetlearn.learners.hand_built.HandBuiltConstruction.build`)
    with weight decay ``wd``, trained for ``epochs`` epochs on the d = 6 problem and widened to width ``m`` in
    d dimensions, as the fit a figure point stores."""
    built = HAND_BUILT.build(wd, d=d, m=m, epochs=epochs, cancel=cancel)
    return HandBuiltFit(built.trained, built.W, built.A, wd, interrupted=built.trained.interrupted)
