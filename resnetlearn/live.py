"""Live widgets for the notebooks (ipywidgets 8, JupyterLab 4), all built on one component.

:class:`LiveRun` is a background job for any live widget: it runs a *run
function* in a thread (so the notebook stays responsive), passes it a
:class:`RunContext` whose ``frame(data)`` turns data into a figure with the
*frame function* and draws it into a view (a plotly ``FigureWidget`` updated
in place, or a PNG image), and writes a status line. Every run carries a
generation number and only the current generation may draw or write the
status, so two runs never draw into one plot; ``start`` cancels the running
run first, ``stop`` cancels it (training stops within one SGD step) and
nothing draws after it. Per-run constants (the instance, kα²) are computed
once by the run function, never per frame.

Three widgets use it:

* :class:`LiveTrainer` — one 3resnet(all) on the §8.1 instance with α, β, m
  sliders, lr / wd presets and the block decomposition (notebook 03);
* :class:`LiveRace` — 3resnet(all), 3layer(all) and 2layer(all) trained on the
  same samples, chunk by chunk in turn so every curve advances together, beside
  an NTK ridge regression computed once and the kα² line (notebooks 00 and 03);
* :class:`FigureRerun` — a button that reruns one of the paper's figures (notebook 05).

Sliders only change settings: Train starts (or restarts) a run, Stop ends
it, and the status line says when the settings shown differ from those of
the run on screen. A "retrain on slider change" toggle makes every slider
move restart the run instead.
"""

from __future__ import annotations

import html
import math
import threading
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field, replace

import ipywidgets as W

from . import memory
from . import validation as V
from .concept import data_split, parity_instance
from .device import describe_device, select_device
from .plots import (
    has_threshold,
    learner_style,
    placeholder_figure,
    threshold_label,
    to_png,
    training_figure,
)
from .training import MODES, Protocol, train_models

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
STATUS_STYLE = "white-space: normal; word-break: normal; overflow-wrap: break-word; line-height: 1.4"


def _f(x: float, digits: int = 3) -> str:
    """A rounded number for status lines (no float noise such as 0.2999999999999999)."""
    return "nan" if x != x else f"{x:.{digits}f}"


# ================================================================= the live-run component
@dataclass
class Frame:
    """One drawn frame: its run's generation, seconds since Train, the run's settings and the data drawn."""

    generation: int
    seconds: float
    settings: object
    data: dict = field(repr=False)


class PngView:
    """Frames drawn by matplotlib into an ``ipywidgets.Image`` (works from a thread in every front end).
    Before the first frame it shows ``placeholder`` (a figure or PNG bytes), or nothing at all when
    ``placeholder`` is None — never a broken-image icon."""

    kind = "png"

    def __init__(self, placeholder=None):
        self.widget = W.Image(format="png", layout=W.Layout(max_width="100%", height="auto"))
        if placeholder is None:
            self.widget.layout.display = "none"
        else:
            self.publish(self.render(placeholder))

    def render(self, fig) -> bytes:
        return fig if isinstance(fig, bytes) else to_png(fig)

    def publish(self, png: bytes) -> None:
        self.widget.value = png
        self.widget.layout.display = None

    @property
    def value(self) -> bytes:
        return self.widget.value


class PlotlyView:
    """Frames drawn into a plotly ``FigureWidget`` (plotly ≥ 6 builds it on anywidget), updated in place
    (one message per frame; legend clicks and zoom survive updates through ``uirevision``)."""

    kind = "plotly"

    def __init__(self, placeholder=None):
        import plotly.graph_objects as go

        self.widget = go.FigureWidget(placeholder if placeholder is not None else go.Figure())
        self.updates = 0
        self._sent: list[dict] = []
        self._sent_layout: dict = {}

    def render(self, fig):
        return fig

    def publish(self, fig) -> None:
        """Send only what changed since the last frame (trace by trace, layout key by key)."""
        fw = self.widget
        data = [t.to_plotly_json() for t in fig.data]
        layout = fig.layout.to_plotly_json()
        same = len(fw.data) == len(data) and all(a.type == d.get("type", "scatter") for a, d in zip(fw.data, data))
        if not same:
            with fw.batch_update():
                fw.data = []
            fw.add_traces(list(fig.data))
            self._sent = [{} for _ in data]
        sent = self._sent or [{} for _ in data]
        sent_layout = self._sent_layout
        with fw.batch_update():
            for old, new, prev in zip(fw.data, data, sent):
                changed = {k: v for k, v in new.items() if k != "type" and prev.get(k) != v}
                if changed:
                    old.update(changed)
            changed = {k: v for k, v in layout.items() if sent_layout.get(k) != v}
            if changed:
                fw.layout.update(changed)
        self._sent, self._sent_layout = data, layout
        self.updates += 1

    @property
    def value(self):
        return self.widget


def plotly_available() -> bool:
    """Whether plotly's FigureWidget can be built here (plotly ≥ 6 needs anywidget)."""
    try:
        import anywidget  # noqa: F401
        import plotly.graph_objects as go

        go.FigureWidget()
    except Exception:  # ImportError, or plotly refusing without anywidget
        return False
    return True


