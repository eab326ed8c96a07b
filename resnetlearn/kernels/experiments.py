"""The kernel experiments (ResNet paper §3.1, §7; arXiv v3 §8.1): how well kernel methods learn a target.

* :func:`kernel_errors` (and :func:`kernel_errors_and_predictors`) — every kernel of
  :data:`~resnetlearn.kernels.registry.DEFAULT_KERNELS` on the samples the networks see
  (:func:`resnetlearn.targets.concept.data_split`), each tuned over its own grid and the ridge as a
  :class:`KernelSearch` says, choices at a grid edge flagged;
* :func:`network_krr`, :func:`network_kernel_errors` — the exact kernel-ridge
  solutions that the (last) and (ntk) learners of arXiv v3 §8.1 stand for: ridge
  regression on the features of the initial network, and the linearised network
  fitted with its empirical NTK.

The Gram functions are :mod:`resnetlearn.kernels`, the solvers :mod:`resnetlearn.kernels.ridge`,
the named kernels and their grids :mod:`resnetlearn.kernels.registry`.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import torch
from tqdm.auto import tqdm

from .. import validation as V
from ..learners import networks
from ..learners.modes import MODES
from ..learners.search import FRACTION, SEED, SELECTIONS, VAL_FRACTION, VALIDATIONS, validation_split
from ..learners.selection import grid_edges
from ..learners.training import LEARNER, POSITIVE, Learner
from ..targets.concept import Sample, Split, data_split, hold_out
from ..validation import Boolean, Instance, Interval, NoneOr, Options, validate_fields, validate_params
from . import (
    F64,
    as_matrix,
    as_targets,
    check_arch,
    check_gram_memory,
    check_network_memory,
    features,
    jacobian,
    jvp,
    network_archs,
    ntk,
    single_model,
    vjp,
)
from .checks import MATRIX
from .initial_network import PARAMS, KernelArch
from .registry import DEFAULT_KERNELS, RELATIVE_RIDGES, KernelContext, KernelSpecs, kernel_label, parse_spec
from .ridge import RIDGES, effective_ridges, feature_path, ridge_path


def _resolve_grid(spec, entry, grids):
    """A kernel's grid with the overrides of ``grids`` for it, checked against the kernel's hyperparameters."""
    grid = dict(entry.grid)
    for key in (entry.name, spec):
        if key in grids:
            override = grids[key]
            if not isinstance(override, dict):
                raise TypeError(f"grids[{key!r}] must be a dict axis → values, got {override!r}")
            for axis, values in override.items():
                if axis not in entry.grid:
                    raise ValueError(f"grids[{key!r}]: kernel {entry.name!r} has no hyperparameter {axis!r}; "
                                     f"it has {tuple(entry.grid) or 'none'}")
                grid[axis] = tuple(V.reals(f"grids[{key!r}][{axis!r}]", values))
    return grid


def _given_split(split, target, *, n_train, n_test, select):
    """A split passed to :func:`kernel_errors`, checked against what it should hold (the target, the sizes, the
    selection rule), on the CPU."""
    if (split.val is not None) != (select == "val"):
        raise ValueError(f"select={select!r} needs a split {'with' if select == 'val' else 'without'} a validation "
                         "part (data_split's val_fraction)")
    parts = [("train", split.train), ("test", split.test)] + ([("val", split.val)] if split.val is not None else [])
    for name, part in parts:
        for t in ("x", "y"):
            if getattr(part, t).dtype != F64:
                raise ValueError(f"split.{name}.{t} must be float64 (data_split(..., dtype=torch.float64)); got "
                                 f"{getattr(part, t).dtype}: the kernels are computed in float64")
        if part.x.shape[1] != target.d or part.y.shape[1] != target.k:
            raise ValueError(f"split.{name} has d = {part.x.shape[1]}, k = {part.y.shape[1]}; the target has "
                             f"d = {target.d}, k = {target.k}")
    n_fit = split.train.x.shape[0]
    n_held = n_fit + (0 if split.val is None else split.val.x.shape[0])
    if n_train not in (n_fit, n_held) or split.test.x.shape[0] != n_test:  # a fresh validation set or a hold-out
        raise ValueError(f"split holds {n_fit} training" + (f" (+{n_held - n_fit} validation)" if n_held > n_fit
                                                             else "")
                         + f" and {split.test.x.shape[0]} test samples; n_train = {n_train}, n_test = {n_test}")
    return split.to(device="cpu")


def _split_of(target, split, *, n_train, n_test, select, data_seed, rule) -> Split:
    """The samples of :func:`kernel_errors` in float64: ``split`` checked (:func:`_given_split`), or drawn as the
    networks draw them (``rule``: the validation keywords of :func:`~resnetlearn.learners.search.validation_split`)."""
    if split is not None:
        return _given_split(split, target, n_train=n_train, n_test=n_test, select=select)
    if select == "val":
        return validation_split(target, n_train, n_test=n_test, data_seed=data_seed, **rule, dtype=F64)
    return data_split(target, n_train, n_test=n_test, seed=data_seed, dtype=F64)


@dataclass(frozen=True)
class KernelSearch:
    """How a kernel search chooses (:func:`kernel_errors`), every grid our choice, not the paper's:

    * ``select``: by test error (``"test"``, as the paper selects) or on validation samples (``"val"``), drawn by
      :func:`resnetlearn.learners.search.validation_split` with ``validation``: ``"fresh"``, ``val_size`` new
      samples drawn with ``val_seed`` (None: its defaults), or ``"holdout"``, the last ``val_fraction`` of the
      training samples, the kernel then fitted on the rest only;
    * ``ridges``: the ridges, multiples of the mean diagonal of each training Gram
      (:data:`~resnetlearn.kernels.registry.RELATIVE_RIDGES`);
    * ``grids``: a kernel's own grid overridden by name or spec, e.g. ``{"gaussian": {"h_rel": [1, 2]}}`` or
      ``{"ntk_inf": {"sigma_w2": [1, 2, 4]}}`` (None: each kernel's grid in
      :data:`~resnetlearn.kernels.registry.KERNEL_REGISTRY`).
    """

    select: str = "test"
    validation: str = "fresh"
    val_size: int | None = None
    val_seed: int | None = None
    val_fraction: float = VAL_FRACTION
    ridges: tuple = RELATIVE_RIDGES
    grids: dict | None = None

    parameter_constraints = {"select": Options(SELECTIONS), "validation": Options(VALIDATIONS),
                             "val_size": NoneOr(POSITIVE), "val_seed": NoneOr(SEED), "val_fraction": FRACTION,
                             "ridges": RIDGES,
                             "grids": NoneOr(Instance(dict, "dict (kernel name or spec → {axis: values})"))}

    def __post_init__(self):
        validate_fields(self)
        object.__setattr__(self, "ridges", tuple(self.ridges))

    def rule(self) -> dict:
        """The validation keywords of :func:`~resnetlearn.learners.search.validation_split`."""
        return dict(validation=self.validation, val_size=self.val_size, val_seed=self.val_seed,
                    val_fraction=self.val_fraction)


KERNEL_ERRORS = {"n_train": Interval(int, 2), "kernels": KernelSpecs(),
                 "search": NoneOr(Instance(KernelSearch, "resnetlearn.kernels.experiments.KernelSearch")),
                 "n_test": POSITIVE, "data_seed": SEED, "m": POSITIVE, "kernel_seed": SEED,
                 "split": NoneOr(Instance(Split, "resnetlearn.targets.concept.Split (from data_split)")),
                 "progress": Boolean()}
"""What :func:`kernel_errors` and :func:`kernel_errors_and_predictors` accept."""


@validate_params(KERNEL_ERRORS)
def kernel_errors(target, n_train: int, kernels=DEFAULT_KERNELS, search: KernelSearch | None = None, *,
                  n_test: int = 2000, data_seed: int = 0, m: int = 1000, kernel_seed: int = 0,
                  split: Split | None = None, progress: bool = True) -> list[dict]:
    """Best test error of kernel ridge regression for each kernel, each tuned over its own grid by ``search``.

    Data from :func:`resnetlearn.targets.concept.data_split` (``n_train`` samples
    with ``data_seed``, ``n_test`` with ``data_seed + 1``; the validation part of a ``select="val"`` search
    as its :class:`KernelSearch` says), as for the networks,
    so kernels and networks see identical samples; ``split`` passes that
    split already drawn (in float64, ``data_split(..., dtype=torch.float64)``,
    e.g. the one a race also trains its networks on, cast with
    :meth:`~resnetlearn.targets.concept.Split.to`): then ``n_train``, ``n_test`` and
    ``data_seed`` describe it and its sizes are checked against them. Every kernel searches the
    ridge (``search.ridges``) and its own hyperparameters from its entry of
    :data:`~resnetlearn.kernels.registry.KERNEL_REGISTRY`:
    the Gaussian bandwidth (``h_rel`` × median distance, :data:`~resnetlearn.kernels.registry.BANDWIDTHS`),
    the infinite kernels' (σ_w², σ_b²) (:data:`~resnetlearn.kernels.registry.INF_GRID`), unless
    ``search.grids`` overrides them. ``search`` None is :class:`KernelSearch`'s defaults (selection by test
    error). The finite kernels (``conjugate``, ``ntk``) are those of a
    width-``m`` network drawn with ``kernel_seed`` (one output, except the
    §6 ResNet whose features depend on its k outputs); like every kernel here
    they are fitted with an unpenalised label mean (:func:`~resnetlearn.kernels.ridge.ridge_path`).
    The exact solutions the (last)/(ntk) learners converge to — no mean, the
    residual of the initial network, the full multi-output NTK — are
    :func:`network_kernel_errors`.

    Returns one row per kernel: its ``label`` (:func:`~resnetlearn.kernels.registry.kernel_label`),
    the selected ``setting`` (label), ``params``
    (its grid point), ``ridge_rel``, ``test_error``, ``sel_error``, the flags
    ``ridge_at_grid_edge`` and ``param_at_grid_edge`` (a choice at an end of
    its grid whose inward neighbour is more than 1 % worse, other than a hard
    bound such as σ_b² = 0: the optimum may lie beyond the grid; see
    :func:`resnetlearn.learners.selection.grid_edges`; ``grid_edges`` names them), and ``path``:
    (setting, ridge_rel, selection error) for every candidate. :func:`kernel_errors_and_predictors` returns the
    selected kernel ridge solutions beside the rows.
    """
    return [row for row, _ in _searched(target, n_train, kernels, search, n_test=n_test, data_seed=data_seed, m=m,
                                        kernel_seed=kernel_seed, split=split, progress=progress)]


@validate_params(KERNEL_ERRORS)
def kernel_errors_and_predictors(target, n_train: int, kernels=DEFAULT_KERNELS, search: KernelSearch | None = None,
                                 *, n_test: int = 2000, data_seed: int = 0, m: int = 1000, kernel_seed: int = 0,
                                 split: Split | None = None,
                                 progress: bool = True) -> tuple[list[dict], list[KernelPredictor]]:
    """(rows, predictors): the rows of :func:`kernel_errors` (same arguments) and beside each row the
    :class:`KernelPredictor` of its selected candidate (its outputs on new inputs; each holds its N × N Gram)."""
    pairs = list(_searched(target, n_train, kernels, search, n_test=n_test, data_seed=data_seed, m=m,
                           kernel_seed=kernel_seed, split=split, progress=progress))
    return [row for row, _ in pairs], [predict for _, predict in pairs]


def _searched(target, n_train, kernels, search, *, n_test, data_seed, m, kernel_seed, split, progress):
    """(row, predictor) of each kernel in turn: the work of :func:`kernel_errors` on its checked arguments
    (:data:`KERNEL_ERRORS`), the grids and the split checked against them and every kernel's memory need refused
    before the first Gram matrix."""
    search = KernelSearch() if search is None else search
    select, ridges = search.select, list(search.ridges)
    plan = _plan(kernels, search.grids)
    split = _split_of(target, split, n_train=n_train, n_test=n_test, select=select, data_seed=data_seed,
                      rule=search.rule())
    chosen_by = split.test if select == "test" else split.val
    ctx = KernelContext(split.train.x, k=split.train.y.shape[1], m=m, seed=kernel_seed)
    _check_memory(plan, ctx, n_points=split.train.x.shape[0] + split.test.x.shape[0]
                  + (0 if select == "test" else chosen_by.x.shape[0]))
    for spec, entry, arch, grid in tqdm(plan, desc=f"kernels N={n_train}", disable=not progress, leave=False):
        t0 = time.perf_counter()
        best, path, errors = _search(entry, arch, grid, ctx=ctx, train=split.train, chosen_by=chosen_by,
                                     ridges=ridges)
        edges = grid_edges({**grid, "ridge_rel": ridges}, {**best["point"], "ridge_rel": ridges[best["i"]]},
                           hard_bounds=entry.hard_bounds, errors=errors, profiled="ridge_rel")
        ridge_edge = any(e.startswith("ridge_rel=") for e in edges)
        predict = _predictor(best, split.train)
        yield dict(kernel=spec, label=kernel_label(spec), setting=best["label"], params=best["point"],
                   ridge_rel=ridges[best["i"]], n_train=n_train, n_fit=split.train.x.shape[0],
                   n_val=0 if select == "test" else chosen_by.x.shape[0],
                   test_error=best["sel_error"] if select == "test" else _error(predict, split.test),
                   sel_error=best["sel_error"],
                   select=select, ridge_at_grid_edge=ridge_edge, param_at_grid_edge=len(edges) > ridge_edge,
                   grid_edges="; ".join(edges), n_test=n_test, data_seed=data_seed, m=m,
                   seconds=round(time.perf_counter() - t0, 2),
                   path=path), predict  # path: (setting, ridge_rel, selection error) of every candidate


@dataclass(frozen=True)
class KernelPredictor:
    """The kernel ridge solution a kernel search selected (:func:`kernel_errors_and_predictors`): its
    Gram function ``fn``, its training inputs and labels, their Gram ``K`` and its ridge ``lam`` (§3.1, eq 3.2
    with the unpenalised label mean of :func:`~resnetlearn.kernels.ridge.ridge_path`)."""

    fn: object
    train: Sample
    K: torch.Tensor
    lam: float

    @validate_params({"x": MATRIX})
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Its outputs (n, k) on inputs ``x`` (n, d), computed in float64 where its training inputs are."""
        x = x.to(self.train.x.device, F64)
        if x.shape[1] != self.train.x.shape[1]:
            raise ValueError(f"x has d = {x.shape[1]}; the kernel was fitted on d = {self.train.x.shape[1]}")
        return ridge_path(self.K, self.train.y, [self.fn(x, self.train.x)], [self.lam])[0][0]


