"""The paper's experiments (arXiv v3 §8; companion paper Figure 1) as functions.

Each figure is a list of *points* (one learner at one width, with its own
lr × wd grid search), so a sweep can be cut into independent jobs:

* :func:`fig2a` — N = 500, all layers trained: 3resnet / 3layer / 2layer × (all, last, ntk) vs m;
* :func:`fig2b` — N = 1000, hidden layers trained: × (hidden, last, ntk) vs m;
* :func:`fig3` — β ∈ {0, 0.2, 0.3, 0.5, 1} at α = 0.3, 3resnet (all) and (hidden) vs m;
* ``fig4`` — §8.2: two-layer networks with fixed output signs on a degree-6 parity;
  SGD's best test error and ‖W‖_F against a solution built by hand (footnote 16);
* ``thm3`` — Theorem 2/3 on the §7 hard instance: every kernel vs the 3resnet against N;
* ``companion`` — the companion's sin/cos target: 3layer, 2layer, last, NTK vs N.

Scales (every row and provenance file records which one produced it):

* ``quick`` fits a 2-core CPU in minutes (two widths, a 4 × 3 grid, 400 epochs);
* ``cpu`` is the largest scale a 2-core CPU finishes in a working session
  (about 1.5 h for all six figures): the paper's N and full 800-epoch protocol, widths 20–500 for
  Figure 2(a) and 20–200 for Figures 2(b) and 3 instead of 20–2000, and a
  5 × 4 lr × wd grid inside the paper's 9 × 10 grid;
* ``paper`` is the full §8.1 protocol (widths 20–2000, 800 epochs, grid
  {1,2,5}·10^−k), meant for a GPU.

Points are stored in a :class:`ResultsStore` keyed by their full
configuration and the library version (JSON files written atomically, each
with its key and a checksum that are verified on reading), so a rerun skips
finished points and an interrupted sweep resumes. Only finished points are
stored: Ctrl-C discards the point in progress (:class:`FigureInterrupted`).
Points run through an executor seam: in-process by default, or any object
with ``submit(fn, *args)`` returning futures — a ``concurrent.futures`` pool,
a ``dask.distributed.Client``, or a submitit executor for Slurm.
:func:`load_figure` and :func:`load_runs` read written tables back and
refuse incomplete ones and edited ones (each table's sha256 is recorded in
``FIG.sha256`` when it is written and checked on every read).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import os
import signal
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch

from .concept import Sample, companion_figure1, hard_instance, parity6_target, parity_instance
from .device import select_device
from .figures import FIGURES as FIGURE_SPECS
from .figures import SCALE_NOTES, SCALES, median_error, plotted_error, seed_errors
from .figures import points as _figure_points
from .figures import scale_settings as _scale_settings
from .figures import spec as figure_spec
from .training import Protocol, grid_search, train_models

FIGURES = tuple(FIGURE_SPECS)
"""The experiments' names, in the order ``reproduce all`` runs them."""


def _version() -> str:
    from . import __version__

    return __version__


# ----------------------------------------------------------------- durable files
def _fsync_directory(directory: Path) -> None:
    """Make a rename inside ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write(path, data: bytes | str) -> Path:
    """Write ``data`` to ``path`` so that a crash or Ctrl-C leaves the old file or the new one, never half of one.

    The bytes go to a temporary file in the same directory, are flushed and
    fsync'ed, renamed over ``path`` with ``os.replace``, and the directory is
    fsync'ed so that the rename itself survives a power cut.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_directory(path.parent)
    return path


# ----------------------------------------------------------------- store
class StoreWarning(UserWarning):
    """A stored point could not be trusted: it was moved aside and will be recomputed."""


