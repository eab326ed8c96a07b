"""What the notebooks show: one plotting style (:mod:`.plots`) and interactive figures (:mod:`.figures_plotly`),
the live widgets (:mod:`.live`, on :mod:`.live_run`) and the race of notebooks 00 and 03 (:mod:`.race`), numeric
self-checks (:mod:`.check`), student copies (:mod:`.student`) and the small experiments the notebooks run
(:mod:`.experiments`).

Importing it inside a Jupyter kernel (every notebook does, through ``import resnetlearn``) sets torch to the
lessons' thread count, one, from the CPUs the process may really use (:mod:`resnetlearn.threads`; the variables
``RESNETLEARN_THREADS`` or ``OMP_NUM_THREADS`` decide instead when set). Scripts and the command line are left
as they are. Nothing else is imported with the package: a module loads its plotting or widget library when it is
itself imported (``from resnetlearn.classroom import plots``)."""

from ..threads import for_notebooks

for_notebooks()

__all__ = ["check", "copies", "experiments", "figures_plotly", "lecture", "live", "plots", "race", "rerun",
           "static_picture", "student"]
