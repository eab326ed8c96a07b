"""The hyperparameter search of arXiv v3 §8.1: every learning rate × weight decay × seed of one learner trained
as batched programs (:func:`grid_search`), on the paper's grid {1, 2, 5}·10^k (:func:`paper_grid`), the best run
selected by test error (as the paper does) or on validation samples (:func:`validation_split`: ours), and the
selected cell retrained with fresh initialisation seeds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import torch

from ..targets.concept import Split, data_split
from ..validation import MAX_SEED, Boolean, Instance, Interval, NoneOr, Options, Seeds, validate_fields, validate_params
from .training import (
    LEARNER,
    LRS,
    OPTIONS,
    PAPER_PROTOCOL,
    POSITIVE,
    PROTOCOL,
    VAL_FRACTION,
    WDS,
    Learner,
    Protocol,
    RunOptions,
    TrainResult,
    train_models,
)

SELECTIONS = ("test", "val")
VALIDATIONS = ("fresh", "holdout")
"""Where ``select="val"`` finds its validation samples: ``"fresh"`` (the default) draws them anew from the
target's distribution and trains on all N samples; ``"holdout"`` carves the last fifth out of the N (SGD then
sees 0.8·N samples, so a verdict mixes the selection rule with a smaller N; the stored points that name no
``validation`` were computed with it)."""
VAL_SEED_OFFSET = 2
"""A fresh validation set is drawn with ``data_seed + 2`` unless a seed is given (training samples use
``data_seed``, test samples ``data_seed + 1``: :func:`resnetlearn.targets.concept.data_split`)."""
SEED = Interval(int, 0, MAX_SEED)
FRACTION = Interval(float, 0, 1, closed="neither")


def default_val_size(n_train: int) -> int:
    """The size of a fresh validation set when none is given: a fifth of the training samples (ours).

    ⌈0.2·N⌉, the size the hold-out rule took out of them, at least 1.

    Parameters
    ----------
    n_train : int
        N, the number of training samples.

    Returns
    -------
    int
        max(1, ⌈0.2·N⌉).
    """
    return max(1, math.ceil(VAL_FRACTION * int(n_train)))


@validate_params({"n_train": POSITIVE, "n_test": POSITIVE, "data_seed": SEED, "validation": Options(VALIDATIONS),
                  "val_size": NoneOr(POSITIVE), "val_seed": NoneOr(SEED), "val_fraction": FRACTION})
def validation_split(target, n_train: int, *, n_test: int, data_seed: int = 0, validation: str = "fresh",
                     val_size: int | None = None, val_seed: int | None = None, val_fraction: float = VAL_FRACTION,
                     device=None, dtype=torch.float32):
    """The samples of a search that selects on validation (``select="val"``).

    ``validation="fresh"``: the training part is the same ``n_train`` samples as with ``select="test"``
    (:func:`~resnetlearn.targets.concept.data_split` with ``data_seed``) and the validation part is ``val_size`` new
    samples of the same distribution drawn with ``val_seed``; the test part is unchanged. ``validation="holdout"``:
    the last ``val_fraction`` of the ``n_train`` samples are held out (a named option).

    Parameters
    ----------
    target : Target
        The target whose samples are drawn (e.g. :func:`~resnetlearn.targets.concept.parity_instance`).
    n_train : int
        The number of training samples N, >= 1.
    n_test : int
        The number of test samples, >= 1 (keyword-only, as every parameter below).
    data_seed : int, default 0
        The seed of the training samples (test samples use ``data_seed + 1``), in [0, 2**63 - 1].
    validation : {"fresh", "holdout"}, default "fresh"
        Where the validation samples come from (:data:`VALIDATIONS`).
    val_size : int or None, default None
        The size of a fresh validation set, >= 1 (None: :func:`default_val_size`); ``"fresh"`` only.
    val_seed : int or None, default None
        Its seed, in [0, 2**63 - 1], other than the training and test seeds (None: ``data_seed +``
        :data:`VAL_SEED_OFFSET`); ``"fresh"`` only.
    val_fraction : float, default 0.2
        The part of the training samples a hold-out takes, in (0, 1); ``"holdout"`` only.
    device : str, torch.device or None, default None
        Where the samples are put.
    dtype : torch.dtype, default torch.float32
        Their dtype.

    Returns
    -------
    Split
        Training, validation and test samples (:class:`~resnetlearn.targets.concept.Split`).

    Raises
    ------
    ValueError
        A value out of its range, ``val_size`` or ``val_seed`` with ``"holdout"``, or a ``val_seed`` equal to the
        training or test seed.
    """
    if validation == "holdout":
        if val_size is not None or val_seed is not None:
            raise ValueError("val_size and val_seed describe a fresh validation set; validation='holdout' "
                             "takes val_fraction")
        return data_split(target, n_train, n_test=n_test, seed=data_seed, val_fraction=val_fraction,
                          device=device, dtype=dtype)
    size = default_val_size(n_train) if val_size is None else val_size
    seed = data_seed + VAL_SEED_OFFSET if val_seed is None else val_seed
    if seed in (data_seed, data_seed + 1):
        raise ValueError(f"val_seed = {seed} would draw the training (seed {data_seed}) or test (seed "
                         f"{data_seed + 1}) samples again; a validation set needs a seed of its own")
    split = data_split(target, n_train, n_test=n_test, seed=data_seed, device=device, dtype=dtype)
    return Split(split.train, target.sample(size, seed=seed, device=device, dtype=dtype), split.test)


@validate_params({"lo": Interval(float, 0, closed="right"), "hi": Interval(float, "lo")}, convert=False)
def paper_grid(lo: float, hi: float) -> list[float]:
    """The values {1, 2, 5}·10^k lying in [lo, hi]: arXiv v3 §8.1's grid.

    Parameters
    ----------
    lo : float
        The lowest value, > 0.
    hi : float
        The highest value, >= lo.

    Returns
    -------
    list of float
        The grid's values in [lo, hi], increasing.
    """
    out = []
    for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1):
        for mant in (1, 2, 5):
            v = float(f"{mant}e{e}")
            if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9):
                out.append(v)
    return out


@dataclass(frozen=True)
class Selection:
    """How a grid search chooses its cell and checks the choice.

    Every field is checked when the record is made (``parameter_constraints``; the seeds kept as tuples), the fresh
    seeds against the others where a search starts.

    Parameters
    ----------
    seeds : tuple of int, default (0,)
        The initialisation seeds every cell trains, at least one, each in [0, 2**63 - 1].
    rerun_seeds : tuple of int, default ()
        The fresh seeds the selected cell is retrained with (none: no reruns); not among ``seeds``.
    select : {"test", "val"}, default "test"
        The rule: ``"test"``, the lowest test error, as arXiv v3 §8.1 does; ``"val"``, the lowest error on
        validation samples (ours).
    validation : {"fresh", "holdout"}, default "fresh"
        Where the validation samples come from (:func:`validation_split`): ``"fresh"``, ``val_size`` new samples drawn
        with ``val_seed``; ``"holdout"``, the last ``val_fraction`` of the training samples.
    val_size : int or None, default None
        The size of a fresh validation set, >= 1 (None: :func:`default_val_size`).
    val_seed : int or None, default None
        Its seed, in [0, 2**63 - 1] (None: ``data_seed +`` :data:`VAL_SEED_OFFSET`).
    val_fraction : float, default 0.2
        The part of the training samples a hold-out takes, in (0, 1).
    data_seed : int, default 0
        The seed of the samples, in [0, 2**63 - 1]: training samples with it, test samples with ``data_seed + 1``.
    """

    seeds: tuple = (0,)
    rerun_seeds: tuple = ()
    select: str = "test"
    validation: str = "fresh"
    val_size: int | None = None
    val_seed: int | None = None
    val_fraction: float = VAL_FRACTION
    data_seed: int = 0

    parameter_constraints = {"seeds": Seeds(), "rerun_seeds": Seeds(at_least=0), "select": Options(SELECTIONS),
                             "validation": Options(VALIDATIONS), "val_size": NoneOr(POSITIVE),
                             "val_seed": NoneOr(SEED), "val_fraction": FRACTION, "data_seed": SEED}

    def __post_init__(self):
        validate_fields(self)
        object.__setattr__(self, "seeds", tuple(self.seeds))
        object.__setattr__(self, "rerun_seeds", tuple(self.rerun_seeds))


SELECTION = Instance(Selection, "Selection(seeds=..., select=..., ...)")


@dataclass
class GridResult:
    """All runs of a grid search, the selected one and its reruns.

    Every row records the rule, its ``role`` (``"grid"`` for the lr × wd search, ``"rerun"`` for the selected cell
    retrained with a fresh initialisation seed) and whether it was selected.

    Parameters
    ----------
    rows : list of dict
        Every run, grid runs then reruns.
    best : dict or None
        The selected row (None when every run diverged or the search was interrupted).
    select : {"test", "val"}
        The rule: ``"test"`` picks the lowest test error, as arXiv v3 §8.1 did (optimistic); ``"val"`` picks on
        validation samples, drawn fresh by default (:func:`validation_split`), then reports that run's test error
        (honest).
    interrupted : bool
        Whether the search was stopped before it finished.
    wall_time : float
        Seconds it took.
    reruns : list of dict, default []
        The rerun rows alone: they show whether the selected result survives a new initialisation.
    trained : list, default []
        Row by row, (the trained result that holds the row's model, its index there), or None for a row read back
        from a ``chunk_log``: :meth:`predict` evaluates the row's model.
    """

    rows: list[dict]
    best: dict | None
    select: str
    interrupted: bool
    wall_time: float
    reruns: list[dict] = field(default_factory=list)
    trained: list[tuple[TrainResult, int] | None] = field(default_factory=list, repr=False, compare=False)

    def predict(self, row: dict, x: torch.Tensor) -> torch.Tensor:
        """The outputs on ``x`` of the model of ``row``.

        Evaluated as :meth:`~resnetlearn.learners.training.TrainResult.predict` does: its reported errors bit for bit
        for a model trained on the CPU.

        Parameters
        ----------
        row : dict
            One of :attr:`rows` (the object itself, e.g. :attr:`best`).
        x : torch.Tensor
            The inputs, (n, d).

        Returns
        -------
        torch.Tensor
            The outputs, (n, k).

        Raises
        ------
        ValueError
            ``row`` is not one of this grid's rows, or its model was read back from a ``chunk_log`` without its weights.
        """
        i = next((i for i, r in enumerate(self.rows) if r is row), None)
        if i is None or i >= len(self.trained):
            raise ValueError("row must be one of this grid's rows (its trained model is kept with it)")
        if self.trained[i] is None:
            raise ValueError("this row's model was trained by an earlier run of the search, which kept its errors "
                             "and norm but not its weights (a chunk_log): it cannot be evaluated")
        result, g = self.trained[i]
        return result.predict(x, model=g)[0]


def chunk_size(n_models: int, fits: int) -> int | None:
    """The ``max_batch`` of :func:`search_split` that trains ``n_models`` models when ``fits`` of them fit at once.

    The chunk size of the fewest chunks, ⌈n / ⌈n / fits⌉⌉ (90 models of which 60 fit: 2 chunks of 45; 10 of which 3
    fit: 3, 3, 3 and 1), at least 1: a model that does not fit alone is refused by the training's own check
    (:func:`~resnetlearn.learners.training.train_models`) before anything is trained. The models of a batch are
    independent, so chunks change no number beyond rounding: on the CPU the two-layer networks' rows are bit for bit
    those of one batched program (tests/test_memory_chunks.py), the three-layer ResNet's (``3resnet``) differ in the
    last float32 bits, since its batched kernels round differently for another number of models
    (tests/test_checkpoints.py); a run is repeated exactly with the same chunks.

    Parameters
    ----------
    n_models : int
        The number of models to train.
    fits : int
        How many fit in memory at once (:func:`~resnetlearn.learners.training.models_that_fit`).

    Returns
    -------
    int or None
        The chunk size; None (one batched program, as when memory is plentiful) when all fit.
    """
    if fits >= n_models:
        return None
    return math.ceil(n_models / math.ceil(n_models / max(fits, 1)))


SEARCH = {"learner": LEARNER, "lrs": LRS, "wds": WDS, "protocol": PROTOCOL, "selection": SELECTION,
          "progress": Boolean(), "options": OPTIONS}
"""What a search's arguments accept (:func:`grid_search`, :func:`search_split`); the selection and the options
are records that check their own fields."""


def _checked(learner, selection, options, *, lrs, wds) -> tuple:
    """A search's declared arguments (:data:`SEARCH`) as the search uses them, with the check between them (the
    rerun seeds fresh), before any sample is drawn or model trained: (lrs, wds, seeds, rerun_seeds, max_batch,
    options), ``options`` None read as the defaults."""
    options = RunOptions() if options is None else options
    seeds, rerun_seeds = list(selection.seeds), list(selection.rerun_seeds)
    if set(rerun_seeds) & set(seeds):
        raise ValueError(f"rerun_seeds must be fresh: {sorted(set(rerun_seeds) & set(seeds))} already in seeds")
    return lrs, wds, seeds, rerun_seeds, options.max_batch, options


@validate_params({"n_train": POSITIVE, "n_test": POSITIVE, **SEARCH})
def grid_search(target, learner: Learner, *, n_train: int, lrs, wds, n_test: int = 2000,
                protocol: Protocol = PAPER_PROTOCOL, selection: Selection = Selection(), progress: bool = True,
                options: RunOptions | None = None) -> GridResult:
    """Train the whole lr × wd × seed grid of one :class:`Learner` on one target, select, and rerun the selection.

    The grid is trained as batched programs, the best run selected, then the selected cell retrained with the
    ``rerun_seeds`` of ``selection``. Data come from :func:`~resnetlearn.targets.concept.data_split` (``n_train``
    with the selection's ``data_seed``, ``n_test`` with ``data_seed + 1``). With ``select="val"`` the selection uses
    validation samples (:func:`validation_split`): by default (``validation="fresh"``) ``val_size`` new samples drawn
    with ``val_seed`` while SGD trains on all ``n_train``; ``validation="holdout"`` holds out the last
    ``val_fraction`` of the training samples instead (:class:`Selection`). The reruns use the same data and
    mini-batch seeds derived from their own initialisation seed, so they measure the spread over initialisations
    that one shipped number hides. The samples drawn, the search is :func:`search_split`.

    Parameters
    ----------
    target : Target
        The target whose samples are drawn (e.g. :func:`~resnetlearn.targets.concept.parity_instance`).
    learner : Learner
        What is trained (architecture, mode, width, initialisation).
    n_train : int
        The number of training samples, >= 1 (keyword-only, as every parameter below).
    lrs : list of float
        The learning rates searched, each > 0 (one number is a list of one; keyword-only, as every parameter below).
        :func:`paper_grid` gives arXiv v3 §8.1's grid {1, 2, 5}·10^k; the range is the caller's choice.
    wds : list of float
        The weight decays searched, each >= 0 (arXiv v3 §8.1 chooses them from the same {1, 2, 5}·10^k grid).
    n_test : int, default 2000
        The number of test samples, >= 1.
    protocol : Protocol, default PAPER_PROTOCOL
        The SGD protocol (arXiv v3 §8.1's by default).
    selection : Selection, default Selection()
        The seeds of every cell, the selection rule, where validation samples come from, the data seed and the rerun
        seeds (:class:`Selection`).
    progress : bool, default True
        Show a progress bar.
    options : RunOptions or None, default None
        Where it computes (the samples are drawn in its ``dtype`` on its ``device``), how many models train at once
        (``max_batch``), how a caller follows and stops it (None: the defaults).

    Returns
    -------
    GridResult
        Every run, the selected one (None if all diverged or the search was interrupted) and the reruns.

    Raises
    ------
    ValueError
        A value out of its range or ``rerun_seeds`` among the seeds (both checked before any sample is drawn), or a
        mini-batch larger than the training samples SGD sees.
    """
    options = _checked(learner, selection, options, lrs=lrs, wds=wds)[-1]
    sel, device, dtype = selection, options.device, options.dtype
    if sel.select == "val":
        split = validation_split(target, n_train, n_test=n_test, data_seed=sel.data_seed, validation=sel.validation,
                                 val_size=sel.val_size, val_seed=sel.val_seed, val_fraction=sel.val_fraction,
                                 device=device, dtype=dtype)
    else:
        split = data_split(target, n_train, n_test=n_test, seed=sel.data_seed, device=device, dtype=dtype)
    return search_split(split, learner, lrs=lrs, wds=wds, protocol=protocol, selection=selection, progress=progress,
                        options=options)


@validate_params(SEARCH)
def search_split(split: Split, learner: Learner, *, lrs, wds, protocol: Protocol = PAPER_PROTOCOL,
                 selection: Selection = Selection(), progress: bool = True,
                 options: RunOptions | None = None) -> GridResult:
    """The search of :func:`grid_search` on samples already drawn.

    The selection's ``validation``, ``val_fraction`` and ``data_seed`` say how ``split`` was drawn: the rows record
    them (and a hold-out's protocol is checked against the samples SGD keeps).

    Parameters
    ----------
    split : Split
        The samples (:class:`~resnetlearn.targets.concept.Split`); with ``select="val"`` its validation part
        chooses, as :func:`validation_split` draws it, and with ``select="test"`` it has none.
    learner : Learner
        What is trained (architecture, mode, width, initialisation).
    lrs : list of float
        The learning rates searched, each > 0 (one number is a list of one; keyword-only, as every parameter below).
        :func:`paper_grid` gives arXiv v3 §8.1's grid {1, 2, 5}·10^k; the range is the caller's choice.
    wds : list of float
        The weight decays searched, each >= 0 (arXiv v3 §8.1 chooses them from the same {1, 2, 5}·10^k grid).
    protocol : Protocol, default PAPER_PROTOCOL
        The SGD protocol (arXiv v3 §8.1's by default).
    selection : Selection, default Selection()
        The seeds of every cell, the selection rule, where validation samples come from, the data seed and the rerun
        seeds (:class:`Selection`).
    progress : bool, default True
        Show a progress bar.
    options : RunOptions or None, default None
        Where it computes, how many models train at once (``max_batch``), how a caller follows and stops it (None:
        the defaults).

    Returns
    -------
    GridResult
        Every run, the selected one (None if all diverged or the search was interrupted) and the reruns.

    Raises
    ------
    ValueError
        A value out of its range, ``rerun_seeds`` among the seeds, a ``split`` whose validation part does not match
        ``select`` (all checked before anything is trained), or a mini-batch larger than the training samples SGD
        sees.
    """
    lrs, wds, seeds, rerun_seeds, max_batch, options = _checked(learner, selection, options, lrs=lrs, wds=wds)
    select, validation = selection.select, selection.validation
    if not isinstance(split, Split) or (split.val is None) != (select == "test"):
        raise ValueError(f"split must be a Split {'without' if select == 'test' else 'with'} a validation part "
                         f"for select={select!r} (data_split or validation_split)")
    if select == "val" and validation == "holdout" and isinstance(protocol, Protocol):  # name the hold-out
        n_val = split.val.x.shape[0]
        protocol.check(split.train.x.shape[0] + n_val, held_out=n_val,
                       why=f"select='val' with val_fraction = {selection.val_fraction:g}")
    combos = [(lr, wd, s) for lr in lrs for wd in wds for s in seeds]
    kw = dict(protocol=protocol, holdout=split.val, progress=progress, options=options)
    rows, trained, t0 = [], [], time.perf_counter()
    interrupted = _train_chunks(split, learner, combos, max_batch=max_batch, kw=kw, rows=rows, role="grid",
                                trained=trained)
    key = "test_error" if select == "test" else "val_error"
    finite = [r for r in rows if not r["diverged"] and math.isfinite(r[key])]
    best = min(finite, key=lambda r: r[key]) if finite and not interrupted else None
    reruns = []
    if best is not None and rerun_seeds:
        interrupted = _train_chunks(split, learner, [(best["lr"], best["wd"], s) for s in rerun_seeds],
                                    max_batch=max_batch, kw=kw, rows=reruns, role="rerun", trained=trained)
    n_test = split.test.x.shape[0]
    for r in rows + reruns:
        r.update(select=select, selected=r is best, n_test=n_test, data_seed=selection.data_seed)
        if select == "val":
            r.update(validation=validation, n_val=split.val.x.shape[0])
    return GridResult(rows + reruns, best, select, interrupted=interrupted, wall_time=time.perf_counter() - t0,
                      reruns=reruns, trained=trained)


def _train_chunks(split, learner, combos, *, max_batch, kw, rows, role, trained) -> bool:
    """Train (lr, wd, seed) combinations of ``learner`` in batches of at most ``max_batch``;
    append rows, and to ``trained`` each row's (result, index); True if interrupted. With the options'
    ``chunk_log``, a batch whose rows it kept from an earlier run is read back instead of trained (``trained`` gets
    None for those rows), and each batch that finishes is handed to it."""
    size = max_batch or len(combos)
    log = kw["options"].chunk_log
    for start in range(0, len(combos), size):
        chunk = combos[start:start + size]
        kept = log.rows(role, chunk) if log is not None else None
        if kept is not None:  # trained by an earlier run of this search: its rows, without the models
            rows += [dict(r, role=role) for r in kept]
            trained += [None] * len(chunk)
            continue
        t0 = time.perf_counter()
        res = train_models(split.train, split.test, learner, lrs=[c[0] for c in chunk],
                           wds=[c[1] for c in chunk], seeds=[c[2] for c in chunk], **kw)
        rows += [dict(r, role=role) for r in res.rows()]
        trained += [(res, g) for g in range(len(chunk))]
        if res.interrupted:
            return True
        if log is not None:
            log.keep(role, chunk, res.rows(), time.perf_counter() - t0)
    return False
