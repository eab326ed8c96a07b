"""What the notebooks show: one plotting style (:mod:`.plots`) and interactive figures (:mod:`.figures_plotly`),
the live widgets (:mod:`.live`, on :mod:`.live_run`) and the race of notebooks 00 and 03 (:mod:`.race`), numeric
self-checks (:mod:`.check`), student copies (:mod:`.student`) and the small experiments the notebooks run
(:mod:`.experiments`)."""
