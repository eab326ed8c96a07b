"""How every figure draws a learner: one table, keyed by architecture, training mode and kernel.

Colour by family (ResNet reds, 3layer blues, 2layer greens, classical kernels greys, conjugate kernels and NNGP
purples, NTKs magentas), marker by architecture or kernel, line by training mode (infinite-width kernels
dash-dot), and the family a legend groups a learner under. The names are plotly's;
:mod:`resnetlearn.classroom.plots` maps them to matplotlib. Every drawing module of the classroom reads a
learner's style here (:func:`style_of` by name, :func:`style_for` by record); the learners, kernels and targets
know nothing of it. Adding an architecture, a mode or a kernel to a figure is one entry below; a learner with
none is drawn grey.

The words a stored row or a table holds are data, not style, and stay with their records: a network's label
``arch(mode)`` (:attr:`resnetlearn.learners.training.Learner.label`, the rows' and the race's key) and a kernel's
readable name (:func:`resnetlearn.kernels.registry.kernel_label`, the ``label`` column of the kernel
experiments' rows).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..kernels.registry import KERNEL_REGISTRY
from ..learners.networks import ARCHITECTURES
from ..learners.training import Learner
from ..reproduce.learner import HandBuilt, Kernel, named

__all__ = ["Style", "ARCHITECTURE_STYLES", "MODE_STYLES", "KERNEL_STYLES", "HAND_BUILT_STYLE", "style_of",
           "style_for", "kernel_style", "network_style", "trained_layers"]


@dataclass(frozen=True)
class Style:
    """How a figure draws one learner: its colour, marker and line (plotly names) and the family a legend
    groups it under."""

    colour: str
    marker: str = "circle"
    line: str = "solid"
    family: str = "other"


GREY = Style("#7f7f7f")
"""A learner that has no entry: grey, a plain circle."""

ARCHITECTURE_STYLES: dict[str, Style] = {
    "3resnet": Style("#c62828", "circle", family="ResNet"),
    "3resnet_eq21": Style("#8e0000", "circle", family="ResNet"),
    "3layer": Style("#1f5fbf", "square", family="fully connected"),
    "2layer": Style("#2e8b3e", "triangle-up", family="fully connected"),
    "2layer_signs": Style("#2e8b3e", "triangle-up", family="fully connected"),
}
"""Each architecture's colour, marker and family (the line is its training mode's)."""


@dataclass(frozen=True)
class ModeStyle:
    """How a network trained in one mode is drawn: its ``line``, the legend ``family`` (None: its architecture's)
    and what a panel title says SGD trains in it (``trained_layers``; None: the mode's name)."""

    line: str = "solid"
    family: str | None = None
    trained_layers: str | None = None


MODE_STYLES: dict[str, ModeStyle] = {
    "all": ModeStyle(trained_layers="all layers"),
    "hidden": ModeStyle(trained_layers="hidden layers"),
    "last": ModeStyle("dot", "conjugate kernel"),
    "ntk": ModeStyle("dash", "NTK"),
}
"""Each training mode's line and family (modes ``last`` and ``ntk`` train kernel methods, §8.1) and Figure 3's
panel words."""


@dataclass(frozen=True)
class KernelStyle:
    """How a kernel is drawn: ``colour`` (one, or one per architecture with ``None`` for any other), marker, line
    and family."""

    colour: str | dict = "#7f7f7f"
    marker: str = "cross"
    line: str = "solid"
    family: str = "other"

    def on(self, arch: str | None) -> Style:
        """Its :class:`Style` on architecture ``arch`` (its colour there, or its default)."""
        colour = self.colour.get(arch, self.colour[None]) if isinstance(self.colour, dict) else self.colour
        return Style(colour, self.marker, line=self.line, family=self.family)


_CLASSICAL = dict(marker="cross", family="classical kernel")
_CONJUGATE = dict(family="conjugate kernel")
_NTK = dict(marker="diamond", family="NTK")
KERNEL_STYLES: dict[str, KernelStyle] = {
    "gaussian": KernelStyle("#4d4d4d", **_CLASSICAL),
    "arcsine": KernelStyle("#8c8c8c", **_CLASSICAL),
    "arcsine_bias": KernelStyle("#b3b3b3", **_CLASSICAL),
    "conjugate": KernelStyle({"2layer": "#c2a5e0", "3layer": "#9467bd", "3resnet": "#5e2b97", None: "#9467bd"},
                             marker="x", **_CONJUGATE),
    "ntk": KernelStyle({"2layer": "#f49ac2", "3layer": "#dd3497", "3resnet": "#9c0f5f", None: "#dd3497"}, **_NTK),
    "nngp_inf": KernelStyle("#d4c4ec", marker="diamond", line="dashdot", **_CONJUGATE),
    "ntk_inf": KernelStyle({"2layer": "#fbb4d9", "3layer": "#f768a1", "3resnet": "#ae017e",
                            "3resnet_eq21": "#ae017e", None: "#ae017e"}, line="dashdot", **_NTK),
}
"""Each kernel of :data:`resnetlearn.kernels.registry.KERNEL_REGISTRY`, by name."""
UNKNOWN_KERNEL = Style("#7f7f7f", "cross")
"""A kernel without an entry: grey, a cross."""

HAND_BUILT_STYLE = Style("#dc143c", "star")
"""The hand-built solution of §8.2: crimson, the colour of the reference lines; a star in Figure 4."""


def network_style(arch: str, mode: str) -> Style:
    """A network's style: its architecture's colour, marker and family, its mode's line (and family, for the
    kernel methods)."""
    base = ARCHITECTURE_STYLES.get(arch)
    if base is None:
        residual = arch in ARCHITECTURES and ARCHITECTURES[arch].residual
        base = replace(GREY, family="ResNet" if residual else "fully connected")
    how = MODE_STYLES.get(mode, ModeStyle())
    return replace(base, line=how.line, family=how.family or base.family)


def kernel_style(name: str, arch: str | None = None) -> Style | None:
    """The style of kernel ``name`` on architecture ``arch``; None for a name that is no kernel of the
    registry."""
    if name not in KERNEL_REGISTRY:
        return None
    entry = KERNEL_STYLES.get(name)
    return UNKNOWN_KERNEL if entry is None else entry.on(arch)


_BY_KIND = {
    Learner: lambda net: network_style(net.arch, net.mode),
    Kernel: lambda kern: kernel_style(kern.name, kern.arch) or UNKNOWN_KERNEL,
    HandBuilt: lambda _: HAND_BUILT_STYLE,
}
"""Each kind of learner record → its style (a network subclass by its network class)."""


def style_for(learner) -> Style:
    """The style of a learner record (a network, a :class:`~resnetlearn.reproduce.learner.Kernel`, the
    :class:`~resnetlearn.reproduce.learner.HandBuilt` solution)."""
    for cls in type(learner).__mro__:
        if cls in _BY_KIND:
            return _BY_KIND[cls](learner)
    raise TypeError(f"learner must be a learner record (Network, Kernel or HandBuilt), got {type(learner).__name__}")


def style_of(model: str, mode: str | None = None) -> Style:
    """The style of a learner named ``model`` (and ``mode``), as rows and legends name it
    (:func:`resnetlearn.reproduce.learner.named`); grey with a plain circle when the name is no learner's."""
    learner = named(model, mode)
    return GREY if learner is None else style_for(learner)


def trained_layers(mode: str) -> str:
    """What SGD trains in ``mode``, in the words of a panel title: ``"all layers"``, ``"hidden layers"``; a mode
    with no words (or a name that is no mode) by its name."""
    how = MODE_STYLES.get(mode)
    return (how.trained_layers if how else None) or mode
