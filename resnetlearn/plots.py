"""Figures shared by the notebooks: training curves against the kα² line.

Every figure marks the threshold kα² (the error of learning F and nothing
of G, arXiv v3 §8.1): a curve clearly below it has learned part of the
composite signal α·G(F).
"""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

THRESHOLD_STYLE = dict(color="crimson", linestyle="--", linewidth=1.5)


def style(large: bool = False) -> dict:
    """rcParams for normal or projector-friendly ("large") figures."""
    size = 16 if large else 10
    return {"font.size": size, "axes.titlesize": size + 2, "axes.labelsize": size + 1,
            "legend.fontsize": size - 1, "lines.linewidth": 2.5 if large else 1.8}


def training_figure(epochs, curves: dict, threshold: float | None, labels=None, title: str = "",
                    large: bool = False, decomposition: bool = True) -> Figure:
    """Test error (and, for the ResNets, its two parts) against epochs.

    ``curves``: name → (E, G) array-like as produced by
    :func:`resnetlearn.training.train_models`; one line per model, labelled
    by ``labels``. Left panel: test (solid) and train (dotted) error with the
    kα² line; right panel (when available): E‖out₁ − β·F‖² and
    E‖residual − α·G(F)‖² — what the first block and the residual branch learned.
    """
    import torch

    test = torch.as_tensor(curves["test"])
    G = test.shape[1]
    labels = labels or [f"model {g}" for g in range(G)]
    dec = decomposition and "out1_vs_base" in curves and torch.isfinite(torch.as_tensor(curves["out1_vs_base"])).any()
    with plt.rc_context(style(large)):
        fig = Figure(figsize=(13 if dec else 7, 4.8 if large else 4))
        axes = fig.subplots(1, 2 if dec else 1, squeeze=False)[0]
        ax = axes[0]
        for g in range(G):
            line, = ax.semilogy(epochs, test[:, g], label=f"{labels[g]} test")
            ax.semilogy(epochs, torch.as_tensor(curves["train"])[:, g], ":", color=line.get_color())
        if threshold is not None:
            ax.axhline(threshold, **THRESHOLD_STYLE, label=f"kα² = {threshold:.2f}")
        ax.set_xlabel("epoch")
        ax.set_ylabel("error  E‖out − y‖²  (dotted: train)")
        ax.set_title(title or "test error")
        ax.legend(loc="best")
        if dec:
            ax2 = axes[1]
            for g in range(G):
                line, = ax2.semilogy(epochs, torch.as_tensor(curves["out1_vs_base"])[:, g],
                                     label=f"{labels[g]}: out₁ vs β·F")
                ax2.semilogy(epochs, torch.as_tensor(curves["residual_vs_composite"])[:, g], "--",
                             color=line.get_color(), label=f"{labels[g]}: residual vs α·G(F)")
            if threshold is not None:
                ax2.axhline(threshold, **THRESHOLD_STYLE)
            ax2.set_xlabel("epoch")
            ax2.set_title("what each block learned")
            ax2.legend(loc="best")
        fig.tight_layout()
    return fig


def to_png(fig: Figure) -> bytes:
    """PNG bytes of a figure (for an ipywidgets.Image updated from a thread)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def show(fig: Figure) -> None:
    """Display a figure made with :func:`training_figure` as a PNG in the
    notebook (works with any backend, and in committed outputs)."""
    from IPython.display import Image, display

    display(Image(to_png(fig)))


def energy_figure(alpha: float = 0.3, beta: float = 1.0, large: bool = False):
    """How the target energy of the §8.1 parity instance splits between β·F and
    α·G(F) (exact, by Parseval: distinct parities are orthonormal), with the
    kα² line — the error of a model that learned F and nothing of G.

    Returns the figure and the instance's :class:`~resnetlearn.concept.ReferenceErrors`.
    """
    from .concept import parity_instance

    r = parity_instance(alpha=alpha, beta=beta).reference_errors()
    with plt.rc_context(style(large)):
        fig = Figure(figsize=(6.5, 3.4 if large else 3.2))
        ax = fig.subplots()
        parts = {"β·F": r.zero - r.f_only, "α·G(F)": r.f_only}
        ax.barh(list(parts), list(parts.values()), color=["tab:blue", "tab:orange"])
        ax.axvline(r.f_only, **THRESHOLD_STYLE, label=f"kα² = {r.f_only:.2f}: error of learning F only")
        ax.set_xlabel("share of E‖H‖² (sum over the k = 15 outputs)")
        ax.set_title(f"α = {alpha:.2f}, β = {beta:.2f}: E‖H‖² = {r.zero:.2f}")
        ax.legend(loc="lower right")
        fig.tight_layout()
    return fig, r