def _canonical(obj) -> str:
    """The JSON text that checksums are taken over: sorted keys, no spaces, non-JSON values as strings."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=str)


def _as_json(obj):
    """``obj`` as it reads back from JSON (tuples become lists, devices strings, ...)."""
    return json.loads(_canonical(obj))


def _checksum(body: dict) -> str:
    return hashlib.sha256(_canonical(body).encode()).hexdigest()


class ResultsStore:
    """One JSON file per finished point under ``root/<figure>/<key>.json``.

    The key hashes the point's full configuration, the library version and
    the file schema, so changed settings or code never reuse stale numbers.
    Each file carries that key and configuration again, ``"complete": true``
    and a sha256 checksum of its content. :meth:`get` trusts a file only if
    all of these agree; a file that does not parse, belongs to another
    point, is not marked complete or fails its checksum is named in a
    :class:`StoreWarning`, renamed to ``<key>.json.corrupt-<time>`` (kept
    for inspection, never deleted) and reported as missing, so the point is
    computed again. Files are written with :func:`atomic_write`. No pickle.
    """

    SCHEMA = 3
    """Bumped when the file layout changes (2: every run of the grid, ``runs``;
    3: embedded key, ``complete`` flag and sha256 checksum)."""

    def __init__(self, root):
        self.root = Path(root)

    @staticmethod
    def key(config: dict) -> str:
        """20 hex digits of the sha256 of the configuration, library version and schema."""
        blob = json.dumps({"config": config, "version": _version(), "schema": ResultsStore.SCHEMA},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def path(self, config: dict) -> Path:
        return self.root / config["figure"] / f"{self.key(config)}.json"

    def put(self, config: dict, result: dict) -> Path:
        """Store the result of a finished point (only call it for a point that ran to its end)."""
        body = {"schema": self.SCHEMA, "key": self.key(config), "version": _version(), "complete": True,
                "config": _as_json(config), "result": _as_json(result)}
        payload = dict(body, sha256=_checksum(body))
        return atomic_write(self.path(config), json.dumps(payload, indent=1, default=str) + "\n")

    def get(self, config: dict) -> dict | None:
        """The stored payload of ``config`` (``payload["result"]`` is the result), or None when there is
        none or the file cannot be trusted (then it is moved aside with a :class:`StoreWarning`)."""
        p = self.path(config)
        try:
            data = p.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            return self._reject(p, f"cannot be read ({e})")
        reason, payload = self._problem(data, config)
        return self._reject(p, reason) if reason else payload

    def verify(self, path) -> str | None:
        """Why the file at ``path`` cannot be trusted as the point its own configuration names (None: it can).
        Reads only; nothing is moved."""
        try:
            data = Path(path).read_bytes()
            config = json.loads(data)["config"]
        except (OSError, ValueError, TypeError, KeyError) as e:
            return f"is not a readable stored point ({type(e).__name__}: {e})"
        if not isinstance(config, dict) or "figure" not in config:
            return "holds no point configuration"
        if Path(path).name != f"{self.key(config)}.json":
            return "is stored under another point's key"
        return self._problem(data, config)[0]

    def _problem(self, data: bytes, config: dict) -> tuple[str | None, dict | None]:
        """Why ``data`` is not the stored result of ``config`` (None and the payload when it is)."""
        try:
            payload = json.loads(data)
        except ValueError as e:
            return f"is not valid JSON, truncated or corrupted ({e})", None
        fields = ("schema", "key", "version", "config", "result", "sha256")
        if not isinstance(payload, dict) or any(f not in payload for f in fields):
            missing = [f for f in fields if not isinstance(payload, dict) or f not in payload]
            return f"is not a stored point of schema {self.SCHEMA} (missing {', '.join(missing)})", None
        if payload["schema"] != self.SCHEMA:
            return f"has schema {payload['schema']!r}, expected {self.SCHEMA}", None
        if payload.get("complete") is not True:
            return "is not marked complete", None
        body = {k: v for k, v in payload.items() if k != "sha256"}
        if _checksum(body) != payload["sha256"]:
            return "fails its sha256 checksum (edited or corrupted)", None
        key = self.key(config)
        if payload["key"] != key or payload["config"] != _as_json(config) or payload["version"] != _version():
            other = payload["config"] if isinstance(payload["config"], dict) else {}
            return (f"belongs to another point ({_point_label(other)}, key {payload['key']}, "
                    f"version {payload['version']}), not to key {key}"), None
        if not isinstance(payload["result"], dict):
            return "has no result", None
        return None, payload

    def _reject(self, path: Path, reason: str) -> None:
        aside = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}")
        n = 1
        while aside.exists():
            n += 1
            aside = aside.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%dT%H%M%S')}-{n}")
        try:
            os.replace(path, aside)
            where = f"moved aside to {aside.name}"
        except OSError as e:
            where = f"could not be moved aside ({e})"
        warnings.warn(f"results store: {path} {reason}; {where}; the point will be recomputed",
                      StoreWarning, stacklevel=3)
        return None


# ----------------------------------------------------------------- points
RUN_KEYS = ("role", "lr", "wd", "seed", "setting", "ridge_rel", "train_error", "test_error", "val_error", "diverged",
            "frobenius_W", "selected")
"""Columns of the per-run table (``FIG_runs.csv``): one row per trained model or kernel candidate."""


def run_point(config: dict) -> dict:
    """Train one point (a learner at one width, its whole lr × wd grid) and
    return the selected run and wall time. Top-level so executors can pickle it.

    A point is all or nothing: when training is interrupted (the engine
    catches Ctrl-C and returns ``interrupted=True``) this raises
    KeyboardInterrupt instead of returning numbers from a half-trained grid."""
    if config["figure"] == "thm3" and config["model"] != "3resnet":
        return _kernel_point(config)
    if config["model"] == "hand_built":
        return _hand_built_point(config)
    if config["target"] == "companion":
        target = companion_figure1()
    elif config["target"] == "parity6":
        target = parity6_target(config["d"])
    elif config["target"] == "hard":
        target = hard_instance(config["d"], config["k"], alpha=config["alpha"], seed=0)
    else:
        target = parity_instance(alpha=config["alpha"], beta=config["beta"])
    t0 = time.perf_counter()
    g = grid_search(target, config["model"], config["mode"], config["m"], config["n_train"],
                    config["lrs"], config["wds"], rerun_seeds=config.get("rerun_seeds", []),
                    select=config["select"], n_test=config["n_test"], init=config.get("init", "paper"),
                    protocol=Protocol(epochs=config["epochs"], lr_drop_epoch=config["epochs"] // 2,
                                      eval_every=config["epochs"]),
                    device=config.get("device"), progress=False)
    if g.interrupted:  # the engine stopped early on Ctrl-C: these numbers are not the point's result
        raise KeyboardInterrupt(f"{_point_label(config)} was interrupted during training")
    best = g.best or {}
    grid_rows = [r for r in g.rows if r["role"] == "grid"]
    fig4 = {"train_error": best.get("train_error"), "frobenius_W": best.get("frobenius_W"),
            "grid": [[r["train_error"], r["test_error"], r["frobenius_W"]] for r in grid_rows if not r["diverged"]]} \
        if config["figure"] == "fig4" else {}
    runs = [{k: r.get(k) for k in RUN_KEYS if k in r} for r in g.rows]
    seeds = [best.get("test_error", math.nan)] + [r["test_error"] for r in g.reruns] if best else []
    out = {**fig4, "runs": runs, "test_error": best.get("test_error", math.nan), "lr": best.get("lr"),
           "wd": best.get("wd"), "lr_at_grid_edge": _at_edge(best.get("lr"), config["lrs"]),
           "wd_at_grid_edge": _at_edge(best.get("wd"), config["wds"], low_edge=min(config["wds"]) > 0),
           "seed_errors": seeds, "diverged": sum(r["diverged"] for r in grid_rows), "grid_size": len(grid_rows)}
    if config["mode"] in ("last", "ntk"):
        out.update(_exact_kernel(config, target))
    return {**out, "seconds": round(time.perf_counter() - t0, 2), "device": str(select_device(config.get("device")))}


def _at_edge(value, grid, low_edge: bool = True) -> bool:
    """Whether a selected value sits on the edge of its grid (the optimum may lie outside: widen the grid)."""
    if value is None or len(grid) < 2:
        return False
    return value == max(grid) or (low_edge and value == min(grid))


def _exact_kernel(config: dict, target) -> dict:
    """The kernel method a (last)/(ntk) point stands for, solved exactly: ridge regression with the
    conjugate kernel / empirical NTK of the same initial network (seed 0, the point's init), the ridge
    chosen by the point's own selection rule (:func:`resnetlearn.kernels.network_kernel_errors`).

    The NTK is used output by output (``coupling="per_output"``: the scalar empirical NTK of each
    output, the kernel usually meant by "the NTK"). It is cheap (an N × N Gram) and on §8.1 it is the
    stronger kernel: the fully coupled kN × kN kernel, which is what SGD on the linearised network
    converges to, did worse where we measured it (§8.1, N = m = 500: 10.2 vs 7.4), which is why this
    per-output kernel is the one computed here; the SGD-trained linear model stands beside it."""
    from .concept import data_split
    from .kernel_experiments import network_kernel_errors

    split = data_split(target, config["n_train"], n_test=config["n_test"], seed=0, dtype=torch.float64)
    r = network_kernel_errors(split.train, split.test, config["model"], config["m"], config["mode"], seed=0,
                              init=config.get("init", "paper"), select=config["select"],
                              coupling="per_output")
    return {"exact_test_error": r["test_error"], "exact_train_error": r["train_error"],
            "exact_ridge_rel": r["ridge_rel"], "exact_ridge_at_grid_edge": r["ridge_at_grid_edge"]}


def _kernel_point(config: dict) -> dict:
    from .kernel_experiments import kernel_errors

    t0 = time.perf_counter()
    target = hard_instance(config["d"], config["k"], alpha=config["alpha"], seed=0)
    r = kernel_errors(target, config["n_train"], kernels=[config["model"]], select=config["select"],
                      n_test=config["n_test"], m=config["m"], progress=False)[0]
    err = "test_error" if config["select"] == "test" else "val_error"
    runs = [{"setting": lab, "ridge_rel": rel, err: e, "selected": (lab, rel) == (r["setting"], r["ridge_rel"])}
            for lab, rel, e in r["path"]]
    return {"runs": runs, "test_error": r["test_error"], "ridge_rel": r["ridge_rel"], "setting": r["setting"],
            "ridge_at_grid_edge": r.get("ridge_at_grid_edge"), "param_at_grid_edge": r.get("param_at_grid_edge"),
            "grid_edges": r.get("grid_edges"),
            "seconds": round(time.perf_counter() - t0, 2), "device": "cpu"}


def _hand_built_point(config: dict) -> dict:
    """§8.2 footnote 16: train aᵀσ(Wx) with m = 200 on all 64 inputs of the d = 6
    problem (so its test error is exact), then pad W with d − 6 zero columns
    (scaling the 6 used columns by √(d/6), since inputs are ±1/√d) and
    duplicate rows up to width m with rescaling by √(200/m): the same function,
    the same test error, ‖W‖_F = √(d/6)·‖W₆‖_F at every width."""
    import itertools

    t0 = time.perf_counter()
    x6 = torch.tensor(list(itertools.product((1.0, -1.0), repeat=6)), dtype=torch.float64) / 6**0.5
    y6 = parity6_target(6)(x6)
    full = Sample(x6, y6, None, None)
    res = train_models(full, full, "2layer_signs", "hidden", m=200, lrs=[0.5], wds=[config["wd"]],
                       seeds=[config.get("seed", 0)],
                       protocol=Protocol(epochs=config["epochs"], batch_size=16,
                                         lr_drop_epoch=config["epochs"] * 2 // 3, eval_every=config["epochs"]),
                       dtype=torch.float64, device="cpu", progress=False)
    if res.interrupted:
        raise KeyboardInterrupt(f"{_point_label(config)} was interrupted during training")
    W6 = res.params["W"][0]
    d, m = config["d"], config["m"]
    Wd = torch.zeros(200, d, dtype=torch.float64)
    Wd[:, :6] = W6 * (d / 6) ** 0.5
    Wm = Wd.repeat(m // 200, 1) * (200 / m) ** 0.5
    run = {"wd": config["wd"], "seed": config.get("seed", 0), "train_error": float(res.test_error[0]),
           "test_error": float(res.test_error[0]), "frobenius_W": float(Wm.norm()), "selected": True}
    return {"runs": [run], "test_error": float(res.test_error[0]), "train_error": float(res.test_error[0]),
            "frobenius_W": float(Wm.norm()), "seconds": round(time.perf_counter() - t0, 2), "device": "cpu"}


def _point_id(p: dict) -> tuple:
    """What tells the points of one figure apart (the learner, its width or N, β, and the wd of a hand-built point)."""
    return (p.get("model"), p.get("mode"), p.get("m"), p.get("n_train"), p.get("beta"), p.get("alpha"), p.get("d"),
            p.get("wd") if p.get("model") == "hand_built" else None, p.get("panel") or None)


def _point_label(p: dict) -> str:
    """A short human name for a point, e.g. ``3resnet(last) m=200`` or ``gaussian N=250``."""
    model, mode = p.get("model"), p.get("mode")
    name = f"{model}" if mode in (None, "-", "kernel") else f"{model}({mode})"
    fig = p.get("figure")
    parts = [name]
    if fig == "fig3":
        parts.append(f"β={p.get('beta')}")
    if fig in ("thm3", "companion"):
        parts.append(f"N={p.get('n_train')}")
    else:
        parts.append(f"m={p.get('m')}")
    if model == "hand_built":
        parts.append(f"wd={p.get('wd')}")
    return " ".join(parts)


def _points(figure: str, scale: str, device, select: str) -> list[dict]:
    """Every point of a figure at a scale (defined in :mod:`resnetlearn.figures`)."""
    return _figure_points(figure, scale, device=device, select=select)


# ----------------------------------------------------------------- running
@dataclass
class FigureResult:
    """Rows (one per point), the summary line and the figure of one experiment."""

    name: str
    rows: list[dict]
    summary: str
    reproduced: bool | None
    wall_time: float
    skipped: int = 0
    figure: object = field(default=None, repr=False)
    provenance: dict | None = field(default=None, repr=False)  # set by load_figure when shipped


class FigureInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped :func:`run_figure`: ``saved`` of the ``total`` points of ``figure``
    are in the store under ``store`` (None: no store); the point(s) in progress were discarded."""

    def __init__(self, figure: str, saved: int, total: int, store: Path | None):
        super().__init__(f"{figure}: interrupted with {saved} of {total} points stored")
        self.figure, self.saved, self.total, self.store = figure, saved, total, store


class WorkersUnavailable(RuntimeError):
    """The system refused to start a worker process (a process limit such as ``ulimit -u``, or memory)."""


PR_SET_PDEATHSIG = 1
"""Linux ``prctl`` option: the signal a process receives when its parent ends (``<linux/prctl.h>``)."""


def worker_init(parent_pid: int | None = None) -> None:
    """Worker-process initializer: leave Ctrl-C to the parent, and never outlive it.

    SIGINT is ignored (the parent decides and stops the pool); SIGTERM gets its default action back
    (a forked worker inherits the parent's handler), so terminating a worker ends it at once; on Linux
    ``prctl(PR_SET_PDEATHSIG, SIGTERM)`` asks the kernel to send SIGTERM to the worker when its parent
    ends, however it ends (even SIGKILL); a parent that ended before that request took effect
    (``os.getppid()`` is no longer ``parent_pid``) ends the worker here."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if parent_pid is not None and os.getppid() != parent_pid:
        os._exit(1)


ignore_sigint = worker_init
"""The former name of :func:`worker_init`."""


def stop_process_pool(pool, timeout: float = 0.5) -> None:
    """Stop a ``concurrent.futures.ProcessPoolExecutor`` now: cancel what has not started and
    terminate the workers (their points in progress are lost, never stored).

    A worker still alive ``timeout`` seconds after SIGTERM is killed (SIGKILL): one forked while
    another thread of the parent held a lock can hang before :func:`worker_init` restores SIGTERM's
    default action, and the interpreter's exit would then wait on it forever."""
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


def run_figure(figure: str, scale: str = "quick", device=None, out=None, executor=None,
               select: str = "test", progress: bool = True) -> FigureResult:
    """Run (or resume) every point of a figure and summarise it against the paper's claim.

    ``out``: a directory for the :class:`ResultsStore` (finished points are
    reused). ``executor``: ``None`` runs in this process; otherwise anything
    with ``submit(fn, *args)`` (ProcessPoolExecutor, dask Client, submitit).
    Rows come back in the figure's own point order, reused or not.

    On Ctrl-C (KeyboardInterrupt) every point that finished is already
    stored, futures not yet started are cancelled, the point(s) in progress
    are discarded, and :class:`FigureInterrupted` (a KeyboardInterrupt) is
    raised; the caller stops its worker processes (:func:`stop_process_pool`).
    Any other exception does the same before it propagates; an ``OSError``
    from ``executor.submit`` (the system refused a new worker process)
    becomes :class:`WorkersUnavailable`.
    """
    from tqdm.auto import tqdm

    store = ResultsStore(out) if out is not None else None
    pts = _points(figure, scale, device, select)
    t0 = time.perf_counter()
    results: list[dict | None] = []
    for p in pts:
        hit = store.get(p) if store else None
        results.append(hit["result"] if hit else None)
    todo = [i for i, r in enumerate(results) if r is None]
    skipped = len(pts) - len(todo)

    def record(i: int, res: dict) -> None:
        if store:
            store.put(pts[i], res)
        results[i] = res

    # the bar advances by each point's share of the work (point_work: SGD steps × networks × parameters), so
    # that its time estimate does not extrapolate from the narrow points that come first; a kernel point
    # counts as an average network point of the figure
    work = [point_work(pts[i]) for i in todo]
    mean = sum(work) / max(1, sum(w > 0 for w in work)) or 1.0
    work = {i: w or mean for i, w in zip(todo, work)}
    bar = tqdm(total=sum(work.values()), desc=f"{figure} ({scale}) 0/{len(todo)} points", disable=not progress,
               bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]")
    done = 0

    def advance(i: int) -> None:
        nonlocal done
        done += 1
        bar.set_description_str(f"{figure} ({scale}) {done}/{len(todo)} points", refresh=False)
        bar.update(work[i])

    futures: dict[int, object] = {}
    try:
        if executor is None:
            for i in todo:
                record(i, run_point(pts[i]))
                advance(i)
        else:
            for i in todo:  # one by one, so that a failure part-way leaves the submitted ones cancellable
                try:
                    futures[i] = executor.submit(run_point, pts[i])
                except OSError as e:  # fork/spawn refused: BlockingIOError (process limit), ENOMEM
                    raise WorkersUnavailable(
                        f"{figure}: the system refused to start a worker process after {len(futures)} of "
                        f"{len(todo)} points were handed out ({type(e).__name__}: {e}); the pool was stopped "
                        f"and no partial point was stored; use fewer workers (see the process limit, "
                        f"ulimit -u)") from e
            for i, fut in futures.items():
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
            raise FigureInterrupted(figure, saved, len(pts), store.root if store else None) from None
        raise
    finally:
        bar.close()
    rows = [dict(p, **r) for p, r in zip(pts, results)]
    summary, ok = summarise(figure, rows)
    return FigureResult(figure, rows, summary, ok, time.perf_counter() - t0, skipped)


# ----------------------------------------------------------------- the work ahead
BATCH = Protocol().batch_size
"""The mini-batch of every network point (§8.1: 50)."""


@functools.cache
def _target_dims(target: str, d, k, alpha, beta) -> tuple[int, int]:
    """(d, k) of a point's target (built once per distinct target)."""
    t = _target_of(dict(target=target, d=d, k=k, alpha=alpha, beta=beta))
    return t.d, t.k


def _target_of(config: dict):
    """The target a point learns (as :func:`run_point` builds it)."""
    if config["target"] == "companion":
        return companion_figure1()
    if config["target"] == "parity6":
        return parity6_target(config["d"])
    if config["target"] == "hard":
        return hard_instance(config["d"], config["k"], alpha=config["alpha"], seed=0)
    return parity_instance(alpha=config["alpha"], beta=config["beta"])


def _sgd_batches(config: dict) -> list[tuple[int, int, int]]:
    """The batched trainings of one network point: (models trained together, SGD steps, parameters of one
    model) for its lr × wd grid and for the fresh-seed reruns of the selected cell (:func:`grid_search`)."""
    from .networks import param_shapes

    if config["model"] == "hand_built":  # footnote 16: one 2layer_signs of width 200 on the 64 inputs, batch 16
        params = sum(math.prod(s) for s in param_shapes("2layer_signs", 6, 1, 200).values())
        return [(1, config["epochs"] * math.ceil(64 / 16), params)]
    d, k = _target_dims(config["target"], config.get("d"), config.get("k"), config.get("alpha"), config.get("beta"))
    n_fit = config["n_train"] - (round(0.2 * config["n_train"]) if config["select"] == "val" else 0)
    steps = config["epochs"] * math.ceil(n_fit / BATCH)
    params = sum(math.prod(s) for s in param_shapes(config["model"], d, k, config["m"]).values())
    groups = [len(config["lrs"]) * len(config["wds"]), len(config.get("rerun_seeds") or [])]
    return [(g, steps, params) for g in groups if g]


STEP_OVERHEAD = 50_000
"""The fixed cost of one SGD step (Python, kernel launches) in parameter-updates: timed on the 2-core CPU,
a step of G networks of P parameters cost about as much as G·P + 20 000 to 70 000 parameter-updates."""


def point_work(config: dict) -> float:
    """The relative cost of a network point (0 for a kernel point): Σ over its batched trainings of
    steps × (networks × parameters + :data:`STEP_OVERHEAD`); the progress bar advances by it."""
    if config["figure"] == "thm3" and config["model"] != "3resnet":
        return 0.0
    return float(sum(n * (g * params + STEP_OVERHEAD) for g, n, params in _sgd_batches(config)))


def _seconds_per_step(arch: str, mode: str, m: int, models: int, device) -> float:
    """Wall time of one SGD step of ``models`` networks at width m here, measured on a few steps."""
    from .training import train_models

    sample = parity_instance().sample(3 * BATCH, seed=0)  # 3 steps an epoch

    def run(epochs: int) -> float:
        t0 = time.perf_counter()
        train_models(sample, sample, arch, mode, m=m, lrs=[1e-3] * models, wds=[0.0] * models,
                     seeds=list(range(models)),
                     protocol=Protocol(epochs=epochs, batch_size=BATCH, eval_every=epochs), device=device,
                     progress=False)
        return time.perf_counter() - t0

    run(1)  # warm-up: allocations, first-call costs
    # 5 epochs minus 1 epoch: 12 steps without the set-up and the evaluations both calls share; the median
    # of three such differences (the machine may be busy with other work)
    return max(0.0, sorted(run(5) - run(1) for _ in range(3))[1]) / 12


@dataclass
class WorkEstimate:
    """What a run will compute: its points not yet stored, the networks they train, the SGD steps
    (each of ``BATCH`` samples) and the wall time those steps take here, extrapolated from steps
    measured on this device (kernel solves and evaluations not counted)."""

    points: int
    kernel_points: int
    networks: int
    steps: int
    seconds: float
    device: str

    def text(self, scale: str, workers: int = 0) -> str:
        kern = f" and {self.kernel_points} kernel point(s)" if self.kernel_points else ""
        if not self.networks:
            return f"work ahead at scale {scale}: {self.points} point(s) to compute, no network training{kern}"
        par = ""
        if workers > 1:
            at_most = min(workers, os.cpu_count() or 1) if self.device == "cpu" else workers
            par = f"; with {workers} workers at best {_duration(self.seconds / at_most)}"
        return (f"work ahead at scale {scale}: {self.points} point(s) to compute{kern}; {self.networks:,} networks "
                f"trained for {self.steps:,} SGD steps in all (mini-batches of {BATCH}); from steps timed just now "
                f"on {self.device}, the steps alone take roughly {_duration(self.seconds)} in one process{par} "
                f"(set-up, evaluation and kernel solves come on top)")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def estimate_work(figures, scale: str, *, device=None, select: str = "test", store=None,
                  probe_width: int = 200) -> WorkEstimate:
    """Estimate the work of running ``figures`` at ``scale`` before starting: for every point not yet in
    ``store`` (a store directory), the networks it trains × the SGD steps of each (``epochs`` × batches),
    and the time of those steps on ``device``. Each (architecture, mode) is timed on a few real steps of
    4 networks at width 10 and at ``probe_width``; a step of G networks with P parameters each is taken
    to cost a + b·G·P (a: the per-step overhead, b: the arithmetic), which fits wide networks best."""
    dev = select_device(device)
    st = ResultsStore(store) if store is not None else None
    pending = [p for fig in figures for p in _points(fig, scale, device, select)
               if st is None or not st.path(p).exists()]
    nets = [p for p in pending if not (p["figure"] == "thm3" and p["model"] != "3resnet")]
    cost: dict[tuple, tuple[float, float]] = {}
    networks = steps = 0
    seconds = 0.0
    for p in nets:
        arch, mode = ("2layer_signs", "hidden") if p["model"] == "hand_built" else (p["model"], p["mode"])
        if (arch, mode) not in cost:
            from .networks import param_shapes

            t = [_seconds_per_step(arch, mode, w, 4, dev) for w in (10, probe_width)]  # d = 30, k = 15
            P = [sum(math.prod(s) for s in param_shapes(arch, 30, 15, w).values()) for w in (10, probe_width)]
            b = max(0.0, (t[1] - t[0]) / (4 * (P[1] - P[0])))
            cost[(arch, mode)] = (max(0.0, t[0] - 4 * b * P[0]), b)
        a, b = cost[(arch, mode)]
        for g, n_steps, params in _sgd_batches(p):
            networks += g
            steps += g * n_steps
            seconds += n_steps * (a + b * g * params)
    return WorkEstimate(len(pending), len(pending) - len(nets), networks, steps, seconds, str(dev))


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _verdict(ok: bool | None) -> str:
    word = "reproduced" if ok is True else "NOT reproduced" if ok is False else "cannot be judged"
    return f"{word} at this scale"


def summarise(figure: str, rows: list[dict]) -> tuple[str, bool | None]:
    """The paper's claim for a figure, and whether these rows reproduce it.

    Returns the summary line and True/False, or None when the rows cannot
    decide it (a learner the claim needs has no finite point). Points whose
    test error is not finite (every run of their grid diverged) never enter
    a minimum or maximum: they are left out and named at the end of the line.
    """
    kept = [r for r in rows if _finite(r.get("test_error")) or _finite(r.get("exact_test_error"))]
    dropped = [r for r in rows if r not in kept]
    text, ok = _judge(figure, kept, dropped)
    if dropped:
        n = len(dropped)
        text += (f". {n} diverged point{'s' if n > 1 else ''} (no finite test error) excluded: "
                 + ", ".join(_point_label(dict(r, figure=figure)) for r in dropped))
    return text, ok


def _judge(figure: str, rows: list[dict], dropped: list[dict]) -> tuple[str, bool | None]:
    """:func:`summarise` on the points with a finite test error: the figure's own claim and verdict rule."""
    return figure_spec(figure).summarise(rows + dropped)


TITLES = {name: spec.title for name, spec in FIGURE_SPECS.items()}


def _curves(result: FigureResult) -> tuple[str, dict[str, list[tuple]]]:
    """The x key (width m, or N) and one sorted (x, plotted error) curve per learner."""
    spec = figure_spec(result.name)
    groups: dict[str, list[tuple]] = {}
    for r in result.rows:
        groups.setdefault(spec.label(r), []).append((r[spec.xkey], plotted_error(r)))
    return spec.xkey, {k: sorted(v) for k, v in groups.items()}


def error_table(result: FigureResult, digits: int = 3) -> str:
    """The test errors of a figure as text: one line per learner, one column
    per width m (or N), rounded so that notebooks can check them."""
    if result.name == "fig4":
        num = lambda v, f: format(v, f) if _finite(v) else "-"  # noqa: E731  (a diverged point has none)
        lines = [f"{r['model']:13s} m={r['m']:<5d} wd={num(r['wd'], '<7g')} "
                 f"test {num(r['test_error'], f'.{digits}f')}  ‖W‖_F {num(r['frobenius_W'], '.1f')}"
                 for r in result.rows]
        return "\n".join(lines)
    xkey, groups = _curves(result)
    xs = sorted({x for pts in groups.values() for x, _ in pts})
    head = f"{'':22s}" + "".join(f"{('N=' if xkey == 'n_train' else 'm=') + str(x):>10s}" for x in xs)
    lines = [head]
    for label, pts in groups.items():
        at = dict(pts)
        lines.append(f"{label:22s}" + "".join(f"{at[x]:10.{digits}f}" if x in at else f"{'':10s}" for x in xs))
    return "\n".join(lines)


def _table(result: FigureResult, cell, width: int = 12, rows=None) -> str:
    """One line per curve, one column per width m (or N): ``cell(row)`` formats each point."""
    spec = figure_spec(result.name)
    rows = result.rows if rows is None else rows
    xs = sorted({r[spec.xkey] for r in rows})
    head = f"{'':22s}" + "".join(f"{('N=' if spec.xkey == 'n_train' else 'm=') + str(x):>{width}s}" for x in xs)
    groups: dict[str, dict] = {}
    for r in rows:
        groups.setdefault(spec.label(r), {})[r[spec.xkey]] = r
    return "\n".join([head] + [f"{label:22s}" + "".join(f"{cell(at[x]) if x in at else '':>{width}s}" for x in xs)
                                for label, at in groups.items()])


def seed_table(result: FigureResult) -> str:
    """How many initialisation seeds of each point's selected cell are below the figure's first
    reference line (kα² for Figures 2 and 3, α²/4 for the hard instance), e.g. ``7/9``."""
    from .figures import below

    lines = figure_spec(result.name).lines()
    if result.name == "fig4" or not lines:
        raise ValueError(f"{result.name} has no threshold to count seeds against")
    thr = lines[0][0]
    nets = [r for r in result.rows if r.get("mode") != "kernel"]
    return f"seeds below {lines[0][1]} = {thr:.4g}\n" + _table(result, lambda r: "{}/{}".format(*below(r, thr)),
                                                                 rows=nets)


def kernel_table(result: FigureResult, digits: int = 3) -> str:
    """For every (last)/(ntk) point: the SGD-trained linear model's median test error next to the
    exact kernel-ridge solution with the same initial network (``SGD / exact``)."""
    rows = [r for r in result.rows if r.get("mode") in ("last", "ntk")]
    if not rows:
        raise ValueError(f"{result.name} has no (last)/(ntk) points")
    fmt = lambda v: f"{v:.{digits}f}" if _finite(v) else "div"  # noqa: E731
    return "SGD (median over seeds) / exact kernel ridge regression\n" + _table(
        result, lambda r: f"{fmt(median_error(r))} / {fmt(r.get('exact_test_error'))}", width=18, rows=rows)


def selection_table(by_test: FigureResult, by_val: FigureResult, digits: int = 3) -> str:
    """The paper's protocol next to an honest one, point by point: the median test error over fresh
    seeds of the cell selected by test error (§8.1 selects this way) ``/`` that of the cell selected on
    a validation split held out of the training samples (``--select val``), for every network point.

    Both results must be the same figure at the same scale; the second pays for its honesty with
    fewer training samples (the held-out fraction, :func:`resnetlearn.concept.data_split`)."""
    pair = (by_test, by_val)
    if by_test.name != by_val.name:
        raise ValueError(f"by_test and by_val must be the same figure, got {by_test.name!r} and {by_val.name!r}")
    selects = [{r.get("select") for r in res.rows} for res in pair]
    if selects != [{"test"}, {"val"}]:
        raise ValueError(f"by_test must be selected by test error and by_val on a validation split; "
                         f"got selections {sorted(selects[0])} and {sorted(selects[1])}")
    scales = [{r.get("scale") for r in res.rows} for res in pair]
    if scales[0] != scales[1]:
        raise ValueError(f"by_test and by_val must be the same scale, got {sorted(scales[0])} and {sorted(scales[1])}")
    val_rows = {_point_id(r): r for r in by_val.rows}
    nets = [r for r in by_test.rows if r.get("mode") not in (None, "-", "kernel") and _point_id(r) in val_rows]
    if not nets:
        raise ValueError(f"{by_test.name}: no network point appears in both results")
    fmt = lambda v: f"{v:.{digits}f}" if _finite(v) else "div"  # noqa: E731
    return ("median test error over fresh seeds: cell selected by test error / on a validation split\n"
            + _table(by_test, lambda r: f"{fmt(median_error(r))} / {fmt(median_error(val_rows[_point_id(r)]))}",
                     width=18, rows=nets))


def figure_plot(result: FigureResult):
    """Paper-style plot: test error vs width (or N) on log axes, with kα²."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    if result.name == "fig4":
        floor = 1e-3  # errors below are drawn at the floor (a hand-built fit can be exact)
        for r in result.rows:
            if r["model"] == "hand_built" and _finite(r["test_error"]):
                ax.scatter([max(r["test_error"], floor)], [r["frobenius_W"]], marker="*", s=160, color="crimson")
        n_div = sum(r.get("diverged") or 0 for r in result.rows if r["model"] == "2layer_signs") + sum(
            1 for r in result.rows if r["model"] == "hand_built" and not _finite(r["test_error"]))
        if n_div:
            ax.scatter([], [], marker="x", color="gray", label=f"diverged runs, not drawn: {n_div}")
        pts = [g for r in result.rows if r["model"] == "2layer_signs" for g in (r.get("grid") or [])]
        ax.scatter([max(p[0], floor) for p in pts], [p[2] for p in pts], s=12, label="SGD runs: train error")
        ax.scatter([max(p[1], floor) for p in pts], [p[2] for p in pts], s=12, label="SGD runs: test error")
        ax.scatter([], [], marker="*", s=160, color="crimson", label="built by hand (train = test)")
        ax.set_xscale("log")
        ax.set_xlabel(f"error (values below {floor:g} drawn at {floor:g})")
        ax.set_ylabel("‖W‖_F")
        ax.set_title("fig4: SGD does not find the small-norm solution")
        ax.legend(fontsize=7)
        fig.tight_layout()
        return fig
    xkey, groups = _curves(result)
    ax.set_xscale("log")
    ax.set_yscale("log")
    n_div = 0
    for label, pts in groups.items():
        ok = [p for p in pts if _finite(p[1])]
        bad = [p[0] for p in pts if not _finite(p[1])]
        if bad:  # every run diverged: an x near the top edge in the learner's colour, stacked per learner
            label += f" — diverged at {'N' if xkey == 'n_train' else 'm'}={', '.join(map(str, bad))}"
        line, = ax.plot([p[0] for p in ok], [p[1] for p in ok], "o-", label=label)
        if bad:
            ax.plot(bad, [0.96 - 0.045 * n_div] * len(bad), "x", ms=9, mew=2, color=line.get_color(),
                    transform=ax.get_xaxis_transform(), clip_on=False)
            n_div += 1
    if n_div:
        ax.plot([], [], "x", ms=9, mew=2, color="gray", label="diverged: no finite run (x at the top)")
    for (value, name), style in zip(figure_spec(result.name).lines(), (("crimson", "--"), ("gray", ":"),
                                                                          ("purple", "-."))):
        ax.axhline(value, color=style[0], ls=style[1], label=f"{name} = {value:.4g}")
    from matplotlib.ticker import NullFormatter

    xs = sorted({x for pts in groups.values() for x, _ in pts})
    ax.set_xticks(xs, [str(x) for x in xs])  # the measured widths / N, not 3×10¹-style minor labels
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("N (samples)" if xkey == "n_train" else "m (width)")
    ax.set_ylabel("test error (median over seeds; (last)/(ntk): better of SGD and exact)", fontsize=8)
    ax.set_title(TITLES.get(result.name, result.name))
    if n_div:  # room at the top for the stacked x marks, above every drawn point
        lo, hi = ax.get_ylim()
        room = 0.045 * n_div + 0.03
        ax.set_ylim(lo, hi * (hi / lo) ** (room / (1 - room)))
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def table_text(result: FigureResult) -> str:
    """The tidy table ``FIG.csv`` of a figure, exactly as :func:`write_outputs` writes it."""
    import csv
    import io

    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=TABLE_COLS, extrasaction="ignore")
    w.writeheader()
    w.writerows([_table_row(r) for r in result.rows])
    return buf.getvalue()


def runs_text(result: FigureResult) -> str:
    """The per-run table ``FIG_runs.csv`` of a figure, exactly as :func:`write_outputs` writes it."""
    import csv
    import io

    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=_POINT_COLS + list(RUN_KEYS), extrasaction="ignore")
    w.writeheader()
    for r in result.rows:
        point = {k: r.get(k) for k in _POINT_COLS}
        w.writerows([{**point, **run} for run in r.get("runs") or []])
    return buf.getvalue()


def write_outputs(result: FigureResult, out) -> dict[str, Path]:
    """Write the tidy table (CSV), every run of every grid (CSV), the plot (PNG), the summary (TXT) and
    the tables' checksums (``FIG.sha256``, :func:`write_checksums`), each atomically (a Ctrl-C leaves
    the previous file or the new one)."""
    import io

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"table": out / f"{result.name}.csv", "runs": out / f"{result.name}_runs.csv",
             "plot": out / f"{result.name}.png", "summary": out / f"{result.name}.txt"}
    tables = {paths["table"].name: table_text(result).encode(), paths["runs"].name: runs_text(result).encode()}
    atomic_write(paths["table"], tables[paths["table"].name])
    atomic_write(paths["runs"], tables[paths["runs"].name])
    paths["checksums"] = write_checksums(result.name, out, tables)
    png = io.BytesIO()
    figure_plot(result).savefig(png, format="png", dpi=110)
    atomic_write(paths["plot"], png.getvalue())
    atomic_write(paths["summary"], result.summary + "\n")
    return paths


# ----------------------------------------------------------------- table checksums
def checksum_path(name: str, directory) -> Path:
    """Where the checksums of a figure's tables live: ``FIG.sha256`` beside them."""
    return Path(directory) / f"{name}.sha256"


