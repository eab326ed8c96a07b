# Two commands, both self-installing into ./.venv:
#   make lab    install what a student needs (torch, then this package: `pip install -e .`, which brings
#               JupyterLab, ipywidgets, plotly), then start JupyterLab on notebooks/, opening 00_welcome
#   make test   also install the developer tools (`pip install -e ".[dev]"`: pytest, nbval, playwright, ruff),
#               then lint and run the whole suite (unit tests + pytest --nbval)
# and for teachers:
#   make lecture      the 50-minute lecture deck (notebooks/lecture.ipynb) presented live in JupyterLab: installs the
#                     lecture extra (jupyterlab-slideshow), copies the deck to lecture/ (git-ignored) only when that
#                     copy is missing, and opens the copy presenting, with settings and workspaces of its own
#                     (lecture/.jupyter/): make lab is unaffected. For a fresh copy, rename lecture/lecture.ipynb.
#   make student      copies of the notebooks without their folded answers, outputs cleared, in student/
#                     (git-ignored)
#   make lab-student  make student, then JupyterLab on student/
# As root (containers, Binder-like servers) both lab targets pass --allow-root themselves. More options for
# JupyterLab go in LAB_ARGS, quoted when there are several: make lab LAB_ARGS="--no-browser --port 8889"
#
# TORCH picks the torch installed first: torch==2.13.0, the version development and CI use. Which build pip
# picks depends on the machine: on Linux, PyPI's wheel of it is a CUDA build (several GB); macOS wheels are
# CPU/MPS builds. TORCH_INDEX optionally names a pip index for it, e.g. PyTorch's CPU-only wheels for a Linux
# machine without a GPU:
#   make lab TORCH_INDEX=https://download.pytorch.org/whl/cpu
# JupyterLab settings (no "get Jupyter news?" prompt, no update check) come with the package's own
# install: pip places binder/overrides.d/resnetlearn.json in
# $(VENV)/share/jupyter/lab/settings/overrides.d/ (pyproject.toml, shared-data), as for any pip install.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
LAB_ARGS ?=
BIN := $(VENV)/bin
# JupyterLab refuses to start as root without --allow-root
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root)
LAB := $(BIN)/jupyter lab --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(ROOT_ARGS)

.PHONY: install install-dev install-lecture lab lab-student lecture test lint student clean

# what a student needs: torch first (TORCH, TORCH_INDEX), then the package and its notebook dependencies
$(VENV)/.installed: pyproject.toml binder/overrides.d/resnetlearn.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -e .
	touch $@

# the developer tools on top (tests, linting, the browser test's playwright)
$(VENV)/.installed-dev: $(VENV)/.installed
	$(BIN)/python -m pip install -e ".[dev]"
	touch $@

# the lecture deck's slideshow extension on top
$(VENV)/.installed-lecture: $(VENV)/.installed
	$(BIN)/python -m pip install -e ".[lecture]"
	touch $@

install: $(VENV)/.installed

install-lecture: $(VENV)/.installed-lecture

install-dev: $(VENV)/.installed-dev

lab: install
	$(LAB) --notebook-dir=notebooks --LabApp.default_url=/lab/tree/00_welcome.ipynb $(LAB_ARGS)

lecture: install-lecture
	$(BIN)/python -m resnetlearn.classroom.lecture --folder lecture -- $(LAB_ARGS)

lab-student: student
	$(LAB) --notebook-dir=student --LabApp.default_url=/lab/tree/00_welcome.ipynb $(LAB_ARGS)

lint: install-dev
	$(BIN)/ruff check .

# One torch thread: float32 sums depend on the thread count, and the notebooks'
# committed outputs were computed with one thread (see README, Tests).
test: lint
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

student: install
	$(BIN)/python -m resnetlearn.classroom.student --out student

clean:
	rm -rf $(VENV)

# The reading copy: a static HTML book of every notebook with its committed outputs (nothing executed), in lab
# order, built offline into book/_build/html (open book/_build/html/index.html). Needs the book extra, which
# the dev install includes (.[dev] -> .[book]).
.PHONY: book book-clean
book: install-dev
	$(BIN)/python book/build.py --out book/_build/html

book-clean:
	rm -rf book/_build
