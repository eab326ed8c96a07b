"""The concept class H(x) = β·F(x) + α·G(F(x)) (ResNet paper eq 2.2 and
Concept 1, eq 5.1–5.2; β ≠ 1 is the variant of arXiv v3 §8.1, Figure 3).

* :class:`TwoLayerSmooth` — one map of eq 5.2, out_r(h) = Σ_i a_{r,i}·φ_{r,i}(⟨w_{r,i}, h⟩)
  with ‖w_{r,i}‖ = 1/√2 and a_{r,i} ∈ [−1, 1].
* :class:`Concept1` — a target built from two such maps F: R^d→R^k, G: R^k→R^k.
* :func:`random_concept` — seeded random targets of Concept 1's form (F(x) is not rescaled to norm 1, so they are
  not members of Concept 1 as stated).
* Named instances: :func:`parity_instance` (arXiv v3 §8.1), :func:`hard_instance`
  (§7, Theorem 2), :func:`talk_instance` (the talk's k = 8 variant) and
  :func:`companion_figure1` (companion paper, Figure 1).

Every target samples (x, y) with a seed and returns the two parts β·F(x)
and α·G(F(x)) separately, so training code can say which part it learned.
Targets are evaluated in float64 on the CPU and then moved to the requested
device and dtype: the same seed gives the same data on every device.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import KW_ONLY, dataclass

import sympy
import torch

from .. import validation as V
from ..device import select_device
from ..validation import FloatDtype, Interval, validate_params
from .activations import Activation, activation

DISTRIBUTIONS = {
    "unit_sphere": "uniform on the unit sphere of R^d (also: a normalised Gaussian g/‖g‖)",
    "hypercube_unit": "uniform on {±1/√d}^d (on the unit sphere; §7)",
    "hypercube": "uniform on {±1}^d (arXiv v3 §8.1)",
    "gaussian": "N(0, I/d), so E‖x‖² = 1 (§2.1 example)",
}
WEIGHT_NORM = 1 / math.sqrt(2)
"""‖w_{r,i}‖ = ‖v_{r,i}‖ = 1/√2 in Concept 1 (§5)."""


# ----------------------------------------------------------------- validation
POSITIVE = Interval(int, 1)
SEED = Interval(int, 0, V.MAX_SEED)
"""A seed of torch's generator (a signed 64-bit integer)."""
ALPHA = Interval(float, 0, 1, closed="left")
"""α of eq 2.2: in [0, 1)."""
BETA = Interval(float, 0)
"""β of Figure 3: at least 0."""


def check_alpha_beta(alpha, beta) -> tuple[float, float]:
    """Check the mixing weights: α ∈ [0, 1) (eq 2.2) and β ≥ 0 (Figure 3).

    Parameters
    ----------
    alpha : float
        α; numpy and torch scalars are accepted.
    beta : float
        β; numpy and torch scalars are accepted.

    Returns
    -------
    tuple of float
        ``(alpha, beta)`` as floats.

    Raises
    ------
    ValueError, TypeError
        Naming the parameter and its allowed range.
    """
    return ALPHA.check("alpha", alpha), BETA.check("beta", beta)


def _check_dist(dist: str) -> str:
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"input distribution must be one of {sorted(DISTRIBUTIONS)}, got {dist!r}")
    return dist


def _generator(seed) -> torch.Generator:
    return torch.Generator().manual_seed(SEED.check("seed", seed))