def make_view(kind: str, *, png_placeholder=None, plotly_placeholder: Callable | None = None):
    """A view for frames: ``"plotly"`` (FigureWidget), ``"png"`` (matplotlib image) or ``"auto"``
    (plotly where it works, else png)."""
    V.choice("view", kind, ("auto", "plotly", "png"))
    if kind == "auto":
        kind = "plotly" if plotly_available() else "png"
    if kind == "plotly":
        return PlotlyView(plotly_placeholder() if plotly_placeholder else None)
    return PngView(png_placeholder() if callable(png_placeholder) else png_placeholder)


class RunContext:
    """What a run function sees: its ``settings``, ``cancelled()`` (pass it to ``train_models`` as
    ``cancel``), ``frame(data)`` to draw, ``status(text)``, and ``elapsed`` seconds since Train."""

    def __init__(self, job: LiveRun, generation: int, settings, cancel: threading.Event, t0: float):
        self.job, self.generation, self.settings, self.cancel, self.t0 = job, generation, settings, cancel, t0

    @property
    def current(self) -> bool:
        return self.generation == self.job._gen

    def cancelled(self) -> bool:
        return self.cancel.is_set() or not self.current

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def status(self, text: str) -> None:
        self.job._status_if(self.generation, text)

    def frame(self, data: dict, *, force: bool = False) -> bool:
        """Hand ``data`` to the drawing thread (latest wins: a frame not yet drawn is replaced by a newer
        one, so the run never waits for drawing). Nothing is drawn once this run is no longer current.
        ``force`` marks the last frame of a run (the run's end waits until it is drawn)."""
        return self.job._submit(self, data, force)


