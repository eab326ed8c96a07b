"""Notebook 05's rerun button: :class:`FigureRerun` reruns one of the paper's figures
(:func:`resnetlearn.reproduce.run_figure`) in a background job of :mod:`resnetlearn.classroom.live_run` and shows
the user's run beside the shipped one, each with its verdict and error table (arXiv v3 §8, Figures 2-4).

What a press does, whatever happens during it: it writes only into the user's folders (the results store ``out``
and the tables folder ``mine``, never the shipped tables); where one of them cannot be written (a read-only
clone, as on some servers) it falls back to a folder in the home directory and says so; its status line names
both folders, shows how many points are done and how long the run was measured to take
(:data:`MEASUREMENT`); Stop (or a kernel interrupt while a cell waits on the run) stops it within one SGD step,
keeping every finished point; a second press resumes from the store; a full disk ends in a message naming the
file; a press while a run of the same figure into the same store is going (this button's or another copy's) is
refused with a word.
"""

from __future__ import annotations

import errno
import html
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import ipywidgets as W

from ..device import describe_device, select_device
from ..reproduce import (
    DEFAULT_OUT,
    SCALES,
    FigureInterrupted,
    every_scale,
    run_figure,
    shipped_results,
    write_outputs,
    write_provenance,
)
from ..reproduce.figure_tables import error_table
from ..reproduce.store import PACKAGE_ROOT
from ..reproduce.table_reading import load_figure, rerun_command
from .figures_plotly import result_figure, result_png
from .live_run import LiveRun, PngView, RunContext, pictured_bundle
from .plots import to_png
from .static_picture import to_matplotlib

MEASUREMENT = PACKAGE_ROOT / "benchmarks" / "results" / "rerun_button_cpu.json"
"""The measured time of the button's default run (written by ``benchmarks/rerun_button_time.py``)."""

FALLBACK = Path.home() / "resnetlearn-results"
"""Where a press writes when its own folders cannot be written (a read-only clone): ``FALLBACK/live/store`` and
``FALLBACK/SCALE``; the system's temporary folder when the home directory cannot be written either."""

NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""OSError numbers of a write that found no room (a full disk, a quota, a file-size limit)."""

_ACTIVE: dict[tuple, FigureRerun] = {}
"""The running presses of this kernel, by (store, figure, scale): one run at a time writes one figure's points."""
_ACTIVE_LOCK = threading.Lock()


