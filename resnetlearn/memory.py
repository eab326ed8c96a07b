"""Memory needed by a request, checked before anything is allocated.

Every entry point that allocates by width (the networks' training,
:class:`~resnetlearn.classroom.live.LiveConfig`, :class:`~resnetlearn.classroom.race.RaceConfig`,
the kernels' Gram matrices and feature maps) estimates the bytes it will hold
with :func:`resnetlearn.learners.training.training_bytes` (the networks' part, read from their layer
graph) / :func:`gram_bytes` and passes them to
:func:`check_memory`, which refuses a request that does not fit in
:data:`MEMORY_FRACTION` of the memory available now (free RAM, or free GPU
memory on a CUDA device), naming the width, the need, the limit and a width
that fits. torch's own "can't allocate N bytes" names bytes rather than the
setting that caused them, and a notebook's kernel may be killed by the
operating system before torch can raise at all. Where a request can be split (the lr × wd grid of a network
point, trained in chunks of independent models), :func:`largest_fitting` finds the most that fit under the same
limit instead of refusing.

Several processes running points at once on one CUDA device (``python -m resnetlearn reproduce --workers W``) each
check the free memory when they start, before the others have allocated; so each worker declares itself one of W
(:func:`share_device`, called by :func:`resnetlearn.reproduce.running.worker_init`) and plans with at most its
share of the device (:func:`device_share`: min(free, total / W)). On the CPU the available RAM is read as before.

The estimates are upper bounds of the tensors the code keeps alive at once
(our accounting, not a measurement of torch's allocator):

* training G models of P parameters each: :data:`PARAM_COPIES` copies of the
  G·P numbers (initial weights, the trained copy, gradient, momentum buffer,
  two update temporaries), plus the hidden activations of the largest
  forward pass (the whole training or test set at evaluation:
  :data:`ACTIVATION_COPIES` tensors of G·n·m numbers, twice that for the
  linearised network of mode ``ntk``, which carries tangents), plus one
  epoch of gathered inputs and labels (G·n·(d + k));
* a kernel computation: ``copies`` float64 matrices of n1 × n2.
"""

from __future__ import annotations

import os

import torch

from . import validation as V

MEMORY_FRACTION = 0.8
"""A request may use at most this share of the memory available when it starts."""
PARAM_COPIES = 6
ACTIVATION_COPIES = 6
_SHARERS = 1
"""How many processes of this run share a CUDA device (:func:`share_device`); 1 in a single process."""


class InsufficientMemoryError(ValueError, MemoryError):
    """A request that would not fit in memory, refused before allocating (a ValueError and a MemoryError)."""


def share_device(workers: int) -> None:
    """Declare this process one of ``workers`` processes that run points at once on one CUDA device.

    From now on it plans with at most 1/``workers`` of the device's memory (:func:`device_share`). The CPU is not
    affected.

    Parameters
    ----------
    workers : int
        How many processes share the device, at least 1.
    """
    global _SHARERS
    _SHARERS = V.integer("workers", workers, lo=1)