class LiveRun:
    """A background job with a generation guard, cancel, stop, a status line and frames.

    ``run(settings, ctx) -> result`` runs in a thread and calls ``ctx.frame(data)`` as data arrive;
    ``frame(data, settings) -> figure`` (matplotlib for a :class:`PngView`, plotly for a
    :class:`PlotlyView`) draws them; ``done(result, settings, ctx) -> str`` words the final status
    line (default "done in … s"). Errors raised by the run are shown in the status line and kept in
    ``last_error``. ``frames`` logs every drawn frame (:class:`Frame`), ``first_frame_s`` the seconds
    from ``start`` to the first frame of the latest run.
    """

    def __init__(self, run: Callable, frame: Callable, *, done: Callable | None = None, view=None,
                 status: W.HTML | None = None, min_interval: float | None = None, max_frames: int = 2000):
        self.run_fn, self.frame_fn, self.done_fn = run, frame, done
        self.view = view if view is not None else PngView()
        self.status = status if status is not None else W.HTML()
        self.status.layout.width = "100%"
        if min_interval is None:  # a PNG costs ~0.2-0.5 s on a small CPU, a plotly update ~10-50 ms
            min_interval = 0.5 if self.view.kind == "png" else 0.25
        self.min_interval = V.real("min_interval", min_interval, lo=0, hi=60)
        self.max_frames = max_frames
        self._gen = 0
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self._cv = threading.Condition()
        self._pending: tuple | None = None  # (ctx, data) waiting for the drawing thread
        self._drawing = False
        self._drawer: threading.Thread | None = None
        self.frames: list[Frame] = []
        self.first_frame_s: float | None = None
        self.last_result = None
        self.last_error: BaseException | None = None
        self.last_settings = None
        self.started_s: float | None = None
        self.finished_s: float | None = None  # seconds from start() to the end of the latest finished run

    # -- drawing (one long-lived thread per job: the run never waits for matplotlib or plotly)
    def _submit(self, ctx: RunContext, data: dict, force: bool) -> bool:
        if not ctx.current:
            return False
        with self._cv:
            self._pending = (ctx, data)
            if self._drawer is None or not self._drawer.is_alive():
                self._drawer = threading.Thread(target=self._draw_loop, daemon=True, name="resnetlearn-draw")
                self._drawer.start()
            self._cv.notify_all()
        return True

    def _draw_loop(self) -> None:
        while True:
            with self._cv:
                while self._pending is None:
                    self._cv.wait()
                (ctx, data), self._pending = self._pending, None
                self._drawing = True
            t_draw = time.perf_counter()
            try:
                self._draw(ctx, data)
            except Exception as exc:  # shown, not lost in the thread
                self.last_error = exc
                ctx.status(f"drawing failed: {type(exc).__name__}: {exc}")
            finally:
                with self._cv:
                    self._drawing = False
                    self._cv.notify_all()
            # throttle: at most one frame per min_interval, and drawing takes at most a third of the time
            # (matplotlib holds the GIL that a Python-bound training loop needs); a newer frame replaces a
            # waiting one meanwhile
            took = time.perf_counter() - t_draw
            time.sleep(max(self.min_interval - took, 2 * took))

    def _draw(self, ctx: RunContext, data: dict) -> None:
        if not ctx.current:
            return
        payload = self.view.render(self.frame_fn(data, ctx.settings))
        with self._lock:  # stop() bumps the generation under this lock: no stale frame after it
            if not ctx.current:
                return
            self.view.publish(payload)
            seconds = ctx.elapsed
            self.frames.append(Frame(ctx.generation, seconds, ctx.settings, data))
            del self.frames[:-self.max_frames]
            if self.first_frame_s is None:
                self.first_frame_s = seconds

    def flush(self, timeout: float = 30.0, ctx: RunContext | None = None) -> bool:
        """Wait until the frame handed over last is drawn (no longer than ``ctx``'s run stays current);
        returns whether it was."""
        end = time.perf_counter() + timeout
        with self._cv:
            while (self._pending is not None or self._drawing) and (ctx is None or ctx.current):
                left = end - time.perf_counter()
                if left <= 0:
                    return False
                self._cv.wait(min(left, 0.05))
        return True

    # -- status
    def set_status(self, text: str) -> None:
        self.status.value = f'<div style="{STATUS_STYLE}"><b>{html.escape(text)}</b></div>'

    @property
    def status_text(self) -> str:
        import re

        return html.unescape(re.sub(r"<[^>]+>", "", self.status.value))

    def _status_if(self, gen: int, text: str) -> bool:
        with self._lock:
            if gen != self._gen:
                return False
            self.set_status(text)
            return True

    # -- control
    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def generation(self) -> int:
        return self._gen

    def stop(self, timeout: float = 2.0, status: str | None = "stopped") -> bool:
        """Cancel the running run (nothing it does is drawn any more) and wait up to ``timeout`` s for
        its thread. Returns whether no run is left running."""
        with self._lock:
            was_running = self.running
            self._gen += 1
            self._cancel.set()
            t = self._thread
            if was_running and status:
                self.set_status(status)
        if t is not None and t is not threading.current_thread():
            t.join(timeout)
        return not self.running

    def start(self, settings) -> int:
        """Cancel any running run, then run ``settings`` in a new thread; returns its generation."""
        t_click = time.perf_counter()
        self.stop(timeout=5.0, status=None)
        with self._lock:
            self._gen += 1
            gen, cancel = self._gen, threading.Event()
            self._cancel = cancel
            self.first_frame_s, self.finished_s, self.last_error = None, None, None
            self.last_settings, self.started_s = settings, t_click
            ctx = RunContext(self, gen, settings, cancel, t_click)
            self._thread = threading.Thread(target=self._work, args=(ctx,), daemon=True,
                                            name=f"resnetlearn-live-{gen}")
            self._thread.start()
        return gen

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running run to end; returns whether it has."""
        t = self._thread
        if t is not None:
            t.join(timeout)
        return not self.running

    def _work(self, ctx: RunContext) -> None:
        try:
            result = self.run_fn(ctx.settings, ctx)
        except Exception as exc:  # shown, not lost in the thread
            if ctx.current:
                self.last_error = exc
            ctx.status(f"error: {type(exc).__name__}: {exc}")
            return
        if ctx.current:
            self.flush(ctx=ctx)  # the last frame is on screen before the status says "done"
        with self._lock:
            if not ctx.current:
                return
            self.last_result = result
            self.finished_s = ctx.elapsed
        text = self.done_fn(result, ctx.settings, ctx) if self.done_fn else f"done in {ctx.elapsed:.1f} s"
        ctx.status(text)


class _Panel:
    """Controls shared by the live widgets: sliders that stage settings, Train / Stop, a "retrain on
    slider change" toggle and the status line of a :class:`LiveRun` (``self.job``)."""

    job: LiveRun
    controls: list

    def _build_buttons(self, auto: bool) -> None:
        self.train_btn = W.Button(description="Train", button_style="success", icon="play",
                                  tooltip="start training with the settings above (restarts a running run)",
                                  layout=W.Layout(width="auto"))
        self.stop_btn = W.Button(description="Stop", button_style="danger", icon="stop",
                                 layout=W.Layout(width="auto"))
        self.retrain = W.Checkbox(value=bool(auto), description="retrain on slider change", indent=False,
                                  layout=W.Layout(width="auto"))
        self.train_btn.on_click(lambda _: self.start())
        self.stop_btn.on_click(lambda _: self.stop())
        for w in self.controls:
            w.observe(self._on_change, names="value")

    def _on_change(self, _change) -> None:
        s = self.current_config()
        if self.retrain.value:
            self.start(note="restarted: settings changed")
        elif self.job.running:
            self.job.set_status(f"settings changed to {self.describe(s)}: press Train to restart with them "
                                f"(the run on screen keeps {self.describe(self.job.last_settings)})")
        else:
            self.job.set_status(f"settings staged: {self.describe(s)}; press Train to run them")

    @property
    def status(self) -> W.HTML:
        return self.job.status

    @property
    def running(self) -> bool:
        return self.job.running

    @property
    def frames(self) -> list[Frame]:
        return self.job.frames

    @property
    def last_result(self):
        return self.job.last_result

    @property
    def first_frame_s(self) -> float | None:
        return self.job.first_frame_s

    def stop(self, timeout: float = 2.0) -> bool:
        """Stop the running run (within one SGD step); nothing draws after it."""
        ok = self.job.stop(timeout, status=f"stopped: {self.describe(self.job.last_settings)}"
                           if self.job.last_settings is not None else "stopped")
        return ok

    def start(self, note: str = "") -> int:
        """Train with the current slider values (stopping any running run first); ``note`` prefixes the
        status line of the new run (e.g. "restarted: settings changed")."""
        self._note = note
        return self.job.start(self.current_config())

    def _running_status(self, text: str) -> str:
        note = getattr(self, "_note", "")
        return f"{note} — {text}" if note else text

    def wait(self, timeout: float | None = None) -> bool:
        return self.job.wait(timeout)

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


