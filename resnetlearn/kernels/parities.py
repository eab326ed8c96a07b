"""Why no inner-product kernel learns the §8.1 instance: on the hypercube such kernels act degree by degree on
parities, so a degree-j parity needs on the order of Σ_{i≤j} C(d, i) samples (:func:`parity_counts`, §7 Theorem
2), and N kernel sections reach at most N of the C(d, k) degree-k parities (:func:`parity_reach`, arXiv v3 §7.1,
Lemma D.2)."""

from __future__ import annotations

import itertools
import math

import torch

from ..validation import Interval, validate_params
from .checks import F64, Matrix


@validate_params({"d": Interval(int, 1), "max_degree": Interval(int, 0, "d")})
def parity_counts(d: int, max_degree: int) -> list[dict]:
    """How many parity monomials χ_S of each degree |S| = j exist in d dimensions, and their cumulative count.

    An inner-product kernel on the hypercube spreads its capacity over all of them, so fitting a degree-j parity
    takes on the order of Σ_{i≤j} C(d, i) samples (§7, Theorem 2).

    Parameters
    ----------
    d : int
        The dimension, >= 1.
    max_degree : int
        The largest degree counted, in [0, d].

    Returns
    -------
    list of dict
        One row per degree j = 0, …, ``max_degree``: ``degree`` (j), ``monomials`` (C(d, j)) and
        ``up_to_degree`` (Σ_{i≤j} C(d, i)).
    """
    rows, total = [], 0
    for j in range(max_degree + 1):
        c = math.comb(d, j)
        total += c
        rows.append(dict(degree=j, monomials=c, up_to_degree=total))
    return rows


@validate_params({"centers": Matrix(), "k": Interval(int, 0)})
def parity_reach(gram, centers, k: int) -> tuple[torch.Tensor, int]:
    """How much of each degree-k parity the span of N kernel sections K(·, x_n) can reach.

    Rank counting, the argument behind the kernel lower bound (arXiv v3 §7.1 and Appendix D, Lemma D.2), measured on
    the whole cube {±1/√d}^d of the §7 hard instance (d = ``centers.shape[1]`` ≤ 16). For every S ⊆ [d] with |S| = k
    the fraction is ‖P χ_S‖² / ‖χ_S‖², P the orthogonal projection (uniform measure on the cube) onto
    span{K(·, x_n)}: the largest share of χ_S that any weights w in Σ_n K(x, x_n) w_n can fit, even weights chosen
    knowing S. The χ_S are orthonormal, so these fractions sum to at most the span's rank (≤ N): on average over the
    C(d, k) parities at most N / C(d, k), whatever the kernel.

    Parameters
    ----------
    gram : callable
        ``gram(X1, X2)`` returns the Gram matrix (N1, N2) of any kernel.
    centers : torch.Tensor or array_like
        The N sample points x_n, (N, d), d ≤ 16.
    k : int
        The degree, in [0, d].

    Returns
    -------
    fractions : torch.Tensor
        ‖P χ_S‖² / ‖χ_S‖² for every S, (C(d, k),) float64, in ``itertools.combinations`` order.
    rank : int
        The rank of the span (≤ N).

    Raises
    ------
    ValueError
        d > 16, k > d, or ``gram`` returns a matrix of another shape.
    """
    d = centers.shape[1]
    if d > 16:  # the cube enumerated, of centers' dimension
        raise ValueError(f"parity_reach enumerates the cube {{±1/√d}}^d: d must be at most 16, got d={d}")
    if k > d:  # the degree against centers' dimension
        raise ValueError(f"k must be an integer in [0, {d}] (d = centers.shape[1]), got {k}")
    signs = torch.tensor(list(itertools.product((-1.0, 1.0), repeat=d)), dtype=F64)
    sections = torch.as_tensor(gram(signs / math.sqrt(d), centers), dtype=F64)  # 2^d × N
    if sections.shape != (signs.shape[0], centers.shape[0]):
        raise ValueError(f"gram returned shape {tuple(sections.shape)}, expected {(signs.shape[0], centers.shape[0])}")
    U, s, _ = torch.linalg.svd(sections, full_matrices=False)
    U = U[:, s > s[0] * 1e-10] if s.numel() and s[0] > 0 else U[:, :0]  # orthonormal basis of the span
    parities = torch.stack([signs[:, list(S)].prod(1) for S in itertools.combinations(range(d), k)], 1)
    parities /= math.sqrt(signs.shape[0])  # unit norm in ℝ^{2^d}
    return ((U.T @ parities) ** 2).sum(0), U.shape[1]
