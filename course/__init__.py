"""Course-authoring tools: the study-time model of the notebooks (:mod:`course.notebook_timings`), the lecture's
one-page plan (:mod:`course.lecture_plan`), the projector measurements (:mod:`course.projector`), cold reads
(:mod:`course.cold_read`) and the re-execution of notebooks as their committed outputs are made
(:mod:`course.execute_notebook`). Each module is also a script run from the repository root, e.g.
``python course/notebook_timings.py``; the tests import them as ``from course import notebook_timings``.

They read and write the repository's own files (``notebooks/``, ``course/results/``), so they are not part of the
installed package ``resnetlearn``, which a student's notebooks import."""
