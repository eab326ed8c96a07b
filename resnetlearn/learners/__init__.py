"""Who learns, and how: the networks of eq 2.1 / §6 as one layer graph (:mod:`.networks`), the SGD protocol of
arXiv v3 §8.1 batched over many models (:mod:`.training`, its engine :mod:`.engine`, the modes :mod:`.modes`)
with its CUDA-graph capture (:mod:`.capture`), the hyperparameter search (:mod:`.search`) and the
grid-edge rule of every hyperparameter search (:mod:`.selection`), and the §8.2 solution built by hand
(:mod:`.hand_built`). A learner here is plain (architecture, mode, width, initialisation): the records that
store and search for every kind of learner (a network, a kernel, the hand-built solution) hold kernels too, so
they live above both, in :mod:`resnetlearn.reproduce.learner`. ``__all__`` names the modules a user calls;
:mod:`.engine` and :mod:`.capture` serve :mod:`.training`."""

__all__ = ["hand_built", "modes", "networks", "search", "selection", "training"]