def _predictor(best: dict, train: Sample) -> KernelPredictor:
    """The predictor of the candidate :func:`_search` selected (its ``best``), fitted on ``train``."""
    return KernelPredictor(best["fn"], train, best["K"], best["lam"])


def _error(predict: KernelPredictor, sample: Sample) -> float:
    """E‖predict(x) − y‖² on ``sample``: the test error of a candidate selected on validation samples."""
    return float(((predict(sample.x) - sample.y) ** 2).sum(-1).mean())


def _check_memory(plan, ctx: KernelContext, *, n_points: int) -> None:
    """Refuse, before any Gram matrix is computed, a plan whose kernels would not fit (:attr:`KernelEntry.memory`)."""
    for _, entry, arch, _ in plan:
        if entry.memory is not None:
            entry.memory(ctx, arch, n_points)


def _plan(kernels: list[str], grids: dict | None) -> list[tuple]:
    """(spec, registry entry, architecture, grid) of every kernel asked for (the specs checked by
    :class:`~resnetlearn.kernels.registry.KernelSpecs`), each grid checked against its kernel before any work."""
    grids = {} if grids is None else grids
    plan = [(spec, *parse_spec(spec)) for spec in kernels]
    return [(spec, entry, arch, _resolve_grid(spec, entry, grids)) for spec, entry, arch in plan]