# ================================================================= one learner, live (notebook 03)
@dataclass(frozen=True)
class LiveConfig:
    """What one live run of :class:`LiveTrainer` trains: 3resnet(all) of width ``m`` on the §8.1
    instance with (α, β), learning rate ``lr`` and weight decay ``wd``. Every field is checked: α in
    [0, 1), β ≥ 0, m ≥ 1, lr > 0, wd ≥ 0, n_train ≥ 50 (one mini-batch), epochs ≥ 1."""

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

    def __post_init__(self):
        check = object.__setattr__
        check(self, "alpha", V.real("alpha", self.alpha, lo=0, hi=1, hi_open=True))
        check(self, "beta", V.real("beta", self.beta, lo=0, hi=1e3))
        check(self, "m", V.integer("m", self.m, lo=1, hi=100_000))
        check(self, "lr", V.real("lr", self.lr, lo=0, lo_open=True, hi=10))
        check(self, "wd", V.real("wd", self.wd, lo=0, hi=1))
        check(self, "layerwise", V.boolean("layerwise", self.layerwise))
        check(self, "n_train", V.integer("n_train", self.n_train, lo=50, hi=1_000_000))
        check(self, "n_test", V.integer("n_test", self.n_test, lo=1, hi=1_000_000))
        check(self, "epochs", V.integer("epochs", self.epochs, lo=1, hi=100_000))
        check(self, "seed", V.integer("seed", self.seed, lo=0, hi=V.MAX_SEED))
        _check_memory([("3resnet", "all")], self.m, max(self.n_train, self.n_test), None, "this live run")


def _check_memory(learners, m: int, n_eval: int, n_gram: int | None, what: str) -> None:
    """Refuse, before anything is allocated, a width whose learners (all held at once) and kernel
    Gram matrix would not fit in memory (:mod:`resnetlearn.memory`), naming a width that fits."""
    dev = select_device(None)
    d, k = 30, 15  # the §8.1 instance both panels train on (parity_instance defaults)
    gram = 0 if n_gram is None else memory.gram_bytes(n_gram, n_gram)

    def need(w):
        return gram + sum(memory.training_bytes(arch, d, k, w, n_eval=n_eval, mode=mode) for arch, mode in learners)

    memory.check_memory(need(m), what=what, width_name="m", width=m, need_at=need, device=dev)


def run(cfg: LiveConfig, *, device=None, callback=None, cancel=None, callback_every: int = 10):
    """Train one 3resnet(all) on the §8.1 instance with (α, β), m, lr, wd from ``cfg``; returns
    (instance, :class:`~resnetlearn.training.TrainResult`)."""
    inst = parity_instance(alpha=cfg.alpha, beta=cfg.beta)
    dev = select_device(device)
    split = data_split(inst, cfg.n_train, n_test=cfg.n_test, seed=cfg.seed, device=dev)
    tr, te = split.train, split.test
    protocol = Protocol(epochs=cfg.epochs, lr_drop_epoch=cfg.epochs // 2, eval_every=callback_every,
                        layerwise=cfg.layerwise)
    res = train_models(tr, te, "3resnet", "all", cfg.m, [cfg.lr], [cfg.wd], [cfg.seed], protocol=protocol,
                       device=dev, progress=False, callback=callback, callback_every=callback_every,
                       cancel=cancel)
    return inst, res


def _slider_widths(m: int) -> list[int]:
    return sorted(set(WIDTHS) | {m})


