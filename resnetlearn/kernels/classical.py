"""The classical kernels of the ResNet paper §3.1, which no network defines (all Gram matrices in float64).

* :func:`gaussian` — exp(−‖x − x'‖² / (2h²)). §3.1 writes e^{−‖x−y‖²/h}; the two are the same family (h ↦ 2h²)
  and the bandwidth is searched anyway;
* :func:`arcsine` — arcsin(⟨x, x'⟩ / (‖x‖‖x'‖)) as §3.1 writes it. It is an odd function of the cosine, so on the
  hypercube it has no even-degree part and cannot fit the degree-2 F at all; ``bias=True`` appends a constant
  coordinate ‖x‖ (cosine (1 + ρ)/2), which restores every degree.
"""

from __future__ import annotations

import torch

from ..validation import Boolean, Interval, validate_params
from .checks import GRAMS, pair


@validate_params({**GRAMS, "h": Interval(float, 0, closed="right")})
def gaussian(X1, X2=None, *, h: float = 1.0) -> torch.Tensor:
    """The Gaussian kernel exp(−‖x − x'‖²/(2h²)) with bandwidth h.

    §3.1 writes the Gaussian kernel e^{−‖x−y‖²/h}; that is this kernel with h_paper = 2h², so both name the same
    family. :func:`resnetlearn.kernels.experiments.kernel_errors` searches h as a multiple of the median pairwise
    distance.

    Parameters
    ----------
    X1 : torch.Tensor or array_like
        The first inputs, (N1, d).
    X2 : torch.Tensor, array_like or None, default None
        The second inputs, (N2, d) with the same d; None: X1 itself.
    h : float, default 1.0
        The bandwidth, > 0 (keyword-only).

    Returns
    -------
    torch.Tensor
        The Gram matrix K(X1, X2), (N1, N2), float64.
    """
    X1, X2 = pair(X1, X2)
    sq = (X1**2).sum(1)[:, None] + (X2**2).sum(1)[None, :] - 2 * X1 @ X2.T
    return torch.exp(-sq.clamp_min_(0) / (2 * h * h))


def _cosine(X1, X2):
    n1, n2 = X1.norm(dim=1), X2.norm(dim=1)
    if (n1 == 0).any() or (n2 == 0).any():
        raise ValueError("the arcsine kernel needs non-zero inputs (X1 and X2 rows)")  # the data's values
    return ((X1 @ X2.T) / n1[:, None] / n2[None, :]).clamp_(-1, 1)


@validate_params({**GRAMS, "bias": Boolean()})
def arcsine(X1, X2=None, *, bias: bool = False) -> torch.Tensor:
    """The arcsine kernel arcsin(cos∠(x, x')) of §3.1.

    The kernel is odd in the cosine, so on the hypercube it has no even-degree part; ``bias=True`` appends a
    constant coordinate ‖x‖ to each input, which gives arcsin((1 + cos)/2) and restores every degree.

    Parameters
    ----------
    X1 : torch.Tensor or array_like
        The first inputs, (N1, d), no row zero.
    X2 : torch.Tensor, array_like or None, default None
        The second inputs, (N2, d) with the same d, no row zero; None: X1 itself.
    bias : bool, default False
        Use the inputs (x, ‖x‖) (keyword-only).

    Returns
    -------
    torch.Tensor
        The Gram matrix K(X1, X2), (N1, N2), float64.

    Raises
    ------
    ValueError
        A row of X1 or X2 is zero (its angle is undefined).
    """
    X1, X2 = pair(X1, X2)
    c = _cosine(X1, X2)
    return torch.asin((1 + c) / 2 if bias else c)