def _search(entry, arch, grid, *, ctx, train, chosen_by, ridges) -> tuple[dict, list, dict]:
    """One kernel's search over its grid × the ridges, fitted on ``train`` and judged on ``chosen_by`` (the test
    or validation samples): the best candidate (its selection error, setting label, grid point, ridge index,
    ridge, Gram function and training Gram), the path (setting, ridge_rel, selection error) of every
    candidate, and the selection errors by (grid values…, ridge_rel)."""
    Xtr, Ytr, Xsel, Ysel = train.x, train.y, chosen_by.x, chosen_by.y
    axes = list(grid)
    best, path, errors = None, [], {}
    for values in itertools.product(*(grid[a] for a in axes)):
        point = dict(zip(axes, values))
        label = entry.setting_label(point)
        fn = entry.gram_at(ctx, arch, point)
        K = fn(Xtr, Xtr)
        lams = [r * float(K.diagonal().mean()) for r in ridges]
        pred = ridge_path(K, Ytr, [fn(Xsel, Xtr)], lams)[0]
        sel_err = torch.nan_to_num(((pred - Ysel) ** 2).sum(-1).mean(-1), nan=math.inf)
        for j, r in enumerate(ridges):
            path.append((label, r, float(sel_err[j])))
            errors[(*values, r)] = float(sel_err[j])
        i = int(torch.argmin(sel_err))
        if best is None or sel_err[i] < best["sel_error"]:
            best = dict(sel_error=float(sel_err[i]), label=label, point=point, i=i, lam=lams[i], fn=fn, K=K)
    return best, path, errors