class LiveTrainer(_Panel):
    """α, β, m sliders, lr / wd presets, layer-wise switch, Train / Stop, and a live plot of the test
    error with the kα² line and the block decomposition.

    ``cfg`` sets the initial slider values (a width, lr or wd outside the presets is added to them);
    ``auto`` is the initial state of the "retrain on slider change" toggle (off: sliders only stage
    settings and Train runs them); ``view``: ``"png"`` (matplotlib, default), ``"plotly"`` or ``"auto"``.
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
            large=large))
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
        """The :class:`~resnetlearn.training.TrainResult` of the latest finished run (None before)."""
        return None if self.job.last_result is None else self.job.last_result[1]

    def current_config(self) -> LiveConfig:
        lr, wd = self.presets[self.preset.value]
        return replace(self.cfg, alpha=self.alpha.value, beta=self.beta.value, m=self.m.value, lr=lr, wd=wd,
                       layerwise=self.layerwise.value)

    @staticmethod
    def describe(cfg: LiveConfig | None) -> str:
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
                     callback_every=max(5, cfg.epochs // 30))
        return thr, res

    def _frame(self, data: dict, cfg: LiveConfig):
        title = f"3resnet(all), epoch {data['epoch']}/{data['total_epochs']}"
        if self.view.kind == "plotly":
            from .figures_plotly import training_curves

            return training_curves(data["epochs"], data, data["threshold"], ["3resnet(all)"], title=title,
                                   total_epochs=data["total_epochs"])
        return training_figure(data["epochs"], data, data["threshold"], ["3resnet(all)"], title=title,
                               large=self.large)

    def _done(self, result, cfg: LiveConfig, ctx: RunContext) -> str:
        thr, res = result
        err = float(res.test_error[0])
        word = "stopped" if res.interrupted else "done"
        if err != err:  # NaN: the run diverged (reported, never hidden)
            return f"{word}: the run diverged at lr={cfg.lr:g} (m={cfg.m}); pick a smaller lr preset"
        verdict = (f"{'below' if err < thr else 'above'} kα² = {thr:.2f}" if has_threshold(thr)
                   else "α = 0: no composite signal, so no kα² to compare with")
        return (f"{word} in {ctx.elapsed:.1f} s on {describe_device(self.device)} ({self.describe(cfg)}): "
                f"test error {_f(err)} ({verdict}); first plot after {self.job.first_frame_s or 0:.1f} s")


# ================================================================= the race (notebooks 00 and 03)
@dataclass(frozen=True)
class Learner:
    """One runner of the race: an architecture trained in a mode with its own lr and weight decay."""

    arch: str
    mode: str = "all"
    _: KW_ONLY
    lr: float = 0.1
    wd: float = 0.005

    def __post_init__(self):
        from .networks import ARCHS

        V.choice("arch", self.arch, ARCHS)
        V.choice("mode", self.mode, MODES)
        object.__setattr__(self, "lr", V.real("lr", self.lr, lo=0, lo_open=True, hi=10))
        object.__setattr__(self, "wd", V.real("wd", self.wd, lo=0, hi=1))

    @property
    def label(self) -> str:
        return f"{self.arch}({self.mode})"


RACE_LEARNERS = (
    Learner("3resnet", "all", lr=0.1, wd=0.01),
    Learner("3layer", "all", lr=0.1, wd=0.005),
    Learner("2layer", "all", lr=0.05, wd=0.01),
)
"""The default runners, each with the lr / wd that gave it its lowest test error in a 3 × 3 grid
(lr 0.05-0.2, wd 0.001-0.01) at the race's default settings (benchmarks/live_race.py)."""
RACE_KERNEL = "ntk_inf:3resnet_eq21"
"""The kernel reference: ridge regression with the infinite-width NTK of the ResNet (its ridge
selected by test error, as the paper), on the same samples, computed once per run."""
KERNEL_NAMES = {"ntk_inf:3resnet_eq21": "NTK ridge (∞-width ResNet)", "ntk_inf:2layer": "NTK ridge (∞-width 2layer)",
                "ntk:3resnet": "NTK ridge (ResNet at init)", "conjugate:3resnet": "conjugate-kernel ridge (ResNet)"}


@dataclass(frozen=True)
class RaceConfig:
    """The race: every learner of ``learners`` trained on the same ``n_train`` samples (seed ``seed``;
    test samples seed + 1) of the §8.1 instance with (α, β), width ``m``, ``epochs`` epochs (lr ÷ 10 at
    half-time), taking turns of ``chunk`` epochs; ``kernel``: a kernel spec of
    :func:`resnetlearn.kernels.kernel_errors` drawn as a horizontal line (None: no kernel)."""

    alpha: float = 0.3
    beta: float = 1.0
    m: int = 200
    n_train: int = 500
    _: KW_ONLY
    n_test: int = 1000
    epochs: int = 200
    seed: int = 0
    chunk: int = 10
    learners: tuple = RACE_LEARNERS
    kernel: str | None = RACE_KERNEL

    def __post_init__(self):
        check = object.__setattr__
        check(self, "alpha", V.real("alpha", self.alpha, lo=0, hi=1, hi_open=True))
        check(self, "beta", V.real("beta", self.beta, lo=0, hi=1e3))
        check(self, "m", V.integer("m", self.m, lo=1, hi=100_000))
        check(self, "n_train", V.integer("n_train", self.n_train, lo=50, hi=1_000_000))
        check(self, "n_test", V.integer("n_test", self.n_test, lo=1, hi=1_000_000))
        check(self, "epochs", V.integer("epochs", self.epochs, lo=1, hi=100_000))
        check(self, "seed", V.integer("seed", self.seed, lo=0, hi=V.MAX_SEED))
        check(self, "chunk", V.integer("chunk", self.chunk, lo=1, hi=100_000))
        learners = tuple(self.learners)
        if not learners or not all(isinstance(x, Learner) for x in learners):
            raise TypeError(f"learners must be a non-empty sequence of Learner, got {self.learners!r}")
        if len({x.label for x in learners}) != len(learners):
            raise ValueError(f"learners must differ in arch/mode, got {[x.label for x in learners]}")
        check(self, "learners", learners)
        if self.kernel is not None:
            from .kernel_registry import DEFAULT_KERNELS

            V.choice("kernel", self.kernel, DEFAULT_KERNELS)
        _check_memory([(x.arch, x.mode) for x in learners], self.m, max(self.n_train, self.n_test),
                      None if self.kernel is None else self.n_train,
                      f"this race ({', '.join(x.label for x in learners)})")


