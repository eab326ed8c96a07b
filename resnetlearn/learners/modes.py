"""The training modes of arXiv v3 §8.1 ("Neural Networks Algorithms" and "Kernel Methods"), one record each.

* ``all`` — every weight trained;
* ``hidden`` — the output layer A stays at its initialisation (Theorem 1's setting);
* ``last`` — only A is trained: linear regression on random features, i.e. the conjugate kernel, a kernel
  method;
* ``ntk`` — the network replaced by its linearisation at initialisation, f₀ + ⟨∇f₀, θ − θ₀⟩, trained by the
  same optimiser (weight decay acts on θ − θ₀, which makes it ridge regression with the neural tangent kernel).

A :class:`Mode` says what SGD moves, how the model's output is formed and whether the model is a kernel method
with an exact ridge solution. The engine (:mod:`resnetlearn.learners.training`), the
kernel experiments, the memory estimate and the learner records ask the record; no other code compares a mode's
name. Adding a mode is one entry of :data:`MODES` (and, if its output is formed in a new way, the engine's
:class:`resnetlearn.learners.engine.Model`).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from ..validation import Options

__all__ = ["Mode", "MODES", "mode_of"]


@dataclass(frozen=True)
class Mode:
    """One training mode of §8.1: what SGD moves and how the model's output is formed.

    Parameters
    ----------
    name : str
        The mode's name, its key in :data:`MODES`.
    trains_hidden : bool
        Whether SGD moves the hidden layers' weights (keyword-only, as the fields below).
    trains_readout : bool
        Whether SGD moves the readout A.
    linearised : bool, default False
        The model is the network linearised at its initialisation θ₀, and SGD moves the displacement Δ = θ − θ₀
        from 0 (mode ``ntk``).
    initial_features : bool, default False
        The model is a readout on the features φ₀ of the initial network (mode ``last``).
    kernel : str or None, default None
        The :data:`resnetlearn.kernels.registry.KERNEL_REGISTRY` kernel whose ridge regression is the mode's exact
        solution (None: the mode trains the network itself, no kernel method).
    """

    name: str
    _: KW_ONLY
    trains_hidden: bool
    trains_readout: bool
    linearised: bool = False
    initial_features: bool = False
    kernel: str | None = None

    @property
    def defined_at_init(self) -> bool:
        """The model is a function of θ₀ as well (a readout on the initial features, or the linearisation)."""
        return self.linearised or self.initial_features

    @property
    def kernel_method(self) -> bool:
        """Whether SGD trains a kernel method, whose exact ridge solution a figure point computes beside it."""
        return self.kernel is not None

    @property
    def trains_network(self) -> bool:
        """Whether SGD trains the network itself (not a model fixed at θ₀): what layer-wise training and the
        frozen-gate network need."""
        return not self.defined_at_init

    def trainable(self, names, readout) -> list[str]:
        """Which of the parameter ``names`` SGD moves in this mode.

        Parameters
        ----------
        names : iterable of str
            Parameter names.
        readout : collection of str
            The readout's parameters among them (A).

        Returns
        -------
        list of str
            The names SGD moves, in the order of ``names``.
        """
        return [n for n in names if (self.trains_readout if n in readout else self.trains_hidden)]


MODES: dict[str, Mode] = {
    m.name: m for m in (
        Mode("all", trains_hidden=True, trains_readout=True),
        Mode("hidden", trains_hidden=True, trains_readout=False),
        Mode("last", trains_hidden=False, trains_readout=True, initial_features=True, kernel="conjugate"),
        Mode("ntk", trains_hidden=True, trains_readout=True, linearised=True, kernel="ntk"),
    )
}
"""Every training mode, by name (the order is §8.1's)."""


MODE = Options(MODES)
"""What a parameter naming a training mode accepts: a key of :data:`MODES`."""


def mode_of(name: str) -> Mode:
    """The :class:`Mode` named ``name``.

    Parameters
    ----------
    name : {"all", "hidden", "last", "ntk"}
        A key of :data:`MODES` (:data:`MODE`).

    Returns
    -------
    Mode
        Its record.

    Raises
    ------
    ValueError
        ``name`` is not a mode; the error names the allowed ones.
    """
    return MODES[MODE.check("mode", name)]