# ----------------------------------------------------------------- exact (last) / (ntk)
NETWORK_MODES = tuple(name for name, how in MODES.items() if how.kernel_method)
"""The training modes whose exact solution is a kernel method (:attr:`Mode.kernel_method`): ``last``, ``ntk``."""
COUPLINGS = ("full", "per_output")


def _network_path(X, Y, X_test, *, arch, params, mode, ridges, relative, coupling):
    """Predictions (R, n, k) on X_test and on X for every ridge, the ridge
    scale (mean diagonal of the training Gram over all outputs), the solver
    used and the number of trainable features."""
    p, k, N = params, Y.shape[1], X.shape[0]
    if MODES[mode].initial_features:  # a readout on the initial features: the conjugate kernel, primal or dual
        Phi, Phi_t = features(arch, p, X), features(arch, p, X_test)
        scale = float((Phi**2).sum()) / N
        lams = [r * scale for r in ridges] if relative else ridges
        pt, ptr = feature_path(Phi, Y, [Phi_t, Phi], lams, center=False)
        return pt, ptr, scale, "primal" if Phi.shape[1] <= N else "dual", Phi.shape[1]
    f0 = networks.forward(arch, {n: v[None] for n, v in p.items()}, X)[0]
    f0t = networks.forward(arch, {n: v[None] for n, v in p.items()}, X_test)[0]
    R = Y - f0  # the linearised network f₀ + J·(θ − θ₀) fits the residual of the initial network
    n_params = sum(v.numel() for v in p.values())
    if coupling == "per_output":
        Kc = ntk(X, arch=arch, params=p, outputs="per_output")
        Ktc = ntk(X_test, X, arch=arch, params=p, outputs="per_output")
        scale = float(torch.diagonal(Kc, dim1=1, dim2=2).mean())
        lams = [r * scale for r in ridges] if relative else ridges
        parts = [ridge_path(Kc[c], R[:, c:c + 1], [Ktc[c], Kc[c]], lams, center=False) for c in range(k)]
        pt = torch.cat([q[0] for q in parts], dim=2)
        ptr = torch.cat([q[1] for q in parts], dim=2)
        return f0t + pt, f0 + ptr, scale, "per_output", n_params
    r = R.T.reshape(-1, 1)  # rows ordered (output c, sample n)
    if n_params < k * N:  # primal: θ − θ₀ = (JᵀJ + λI)⁻¹Jᵀr over the P parameters
        check_gram_memory(k * N, n_params, copies=2, device=X.device)
        J = jacobian(arch, p, X).reshape(k * N, -1)
        scale = float((J**2).sum()) / (k * N)
        lams = [r_ * scale for r_ in ridges] if relative else ridges
        lam, Q = torch.linalg.eigh(J.T @ J)
        lams = effective_ridges(lam, lams, what="JᵀJ")
        QtJr = Q.T @ (J.T @ r)
        flat = [Q @ (QtJr / (lam.clamp_min(0) + lr)[:, None]) for lr in lams]
        sizes = [v.numel() for v in p.values()]
        deltas = [{n: c.reshape(v.shape) for (n, v), c in zip(p.items(), w[:, 0].split(sizes))} for w in flat]
        train = [(J @ w).reshape(k, N) for w in flat]
        solver = "primal"
    else:  # dual: a = (Θ + λI)⁻¹r with the full (kN × kN) NTK, θ − θ₀ = Jᵀa
        check_gram_memory(k * N, k * N, copies=3, device=X.device)
        K = ntk(X, arch=arch, params=p, outputs="full").reshape(k * N, k * N)
        scale = float(K.diagonal().mean())
        lams = [r_ * scale for r_ in ridges] if relative else ridges
        lam, Q = torch.linalg.eigh(K)
        lams = effective_ridges(lam, lams, what="Θ")
        lam = lam.clamp_min(0)
        Qtr = Q.T @ r
        del K
        coefs = [Q @ (Qtr / (lam + lr)[:, None]) for lr in lams]
        train = [(Q @ (lam[:, None] * (Q.T @ a))).reshape(k, N) for a in coefs]  # Θ·a = QΛQᵀa
        deltas = [vjp(arch, p, X, a.reshape(k, N)) for a in coefs]
        solver = "dual"
    # test predictions f₀ + J(x)·(θ − θ₀): no test Gram matrix needed
    test = torch.stack([jvp(arch, p, X_test, dl).T for dl in deltas])
    return f0t + test, f0 + torch.stack([t.T for t in train]), scale, solver, n_params


