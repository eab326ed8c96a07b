"""Small experiments built from the library, shared by notebooks and scripts.

* :func:`beta_sweep` — arXiv v3 Figure 3 in miniature: H = β·F + α·G(F) at
  fixed α for several β, all 3resnets trained as one batch (one target per model).
* :func:`joint_vs_layerwise` — ResNet paper §2.1's remark: training both
  blocks together vs first block then second block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..device import select_device
from ..kernels import ntk
from ..learners import networks
from ..learners.modes import MODES as TRAINING_MODES
from ..learners.training import PAPER_PROTOCOL, FrozenGate, Learner, Protocol, RunOptions, train_models
from ..targets.complexity import concept_complexity
from ..targets.concept import ALPHA, POSITIVE, Sample, data_split, parity_instance
from ..validation import Boolean, Interval, Options, validate_fields, validate_params


@dataclass(frozen=True)
class Setup:
    """What an experiment draws its numbers from besides its networks.

    Our defaults: §8.1's N = 500 with 1000 test samples, seed 0.

    Parameters
    ----------
    target : Target or None, default None
        The target; None: the §8.1 instance (:func:`~resnetlearn.targets.concept.parity_instance`).
    n_train : int, default 500
        Training samples (:func:`~resnetlearn.targets.concept.data_split`), at least 1.
    n_test : int, default 1000
        Test samples, at least 1.
    seed : int, default 0
        The seed of the samples and of the initialisation, at least 0.
    device : str, torch.device or None, default None
        Where the samples live and the networks train; None: :func:`~resnetlearn.device.select_device`'s choice.
    """

    target: object = None
    n_train: int = 500
    n_test: int = 1000
    seed: int = 0
    device: object = None

    parameter_constraints = {"n_train": POSITIVE, "n_test": POSITIVE, "seed": Interval(int, 0)}

    def __post_init__(self):
        validate_fields(self)

    def split(self, target=None):
        """The device and the samples of a target.

        Parameters
        ----------
        target : Target or None, default None
            The target; None: this setup's, else the §8.1 instance.

        Returns
        -------
        device : torch.device
        train : Sample
        test : Sample
        """
        dev = select_device(self.device)
        inst = target or self.target or parity_instance()
        split = data_split(inst, self.n_train, n_test=self.n_test, seed=self.seed, device=dev)
        return dev, split.train, split.test


DEFAULT_SETUP = Setup()
"""N = 500, 1000 test samples, seed 0, the §8.1 instance, the default device."""


def _stack(samples) -> Sample:
    return Sample(samples[0].x, *(torch.stack([getattr(s, a) for s in samples]) for a in ("y", "base", "composite")))


MODES = Options(tuple(TRAINING_MODES))
"""A training mode of :class:`~resnetlearn.learners.training.Learner` (:data:`resnetlearn.learners.modes.MODES`)."""


@validate_params({"alpha": ALPHA, "m": POSITIVE, "mode": MODES, "progress": Boolean()})
def beta_sweep(betas=(0.0, 0.2, 0.3, 0.5, 1.0), *, alpha: float = 0.3, m: int = 200, lr=0.1, wd=0.005,
               mode: str = "all", protocol: Protocol = PAPER_PROTOCOL, setup: Setup = DEFAULT_SETUP,
               progress: bool = True):
    """Train 3resnets per β on the §8.1 instance, same inputs, same seed: arXiv v3 Figure 3 in miniature.

    With lists for ``lr`` and ``wd`` every β gets the whole lr × wd grid (all models of all β train as one batch, one
    target per model) and the run with the lowest test error is kept for each β: the selection rule of arXiv v3 §8.1,
    so that no β is judged at another β's best setting.

    Parameters
    ----------
    betas : sequence of float, default (0.0, 0.2, 0.3, 0.5, 1.0)
        The β values (arXiv v3 §8.1, Figure 3: {0, 0.2, 0.3, 0.5, 1}).
    alpha : float, default 0.3
        α, in [0, 1).
    m : int, default 200
        The width, at least 1.
    lr : float or sequence of float, default 0.1
        The learning rate(s).
    wd : float or sequence of float, default 0.005
        The weight decay(s).
    mode : str, default "all"
        The training mode, one of :data:`resnetlearn.learners.modes.MODES`.
    protocol : Protocol, default PAPER_PROTOCOL
        The SGD schedule (:class:`~resnetlearn.learners.training.Protocol`; default arXiv v3 §8.1's).
    setup : Setup, default DEFAULT_SETUP
        The target, N, test samples, seed and device (:class:`Setup`).
        Its target must be None: each β is its own §8.1 instance.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    rows : list of dict
        Per β: the selected ``lr`` / ``wd`` and its ``index`` in the batch, ``test_error``, the residual branch's error
        against α·G(F) (``residual_vs_composite``), ``threshold`` (kα²) and ``below_threshold`` (the composite signal
        learned at least in part).
    result : TrainResult
        The whole batch; ``result.configs[g]["beta"]`` names each model's β.

    Raises
    ------
    ValueError
        If ``setup.target`` is not None, or an argument is out of range.
    """
    if setup.target is not None:
        raise ValueError(f"setup.target must be None for beta_sweep (each β is its own §8.1 instance), "
                         f"got {setup.target!r}")
    dev, n_train, n_test, seed = select_device(setup.device), setup.n_train, setup.n_test, setup.seed
    lrs = [float(v) for v in (lr if hasattr(lr, "__len__") else [lr])]
    wds = [float(v) for v in (wd if hasattr(wd, "__len__") else [wd])]
    combos = [(b, a, w) for b in betas for a in lrs for w in wds]
    insts = {b: parity_instance(alpha=alpha, beta=b) for b in betas}
    splits = {b: data_split(t, n_train, n_test=n_test, seed=seed, device=dev) for b, t in insts.items()}
    trs = {b: s.train for b, s in splits.items()}
    tes = {b: s.test for b, s in splits.items()}
    tr = _stack([trs[c[0]] for c in combos])
    te = _stack([tes[c[0]] for c in combos])
    G = len(combos)
    res = train_models(tr, te, Learner("3resnet", mode, m=m), lrs=[c[1] for c in combos], wds=[c[2] for c in combos],
                       seeds=[seed] * G, protocol=protocol, progress=progress, options=RunOptions(device=dev))
    for g, c in enumerate(combos):
        res.configs[g]["beta"] = c[0]
    thr = insts[betas[0]].reference_errors().f_only
    rows = []
    for b in betas:
        idx = [g for g, c in enumerate(combos) if c[0] == b]
        finite = [g for g in idx if math.isfinite(float(res.test_error[g]))]
        g = min(finite, key=lambda i: float(res.test_error[i])) if finite else idx[0]
        rows.append(dict(beta=b, alpha=alpha, lr=combos[g][1], wd=combos[g][2], index=g,
                         test_error=float(res.test_error[g]),
                         residual_vs_composite=float(res.curves["residual_vs_composite"][-1, g]),
                         below_threshold=bool(res.test_error[g] < thr), threshold=thr))
    return rows, res


@validate_params({"m": POSITIVE, "n_train": POSITIVE, "n_test": POSITIVE, "mode": MODES, "seed": Interval(int, 0),
                  "progress": Boolean()})
def joint_vs_layerwise(*, m: int = 200, n_train: int = 500, n_test: int = 1000, lr: float = 0.1,
                       wd: float = 0.005, mode: str = "all", protocol: Protocol = PAPER_PROTOCOL, seed: int = 0,
                       device=None, progress: bool = True):
    """The same 3resnet trained jointly and layer-wise (ResNet paper §2.1's remark).

    Layer-wise: block 1 for the protocol's epochs with the residual branch off, then block 2 for as many epochs with
    block 1 frozen.

    Parameters
    ----------
    m : int, default 200
        The width, at least 1.
    n_train : int, default 500
        Training samples of the §8.1 instance, at least 1.
    n_test : int, default 1000
        Test samples, at least 1.
    lr : float, default 0.1
        The learning rate.
    wd : float, default 0.005
        The weight decay.
    mode : str, default "all"
        The training mode, one of :data:`resnetlearn.learners.modes.MODES`.
    protocol : Protocol, default PAPER_PROTOCOL
        The SGD schedule (:class:`~resnetlearn.learners.training.Protocol`; default arXiv v3 §8.1's).
    seed : int, default 0
        The seed of the samples and the initialisation, at least 0.
    device : str, torch.device or None, default None
        The device (see :func:`~resnetlearn.device.select_device`).
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    dict
        ``{"joint": result, "layerwise": result}``.
    """
    dev = select_device(device)
    inst = parity_instance()
    split = data_split(inst, n_train, n_test=n_test, seed=seed, device=dev)
    tr, te = split.train, split.test
    out = {}
    for name, lw in (("joint", False), ("layerwise", True)):
        p = Protocol(**{**protocol.__dict__, "layerwise": lw})
        out[name] = train_models(tr, te, Learner("3resnet", mode, m=m), lrs=[lr], wds=[wd], seeds=[seed], protocol=p,
                                 progress=progress, options=RunOptions(device=dev))
    return out


def unit_inputs(sample: Sample) -> Sample:
    """The same sample with every input divided by its Euclidean norm, x/‖x‖ (labels unchanged).

    The talk states its results for inputs on the unit sphere/ball (slide "Theorem (AL'19, arXiv:1905.10337)"; the
    two-layer slide's ⟨w_i⁽⁰⁾, x⟩ ≈ 1/√m needs ‖x‖ ≈ 1). On §8.1's cube every ‖x‖ is √30, so this is the fixed map
    x ↦ x/√30 and the targets are unchanged.

    Parameters
    ----------
    sample : Sample
        The sample.

    Returns
    -------
    Sample
    """
    x = sample.x / sample.x.norm(dim=-1, keepdim=True)
    return Sample(x, sample.y, sample.base, sample.composite)


@validate_params({"init_scale": Interval(float, 0, closed="right"), "progress": Boolean(), "unit_norm": Boolean(),
                  "select": Options(("train", "test"))})
def laziness(arch: str = "2layer", widths=(50, 200, 1000), *, lr=0.05, init_scale: float = 1.0,
             init: str = "paper", protocol: Protocol = PAPER_PROTOCOL, setup: Setup = DEFAULT_SETUP,
             progress: bool = True, unit_norm: bool = False, select: str = "train") -> list[dict]:
    """How "lazy" training is (the talk's NTK regime), width by width.

    For each width, the network (mode ``all``) and its linearisation (mode ``ntk``) are trained from the same
    initialisation on the same data. With a grid of learning rates, the network is trained at every lr from the same
    start (one batched run) and the lr with the lowest final error among the runs that did not diverge is kept; the
    linearisation is then trained at that lr.

    Parameters
    ----------
    arch : str, default "2layer"
        The architecture.
    widths : sequence of int, default (50, 200, 1000)
        The widths m.
    lr : float or callable, default 0.05
        One learning rate for every width, or ``lr(m)`` returning one learning rate or a sequence of them (a grid),
        e.g. one scaled with the NTK's size (:func:`ntk_diagonal`).
    init_scale : float, default 1.0
        A factor on the initial weights, above 0.
    init : str, default "paper"
        The initialisation, one of :data:`resnetlearn.learners.networks.INITS`.
    protocol : Protocol, default PAPER_PROTOCOL
        The SGD schedule (:class:`~resnetlearn.learners.training.Protocol`; default arXiv v3 §8.1's).
    setup : Setup, default DEFAULT_SETUP
        The target, N, test samples, seed and device (:class:`Setup`).
    progress : bool, default True
        Show a progress bar.
    unit_norm : bool, default False
        Feed every learner x/‖x‖ (:func:`unit_inputs`) instead of x: the talk's scaling assumes inputs on the unit
        sphere.
    select : {"train", "test"}, default "train"
        With a grid, keep the lr of the lowest final training error (our rule: it uses no test data) or test error
        (the paper's optimistic rule).

    Returns
    -------
    list of dict
        One row per width: ``m``, ``lr``, ``init``, ``init_scale``, ``unit_norm``, ``diverged``;
        ``weight_change`` ‖θ − θ₀‖/‖θ₀‖ over the hidden weights; ``sign_flips``, the fraction of first-layer ReLU
        signs that differ between initialisation and the end, on test inputs; ``gap_to_linear``
        E‖f(x) − f_lin(x)‖² / E‖f(x)‖² between the trained network and the trained linearisation (small means the
        NTK describes it); ``output_init`` E‖f₀(x)‖²; ``test_error``, ``train_error``, ``test_error_linear`` (NaN
        where a run diverged); with a grid, ``grid``, ``grid_train_error`` and ``grid_test_error``.
    """
    inst, seed = setup.target or parity_instance(), setup.seed
    dev, tr, te = setup.split(inst)
    if unit_norm:
        tr, te = unit_inputs(tr), unit_inputs(te)
    rows = []
    rate = lr if callable(lr) else (lambda m: lr)
    for m in widths:
        got = rate(m)
        grid = [float(v) for v in got] if isinstance(got, (list, tuple)) else [float(got)]
        full = train_models(tr, te, Learner(arch, "all", m=m, init=init), lrs=grid, wds=[0.0], seeds=[seed] * len(grid),
                            protocol=protocol, progress=progress, options=RunOptions(device=dev, init_scale=init_scale))
        score = full.train_error if select == "train" else full.test_error
        ok = [g for g in range(len(grid)) if not bool(full.diverged[g]) and math.isfinite(float(score[g]))]
        g_best = min(ok, key=lambda g: float(score[g])) if ok else 0
        lr_m = grid[g_best]
        extra = {} if len(grid) == 1 else dict(grid=grid, grid_train_error=[float(v) for v in full.train_error],
                                               grid_test_error=[float(v) for v in full.test_error])
        lin = train_models(tr, te, Learner(arch, "ntk", m=m, init=init), lrs=[lr_m], wds=[0.0], seeds=[seed],
                           protocol=protocol, progress=progress, options=RunOptions(device=dev, init_scale=init_scale))
        drawn = networks.init_params(arch, d=inst.d, k=inst.k, m=m, seeds=[seed], init=init)
        p0 = {n: v.cpu() * init_scale for n, v in drawn.items()}
        p1 = {n: v[g_best:g_best + 1].cpu() for n, v in full.params.items()}
        hidden = [n for n in p0 if n != "A"]
        num = sum(float(((p1[n] - p0[n]) ** 2).sum()) for n in hidden)
        den = sum(float((p0[n] ** 2).sum()) for n in hidden)
        x = te.x.cpu().float()
        s0 = (x @ p0["W"][0].T + p0["b1"][0]) > 0
        s1 = (x @ p1["W"][0].T + p1["b1"][0]) > 0
        f = networks.forward(arch, p1, x)
        lin_p0 = {n: v.to(f.dtype) for n, v in p0.items()}
        delta = {n: lin.params[n] - lin_p0[n] for n in p0}  # lin.params = θ₀ + Δ
        fl = networks.forward_linearized(arch, lin_p0, delta, x)[0]
        f0 = networks.forward(arch, lin_p0, x)
        if bool(full.diverged[g_best]) or bool(lin.diverged[0]):
            rows.append(dict(m=m, lr=lr_m, init=init, init_scale=init_scale, unit_norm=unit_norm, diverged=True,
                             weight_change=math.nan, sign_flips=math.nan, gap_to_linear=math.nan,
                             output_init=math.nan, test_error=math.nan, train_error=math.nan,
                             test_error_linear=math.nan, **extra))
            continue
        rows.append(dict(m=m, lr=lr_m, init=init, init_scale=init_scale, unit_norm=unit_norm, diverged=False,
                         weight_change=(num / den) ** 0.5, sign_flips=float((s0 != s1).float().mean()),
                         gap_to_linear=_gap(f, fl), output_init=float((f0**2).sum(-1).mean()),
                         test_error=float(full.test_error[g_best]), train_error=float(full.train_error[g_best]),
                         test_error_linear=float(lin.test_error[0]), **extra))
    return rows


def ntk_diagonal(arch: str = "2layer", m: int = 200, *, init: str = "paper", seed: int = 0, n: int = 100,
                 target=None, unit_norm: bool = False) -> float:
    """The mean of the empirical NTK's diagonal at initialisation, (1/k)Σ_c ‖∇_θ f_c(x)‖².

    Taken over the ``n`` inputs of the training draw of ``data_split(target, n, seed=seed)``
    (:func:`resnetlearn.kernels.ntk`, all parameters): the size of one SGD step's effect on the function per unit of
    learning rate. Dividing a learning rate by it gives every initialisation and width the same step in function
    space (our rule for comparing scalings; the papers prescribe none).

    Parameters
    ----------
    arch : str, default "2layer"
        The architecture.
    m : int, default 200
        The width.
    init : str, default "paper"
        The initialisation.
    seed : int, default 0
        The seed of the inputs and of the network.
    n : int, default 100
        The number of inputs.
    target : Target or None, default None
        The target whose inputs are drawn; None: the §8.1 instance.
    unit_norm : bool, default False
        Evaluate at x/‖x‖ (:func:`unit_inputs`).

    Returns
    -------
    float
    """
    inst = target or parity_instance()
    x = data_split(inst, n, n_test=1, seed=seed).train.x.double()
    if unit_norm:
        x = x / x.norm(dim=-1, keepdim=True)
    return float(ntk(x, arch=arch, m=m, k=inst.k, seed=seed, init=init).diagonal().mean())


# ------------------------------------------------------------ per-block laziness
def _rel(new: dict, old: dict, names) -> float:
    num = sum(float(((new[n].double() - old[n].double()) ** 2).sum()) for n in names)
    den = sum(float((old[n].double() ** 2).sum()) for n in names)
    return (num / den) ** 0.5


def _gap(f: torch.Tensor, g: torch.Tensor) -> float:
    """E‖f − g‖² / E‖f‖² over samples (and models)."""
    return float(((f - g) ** 2).sum(-1).mean() / (f**2).sum(-1).mean())


def block_measures(p0: dict, p1: dict, x: torch.Tensor, *, base: torch.Tensor | None = None) -> dict:
    """How far each block of a ``3resnet`` (§6 form) moved from its initialisation, measured on inputs ``x``.

    The 3resnet is out₁(x) = A·σ(W x + b₁) (block 1) plus the residual branch A·σ(V·out₁(x) + b₂) (block 2). Each
    block alone is a two-layer ReLU network: block 1 of x with weights (W, b₁, A), block 2 of z = out₁(x) with weights
    (V, b₂, A). The talk's picture ("both layers are still individually NTK, but the first layer feeds better inputs
    to the second") is about each block against its own linearisation, block 2 evaluated at the input it actually
    receives. Computed in float64.

    Parameters
    ----------
    p0 : dict of str to torch.Tensor
        The parameters at initialisation, with a model axis of length 1.
    p1 : dict of str to torch.Tensor
        The trained parameters, likewise.
    x : torch.Tensor
        The inputs.
    base : torch.Tensor or None, default None
        β·F(x); when given, the distances of out₁ to it are added.

    Returns
    -------
    dict
        ``move_block1``, ``move_block2``, ``move_A``: ‖θ − θ₀‖/‖θ₀‖ over (W, b₁), (V, b₂) and the shared readout A;
        ``flips_block1``: the fraction of signs 1[W x + b₁ > 0] that differ from init; ``flips_block2``: the same for
        1[V z + b₂ > 0] with z = out₁(x) at init vs at the end (input and weights both changed);
        ``flips_block2_same_input``: V, b₂ at init vs at the end, both at the trained z (only the weights changed);
        ``gap_block1``: E‖out₁ − out₁^lin‖²/E‖out₁‖², out₁^lin the first-order expansion of block 1 in (W, b₁, A)
        around p0; ``gap_block2``: the same for the residual branch expanded in (V, b₂, A) around p0 at the trained
        input z; ``gap_whole``: the whole network against its joint linearisation in all parameters (the NTK model);
        with ``base``: ``out1_vs_base_init`` / ``out1_vs_base``, E‖out₁ − βF‖² at init and at the end, and
        ``base_energy`` E‖βF‖².
    """
    dt = torch.float64
    p0 = {n: v.to(dt) for n, v in p0.items()}
    p1 = {n: v.to(dt) for n, v in p1.items()}
    x = x.to(dt)
    d = {n: p1[n] - p0[n] for n in p0}
    act0, act = networks.activations("3resnet", p0, x), networks.activations("3resnet", p1, x)
    out1_0, out1, res = act0["out1"], act["out1"], act["res"]
    h1_0, h1, h2_0, h2 = act0["h1"], act["h1"], act0["h2"], act["h2"]
    # block 2 alone is a two-layer network of z = out₁ with weights (V, b₂, A): its initial gates at the trained z
    h2_same = networks.activations("2layer", dict(W=p0["V"], b1=p0["b2"], A=p0["A"]), out1)["h1"]
    b1 = lambda q: dict(W=q["W"], b1=q["b1"], A=q["A"])  # noqa: E731
    b2 = lambda q: dict(W=q["V"], b1=q["b2"], A=q["A"])  # noqa: E731
    out1_lin = networks.forward_linearized("2layer", b1(p0), b1(d), x)[0]
    res_lin = networks.forward_linearized("2layer", b2(p0), b2(d), out1)[0]
    whole_lin = networks.forward_linearized("3resnet", p0, d, x)[0]
    row = dict(move_block1=_rel(p1, p0, ("W", "b1")), move_block2=_rel(p1, p0, ("V", "b2")),
               move_A=_rel(p1, p0, ("A",)),
               flips_block1=float(((h1_0 > 0) != (h1 > 0)).double().mean()),
               flips_block2=float(((h2_0 > 0) != (h2 > 0)).double().mean()),
               flips_block2_same_input=float(((h2_same > 0) != (h2 > 0)).double().mean()),
               gap_block1=_gap(out1, out1_lin), gap_block2=_gap(res, res_lin),
               gap_whole=_gap(out1 + res, whole_lin))
    if base is not None:
        b = base.to(dt)
        row.update(out1_vs_base_init=float(((out1_0[0] - b) ** 2).sum(-1).mean()),
                   out1_vs_base=float(((out1[0] - b) ** 2).sum(-1).mean()),
                   base_energy=float((b**2).sum(-1).mean()))
    return row


@validate_params({"mode": MODES, "progress": Boolean()})
def block_laziness(widths=(200,), *, lr: float = 0.1, wd: float = 0.005, mode: str = "all",
                   protocol: Protocol = PAPER_PROTOCOL, setup: Setup = DEFAULT_SETUP,
                   progress: bool = True) -> list[dict]:
    """Train a ``3resnet`` at each width and report :func:`block_measures` on the test inputs.

    Parameters
    ----------
    widths : sequence of int, default (200,)
        The widths m.
    lr : float, default 0.1
        The learning rate.
    wd : float, default 0.005
        The weight decay.
    mode : str, default "all"
        The training mode, one of :data:`resnetlearn.learners.modes.MODES`.
    protocol : Protocol, default PAPER_PROTOCOL
        The SGD schedule (:class:`~resnetlearn.learners.training.Protocol`; default arXiv v3 §8.1's).
    setup : Setup, default DEFAULT_SETUP
        The target, N, test samples, seed and device (:class:`Setup`).
        Its target defaults to the §8.1 instance.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    list of dict
        One row per width: ``m``, ``lr``, ``wd``, ``epochs``, ``mode``, ``diverged``, ``test_error``,
        ``train_error``, ``threshold`` (kα²) and, unless diverged, the keys of :func:`block_measures`.
    """
    inst, seed = setup.target or parity_instance(), setup.seed
    dev, tr, te = setup.split(inst)
    rows = []
    for m in widths:
        res = train_models(tr, te, Learner("3resnet", mode, m=m), lrs=[lr], wds=[wd], seeds=[seed], protocol=protocol,
                           progress=progress, options=RunOptions(device=dev))
        p0 = networks.init_params("3resnet", d=inst.d, k=inst.k, m=m, seeds=[seed])
        row = dict(m=m, lr=lr, wd=wd, epochs=protocol.epochs, mode=mode, diverged=bool(res.diverged[0]),
                   test_error=float(res.test_error[0]), train_error=float(res.train_error[0]),
                   threshold=inst.threshold)
        if not row["diverged"]:
            row.update(block_measures(p0, res.params, te.x.cpu(), base=te.base.cpu()))
        rows.append(row)
    return rows


@validate_params({"budget": Interval(float, 0, closed="right"), "m": POSITIVE, "n_train": POSITIVE,
                  "n_test": POSITIVE, "seed": Interval(int, 0), "progress": Boolean()})
def lr_budget_sweep(lrs=(0.0025, 0.01, 0.04), *, budget: float = 1.0, arch: str = "2layer", m: int = 200,
                    n_train: int = 500, n_test: int = 1000, seed: int = 0, target=None, device=None,
                    progress: bool = True) -> list[dict]:
    """:func:`laziness` at several learning rates with the product lr × epochs held at ``budget``.

    epochs = round(budget / lr) (at least 2), with lr ÷ 10 at half-time as in :meth:`Protocol.quick`, so that a
    smaller learning rate is not also a shorter training run.

    Parameters
    ----------
    lrs : sequence of float, default (0.0025, 0.01, 0.04)
        The learning rates.
    budget : float, default 1.0
        lr × epochs, above 0.
    arch : str, default "2layer"
        The architecture.
    m : int, default 200
        The width, at least 1.
    n_train : int, default 500
        Training samples, at least 1.
    n_test : int, default 1000
        Test samples, at least 1.
    seed : int, default 0
        The seed, at least 0.
    target : Target or None, default None
        The target; None: the §8.1 instance.
    device : str, torch.device or None, default None
        The device.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    list of dict
        One :func:`laziness` row per learning rate, with ``epochs`` and ``lr_x_epochs`` added.
    """
    rows = []
    for lr in lrs:
        epochs = max(2, int(round(budget / lr)))
        r = laziness(arch, widths=(m,), lr=lr, protocol=Protocol.quick(epochs), progress=progress,
                     setup=Setup(target, n_train, n_test, seed, device))[0]
        r.update(epochs=epochs, lr_x_epochs=lr * epochs)
        rows.append(r)
    return rows


# ------------------------------------------------------------ the talk's frozen gates
GATE_ORDER_SEED = (10_007, 1)
"""(a, b): the frozen-gate experiment's mini-batch order is drawn with the seed a·seed + b (its own since it was
written; notebook 06's numbers were drawn with it), not with :func:`train_models`' default."""


@validate_params({"m": POSITIVE, "n_train": POSITIVE, "n_test": POSITIVE, "seed": Interval(int, 0)})
def frozen_gate(*, m: int = 200, lrs=(0.05, 0.1, 0.2), wds=(0.001, 0.005), n_train: int = 500,
                n_test: int = 1000, protocol: Protocol = PAPER_PROTOCOL, seed: int = 0, smooth=None,
                target=None, device=None) -> list[dict]:
    """The talk's frozen-gate experiment on the §8.1 instance.

    The ordinary 3resnet (all weights trained) and the frozen-gate 3resnet
    (:class:`~resnetlearn.learners.training.FrozenGate`: gates at their random initialisation, the values and the
    readout A trained) are each trained over the same small lr × wd grid on the same samples, initialisation and
    mini-batch order (:data:`GATE_ORDER_SEED`), by :func:`train_models` (mode ``all``), the best test error selected
    as in arXiv v3 §8.1.

    Parameters
    ----------
    m : int, default 200
        The width, at least 1.
    lrs : sequence of float, default (0.05, 0.1, 0.2)
        The learning rates.
    wds : sequence of float, default (0.001, 0.005)
        The weight decays.
    n_train : int, default 500
        Training samples, at least 1.
    n_test : int, default 1000
        Test samples, at least 1.
    protocol : Protocol, default PAPER_PROTOCOL
        The SGD schedule (:class:`~resnetlearn.learners.training.Protocol`; default arXiv v3 §8.1's).
    seed : int, default 0
        The seed, at least 0.
    smooth : float or None, default None
        The gates: None the indicator 1[· ≥ 0]; a number above 0 the talk's smoothed indicator sigmoid(·/smooth)
        (:class:`~resnetlearn.learners.training.FrozenGate`).
    target : Target or None, default None
        The target; None: the §8.1 instance.
    device : str, torch.device or None, default None
        The device.

    Returns
    -------
    list of dict
        One row per network (``"relu"``, ``"frozen_gate"``): ``network``, ``m``, ``epochs``, the selected ``lr`` /
        ``wd``, ``test_error``, ``train_error`` (None and NaN where every run diverged), ``threshold`` (kα²) and
        ``grid``, every cell's test error.
    """
    dev = select_device(device)
    inst = target or parity_instance()
    split = data_split(inst, n_train, n_test=n_test, seed=seed, device=dev)
    combos = [(a, b) for a in lrs for b in wds]
    times, plus = GATE_ORDER_SEED
    rows = []
    for name, gate in (("relu", None), ("frozen_gate", FrozenGate(smooth))):
        r = train_models(split.train, split.test, Learner("3resnet", "all", m=m), lrs=[c[0] for c in combos],
                         wds=[c[1] for c in combos], seeds=[seed] * len(combos), protocol=protocol, progress=False,
                         options=RunOptions(device=dev, gate=gate, order_seeds=[times * seed + plus] * len(combos)))
        errs = [float(e) for e in r.test_error]
        finite = [i for i, e in enumerate(errs) if math.isfinite(e)]
        best = min(finite, key=lambda i: errs[i]) if finite else None
        rows.append(dict(network=name, m=m, epochs=protocol.epochs,
                         lr=None if best is None else combos[best][0], wd=None if best is None else combos[best][1],
                         test_error=math.nan if best is None else errs[best],
                         train_error=math.nan if best is None else float(r.train_error[best]),
                         threshold=inst.threshold,
                         grid=[dict(lr=c[0], wd=c[1], test_error=e) for c, e in zip(combos, errs)]))
    return rows


# ------------------------------------------------------------ what the theorems cover
def theorem1_ranges(concept=None, *, alpha: float | None = None) -> dict:
    """The quantities of Theorem 1 (ResNet paper §6) for a Concept 1 target, as orders of magnitude.

    Every Θ̃ (constants and log factors) is dropped. ℭ_s comes from
    :func:`resnetlearn.targets.complexity.concept_complexity` as the library builds the target (for the §8.1 instance
    ‖x‖ = √30, ‖F(x)‖ = √15: the rescaling to norm 1 that Concept 1 assumes multiplies the activations' arguments by
    factors > 1, which only raises ℭ_s and shrinks ``alpha_max``).

    Parameters
    ----------
    concept : Concept1 or None, default None
        The target; None: the §8.1 instance.
    alpha : float or None, default None
        The α at which ``error_bound`` is taken; None: the target's.

    Returns
    -------
    dict
        ``name``, ``k``, ``p_F``, ``p_G``, ``C_s_F``, ``C_s_G``, ``alpha``; ``alpha_max`` = 1/(k·p_G·ℭ_s(G)), which
        the theorem needs α below; ``error_factor`` = (k·p_G·ℭ_s(G))⁴ and ``error_bound`` = α⁴·error_factor, the
        population risk it guarantees (besides OPT); ``samples_min`` = (k·p_F·ℭ_s(F))², its sample count T at
        δ ≥ 1 (T grows like 1/δ² below that), so no smaller N is covered.
    """
    c = concept or parity_instance()
    a = c.alpha if alpha is None else alpha
    cc = concept_complexity(c)
    cs_f, cs_g = float(cc["F"]["C_s"]), float(cc["G"]["C_s"])
    kg = c.k * c.G.p * cs_g
    return dict(name=c.name, k=c.k, p_F=c.F.p, p_G=c.G.p, C_s_F=cs_f, C_s_G=cs_g, alpha=a,
                alpha_max=1 / kg, error_factor=kg**4, error_bound=a**4 * kg**4,
                samples_min=(c.k * c.F.p * cs_f) ** 2)


def theorem2_ranges(d: int = 30, k: int = 4, alpha: float = 0.3) -> dict:
    """The kernel lower bound on the §7 hard instance in both versions of the paper, and the ResNet's sample count.

    O/Ω/Θ̃ constants are dropped: read the numbers as orders of magnitude.

    Parameters
    ----------
    d : int, default 30
        The dimension.
    k : int, default 4
        The degree of the parity.
    alpha : float, default 0.3
        α.

    Returns
    -------
    dict
        ``d``, ``k``, ``alpha``; arXiv v3 Theorem 2 (restated in §7.1), for any α ∈ (0, 1): ``n_max_arxiv`` =
        C(d, k)/1000 and ``bound_arxiv`` = α²/16, the risk exceeded for at least 99 % of the targets by every kernel
        chosen without knowing the target; NeurIPS §7 (the sketch in §3 numbers it Theorem 3), for k ≥ 4
        (``neurips_needs_k_ge_4``): ``n_max_neurips`` = d^{k/2}/log^k d, ``alpha_min_neurips`` = d^{−k/4} and
        ``bound_neurips`` = α²/4, with probability 0.99 over W* and the samples; arXiv v3 Corollary 7.1:
        ``n_resnet`` = k²·d/α⁸, the samples with which the ResNet reaches risk about α⁴·2^{O(k)}, for α below
        1/2^{O(k)}.
    """
    return dict(d=d, k=k, alpha=alpha, n_max_arxiv=math.comb(d, k) / 1000, bound_arxiv=alpha**2 / 16,
                n_max_neurips=d ** (k / 2) / math.log(d) ** k, alpha_min_neurips=d ** (-k / 4),
                bound_neurips=alpha**2 / 4, neurips_needs_k_ge_4=k >= 4, n_resnet=k**2 * d / alpha**8)
