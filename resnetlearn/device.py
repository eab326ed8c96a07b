"""Choosing the torch device: GPU when present, CPU otherwise."""

from __future__ import annotations

import torch

DEVICE_CHOICES = ("auto", "cpu", "cuda", "mps")


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps and mps.is_available())


def select_device(device=None) -> torch.device:
    """Resolve a device request to a :class:`torch.device`.

    An explicit request for a device that is not present raises an error rather than falling back to the CPU, so a
    run meant for a GPU cannot quietly take hours on a laptop.

    Parameters
    ----------
    device : str, torch.device or None, default None
        ``None`` or ``"auto"`` picks CUDA when present, then Apple MPS, then the CPU; otherwise one of ``"cpu"``,
        ``"cuda"``, ``"cuda:N"``, ``"mps"`` (or a :class:`torch.device` naming one of them).

    Returns
    -------
    torch.device
        The device to use.

    Raises
    ------
    ValueError
        If ``device`` is not one of the allowed values, or names CUDA or MPS where it is not available.
    """
    if isinstance(device, torch.device):
        device = str(device)
    if device is None or device == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if _mps_available():
            return torch.device("mps")
        return torch.device("cpu")
    if not isinstance(device, str) or device.split(":")[0] not in DEVICE_CHOICES:
        raise ValueError(f"device must be one of {DEVICE_CHOICES} (or 'cuda:N'), got {device!r}")
    kind = device.split(":")[0]
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but no CUDA GPU is available here; "
            "use device='cpu' or device='auto'"
        )
    if kind == "mps" and not _mps_available():
        raise ValueError(f"device={device!r} was requested but Apple MPS is not available here")
    return torch.device(device)


def describe_device(device=None) -> str:
    """A one-line human description of a device, e.g. for a notebook banner.

    Parameters
    ----------
    device : str, torch.device or None, default None
        The request, resolved by :func:`select_device`.

    Returns
    -------
    str
        ``"GPU: <name>"`` for CUDA, ``"GPU: Apple MPS"``, or ``"CPU (<n> threads)"`` with torch's thread count.
    """
    dev = select_device(device)
    if dev.type == "cuda":
        return f"GPU: {torch.cuda.get_device_name(dev)}"
    if dev.type == "mps":
        return "GPU: Apple MPS"
    return f"CPU ({torch.get_num_threads()} threads)"