def write_checksums(name: str, directory, tables: dict[str, bytes]) -> Path:
    """Record the sha256 of each table's bytes (file name -> content) in ``FIG.sha256``, in the format
    of ``sha256sum`` (so ``sha256sum -c FIG.sha256`` inside the directory checks them too)."""
    lines = "".join(f"{hashlib.sha256(data).hexdigest()}  {fname}\n" for fname, data in sorted(tables.items()))
    return atomic_write(checksum_path(name, directory), lines)


def _recorded_checksums(name: str, directory: Path, scale: str | None) -> dict[str, str]:
    """File name -> sha256 from ``FIG.sha256``; a ValueError naming the file when it is missing or unreadable."""
    path = checksum_path(name, directory)
    redo = (f"rewrite the tables from their store: python -m resnetlearn reproduce {name}"
            + (f" --scale {scale}" if scale else "") + f" --out {directory} (stored points are reused)")
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ValueError(f"{path} is missing: the tables of {name!r} in {directory} cannot be verified "
                         f"({redo})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} cannot be read ({e}); {redo}") from None
    recorded = {}
    for i, line in enumerate(text.splitlines(), 1):
        digest, _, fname = line.partition("  ")
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not fname:
            raise ValueError(f"{path}, line {i}: not '<sha256>  <file name>' ({line!r}); {redo}")
        recorded[fname] = digest
    return recorded


