"""Notebook 05's rerun button: :class:`FigureRerun` reruns one of the paper's figures
(:func:`resnetlearn.reproduce.run_figure`) in a background job of :mod:`resnetlearn.classroom.live_run` and shows
the user's run beside the shipped one, each with its verdict and error table (arXiv v3 §8, Figures 2-4).
"""

from __future__ import annotations

import html
from pathlib import Path

import ipywidgets as W

from ..device import describe_device, select_device
from ..reproduce import DEFAULT_OUT, SCALES, every_scale, run_figure, shipped_results, write_outputs, write_provenance
from ..reproduce.figure_tables import VERDICT_WORDS, error_table
from ..reproduce.store import PACKAGE_ROOT
from ..reproduce.table_reading import load_figure, rerun_command
from .figures_plotly import result_figure, result_png
from .live_run import LiveRun, PngView, RunContext, pictured_bundle
from .plots import to_png
from .static_picture import to_matplotlib

MEASUREMENT = PACKAGE_ROOT / "benchmarks" / "results" / "rerun_button_cpu.json"
"""The measured time of the button's default run (``benchmarks/rerun_button_time.py``)."""


class FigureRerun:
    """A button that reruns one of the paper's figures (``reproduce.run_figure``) in a background thread
    and shows the user's run beside the shipped one: the plot of the run, and for each of "your run" and
    "shipped" its verdict and error table, labelled with the folder it was read from.

    "Your run" is the figure's tables in ``mine``, the user's results folder: by default ``my-results/SCALE``
    beside the shipped ``results/`` (where ``python -m resnetlearn reproduce FIG --scale SCALE`` writes when run
    from the clone's root), so a run of the command line shows here too. A press writes its tables there as
    the command line does (``write_outputs``, ``write_provenance``); ``mine`` may not lie in the shipped
    results. Finished points are kept in the results store under ``out``, so a second press only re-plots;
    the button is disabled while a run is going, so two sweeps never write one plot."""

    def __init__(self, figure: str = "fig2a", scale: str = "quick", *, out="results/live/store", device=None,
                 shipped=None, mine=None):
        if figure not in every_scale():
            raise ValueError(f"figure must be one of {every_scale()}, got {figure!r}")
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
        self.figure, self.scale, self.out, self.device = figure, scale, out, select_device(device)
        # the shipped results of this figure and scale: the static picture before a rerun (<results>/<scale>
        # beside <results>/live/store by default), and the user's beside them (<clone>/my-results/<scale>)
        self.shipped = Path(shipped) if shipped is not None else Path(out).parents[1] / scale
        self.mine = Path(mine) if mine is not None else self.shipped.parents[1] / DEFAULT_OUT / scale
        if shipped_results(self.mine) is not None:
            raise ValueError(f"mine={str(self.mine)!r} lies in the shipped results/ (tracked by git): a rerun is "
                             f"written to the user's folder, e.g. {DEFAULT_OUT}/{scale}")
        self.button = W.Button(description=f"Rerun {figure} ({scale} scale)", button_style="primary",
                               icon="refresh", layout=W.Layout(width="auto"))
        self.view = PngView(placeholder=None)  # nothing (not a broken image) until a result exists
        self.image = self.view.widget
        self.job = LiveRun(self._run, self._frame, done=self._done, view=self.view)
        self.compare = W.HTML(self._compare_html())  # your run beside the shipped one, as tables
        self.job.set_status(f"ready on {describe_device(self.device)}: press the button to rerun {figure} "
                            f"into {self.mine}")
        self.button.on_click(lambda _: self.start())
        self.widget = W.VBox([self.button, self.job.status, self.image, self.compare])

    @property
    def status(self) -> W.HTML:
        return self.job.status

    @property
    def result(self):
        return self.job.last_result

    def runs(self) -> dict[str, tuple]:
        """``{"your run": (result or None, where), "shipped": (…)}``: the figure at this scale as the user ran
        it (this button's latest run, else the tables in ``mine``) and as shipped, each with the folder it
        was read from (or why there is none)."""
        out = {}
        for who, folder in (("your run", self.mine), ("shipped", self.shipped)):
            try:
                res = load_figure(self.figure, folder)
                if res.provenance.get("scale") != self.scale:
                    raise ValueError(f"{folder} holds {self.figure} at {res.provenance.get('scale')} scale")
                out[who] = (res, f"read from {folder}")
            except (OSError, ValueError) as e:
                hint = (f"press the button, or run: {rerun_command(self.figure, self.mine, self.scale)}"
                        if who == "your run" else str(e))
                out[who] = (None, f"none in {folder} ({hint})")
        if self.job.last_result is not None:
            out["your run"] = (self.job.last_result, f"this button's run, written to {self.mine}")
        return out

    def _sides(self, runs: dict | None = None) -> list[tuple[str, str, str, str]]:
        """(heading with the verdict, where from, summary line, error table) of "your run" and "shipped"."""
        sides = []
        for who, (res, where) in (runs or self.runs()).items():
            head = f"{who}: {self.figure} at {self.scale} scale"
            sides.append((head, where, "", "") if res is None else
                         (f"{head}, {VERDICT_WORDS[res.reproduced]}", where, res.summary, error_table(res)))
        return sides

    def comparison(self, runs: dict | None = None) -> str:
        """The user's run beside the shipped one (``runs``: :meth:`runs`) as text: for each, its label and
        verdict, where it came from, its verdict line and error table
        (:func:`~resnetlearn.reproduce.figure_tables.error_table`)."""
        return "\n\n".join("\n".join(part for part in side if part) for side in self._sides(runs))

    def _compare_html(self) -> str:
        cells = [f"<div style='flex:1 1 28em;min-width:0'><b>{html.escape(head)}</b><br><i>{html.escape(where)}</i>"
                 + (f"<div style='font-size:12px;line-height:1.3;margin-top:0.4em'>{html.escape(summary)}</div>"
                    f"<pre style='font-size:12px;white-space:pre;overflow-x:auto'>{html.escape(table)}</pre>"
                    if table else "") + "</div>"
                 for head, where, summary, table in self._sides()]
        return f"<div style='display:flex;flex-wrap:wrap;gap:1em;line-height:1.4'>{''.join(cells)}</div>"

    def static_picture(self) -> tuple[bytes | None, str]:
        """PNG and text for readers without a kernel: the plot of the user's run (else of the shipped
        results), and the user's run beside the shipped one (:meth:`comparison`)."""
        runs = self.runs()
        label = f"Rerun button for {self.figure} at {self.scale} scale"
        res = runs["your run"][0] or runs["shipped"][0]
        if res is None:
            return None, f"{label}: run the notebook and press it to rerun the figure here."
        png = to_png(self._frame({"result": res}, None))
        drawn = "your run" if runs["your run"][0] is not None else "shipped"
        return png, (f"{label}. The picture: {drawn}. With a running kernel this output is the button.\n\n"
                     + self.comparison(runs))

    def _repr_mimebundle_(self, include=None, exclude=None):
        png, text = self.static_picture()
        return pictured_bundle(self.widget, png, text)

    def start(self) -> None:
        if self.job.running:
            return
        self.button.disabled = True
        self.job.start((self.figure, self.scale))

    def wait(self, timeout: float | None = None) -> bool:
        return self.job.wait(timeout)

    def _run(self, settings, ctx: RunContext):
        try:
            ctx.status(f"running {self.figure} at {self.scale} scale on {describe_device(self.device)} …")
            res = run_figure(self.figure, self.scale, str(self.device), out=self.out, progress=False)
            write_outputs(res, self.mine, picture=result_png)  # the user's run, where the command line writes it
            write_provenance(res, self.mine, self.scale, f"FigureRerun({self.figure!r}, {self.scale!r}) "
                             f"(store {self.out}; as python -m resnetlearn reproduce {self.figure} --scale "
                             f"{self.scale} --device {self.device.type})")
            ctx.frame({"result": res}, force=True)
            return res
        finally:
            self.button.disabled = False

    def _frame(self, data: dict, settings):
        # the one picture, as the CLI's FIG.png
        return to_matplotlib(result_figure(data["result"]))

    def _done(self, res, settings, ctx: RunContext) -> str:
        self.compare.value = self._compare_html()
        return (f"{res.summary} ({res.wall_time:.0f} s, {res.skipped} of {len(res.rows)} points reused "
                f"from the store; written to {self.mine})")
