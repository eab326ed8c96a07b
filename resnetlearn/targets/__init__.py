"""What is learned: the concept class H = β·F + α·G(F) of §5 and its instances (:mod:`.concept`), smooth
activations (:mod:`.activations`), and the complexity measures ℭ_ε, ℭ_s of §4 (:mod:`.complexity`) with the
Taylor-series engine they sum (:mod:`.taylor`, :mod:`.radius`, :mod:`.power_series`, :mod:`.weighted_sums`, which
``__all__`` leaves out: they serve :mod:`.complexity`)."""

__all__ = ["activations", "complexity", "concept"]