def verify_table(path, scale: str | None = None) -> None:
    """Refuse a written table whose bytes are not those recorded in its ``FIG.sha256`` when it was
    written: a ValueError naming the table, the checksum file and how to rewrite it."""
    path = Path(path)
    name = path.name.removesuffix(".csv").removesuffix("_runs")
    recorded = _recorded_checksums(name, path.parent, scale)
    sums = checksum_path(name, path.parent)
    if path.name not in recorded:
        raise ValueError(f"{sums} records no checksum for {path.name}: {path} cannot be verified")
    got = hashlib.sha256(path.read_bytes()).hexdigest()
    if got != recorded[path.name]:
        raise ValueError(f"{path} does not match the sha256 recorded in {sums} when it was written "
                         f"({got[:12]}… instead of {recorded[path.name][:12]}…): the table was edited or "
                         f"corrupted, and its numbers are not the computed ones. Rewrite it from its store: "
                         f"python -m resnetlearn reproduce {name}" + (f" --scale {scale}" if scale else "")
                         + f" --out {path.parent} (stored points are reused)")


_POINT_COLS = ["figure", "scale", "model", "mode", "m", "n_train", "beta", "alpha", "epochs", "select", "d", "init",
               "panel"]
TABLE_COLS = _POINT_COLS + [
    "test_error", "median", "seed_min", "seed_max", "n_seeds", "seed_errors", "exact_test_error", "exact_ridge_rel",
    "exact_ridge_at_grid_edge", "plotted", "train_error", "frobenius_W", "lr", "wd", "lr_at_grid_edge",
    "wd_at_grid_edge", "ridge_rel", "setting", "ridge_at_grid_edge", "param_at_grid_edge", "grid_edges", "diverged",
    "grid_size",
    "seconds", "device", "grid"]
