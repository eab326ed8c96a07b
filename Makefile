# Two commands, both self-installing into ./.venv:
#   make lab    install what a student needs (torch, then this package: `pip install -e .`, which brings
#               JupyterLab, ipywidgets, plotly), then start JupyterLab on working copies of the notebooks in
#               work/ (git-ignored; made on the first start, never overwritten: your edits stay there and the
#               tracked notebooks/ stay as committed), opening 00_welcome
#   make test   also install the developer tools (`pip install -e ".[dev]"`: pytest, nbval, playwright, ruff),
#               then lint and run the whole suite (every tier, notebooks by pytest --nbval)
# and for developers, the unit tier alone (no notebook, browser, install or slow test; see CONTRIBUTING.md):
#   make test-fast
# PYTEST_ARGS adds options to either: make test PYTEST_ARGS="--durations=30"
# and for teachers:
#   make lecture      the 50-minute lecture deck (notebooks/lecture.ipynb) presented live in JupyterLab: installs the
#                     lecture extra (jupyterlab-slideshow), copies the deck to lecture/ (git-ignored) only when that
#                     copy is missing, and opens the copy presenting, with settings and workspaces of its own
#                     (lecture/.jupyter/): make lab is unaffected. For a fresh copy, rename lecture/lecture.ipynb.
#   make student      copies of the notebooks without their folded answers, outputs cleared, in student/
#                     (git-ignored); a copy already there is the student's and is kept
#   make lab-student  make student, then JupyterLab on student/
#   make fresh-copies / make fresh-student   every copy in work/ / student/ written anew; a copy that differs
#                     is first moved to work/.old/<time>/ (student/.old/<time>/), never deleted
# As root (containers, Binder-like servers) both lab targets pass --allow-root themselves. More options for
# JupyterLab go in LAB_ARGS, quoted when there are several: make lab LAB_ARGS="--no-browser --port 8889"
#
# Torch by hardware. TORCH is the torch installed first: torch==2.13.0, the version development and CI use.
# TORCH_BUILD picks its build: `cpu` where no NVIDIA driver is found (no `nvidia-smi` on PATH), `cuda` where
# one is; `make` prints which it picked and why when it installs. A cpu build on Linux takes a torch that pip
# finds without any index (a local wheel folder, as on our development machine and CI) and otherwise PyTorch's
# CPU-only index (TORCH_CPU_INDEX); a cuda build, and any build on macOS (CPU/MPS wheels), take PyPI's wheel
# (on Linux a CUDA build, several GB). TORCH_INDEX, when set, names the index for every build. Override:
#   make lab TORCH_BUILD=cpu                 # the CPU-only build on a machine with an NVIDIA GPU
#   make lab TORCH_BUILD=cuda                # PyPI's CUDA build although no nvidia-smi was found
#   make lab TORCH_INDEX=https://download.pytorch.org/whl/cu126   # a pip index of your choice
# They only matter when ./.venv is created (`make clean` starts over).
# JupyterLab settings (no "get Jupyter news?" prompt, no update check) come with the package's own
# install: pip places binder/overrides.d/resnetlearn.json in
# $(VENV)/share/jupyter/lab/settings/overrides.d/ (pyproject.toml, shared-data), as for any pip install.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
UNAME := $(shell uname -s)
NVIDIA_SMI := $(shell command -v nvidia-smi 2>/dev/null)
TORCH_BUILD ?= $(if $(NVIDIA_SMI),cuda,cpu)
TORCH_WHY := $(if $(filter command line environment,$(origin TORCH_BUILD)),set by you,$(if $(NVIDIA_SMI),an NVIDIA \
	driver was found ($(NVIDIA_SMI)),no NVIDIA driver was found (no nvidia-smi on PATH)))
ifeq ($(filter cpu cuda,$(TORCH_BUILD)),)
$(error TORCH_BUILD must be cpu or cuda, got '$(TORCH_BUILD)')
endif
TORCH_PIP := $(BIN)/python -m pip install "$(TORCH)"
ifneq ($(TORCH_INDEX),)
TORCH_INSTALL := $(TORCH_PIP) --index-url $(TORCH_INDEX)
else ifeq ($(TORCH_BUILD)$(UNAME),cpuLinux)
# a local wheel first (no index, nothing downloaded; its dependencies then from pip's usual indexes), else
# PyTorch's CPU-only index
TORCH_INSTALL := if $(TORCH_PIP) --no-index --no-deps >/dev/null 2>&1; then echo "torch: from a local wheel"; \
	$(TORCH_PIP); else echo "torch: from $(TORCH_CPU_INDEX)"; $(TORCH_PIP) --index-url $(TORCH_CPU_INDEX); fi
else
TORCH_INSTALL := $(TORCH_PIP)
endif
LAB_ARGS ?=
PYTEST_ARGS ?=
# JupyterLab refuses to start as root without --allow-root
ROOT_ARGS := $(if $(filter 0,$(shell id -u)),--allow-root)
LAB := $(BIN)/jupyter lab --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(ROOT_ARGS)

.PHONY: install install-dev install-lecture lab lab-student lecture test test-fast lint student clean copies \
	fresh-copies fresh-student

# what a student needs: torch first (TORCH, TORCH_BUILD, TORCH_INDEX), then the package and its notebook dependencies
$(VENV)/.installed: pyproject.toml binder/overrides.d/resnetlearn.json
	$(PYTHON) -m venv $(VENV)
	@echo "torch: the $(TORCH_BUILD) build of $(TORCH): $(TORCH_WHY)"
	$(TORCH_INSTALL)
	@$(BIN)/python -c "import torch; print('torch: installed', torch.__version__, 'CUDA ' + torch.version.cuda if torch.version.cuda else '(CPU build)')"
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

lab: copies
	$(LAB) --notebook-dir=work --LabApp.default_url=/lab/tree/00_welcome.ipynb $(LAB_ARGS)

# working copies of the notebooks (outputs and answers kept) in work/: only missing ones are written
copies: install
	$(BIN)/python -m resnetlearn.classroom.copies --out work

fresh-copies: install
	$(BIN)/python -m resnetlearn.classroom.copies --out work --fresh

lecture: install-lecture
	$(BIN)/python -m resnetlearn.classroom.lecture --folder lecture -- $(LAB_ARGS)

lab-student: student
	$(LAB) --notebook-dir=student --LabApp.default_url=/lab/tree/00_welcome.ipynb $(LAB_ARGS)

lint: install-dev
	$(BIN)/ruff check .

# One torch thread: float32 sums depend on the thread count, and the notebooks'
# committed outputs were computed with one thread (see docs/testing.md).
test: lint
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg \
		$(PYTEST_ARGS)

# the unit tier (markers in pyproject.toml, applied in tests/conftest.py): under 3 minutes on 2 cores
test-fast: install-dev
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -m unit $(PYTEST_ARGS)

student: install
	$(BIN)/python -m resnetlearn.classroom.student --out student

fresh-student: install
	$(BIN)/python -m resnetlearn.classroom.student --out student --fresh

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