def device_share(free: int, total: int, workers: int = 1) -> int:
    """The bytes one of ``workers`` processes sharing a device may plan with.

    All that is free when it is alone, else at most its 1/``workers`` of the total. The shares add up to at most the
    total however the workers' starts interleave (each one's later allocations stay within its share, which the free
    memory it saw may exceed).

    Parameters
    ----------
    free : int
        Bytes free on the device now.
    total : int
        The device's bytes in all.
    workers : int, default 1
        How many processes share it.

    Returns
    -------
    int
    """
    return int(free) if workers == 1 else min(int(free), int(total) // workers)


def available_bytes(device=None) -> tuple[int | None, str]:
    """The bytes available now on a device, and what they are.

    Parameters
    ----------
    device : str, torch.device or None, default None
        The device; None is the CPU.

    Returns
    -------
    bytes : int or None
        For CUDA, the free GPU memory with torch's cached blocks (this process's share of it, :func:`device_share`);
        otherwise the operating system's available RAM (MemAvailable of /proc/meminfo, or the total RAM where that is
        missing); None when it cannot be read.
    what : str
        What the number is, for messages (e.g. ``"available RAM"``).
    """
    dev = torch.device("cpu" if device is None else device)
    if dev.type == "cuda":  # blocks torch keeps cached (e.g. a finished CUDA graph's pool) are free for torch too
        free, total = torch.cuda.mem_get_info(dev)
        cached = torch.cuda.memory_reserved(dev) - torch.cuda.memory_allocated(dev)
        share = "" if _SHARERS == 1 else f"; at most 1/{_SHARERS} of its {_gib(total)}, {_SHARERS} workers share it"
        return device_share(free + cached, total, _SHARERS), f"free memory on {dev} (torch's cache included{share})"
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "available RAM"
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "total RAM"
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return None, "unknown"


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def itemsize(dtype) -> int:
    """Bytes of one number of a floating dtype.

    Parameters
    ----------
    dtype : torch.dtype
        A floating dtype.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If ``dtype`` is not a floating dtype (see :func:`resnetlearn.validation.float_dtype`).
    """
    return torch.finfo(V.float_dtype(dtype)).bits // 8


def gram_bytes(n1: int, n2: int, copies: int = 3) -> int:
    """Bytes of ``copies`` float64 matrices of n1 × n2 (a Gram matrix and its working copies).

    Parameters
    ----------
    n1 : int
        Rows, at least 0.
    n2 : int
        Columns, at least 0.
    copies : int, default 3
        Matrices held at once, at least 1.

    Returns
    -------
    int
    """
    return 8 * V.integer("n1", n1, lo=0) * V.integer("n2", n2, lo=0) * V.integer("copies", copies, lo=1)


def largest_fitting(need_at, most: int, *, device=None, have: int | None = None) -> int:
    """The largest n ≤ ``most`` whose request fits under the limit of :func:`check_memory`.

    The limit is :data:`MEMORY_FRACTION` of ``have`` bytes. Found by bisection.

    Parameters
    ----------
    need_at : callable
        ``need_at(n)`` → bytes, increasing in n.
    most : int
        The largest n wanted.
    device : str, torch.device or None, default None
        Where ``have`` is read when it is None; None is the CPU.
    have : int or None, default None
        The bytes available; None reads them on ``device`` (:func:`available_bytes`).

    Returns
    -------
    int
        0 when not even n = 1 fits, ``most`` when it fits or the memory cannot be read.
    """
    if have is None:
        have, _ = available_bytes(device)
    if have is None or need_at(most) <= MEMORY_FRACTION * have:
        return most
    lo, hi = 0, most
    while hi - lo > 1:  # need_at(lo) fits (or lo = 0), need_at(hi) does not
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if need_at(mid) <= MEMORY_FRACTION * have else (lo, mid)
    return lo


def check_memory(need: int, *, what: str, width_name: str | None = None, width: int | None = None,
                 need_at=None, device=None) -> None:
    """Refuse a request of ``need`` bytes that exceeds :data:`MEMORY_FRACTION` of the memory available on ``device``.

    Nothing is refused when the available memory cannot be read.

    Parameters
    ----------
    need : int
        The request's bytes.
    what : str
        What is requested, named in the message.
    width_name : str or None, default None
        The name of the setting that sizes the request (e.g. ``"m"``).
    width : int or None, default None
        Its value.
    need_at : callable or None, default None
        Width → bytes, increasing. With ``width_name`` and ``width``, the message names the largest width that fits
        (:func:`largest_fitting`).
    device : str, torch.device or None, default None
        The device; None is the CPU.

    Raises
    ------
    InsufficientMemoryError
        A ValueError and a MemoryError naming ``what``, the need, the limit and, where it can, a width that fits.
    """
    have, kind = available_bytes(device)
    if have is None:
        return
    limit = MEMORY_FRACTION * have
    if need <= limit:
        return
    hint = ""
    if width_name is not None and width is not None and need_at is not None:
        lo = largest_fitting(need_at, width, have=have)
        hint = (f"; {width_name} = {lo} fits" if lo >= 1 else
                f"; even {width_name} = 1 does not fit, so reduce the other sizes")
    setting = f" with {width_name} = {width}" if width_name is not None and width is not None else ""
    raise InsufficientMemoryError(
        f"{what}{setting} needs about {_gib(need)} but the limit is {_gib(limit)} "
        f"({MEMORY_FRACTION:.0%} of the {_gib(have)} {kind}){hint}; use a smaller setting or a machine with "
        "more memory")