def _sample_xy(sample, name):
    if not (hasattr(sample, "x") and hasattr(sample, "y")):
        raise TypeError(f"{name} must be a Sample with x and y (e.g. target.sample(n)), got {type(sample).__name__}")
    x = as_matrix(sample.x, f"{name}.x")
    return x, as_targets(sample.y, x.shape[0], f"{name}.y")


@validate_params({"X": MATRIX, "X_test": MATRIX, "arch": KernelArch(network_archs, "network"), "params": PARAMS,
                  "mode": Options(NETWORK_MODES), "ridges": RIDGES, "coupling": Options(COUPLINGS),
                  "relative": Boolean()})
def network_krr(X, Y, X_test, *, arch: str, params: dict, mode: str, ridges, coupling: str = "full",
                relative: bool = False) -> torch.Tensor:
    """Predictions (R, n_test, k) of the exact ridge solution that training
    mode ``mode`` of a network with initial parameters ``params`` converges to,
    for every ridge λ.

    * ``last``: ridge regression of Y on φ₀ (:func:`~resnetlearn.kernels.features`), no intercept —
      the readout A minimising ½ mean‖Aφ₀ − y‖² + (wd/2)‖A‖² for λ = N·wd;
    * ``ntk``: the linearised network f₀ + J(θ − θ₀) (every parameter, as
      training mode ``ntk``), minimising ½ mean‖f − y‖² + (wd/2)‖θ − θ₀‖²:
      kernel ridge regression of the residual Y − f₀ with the empirical NTK,
      prediction f₀ + Θ·a. ``coupling="full"`` uses the whole multi-output
      kernel Θ_cc' — exactly the linearised network that training mode
      ``ntk`` fits (solved in the primal over the P parameters when P < N·k,
      else in the dual of size N·k: O((N·k)³) time, two (N·k)² matrices).
      ``"per_output"`` drops the cross-output blocks Θ_cc', c ≠ c', i.e. k
      independent kernel regressions with Θ_cc (k problems of size N). That
      is a different learner, not a small correction: it gives every output
      its own copy of the hidden layers' displacement, where the network
      shares one among its k outputs (the cross blocks vanish only as m → ∞,
      where Θ → Θ∞ ⊗ I_k). On the §8.1 instance, N = m = 500, 2layer:
      full 10.17, per_output 7.44.

    ``relative=True`` reads the ridges as multiples of the mean diagonal of
    the training Gram (over all outputs)."""
    V.compatible("X", X, "X_test", X_test, what="dimension d")  # the arguments against each other
    Y = as_targets(Y, X.shape[0])
    p = single_model(params, arch, X.shape[1])
    if p["A"].shape[0] != Y.shape[1]:
        raise ValueError(f"the network has k = {p['A'].shape[0]} outputs but Y has {Y.shape[1]} columns")
    return _network_path(X, Y, X_test, arch=arch, params=p, mode=mode, ridges=ridges, relative=relative,
                         coupling=coupling)[0]


