"""Reproduce the experiments of Allen-Zhu & Li, "What Can ResNet Learn Efficiently, Going Beyond Kernels?".

Example: python -m resnetlearn reproduce fig2a --scale quick     (writes ./my-results/quick/)

Results go to a folder of yours, ./my-results/SCALE by default; the results
shipped with the package (results/SCALE in a clone) are only written with
--into-shipped. Finished points are kept in OUT/store, so running the same command again
resumes an interrupted sweep. Ctrl-C stops at once, keeps every finished
point, discards the one in progress and exits with status 130; SIGTERM
(kill PID) does the same with status 143. Worker processes (--workers)
end with the command however it ends.
"""

from __future__ import annotations

import argparse
import errno
import multiprocessing
import os
import shlex
import signal
import sys
import tempfile
import textwrap
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from .classroom.figures_plotly import result_png
from .device import select_device
from .reproduce import (
    DEFAULT_OUT,
    FigureInterrupted,
    WorkersUnavailable,
    estimate_work,
    run_figure,
    stop_process_pool,
    worker_init,
    write_outputs,
    write_provenance,
)
from .reproduce.figures import SCALE_NOTES, SCALES, SPECS, names, names_at
from .reproduce.figures import points as figure_points
from .reproduce.store import shipped_results

CPU_SCALE_TIME = "at cpu scale the work estimate timed the SGD steps of all figures at 5.5 h in one process, 2.7 h " \
                 "with --workers 2"
"""What ``--help`` adds to the scales' descriptions
(:data:`~resnetlearn.reproduce.figures.SCALE_NOTES`): the measured time."""

INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as shells report it."""

TERMINATED = 143
"""Exit status after SIGTERM (128 + SIGTERM)."""


FULL_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""OSError numbers of a file that found no room: a full disk, a quota, a file-size limit (``ulimit -f``)."""

WRITE_ERRORS = (*FULL_ERRORS, errno.EROFS, errno.EACCES, errno.EPERM)
"""OSError numbers reported as "cannot write FILE" with what to do, instead of a traceback."""


class Terminated(KeyboardInterrupt):
    """SIGTERM reached the command: stop as after Ctrl-C (finished points kept, workers stopped)."""


def _on_sigterm(signum, frame):
    if os.getpid() != _on_sigterm.pid:  # a worker forked before its initializer reset SIGTERM: just end it
        os._exit(TERMINATED)
    if _on_sigterm.seen:  # a second SIGTERM during the clean-up: leave at once
        os._exit(TERMINATED)  # the workers follow (worker_init asked the kernel to signal them)
    _on_sigterm.seen = True
    raise Terminated("SIGTERM")


_on_sigterm.pid, _on_sigterm.seen = os.getpid(), False


