"""The live-run component every widget of :mod:`resnetlearn.classroom.live` is built on.

:class:`LiveRun` is a background job: it runs a *run function* in a thread
(so the notebook stays responsive), passes it a :class:`RunContext` whose
``frame(data)`` turns data into a figure with the *frame function* and draws
it into a view (:class:`PlotlyView`, a plotly ``FigureWidget`` updated in
place, or :class:`PngView`, a PNG image), and writes a status line. Every run
carries a generation number and only the current generation may draw or
write the status, so two runs never draw into one plot; ``start`` cancels
the running run first, ``stop`` cancels it (training stops within one SGD
step) and nothing draws after it. Drawing runs in its own thread, so a run
never waits for matplotlib or plotly. Nothing here knows what is trained.
"""

from __future__ import annotations

import base64
import html
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import ipywidgets as W

from .. import validation as V
from .plots import to_png

STATUS_STYLE = "white-space: normal; word-break: normal; overflow-wrap: break-word; line-height: 1.4"


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


WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_REPRS = ("VBox(", "HBox(", "Box(", "interactive(", "FloatSlider(", "IntSlider(", "SelectionSlider(",
                "Dropdown(", "Button(", "Output(", "Image(", "FigureWidget(", "Checkbox(", "HTML(", "Label(")
"""How ipywidgets' text representation of a widget begins (``VBox(children=(HBox(…``): raw text that a reader
without a kernel would otherwise see."""


def pictured_bundle(widget, png: bytes | None, text: str) -> dict:
    """The display bundle of ``widget`` with a static picture: the widget-view MIME type (JupyterLab with a
    running kernel shows the live widget), ``image/png`` (GitHub, nbviewer, the reading copy and an untrusted
    notebook show the picture instead) and ``text/plain`` = ``text``, a one-line outcome instead of the
    widget's ``VBox(children=…)`` repr. ``png`` None: no picture, the text alone."""
    data = dict(widget._repr_mimebundle_())
    if text.startswith(WIDGET_REPRS):
        raise ValueError(f"the text of a pictured widget must not read as a widget repr: {text[:40]!r}")
    data["text/plain"] = text
    if png:
        data["image/png"] = base64.b64encode(png).decode("ascii")
    return data


class RunContext:
    """What a run function sees: its ``settings``, ``cancelled()`` (pass it to ``train_models`` as
    ``cancel``), ``frame(data)`` to draw, ``status(text)``, and ``elapsed`` seconds since Train."""

    def __init__(self, job: LiveRun, generation: int, *, settings, cancel: threading.Event, t0: float):
        self.job, self.generation, self.settings, self.cancel, self.t0 = job, generation, settings, cancel, t0
        self.draw_error: str | None = None  # the latest frame of this run that failed to draw, kept for its end

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
    ``last_error``; so is a frame that fails to draw, and the run's final line still names that failure
    ("done … (drawing failed: …)"). ``frames`` logs every drawn frame (:class:`Frame`), ``first_frame_s`` the
    seconds from ``start`` to the first frame of the latest run.
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
                ctx.draw_error = f"{type(exc).__name__}: {exc}"
                ctx.status(f"drawing failed: {ctx.draw_error}")
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

    def flush(self, timeout: float = 30.0, *, ctx: RunContext | None = None) -> bool:
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

    def stop(self, timeout: float = 2.0, *, status: str | None = "stopped") -> bool:
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
            ctx = RunContext(self, gen, settings=settings, cancel=cancel, t0=t_click)
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
        if ctx.draw_error:  # the end does not hide that a frame failed to draw
            text += f" (drawing failed: {ctx.draw_error})"
        ctx.status(text)


# ================================================================= the controls around a live run
class Panel:
    """Controls shared by the live widgets (:class:`resnetlearn.classroom.live.LiveTrainer`,
    :class:`~resnetlearn.classroom.live.LiveRace`): sliders that stage settings, Train / Stop, a "retrain on
    slider change" toggle and the status line of a :class:`LiveRun` (``self.job``). A subclass gives
    ``controls``, ``view``, ``widget``, ``current_config``, ``describe``, ``static_picture``,
    ``_first_evaluation`` and ``_message_figure``."""

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
        """Stop the running run (within one SGD step); nothing draws after it. Stopped before its first
        evaluation, the plot says so (not empty axes, not the previous run's curves)."""
        gen, was_running, settings = self.job.generation, self.job.running, self.job.last_settings
        ok = self.job.stop(timeout, status=f"stopped: {self.describe(settings)}"
                           if settings is not None else "stopped")
        self.stopped_early = was_running and not any(
            f.generation == gen and self._has_data(f.data) for f in self.job.frames)
        if self.stopped_early:
            first = self._first_evaluation(settings)
            text = f"stopped before the first evaluation (epoch {first}): nothing to plot yet"
            with self.job._lock:  # after stop() no frame of the stopped run is drawn any more
                self.view.publish(self.view.render(self._message_figure(settings, text + "; press Train to run")))
            self.job.set_status(f"{text} ({self.describe(settings)}); press Train to run again")
        return ok

    stopped_early = False
    """Whether the latest Stop came before the run's first evaluation (the plot then says so)."""

    def _has_data(self, data: dict) -> bool:
        return bool(data.get("epochs"))

    def _repr_mimebundle_(self, include=None, exclude=None):
        png, text = self.static_picture()
        return pictured_bundle(self.widget, png, text)

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
