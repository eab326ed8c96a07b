"""What every kernel computation checks first: its inputs as float64 matrices and its memory need.

Every Gram function and ridge solver of :mod:`resnetlearn.kernels` declares its input matrices as :class:`Matrix`
(:func:`as_matrix`: finite float64 tensors, or an error naming the parameter), reads its labels through
:func:`as_targets` (their rows against the inputs'), and refuses before allocating a
computation whose float64 matrices (:func:`check_gram_memory`) or whose network and back-propagated signals
(:func:`check_network_memory`) would not fit in the memory available (:mod:`resnetlearn.memory`).
"""

from __future__ import annotations

import math

import torch

from .. import memory
from .. import validation as V
from ..learners import networks
from ..validation import Constraint, Interval, validate_params

F64 = torch.float64


def as_matrix(X, name="X") -> torch.Tensor:
    """X as a finite float64 2-d (N, d) tensor: the inputs of every Gram function and ridge solver here.

    Parameters
    ----------
    X : torch.Tensor or array_like
        The inputs, N rows of dimension d.
    name : str, default "X"
        The parameter's name, as an error names it.

    Returns
    -------
    torch.Tensor
        X in float64, of shape (N, d).

    Raises
    ------
    TypeError
        X is not a tensor and cannot be made one.
    ValueError
        X is not 2-d, or holds NaN or inf.
    """
    if not isinstance(X, torch.Tensor):
        try:
            X = torch.as_tensor(X)
        except (TypeError, ValueError, RuntimeError) as e:
            raise TypeError(f"{name} must be a 2-d (N, d) tensor or array, got {type(X).__name__}") from e
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-d (N, d) tensor, got shape {tuple(X.shape)}")
    return V.tensor(name, X.to(F64), ndim=2)


def as_targets(Y, n: int, name="Y") -> torch.Tensor:
    """Labels as a finite float64 (n, k) tensor.

    Parameters
    ----------
    Y : torch.Tensor or array_like
        The labels, (n, k), or (n,) for one output.
    n : int
        The number of rows Y must have (the inputs').
    name : str, default "Y"
        The parameter's name, as an error names it.

    Returns
    -------
    torch.Tensor
        Y in float64, of shape (n, k) (a 1-d Y becomes one column).

    Raises
    ------
    ValueError
        Y has another number of rows than ``n``, another rank, or holds NaN or inf.
    """
    if not isinstance(Y, torch.Tensor):
        Y = torch.as_tensor(Y)
    Y = Y.to(F64)
    if Y.ndim == 1:
        Y = Y[:, None]
    V.tensor(name, Y, ndim=2)
    if Y.shape[0] != n:
        raise ValueError(f"{name} must have N = {n} rows, got {Y.shape[0]}")
    return Y


class Matrix(Constraint):
    """A finite 2-d (N, d) tensor or array, as float64 (:func:`as_matrix`); ``square``: an (N, N) Gram matrix."""

    def __init__(self, *, square: bool = False):
        self.square = square

    def check(self, name, value, others=None):
        X = as_matrix(value, name)
        if self.square and X.shape[0] != X.shape[1]:
            raise ValueError(f"{name} must be a square (N, N) Gram matrix, got {tuple(X.shape)}")
        return X

    def bad_values(self, others=None):
        bad = ["X", torch.zeros(3), torch.full((2, 2), math.nan)]
        return bad + ([torch.zeros(2, 3)] if self.square else [])

    def __repr__(self):
        return "Matrix(square=True)" if self.square else "Matrix()"


class Matrices(Constraint):
    """A list or tuple of :class:`Matrix` (one per set of test points; ``K_tests[1]`` named in an error)."""

    def check(self, name, value, others=None):
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{name} must be a list of 2-d matrices (one per set of test points), got "
                            f"{type(value).__name__}")
        return [as_matrix(M, f"{name}[{i}]") for i, M in enumerate(value)]

    def bad_values(self, others=None):
        return [torch.zeros(2, 2), [torch.zeros(3)], [torch.full((2, 2), math.nan)]]

    def __repr__(self):
        return "Matrices()"


MATRIX = Matrix()
GRAMS = {"X1": MATRIX, "X2": V.NoneOr(MATRIX)}
"""The inputs of a Gram function K(X1, X2): two float64 matrices, X2 None for X1 itself."""


def pair(X1: torch.Tensor, X2: torch.Tensor | None):
    """The checked inputs of a Gram function (:data:`GRAMS`) against each other, X2 None read as X1: the same
    dimension d, dtype and device, and the memory of their Gram matrix."""
    X2 = X1 if X2 is None else X2
    if X2 is not X1:
        V.compatible("X1", X1, "X2", X2, what="dimension d")
    check_gram_memory(X1.shape[0], X2.shape[0], device=X1.device)
    return X1, X2


@validate_params({"n1": Interval(int, 0), "n2": Interval(int, 0), "copies": Interval(int, 1)})
def check_gram_memory(n1: int, n2: int, *, copies: int = 3, device=None) -> None:
    """Refuse an n1×n2 kernel computation whose float64 matrices would not fit in memory.

    The memory is that of ``device`` (the inputs' device: GPU memory for CUDA tensors, RAM otherwise;
    :func:`resnetlearn.memory.check_memory`); for a square N×N Gram matrix the error names the number of samples that
    fits.

    Parameters
    ----------
    n1 : int
        Rows of the Gram matrix, >= 0.
    n2 : int
        Its columns, >= 0.
    copies : int, default 3
        How many n1×n2 float64 matrices the computation holds at once, >= 1.
    device : str, torch.device or None, default None
        Where it computes (None: the CPU's RAM).

    Raises
    ------
    resnetlearn.memory.InsufficientMemoryError
        (a ValueError) The matrices would not fit.
    """
    square = n1 == n2  # an N×N Gram matrix: name the N that fits
    memory.check_memory(memory.gram_bytes(n1, n2, copies), what=f"a {n1}×{n2} kernel computation ({copies} float64 "
                        "copies)", width_name="N (samples)" if square else None, width=n1 if square else None,
                        need_at=(lambda n: memory.gram_bytes(n, n, copies)) if square else None, device=device)


def check_network_memory(arch: str, n_points: int, *, k: int, m: int, device=None) -> None:
    """Refuse, before the network is drawn, a width m whose finite-width kernel would not fit in memory.

    The need counts the parameters twice (the draw and its float64 copy) and the back-propagated signals δ
    (k × n × m per layer, a few layers).

    Parameters
    ----------
    arch : str
        The architecture, a key of :data:`resnetlearn.learners.networks.ARCHITECTURES`.
    n_points : int
        The number of inputs the kernel is computed on.
    k : int
        The number of outputs.
    m : int
        The width.
    device : str, torch.device or None, default None
        Where it computes (None: the CPU's RAM).

    Raises
    ------
    resnetlearn.memory.InsufficientMemoryError
        (a ValueError) The network and its signals would not fit; the error names the width that does.
    """
    def need(w):
        P = sum(math.prod(s) for s in networks.param_shapes(arch, 1, k, w).values())
        return 8 * (2 * P + 6 * k * n_points * w)

    memory.check_memory(need(m), what=f"the {arch} network kernel on {n_points} inputs (k = {k})", width_name="m",
                        width=m, need_at=need, device=device)