@validate_params({"learner": LEARNER, "seed": SEED, "ridges": RIDGES, "select": Options(SELECTIONS),
                  "val_fraction": FRACTION, "coupling": Options(COUPLINGS)})
def network_kernel_errors(train, test, learner: Learner, *, seed: int = 0, ridges=RELATIVE_RIDGES,
                          select: str = "test", holdout=None, val_fraction: float = VAL_FRACTION,
                          coupling: str = "full", device=None) -> dict:
    """The exact kernel-ridge solution behind a (last) or (ntk) point of arXiv v3 §8.1.

    The network is ``learner`` (a :class:`~resnetlearn.learners.training.Learner` in mode ``last`` or ``ntk``), drawn as
    training draws it (:func:`networks.init_params` with ``seed`` and the learner's width and ``init``, in
    float64); (last) is ridge regression with
    its conjugate kernel (features φ₀, :func:`~resnetlearn.kernels.features`), (ntk) kernel ridge
    regression of Y − f₀ with its empirical NTK over every parameter
    (:func:`network_krr`; ``coupling`` as there). The ridge path
    ``ridges`` (multiples of the mean diagonal of the training Gram) is
    searched; the ridge is selected by test error (``select="test"``, as the
    paper selects) or on held-out samples (``select="val"``: ``holdout`` if
    given, else the last ``val_fraction`` of ``train`` as
    :func:`resnetlearn.targets.concept.data_split` holds out, and the fit uses the rest only).

    Returns a row: ``test_error``/``train_error`` at the selected ridge,
    ``ridge_rel``, ``ridge`` (λ) and ``wd_equivalent`` = λ/n_fit (the weight
    decay whose SGD optimum this is), ``ridge_at_grid_edge`` (the selected
    ridge is an end of ``ridges`` and the next one inwards is > 1 % worse, as
    :func:`kernel_errors` flags), ``f0_test_error``
    (the untrained network), the ``solver`` and ``path`` = (ridge_rel,
    selection error, test error) for every ridge.
    """
    t0 = time.perf_counter()
    arch = check_arch(learner.arch, network_archs(), what="network").name  # the learner against this function
    mode = V.choice("mode", learner.mode, NETWORK_MODES)
    m, init = learner.m, learner.init
    Xtr, Ytr = _sample_xy(train, "train")
    Xte, Yte = _sample_xy(test, "test")
    V.compatible("train.x", Xtr, "test.x", Xte, what="dimension d")
    if Ytr.shape[1] != Yte.shape[1]:
        raise ValueError(f"train.y and test.y disagree in k: {Ytr.shape[1]} vs {Yte.shape[1]}")
    n_train = Xtr.shape[0]
    if select == "val":
        if holdout is not None:
            Xsel, Ysel = _sample_xy(holdout, "holdout")
            V.compatible("train.x", Xtr, "holdout.x", Xsel, what="dimension d")
        else:  # the validation rule of concept.data_split
            fit, val = hold_out(Sample(Xtr, Ytr, None, None), val_fraction)
            Xtr, Ytr, Xsel, Ysel = fit.x, fit.y, val.x, val.y
    elif holdout is not None:
        raise ValueError("holdout is used with select='val' only")
    else:
        Xsel, Ysel = Xte, Yte
    k, d = Ytr.shape[1], Xtr.shape[1]
    dev = torch.device("cpu") if device is None else torch.device(device)
    check_network_memory(arch, Xtr.shape[0] + Xsel.shape[0] + Xte.shape[0], k=k, m=m, device=dev)
    drawn = networks.init_params(arch, d=d, k=k, m=m, seeds=[seed], init=init, dtype=F64)
    p = {n: v[0].to(dev) for n, v in drawn.items()}
    Xtr, Ytr, Xte, Yte, Xsel, Ysel = (t.to(dev) for t in (Xtr, Ytr, Xte, Yte, Xsel, Ysel))
    Xall = Xte if select == "test" else torch.cat([Xsel, Xte])
    pred, pred_tr, scale, solver, n_feat = _network_path(Xtr, Ytr, Xall, arch=arch, params=p, mode=mode,
                                                         ridges=ridges, relative=True, coupling=coupling)
    err = lambda P, Y: ((P - Y) ** 2).sum(-1).mean(-1).cpu()  # (R,)
    test_err = err(pred[:, -Xte.shape[0]:], Yte)
    sel_err = test_err if select == "test" else err(pred[:, :Xsel.shape[0]], Ysel)
    i = int(torch.argmin(torch.nan_to_num(sel_err, nan=math.inf)))
    f0 = networks.forward(arch, {n: v[None] for n, v in p.items()}, Xte)[0]
    return dict(arch=arch, mode=mode, m=m, k=k, seed=seed, init=init,
                coupling=coupling if MODES[mode].linearised else "-", solver=solver, n_features=n_feat,
                n_train=n_train, n_fit=Xtr.shape[0], n_test=Xte.shape[0],
                select=select, ridge_rel=ridges[i], ridge=ridges[i] * scale,
                wd_equivalent=ridges[i] * scale / Xtr.shape[0],
                ridge_at_grid_edge=bool(grid_edges({"ridge_rel": ridges}, {"ridge_rel": ridges[i]},
                                                   errors={(r,): float(e) for r, e in zip(ridges, sel_err)})),
                test_error=float(test_err[i]), train_error=float(err(pred_tr[i:i + 1], Ytr)[0]),
                sel_error=float(sel_err[i]), f0_test_error=float(err(f0[None], Yte)[0]),
                seconds=round(time.perf_counter() - t0, 2),
                path=[(ridges[j], float(sel_err[j]), float(test_err[j])) for j in range(len(ridges))])
