"""Live widgets for the notebooks (ipywidgets 8, JupyterLab 4), all built on the live-run
component of :mod:`resnetlearn.classroom.live_run` (a background job with a generation guard, Stop and a
status line). Per-run constants (the instance, kα²) are computed once by the run function, never
per frame.

Three widgets use it (two here):

* :class:`LiveTrainer` — one 3resnet(all) on the §8.1 instance with α, β, m
  sliders, lr / wd presets and the block decomposition (notebook 03);
* :class:`LiveRace` — 3resnet(all), 3layer(all) and 2layer(all) trained on the
  same samples, chunk by chunk in turn so every curve advances together, beside
  an NTK ridge regression computed once and the kα² line (notebooks 00 and 03);
  the race itself is computed by :mod:`resnetlearn.classroom.race`, which needs no widgets;
* :class:`resnetlearn.classroom.rerun.FigureRerun` — a button that reruns one of the paper's figures (notebook 05),
  in its own module.

Sliders only change settings: Train starts (or restarts) a run, Stop ends
it, and the status line says when the settings shown differ from those of
the run on screen. A "retrain on slider change" toggle makes every slider
move restart the run instead.

Every widget reads well before it runs: its display bundle carries, beside the live widget, a static
picture of its result (``image/png``) and a one-line outcome (``text/plain``) instead of the widget's
``VBox(children=…)`` text, for readers without a kernel (GitHub, nbviewer, the reading copy). The race's
and the trainer's pictures are their final frames, drawn by the same functions as their live frames from
the run at the default settings committed in ``widget_results.json`` (``python -m resnetlearn.classroom.live
--refresh-pictures`` rewrites it; a test checks it against a fresh run). :func:`interact` is ipywidgets'
``interact`` with a picture (or the printed text) of the output at the default setting.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import warnings
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path
from typing import ClassVar

import ipywidgets as W

from .. import validation as V
from ..device import describe_device, select_device
from ..learners.training import Protocol, RunOptions, train_models
from ..reproduce.learner import Network
from ..targets.concept import data_split, parity_instance
from .figures_plotly import training_curves
from .live_run import LiveRun, Panel, RunContext, make_view, pictured_bundle
from .plots import has_threshold, placeholder_figure, style_dict, to_png
from .race import (
    RUN_RULES,
    STEP_RULES,
    RaceConfig,
    RaceResult,
    check_learners_fit,
    error_text,
    race_figure,
    race_outcome,
    race_state,
    run_race,
)
from .static_picture import NOTEBOOK_WIDTH, notebook_picture, to_matplotlib
from .styles import style_for

WIDTHS = (20, 50, 100, 200, 500, 1000)
"""Widths offered by the m sliders (a config's own width is added when it is not one of them)."""
ALPHA_MAX, BETA_MAX = 0.95, 1.5
"""Default slider ranges; a config outside them widens its slider (α itself must lie in [0, 1))."""
SAMPLE_SIZES = (200, 500, 1000, 2000)
"""N values offered by the race's N slider."""

# (lr, wd) presets from the §8.1 grid; the first is the best for 3resnet(all) at m = 200, N = 500
PRESETS = {
    "0.1 / 0.005 (best at m=200)": (0.1, 0.005),
    "0.1 / 0.001": (0.1, 0.001),
    "0.05 / 0.005": (0.05, 0.005),
    "0.02 / 0": (0.02, 0.0),
}
PICTURES = Path(__file__).with_name("widget_results.json")
"""The final frames of the race and of the trainer at their default settings (computed on the CPU with one
thread by :func:`refresh_pictures`): the static pictures of the widgets shown before they run."""
LIVE_NOTE = "A picture of the finished run; in JupyterLab with a running kernel this output is the live widget."


def _config_key(cfg) -> dict:
    """A configuration as ``widget_results.json`` stores it (plain JSON values: :meth:`RaceConfig.key`,
    :meth:`LiveConfig.key`)."""
    return json.loads(json.dumps(cfg.key()))


def cached_result(kind: str, cfg) -> dict | None:
    """The committed final frame of a widget, when ``cfg`` equals the configuration it was computed with.

    Parameters
    ----------
    kind : {"race", "trainer"}
        The widget.
    cfg : RaceConfig or LiveConfig
        Its configuration.

    Returns
    -------
    dict or None
        The entry of :data:`PICTURES`; None when the file cannot be read, holds another configuration or a frame in
        an older format (then with a warning).
    """
    try:
        entry = json.loads(PICTURES.read_text(encoding="utf-8"))[kind]
    except (OSError, KeyError, ValueError):
        return None
    if entry.get("config") != _config_key(cfg):
        return None
    learners = (entry.get("state") or {}).get("learners", [])
    if not all(isinstance(x, dict) for x in learners):  # a file written before the runners were records
        warnings.warn(f"{PICTURES.name} holds a race frame in an older format; its picture is not shown. Refresh it "
                      "with: python -m resnetlearn.classroom.live --refresh-pictures", stacklevel=2)
        return None
    return entry


# ================================================================= one learner, live (notebook 03)
@dataclass(frozen=True)
class LiveConfig:
    """What one live run of :class:`LiveTrainer` trains: 3resnet(all) of width ``m`` on the §8.1 instance.

    Every field is checked when the record is built, and a width that would not fit in memory is refused before
    anything is allocated.

    Parameters
    ----------
    alpha : float, default 0.3
        α of the instance, in [0, 1).
    beta : float, default 1.0
        β, in [0, 1000].
    m : int, default 200
        The width, in [1, 100000].
    lr : float, default 0.1
        The learning rate, in (0, 10] (keyword-only, as every field below).
    wd : float, default 0.005
        The weight decay, in [0, 1].
    layerwise : bool, default False
        Train block 1, then block 2 (:func:`~resnetlearn.classroom.experiments.joint_vs_layerwise`).
    n_train : int, default 500
        Training samples, in [50, 10^6] (at least one mini-batch).
    n_test : int, default 1000
        Test samples, in [1, 10^6].
    epochs : int, default 400
        Epochs, in [1, 100000].
    seed : int, default 0
        The seed of the samples and the network.
    """

    alpha: float = 0.3
    beta: float = 1.0
    m: int = 200
    _: KW_ONLY
    lr: float = 0.1
    wd: float = 0.005
    layerwise: bool = False
    n_train: int = 500
    n_test: int = 1000
    epochs: int = 400
    seed: int = 0
    LEARNER: ClassVar[Network] = Network("3resnet", "all", m=200)
    """The network it trains, at :attr:`m` in :attr:`learner` (not a field: a configuration's stored key omits it)."""

    def __post_init__(self):
        V.check_fields(self, {**RUN_RULES, **STEP_RULES, "layerwise": (V.boolean, {})})
        check_learners_fit([self.learner], m=self.m, n_eval=max(self.n_train, self.n_test), n_gram=None,
                           what="this live run")

    @property
    def learner(self) -> Network:
        """What it trains: the §6 ResNet with every layer trained, at width ``m`` (§8.1's initialisation)."""
        return replace(self.LEARNER, m=self.m)

    def key(self) -> dict:
        """This configuration as plain JSON values, as ``widget_results.json`` stores it (its fields)."""
        return dataclasses.asdict(self)


def run(cfg: LiveConfig, *, device=None, callback=None, cancel=None, callback_every: int = 10):
    """Train one 3resnet(all) on the §8.1 instance with the settings of ``cfg``.

    Parameters
    ----------
    cfg : LiveConfig
        The settings.
    device : str, torch.device or None, default None
        The device (:func:`~resnetlearn.device.select_device`).
    callback : callable or None, default None
        Called with the curves so far every ``callback_every`` epochs (as in
        :class:`~resnetlearn.learners.training.RunOptions`).
    cancel : threading.Event, callable or None, default None
        Stops training when set or returning True.
    callback_every : int, default 10
        Epochs between evaluations and callbacks.

    Returns
    -------
    instance : ParityInstance
        The target.
    result : TrainResult
        The run (:class:`~resnetlearn.learners.training.TrainResult`).
    """
    inst = parity_instance(alpha=cfg.alpha, beta=cfg.beta)
    dev = select_device(device)
    split = data_split(inst, cfg.n_train, n_test=cfg.n_test, seed=cfg.seed, device=dev)
    tr, te = split.train, split.test
    protocol = Protocol(epochs=cfg.epochs, eval_every=callback_every,
                        layerwise=cfg.layerwise)
    res = train_models(tr, te, cfg.learner, lrs=[cfg.lr], wds=[cfg.wd], seeds=[cfg.seed], protocol=protocol,
                       progress=False, options=RunOptions(device=dev, callback=callback, callback_every=callback_every,
                                                          cancel=cancel))
    return inst, res


TRAINER_SIZE = {False: (5.4, 7.6), True: (5.4, 9.6)}
"""Inches of :class:`LiveTrainer`'s picture (panels stacked, legend below), normal and ``large``: 5.4 in at
90 dpi is 486 px. The widget shows it at the width of its output area (about 470 px at 1024×768 with the file
browser open, measured by ``course/projector.py``), so its text stays near the size it is drawn at."""


def _slider_widths(m: int) -> list[int]:
    return sorted(set(WIDTHS) | {m})


def _trainer_every(cfg: LiveConfig) -> int:
    """Epochs between two evaluations (and frames) of a live run: about 30 frames a run."""
    return max(5, cfg.epochs // 30)


def _trainer_data(res, threshold: float) -> dict:
    """A finished run's last frame (what :class:`LiveTrainer` draws) as plain lists."""
    keys = ("train", "test", "out1_vs_base", "residual_vs_composite")
    return {"epochs": [int(e) for e in res.epochs], "epoch": int(res.epochs_done),
            "total_epochs": int(res.epochs_done), "threshold": float(threshold),
            **{k: [[float(v)] for v in res.curves[k][:, 0]] for k in keys}}


class LiveTrainer(Panel):
    """One 3resnet(all) trained live: α, β, m sliders, lr / wd presets, a layer-wise switch, Train / Stop.

    The plot shows the test error with the kα² line and the block decomposition (notebook 03).

    Parameters
    ----------
    cfg : LiveConfig or None, default None
        The initial slider values (a width, lr or wd outside the presets is added to them); None: the defaults.
    device : str, torch.device or None, default None
        The device.
    large : bool, default False
        The projector-friendly sizes.
    auto : bool, default False
        The initial state of the "retrain on slider change" toggle (off: sliders only stage settings and Train runs
        them).
    paper_scale : bool, default False
        Train for 800 epochs, the protocol of arXiv v3 §8.1.
    view : {"png", "plotly", "auto"}, default "png"
        The plot: the plotly figure's static picture (:func:`resnetlearn.classroom.static_picture.to_matplotlib`), a
        plotly figure, or plotly where it works.

    Raises
    ------
    TypeError
        If ``cfg`` is not a :class:`LiveConfig`.
    """

    def __init__(self, cfg: LiveConfig | None = None, *, device=None, large: bool = False, auto: bool = False,
                 paper_scale: bool = False, view: str = "png"):
        cfg = cfg if cfg is not None else LiveConfig()
        if not isinstance(cfg, LiveConfig):
            raise TypeError(f"cfg must be a LiveConfig, got {type(cfg).__name__}")
        self.cfg = replace(cfg, epochs=800) if paper_scale else cfg
        self.device = select_device(device)
        self.large = V.boolean("large", large)
        s = dict(continuous_update=False, style={"description_width": "60px"}, layout=W.Layout(width="300px"))
        self.alpha = W.FloatSlider(value=self.cfg.alpha, min=0.0, max=max(ALPHA_MAX, self.cfg.alpha), step=0.05,
                                   description="α", readout_format=".2f", **s)
        self.beta = W.FloatSlider(value=self.cfg.beta, min=0.0, max=max(BETA_MAX, self.cfg.beta), step=0.05,
                                  description="β", readout_format=".2f", **s)
        self.m = W.SelectionSlider(options=_slider_widths(self.cfg.m), value=self.cfg.m, description="width m", **s)
        presets = dict(PRESETS)
        mine = (self.cfg.lr, self.cfg.wd)
        label = next((k for k, v in presets.items() if v == mine), None)
        if label is None:
            label = f"{self.cfg.lr:g} / {self.cfg.wd:g} (config)"
            presets = {label: mine, **presets}
        self.presets = presets
        self.preset = W.Dropdown(options=list(presets), value=label, description="lr / wd",
                                 style={"description_width": "60px"}, layout=W.Layout(width="320px"))
        self.layerwise = W.Checkbox(value=self.cfg.layerwise, description="layer-wise (block 1, then block 2)",
                                    indent=False, layout=W.Layout(width="auto"))
        self.controls = [self.alpha, self.beta, self.m, self.preset, self.layerwise]
        view_ = make_view(view, png_placeholder=lambda: placeholder_figure(
            "press Train to start", parity_instance(alpha=self.cfg.alpha, beta=self.cfg.beta).threshold,
            large=large, size=(TRAINER_SIZE[bool(large)][0], 3.2)))
        self.job = LiveRun(self._run, self._frame, done=self._done, view=view_)
        self.view = view_
        self.image = view_.widget  # the plot (an Image for view="png")
        self._build_buttons(auto)
        self.job.set_status(f"ready on {describe_device(self.device)}: press Train")
        self.widget = W.VBox([W.HBox([self.alpha, self.beta, self.m]),
                              W.HBox([self.preset, self.layerwise]),
                              W.HBox([self.train_btn, self.stop_btn, self.retrain]), self.job.status,
                              view_.widget])

    @property
    def first_plot_s(self) -> float | None:
        return self.job.first_frame_s

    @property
    def last_result(self):
        """The :class:`~resnetlearn.learners.training.TrainResult` of the latest finished run (None before)."""
        return None if self.job.last_result is None else self.job.last_result[1]

    def current_config(self) -> LiveConfig:
        lr, wd = self.presets[self.preset.value]
        return replace(self.cfg, alpha=self.alpha.value, beta=self.beta.value, m=self.m.value, lr=lr, wd=wd,
                       layerwise=self.layerwise.value)

    @staticmethod
    def describe(cfg: LiveConfig | None) -> str:
        """The settings of a configuration in one short line, for the status line.

        Parameters
        ----------
        cfg : LiveConfig or None
            The configuration.

        Returns
        -------
        str
            ``"—"`` for None.
        """
        if cfg is None:
            return "—"
        return (f"α={cfg.alpha:.2f}, β={cfg.beta:.2f}, m={cfg.m}, lr={cfg.lr:g}, wd={cfg.wd:g}"
                + (", layer-wise" if cfg.layerwise else ""))

    def _run(self, cfg: LiveConfig, ctx: RunContext):
        inst = parity_instance(alpha=cfg.alpha, beta=cfg.beta)
        thr = inst.reference_errors().f_only  # kα², exact; once per run
        ctx.status(self._running_status(f"training on {describe_device(self.device)} ({self.describe(cfg)}) …"))

        def draw(info):
            ctx.frame(dict(info, threshold=thr), force=info["epoch"] == info["total_epochs"])

        _, res = run(cfg, device=self.device, callback=draw, cancel=ctx.cancelled,
                     callback_every=_trainer_every(cfg))
        return thr, res

    def _frame(self, data: dict, cfg: LiveConfig, *, png: bool = False, title: str | None = None):
        net = cfg.learner
        title = title or f"{net.label}, epoch {data['epoch']}/{data['total_epochs']}"
        fig = training_curves(data["epochs"], data, data["threshold"], [net.label], title=title,
                              styles=[style_dict(style_for(net))], total_epochs=data["total_epochs"])
        if self.view.kind == "plotly" and not png:
            return fig
        return to_matplotlib(fig, large=self.large, stacked=True, size=TRAINER_SIZE[self.large])

    @staticmethod
    def _first_evaluation(cfg: LiveConfig) -> int:
        return min(_trainer_every(cfg), cfg.epochs * (2 if cfg.layerwise else 1))

    def _message_figure(self, cfg: LiveConfig, text: str):
        thr = parity_instance(alpha=cfg.alpha, beta=cfg.beta).threshold
        return placeholder_figure(text, thr, large=self.large)

    def final_frame(self) -> tuple[dict, LiveConfig, str] | None:
        """(data, settings, where from) of the finished run the static picture shows: this widget's latest
        finished run, else the committed run at this widget's settings (:data:`PICTURES`), else None."""
        done = self.job.last_result
        if done is not None and not done[1].interrupted and self.job.last_settings is not None:
            thr, res = done
            return _trainer_data(res, thr), self.job.last_settings, "this widget's latest run"
        cfg = self.current_config()
        cached = cached_result("trainer", cfg)
        if cached is not None:
            return cached["data"], cfg, f"computed on {cached['device']}"
        return None

    def static_picture(self) -> tuple[bytes, str]:
        """PNG and one-line outcome of the finished run (the placeholder and a hint before any run)."""
        got = self.final_frame()
        if got is None:
            cfg = self.current_config()
            return (to_png(self._message_figure(cfg, "press Train to start (needs a running kernel)")),
                    f"Live training of {cfg.learner.label} ({self.describe(cfg)}, {cfg.epochs} epochs): "
                    "run the notebook and press Train to see it.")
        data, cfg, _ = got
        err = float(data["test"][-1][0])
        thr = data["threshold"]
        verdict = ("diverged" if err != err else f"ends {'below' if err < thr else 'above'} kα² = {thr:.2f}"
                   if has_threshold(thr) else "α = 0: no kα² line")
        title = f"finished ({data['total_epochs']} epochs): {verdict}"
        png = to_png(self._frame(data, cfg, png=True, title=title))
        return png, (f"Live training of {cfg.learner.label} ({self.describe(cfg)}, {cfg.epochs} epochs): test error "
                     f"{verdict}. {LIVE_NOTE}")

    def _done(self, result, cfg: LiveConfig, ctx: RunContext) -> str:
        thr, res = result
        err = float(res.test_error[0])
        word = "stopped" if res.interrupted else "done"
        if err != err:  # NaN: the run diverged (reported, never hidden)
            return f"{word}: the run diverged at lr={cfg.lr:g} (m={cfg.m}); pick a smaller lr preset"
        verdict = (f"{'below' if err < thr else 'above'} kα² = {thr:.2f}" if has_threshold(thr)
                   else "α = 0: no composite signal, so no kα² to compare with")
        return (f"{word} in {ctx.elapsed:.1f} s on {describe_device(self.device)} ({self.describe(cfg)}): "
                f"test error {error_text(err)} ({verdict}); first plot after {self.job.first_frame_s or 0:.1f} s")


def _short_outcome(state: dict) -> str:
    """'below kα² = 1.35: 3resnet(all) · above: 3layer(all), 2layer(all), NTK ridge' (a picture's title)."""
    thr, k = state["threshold"], state.get("kernel")
    finals = {label: (c["test"][-1] if c["test"] else math.nan) for label, c in state["curves"].items()}
    if k is not None:
        finals[k["label"].split(" (")[0]] = k["test_error"]
    if not has_threshold(thr):
        return "α = 0: no kα² line"
    parts = []
    for word, keep in (("below", lambda e: e < thr), ("above", lambda e: e >= thr), ("diverged", math.isnan)):
        names = [n for n, e in finals.items() if (not math.isnan(e) and keep(e)) or (word == "diverged" and keep(e))]
        if names:
            parts.append(f"{word}{f' kα² = {thr:.2f}' if word == 'below' else ''}: {', '.join(names)}")
    return "  ·  ".join(parts)


# ================================================================= the race (notebooks 00 and 03)
class LiveRace(Panel):
    """The contrast of the paper, live: 3resnet(all) against 3layer(all) and 2layer(all) on the same samples.

    They train in turns of a few epochs so every curve advances together, beside an NTK ridge regression (computed
    once per run) and the kα² line (notebooks 00 and 03). α, β, width m and N sliders stage settings; Train runs them
    (restarting a running race); Stop ends the race within a second. Drawing runs in its own thread, so training
    never waits for it.

    Parameters
    ----------
    cfg : RaceConfig or None, default None
        The initial values and everything the sliders do not set (epochs, learners, lr/wd, kernel); None: the
        defaults.
    device : str, torch.device or None, default None
        The device.
    view : {"auto", "plotly", "png"}, default "auto"
        ``"auto"``: a plotly FigureWidget where anywidget works, else a PNG.
    auto : bool, default False
        "Retrain on slider change": every slider move restarts the race.
    large : bool, default False
        The projector-friendly sizes.
    min_interval : float or None, default None
        Seconds between frames; None: 0.25 for plotly, 0.5 for png.
    result : RaceResult or None, default None
        A finished race to picture before this widget has run one.

    Raises
    ------
    TypeError
        If ``cfg`` or ``result`` is of the wrong type.
    """

    def __init__(self, cfg: RaceConfig | None = None, *, device=None, view: str = "auto", auto: bool = False,
                 large: bool = False, min_interval: float | None = None, result: RaceResult | None = None):
        cfg = cfg if cfg is not None else RaceConfig()
        if not isinstance(cfg, RaceConfig):
            raise TypeError(f"cfg must be a RaceConfig, got {type(cfg).__name__}")
        if result is not None and not isinstance(result, RaceResult):
            raise TypeError(f"result must be a RaceResult (from run_race), got {type(result).__name__}")
        self.result = result  # a finished race to picture before this widget has run one
        self.cfg, self.device, self.large = cfg, select_device(device), V.boolean("large", large)
        s = dict(continuous_update=False, style={"description_width": "60px"}, layout=W.Layout(width="300px"))
        self.alpha = W.FloatSlider(value=cfg.alpha, min=0.0, max=max(ALPHA_MAX, cfg.alpha), step=0.05,
                                   description="α", readout_format=".2f", **s)
        self.beta = W.FloatSlider(value=cfg.beta, min=0.0, max=max(BETA_MAX, cfg.beta), step=0.05,
                                  description="β", readout_format=".2f", **s)
        self.m = W.SelectionSlider(options=_slider_widths(cfg.m), value=cfg.m, description="width m", **s)
        self.n = W.SelectionSlider(options=sorted(set(SAMPLE_SIZES) | {cfg.n_train}), value=cfg.n_train,
                                   description="N", **s)
        self.controls = [self.alpha, self.beta, self.m, self.n]
        empty = race_state(cfg, parity_instance(alpha=cfg.alpha, beta=cfg.beta).threshold)
        view_ = make_view(view, png_placeholder=lambda: placeholder_figure(
            "press Train to start the race", empty["threshold"], large=large, size=(NOTEBOOK_WIDTH, 3.4)),
            plotly_placeholder=lambda: race_figure(empty, large=large, title="press Train to start the race"))
        self.view = view_
        self.job = LiveRun(self._run, self._frame, done=self._done, view=view_, min_interval=min_interval)
        self._build_buttons(auto)
        self.job.set_status(f"ready on {describe_device(self.device)}: press Train to race "
                            f"{', '.join(x.label for x in cfg.learners)} on the same samples")
        self.widget = W.VBox([W.HBox([self.alpha, self.beta]), W.HBox([self.m, self.n]),
                              W.HBox([self.train_btn, self.stop_btn, self.retrain]), self.job.status, view_.widget])

    def current_config(self) -> RaceConfig:
        return replace(self.cfg, alpha=self.alpha.value, beta=self.beta.value, m=self.m.value,
                       n_train=self.n.value)

    @staticmethod
    def describe(cfg: RaceConfig | None) -> str:
        """The settings of a configuration in one short line, for the status line.

        Parameters
        ----------
        cfg : RaceConfig or None
            The configuration.

        Returns
        -------
        str
            ``"—"`` for None.
        """
        if cfg is None:
            return "—"
        return f"α={cfg.alpha:.2f}, β={cfg.beta:.2f}, m={cfg.m}, N={cfg.n_train}"

    def _run(self, cfg: RaceConfig, ctx: RunContext) -> RaceResult:
        ctx.status(self._running_status(
            f"racing on {describe_device(self.device)} ({self.describe(cfg)}, {cfg.epochs} epochs, "
            f"{len(cfg.learners)} learners in turns of {cfg.chunk} epochs) …"))
        def on_frame(state: dict, force: bool) -> None:
            empty = state["kernel"] is None and not any(c["epochs"] for c in state["curves"].values())
            if empty and self.view.kind == "png":  # a PNG costs ~0.5 s: spend it on the first curves
                return
            ctx.frame(state, force=force)

        return run_race(cfg, device=self.device, cancel=ctx.cancelled, on_frame=on_frame)

    def _frame(self, state: dict, cfg: RaceConfig):
        # the one renderer: the PNG view is the plotly figure drawn, at a notebook's width
        fig = race_figure(state, large=self.large)
        return fig if self.view.kind == "plotly" else notebook_picture(fig, large=self.large)

    def _has_data(self, data: dict) -> bool:
        return any(c["epochs"] for c in data["curves"].values())

    @staticmethod
    def _first_evaluation(cfg: RaceConfig) -> int:
        return min(cfg.chunk, cfg.epochs)

    def _message_figure(self, cfg: RaceConfig, text: str):
        empty = race_state(cfg, parity_instance(alpha=cfg.alpha, beta=cfg.beta).threshold)
        if self.view.kind == "plotly":
            return race_figure(empty, large=self.large, title=text)
        return placeholder_figure(text, empty["threshold"], large=self.large, size=(NOTEBOOK_WIDTH, 3.4))

    def final_frame(self) -> tuple[dict, str] | None:
        """(state, where from) of the finished race the static picture shows: this widget's latest finished
        race, else ``result`` given when it was built, else the committed race at this widget's settings
        (:data:`PICTURES`), else None."""
        done = self.job.last_result
        if isinstance(done, RaceResult) and not done.interrupted:
            return done.state(), "this widget's latest race"
        cfg = self.current_config()
        if self.result is not None and not self.result.interrupted and self.result.config == cfg:
            return self.result.state(), "run_race"
        cached = cached_result("race", cfg)
        if cached is not None:
            return cached["state"], f"computed on {cached['device']}"
        return None

    def static_picture(self) -> tuple[bytes, str]:
        """PNG and one-line outcome of the finished race (the placeholder and a hint before any race)."""
        got = self.final_frame()
        if got is None:
            cfg = self.current_config()
            fig = placeholder_figure("press Train to start the race (needs a running kernel)",
                                     parity_instance(alpha=cfg.alpha, beta=cfg.beta).threshold,
                                     large=self.large, size=(NOTEBOOK_WIDTH, 3.4))
            return to_png(fig), (f"The race ({self.describe(cfg)}, {cfg.epochs} epochs): run the notebook and "
                                 "press Train to see it.")
        state, _ = got
        outcome = race_outcome(state)
        title = (f"Finished race on the same {state['n_train']} samples: α = {state['alpha']:.2f}, "
                 f"β = {state['beta']:.2f}, m = {state['m']}, {state['epochs_total']} epochs<br>"
                 + _short_outcome(state))
        png = to_png(notebook_picture(race_figure(state, large=self.large, title=title), large=self.large))
        return png, f"The race ({outcome}). {LIVE_NOTE}"

    def _done(self, res: RaceResult, cfg: RaceConfig, ctx: RunContext) -> str:
        thr = res.threshold
        parts = []
        for label, err in res.final_errors().items():
            if err != err:
                parts.append(f"{label} diverged")
            elif has_threshold(thr):
                parts.append(f"{label} {error_text(err)} ({'below' if err < thr else 'above'})")
            else:
                parts.append(f"{label} {error_text(err)}")
        against = f"against kα² = {thr:.2f}" if has_threshold(thr) else "(α = 0: no composite signal, no kα²)"
        word = "stopped" if res.interrupted else "done"
        return (f"{word} in {ctx.elapsed:.1f} s ({self.describe(cfg)}): test error {', '.join(parts)} {against}; "
                f"first curves after {self.first_data_frame_s or 0:.1f} s")

    @property
    def first_data_frame_s(self) -> float | None:
        """Seconds from Train to the first frame of the latest run that shows a curve."""
        gen = self.job.generation
        for f in self.job.frames:
            if f.generation == gen and any(c["epochs"] for c in f.data["curves"].values()):
                return f.seconds
        return None

    @property
    def figure(self):
        """The latest frame as a plotly figure (for a static copy: ``figures_plotly.show_figure(race.figure)``)."""
        if not self.job.frames:
            return None
        return race_figure(self.job.frames[-1].data, large=self.large)


# ================================================================= interact with a picture (notebooks 01, 02, 04)
class Interact:
    """``ipywidgets.interact`` whose output reads well before it runs.

    Its display bundle carries the live controls and, for readers without a kernel, the output of ``fn`` at the
    default setting (its picture as ``image/png``, its printed text as ``text/plain``). Without ``manual`` the default
    setting is computed once, by the widget's own first call; with ``manual`` it is computed here, once, for the
    picture.

    Parameters
    ----------
    fn : callable
        The function the controls drive.
    manual : bool, default False
        ``interact_manual``: run only on a button press.
    **controls
        ipywidgets' abbreviations or widgets, as for ``interact``.
    """

    def __init__(self, fn, /, *, manual: bool = False, **controls):
        from IPython.utils.capture import capture_output

        self.first: list = []

        @functools.wraps(fn)
        def once(*args, **kw):
            if self.first:
                return fn(*args, **kw)
            cap = capture_output()
            try:
                with cap as captured:
                    return fn(*args, **kw)
            finally:  # an error is shown by ipywidgets as for any interact; the picture keeps what came before it
                self.first.append(captured)
                captured.show()  # into the widget's own output area, as an ordinary call would

        self.widget = W.interactive(once, {"manual": bool(manual)}, **controls)
        self.defaults = {w._kwarg: w.value for w in self.widget.kwargs_widgets}
        if manual:
            with capture_output() as cap:
                try:
                    fn(**self.defaults)
                finally:
                    self.first.append(cap)

    def static_picture(self) -> tuple[bytes | None, str]:
        """The first PNG ``fn`` displayed at the default setting and a line with the setting and what it
        printed."""
        import base64

        cap = self.first[0]
        png = None
        for out in cap.outputs:
            data = out.data.get("image/png")
            if data is not None:
                png = data if isinstance(data, bytes) else base64.b64decode(data)
                break
        setting = ", ".join(f"{k} = {_setting_text(v)}" for k, v in self.defaults.items())
        printed = cap.stdout.strip()
        what = "printed" if printed else "a picture" if png else "no output"
        return png, (f"Output at the default setting ({setting}), {what}"
                     + (f":\n{printed}" if printed else ".")
                     + "\nWith a running kernel this output is the live widget: move the controls.")

    def _repr_mimebundle_(self, include=None, exclude=None):
        png, text = self.static_picture()
        return pictured_bundle(self.widget, png, text)


def _setting_text(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def interact(fn, /, *, manual: bool = False, **controls) -> None:
    """Display an :class:`Interact`: ipywidgets' ``interact`` with a picture of the default setting.

    Returns None, so a cell may end with it, with or without a semicolon.

    Parameters
    ----------
    fn : callable
        The function the controls drive.
    manual : bool, default False
        ``interact_manual``: run only on a button press.
    **controls
        ipywidgets' abbreviations or widgets, as for ``interact``.
    """
    from IPython.display import display

    display(Interact(fn, manual=manual, **controls))


# ================================================================= the committed pictures
def refresh_pictures(path: Path = PICTURES) -> dict:
    """Run the race and the trainer at their default settings on the CPU and write their final frames.

    These are the static pictures of :class:`LiveRace` and :class:`LiveTrainer`.

    Parameters
    ----------
    path : Path, default PICTURES
        The file written.

    Returns
    -------
    dict
        What was written.
    """
    import platform

    import torch

    out: dict = {"made_by": "python -m resnetlearn.classroom.live --refresh-pictures",
                 "torch": torch.__version__, "python": platform.python_version()}
    race_cfg = RaceConfig()
    res = run_race(race_cfg, device="cpu")
    out["race"] = {"config": _config_key(race_cfg), "device": describe_device(select_device("cpu")),
                   "state": res.state(), "final_errors": res.final_errors()}
    cfg = LiveConfig()
    inst, tr = run(cfg, device="cpu", callback_every=_trainer_every(cfg))
    out["trainer"] = {"config": _config_key(cfg), "device": describe_device(select_device("cpu")),
                      "data": _trainer_data(tr, inst.threshold)}
    Path(path).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def main(argv=None) -> int:
    """``python -m resnetlearn.classroom.live [--refresh-pictures]``: rewrite the widgets' committed pictures.

    Without the option, the help is printed.

    Parameters
    ----------
    argv : list of str or None, default None
        The arguments; None reads ``sys.argv``.

    Returns
    -------
    int
        0.
    """
    import argparse

    ap = argparse.ArgumentParser(prog="python -m resnetlearn.classroom.live", description="The live widgets' pictures.")
    ap.add_argument("--refresh-pictures", action="store_true",
                    help=f"rerun the race and the trainer at their defaults and rewrite {PICTURES.name}")
    args = ap.parse_args(argv)
    if args.refresh_pictures:
        out = refresh_pictures()
        print(f"wrote {PICTURES}: race {out['race']['final_errors']}, trainer test error "
              f"{out['trainer']['data']['test'][-1][0]:.3f}")
    else:
        ap.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
