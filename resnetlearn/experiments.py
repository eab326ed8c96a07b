"""Small experiments built from the library, shared by notebooks and scripts.

* :func:`beta_sweep` — arXiv v3 Figure 3 in miniature: H = β·F + α·G(F) at
  fixed α for several β, all 3resnets trained as one batch (one target per model).
* :func:`joint_vs_layerwise` — ResNet paper §2.1's remark: training both
  blocks together vs first block then second block.
"""

from __future__ import annotations

import math

import torch

from .concept import Sample, parity_instance
from .device import select_device
from .training import PAPER_PROTOCOL, Protocol, train_models


def _stack(samples) -> Sample:
    return Sample(samples[0].x, *(torch.stack([getattr(s, a) for s in samples]) for a in ("y", "base", "composite")))


def beta_sweep(betas=(0.0, 0.2, 0.3, 0.5, 1.0), alpha: float = 0.3, m: int = 200, n_train: int = 500,
               n_test: int = 1000, lr: float = 0.1, wd: float = 0.005, mode: str = "all",
               protocol: Protocol = PAPER_PROTOCOL, seed: int = 0, device=None, progress: bool = True):
    """Train one 3resnet per β on the §8.1 instance, same inputs, same seed.

    Returns (rows, result): per β the test error, the residual branch's
    error against α·G(F), and whether the test error is below kα² (the
    composite signal learned at least in part)."""
    dev = select_device(device)
    insts = [parity_instance(alpha=alpha, beta=b) for b in betas]
    tr = _stack([t.sample(n_train, seed=seed, device=dev) for t in insts])
    te = _stack([t.sample(n_test, seed=seed + 1, device=dev) for t in insts])
    G = len(betas)
    res = train_models(tr, te, "3resnet", mode, m, [lr] * G, [wd] * G, [seed] * G, protocol,
                       device=dev, progress=progress)
    thr = insts[0].reference_errors().f_only
    rows = [dict(beta=b, alpha=alpha, test_error=float(res.test_error[g]),
                 residual_vs_composite=float(res.curves["residual_vs_composite"][-1, g]),
                 below_threshold=bool(res.test_error[g] < thr), threshold=thr)
            for g, b in enumerate(betas)]
    return rows, res


def joint_vs_layerwise(m: int = 200, n_train: int = 500, n_test: int = 1000, lr: float = 0.1,
                       wd: float = 0.005, mode: str = "all", protocol: Protocol = PAPER_PROTOCOL, seed: int = 0,
                       device=None, progress: bool = True):
    """The same 3resnet trained jointly and layer-wise (block 1 for the
    protocol's epochs with the residual branch off, then block 2 for as many
    epochs with block 1 frozen). Returns {"joint": result, "layerwise": result}."""
    dev = select_device(device)
    inst = parity_instance()
    tr, te = inst.sample(n_train, seed=seed, device=dev), inst.sample(n_test, seed=seed + 1, device=dev)
    out = {}
    for name, lw in (("joint", False), ("layerwise", True)):
        p = Protocol(**{**protocol.__dict__, "layerwise": lw})
        out[name] = train_models(tr, te, "3resnet", mode, m, [lr], [wd], [seed], p, device=dev, progress=progress)
    return out


def laziness(arch: str = "2layer", widths=(50, 200, 1000), lr: float = 0.05, init_scale: float = 1.0,
             n_train: int = 500, n_test: int = 1000, protocol: Protocol = PAPER_PROTOCOL, seed: int = 0,
             target=None, device=None, progress: bool = True) -> list[dict]:
    """How "lazy" training is (the talk's NTK regime): for each width, train
    the network (mode ``all``) and its linearisation (mode ``ntk``) from the
    same initialisation on the same data, and report

    * ``weight_change``: ‖θ − θ₀‖/‖θ₀‖ over the hidden weights;
    * ``sign_flips``: the fraction of first-layer ReLU signs σ'(Wx + b₁) that
      differ between initialisation and the end, on test inputs;
    * ``gap_to_linear``: E‖f(x) − f_lin(x)‖² / E‖f(x)‖² between the trained
      network and the trained linearisation — small means the NTK describes it;
    * both test errors.
    """
    from . import networks

    dev = select_device(device)
    inst = target or parity_instance()
    tr, te = inst.sample(n_train, seed=seed, device=dev), inst.sample(n_test, seed=seed + 1, device=dev)
    rows = []
    for m in widths:
        full = train_models(tr, te, arch, "all", m, [lr], [0.0], [seed], protocol, device=dev,
                            progress=progress, init_scale=init_scale)
        lin = train_models(tr, te, arch, "ntk", m, [lr], [0.0], [seed], protocol, device=dev,
                           progress=progress, init_scale=init_scale)
        p0 = {n: v.cpu() * init_scale for n, v in networks.init_params(arch, inst.d, inst.k, m, [seed]).items()}
        hidden = [n for n in p0 if n != "A"]
        num = sum(float(((full.params[n] - p0[n]) ** 2).sum()) for n in hidden)
        den = sum(float((p0[n] ** 2).sum()) for n in hidden)
        x = te.x.cpu().float()
        s0 = (x @ p0["W"][0].T + p0["b1"][0]) > 0
        s1 = (x @ full.params["W"][0].T + full.params["b1"][0]) > 0
        f = networks.forward(arch, full.params, x)
        lin_p0 = {n: v.to(f.dtype) for n, v in p0.items()}
        delta = {n: lin.params[n] - lin_p0[n] for n in p0}  # lin.params = θ₀ + Δ
        fl = networks.forward_linearized(arch, lin_p0, delta, x)[0]
        if bool(full.diverged[0]) or bool(lin.diverged[0]):
            rows.append(dict(m=m, lr=lr, init_scale=init_scale, diverged=True, weight_change=math.nan,
                             sign_flips=math.nan, gap_to_linear=math.nan, test_error=math.nan,
                             test_error_linear=math.nan))
            continue
        rows.append(dict(m=m, lr=lr, init_scale=init_scale, diverged=False, weight_change=(num / den) ** 0.5,
                         sign_flips=float((s0 != s1).float().mean()),
                         gap_to_linear=float(((f - fl) ** 2).sum(-1).mean() / (f**2).sum(-1).mean()),
                         test_error=float(full.test_error[0]), test_error_linear=float(lin.test_error[0])))
    return rows
