"""The race of notebooks 00 and 03, as a computation: several learners trained on the same samples of
the §8.1 instance, taking turns of a few epochs, beside a kernel reference and the kα² line.

This is the contrast of the ResNet paper (§1, §8.1: the three-layer ResNet learns the composite
signal α·G(F), kernel methods and the plain networks of the same width do not at this sample size)
run live. :func:`run_race` is pure computation and imports no widget library, so it runs in scripts
and tests (``benchmarks/live_race.py``); :class:`resnetlearn.classroom.live.LiveRace` is the widget that
drives it. :func:`race_figure` draws one frame (plotly; its static picture is
:func:`resnetlearn.classroom.static_picture.to_matplotlib` of it).

:data:`RUN_RULES` and :data:`STEP_RULES` declare once the checks that every live configuration
(:class:`RaceConfig`, :class:`Runner`, :class:`resnetlearn.classroom.live.LiveConfig`) applies to its fields.
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field, fields, replace

import plotly.graph_objects as go
import torch

from .. import memory
from .. import validation as V
from ..device import select_device
from ..kernels.experiments import kernel_errors
from ..kernels.registry import DEFAULT_KERNELS
from ..learners.networks import ARCHITECTURES
from ..learners.training import Protocol, RunOptions, train_models, training_bytes
from ..reproduce.learner import Kernel, Network
from ..targets.concept import data_split, parity_instance
from .figures_plotly import (
    CHARACTER_EM,
    ERROR_TITLE,
    LEGEND_OUTSIDE,
    TEMPLATE,
    epoch_axis,
    hline,
    legend_below,
    log_axis,
    wrap_title,
)
from .plots import DPI, has_threshold, threshold_label
from .static_picture import NOTEBOOK_WIDTH
from .styles import style_for

RUN_RULES = {
    "alpha": (V.real, {"lo": 0, "hi": 1, "hi_open": True}),
    "beta": (V.real, {"lo": 0, "hi": 1e3}),
    "m": (V.integer, {"lo": 1, "hi": 100_000}),
    "n_train": (V.integer, {"lo": 50, "hi": 1_000_000}),  # at least one mini-batch of 50 (§8.1)
    "n_test": (V.integer, {"lo": 1, "hi": 1_000_000}),
    "epochs": (V.integer, {"lo": 1, "hi": 100_000}),
    "seed": (V.integer, {"lo": 0, "hi": V.MAX_SEED}),
}
"""Checks of a live run's instance (α in [0, 1), β ≥ 0), width, sample sizes, epochs and seed
(:func:`resnetlearn.validation.check_fields`)."""
STEP_RULES = {"lr": (V.real, {"lo": 0, "lo_open": True, "hi": 10}), "wd": (V.real, {"lo": 0, "hi": 1})}
"""Checks of a learner's step size (lr > 0) and weight decay (wd ≥ 0)."""


def error_text(x: float, digits: int = 3) -> str:
    """A rounded error for legends and status lines (no float noise such as 0.2999999999999999).

    Parameters
    ----------
    x : float
        The error; NaN reads ``nan``.
    digits : int, default 3
        Decimal places.

    Returns
    -------
    str
    """
    return "nan" if x != x else f"{x:.{digits}f}"


def check_learners_fit(learners, *, m: int, n_eval: int, n_gram: int | None, what: str) -> None:
    """Refuse, before anything is allocated, a width whose learners and kernel would not fit in memory.

    The learners are all held at once, at width ``m``, on the §8.1 instance (d = 30, k = 15); the message names a
    width that fits (:mod:`resnetlearn.memory`).

    Parameters
    ----------
    learners : sequence of Network
        The networks (:class:`~resnetlearn.reproduce.learner.Network` records); their own width is replaced by ``m``.
    m : int
        The width.
    n_eval : int
        The largest set evaluated at once.
    n_gram : int or None
        The samples of the kernel's Gram matrix; None: no kernel.
    what : str
        What is refused, named in the message.

    Raises
    ------
    InsufficientMemoryError
        If the need exceeds the limit of :func:`resnetlearn.memory.check_memory`.
    """
    dev = select_device(None)
    d, k = 30, 15  # the §8.1 instance both panels train on (parity_instance defaults)
    gram = 0 if n_gram is None else memory.gram_bytes(n_gram, n_gram)

    def need(w):
        return gram + sum(training_bytes(x.arch, d, k, w, n_eval=n_eval, mode=x.mode) for x in learners)

    memory.check_memory(need(m), what=what, width_name="m", width=m, need_at=need, device=dev)


