"""The named kernels and the hyperparameter grids the kernel experiments search (ResNet paper §3.1).

One :class:`KernelEntry` per kernel in :data:`KERNEL_REGISTRY` (name → Gram
function of :mod:`resnetlearn.kernels`, the keywords :func:`kernel` accepts, the
grid :func:`resnetlearn.kernel_experiments.kernel_errors` searches besides the
ridge, how one grid point becomes a Gram function); :data:`DEFAULT_KERNELS` the
specs ``"name"``/``"name:arch"`` the experiments compare, :data:`RELATIVE_RIDGES`
the ridge grid. Every grid is our choice, not the paper's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

import torch

from . import networks
from . import validation as V
from .kernels import ARCH_KERNELS, F64, INF_ARCHS, NETWORK_ARCHS, arcsine, conjugate, gaussian, infinite_width, ntk


@dataclass(frozen=True)
class KernelEntry:
    """One kernel of :data:`KERNEL_REGISTRY`.

    ``gram(X1, X2, **kw)`` is the Gram matrix; ``keywords`` the keywords
    :func:`kernel` accepts for it; ``archs`` the architectures of a
    ``"name:arch"`` spec (empty: none); ``grid`` the hyperparameters
    :func:`~resnetlearn.kernel_experiments.kernel_errors` searches besides the ridge (axis → values);
    ``build(ctx, arch, **point)`` turns one grid point into a Gram function
    for an experiment; ``hard_bounds`` the grid ends that cannot be extended
    (a choice there is not flagged as a grid edge, e.g. σ_b² = 0)."""

    name: str
    gram: Callable
    _: KW_ONLY
    keywords: tuple[str, ...]
    grid: dict = field(default_factory=dict)
    build: Callable | None = None
    archs: tuple[str, ...] = ()
    default_arch: str | None = None
    hard_bounds: dict = field(default_factory=dict)
    description: str = ""


@dataclass
class _Context:
    """What an experiment's kernels may depend on: the training inputs, k, the network width and seed."""

    X_train: torch.Tensor
    _: KW_ONLY
    k: int
    m: int
    seed: int
    _median: float | None = None

    @property
    def median(self) -> float:
        """Median distance between distinct training points (the first 500)."""
        if self._median is None:
            x = self.X_train[:500]
            dist = torch.cdist(x, x)
            iu = torch.triu_indices(len(x), len(x), 1)
            self._median = float(dist[iu[0], iu[1]].median()) if len(x) > 1 else 1.0
        return self._median

    def outputs(self, arch) -> int:
        """The outputs of the network behind a finite kernel: one, unless a hidden layer reads the
        readout (the §6 ResNet: V reads out₁ = A·σ(h₁), so its features depend on all k outputs)."""
        layers = networks.ARCHITECTURES[arch].layers
        readouts = {la.out for la in layers if la.kind == "readout"}
        return self.k if any(la.kind == "dense" and la.inp in readouts for la in layers) else 1

    def params(self, arch):
        return networks.init_params(arch, d=self.X_train.shape[1], k=self.outputs(arch), m=self.m,
                                     seeds=[self.seed], init="paper", dtype=F64)


BANDWIDTHS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
"""Gaussian bandwidths h as multiples of the median distance between training points.

On the §8.1 instance (N = 500, 1000) the test error falls from ~8.4 at 0.5×
to a plateau from ~2× on (best 32×: 5.04 and 2.22); beyond ~256× the Gram
matrix degenerates numerically. On the §7 hard instance (d = 30, k = 4) it
plateaus from ~8× on at 0.37–0.38, just above kα² = 0.36: a wide Gaussian
acts like a low-degree polynomial kernel, which is all it can use here. On a
plateau the choice between neighbours is not flagged
(:func:`resnetlearn.selection.grid_edges`)."""
SIGMA_W2 = (1.0, 2.0)
SIGMA_B2 = (0.0, 0.1, 1.0)
INF_GRID = {"sigma_w2": SIGMA_W2, "sigma_b2": SIGMA_B2}
"""(σ_w², σ_b²) searched for the infinite-width kernels (σ_b² = 0 is a hard lower bound)."""


def _inf_gram(which):
    def gram(X1, X2=None, arch="2layer", **kw):
        return infinite_width(X1, X2, arch=arch, **kw)[which]
    return gram


def _inf_build(which):
    def build(ctx, arch, sigma_w2=1.0, sigma_b2=1.0):
        return lambda A, B: infinite_width(A, B, arch=arch, sigma_w2=sigma_w2, sigma_b2=sigma_b2)[which]
    return build


def _network_build(fn):
    def build(ctx, arch):
        p = ctx.params(arch)
        return lambda A, B: fn(A, B, arch=arch, params=p)
    return build


