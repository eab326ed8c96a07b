"""resnetlearn: an interactive, tested companion to "What Can ResNet Learn
Efficiently, Going Beyond Kernels?" (Allen-Zhu & Li, NeurIPS 2019) and
"Learning and Generalization in Overparameterized Neural Networks, Going
Beyond Two Layers" (Allen-Zhu, Li & Liang, NeurIPS 2019).

Five subpackages, one per part of the argument, each importing only those below it, and helpers below all:

    classroom    what the notebooks show
        ↓
    reproduce    the papers' experiments as records, runs and a verified store
        ↓
    kernels      Gram matrices, kernel ridge regression, kernel searches
        ↓
    learners     the networks, their SGD protocol and hyperparameter search
        ↓
    targets      the concept class, activations, complexity measures
        ↓
    validation · memory · device · threads · version

* :mod:`resnetlearn.targets` — what is learned: the concept class H = β·F + α·G(F) and its instances (§5, §7, §8.1),
  smooth activations (§5), the complexity measures ℭ_ε, ℭ_s (§4; companion §2) and the Taylor-series engine they sum
* :mod:`resnetlearn.learners` — who learns it: the networks 3resnet / 3layer / 2layer as one layer graph (eq 2.1, §6),
  the SGD protocol of arXiv v3 §8.1 batched over many models, its hyperparameter search, the grid-edge rule of
  every search
* :mod:`resnetlearn.kernels` — the kernels of §3.1, one module each (Gaussian and arcsine, conjugate, empirical NTK,
  infinite width), kernel ridge regression (eq 3.1–3.3) and the experiments that tune them on the networks' samples
* :mod:`resnetlearn.reproduce` — the papers' experiments, one definition per figure (arXiv v3 §8, the §7 kernel
  theorem, companion Figure 1), the learner records (network, kernel, hand-built solution), a point as a record,
  a verified results store, ``python -m resnetlearn reproduce``
* :mod:`resnetlearn.classroom` — what the notebooks show: plots and interactive figures, the live widgets and the
  race of notebooks 00 and 03, answer checks, student copies, small experiments
* :mod:`resnetlearn.validation`, :mod:`resnetlearn.memory`, :mod:`resnetlearn.device`, :mod:`resnetlearn.threads` —
  parameter checks, memory needs checked before allocation, GPU when present, torch's CPU threads from the quota

``import resnetlearn`` loads no plotting or widget library: ``resnetlearn.plots`` (the classroom's matplotlib
figures) is imported when first used.
"""

import importlib

from . import classroom, kernels, validation  # classroom: torch's threads set for a Jupyter kernel, nothing plotted
from .device import describe_device, select_device
from .learners import networks, training
from .learners.search import Selection, grid_search, paper_grid
from .learners.training import Learner, Protocol, RunOptions, train_models
from .reproduce import figures  # submodules as rl.kernels, rl.training, rl.figures, ...
from .targets import complexity, concept
from .targets.activations import Activation, activation, activation_names
from .targets.complexity import (
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
from .targets.concept import (
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
    "classroom", "kernels", "networks", "plots", "training", "figures", "validation", "complexity", "concept",
    "Learner", "Protocol", "RunOptions", "Selection", "grid_search", "paper_grid", "train_models",
]


def __getattr__(name: str):
    """``resnetlearn.plots``, imported on first use so that ``import resnetlearn`` loads no matplotlib."""
    if name == "plots":
        return importlib.import_module(".classroom.plots", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