"""Columns of ``FIG.csv``: the point, its selected (seed-0) test error, the spread over seeds, the exact kernel
solution of a (last)/(ntk) point, the number the plot draws, the selection and grid-edge flags."""


def _table_row(r: dict) -> dict:
    errs = [e for e in seed_errors(r) if _finite(e)]
    row = dict(r, median=median_error(r), seed_min=min(errs) if errs else None, seed_max=max(errs) if errs else None,
               n_seeds=len(r["seed_errors"]) if r.get("seed_errors") is not None else 1, plotted=plotted_error(r))
    for k in ("grid", "seed_errors", "grid_edges"):
        if r.get(k) is not None:
            row[k] = json.dumps(r[k])
    return row
"""The configuration columns repeated on every row of ``FIG_runs.csv``."""


def write_provenance(result: FigureResult, out, scale: str, command: str) -> Path:
    """Where the numbers came from: configuration, versions, device, date, wall time."""
    import platform

    import torch as _torch

    from .device import describe_device

    devices = sorted({r.get("device", "") for r in result.rows})
    info = dict(figure=result.name, scale=scale, scale_note=SCALE_NOTES[scale], settings=_scale_settings(scale),
                command=command,
                resnetlearn=_version(), torch=_torch.__version__, python=platform.python_version(),
                machine=platform.machine(), device=devices or [describe_device()],
                torch_threads=_torch.get_num_threads(),  # float32 sums depend on it: rerun with the same setting
                date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                wall_time_s=round(result.wall_time, 1),
                compute_s=round(sum(r.get("seconds") or 0.0 for r in result.rows), 1),  # incl. points reused
                points=len(result.rows),
                reused_from_store=result.skipped, summary=result.summary)
    return atomic_write(Path(out) / f"{result.name}.provenance.json", json.dumps(info, indent=1, default=str))