def _parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The command line and its ``reproduce`` sub-command."""
    ap = argparse.ArgumentParser(prog="python -m resnetlearn", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("reproduce", help="run (or resume) one of the paper's experiments",
                        description="Run (or resume) one of the paper's experiments and write its table, "
                                    "per-run table, plot, summary, provenance and the tables' sha256 "
                                    "(FIG.sha256, checked whenever the tables are read back) to OUT. "
                                    "Before the first point it says how much work lies ahead.",
                        formatter_class=argparse.RawTextHelpFormatter)
    only = [f"{name} ({', '.join(s.scales)} only)" for name, s in SPECS.items() if s.scales != SCALES]
    rp.add_argument("figure", choices=(*names(), "all"),  # read when the parser is built: a new entry is listed
                    help="the experiment; all: every figure defined at --scale"
                         + (f"; defined at some scales only: {'; '.join(only)}" if only else ""))
    rp.add_argument("--scale", choices=SCALES, default="quick",
                    help="how large a run (default: quick):\n"
                         + "\n".join(textwrap.fill(SCALE_NOTES[s], 90, initial_indent=f"  {s:6s} ",
                                                    subsequent_indent=" " * 9) for s in SCALES)
                         + "\n" + textwrap.fill(CPU_SCALE_TIME, 90, initial_indent=" " * 9, subsequent_indent=" " * 9))
    rp.add_argument("--device", default=None, help="cpu, cuda, cuda:N, mps or auto (default: GPU when present)")
    rp.add_argument("--out", default=None,
                    help="directory for the results store, tables and plots (created if missing; default:\n"
                         f"./{DEFAULT_OUT}/SCALE in the current directory). A folder inside the shipped\n"
                         "results/ of a clone is refused unless --into-shipped is given")
    rp.add_argument("--into-shipped", action="store_true",
                    help="allow --out inside the shipped results/ folder (git-tracked), to refresh them on purpose")
    rp.add_argument("--select", choices=["test", "val"], default="test",
                    help="pick lr/wd by test error (as the paper) or on validation samples drawn fresh "
                         "(training on all N)")
    rp.add_argument("--workers", type=int, default=0,
                    help="run points in this many local processes (0, the default: in this process)")
    rp.add_argument("--checkpoint-models", type=int, default=None, metavar="K",
                    help="train at most K models of a grid at once and keep each finished group in the store,\n"
                         "so a point that takes hours resumes part-way after Ctrl-C (same numbers)")
    return ap, rp


def _output_directory(text: str, *, into_shipped: bool = False) -> Path:
    """``--out`` as a directory that exists and accepts files (created if missing); ValueError otherwise, and
    for a folder inside the shipped results unless ``into_shipped``."""
    if not text.strip():
        raise ValueError("--out must name a directory, got an empty string")
    out = Path(text)
    shipped = shipped_results(out)
    if shipped is not None and not into_shipped:
        raise ValueError(f"--out {text!r} is inside the results shipped with the package ({shipped}, tracked by "
                         f"git): write your run elsewhere (leave out --out for ./{DEFAULT_OUT}/SCALE), or add "
                         f"--into-shipped to replace the shipped results on purpose")
    for p in (out, out / "store"):
        if p.exists() and not p.is_dir():
            raise ValueError(f"--out {text!r}: {p} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out {text!r}: cannot create the directory ({e.strerror or e})") from None
    try:  # the only reliable test (permissions, read-only mounts, quotas): write a file and remove it
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as e:
        raise ValueError(f"--out {text!r} is not writable ({e.strerror or e})") from None
    return out


def _check(args):
    """Every argument checked before the first point starts; returns the output directory and the device."""
    if args.workers < 0:
        raise ValueError(f"--workers must be an integer >= 0 (0: run in this process), got {args.workers}")
    if args.checkpoint_models is not None and args.checkpoint_models < 1:
        raise ValueError(f"--checkpoint-models must be an integer >= 1 (models trained at once), "
                         f"got {args.checkpoint_models}")
    if args.figure != "all" and args.scale not in SPECS[args.figure].scales:
        raise ValueError(f"{args.figure} is defined at --scale {', '.join(SPECS[args.figure].scales)} only, "
                         f"not at --scale {args.scale}")
    try:
        device = select_device(args.device)
    except ValueError as e:  # absent or unknown: says which devices exist here
        raise ValueError(f"--device: {e}") from None
    out = args.out if args.out is not None else str(Path(DEFAULT_OUT) / args.scale)
    return _output_directory(out, into_shipped=args.into_shipped), device


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ap, rp = _parser()
    args = ap.parse_args(argv)
    try:
        out, device = _check(args)
    except ValueError as e:
        rp.error(str(e))  # exits with status 2 before any point starts
    command = "python -m resnetlearn " + " ".join(shlex.quote(a) for a in argv)
    figures = names_at(args.scale) if args.figure == "all" else (args.figure,)
    workers = args.workers
    if workers > 0:  # more workers than points would only idle (and a huge number would exhaust the processes)
        most = max(len(figure_points(fig, args.scale, device=args.device, select=args.select)) for fig in figures)
        if workers > most:
            print(f"--workers {workers}: at most {most} points run at once here; starting {most} workers",
                  file=sys.stderr, flush=True)
            workers = most
    executor = None
    finished: list[str] = []
    completed = False
    _on_sigterm.pid, _on_sigterm.seen = os.getpid(), False
    try:  # SIGTERM to this process alone must stop the workers too: handle it like Ctrl-C
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread: leave SIGTERM alone
        previous = None
    try:
        if workers > 0:  # CUDA does not survive fork(): workers that may use it are spawned afresh; the start
            # method is always named, since worker_init checks its parent (a forkserver, Python 3.14's default on
            # Linux, would be the workers' parent instead of this process)
            context = multiprocessing.get_context("spawn" if device.type == "cuda" or not hasattr(os, "fork")
                                                  else "fork")
            executor = ProcessPoolExecutor(workers, mp_context=context, initializer=worker_init,
                                           initargs=(os.getpid(), workers))
        _announce_work(args, figures, device=device, out=out, workers=workers)
        for fig in figures:
            res = run_figure(fig, args.scale, args.device, out=out / "store", executor=executor,
                             select=args.select, checkpoint_models=args.checkpoint_models)
            paths = write_outputs(res, out, picture=result_png)
            write_provenance(res, out, args.scale, command)
            finished.append(fig)
            print(res.summary)
            print(f"  {len(res.rows)} points ({res.skipped} reused from the store) in {res.wall_time:.0f} s; "
                  f"table {paths['table']}, plot {paths['plot']}", flush=True)
        completed = True
    except KeyboardInterrupt as e:
        by_sigterm = _on_sigterm.seen
        _report_interrupt(e, finished, out=out, command=command,
                          how="terminated (SIGTERM)" if by_sigterm else "interrupted (Ctrl-C)")
        return TERMINATED if by_sigterm else INTERRUPTED
    except WorkersUnavailable as e:
        print(f"\n{e}.\nfinished points are stored in {out / 'store'}; resume with fewer --workers:\n  {command}",
              file=sys.stderr, flush=True)
        return 1
    except BrokenProcessPool as e:  # a worker ended abruptly: killed (the out-of-memory killer, a signal) or crashed
        print(f"\na worker process ended abruptly ({e}); the system's out-of-memory killer ends the largest "
              f"process when memory runs out, so memory may be the cause.\nEvery point finished before this is "
              f"stored in {out / 'store'} and is reused: the same command resumes (with fewer --workers, or "
              f"without, if memory is short):\n  {command}", file=sys.stderr, flush=True)
        return 1
    except OSError as e:  # a file that could not be written: the disk full, a quota, a read-only folder
        if e.errno not in WRITE_ERRORS:
            raise
        _report_write_error(e, out=out, command=command)
        return 1
    finally:  # only a run that finished waits for its pool; any other end terminates the workers now
        if executor is not None:
            if completed:
                executor.shutdown()
            else:
                stop_process_pool(executor)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0


def _announce_work(args, figures, *, device, out: Path, workers: int) -> None:
    """Before the first point: what the run will compute and how long its SGD steps take here (timed on a
    few real steps), and that the paper's scale is meant for a GPU when there is none."""
    if args.scale == "tiny":
        return
    if args.scale == "paper" and device.type != "cuda":
        print(f"--scale paper is the protocol of §8 (lr and wd from the paper's {{1, 2, 5}}·10^k set, 800 epochs, "
              f"widths up to 2000, Figure 4 up to §8.2's 100000 and 50000) and is meant for a GPU; this run uses "
              f"{device.type}. --scale cpu is the largest scale a 2-core CPU finishes in a working session.",
              file=sys.stderr, flush=True)
    est = estimate_work(figures, args.scale, device=args.device, select=args.select, store=out / "store")
    print(est.text(args.scale, workers), file=sys.stderr, flush=True)