_NET_KW = ("arch", "params", "m", "k", "seed", "init")
KERNEL_REGISTRY: dict[str, KernelEntry] = {
    e.name: e for e in (
        KernelEntry("gaussian", gaussian, keywords=("h",), grid={"h_rel": BANDWIDTHS},
                    build=lambda ctx, arch, h_rel: (lambda A, B, h=h_rel * ctx.median: gaussian(A, B, h=h)),
                    description="exp(−‖x − x'‖²/(2h²)), h = h_rel × median distance (§3.1 writes e^{−‖x−y‖²/h})"),
        KernelEntry("arcsine", arcsine, keywords=(), build=lambda ctx, arch: arcsine,
                    description="arcsin(cos∠(x, x')) as §3.1 writes it (odd: no even degrees)"),
        KernelEntry("arcsine_bias", lambda X1, X2=None: arcsine(X1, X2, bias=True), keywords=(),
                    build=lambda ctx, arch: (lambda A, B: arcsine(A, B, bias=True)),
                    description="arcsine kernel of (x, ‖x‖): every degree"),
        KernelEntry("conjugate", conjugate, keywords=_NET_KW, build=_network_build(conjugate),
                    archs=NETWORK_ARCHS, default_arch="2layer",
                    description="⟨φ₀(x), φ₀(x')⟩ of the network at initialisation (mode last)"),
        KernelEntry("ntk", ntk, keywords=_NET_KW + ("parameterization", "sigma_w2", "sigma_b2"),
                    build=_network_build(ntk), archs=NETWORK_ARCHS, default_arch="2layer",
                    description="empirical NTK at initialisation, output-averaged"),
        KernelEntry("nngp_inf", _inf_gram(0), keywords=("arch", "sigma_w2", "sigma_b2", "block"), grid=INF_GRID,
                    build=_inf_build(0), archs=INF_ARCHS, default_arch="2layer", hard_bounds={"sigma_b2": 0.0},
                    description="infinite-width NNGP (NTK parameterisation, σ_w², σ_b²)"),
        KernelEntry("ntk_inf", _inf_gram(1), keywords=("arch", "sigma_w2", "sigma_b2", "block"), grid=INF_GRID,
                    build=_inf_build(1), archs=INF_ARCHS, default_arch="2layer", hard_bounds={"sigma_b2": 0.0},
                    description="infinite-width NTK (NTK parameterisation, σ_w², σ_b²)"),
    )
}
KERNELS = tuple(KERNEL_REGISTRY)


def kernel(name: str, X1, X2=None, **kw) -> torch.Tensor:
    """Gram matrix of a kernel by name (one of :data:`KERNELS`), with that
    kernel's keywords only (e.g. ``h`` for ``gaussian``, ``arch``,
    ``sigma_w2``, ``sigma_b2`` for ``ntk_inf``); any other keyword is an error."""
    entry = KERNEL_REGISTRY[V.choice("kernel", name, KERNELS)]
    for key in kw:
        if key not in entry.keywords:
            takes = ", ".join(entry.keywords) or "no keywords"
            hint = " (use the kernel 'arcsine_bias')" if (name, key) == ("arcsine", "bias") else ""
            raise TypeError(f"kernel {name!r} does not take the keyword {key!r}{hint}; it takes: {takes}")
    return entry.gram(X1, X2, **kw)


def parse_spec(spec: str) -> tuple[KernelEntry, str | None]:
    """'name' or 'name:arch' → (registry entry, architecture or None)."""
    if not isinstance(spec, str):
        raise TypeError(f"a kernel spec must be a string 'name' or 'name:arch', got {spec!r}")
    name, _, arch = spec.partition(":")
    if name not in KERNEL_REGISTRY:
        raise ValueError(f"unknown kernel {spec!r}; allowed: {KERNELS} (as 'name' or 'name:arch')")
    entry = KERNEL_REGISTRY[name]
    if not entry.archs:
        if arch:
            raise ValueError(f"kernel {name!r} takes no architecture, got {spec!r}")
        return entry, None
    arch = arch or entry.default_arch
    if arch not in entry.archs:
        extra = f" ({ARCH_KERNELS[arch].note})" if arch in ARCH_KERNELS and ARCH_KERNELS[arch].note else ""
        raise ValueError(f"kernel {name!r} exists for archs {entry.archs}, got {arch!r}{extra}")
    return entry, arch


DEFAULT_KERNELS = (
    "gaussian", "arcsine", "arcsine_bias",
    "conjugate:2layer", "conjugate:3layer", "conjugate:3resnet",
    "ntk:2layer", "ntk:3layer", "ntk:3resnet",
    "nngp_inf:2layer", "ntk_inf:2layer", "ntk_inf:3layer", "ntk_inf:3resnet_eq21",
)
RELATIVE_RIDGES = (1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
"""Ridges λ as multiples of the mean diagonal of the training Gram matrix."""