@dataclass(frozen=True)
class Runner:
    """One runner of the race: a network with its own lr and weight decay.

    Its width is the race's: :class:`RaceConfig` holds every runner at ``RaceConfig.m``, so all train at one width.

    Parameters
    ----------
    learner : Network
        The network (:class:`~resnetlearn.reproduce.learner.Network`: architecture, mode, width, initialisation).
    lr : float, default 0.1
        The learning rate, in (0, 10] (keyword-only).
    wd : float, default 0.005
        The weight decay, in [0, 1] (keyword-only).
    """

    learner: Network
    _: KW_ONLY
    lr: float = 0.1
    wd: float = 0.005

    def __post_init__(self):
        Network.check(self.learner)
        V.check_fields(self, STEP_RULES)

    def at_width(self, m: int) -> Runner:
        """This runner with its network at width ``m`` (the race's).

        Parameters
        ----------
        m : int
            The width.

        Returns
        -------
        Runner
        """
        return self if self.learner.m == m else replace(self, learner=replace(self.learner, m=m))

    @property
    def label(self) -> str:
        return self.learner.label

    @property
    def style(self):
        """Its network's style (:func:`resnetlearn.classroom.styles.style_for`)."""
        return style_for(self.learner)

    @property
    def residual(self) -> bool:
        """Whether its architecture is a ResNet (drawn with a heavier line)."""
        return ARCHITECTURES[self.learner.arch].residual

    def state_entry(self) -> dict:
        """How a race frame and a stored configuration name it: plain JSON values (``widget_results.json`` keeps
        the default race's configuration and last frame); the width is the race's, stored once beside."""
        net = self.learner
        return dict(arch=net.arch, mode=net.mode, **({} if net.init == "paper" else {"init": net.init}),
                    lr=self.lr, wd=self.wd)

    @classmethod
    def of_state(cls, entry: dict, *, m: int) -> Runner:
        """The runner at width ``m`` that a frame's entry names (:meth:`state_entry`).

        Parameters
        ----------
        entry : dict
            ``arch``, ``mode``, ``lr``, ``wd`` and, unless ``"paper"``, ``init``.
        m : int
            The race's width (keyword-only).

        Returns
        -------
        Runner
        """
        return cls(Network(entry["arch"], entry["mode"], m=m, init=entry.get("init", "paper")),
                   lr=entry["lr"], wd=entry["wd"])


RACE_WIDTH = 200
"""The race's default width m (:attr:`RaceConfig.m`)."""
RACE_LEARNERS = (
    Runner(Network("3resnet", "all", m=RACE_WIDTH), lr=0.1, wd=0.01),
    Runner(Network("3layer", "all", m=RACE_WIDTH), lr=0.1, wd=0.005),
    Runner(Network("2layer", "all", m=RACE_WIDTH), lr=0.05, wd=0.01),
)
"""The default runners, each with the lr / wd that gave it its lowest test error in a 3 × 3 grid
(lr 0.05-0.2, wd 0.001-0.01) at the race's default settings (benchmarks/live_race.py)."""
RACE_KERNEL = Kernel("ntk_inf", "3resnet_eq21", m=RACE_WIDTH)
"""The kernel reference: ridge regression with the infinite-width NTK of the ResNet of eq 2.1 as written
(a full m×m U; no closed-form limit is computed for the §6 ResNet that races, U = VA, whose empirical NTK
concentrates under §8.1's N(0, 1/m) initialisation, spread ~ 1/√m: kernels.ntk_spread), its ridge
selected by test error as the paper's, on the same samples, computed once per run."""
KERNEL_NAMES = ((Kernel("ntk_inf", "3resnet_eq21"), "NTK ridge (∞-width eq 2.1 ResNet)"),
                (Kernel("ntk_inf", "2layer"), "NTK ridge (∞-width 2layer)"),
                (Kernel("ntk", "3resnet"), "NTK ridge (ResNet at init)"),
                (Kernel("conjugate", "3resnet"), "conjugate-kernel ridge (ResNet)"))