def _report_write_error(e: OSError, *, out: Path, command: str) -> None:
    """Say on stderr which file could not be written, why, and what to do (no traceback)."""
    where = e.filename or "a result file"
    full = e.errno in FULL_ERRORS
    todo = ("free space on that disk, or run again with --out on a disk that has room" if full else
            "make that folder writable, or run again with --out elsewhere")
    print(f"\ncannot write {where}: {e.strerror or e}.\n{todo[0].upper() + todo[1:]}. Every point finished "
          f"before this is stored in {out / 'store'} and is reused when you run the same command again:\n"
          f"  {command}", file=sys.stderr, flush=True)


def _report_interrupt(e: KeyboardInterrupt, finished: list[str], *, out: Path, command: str, how: str) -> None:
    """Say on stderr what Ctrl-C (or SIGTERM) kept and how to go on."""
    lines = ["", f"{how}."]
    if finished:
        lines.append(f"finished and written to {out}: {', '.join(finished)}")
    if isinstance(e, FigureInterrupted):
        kept = (f"; {e.kept_groups} finished group(s) of their models are kept beside them (*.partial) and "
                f"reused" if e.kept_groups else "")
        lines.append(f"{e.figure}: {e.saved} of {e.total} points are stored in {e.store}; the point(s) in progress "
                     f"were discarded{kept}, and the tables of {e.figure} were not written.")
    lines.append(f"resume with the same command (stored points are reused):\n  {command}")
    print("\n".join(lines), file=sys.stderr, flush=True)


def run(argv=None):
    """Run :func:`main` and exit the process with its status."""
    status = main(argv)
    if status in (INTERRUPTED, TERMINATED):
        # everything worth keeping is on disk (atomic writes) and the workers are stopped; skip the
        # interpreter's teardown of torch & co., which alone takes a second or more on a busy CPU
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":
    run()
