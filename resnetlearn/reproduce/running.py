"""Running a figure: every point, in this process or through an executor, resumable and interruptible.

:func:`run_figure` reuses the points a :class:`~resnetlearn.reproduce.store.ResultsStore` already holds, runs the
others (:func:`resnetlearn.reproduce.points.run_point`) in the figure's own order and judges the rows against the
paper's claim (:func:`resnetlearn.reproduce.figures.summarise`). Points run through an executor seam: in-process
by default, or any object with ``submit(fn, *args)`` returning futures — a ``concurrent.futures`` pool,
a ``dask.distributed.Client``, or a submitit executor for Slurm. Only finished points are stored:
Ctrl-C discards the point in progress (:class:`FigureInterrupted`), except the finished groups of models that
``checkpoint_models`` keeps (:mod:`resnetlearn.reproduce.checkpoints`); worker processes leave Ctrl-C to
the parent and never outlive it (:func:`worker_init`, :func:`stop_process_pool`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

from .. import memory
from .. import validation as V
from .checkpoints import Checkpoints, partial_folder
from .figure_tables import FigureResult
from .figures import judge, point_records
from .point import Point
from .points import run_point
from .rows import Row
from .store import ResultsStore
from .work_estimate import point_work


class FigureInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_figure`.

    The point(s) in progress were discarded, but for the finished groups of their models that checkpoints keep
    (:mod:`resnetlearn.reproduce.checkpoints`). It is a KeyboardInterrupt.

    Parameters
    ----------
    figure : str
        The figure.
    saved : int
        How many of its points are in the store.
    total : int
        How many points it has.
    store : Path or None
        The store's folder; None when the run had no store.
    kept_groups : int, default 0
        The finished groups of models kept for the points in progress.
    """

    def __init__(self, figure: str, saved: int, total: int, store: Path | None, kept_groups: int = 0):
        super().__init__(f"{figure}: interrupted with {saved} of {total} points stored")
        self.figure, self.saved, self.total, self.store = figure, saved, total, store
        self.kept_groups = kept_groups


class WorkersUnavailable(RuntimeError):
    """The system refused to start a worker process (a process limit such as ``ulimit -u``, or memory)."""


PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process receives when its parent ends (``<linux/prctl.h>``)."""


def worker_init(parent_pid: int | None = None, workers: int = 1) -> None:
    """Worker-process initializer: leave Ctrl-C to the parent, never outlive it, and plan with this worker's GPU share.

    SIGINT is ignored (the parent decides and stops the pool); SIGTERM gets its default action back (a forked worker
    inherits the parent's handler), so terminating a worker ends it at once; on Linux ``prctl(PR_SET_PDEATHSIG,
    SIGTERM)`` asks the kernel to send SIGTERM to the worker when its parent ends, however it ends (even SIGKILL). The
    pool must start its workers by "fork" or "spawn" (their parent is then ``parent_pid``), not "forkserver".

    Parameters
    ----------
    parent_pid : int or None, default None
        The parent's process id. If the parent already ended before the request above took effect
        (``os.getppid()`` is no longer ``parent_pid``), the worker exits here. None skips that check.
    workers : int, default 1
        How many workers the pool runs at once. On a CUDA device each plans with at most 1/``workers`` of its memory
        (:func:`resnetlearn.memory.share_device`: a point checks the free memory when it starts, before the points
        started beside it have allocated), so a network point trains its grid in smaller chunks where needed.
    """
    memory.share_device(workers)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


def stop_process_pool(pool, timeout: float = 0.5) -> None:
    """Stop a ``concurrent.futures.ProcessPoolExecutor`` now.

    What has not started is cancelled and the workers are terminated: their points in progress are lost, never stored.

    Parameters
    ----------
    pool : concurrent.futures.ProcessPoolExecutor
        The pool.
    timeout : float, default 0.5
        Seconds after SIGTERM before a worker still alive is killed (SIGKILL): one forked while another thread of the
        parent held a lock can hang before :func:`worker_init` restores SIGTERM's default action, and the
        interpreter's exit would then wait on it forever.
    """
    procs = list((getattr(pool, "_processes", None) or {}).values())
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.terminate()
    deadline = time.monotonic() + timeout
    for proc in procs:
        with contextlib.suppress(Exception):
            proc.join(max(0.0, deadline - time.monotonic()))
    for proc in procs:
        with contextlib.suppress(Exception):
            if proc.is_alive():
                proc.kill()
                proc.join(1.0)
    if manager is not None:  # let the pool's own thread wind down before the interpreter's exit hooks run
        manager.join(max(0.0, deadline + 1.0 - time.monotonic()))


def _finished_result(fut):
    """The result of a future that has already finished successfully, else None (never waits)."""
    try:
        if fut.done() and not fut.cancelled():
            return fut.result(timeout=0)
    except BaseException:  # noqa: BLE001 - a failed or cancelled point is simply not stored
        return None
    return None


def _work_bar(figure: str, scale: str, pts: list[Point], todo: list[int], *, progress: bool, on_point=None):
    """The progress bar of :func:`run_figure` over the points ``todo`` (indices into ``pts``), and
    ``advance(i)``, which moves it on when point ``i`` is done (and calls ``on_point(done, len(todo), share)``,
    ``share`` the fraction of the work done, if given)."""
    from tqdm.auto import tqdm

    # the bar advances by each point's share of the work (point_work: SGD steps × networks × parameters), so
    # that its time estimate does not extrapolate from the narrow points that come first; a kernel point
    # counts as an average network point of the figure
    work = [point_work(pts[i]) for i in todo]
    mean = sum(work) / max(1, sum(w > 0 for w in work)) or 1.0
    work = {i: w or mean for i, w in zip(todo, work)}
    bar = tqdm(total=sum(work.values()), desc=f"{figure} ({scale}) 0/{len(todo)} points", disable=not progress,
               bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")
    done, done_work, total_work = 0, 0.0, sum(work.values())

    def advance(i: int) -> None:
        nonlocal done, done_work
        done, done_work = done + 1, done_work + work[i]
        bar.set_description_str(f"{figure} ({scale}) {done}/{len(todo)} points", refresh=False)
        bar.update(work[i])
        if on_point is not None:
            on_point(done, len(todo), done_work / total_work if total_work else 1.0)

    return bar, advance


def run_figure(figure: str, scale: str = "quick", device=None, out=None, executor=None,
               select: str = "test", progress: bool = True, cancel=None, on_point=None,
               checkpoint_models: int | None = None) -> FigureResult:
    """Run (or resume) every point of a figure and summarise it against the paper's claim.

    Rows come back in the figure's own point order, reused or not. On Ctrl-C every point that finished is already
    stored, futures not yet started are cancelled, the point(s) in progress are discarded and
    :class:`FigureInterrupted` is raised; the caller stops its worker processes (:func:`stop_process_pool`). Any other
    exception does the same before it propagates.

    Parameters
    ----------
    figure : str
        The figure (see :func:`resnetlearn.reproduce.figures.names`).
    scale : {"tiny", "quick", "cpu", "paper"}, default "quick"
        The scale; the figure must be defined at it.
    device : str or None, default None
        The device every point records and trains on (see :func:`resnetlearn.device.select_device`).
    out : path-like or None, default None
        A folder for the :class:`~resnetlearn.reproduce.store.ResultsStore`, whose finished points are reused;
        None stores nothing.
    executor : object or None, default None
        None runs in this process; otherwise anything with ``submit(fn, *args)`` returning futures
        (ProcessPoolExecutor, dask Client, submitit), to which a point travels as its flat configuration (plain
        data, its store key), read back once by :func:`~resnetlearn.reproduce.points.run_point`.
    select : {"test", "val"}, default "test"
        Whether each lr/wd cell is selected by test error (as §8.1 does) or on fresh validation samples.
    progress : bool, default True
        Show a progress bar that advances by each point's share of the work.
    cancel : threading.Event, callable or None, default None
        Stops the run the way Ctrl-C does (for a run in a thread, which Ctrl-C does not reach): looked at between
        SGD steps in this process, between points with an executor.
    on_point : callable or None, default None
        ``on_point(done, todo, share)``, called after each point computed here: ``done`` of the ``todo`` points not
        in the store, ``share`` the fraction of their work (SGD steps × networks × parameters) done.
    checkpoint_models : int or None, default None
        At least 1, and needs ``out``: a network point trains at most that many models at once and keeps each
        finished group (:mod:`resnetlearn.reproduce.checkpoints`), so a point that takes hours resumes part-way
        after Ctrl-C; its numbers are those of an uninterrupted run in the same groups, bit for bit.

    Returns
    -------
    FigureResult
        The rows, the summary, the verdict and how many points were reused.

    Raises
    ------
    FigureInterrupted
        On Ctrl-C or ``cancel``.
    WorkersUnavailable
        If ``executor.submit`` raises an ``OSError`` (the system refused a new worker process).
    ValueError
        If ``checkpoint_models`` is given without ``out``, or an argument is out of range.
    """
    if checkpoint_models is not None:
        V.integer("checkpoint_models", checkpoint_models, lo=1)
        if out is None:
            raise ValueError("checkpoint_models needs out: the store folder that keeps the finished groups")
    store = ResultsStore(out) if out is not None else None
    pts = point_records(figure, scale, device=device, select=select)
    configs = [p.config() for p in pts]  # the store's keys, the rows' fields, what a worker process receives
    checkpoints = [Checkpoints(str(partial_folder(out, c["figure"], store.key(c))), store.key(c), checkpoint_models)
                   if checkpoint_models is not None else None for c in configs]
    t0 = time.perf_counter()
    results: list[dict | None] = []
    for c in configs:
        hit = store.get(c) if store else None
        results.append(hit["result"] if hit else None)
    todo = [i for i, r in enumerate(results) if r is None]
    skipped = len(pts) - len(todo)

    def record(i: int, res: dict) -> None:
        if store:
            store.put(configs[i], res)
            if checkpoints[i] is not None:  # the point is stored: its kept groups have done their work
                checkpoints[i].log().clear()
        results[i] = res

    def run_here(i: int) -> dict:
        kw = dict(cancel=cancel) if cancel is not None else {}
        return run_point(pts[i], **kw, checkpoints=checkpoints[i]) if checkpoints[i] else run_point(pts[i], **kw)

    bar, advance = _work_bar(figure, scale, pts, todo, progress=progress, on_point=on_point)

    def stop_if_cancelled() -> None:
        if V.cancelled(cancel):
            raise KeyboardInterrupt(f"{figure}: cancelled")

    futures: dict[int, object] = {}
    try:
        if executor is None:
            for i in todo:
                stop_if_cancelled()
                record(i, run_here(i))
                advance(i)
        else:
            for i in todo:  # one by one, so that a failure part-way leaves the submitted ones cancellable
                try:
                    futures[i] = (executor.submit(run_point, configs[i], None, checkpoints[i]) if checkpoints[i]
                                  else executor.submit(run_point, configs[i]))
                except OSError as e:  # fork/spawn refused: BlockingIOError (process limit), ENOMEM
                    raise WorkersUnavailable(
                        f"{figure}: the system refused to start a worker process after {len(futures)} of "
                        f"{len(todo)} points were handed out ({type(e).__name__}: {e}); the pool was stopped "
                        f"and no partial point was stored; use fewer workers (see the process limit, "
                        f"ulimit -u)") from e
            for i, fut in futures.items():
                stop_if_cancelled()
                record(i, fut.result())
                advance(i)
    except BaseException as e:
        for i, fut in futures.items():
            fut.cancel()
            res = _finished_result(fut) if results[i] is None else None
            if res is not None:  # finished in a worker before the stop, not yet collected
                with contextlib.suppress(Exception):  # e.g. the disk that just failed: recomputed next time
                    record(i, res)
        if isinstance(e, KeyboardInterrupt):
            saved = sum(r is not None for r in results)
            kept = sum(len(list(Path(c.folder).glob("*.json"))) for c, r in zip(checkpoints, results)
                       if c is not None and r is None)
            raise FigureInterrupted(figure, saved, len(pts), store.root if store else None, kept) from None
        raise
    finally:
        bar.close()
    rows = [Row.of(dict(c, **r)) for c, r in zip(configs, results)]
    summary, verdict = judge(figure, rows)
    return FigureResult(figure, rows, summary=summary, reproduced=verdict.ok, wall_time=time.perf_counter() - t0,
                        skipped=skipped, verdict=verdict)
