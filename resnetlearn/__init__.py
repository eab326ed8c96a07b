"""resnetlearn: an interactive, tested companion to "What Can ResNet Learn
Efficiently, Going Beyond Kernels?" (Allen-Zhu & Li, NeurIPS 2019) and
"Learning and Generalization in Overparameterized Neural Networks, Going
Beyond Two Layers" (Allen-Zhu, Li & Liang, NeurIPS 2019).

Modules, one per concept of the papers:

* :mod:`resnetlearn.activations` — smooth activations with a symbolic form (§5)
* :mod:`resnetlearn.concept` — the concept class H = β·F + α·G(F) and its instances (§5, §7, §8.1)
* :mod:`resnetlearn.complexity` — the complexity measures ℭ_ε, ℭ_s (§4; companion §2)
* :mod:`resnetlearn.taylor`, :mod:`resnetlearn.radius`, :mod:`resnetlearn.power_series`,
  :mod:`resnetlearn.weighted_sums` — the Taylor series those measures sum: exact coefficients,
  radius of convergence, numeric coefficients by power-series recurrences, the weighted sums
* :mod:`resnetlearn.networks` — the learners 3resnet / 3layer / 2layer (eq 2.1, §6)
* :mod:`resnetlearn.training` — the SGD protocol of arXiv v3 §8.1, batched over many models
* :mod:`resnetlearn.learners` — the learners compared (networks, kernels, the hand-built solution), one record
  each with its label and style
* :mod:`resnetlearn.kernels` — the Gram matrices of the kernels of §3.1 (Gaussian, arcsine, conjugate, NTK,
  infinite width); :mod:`resnetlearn.ridge` — kernel ridge regression (eq 3.1–3.3);
  :mod:`resnetlearn.kernel_registry`, :mod:`resnetlearn.kernel_experiments` — the named kernels, their grids
  and the experiments that tune them on the networks' samples (§7, arXiv v3 §8.1)
* :mod:`resnetlearn.selection` — the grid-edge rule of every hyperparameter search
* :mod:`resnetlearn.plots`, :mod:`resnetlearn.live` — figures and live widgets for the notebooks, built on
  :mod:`resnetlearn.live_run` (the background job every widget shares); :mod:`resnetlearn.race` — the race
  of notebooks 00 and 03 as a computation (no widgets needed)
* :mod:`resnetlearn.figures` — the papers' experiments, one :class:`~resnetlearn.figures.FigureSpec` each
  (arXiv v3 §8, the §7 kernel theorem, companion Figure 1); :mod:`resnetlearn.reproduce` runs them
  (``python -m resnetlearn reproduce``) through :mod:`resnetlearn.store` (durable results, checksums),
  :mod:`resnetlearn.point` (a point as a record: learner, data, search, protocol; its store key),
  :mod:`resnetlearn.points` (running one point), :mod:`resnetlearn.running` (a figure, workers, signals),
  :mod:`resnetlearn.work_estimate`, :mod:`resnetlearn.figure_tables` (tables and plot written) and
  :mod:`resnetlearn.table_reading` (tables read back and checked); :mod:`resnetlearn.figures_plotly`
  draws them interactively
* :mod:`resnetlearn.device` — GPU when present, CPU otherwise
"""

from . import figures, kernels, networks, plots, training, validation  # noqa: E402  (submodules: rl.kernels, rl.training, ...)
from .activations import Activation, activation, activation_names
from .complexity import (
    C_STAR,
    Complexity,
    NonConvergentSeriesError,
    complexity_eps,
    complexity_s,
    compose,
    composition_blowup,
    concept_complexity,
    linear_power_example,
    truncation_degree,
)
from .concept import (
    DISTRIBUTIONS,
    Concept1,
    ParityInstance,
    ReferenceErrors,
    Sample,
    Split,
    Target,
    TwoLayerSmooth,
    companion_figure1,
    data_split,
    hard_instance,
    instance,
    parity_instance,
    random_concept,
    sample_inputs,
    talk_instance,
)
from .device import describe_device, select_device
from .training import Learner, Protocol, grid_search, paper_grid, train_models  # noqa: E402
from .version import __version__ as __version__

__all__ = [
    "Activation", "activation", "activation_names",
    "C_STAR", "Complexity", "NonConvergentSeriesError", "complexity_eps", "complexity_s",
    "compose", "composition_blowup", "concept_complexity", "linear_power_example",
    "truncation_degree",
    "DISTRIBUTIONS", "Concept1", "ParityInstance", "ReferenceErrors", "Sample", "Target",
    "TwoLayerSmooth", "companion_figure1", "hard_instance", "instance", "parity_instance",
    "random_concept", "sample_inputs", "talk_instance", "Split", "data_split",
    "describe_device", "select_device",
    "kernels", "networks", "plots", "training", "figures", "validation",
    "Learner", "Protocol", "grid_search", "paper_grid", "train_models",
]
