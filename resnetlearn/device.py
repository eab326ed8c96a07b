"""Choosing the torch device: GPU when present, CPU otherwise."""

from __future__ import annotations

import torch

DEVICE_CHOICES = ("auto", "cpu", "cuda", "mps")


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps and mps.is_available())


def select_device(device=None) -> torch.device:
    """Resolve ``device``: ``None``/``"auto"`` picks cuda, then mps, then cpu.

    An explicit request for a device that is not present raises a
    ValueError (never a silent fall-back to the CPU), so a "paper scale on
    the GPU" run cannot quietly take hours on a laptop.
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
    """A one-line human description, e.g. for a notebook banner."""
    dev = select_device(device)
    if dev.type == "cuda":
        return f"GPU: {torch.cuda.get_device_name(dev)}"
    if dev.type == "mps":
        return "GPU: Apple MPS"
    return f"CPU ({torch.get_num_threads()} threads)"
