"""Live training widgets for the notebooks (ipywidgets 8, JupyterLab 4).

Training runs in a background thread so the notebook stays responsive:
Stop works within one SGD step, and moving a slider cancels the running
run (and waits for it) before the next one starts. Each run carries a
generation number and only the current generation may draw, so two runs
never draw into one plot. The plot is an ``ipywidgets.Image`` refreshed
with PNG bytes every few epochs, which works from a thread in every front end.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import ipywidgets as W

from .concept import parity_instance
from .device import describe_device, select_device
from .plots import to_png, training_figure
from .training import Protocol, train_models

# (lr, wd) presets from the §8.1 grid; the first is the best for 3resnet(all) at m = 200, N = 500
PRESETS = {
    "lr 0.1, wd 0.005 (best 3resnet(all), m=200)": (0.1, 0.005),
    "lr 0.1, wd 0.001": (0.1, 0.001),
    "lr 0.05, wd 0.005": (0.05, 0.005),
    "lr 0.02, wd 0": (0.02, 0.0),
}


@dataclass
class LiveConfig:
    """What one live run trains. ``paper_scale`` uses the full 800-epoch
    protocol (meant for a GPU); otherwise the classroom default."""

    alpha: float = 0.3
    beta: float = 1.0
    m: int = 200
    lr: float = 0.1
    wd: float = 0.005
    layerwise: bool = False
    n_train: int = 500
    n_test: int = 1000
    epochs: int = 400
    seed: int = 0


def run(cfg: LiveConfig, device=None, callback=None, cancel=None, callback_every: int = 10):
    """Train one 3resnet(all) on the §8.1 instance with (α, β) from ``cfg``."""
    inst = parity_instance(alpha=cfg.alpha, beta=cfg.beta)
    dev = select_device(device)
    tr = inst.sample(cfg.n_train, seed=cfg.seed, device=dev)
    te = inst.sample(cfg.n_test, seed=cfg.seed + 1, device=dev)
    protocol = Protocol(epochs=cfg.epochs, lr_drop_epoch=cfg.epochs // 2, eval_every=callback_every,
                        layerwise=cfg.layerwise)
    res = train_models(tr, te, "3resnet", "all", cfg.m, [cfg.lr], [cfg.wd], [cfg.seed], protocol,
                       device=dev, progress=False, callback=callback, callback_every=callback_every,
                       cancel=cancel)
    return inst, res


class LiveTrainer:
    """α, β, m sliders, lr/wd presets, layer-wise switch, Train / Stop, and a
    live plot of the test error with the kα² line and the block decomposition."""

    def __init__(self, cfg: LiveConfig | None = None, device=None, large: bool = False,
                 auto: bool = True, paper_scale: bool = False):
        self.cfg = cfg or LiveConfig()
        if paper_scale:
            self.cfg.epochs = 800
        self.device = select_device(device)
        self.large = large
        self._gen = 0
        self._lock = threading.Lock()
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        self.last_result = None
        self.frames: list[tuple[int, float, float, int]] = []  # (generation, α, β, epoch) of each drawn plot
        self.first_plot_s: float | None = None  # seconds from Train to the first plot of the latest run
        s = dict(continuous_update=False, style={"description_width": "70px"})
        self.alpha = W.FloatSlider(value=self.cfg.alpha, min=0.0, max=0.95, step=0.05, description="α", **s)
        self.beta = W.FloatSlider(value=self.cfg.beta, min=0.0, max=1.5, step=0.05, description="β", **s)
        self.m = W.SelectionSlider(options=[20, 50, 100, 200, 500, 1000], value=self.cfg.m, description="width m",
                                   **s)
        self.preset = W.Dropdown(options=list(PRESETS), description="lr / wd", style=s["style"])
        self.layerwise = W.Checkbox(value=self.cfg.layerwise, description="layer-wise (block 1, then block 2)")
        self.train_btn = W.Button(description="Train", button_style="success", icon="play")
        self.stop_btn = W.Button(description="Stop", button_style="danger", icon="stop")
        self.status = W.HTML()
        self.image = W.Image(format="png")
        self.train_btn.on_click(lambda _: self.start())
        self.stop_btn.on_click(lambda _: self.stop())
        if auto:
            for w in (self.alpha, self.beta, self.m, self.preset, self.layerwise):
                w.observe(lambda _: self.start(), names="value")
        self._set_status(f"ready on {describe_device(self.device)}")
        self.widget = W.VBox([W.HBox([self.alpha, self.beta, self.m]),
                              W.HBox([self.preset, self.layerwise]),
                              W.HBox([self.train_btn, self.stop_btn, self.status]), self.image])

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    def _set_status(self, text: str):
        self.status.value = f"<b>{text}</b>"

    def current_config(self) -> LiveConfig:
        lr, wd = PRESETS[self.preset.value]
        c = self.cfg
        return LiveConfig(self.alpha.value, self.beta.value, self.m.value, lr, wd, self.layerwise.value,
                          c.n_train, c.n_test, c.epochs, c.seed)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 5.0) -> None:
        """Cancel the running run and wait for its thread to finish."""
        with self._lock:
            self._gen += 1  # nothing from the old run may draw any more
            self._cancel.set()
            t = self._thread
        if t is not None:
            t.join(timeout)
        if not self.running:
            self._set_status(f"stopped — {describe_device(self.device)}")

    def start(self) -> None:
        """Stop any running run, then train with the current slider values."""
        t_click = time.perf_counter()
        self.stop()
        with self._lock:
            self._gen += 1
            gen, cancel = self._gen, threading.Event()
            self._cancel = cancel
            cfg = self.current_config()
            self.first_plot_s = None
            self._thread = threading.Thread(target=self._work, args=(gen, cfg, cancel, t_click), daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _work(self, gen: int, cfg: LiveConfig, cancel: threading.Event, t0: float) -> None:
        dev = describe_device(self.device)
        self._set_status(f"training on {dev} (α={cfg.alpha:.2f}, β={cfg.beta:.2f}, m={cfg.m}) …")

        def draw(info):
            if gen != self._gen:
                return
            fig = training_figure(info["epochs"], info, self._threshold(cfg), ["3resnet(all)"],
                                  title=f"epoch {info['epoch']}/{info['total_epochs']}", large=self.large)
            png = to_png(fig)
            with self._lock:  # stop() bumps the generation under this lock: no stale frame after it
                if gen != self._gen:
                    return
                self.image.value = png
                self.frames.append((gen, cfg.alpha, cfg.beta, info["epoch"]))
                if self.first_plot_s is None:
                    self.first_plot_s = time.perf_counter() - t0

        try:
            inst, res = run(cfg, self.device, draw, cancel, callback_every=max(5, cfg.epochs // 30))
        except Exception as exc:  # show errors instead of losing them in the thread
            if gen == self._gen:
                self._set_status(f"error: {exc}")
            raise
        if gen != self._gen:
            return
        self.last_result = res
        err = float(res.test_error[0])
        thr = inst.reference_errors().f_only
        word = "stopped" if res.interrupted else "done"
        if err != err:  # NaN: the run diverged (reported, never hidden)
            self._set_status(f"{word}: the run diverged at lr={cfg.lr} (m={cfg.m}); pick a smaller lr preset")
            return
        self._set_status(f"{word} in {time.perf_counter() - t0:.1f} s on {dev} (α={cfg.alpha:.2f}, "
                         f"β={cfg.beta:.2f}, m={cfg.m}): test error {err:.3f} "
                         f"({'below' if err < thr else 'above'} kα² = {thr:.2f}); first plot after "
                         f"{self.first_plot_s or 0:.1f} s")

    @staticmethod
    def _threshold(cfg: LiveConfig) -> float:
        return parity_instance(alpha=cfg.alpha, beta=cfg.beta).reference_errors().f_only  # kα², exact


class FigureRerun:
    """A button that reruns one of the paper's figures (``reproduce.run_figure``)
    in a background thread and shows its plot and one-line verdict.

    Finished points are kept in the results store under ``out``, so a second
    press only re-plots; the button is disabled while a run is going, so two
    sweeps never write one plot."""

    def __init__(self, figure: str = "fig2a", scale: str = "quick", out="results/live/store", device=None):
        from .reproduce import FIGURES, SCALES

        if figure not in FIGURES:
            raise ValueError(f"figure must be one of {FIGURES}, got {figure!r}")
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
        self.figure, self.scale, self.out, self.device = figure, scale, out, select_device(device)
        self.result = None
        self._thread: threading.Thread | None = None
        self.button = W.Button(description=f"Rerun {figure} ({scale})", button_style="primary", icon="refresh")
        self.status = W.HTML(f"<b>ready on {describe_device(self.device)}</b>")
        self.image = W.Image(format="png")
        self.button.on_click(lambda _: self.start())
        self.widget = W.VBox([W.HBox([self.button, self.status]), self.image])

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)

    def start(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            return
        self.button.disabled = True
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def wait(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def _work(self) -> None:
        from .reproduce import figure_plot, run_figure

        self.status.value = f"<b>running {self.figure} at {self.scale} scale on {describe_device(self.device)} …</b>"
        try:
            res = run_figure(self.figure, self.scale, str(self.device), out=self.out, progress=False)
            self.image.value = to_png(figure_plot(res))
            self.result = res
            self.status.value = (f"<b>{res.summary}</b> ({res.wall_time:.0f} s, "
                                 f"{res.skipped} of {len(res.rows)} points reused from the store)")
        except Exception as exc:  # shown, not lost in the thread
            self.status.value = f"<b>error: {exc}</b>"
            raise
        finally:
            self.button.disabled = False