# ----------------------------------------------------------------- reading tables back
def _parse(row: dict, ints=(), floats=(), bools=(), where: str = "") -> None:
    """CSV strings back to values in place: empty or "None" cells become None (booleans: False),
    booleans are "True"/"False"; any other cell raises a ValueError naming ``where`` and the column."""
    def to_bool(v):
        if v not in ("True", "False"):
            raise ValueError(v)
        return v == "True"

    def cell(k, convert, kind):
        v = row.get(k)
        if v in (None, "", "None"):
            return None
        try:
            return convert(v)
        except ValueError:
            raise ValueError(f"{where}: column {k!r} holds {v!r}, not {kind}") from None

    for k in ints:
        row[k] = cell(k, int, "an integer")
    for k in floats:
        row[k] = cell(k, float, "a number")
    for k in bools:
        row[k] = bool(cell(k, to_bool, "True or False"))


def _read_csv(path: Path, required: tuple[str, ...]) -> list[tuple[int, dict]]:
    """(line number, row) of a table written by :func:`write_outputs`; empty, cut-short and
    malformed files raise a ValueError naming the file and the line."""
    import csv
    import io

    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path} cannot be read: {e}") from None
    if not text.strip():
        raise ValueError(f"{path} is empty (no header, no rows)")
    if not text.endswith("\n"):
        raise ValueError(f"{path} is truncated: its last line ends without a line break")
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        header = reader.fieldnames or []
        absent = [c for c in required if c not in header]
        if absent:
            raise ValueError(f"{path} lacks the column(s) {', '.join(absent)} (header: {','.join(header)})")
        rows = []
        for r in reader:
            if None in r:
                raise ValueError(f"{path}, line {reader.line_num}: more fields than the header's {len(header)}")
            if any(v is None for v in r.values()):
                n = sum(v is not None for v in r.values())
                raise ValueError(f"{path}, line {reader.line_num}: {n} of {len(header)} fields (truncated)")
            rows.append((reader.line_num, r))
    except csv.Error as e:
        raise ValueError(f"{path} is not a valid CSV table: {e}") from None
    return rows


