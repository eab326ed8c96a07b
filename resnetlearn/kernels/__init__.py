"""Kernel methods, done exactly (ResNet paper §3.1–3.2, §7; arXiv v3 §8.1): the public face.

A kernel method predicts 𝔎(x) = Σ_n K(x, x_n)·a_n (eq 3.1). The names here are the Gram functions K(x, x') (all in
float64) and what they need, each from the module of its one idea:

* :mod:`.checks` — inputs as float64 matrices, memory needs refused before allocation;
* :mod:`.classical` — the Gaussian and arcsine kernels of §3.1;
* :mod:`.initial_network` — the network behind a finite kernel: one model at initialisation in float64, its
  parameterisation, hidden representation and back-propagated signals;
* :mod:`.conjugate_kernel` — ⟨φ(x), φ(x')⟩ of that network (mode ``last``);
* :mod:`.empirical_ntk` — its empirical NTK, Jacobian products and seed-to-seed spread;
* :mod:`.infinite` — the infinite-width NNGP and NTK by the arc-cosine recursion;
* :mod:`.parities` — why none of them learns the §8.1 instance from few samples (§7, parity counting).

Beside them: :mod:`.ridge` solves for the coefficients (kernel ridge regression, eq 3.2), :mod:`.registry` names
the kernels and their grids, :mod:`.experiments` tunes and compares them on the networks' samples.
"""

from __future__ import annotations

from .checks import F64, as_matrix, as_targets, check_gram_memory, check_network_memory
from .classical import arcsine, gaussian
from .conjugate_kernel import conjugate, features
from .empirical_ntk import OUTPUTS, jacobian, jvp, ntk, ntk_spread, vjp
from .infinite import infinite_archs, infinite_width
from .initial_network import PARAMETERIZATIONS, Parameterization, check_arch, network_archs, single_model
from .parities import parity_counts, parity_reach

__all__ = [
    "F64", "OUTPUTS", "PARAMETERIZATIONS", "Parameterization",
    "as_matrix", "as_targets", "check_gram_memory", "check_network_memory", "check_arch", "single_model",
    "gaussian", "arcsine", "features", "conjugate", "ntk", "jacobian", "vjp", "jvp", "ntk_spread",
    "network_archs", "infinite_archs", "infinite_width", "parity_counts", "parity_reach",
]