@dataclass
class RaceResult:
    """What a race produced: final :class:`~resnetlearn.training.TrainResult` per learner label, the
    kernel reference, kα², the samples every learner trained on, and timings."""

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
        """The race's last frame (for :func:`race_figure` / :func:`race_figure_mpl`), e.g. a static copy:
        ``figures_plotly.show_figure(race_figure(res.state()), static=race_figure_mpl(res.state()))``."""
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
    """An empty frame of the race: one (empty) curve per learner, no kernel yet."""
    return {"threshold": threshold, "epochs_total": cfg.epochs, "alpha": cfg.alpha, "beta": cfg.beta, "m": cfg.m,
            "n_train": cfg.n_train, "learners": [(x.label, x.arch, x.mode, x.lr, x.wd) for x in cfg.learners],
            "curves": {x.label: {"epochs": [], "test": [], "train": []} for x in cfg.learners},
            "kernel": None, "kernel_name": cfg.kernel}


def run_race(cfg: RaceConfig, *, device=None, on_frame: Callable | None = None, cancel=None) -> RaceResult:
    """Train every learner of ``cfg`` on the same samples, ``cfg.chunk`` epochs at a time in turn, and
    compute the kernel reference once (in parallel with the first chunk).

    ``on_frame(state, force)`` receives a snapshot (a dict of lists, see :func:`race_state`) after each
    chunk and once at the start and end (``force`` True); ``cancel``: a ``threading.Event`` or a callable
    returning True stops the race within one SGD step.
    """
    import copy

    from .kernel_experiments import kernel_errors

    dev = select_device(device)
    t0 = time.perf_counter()
    inst = parity_instance(alpha=cfg.alpha, beta=cfg.beta)
    thr = inst.reference_errors().f_only  # kα², exact; once per race
    split = data_split(inst, cfg.n_train, n_test=cfg.n_test, seed=cfg.seed, device=dev)
    tr, te = split.train, split.test
    halt = threading.Event()

    def cancelled() -> bool:
        if halt.is_set():
            return True
        if cancel is None:
            return False
        return bool(cancel()) if callable(cancel) else bool(cancel.is_set())

    state, lock = race_state(cfg, thr), threading.Lock()
    first_data: list[float] = []

    def emit(force: bool = False) -> None:
        if on_frame is not None:
            with lock:
                snap = copy.deepcopy(state)
            on_frame(snap, force)

    emit(force=True)
    results: dict = {}
    errors: list[BaseException] = []
    turns = _Turns(len(cfg.learners))
    protocol = Protocol.quick(cfg.epochs, eval_every=cfg.chunk)

    def record(label: str, epochs, curves) -> None:
        with lock:
            c = state["curves"][label]
            c["epochs"] = [int(e) for e in epochs]
            c["test"] = [float(v) for v in curves["test"][:, 0]]
            c["train"] = [float(v) for v in curves["train"][:, 0]]
            if not first_data:
                first_data.append(time.perf_counter() - t0)

    def learner(i: int, spec: Learner) -> None:
        try:
            turns.wait(i, cancelled)
            if cancelled():
                return

            def chunk_done(info):
                record(spec.label, info["epochs"], info)
                emit()
                turns.pass_on(i)
                turns.wait(i, cancelled)

            res = train_models(tr, te, spec.arch, spec.mode, cfg.m, [spec.lr], [spec.wd], [cfg.seed], protocol=protocol,
                               device=dev, progress=False, callback=chunk_done, callback_every=cfg.chunk,
                               cancel=cancelled)
            record(spec.label, res.epochs, res.curves)
            with lock:
                results[spec.label] = res
        except Exception as exc:  # reported by the caller
            errors.append(exc)
            halt.set()
        finally:
            turns.finish(i)

    def kernel_ref() -> None:
        try:
            t = time.perf_counter()
            row = kernel_errors(inst, cfg.n_train, kernels=[cfg.kernel], n_test=cfg.n_test, data_seed=cfg.seed,
                                m=cfg.m, kernel_seed=cfg.seed, progress=False)[0]
            if cancelled():
                return
            with lock:
                state["kernel"] = {"name": cfg.kernel, "label": KERNEL_NAMES.get(cfg.kernel, f"{cfg.kernel} ridge"),
                                   "test_error": float(row["test_error"]), "ridge_rel": row["ridge_rel"],
                                   "seconds": round(time.perf_counter() - t, 2)}
            emit()
        except Exception as exc:  # a kernel that fails is reported, the race goes on
            with lock:
                state["kernel"] = {"name": cfg.kernel, "label": f"{cfg.kernel} (failed: {exc})",
                                   "test_error": math.nan}

    threads = [threading.Thread(target=learner, args=(i, x), daemon=True, name=f"race-{x.label}")
               for i, x in enumerate(cfg.learners)]
    kthread = threading.Thread(target=kernel_ref, daemon=True, name="race-kernel") if cfg.kernel else None
    for t in threads:
        t.start()
    if kthread is not None:
        kthread.start()
    for t in threads:
        while t.is_alive() and not cancelled():
            t.join(0.05)
    deadline = time.perf_counter() + 1.0  # cancelled learners stop within one SGD step
    for t in threads:
        t.join(max(0.0, deadline - time.perf_counter()))
    if errors:
        raise errors[0]
    interrupted = cancelled() or any(r.interrupted for r in results.values())
    if kthread is not None and not interrupted:
        kthread.join()
    emit(force=True)
    with lock:
        kern = copy.deepcopy(state["kernel"])
    return RaceResult(cfg, thr, results, kern, tr, te, time.perf_counter() - t0,
                      first_data[0] if first_data else None, interrupted)