def _provenance(name: str, directory: Path) -> dict:
    """The provenance written next to a figure's tables; the loaders need its scale to know the point list."""
    path = directory / f"{name}.provenance.json"
    if not path.exists():
        raise ValueError(f"{path} is missing: without it the tables of {name!r} in {directory} cannot be checked "
                         f"for completeness (rerun: python -m resnetlearn reproduce {name} --out {directory})")
    try:
        prov = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{path} cannot be read as JSON: {e}") from None
    if not isinstance(prov, dict) or prov.get("scale") not in SCALES:
        got = prov.get("scale") if isinstance(prov, dict) else None
        raise ValueError(f"{path} records no valid scale (got {got!r}; allowed: {', '.join(SCALES)})")
    return prov


def _expected_points(name: str, directory: Path, prov: dict) -> list[dict]:
    """The figure's own point list at the scale its provenance records."""
    expected = _points(name, prov["scale"], None, "test")
    if prov.get("points") is not None and prov["points"] != len(expected):
        raise ValueError(f"{directory / (name + '.provenance.json')} records {prov['points']} points, but {name} "
                         f"at scale {prov['scale']!r} has {len(expected)} (written by another version of the scales?)")
    return expected


def _match_points(path: Path, name: str, scale: str, rows: list[tuple[int, dict]], expected: list[dict],
                  one_row_each: bool) -> dict[tuple, list[dict]]:
    """Rows grouped by the point they belong to; rows of another figure, scale or point, duplicated
    points (``one_row_each``) and missing points raise a ValueError naming the file and the points."""
    by_id = {_point_id(p): p for p in expected}
    groups: dict[tuple, list[dict]] = {}
    for line, r in rows:
        if r["figure"] != name or r["scale"] != scale:
            raise ValueError(f"{path}, line {line}: a row of {r['figure']} at scale {r['scale']!r}, "
                             f"expected {name} at scale {scale!r}")
        pid = _point_id(r)
        if pid not in by_id:
            raise ValueError(f"{path}, line {line}: {_point_label(r)} is not a point of {name} at scale {scale!r}")
        if one_row_each and pid in groups:
            raise ValueError(f"{path}, line {line}: {_point_label(r)} appears twice")
        groups.setdefault(pid, []).append(r)
    missing = [p for pid, p in by_id.items() if pid not in groups]
    if missing:
        raise ValueError(f"{path} has {len(expected) - len(missing)} of {len(expected)} points; missing: "
                         + ", ".join(_point_label(p) for p in missing))
    return groups


