"""The package's version, in one place: the package exports it, and the results store writes it into every
point's key (:meth:`resnetlearn.reproduce.store.ResultsStore.key`), so a new version never reuses stale numbers."""

__version__ = "0.1.0"