def race_figure(state: dict, *, title: str | None = None, large: bool = False):
    """The race as a plotly figure: test error (log) against epochs for every learner, the kernel
    reference and kα² as horizontal lines. Always the same traces (empty until data arrive), so a
    ``FigureWidget`` can be updated in place. Built from plain dicts without plotly's validation
    (~2 ms instead of ~100 ms a frame on a small CPU)."""
    import plotly.graph_objects as go

    from .figures_plotly import ERROR_TITLE, LEGEND_OUTSIDE, TEMPLATE, hline, log_axis

    E = state["epochs_total"]
    traces, ys = [], []
    for label, arch, mode, lr, wd in state["learners"]:
        st = learner_style(arch, mode)
        c = state["curves"][label]
        ys += c["test"]
        traces.append(dict(type="scatter", x=c["epochs"], y=[v if v == v else None for v in c["test"]], mode="lines",
                           name=f"{label}  lr {lr:g}, wd {wd:g}", legendgroup=label,
                           line=dict(color=st["color"], width=3 if arch.startswith("3resnet") else 2.2),
                           hovertemplate=f"{label}<br>epoch %{{x}}<br>test error %{{y:.3g}}<extra></extra>"))
    k, kname_ = state.get("kernel"), state.get("kernel_name")
    kerr = k["test_error"] if k else math.nan
    kline = hline(kerr if k else None, 0, E, colour=learner_style("ntk_inf:3resnet")["color"], dash="dashdot",
                  name=f"{k['label']}: {_f(kerr)}" if k else
                  f"{KERNEL_NAMES.get(kname_, 'kernel')}: computing …" if kname_ else "no kernel reference")
    if not k:  # keep the legend entry while the kernel computes
        kline.update(showlegend=bool(kname_), visible="legendonly" if kname_ else False)
    traces.append(kline)
    thr = state["threshold"]
    traces.append(hline(thr, 0, E, name=f"{threshold_label(thr)}: learned F, nothing of G(F)"
                        if has_threshold(thr) else threshold_label(thr)))
    ys += [v for v in (kerr, thr) if v == v and v > 0]
    lo = min([0.05] + [v for v in ys if v == v and v > 0])
    hi = max([25.0] + [v for v in ys if v == v])
    head = title or (f"Race on the same {state['n_train']} samples: α = {state['alpha']:.2f}, "
                     f"β = {state['beta']:.2f}, m = {state['m']}")
    if not has_threshold(thr):
        head += " (α = 0: no kα² line)"
    size = 16 if large else 13
    layout = dict(template=TEMPLATE, title=dict(text=head, x=0, xanchor="left", font=dict(size=size + 2)),
                  xaxis=dict(title=dict(text="epoch"), range=[0, E]), yaxis=log_axis(lo=lo, hi=hi, title=ERROR_TITLE),
                  legend=LEGEND_OUTSIDE, font=dict(size=size), height=440, autosize=True, uirevision="race",
                  margin=dict(l=70, r=20, t=50, b=50), hovermode="closest")
    return go.Figure(data=traces, layout=layout, _validate=False)


def race_figure_mpl(state: dict, *, large: bool = False):
    """The race drawn directly by matplotlib (the PNG view): the same curves, lines and labels as
    :func:`race_figure`, legend outside the axes."""
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from .plots import THRESHOLD_STYLE, readable_log_axis, style

    E, thr, k = state["epochs_total"], state["threshold"], state.get("kernel")
    with plt.rc_context(style(large)):
        fig = Figure(figsize=(13, 5.2) if large else (10.5, 4.2))
        ax = fig.subplots()
        ys = []
        for label, arch, mode, lr, wd in state["learners"]:
            c = state["curves"][label]
            ys += c["test"]
            ax.plot(c["epochs"], c["test"], color=learner_style(arch, mode)["color"],
                    linewidth=3 if arch.startswith("3resnet") else 2, label=f"{label}  lr {lr:g}, wd {wd:g}")
        if k and has_threshold(k["test_error"]):
            ax.axhline(k["test_error"], color=learner_style("ntk_inf:3resnet")["color"], linestyle="-.",
                       label=f"{k['label']}: {_f(k['test_error'])}")
            ys.append(k["test_error"])
        if has_threshold(thr):
            ax.axhline(thr, **THRESHOLD_STYLE, label=f"{threshold_label(thr)}: learned F, nothing of G(F)")
            ys.append(thr)
        ax.set_yscale("log")
        lo = min([0.05] + [v for v in ys if v == v and v > 0])
        hi = max([25.0] + [v for v in ys if v == v])
        ax.set_ylim(lo / 1.1, hi * 1.1)
        readable_log_axis(ax, "y", lo=lo, hi=hi)
        ax.set_xlim(0, E)
        ax.set_xlabel("epoch")
        ax.set_ylabel("test error  E‖out − y‖²")
        ax.grid(True, color="#e6e6e6")
        head = (f"Race on the same {state['n_train']} samples: α = {state['alpha']:.2f}, β = {state['beta']:.2f}, "
                f"m = {state['m']}" + ("" if has_threshold(thr) else " (α = 0: no kα² line)"))
        ax.set_title(head, loc="left")
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
    return fig