def expected_time(figure: str, scale: str, measurement=MEASUREMENT) -> str | None:
    """How long a press takes from an empty store, as measured, in words.

    Parameters
    ----------
    figure : str
        The figure.
    scale : str
        The scale.
    measurement : path-like, default MEASUREMENT
        A file written by ``benchmarks/rerun_button_time.py``.

    Returns
    -------
    str or None
        None when nothing was measured for this figure and scale (or the file cannot be read).
    """
    try:
        m = json.loads(Path(measurement).read_text())
        if (m["figure"], m["scale"]) != (figure, scale):
            return None
        wall = float(m["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    load = m.get("load_average_1_5_15_before", [None])[0]
    return (f"about {max(1, round(wall / 60))} min from an empty store (measured {wall:.0f} s on a "
            f"{m.get('cpu_count', '?')}-core CPU with {m.get('torch_threads', '?')} torch thread(s), load "
            f"{load if load is not None else '?'}, {m.get('date', '?')}; benchmarks/results/{Path(measurement).name})")


def writable(folder) -> str | None:
    """Why files cannot be written in a folder, or None when they can.

    The folder is created if missing, then a file is written in it and removed: the only reliable test, for
    permissions, read-only mounts and quotas alike.

    Parameters
    ----------
    folder : path-like
        The folder.

    Returns
    -------
    str or None
    """
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        return e.strerror or str(e)
    return None


def _looks_writable(folder: Path) -> bool:
    """A guess that creates nothing: whether the nearest existing folder on ``folder``'s path accepts files."""
    while not folder.exists() and folder.parent != folder:
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK)


class FigureRerun:
    """A button that reruns one of the paper's figures in a background thread, beside the shipped run.

    It shows the plot of the run and, for each of "your run" and "shipped", its verdict and error table, labelled
    with the folder it was read from. "Your run" is the figure's tables in ``mine``, where a press writes them as the
    command line does (``write_outputs``, ``write_provenance``), so a run of the command line shows here too.
    Finished points are kept in the store, so a second press only re-plots, and a stopped run resumes. The module
    docstring says what a press does under faults.

    Parameters
    ----------
    figure : str, default "fig2a"
        The figure, one defined at every scale (:func:`~resnetlearn.reproduce.every_scale`).
    scale : {"tiny", "quick", "cpu", "paper"}, default "quick"
        The scale.
    out : path-like, default "results/live/store"
        The results store. It may lie in the shipped results only in their git-ignored ``live/`` folder.
    device : str, torch.device or None, default None
        The device (:func:`~resnetlearn.device.select_device`).
    shipped : path-like or None, default None
        The shipped tables of this figure and scale; None: ``<results>/<scale>`` beside ``<results>/live/store``.
    mine : path-like or None, default None
        The user's tables; None: ``my-results/<scale>`` beside the shipped ``results/`` (where
        ``python -m resnetlearn reproduce FIG --scale SCALE`` writes when run from the clone's root). It may not lie
        in the shipped results.
    fallback : path-like or None, default None
        Where a press writes when ``out`` or ``mine`` cannot be written; None: :data:`FALLBACK`.

    Raises
    ------
    ValueError
        If ``figure`` or ``scale`` is not allowed, or ``mine`` or ``out`` lies in the shipped results.
    """

    def __init__(self, figure: str = "fig2a", scale: str = "quick", *, out="results/live/store", device=None,
                 shipped=None, mine=None, fallback=None):
        if figure not in every_scale():
            raise ValueError(f"figure must be one of {every_scale()}, got {figure!r}")
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
        self.figure, self.scale, self.out, self.device = figure, scale, Path(out), select_device(device)
        # the shipped results of this figure and scale: the static picture before a rerun (<results>/<scale>
        # beside <results>/live/store by default), and the user's beside them (<clone>/my-results/<scale>)
        self.shipped = Path(shipped) if shipped is not None else self.out.parents[1] / scale
        self.mine = Path(mine) if mine is not None else self.shipped.parents[1] / DEFAULT_OUT / scale
        if shipped_results(self.mine) is not None:
            raise ValueError(f"mine={str(self.mine)!r} lies in the shipped results/ (tracked by git): a rerun is "
                             f"written to the user's folder, e.g. {DEFAULT_OUT}/{scale}")
        tracked = shipped_results(self.out)
        if tracked is not None and not self.out.resolve().is_relative_to(tracked / "live"):
            raise ValueError(f"out={str(self.out)!r} lies in the shipped results/ (tracked by git): the store goes "
                             f"to its git-ignored {tracked / 'live'}/ or a folder of the user's")
        self.fallback = Path(fallback) if fallback is not None else FALLBACK
        self.expected = expected_time(figure, scale)
        self.button = W.Button(description=f"Rerun {figure} ({scale} scale)", button_style="primary",
                               icon="refresh", layout=W.Layout(width="auto"))
        self.stop_button = W.Button(description="Stop", icon="stop", disabled=True, layout=W.Layout(width="auto"))
        self.view = PngView(placeholder=None)  # nothing (not a broken image) until a result exists
        self.image = self.view.widget
        self.job = LiveRun(self._run, self._frame, done=self._done, view=self.view)
        self.compare = W.HTML(self._compare_html())  # your run beside the shipped one, as tables
        self.stopped: FigureInterrupted | None = None  # how the latest run was stopped, if it was
        self._stopping = False
        self.job.set_status(self._ready_text())
        self.button.on_click(lambda _: self.start())
        self.stop_button.on_click(lambda _: self.stop())
        self.widget = W.VBox([W.HBox([self.button, self.stop_button]), self.job.status, self.image, self.compare])

    def _ready_text(self) -> str:
        where = [f"results store {self.out}" + ("" if _looks_writable(self.out) else " (not writable here: a press "
                 f"falls back to {self.fallback})"),
                 f"tables {self.mine}" + ("" if _looks_writable(self.mine) else " (not writable here: a press falls "
                 f"back to {self.fallback})")]
        took = self.expected or "no measured time for this figure and scale"
        return (f"ready on {describe_device(self.device)}: press the button to rerun {self.figure} at {self.scale} "
                f"scale ({took}); it writes to {'; '.join(where)}")

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
                         (f"{head}, {res.label}", where, res.summary, error_table(res)))
        return sides

    def comparison(self, runs: dict | None = None) -> str:
        """The user's run beside the shipped one, as text.

        For each: its label and verdict, where it came from, its verdict line and error table
        (:func:`~resnetlearn.reproduce.figure_tables.error_table`).

        Parameters
        ----------
        runs : dict or None, default None
            As :meth:`runs` returns; None calls it.

        Returns
        -------
        str
        """
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

    # -- control
    def _key(self) -> tuple:
        return (str(self.out.resolve()), self.figure, self.scale)

    def start(self) -> bool:
        """Start a run (the button's click); returns whether one started. Refused, with a word in the status
        line, while this button or another one of this kernel runs the same figure into the same store."""
        with _ACTIVE_LOCK:
            other = _ACTIVE.get(self._key())
            if other is not None and other.job.running:
                if other is not self:
                    self.job.set_status(f"a run of {self.figure} into {self.out} is already going in this kernel "
                                        f"(another output of this cell); stop it there, or wait for it to end")
                return False
            _ACTIVE[self._key()] = self
            self.button.disabled, self.stop_button.disabled = True, False
            self.stopped, self._stopping = None, False
            self.job.start((self.figure, self.scale))
        return True

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the running run within one SGD step (a kernel's solve finishes first).

        Every finished point stays in the store and the next press resumes.

        Parameters
        ----------
        timeout : float, default 10.0
            Seconds to wait for the run to end.

        Returns
        -------
        bool
            Whether the run has ended.
        """
        if not self.job.running:
            return True
        self._stopping = True  # the run sees the cancel between two SGD steps and ends with its points stored
        return self.job.stop(timeout, status=f"stopping {self.figure} after the SGD step in progress …")

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the run to end; a kernel interrupt (Ctrl-C) while waiting stops the run, then is raised.

        Parameters
        ----------
        timeout : float or None, default None
            Seconds to wait; None: until it ends.

        Returns
        -------
        bool
            Whether the run has ended.
        """
        end = None if timeout is None else time.monotonic() + timeout
        try:  # polled, not Thread.join: a KeyboardInterrupt inside join left the thread marked as ended while
            while self.job.running:  # it ran on (Python 3.11), and Stop would then find nothing to stop
                if end is not None and time.monotonic() >= end:
                    return False
                time.sleep(0.05)
        except KeyboardInterrupt:
            self.stop()
            raise
        return True

    def _destinations(self) -> list[str]:
        """Make sure the store and the tables folder accept files, falling back to :attr:`fallback` (then the
        system's temporary folder) for one that does not; returns what was moved, in words. RuntimeError when no
        folder can be written."""
        notes = []
        for attr, sub in (("out", Path("live") / "store"), ("mine", Path(self.scale))):
            folder = getattr(self, attr)
            why = writable(folder)
            if why is None:
                continue
            for base in (self.fallback, Path(tempfile.gettempdir()) / "resnetlearn-results"):
                if writable(base / sub) is None:
                    setattr(self, attr, base / sub)
                    notes.append(f"{folder} cannot be written ({why}): {'the store' if attr == 'out' else 'the tables'}"
                                 f" go to {base / sub}")
                    break
            else:
                raise RuntimeError(f"cannot write {folder} ({why}), nor {self.fallback / sub}, nor a temporary "
                                   f"folder: nothing was run; pass out=/mine= folders you can write")
        return notes

    def _run(self, settings, ctx: RunContext):
        try:
            notes = self._destinations()
            where = f"store {self.out}, tables {self.mine}" + (f" ({'; '.join(notes)})" if notes else "")
            head = f"running {self.figure} at {self.scale} scale on {describe_device(self.device)}"
            took = f"; expected {self.expected}" if self.expected else ""
            ctx.status(f"{head}: looking up the store …{took}. Writes to: {where}")

            def progress(done: int, todo: int, share: float) -> None:
                left = ctx.elapsed * (1 - share) / share if share > 0 else None
                ctx.status(f"{head}: {done} of {todo} points to compute are done ({100 * share:.0f}% of the work, "
                           f"{ctx.elapsed:.0f} s"
                           + (f", about {left / 60:.0f} min left" if left is not None and done < todo else "")
                           + f"){took}. Writes to: {where}")

            try:
                res = run_figure(self.figure, self.scale, str(self.device), out=self.out, progress=False,
                                 cancel=ctx.cancelled, on_point=progress)
            except FigureInterrupted as e:
                self.stopped = e
                text = (f"stopped: {e.saved} of {e.total} points of {self.figure} are stored in {self.out} (the one "
                        f"in progress was discarded); press the button to resume")
                if self._stopping:  # Stop made this run no longer current: its status is set here
                    self.job.set_status(text)
                return None
            except OSError as e:
                if e.errno not in NO_ROOM + (errno.EROFS, errno.EACCES, errno.EPERM):
                    raise
                todo = ("free space on that disk" if e.errno in NO_ROOM else "make that folder writable")
                raise RuntimeError(f"cannot write {e.filename or self.out}: {e.strerror or e}. Every point finished "
                                   f"before is stored in {self.out}; {todo} and press the button again to resume"
                                   ) from None
            write_outputs(res, self.mine, picture=result_png)  # the user's run, where the command line writes it
            write_provenance(res, self.mine, self.scale, f"FigureRerun({self.figure!r}, {self.scale!r}) "
                             f"(store {self.out}; as python -m resnetlearn reproduce {self.figure} --scale "
                             f"{self.scale} --device {self.device.type})")
            ctx.frame({"result": res}, force=True)
            return res
        finally:
            self.button.disabled, self.stop_button.disabled = False, True

    def _frame(self, data: dict, settings):
        # the one picture, as the CLI's FIG.png
        return to_matplotlib(result_figure(data["result"]))

    def _done(self, res, settings, ctx: RunContext) -> str:
        if res is None:  # stopped by a cancel other than Stop's (the run's own line says what is stored)
            e = self.stopped
            return (f"stopped: {e.saved} of {e.total} points of {self.figure} are stored in {self.out}; press the "
                    f"button to resume")
        self.compare.value = self._compare_html()
        return (f"{res.summary} ({res.wall_time:.0f} s, {res.skipped} of {len(res.rows)} points reused "
                f"from the store {self.out}; tables written to {self.mine})")
