"""The named kernels: one record per kernel, in one registry (ResNet paper §3.1; in the spirit of
neural-tangents' ``stax``, where a layer carries its kernel function with it).

One :class:`KernelEntry` per kernel in :data:`KERNEL_REGISTRY` holds everything the package knows
about it: its Gram function (finite or infinite width, from :mod:`resnetlearn.kernels`), the keywords
:func:`kernel` accepts, its label, the hyperparameter grid
:func:`resnetlearn.kernels.experiments.kernel_errors` searches besides the ridge and how a grid point
becomes the Gram function's keywords, its architectures and its memory need (how a figure draws it is the
classroom's, :mod:`resnetlearn.classroom.styles`).
Adding a kernel is adding one entry. :data:`DEFAULT_KERNELS` are the specs ``"name"``/``"name:arch"`` the
experiments compare, :data:`RELATIVE_RIDGES` the ridge grid. Every grid is our choice, not the paper's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

import torch

from ..learners import networks
from ..learners.selection import format_value
from ..validation import Constraint, Options, sequence, validate_params
from . import (
    F64,
    arcsine,
    check_network_memory,
    conjugate,
    gaussian,
    infinite_archs,
    infinite_width,
    network_archs,
    ntk,
)
from .recursions import NO_LIMIT


@dataclass
class KernelContext:
    """What an experiment's kernels may depend on (:meth:`KernelEntry.gram_at`): the training inputs,
    the number of outputs k, the network width m and the seed of the network behind a finite kernel."""

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
        """The width-m network of ``arch`` with :meth:`outputs` outputs drawn with the seed (§8.1 init, float64)."""
        return networks.init_params(arch, d=self.X_train.shape[1], k=self.outputs(arch), m=self.m,
                                     seeds=[self.seed], init="paper", dtype=F64)


@dataclass(frozen=True)
class KernelEntry:
    """One kernel of :data:`KERNEL_REGISTRY`: everything about it in one record.

    * ``gram(X1, X2=None, **keywords)``: its float64 Gram matrix, the one way to compute it;
      ``keywords`` the keywords :func:`kernel` accepts for it;
    * ``label``: its name in tables and figures (with the architecture appended by :func:`kernel_label`);
    * ``grid``: the hyperparameters :func:`~resnetlearn.kernels.experiments.kernel_errors` searches
      besides the ridge (axis → values); ``hard_bounds`` the grid ends that cannot be extended (a
      choice there is not flagged as a grid edge, e.g. σ_b² = 0);
    * ``keywords_at(ctx, arch, **point)``: the ``gram`` keywords at one grid point of an experiment
      (:class:`KernelContext`); None: ``arch`` (for a kernel with architectures) and the point as they are;
    * ``setting(point)``: the label of a grid point in the results; None: ``axis=value`` pairs;
    * ``archs()``: the architectures of a ``"name:arch"`` spec, read when asked (None: the kernel
      takes none), ``default_arch`` that of a bare ``"name"``;
    * ``memory(ctx, arch, n_points)``: refuses (:class:`resnetlearn.memory.InsufficientMemoryError`)
      an experiment on ``n_points`` inputs whose kernel would not fit, before any Gram matrix is
      computed; None: the Gram matrices only, which every Gram function checks itself
      (:func:`resnetlearn.kernels.check_gram_memory`).
    """

    name: str
    gram: Callable
    _: KW_ONLY
    label: str
    keywords: tuple[str, ...] = ()
    grid: dict = field(default_factory=dict)
    hard_bounds: dict = field(default_factory=dict)
    keywords_at: Callable | None = None
    setting: Callable | None = None
    archs: Callable | None = None
    default_arch: str | None = None
    memory: Callable | None = None
    description: str = ""

    def arch_names(self) -> tuple[str, ...]:
        """The architectures of a ``"name:arch"`` spec (empty: the kernel takes none)."""
        return () if self.archs is None else tuple(self.archs())

    def gram_at(self, ctx: KernelContext, arch: str | None, point: dict) -> Callable:
        """The Gram function (X1, X2) → K of this kernel at one grid point of an experiment."""
        kw = (self.keywords_at(ctx, arch, **point) if self.keywords_at is not None
              else {**({"arch": arch} if arch is not None else {}), **point})
        return lambda X1, X2: self.gram(X1, X2, **kw)

    def setting_label(self, point: dict) -> str:
        """The label of one grid point in the results (empty for a kernel without a grid)."""
        if self.setting is not None:
            return self.setting(point)
        return " ".join(f"{a}={format_value(v)}" for a, v in point.items())


BANDWIDTHS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
"""Gaussian bandwidths h as multiples of the median distance between training points.

