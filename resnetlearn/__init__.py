"""resnetlearn: an interactive, tested companion to "What Can ResNet Learn
Efficiently, Going Beyond Kernels?" (Allen-Zhu & Li, NeurIPS 2019) and
"Learning and Generalization in Overparameterized Neural Networks, Going
Beyond Two Layers" (Allen-Zhu, Li & Liang, NeurIPS 2019).

Modules, one per concept of the papers:

* :mod:`resnetlearn.activations` — smooth activations with a symbolic form (§5)
* :mod:`resnetlearn.concept` — the concept class H = β·F + α·G(F) and its instances (§5, §7, §8.1)
* :mod:`resnetlearn.complexity` — the complexity measures 𝔆_ε, 𝔆_s (§4; companion §2)
* :mod:`resnetlearn.device` — GPU when present, CPU otherwise
"""

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
    Target,
    TwoLayerSmooth,
    companion_figure1,
    hard_instance,
    instance,
    parity_instance,
    random_concept,
    sample_inputs,
    talk_instance,
)
from .device import describe_device, select_device

__version__ = "0.1.0"

__all__ = [
    "Activation", "activation", "activation_names",
    "C_STAR", "Complexity", "NonConvergentSeriesError", "complexity_eps", "complexity_s",
    "compose", "composition_blowup", "concept_complexity", "linear_power_example",
    "truncation_degree",
    "DISTRIBUTIONS", "Concept1", "ParityInstance", "ReferenceErrors", "Sample", "Target",
    "TwoLayerSmooth", "companion_figure1", "hard_instance", "instance", "parity_instance",
    "random_concept", "sample_inputs", "talk_instance",
    "describe_device", "select_device",
]