"""The race's names for the kernel references it offers, by kernel record (another kernel: its spec)."""


def kernel_name(kernel: Kernel | None, default: str | None = None) -> str:
    """What the race's legend calls a kernel reference (:data:`KERNEL_NAMES`, whatever its width).

    Parameters
    ----------
    kernel : Kernel or None
        The kernel record.
    default : str or None, default None
        The name of a kernel the race has no name for; None: ``"SPEC ridge"``.

    Returns
    -------
    str
    """
    name = dict(KERNEL_NAMES).get(replace(kernel, m=None)) if kernel is not None else None
    return name or (default if default is not None else f"{kernel.spec if kernel else None} ridge")


@dataclass(frozen=True)
class RaceConfig:
    """The race: every learner trained on the same samples of the §8.1 instance, taking turns, beside a kernel line.

    The learners train for ``epochs`` epochs (lr ÷ 10 at half-time), ``chunk`` epochs per turn. Every field is
    checked when the record is built, and the learners and kernel are refused before anything is allocated when they
    would not fit in memory (:func:`check_learners_fit`).

    Parameters
    ----------
    alpha : float, default 0.3
        α of the instance, in [0, 1).
    beta : float, default 1.0
        β, in [0, 1000].
    m : int, default 200
        The width of every learner and of the kernel's network, in [1, 100000].
    n_train : int, default 500
        Training samples (seed ``seed``), in [50, 10^6]: at least one mini-batch of 50 (§8.1).
    n_test : int, default 1000
        Test samples (seed ``seed + 1``), in [1, 10^6] (keyword-only, as every field below).
    epochs : int, default 200
        Epochs, in [1, 100000].
    seed : int, default 0
        The seed of the samples and the networks.
    chunk : int, default 10
        Epochs per turn, in [1, 100000].
    learners : tuple of Runner, default RACE_LEARNERS
        The runners, differing in arch/mode; held at width ``m``.
    kernel : Kernel or None, default RACE_KERNEL
        The kernel reference, one of :data:`resnetlearn.kernels.registry.DEFAULT_KERNELS` (held at width ``m``):
        ridge regression by :func:`resnetlearn.kernels.experiments.kernel_errors`, drawn as a horizontal line. None:
        no kernel.

    Raises
    ------
    TypeError, ValueError
        If a field is of the wrong kind or out of range.
    InsufficientMemoryError
        If the race would not fit in memory.
    """

    alpha: float = 0.3
    beta: float = 1.0
    m: int = RACE_WIDTH
    n_train: int = 500
    _: KW_ONLY
    n_test: int = 1000
    epochs: int = 200
    seed: int = 0
    chunk: int = 10
    learners: tuple = RACE_LEARNERS
    kernel: Kernel | None = RACE_KERNEL

    def __post_init__(self):
        V.check_fields(self, {**RUN_RULES, "chunk": (V.integer, {"lo": 1, "hi": 100_000})})
        learners = tuple(self.learners)
        if not learners or not all(isinstance(x, Runner) for x in learners):
            raise TypeError(f"learners must be a non-empty sequence of Runner, got {self.learners!r}")
        if len({x.label for x in learners}) != len(learners):
            raise ValueError(f"learners must differ in arch/mode, got {[x.label for x in learners]}")
        object.__setattr__(self, "learners", tuple(x.at_width(self.m) for x in learners))
        if self.kernel is not None:
            if not isinstance(self.kernel, Kernel):
                raise TypeError(f"kernel must be a Kernel record or None, e.g. Kernel.of_spec('ntk_inf:2layer'); "
                                f"got {self.kernel!r}")
            V.choice("kernel", self.kernel.spec, DEFAULT_KERNELS)
            object.__setattr__(self, "kernel", replace(self.kernel, m=self.m))
        check_learners_fit([x.learner for x in self.learners], m=self.m, n_eval=max(self.n_train, self.n_test),
                           n_gram=None if self.kernel is None else self.n_train,
                           what=f"this race ({', '.join(x.label for x in learners)})")

    def key(self) -> dict:
        """This configuration as plain JSON values, as ``widget_results.json`` stores it: each runner by
        :meth:`Runner.state_entry`, the kernel by its spec."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return dict(out, learners=[x.state_entry() for x in self.learners],
                    kernel=None if self.kernel is None else self.kernel.spec)


@dataclass
class RaceResult:
    """What a race produced.

    Parameters
    ----------
    config : RaceConfig
        The race.
    threshold : float
        kα².
    results : dict
        Learner label → its final :class:`~resnetlearn.learners.training.TrainResult`.
    kernel : dict or None
        The kernel reference (``name``, ``label``, ``test_error``, ...); None without one.
    train : Sample
        The samples every learner trained on.
    test : Sample
        The test samples.
    wall_time : float, default 0.0
        Seconds the race took.
    first_data_s : float or None, default None
        Seconds until the first curve point.
    interrupted : bool, default False
        Whether the race was cancelled.
    """

    config: RaceConfig
    threshold: float
    results: dict
    kernel: dict | None
    train: object = field(repr=False)
    test: object = field(repr=False)
    wall_time: float = 0.0
    first_data_s: float | None = None
    interrupted: bool = False

    def final_errors(self) -> dict[str, float]:
        out = {label: float(r.test_error[0]) for label, r in self.results.items()}
        if self.kernel is not None:
            out[self.kernel["label"]] = self.kernel["test_error"]
        return out

    def state(self) -> dict:
        """The race's last frame (for :func:`race_figure`), e.g. a copy with its static picture:
        ``figures_plotly.show_figure(race_figure(res.state()))``."""
        st = race_state(self.config, self.threshold)
        for label, r in self.results.items():
            st["curves"][label] = {"epochs": [int(e) for e in r.epochs],
                                   "test": [float(v) for v in r.curves["test"][:, 0]],
                                   "train": [float(v) for v in r.curves["train"][:, 0]]}
        st["kernel"] = self.kernel
        return st


class _Turns:
    """Round-robin turns between learner threads: one trains at a time, for one chunk, then passes on."""

    def __init__(self, n: int):
        self.cv = threading.Condition()
        self.turn, self.alive = 0, [True] * n

    def wait(self, i: int, cancelled: Callable[[], bool]) -> None:
        with self.cv:
            while self.turn != i and not cancelled():
                self.cv.wait(0.05)

    def _next(self, i: int) -> None:
        n = len(self.alive)
        for k in range(1, n + 1):
            j = (i + k) % n
            if self.alive[j]:
                self.turn = j
                break
        self.cv.notify_all()

    def pass_on(self, i: int) -> None:
        with self.cv:
            self._next(i)

    def finish(self, i: int) -> None:
        with self.cv:
            self.alive[i] = False
            if self.turn == i:
                self._next(i)


def race_state(cfg: RaceConfig, threshold: float) -> dict:
    """An empty frame of the race: one (empty) curve per learner, no kernel yet.

    Parameters
    ----------
    cfg : RaceConfig
        The race.
    threshold : float
        kα².

    Returns
    -------
    dict
    """
    return {"threshold": threshold, "epochs_total": cfg.epochs, "alpha": cfg.alpha, "beta": cfg.beta, "m": cfg.m,
            "n_train": cfg.n_train, "learners": [x.state_entry() for x in cfg.learners],
            "curves": {x.label: {"epochs": [], "test": [], "train": []} for x in cfg.learners},
            "kernel": None, "kernel_name": None if cfg.kernel is None else cfg.kernel.spec}


def _race_data(cfg: RaceConfig, dev):
    """The race's instance, its kα² (exact; once per race) and one draw of its samples: in float64 for the
    kernel, and cast for the networks onto ``dev`` (equal to the float32 draw)."""
    inst = parity_instance(alpha=cfg.alpha, beta=cfg.beta)
    split64 = data_split(inst, cfg.n_train, n_test=cfg.n_test, seed=cfg.seed, dtype=torch.float64)
    return inst, inst.reference_errors().f_only, split64, split64.to(device=dev, dtype=torch.float32)


def _kernel_reference(cfg: RaceConfig, inst, split64, *, state: dict, lock, emit: Callable, cancelled: Callable):
    """The race's kernel reference (``cfg.kernel`` by ridge regression on the race's float64 samples), written
    into ``state["kernel"]`` under ``lock`` and shown (``emit``) unless the race was cancelled meanwhile; a
    kernel that fails is reported there and the race goes on."""
    try:
        t = time.perf_counter()
        row = kernel_errors(inst, cfg.n_train, kernels=[cfg.kernel.spec], n_test=cfg.n_test, data_seed=cfg.seed,
                            m=cfg.m, kernel_seed=cfg.seed, split=split64, progress=False)[0]
        if cancelled():
            return
        with lock:
            state["kernel"] = {"name": cfg.kernel.spec, "label": kernel_name(cfg.kernel),
                               "test_error": float(row["test_error"]), "ridge_rel": row["ridge_rel"],
                               "seconds": round(time.perf_counter() - t, 2)}
        emit()
    except Exception as exc:  # a kernel that fails is reported, the race goes on
        with lock:
            state["kernel"] = {"name": cfg.kernel.spec, "label": f"{cfg.kernel.spec} (failed: {exc})",
                               "test_error": math.nan}


def _write_curves(c: dict, epochs, curves) -> None:
    """A learner's curves so far (its evaluated epochs, test and train errors) into its entry ``c`` of a race
    state (:func:`race_state`), as plain lists."""
    c["epochs"] = [int(e) for e in epochs]
    c["test"] = [float(v) for v in curves["test"][:, 0]]
    c["train"] = [float(v) for v in curves["train"][:, 0]]


def _wait(threads: list, cancelled: Callable) -> None:
    """Wait for the learners' ``threads``; once the race is cancelled, for at most a second in all (a cancelled
    learner stops within one SGD step)."""
    for t in threads:
        while t.is_alive() and not cancelled():
            t.join(0.05)
    deadline = time.perf_counter() + 1.0
    for t in threads:
        t.join(max(0.0, deadline - time.perf_counter()))


def run_race(cfg: RaceConfig, *, device=None, on_frame: Callable | None = None, cancel=None) -> RaceResult:
    """Train every learner of a race on the same samples, ``cfg.chunk`` epochs at a time in turn, with the kernel once.

    The kernel reference is computed in parallel with the first chunk. A learner that fails stops the race and its
    exception is raised.

    Parameters
    ----------
    cfg : RaceConfig
        The race.
    device : str, torch.device or None, default None
        The device (:func:`~resnetlearn.device.select_device`).
    on_frame : callable or None, default None
        ``on_frame(state, force)`` receives a snapshot (a dict of lists, see :func:`race_state`) after each chunk and
        once at the start and end (``force`` True).
    cancel : threading.Event, callable or None, default None
        Stops the race within one SGD step (one epoch where epochs replay as CUDA graphs) when set or returning True.

    Returns
    -------
    RaceResult
    """
    dev = select_device(device)
    t0 = time.perf_counter()
    inst, thr, split64, split = _race_data(cfg, dev)
    tr, te = split.train, split.test
    halt = threading.Event()

    def cancelled() -> bool:
        return halt.is_set() or V.cancelled(cancel)

    state, lock = race_state(cfg, thr), threading.Lock()
    first_data: list[float] = []

    def emit(force: bool = False) -> None:
        if on_frame is not None:
            with lock:
                snap = copy.deepcopy(state)
            on_frame(snap, force)

    emit(force=True)
    results, errors = {}, []  # label → TrainResult; the exceptions of learners that failed
    turns = _Turns(len(cfg.learners))
    protocol = Protocol.quick(cfg.epochs, eval_every=cfg.chunk)

    def record(label: str, epochs, curves) -> None:
        with lock:
            _write_curves(state["curves"][label], epochs, curves)
            if not first_data:
                first_data.append(time.perf_counter() - t0)

    def learner(i: int, spec: Runner) -> None:
        try:
            turns.wait(i, cancelled)
            if cancelled():
                return

            def chunk_done(info):
                record(spec.label, info["epochs"], info)
                emit()
                turns.pass_on(i)
                turns.wait(i, cancelled)

            res = train_models(tr, te, spec.learner, lrs=[spec.lr], wds=[spec.wd], seeds=[cfg.seed], protocol=protocol,
                               progress=False, options=RunOptions(device=dev, callback=chunk_done,
                                                                  callback_every=cfg.chunk, cancel=cancelled))
            record(spec.label, res.epochs, res.curves)
            with lock:
                results[spec.label] = res
        except Exception as exc:  # reported by the caller
            errors.append(exc)
            halt.set()
        finally:
            turns.finish(i)

    threads = [threading.Thread(target=learner, args=(i, x), daemon=True, name=f"race-{x.label}")
               for i, x in enumerate(cfg.learners)]
    kthread = threading.Thread(target=_kernel_reference, args=(cfg, inst, split64), daemon=True, name="race-kernel",
                               kwargs=dict(state=state, lock=lock, emit=emit, cancelled=cancelled)) \
        if cfg.kernel else None
    for t in threads + ([kthread] if kthread is not None else []):  # the learners first, then the kernel
        t.start()
    _wait(threads, cancelled)
    if errors:
        raise errors[0]
    interrupted = cancelled() or any(r.interrupted for r in results.values())
    if kthread is not None and not interrupted:
        kthread.join()
    emit(force=True)
    with lock:
        kern = copy.deepcopy(state["kernel"])
    return RaceResult(cfg, thr, results, kern, train=tr, test=te, wall_time=time.perf_counter() - t0,
                      first_data_s=first_data[0] if first_data else None, interrupted=interrupted)


def race_outcome(state: dict) -> str:
    """The race's outcome in words: which learners end below kα² and which above (or diverged), with the settings.

    No error values: the picture and the notebooks' printed cells give them.

    Parameters
    ----------
    state : dict
        A frame (:func:`race_state`, :meth:`RaceResult.state`).

    Returns
    -------
    str
    """
    thr, k = state["threshold"], state.get("kernel")
    finals = {label: (c["test"][-1] if c["test"] else math.nan) for label, c in state["curves"].items()}
    if k is not None:
        finals[k["label"]] = k["test_error"]
    settings = (f"α = {state['alpha']:.2f}, β = {state['beta']:.2f}, m = {state['m']}, N = {state['n_train']}, "
                f"{state['epochs_total']} epochs")
    if not has_threshold(thr):
        return f"{settings}; α = 0: no composite signal, so no kα² line to end below"
    groups: dict[str, list[str]] = {"below": [], "above": [], "diverged": []}
    for label, err in finals.items():
        groups["diverged" if err != err else "below" if err < thr else "above"].append(label)
    line = f"kα² = {thr:.2f}"
    words = []
    for key in ("below", "above"):
        names = groups[key]
        if names:
            who = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
            words.append(f"{who} end{'s' if len(names) == 1 else ''} {key} {line}")
            line = "it"
    if groups["diverged"]:
        words.append(f"{', '.join(groups['diverged'])} diverged")
    return f"{settings}: {'; '.join(words)}"


RACE_PX = round(NOTEBOOK_WIDTH * DPI)
"""The race's width in px (576): a plotly ``FigureWidget`` keeps the width it is first drawn at (anywidget draws it
before JupyterLab puts it on the page, where plotly cannot read the output area's width, and nothing redraws it
when the window changes), so it is drawn no wider than a notebook's output area at 1024×768 with the file
browser open; the same width on a slide, with larger text for ``large``."""

RACE_PLOT_PX = {False: 340, True: 230}
"""Height in px of the race's plot area, in a notebook and ``large`` (on a slide). A slide shows its heading, the
race's controls and status line and the whole figure on a 1280×720 screen without scrolling; for that the large
figure has this lower plot, names the learners alone in its legend (their three entries share a row; lr and wd
show on hover) and titles itself in one line (``tests/test_lecture_browser.py`` measures the slide)."""


def race_figure(state: dict, *, title: str | None = None, large: bool = False):
    """The race as a plotly figure: test error (log) against epochs per learner, the kernel and kα² as lines.

    Always the same traces (empty until data arrive), so a ``FigureWidget`` can be updated in place. Built from plain
    dicts without plotly's validation (about 2 ms instead of about 100 ms a frame on a small CPU).

    Parameters
    ----------
    state : dict
        A frame (:func:`race_state`, :meth:`RaceResult.state`).
    title : str or None, default None
        The title; None: the race's settings.
    large : bool, default False
        For a slide: 16-px text, laid out as :data:`RACE_PLOT_PX` says.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    E = state["epochs_total"]
    traces, ys = [], []
    for x in (Runner.of_state(e, m=state["m"]) for e in state["learners"]):
        label = x.label
        c = state["curves"][label]
        ys += c["test"]
        steps = f"lr {x.lr:g}, wd {x.wd:g}"
        traces.append(dict(type="scatter", x=c["epochs"], y=[v if v == v else None for v in c["test"]], mode="lines",
                           name=label if large else f"{label}  {steps}", legendgroup=label,
                           line=dict(color=x.style.colour, width=3 if x.residual else 2.2),
                           hovertemplate=f"{label}  {steps}<br>epoch %{{x}}<br>test error %{{y:.3g}}<extra></extra>"))
    k, kname_ = state.get("kernel"), state.get("kernel_name")
    kern = Kernel.of_spec(kname_) if kname_ else None
    kerr = k["test_error"] if k else math.nan
    kstyle = style_for(kern or RACE_KERNEL)  # the configured kernel's (no kernel: no line to style)
    kline = hline(kerr if k else None, 0, E, colour=kstyle.colour, dash=kstyle.line,
                  name=f"{k['label']}: {error_text(kerr)}" if k else
                  f"{kernel_name(kern, 'kernel')}: computing …" if kname_ else "no kernel reference")
    if not k:  # keep the legend entry while the kernel computes
        kline.update(showlegend=bool(kname_), visible="legendonly" if kname_ else False)
    traces.append(kline)
    thr = state["threshold"]
    traces.append(hline(thr, 0, E, name=f"{threshold_label(thr)}: learned F, nothing of G(F)"
                        if has_threshold(thr) else threshold_label(thr)))
    ys += [v for v in (kerr, thr) if v == v and v > 0]
    lo = min([0.05] + [v for v in ys if v == v and v > 0])
    hi = max([25.0] + [v for v in ys if v == v])
    # on a slide, under the slide's heading (the race), a title of one line
    head = title or (f"{'The' if large else 'Race on the'} same {state['n_train']} samples: α = {state['alpha']:.2f}, "
                     f"β = {state['beta']:.2f}, m = {state['m']}")
    if not has_threshold(thr):
        head += " (α = 0: no kα² line)"
    size = 16 if large else 13
    head = wrap_title(head, int((RACE_PX - 40) / (CHARACTER_EM * (size + 2))))
    layout = dict(template=TEMPLATE, title=dict(text=head, x=0, xanchor="left", font=dict(size=size + 2)),
                  xaxis=epoch_axis(E), yaxis=log_axis(lo=lo, hi=hi, title=ERROR_TITLE), legend=LEGEND_OUTSIDE,
                  font=dict(size=size), width=RACE_PX, autosize=False, uirevision="race", hovermode="closest",
                  margin=dict(l=70, r=20))
    fig = go.Figure(data=traces, layout=layout, _validate=False)
    # the legend in rows below the plot (beside it, it would take the plot's width), wrapped at the plot's width
    legend = legend_below(fig, RACE_PX, size)
    top = 40 + (size + 8) * (head.count("<br>") + 1)
    fig.update_layout(height=RACE_PLOT_PX[large] + top + 2 * size + 40 + legend,
                      margin=dict(t=top, b=2 * size + 40 + legend))
    return fig