def load_figure(name: str, directory) -> FigureResult:
    """A figure's shipped (or previously written) results from its CSV table.

    The table must hold exactly one row for every point of the figure at
    the scale its provenance file records, and its bytes must be those
    recorded in ``FIG.sha256`` when it was written (:func:`verify_table`);
    anything else (no provenance, an empty or truncated file, a missing or
    extra row, a cell that is not a number, an edited number, no checksum)
    raises a ValueError that names the file and the problem.
    """
    directory = Path(directory)
    path = directory / f"{name}.csv"
    if not path.exists():
        raise ValueError(f"no results for {name!r} in {directory} (run: python -m resnetlearn reproduce {name})")
    prov = _provenance(name, directory)
    expected = _expected_points(name, directory, prov)
    rows = _read_csv(path, ("figure", "scale", "model", "mode", "m", "n_train", "beta", "alpha", "d", "wd",
                            "test_error"))
    for line, r in rows:
        where = f"{path}, line {line}"
        _parse(r, ("m", "n_train", "epochs", "diverged", "grid_size", "d", "n_seeds"),
               ("test_error", "train_error", "frobenius_W", "lr", "wd", "beta", "alpha", "seconds", "median",
                "seed_min", "seed_max", "exact_test_error", "exact_ridge_rel", "plotted", "ridge_rel"),
               ("lr_at_grid_edge", "wd_at_grid_edge", "exact_ridge_at_grid_edge", "ridge_at_grid_edge",
                "param_at_grid_edge"), where=where)
        if r["test_error"] is None:
            raise ValueError(f"{where}: no test_error")
        for k in ("grid", "seed_errors", "grid_edges"):
            try:
                r[k] = json.loads(r[k]) if r.get(k) else None
            except ValueError:
                raise ValueError(f"{where}: column {k!r} is not valid JSON") from None
        if r["seed_errors"] is not None and len(r["seed_errors"]) != r["n_seeds"]:
            raise ValueError(f"{where}: {len(r['seed_errors'])} seed errors but n_seeds = {r['n_seeds']}")
        r["panel"] = r.get("panel") or None
    groups = _match_points(path, name, prov["scale"], rows, expected, one_row_each=True)
    for p in expected:
        r = groups[_point_id(p)][0]
        want = 1 + len(p.get("rerun_seeds") or []) if p["model"] != "hand_built" and p["mode"] != "kernel" else None
        if want is not None and r.get("n_seeds") is not None and r["n_seeds"] not in (0, want):
            raise ValueError(f"{path}: {_point_label(p)} has {r['n_seeds']} seeds, its configuration has {want}")
    verify_table(path, prov["scale"])  # last, so that a damaged table is named for what is wrong with it
    table = [r for _, r in rows]
    summary, ok = summarise(name, table)
    return FigureResult(name, table, summary, ok, prov.get("wall_time_s", math.nan), provenance=prov)


def load_latest(name: str, root, scales=("paper", "cpu", "quick")) -> FigureResult:
    """The figure from the largest scale under ``root`` (``root/<scale>/``) whose tables are complete
    for this version of the figures; the reasons the larger ones were skipped are kept in
    ``result.provenance["skipped"]``. Raises a ValueError naming every directory tried when none loads."""
    root, why = Path(root), []
    for scale in scales:
        if not (root / scale / f"{name}.csv").exists():
            continue
        try:
            res = load_figure(name, root / scale)
        except ValueError as e:
            why.append(f"{scale}: {e}")
            continue
        res.provenance = dict(res.provenance or {}, directory=str(root / scale), skipped=why)
        return res
    raise ValueError(f"no loadable results for {name!r} under {root} (tried {', '.join(scales)})"
                     + ("; " + "; ".join(why) if why else ""))


def load_runs(name: str, directory) -> list[dict]:
    """Every run of a figure's grids (``FIG_runs.csv``), numbers parsed.

    Checked like :func:`load_figure`: every point of the figure is present,
    a network point with its whole lr × wd grid, a kernel point with at
    least one candidate, no point has more than one selected run, and the
    file's checksum is the one recorded when it was written.
    """
    directory = Path(directory)
    path = directory / f"{name}_runs.csv"
    if not path.exists():
        raise ValueError(f"no per-run table for {name!r} in {directory} (run: python -m resnetlearn reproduce {name})")
    prov = _provenance(name, directory)
    expected = _expected_points(name, directory, prov)
    rows = _read_csv(path, tuple(c for c in _POINT_COLS if c not in ("init", "panel")) + ("wd", "selected"))
    for line, r in rows:
        _parse(r, ("m", "n_train", "epochs", "seed", "d"),
               ("lr", "wd", "beta", "alpha", "ridge_rel", "train_error", "test_error", "val_error", "frobenius_W"),
               ("selected", "diverged"), where=f"{path}, line {line}")
        r["role"] = r.get("role") or "grid"
    groups = _match_points(path, name, prov["scale"], rows, expected, one_row_each=False)
    for p in expected:
        runs = groups[_point_id(p)]
        grid = p["model"] != "hand_built" and p["mode"] != "kernel"
        want = len(p["lrs"]) * len(p["wds"]) if grid else 1 if p["model"] == "hand_built" else None
        n_grid = sum(r.get("role") != "rerun" for r in runs)
        if want is not None and n_grid != want:
            raise ValueError(f"{path}: {_point_label(p)} has {n_grid} runs, its grid has {want}")
        n_rerun, seeds = len(runs) - n_grid, len(p.get("rerun_seeds") or [])
        if n_rerun not in (0, seeds) or (n_rerun == 0 and seeds and any(r["selected"] for r in runs)):
            raise ValueError(f"{path}: {_point_label(p)} has {n_rerun} seed reruns of its selected cell, "
                             f"expected {seeds}")
        if sum(r["selected"] for r in runs) > 1:
            raise ValueError(f"{path}: {_point_label(p)} has {sum(r['selected'] for r in runs)} selected runs")
    verify_table(path, prov["scale"])
    return [r for _, r in rows]


def grid_table(runs: list[dict], **point) -> str:
    """The lr × wd grid of one point as text (test error per cell; ``*`` marks
    the selected run, ``div`` a diverged one), e.g.
    ``grid_table(runs, model="3resnet", mode="all", m=200)``."""
    matching = [r for r in runs if all(r.get(k) == v for k, v in point.items())]
    if not matching:
        raise ValueError(f"no runs match {point}")
    sel = [r for r in matching if r.get("role") != "rerun"]
    reruns = [r for r in matching if r.get("role") == "rerun"]
    lrs, wds = sorted({r["lr"] for r in sel}), sorted({r["wd"] for r in sel})
    cell = {(r["lr"], r["wd"]): r for r in sel}
    lines = ["lr \\ wd".rjust(8) + "".join(f"{wd:>10g}" for wd in wds)]
    for lr in lrs:
        row = f"{lr:>8g}"
        for wd in wds:
            r = cell.get((lr, wd))
            mark = "*" if r is not None and r["selected"] else ""
            txt = "" if r is None else "div" if r["diverged"] else f"{r['test_error']:.3f}{mark}"
            row += f"{txt:>10}"
        lines.append(row)
    if reruns:
        errs = ", ".join("div" if r["diverged"] else f"{r['test_error']:.3f}" for r in reruns)
        lines.append(f"selected cell (*) retrained with seeds {', '.join(str(r['seed']) for r in reruns)}: {errs}")
    return "\n".join(lines)