# ----------------------------------------------------------------- inputs
@validate_params({"n": POSITIVE, "d": POSITIVE, "seed": SEED, "dtype": FloatDtype()})
def sample_inputs(dist: str, n: int, d: int, *, seed: int = 0, device=None,
                  dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """n seeded inputs in R^d from one of :data:`DISTRIBUTIONS`.

    Parameters
    ----------
    dist : {"unit_sphere", "hypercube_unit", "hypercube", "gaussian"}
        The input distribution (see :data:`DISTRIBUTIONS`).
    n : int
        Number of inputs, at least 1.
    d : int
        Dimension, at least 1.
    seed : int, default 0
        Seed of torch's generator (a signed 64-bit integer, at least 0).
    device : str, torch.device or None, default None
        Where the tensors go, resolved by :func:`~resnetlearn.device.select_device` (``None``: CUDA, then MPS, then
        the CPU).
    dtype : torch.dtype, default torch.float32
        A floating dtype; the draw is made in float64 and then cast.

    Returns
    -------
    torch.Tensor
        Shape (n, d); the same seed gives the same numbers on every device.

    Raises
    ------
    ValueError
        If ``dist`` is not one of :data:`DISTRIBUTIONS`, or a number is out of range.
    """
    _check_dist(dist)
    x = _draw(dist, n, d, _generator(seed))
    return x.to(device=select_device(device), dtype=dtype)


def _draw(dist: str, n: int, d: int, gen: torch.Generator) -> torch.Tensor:
    """float64 CPU draw (identical on every machine for a given seed)."""
    if dist in ("hypercube", "hypercube_unit"):
        signs = torch.randint(0, 2, (n, d), generator=gen, dtype=torch.int64) * 2 - 1
        x = signs.to(torch.float64)
        return x / math.sqrt(d) if dist == "hypercube_unit" else x
    g = torch.randn(n, d, generator=gen, dtype=torch.float64)
    if dist == "unit_sphere":
        return g / g.norm(dim=1, keepdim=True)
    return g / math.sqrt(d)


# ----------------------------------------------------------------- eq 5.2
class TwoLayerSmooth:
    """One map of eq 5.2: out_r(h) = Σ_{i∈[p]} a_{r,i}·φ_{r,i}(⟨w_{r,i}, h⟩) (ResNet paper §5).

    Calling an instance on h of shape (n, d_in) gives the outputs, shape (n, k), in float64.

    Parameters
    ----------
    weights : array_like
        Shape (k, p, d_in); every vector w_{r,i} of Euclidean norm 1/√2.
    coeffs : array_like
        Shape (k, p); every a_{r,i} in [−1, 1].
    activations : str, Activation or sequence of them
        The distinct φ's, each read by :func:`~resnetlearn.targets.activations.activation`.
    act_index : array_like of int or None, default None
        Shape (k, p): which activation unit (r, i) uses. ``None`` cycles over ``activations`` along i.

    Raises
    ------
    ValueError
        If a shape, a weight norm, a coefficient or an index is out of the rules above.
    """

    def __init__(self, weights: torch.Tensor, coeffs: torch.Tensor,
                 activations, act_index: torch.Tensor | None = None):
        weights = torch.as_tensor(weights, dtype=torch.float64)
        coeffs = torch.as_tensor(coeffs, dtype=torch.float64)
        if weights.ndim != 3:
            raise ValueError(f"weights must have shape (k, p, d_in), got {tuple(weights.shape)}")
        if coeffs.shape != weights.shape[:2]:
            raise ValueError(
                f"coeffs must have shape (k, p) = {tuple(weights.shape[:2])}, got {tuple(coeffs.shape)}"
            )
        norms = weights.norm(dim=2)
        if not torch.allclose(norms, torch.full_like(norms, WEIGHT_NORM), atol=1e-9):
            raise ValueError("every weight vector must have Euclidean norm 1/√2 (Concept 1, §5)")
        if coeffs.abs().max() > 1 + 1e-12:
            raise ValueError(f"coeffs must lie in [-1, 1] (Concept 1), max |a| = {coeffs.abs().max():.4g}")
        if isinstance(activations, (Activation, str)):
            activations = [activations]
        self.activations = tuple(activation(a) for a in activations)
        if act_index is None:
            act_index = torch.arange(weights.shape[1]).remainder(len(self.activations)).expand(coeffs.shape)
        act_index = torch.as_tensor(act_index, dtype=torch.int64)
        if act_index.shape != coeffs.shape:
            raise ValueError(f"act_index must have shape {tuple(coeffs.shape)}, got {tuple(act_index.shape)}")
        if act_index.min() < 0 or act_index.max() >= len(self.activations):
            raise ValueError(f"act_index entries must lie in [0, {len(self.activations)})")
        self.weights, self.coeffs, self.act_index = weights, coeffs, act_index.clone()

    @property
    def k(self) -> int:
        return self.weights.shape[0]

    @property
    def p(self) -> int:
        return self.weights.shape[1]

    @property
    def d_in(self) -> int:
        return self.weights.shape[2]

    def __call__(self, h: torch.Tensor) -> torch.Tensor:
        h = torch.as_tensor(h, dtype=torch.float64)
        if h.ndim != 2 or h.shape[1] != self.d_in:
            raise ValueError(f"input must have shape (n, {self.d_in}), got {tuple(h.shape)}")
        chunk = max(1, 2**24 // (self.k * self.p))  # bound the (n, k, p) intermediate
        return torch.cat([self._eval(h[s:s + chunk]) for s in range(0, h.shape[0], chunk)])

    def _eval(self, h: torch.Tensor) -> torch.Tensor:
        pre = torch.einsum("nd,kpd->nkp", h, self.weights)
        post = torch.zeros_like(pre)
        for j, act in enumerate(self.activations):
            mask = self.act_index == j
            post = torch.where(mask, act(pre), post)
        return (post * self.coeffs).sum(dim=2)


# ----------------------------------------------------------------- targets
@dataclass
class Sample:
    """A labelled sample: y = base + composite.

    Parameters
    ----------
    x : torch.Tensor
        Inputs, shape (n, d).
    y : torch.Tensor
        Labels H(x), shape (n, k).
    base : torch.Tensor or None
        β·F(x); ``None`` for a target without the F/G split.
    composite : torch.Tensor or None
        α·G(F(x)); for a target without the split, the whole label.
    """

    x: torch.Tensor
    y: torch.Tensor
    base: torch.Tensor | None
    composite: torch.Tensor | None


def _cut(sample: Sample, sl: slice) -> Sample:
    return Sample(*(None if t is None else t[..., sl, :] for t in (sample.x, sample.y, sample.base, sample.composite)))


@dataclass(frozen=True)
class Split:
    """The training, validation and test samples of one experiment.

    Parameters
    ----------
    train : Sample
        The samples fitted.
    val : Sample or None
        The samples held out for choosing hyperparameters; ``None`` without one.
    test : Sample
        The samples the reported error is measured on.
    """

    train: Sample
    val: Sample | None
    test: Sample

    def to(self, *, device=None, dtype: torch.dtype | None = None) -> Split:
        """The same samples on ``device`` and/or in ``dtype``.

        Every draw is made in float64 and then cast (:meth:`Target.sample`), so a float64 split cast to float32 equals
        the split drawn in float32: draw once in float64 (for the kernels) and cast for the networks.

        Parameters
        ----------
        device : str, torch.device or None, default None
            Passed to :meth:`torch.Tensor.to`; ``None`` leaves the device as it is.
        dtype : torch.dtype or None, default None
            Passed to :meth:`torch.Tensor.to`; ``None`` leaves the dtype as it is.

        Returns
        -------
        Split
        """
        def move(s):
            return None if s is None else Sample(*(None if t is None else t.to(device=device, dtype=dtype)
                                                   for t in (s.x, s.y, s.base, s.composite)))

        return Split(move(self.train), move(self.val), move(self.test))


@validate_params({"val_fraction": Interval(float, 0, 1, closed="neither")})
def hold_out(train: Sample, val_fraction: float) -> tuple[Sample, Sample]:
    """Split training samples into (fit, validation): the one validation rule of every learner.

    The last round(val_fraction·N) of the N training samples are held out for choosing hyperparameters; the rest,
    a prefix, is fitted.

    Parameters
    ----------
    train : Sample
        The N training samples.
    val_fraction : float
        The share held out, in (0, 1).

    Returns
    -------
    tuple of Sample
        ``(fit, validation)``.

    Raises
    ------
    ValueError
        If the held-out count is 0 or not below N.
    """
    n_train = train.x.shape[-2]
    n_val = round(val_fraction * n_train)
    if not 1 <= n_val < n_train:
        raise ValueError(f"val_fraction = {val_fraction} leaves {n_val} of n_train = {n_train} samples for "
                         f"validation; need at least 1 and fewer than n_train")
    return _cut(train, slice(0, n_train - n_val)), _cut(train, slice(n_train - n_val, None))


@validate_params({"n_train": POSITIVE, "n_test": POSITIVE, "seed": Interval(int, 0),
                  "val_fraction": Interval(float, 0, 1, closed="left")})
def data_split(target, n_train: int, *, n_test: int, seed: int = 0, val_fraction: float = 0.0,
               device=None, dtype: torch.dtype = torch.float32) -> Split:
    """The project's one train / validation / test split, shared by every learner.

    ``n_train`` samples are drawn with ``seed`` and ``n_test`` test samples with ``seed + 1`` (independent draws
    from the input distribution, as in arXiv v3 §8.1). The training samples fitted are a prefix of the full ones,
    so every learner, network or kernel, sees the same numbers for the same (target, n_train, seed).

    Parameters
    ----------
    target : Target
        What is learned; its :meth:`Target.sample` draws the data.
    n_train : int
        Number of training samples (before any are held out), at least 1.
    n_test : int
        Number of test samples, at least 1.
    seed : int, default 0
        Seed of the training draw, at least 0; the test draw uses ``seed + 1``.
    val_fraction : float, default 0.0
        In [0, 1). Above 0, the last round(val_fraction·n_train) training samples are held out for choosing
        hyperparameters (never the test set), as :func:`hold_out`.
    device : str, torch.device or None, default None
        Where the tensors go, resolved by :func:`~resnetlearn.device.select_device` (``None``: CUDA, then MPS, then
        the CPU).
    dtype : torch.dtype, default torch.float32
        A floating dtype; the draw is made in float64 and then cast.

    Returns
    -------
    Split
        ``val`` is ``None`` when ``val_fraction`` is 0.
    """
    train = target.sample(n_train, seed=seed, device=device, dtype=dtype)
    test = target.sample(n_test, seed=seed + 1, device=device, dtype=dtype)
    if val_fraction == 0:
        return Split(train, None, test)
    return Split(*hold_out(train, val_fraction), test)


@dataclass(frozen=True)
class ReferenceErrors:
    """Test errors E‖pred − y‖² (summed over outputs) of two trivial predictors.

    Parameters
    ----------
    f_only : float or None
        The error of predicting β·F(x) exactly (kα² for the parity instances): where a model that has learned F
        but nothing of G sits. ``None`` for a target without the F/G split.
    zero : float
        The error of predicting 0.
    exact : bool
        Whether the numbers are closed forms (True) or Monte Carlo estimates.
    f_only_se : float, default 0.0
        Standard error of ``f_only`` when estimated (keyword-only).
    zero_se : float, default 0.0
        Standard error of ``zero`` when estimated (keyword-only).
    """

    f_only: float | None
    zero: float
    exact: bool
    _: KW_ONLY
    f_only_se: float = 0.0
    zero_se: float = 0.0


class Target:
    """Common interface: ``d``, ``k``, ``input_dist``, ``components(x)`` and
    seeded ``sample``; subclasses define ``components``."""

    name: str
    d: int
    k: int
    input_dist: str
    alpha: float | None = None
    beta: float | None = None

    def components(self, x: torch.Tensor):
        """(β·F(x), α·G(F(x))) as float64 tensors of shape (n, k).

        Parameters
        ----------
        x : array_like
            Inputs of shape (n, d).

        Returns
        -------
        tuple of torch.Tensor
            The two parts; the first is ``None`` for a target without the F/G split.
        """
        raise NotImplementedError

    def inputs(self, x) -> torch.Tensor:
        """``x`` as a float64 CPU tensor of shape (n, d).

        Any other shape is refused, naming both dimensions: a target never reads only some of the columns, nor pads
        missing ones.

        Parameters
        ----------
        x : array_like
            The inputs.

        Returns
        -------
        torch.Tensor

        Raises
        ------
        ValueError
            If ``x`` is not of shape (n, d).
        """
        x = torch.as_tensor(x, dtype=torch.float64).cpu()
        if x.ndim != 2 or x.shape[1] != self.d:
            got = f"{x.shape[-1]} columns" if x.ndim == 2 else f"{x.ndim} dimensions"
            raise ValueError(f"{self.name} takes inputs x of shape (n, d) with d = {self.d}; got {got} "
                             f"(x of shape {tuple(x.shape)})")
        return x

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        base, comp = self.components(self.inputs(x))
        return comp if base is None else base + comp

    @validate_params({"n": POSITIVE, "seed": SEED, "dtype": FloatDtype()})
    def sample(self, n: int, *, seed: int = 0, device=None, dtype: torch.dtype = torch.float32) -> Sample:
        """n i.i.d. pairs (x, y = H(x)); the same seed gives the same numbers on any device.

        Parameters
        ----------
        n : int
            Number of pairs, at least 1.
        seed : int, default 0
            Seed of torch's generator, at least 0.
        device : str, torch.device or None, default None
            Where the tensors go, resolved by :func:`~resnetlearn.device.select_device` (``None``: CUDA, then MPS, then
            the CPU).
        dtype : torch.dtype, default torch.float32
            A floating dtype; the draw is made in float64 and then cast.

        Returns
        -------
        Sample
        """
        dev = select_device(device)
        x = _draw(self.input_dist, n, self.d, _generator(seed))
        base, comp = self.components(x)
        y = comp if base is None else base + comp

        def move(t):
            return None if t is None else t.to(device=dev, dtype=dtype)

        return Sample(move(x), move(y), move(base), move(comp))

    @validate_params({"n_mc": Interval(int, 2)})
    def reference_errors(self, *, n_mc: int = 200_000, seed: int = 12345) -> ReferenceErrors:
        """Monte Carlo estimates of the trivial predictors' errors (subclasses with a closed form override this).

        Parameters
        ----------
        n_mc : int, default 200_000
            Number of fresh samples, at least 2.
        seed : int, default 12345
            Seed of their draw.

        Returns
        -------
        ReferenceErrors
            ``exact=False``, with standard errors.
        """
        s = self.sample(n_mc, seed=seed, device="cpu", dtype=torch.float64)
        zero = (s.y**2).sum(dim=1)
        f_only = None if s.base is None else (s.composite**2).sum(dim=1)

        def mean_se(v):
            return float(v.mean()), float(v.std() / math.sqrt(len(v)))

        z, z_se = mean_se(zero)
        f, f_se = (None, 0.0) if f_only is None else mean_se(f_only)
        return ReferenceErrors(f, z, False, f_only_se=f_se, zero_se=z_se)

    @property
    def threshold(self) -> float:
        """The error of learning F but not G (kα² for the parity instances):
        the line against which the paper reads its figures (arXiv v3 §8.1)."""
        return self.reference_errors().f_only


class Concept1(Target):
    """H(x) = β·F(x) + α·G(F(x)) with F, G two-layer smooth networks (eq 5.1–5.2; β = 1 is eq 5.1).

    Parameters
    ----------
    F : TwoLayerSmooth
        F: R^d → R^k.
    G : TwoLayerSmooth
        G: R^k → R^k.
    alpha : float
        α, in [0, 1) (eq 2.2).
    beta : float, default 1.0
        β, at least 0 (the variant of arXiv v3 §8.1, Figure 3).
    input_dist : str, default "unit_sphere"
        One of :data:`DISTRIBUTIONS`.
    name : str, default "concept1"
        A label.

    Raises
    ------
    ValueError
        If G does not map R^k to R^k, or α, β or ``input_dist`` is out of range.
    """

    def __init__(self, F: TwoLayerSmooth, G: TwoLayerSmooth, alpha: float, *, beta: float = 1.0,
                 input_dist: str = "unit_sphere", name: str = "concept1"):
        self.alpha, self.beta = check_alpha_beta(alpha, beta)
        if G.d_in != F.k or G.k != F.k:
            raise ValueError(
                f"G must map R^k → R^k with k = F's output size {F.k}; got G: R^{G.d_in} → R^{G.k}"
            )
        self.F, self.G = F, G
        self.d, self.k = F.d_in, F.k
        self.input_dist = _check_dist(input_dist)
        self.name = name

    def components(self, x):
        """(β·F(x), α·G(F(x))) as float64 tensors of shape (n, k).

        Parameters
        ----------
        x : array_like
            Inputs of shape (n, d).

        Returns
        -------
        tuple of torch.Tensor
            The two parts; the first is ``None`` for a target without the F/G split.
        """
        f = self.F(self.inputs(x))
        return self.beta * f, self.alpha * self.G(f)

    def with_alpha_beta(self, alpha: float, beta: float = 1.0) -> Concept1:
        """The same F and G with new mixing weights (for α/β sliders).

        Parameters
        ----------
        alpha : float
            α, in [0, 1).
        beta : float, default 1.0
            β, at least 0.

        Returns
        -------
        Concept1
        """
        return Concept1(self.F, self.G, alpha, beta=beta, input_dist=self.input_dist, name=self.name)

    def __repr__(self) -> str:
        return (f"Concept1({self.name!r}, d={self.d}, k={self.k}, p_F={self.F.p}, p_G={self.G.p}, "
                f"alpha={self.alpha}, beta={self.beta}, input_dist={self.input_dist!r})")


def _unit_rows(shape, gen) -> torch.Tensor:
    w = torch.randn(*shape, generator=gen, dtype=torch.float64)
    return WEIGHT_NORM * w / w.norm(dim=-1, keepdim=True)


@validate_params({"d": POSITIVE, "k": POSITIVE, "p_F": POSITIVE, "p_G": POSITIVE, "alpha": ALPHA, "beta": BETA,
                  "seed": SEED})
def random_concept(d: int, k: int, *, p_F: int = 4, p_G: int = 4, act_F="sin", act_G="sin",
                   alpha: float = 0.3, beta: float = 1.0, input_dist: str = "unit_sphere",
                   seed: int = 0) -> Concept1:
    """A seeded random target of Concept 1's form (§5, eq 5.2).

    Weight directions are uniform on the sphere of radius 1/√2 and coefficients a uniform in [−1, 1]. F(x) is not
    rescaled to norm 1, so the target is not a member of Concept 1 as stated.

    Parameters
    ----------
    d : int
        Input dimension, at least 1.
    k : int
        Output dimension of F and G, at least 1.
    p_F : int, default 4
        Units per output of F, at least 1.
    p_G : int, default 4
        Units per output of G, at least 1.
    act_F : str, Activation or sequence of them, default "sin"
        F's activations; a list cycles over the units i ∈ [p].
    act_G : str, Activation or sequence of them, default "sin"
        G's activations, likewise.
    alpha : float, default 0.3
        α, in [0, 1).
    beta : float, default 1.0
        β, at least 0.
    input_dist : str, default "unit_sphere"
        One of :data:`DISTRIBUTIONS`.
    seed : int, default 0
        Seed of the weights and coefficients.

    Returns
    -------
    Concept1
    """
    gen = _generator(seed)
    acts_F = act_F if isinstance(act_F, (list, tuple)) else [act_F]
    acts_G = act_G if isinstance(act_G, (list, tuple)) else [act_G]
    F = TwoLayerSmooth(_unit_rows((k, p_F, d), gen),
                       torch.rand(k, p_F, generator=gen, dtype=torch.float64) * 2 - 1, acts_F)
    G = TwoLayerSmooth(_unit_rows((k, p_G, k), gen),
                       torch.rand(k, p_G, generator=gen, dtype=torch.float64) * 2 - 1, acts_G)
    return Concept1(F, G, alpha, beta=beta, input_dist=input_dist, name=f"random(d={d}, k={k}, seed={seed})")


# ----------------------------------------------------------------- parities
def _polarize(monomials, dim: int) -> TwoLayerSmooth:
    """Write each output r, c_r·∏_{j∈S_r} h_j, as a two-layer network (eq 5.2).

    Polarisation: ∏_{j∈S} h_j = 2/(2^q q!) Σ_{ε∈{±1}^q, ε_1=+1} (∏ε)(ε·h_S)^q with
    q = |S|. With w = ε/√(2q) (‖w‖ = 1/√2), (ε·h_S)^q = (2q)^{q/2}⟨w, h⟩^q, so each
    unit is a·M·⟨w, h⟩^q with activation φ(z) = M·z^q; M ≥ 1 is chosen so that
    every a lies in [−1, 1].
    """
    degrees = {len(S) for _, S in monomials}
    if len(degrees) != 1:
        raise ValueError("all monomials of one map must have the same degree")
    q = degrees.pop()
    signs = [(1,) + e for e in itertools.product((1, -1), repeat=q - 1)]
    p = len(signs)
    W = torch.zeros(len(monomials), p, dim, dtype=torch.float64)
    A = torch.zeros(len(monomials), p, dtype=torch.float64)
    for r, (c, S) in enumerate(monomials):
        for i, eps in enumerate(signs):
            W[r, i, list(S)] = torch.tensor(eps, dtype=torch.float64) / math.sqrt(2 * q)
            A[r, i] = c * math.prod(eps) * 2 * (2 * q) ** (q / 2) / (2**q * math.factorial(q))
    # exact scale M = max(1, max_r |c_r|·2(2q)^{q/2}/(2^q q!)); |c_r|² is rational here
    cmax = max(abs(c) for c, _ in monomials)
    unit = 2 * sympy.sqrt(2 * q) ** q / (2**q * sympy.factorial(q))
    M = sympy.Max(1, sympy.sqrt(sympy.nsimplify(cmax**2)) * unit)
    expr = M * activation("power", p=q).expr
    act = Activation.custom(str(expr), expr)
    return TwoLayerSmooth(W, A / float(M), act)


class ParityInstance(Concept1):
    """A Concept 1 target whose F and G are products of coordinates on a hypercube, so that everything is exact.

    F_r(x) = c_F·∏_{j∈S_r} x_j and G_i(y) = g_i·∏_{j∈T_i} y_j. Since x_j² is constant on the hypercube, G_i(F(x)) is
    again a single parity (of the symmetric difference of the S_j, j ∈ T_i), and test errors follow from Parseval:
    distinct parities are orthonormal under the uniform distribution. F and G are also built as genuine eq-5.2
    networks (by polarisation, see :func:`_polarize`), so complexities can be computed; ``components`` uses the exact
    products, which the tests check against the networks.

    Parameters
    ----------
    f_sets : sequence of tuple of int
        S_r, the coordinates multiplied by output r of F; k = ``len(f_sets)``.
    f_scale : float
        c_F.
    g_terms : sequence of (int, tuple of int)
        (g_i, T_i) for each output i of G.
    alpha : float
        α, in [0, 1).
    beta : float
        β, at least 0.
    d : int
        Input dimension.
    input_dist : {"hypercube", "hypercube_unit"}
        The input distribution.
    name : str
        A label.

    Raises
    ------
    ValueError
        If ``input_dist`` is not a hypercube, or the maps cannot be built.
    """

    def __init__(self, f_sets, f_scale: float, g_terms, *, alpha: float, beta: float,
                 d: int, input_dist: str, name: str):
        self.f_sets = [tuple(S) for S in f_sets]
        self.f_scale = float(f_scale)
        self.g_terms = [(int(s), tuple(T)) for s, T in g_terms]
        k = len(self.f_sets)
        F = _polarize([(self.f_scale, S) for S in self.f_sets], d)
        G = _polarize([(s, T) for s, T in self.g_terms], k)
        super().__init__(F, G, alpha, beta=beta, input_dist=input_dist, name=name)
        if input_dist not in ("hypercube", "hypercube_unit"):
            raise ValueError("a parity instance needs input_dist 'hypercube' or 'hypercube_unit'")

    def with_alpha_beta(self, alpha: float, beta: float = 1.0) -> ParityInstance:
        """The same parities with new mixing weights (for α/β sliders).

        Parameters
        ----------
        alpha : float
            α, in [0, 1).
        beta : float, default 1.0
            β, at least 0.

        Returns
        -------
        ParityInstance
        """
        return ParityInstance(self.f_sets, self.f_scale, self.g_terms, alpha=alpha, beta=beta, d=self.d,
                              input_dist=self.input_dist, name=self.name)

    def components(self, x):
        """(β·F(x), α·G(F(x))) as float64 tensors of shape (n, k).

        Parameters
        ----------
        x : array_like
            Inputs of shape (n, d).

        Returns
        -------
        tuple of torch.Tensor
            The two parts; the first is ``None`` for a target without the F/G split.
        """
        x = self.inputs(x)
        f = torch.stack([self.f_scale * x[:, list(S)].prod(dim=1) for S in self.f_sets], dim=1)
        g = torch.stack([s * f[:, list(T)].prod(dim=1) for s, T in self.g_terms], dim=1)
        return self.beta * f, self.alpha * g

    def composite_parities(self) -> list[tuple[float, frozenset]]:
        """For each output i: (coefficient, set S) with G_i(F(x)) = coef·χ_S(sign(x))."""
        s_in = 1.0 if self.input_dist == "hypercube" else 1 / math.sqrt(self.d)
        u = [self.f_scale * s_in ** len(S) for S in self.f_sets]  # |F_r| on the cube
        out = []
        for s, T in self.g_terms:
            support = frozenset()
            for j in T:
                support = support.symmetric_difference(self.f_sets[j])
            out.append((s * math.prod(u[j] for j in T), support))
        return out

    def reference_errors(self, *, n_mc: int | None = None, seed: int | None = None) -> ReferenceErrors:
        """Exact errors of the trivial predictors, by Parseval.

        Parameters
        ----------
        n_mc : int or None, default None
            Ignored; kept for the interface of :meth:`Target.reference_errors`.
        seed : int or None, default None
            Ignored, likewise.

        Returns
        -------
        ReferenceErrors
            ``exact=True``.
        """
        s_in = 1.0 if self.input_dist == "hypercube" else 1 / math.sqrt(self.d)
        f_only = zero = 0.0
        for r, (cg, U) in enumerate(self.composite_parities()):
            cf = self.f_scale * s_in ** len(self.f_sets[r])
            a, b = self.alpha * cg, self.beta * cf
            f_only += a * a
            zero += a * a + b * b + (2 * a * b if U == frozenset(self.f_sets[r]) else 0.0)
        return ReferenceErrors(f_only, zero, True)


@validate_params({"d": POSITIVE, "k": POSITIVE, "alpha": ALPHA, "beta": BETA})
def parity_instance(d: int = 30, k: int = 15, *, alpha: float = 0.3, beta: float = 1.0) -> ParityInstance:
    """The experiment of arXiv v3 §8.1: x uniform on {±1}^d, F(x) = (x1x2, …, x_{2k−1}x_{2k}), G_i(y) = (−1)^i·y1y2y3y4.

    Then G_i(F(x)) = (−1)^i·x1⋯x8 (one degree-8 parity) and a model that learns F but not G errs by kα² (= 1.35 at
    the paper's d = 30, k = 15, α = 0.3).

    Parameters
    ----------
    d : int, default 30
        Input dimension (arXiv v3 §8.1: 30), at least 2k.
    k : int, default 15
        Output dimension (arXiv v3 §8.1: 15), with 4 ≤ k ≤ d/2.
    alpha : float, default 0.3
        α, in [0, 1).
    beta : float, default 1.0
        β, at least 0 (arXiv v3 §8.1, Figure 3 varies it).

    Returns
    -------
    ParityInstance

    Raises
    ------
    ValueError
        If k < 4 or 2k > d.
    """
    if 2 * k > d:
        raise ValueError(f"parity instance needs k <= d/2 (F pairs up coordinates); got k={k}, d={d}")
    if k < 4:
        raise ValueError(f"parity instance needs k >= 4 (G multiplies y1..y4); got k={k}")
    f_sets = [(2 * r, 2 * r + 1) for r in range(k)]
    g_terms = [((-1) ** (i + 1), (0, 1, 2, 3)) for i in range(k)]  # i+1: the paper counts from 1
    return ParityInstance(f_sets, 1.0, g_terms, alpha=alpha, beta=beta, d=d, input_dist="hypercube",
                          name=f"parity(d={d}, k={k})")


@validate_params({"d": POSITIVE, "alpha": ALPHA, "beta": BETA})
def talk_instance(d: int = 30, *, alpha: float = 0.3, beta: float = 1.0) -> ParityInstance:
    """The talk's variant: x ∈ {±1}^d, k = 8, F = (x1x2, …, x15x16), G = (y1y2y3y4 four times, y5y6y7y8 four times).

    kα² = 0.72 at α = 0.3.

    Parameters
    ----------
    d : int, default 30
        Input dimension, at least 16.
    alpha : float, default 0.3
        α, in [0, 1).
    beta : float, default 1.0
        β, at least 0.

    Returns
    -------
    ParityInstance

    Raises
    ------
    ValueError
        If d < 16.
    """
    if d < 16:
        raise ValueError(f"talk instance needs d >= 16 (F uses x1..x16); got d={d}")
    f_sets = [(2 * r, 2 * r + 1) for r in range(8)]
    g_terms = [(1, (0, 1, 2, 3))] * 4 + [(1, (4, 5, 6, 7))] * 4
    return ParityInstance(f_sets, 1.0, g_terms, alpha=alpha, beta=beta, d=d, input_dist="hypercube",
                          name=f"talk(d={d}, k=8)")


@validate_params({"d": POSITIVE, "k": POSITIVE, "alpha": ALPHA, "beta": BETA, "seed": SEED})
def hard_instance(d: int, k: int, *, alpha: float = 0.3, beta: float = 1.0, seed: int = 0) -> ParityInstance:
    """The hard distribution of §7 (Theorem 2).

    x is uniform on {±1/√d}^d, F(x) = W*x with W* = √d(e_{i1}, …, e_{ik}) for distinct random indices, and every
    output of G is the product y1⋯yk. So F_j(x) = ±1 and G(F(x)) is a degree-k parity of x: kernels need ~d^{k/2}
    samples, the ResNet ~d.

    Parameters
    ----------
    d : int
        Input dimension, at least 1.
    k : int
        Output dimension and degree of the parity, 1 ≤ k ≤ d (Theorem 2 wants k ≥ 4 and large d; any such k is
        accepted here).
    alpha : float, default 0.3
        α, in [0, 1).
    beta : float, default 1.0
        β, at least 0.
    seed : int, default 0
        Seed of the random indices.

    Returns
    -------
    ParityInstance

    Raises
    ------
    ValueError
        If k > d.
    """
    if k > d:
        raise ValueError(f"hard instance needs k <= d (distinct coordinates); got k={k}, d={d}")
    idx = torch.randperm(d, generator=_generator(seed))[:k].tolist()
    f_sets = [(i,) for i in idx]
    g_terms = [(1, tuple(range(k)))] * k
    return ParityInstance(f_sets, math.sqrt(d), g_terms, alpha=alpha, beta=beta, d=d, input_dist="hypercube_unit",
                          name=f"hard(d={d}, k={k}, seed={seed})")


class FunctionTarget(Target):
    """A target given by a formula, without the F/G split (``base`` and the β·F-only error are ``None``).

    Parameters
    ----------
    fn : callable
        Maps float64 inputs of shape (n, d) to labels of shape (n, k).
    d : int
        Input dimension, at least 1.
    k : int
        Output dimension, at least 1.
    input_dist : str
        One of :data:`DISTRIBUTIONS`.
    name : str
        A label.
    formula : str
        The formula, for the repr.
    """

    @validate_params({"d": POSITIVE, "k": POSITIVE})
    def __init__(self, fn, *, d: int, k: int, input_dist: str, name: str, formula: str):
        self.fn, self.d, self.k = fn, d, k
        self.input_dist, self.name, self.formula = _check_dist(input_dist), name, formula

    def components(self, x):
        """(β·F(x), α·G(F(x))) as float64 tensors of shape (n, k).

        Parameters
        ----------
        x : array_like
            Inputs of shape (n, d).

        Returns
        -------
        tuple of torch.Tensor
            The two parts; the first is ``None`` for a target without the F/G split.
        """
        return None, self.fn(self.inputs(x))

    def __repr__(self) -> str:
        return f"FunctionTarget({self.name!r}: {self.formula}, x ~ {self.input_dist})"


def companion_figure1() -> FunctionTarget:
    """Companion paper, Figure 1: F*(x) = (sin 3x1 + sin 3x2 + sin 3x3 − 2)²·cos 7x4.

    x ∈ R^4 is a normalised Gaussian (uniform on the unit sphere). It is an instance of the companion's three-layer
    class (4.1), not of Concept 1.

    Returns
    -------
    FunctionTarget
    """

    def fn(x):
        s = torch.sin(3 * x[:, 0]) + torch.sin(3 * x[:, 1]) + torch.sin(3 * x[:, 2]) - 2
        return (s**2 * torch.cos(7 * x[:, 3])).unsqueeze(1)

    return FunctionTarget(fn, d=4, k=1, input_dist="unit_sphere", name="companion-figure1",
                          formula="(sin 3x1 + sin 3x2 + sin 3x3 − 2)^2 · cos 7x4")


@validate_params({"d": POSITIVE})
def parity6_target(d: int = 40) -> FunctionTarget:
    """The target of arXiv v3 §8.2 (Figure 4): y = d³·x1x2x3x4x5x6 ∈ {±1} with x uniform on {±1/√d}^d.

    A degree-6 parity of a unit-norm input.

    Parameters
    ----------
    d : int, default 40
        Input dimension, at least 6.

    Returns
    -------
    FunctionTarget

    Raises
    ------
    ValueError
        If d < 6.
    """
    if d < 6:
        raise ValueError(f"the §8.2 target needs d >= 6, got d={d}")

    def fn(x):
        return (d**3 * x[:, :6].prod(dim=1)).unsqueeze(1)

    return FunctionTarget(fn, d=d, k=1, input_dist="hypercube_unit", name=f"parity6(d={d})",
                          formula="d^3 · x1 x2 x3 x4 x5 x6")


INSTANCES = {
    "parity": parity_instance,
    "talk": talk_instance,
    "hard": hard_instance,
    "companion": companion_figure1,
    "parity6": parity6_target,
}


def instance(name: str, **kw) -> Target:
    """A named instance: one of :data:`INSTANCES`.

    Parameters
    ----------
    name : {"parity", "talk", "hard", "companion", "parity6"}
        Which builder: :func:`parity_instance`, :func:`talk_instance`, :func:`hard_instance`,
        :func:`companion_figure1`, :func:`parity6_target`.
    **kw
        That builder's parameters.

    Returns
    -------
    Target

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`INSTANCES`.
    """
    if name not in INSTANCES:
        raise ValueError(f"unknown instance {name!r}; allowed: {sorted(INSTANCES)}")
    return INSTANCES[name](**kw)