On the §8.1 instance (N = 500, 1000) the test error falls from ~8.4 at 0.5×
to a plateau from ~2× on (best 32×: 5.04 and 2.22); beyond ~256× the Gram
matrix degenerates numerically. On the §7 hard instance (d = 30, k = 4) it
plateaus from ~8× on at 0.37–0.38, just above kα² = 0.36: a wide Gaussian
acts like a low-degree polynomial kernel, which is all it can use here. On a
plateau the choice between neighbours is not flagged
(:func:`resnetlearn.learners.selection.grid_edges`)."""
SIGMA_W2 = (1.0, 2.0)
SIGMA_B2 = (0.0, 0.1, 1.0)
INF_GRID = {"sigma_w2": SIGMA_W2, "sigma_b2": SIGMA_B2}
"""(σ_w², σ_b²) searched for the infinite-width kernels (σ_b² = 0 is a hard lower bound)."""


def _infinite(which):
    def gram(X1, X2=None, arch="2layer", **kw):
        return infinite_width(X1, X2, arch=arch, **kw)[which]
    return gram


def _network_keywords(ctx, arch):
    return {"arch": arch, "params": ctx.params(arch)}


def _network_memory(ctx, arch, n_points):
    check_network_memory(arch, n_points, k=ctx.outputs(arch), m=ctx.m)


_NET_KW = ("arch", "params", "m", "k", "seed", "init")
_INF_KW = ("arch", "sigma_w2", "sigma_b2", "block")
KERNEL_REGISTRY: dict[str, KernelEntry] = {
    e.name: e for e in (
        KernelEntry("gaussian", gaussian, label="Gaussian", keywords=("h",), grid={"h_rel": BANDWIDTHS},
                    keywords_at=lambda ctx, arch, h_rel: {"h": h_rel * ctx.median},
                    setting=lambda point: f"h={point['h_rel']:g}×median",
                    description="exp(−‖x − x'‖²/(2h²)), h = h_rel × median distance (§3.1 writes e^{−‖x−y‖²/h})"),
        KernelEntry("arcsine", arcsine, label="arcsine",
                    description="arcsin(cos∠(x, x')) as §3.1 writes it (odd: no even degrees)"),
        KernelEntry("arcsine_bias", lambda X1, X2=None: arcsine(X1, X2, bias=True), label="arcsine + bias",
                    description="arcsine kernel of (x, ‖x‖): every degree"),
        KernelEntry("conjugate", conjugate, label="conjugate kernel", keywords=_NET_KW,
                    keywords_at=_network_keywords, archs=network_archs, default_arch="2layer",
                    memory=_network_memory,
                    description="⟨φ₀(x), φ₀(x')⟩ of the network at initialisation (mode last)"),
        KernelEntry("ntk", ntk, label="empirical NTK", keywords=_NET_KW + ("parameterization",),
                    keywords_at=_network_keywords, archs=network_archs, default_arch="2layer",
                    memory=_network_memory, description="empirical NTK at initialisation, output-averaged"),
        KernelEntry("nngp_inf", _infinite(0), label="NNGP (∞ width)", keywords=_INF_KW, grid=INF_GRID,
                    hard_bounds={"sigma_b2": 0.0}, archs=infinite_archs, default_arch="2layer",
                    description="infinite-width NNGP (NTK parameterisation, σ_w², σ_b²)"),
        KernelEntry("ntk_inf", _infinite(1), label="NTK (∞ width)", keywords=_INF_KW, grid=INF_GRID,
                    hard_bounds={"sigma_b2": 0.0}, archs=infinite_archs, default_arch="2layer",
                    description="infinite-width NTK (NTK parameterisation, σ_w², σ_b²)"),
    )
}
"""Every kernel, by name: adding one is one :class:`KernelEntry`."""


@validate_params({"name": Options(lambda: KERNEL_REGISTRY, what="kernel")})
def kernel(name: str, X1, X2=None, **kw) -> torch.Tensor:
    """Gram matrix of a kernel by name (a key of :data:`KERNEL_REGISTRY`), with that
    kernel's keywords only (e.g. ``h`` for ``gaussian``, ``arch``,
    ``sigma_w2``, ``sigma_b2`` for ``ntk_inf``); any other keyword is an error."""
    entry = KERNEL_REGISTRY[name]
    for key in kw:  # the keywords against the kernel named
        if key not in entry.keywords:
            takes = ", ".join(entry.keywords) or "no keywords"
            hint = " (use the kernel 'arcsine_bias')" if (name, key) == ("arcsine", "bias") else ""
            raise TypeError(f"kernel {name!r} does not take the keyword {key!r}{hint}; it takes: {takes}")
    return entry.gram(X1, X2, **kw)


def parse_spec(spec: str) -> tuple[KernelEntry, str | None]:
    """'name' or 'name:arch' → (registry entry, architecture or None); the grammar :class:`KernelSpecs` checks."""
    if not isinstance(spec, str):
        raise TypeError(f"a kernel spec must be a string 'name' or 'name:arch', got {spec!r}")
    name, _, arch = spec.partition(":")
    if name not in KERNEL_REGISTRY:
        raise ValueError(f"unknown kernel {spec!r}; allowed: {tuple(KERNEL_REGISTRY)} (as 'name' or 'name:arch')")
    entry = KERNEL_REGISTRY[name]
    archs = entry.arch_names()
    if not archs:
        if arch:
            raise ValueError(f"kernel {name!r} takes no architecture, got {spec!r}")
        return entry, None
    arch = arch or entry.default_arch
    if arch not in archs:
        note = NO_LIMIT.get(arch, "")
        raise ValueError(f"kernel {name!r} exists for archs {archs}, got {arch!r}" + (f" ({note})" if note else ""))
    return entry, arch


class KernelSpecs(Constraint):
    """A kernel spec (``'name'`` or ``'name:arch'``, :func:`parse_spec`) or a non-empty list of them, as a list."""

    def check(self, name, value, others=None):
        specs = [value] if isinstance(value, str) else sequence(name, value, allow_scalar=False)
        if not specs:
            raise ValueError(f"{name} must name at least one kernel")
        for spec in specs:
            try:
                parse_spec(spec)
            except (TypeError, ValueError) as e:
                raise type(e)(f"{name}: {e}") from None
        return specs

    def bad_values(self, others=None):
        return ["laplace", [], [3], "gaussian:2layer", ["ntk_inf:3resnet"]]

    def __repr__(self):
        return "KernelSpecs()"


def kernel_label(spec: str) -> str:
    """The label of a kernel spec in tables and figures: its entry's label, with the architecture if any
    (``"ntk_inf:2layer"`` → ``"NTK (∞ width) 2layer"``)."""
    entry, arch = parse_spec(spec)
    return entry.label if arch is None else f"{entry.label} {arch}"


DEFAULT_KERNELS = (
    "gaussian", "arcsine", "arcsine_bias",
    "conjugate:2layer", "conjugate:3layer", "conjugate:3resnet",
    "ntk:2layer", "ntk:3layer", "ntk:3resnet",
    "nngp_inf:2layer", "ntk_inf:2layer", "ntk_inf:3layer", "ntk_inf:3resnet_eq21",
)
RELATIVE_RIDGES = (1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
"""Ridges λ as multiples of the mean diagonal of the training Gram matrix."""