class LiveRace(_Panel):
    """The contrast of the paper, live: 3resnet(all) against 3layer(all) and 2layer(all), trained on the
    same samples in turns of a few epochs so every curve advances together, beside an NTK ridge
    regression (computed once per run) and the kα² line.

    α, β, width m and N sliders stage settings; Train runs them (restarting a running race); Stop ends
    the race within a second; "retrain on slider change" (``auto``) makes every slider move restart it.
    ``view``: ``"auto"`` (a plotly FigureWidget where anywidget works, else a PNG), ``"plotly"`` or
    ``"png"``. ``cfg`` sets the initial values and everything the sliders do not (epochs, learners, lr/wd,
    kernel); ``min_interval`` throttles drawing (seconds between frames; default 0.25 for plotly, 0.5
    for png). Drawing runs in its own thread, so training never waits for it.
    """

    def __init__(self, cfg: RaceConfig | None = None, *, device=None, view: str = "auto", auto: bool = False,
                 large: bool = False, min_interval: float | None = None):
        cfg = cfg if cfg is not None else RaceConfig()
        if not isinstance(cfg, RaceConfig):
            raise TypeError(f"cfg must be a RaceConfig, got {type(cfg).__name__}")
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
            "press Train to start the race", empty["threshold"], large=large, size=(11, 3.4)),
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
        if self.view.kind == "plotly":
            return race_figure(state, large=self.large)
        return race_figure_mpl(state, large=self.large)

    def _done(self, res: RaceResult, cfg: RaceConfig, ctx: RunContext) -> str:
        thr = res.threshold
        parts = []
        for label, err in res.final_errors().items():
            if err != err:
                parts.append(f"{label} diverged")
            elif has_threshold(thr):
                parts.append(f"{label} {_f(err)} ({'below' if err < thr else 'above'})")
            else:
                parts.append(f"{label} {_f(err)}")
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


# ================================================================= rerun a figure (notebook 05)
class FigureRerun:
    """A button that reruns one of the paper's figures (``reproduce.run_figure``) in a background thread
    and shows its plot and one-line verdict.

    Finished points are kept in the results store under ``out``, so a second press only re-plots; the
    button is disabled while a run is going, so two sweeps never write one plot."""

    def __init__(self, figure: str = "fig2a", scale: str = "quick", *, out="results/live/store", device=None):
        from .reproduce import FIGURES, SCALES

        if figure not in FIGURES:
            raise ValueError(f"figure must be one of {FIGURES}, got {figure!r}")
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
        self.figure, self.scale, self.out, self.device = figure, scale, out, select_device(device)
        self.button = W.Button(description=f"Rerun {figure} ({scale} scale)", button_style="primary",
                               icon="refresh", layout=W.Layout(width="auto"))
        self.view = PngView(placeholder=None)  # nothing (not a broken image) until a result exists
        self.image = self.view.widget
        self.job = LiveRun(self._run, self._frame, done=self._done, view=self.view)
        self.job.set_status(f"ready on {describe_device(self.device)}: press the button to rerun {figure}")
        self.button.on_click(lambda _: self.start())
        self.widget = W.VBox([self.button, self.job.status, self.image])

    @property
    def status(self) -> W.HTML:
        return self.job.status

    @property
    def result(self):
        return self.job.last_result

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    def start(self) -> None:
        if self.job.running:
            return
        self.button.disabled = True
        self.job.start((self.figure, self.scale))

    def wait(self, timeout: float | None = None) -> bool:
        return self.job.wait(timeout)

    def _run(self, settings, ctx: RunContext):
        from .reproduce import run_figure

        try:
            ctx.status(f"running {self.figure} at {self.scale} scale on {describe_device(self.device)} …")
            res = run_figure(self.figure, self.scale, str(self.device), out=self.out, progress=False)
            ctx.frame({"result": res}, force=True)
            return res
        finally:
            self.button.disabled = False

    def _frame(self, data: dict, settings):
        try:  # the shared style (colour by family, plain log ticks, legend outside), drawn by matplotlib
            from .figures_plotly import result_figure, to_matplotlib

            return to_matplotlib(result_figure(data["result"]))
        except ImportError:  # no plotly: the CLI's plot
            from .reproduce import figure_plot

            return figure_plot(data["result"])

    def _done(self, res, settings, ctx: RunContext) -> str:
        return (f"{res.summary} ({res.wall_time:.0f} s, {res.skipped} of {len(res.rows)} points reused "
                f"from the store)")
