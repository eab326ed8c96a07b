# Two commands, both self-installing into ./.venv:
#   make lab    install, then start JupyterLab on notebooks/
#   make test   install, then lint and run the whole suite (unit tests + pytest --nbval)
# and one for teachers:
#   make student  copies of the notebooks without their folded answers, outputs cleared, in student/ (git-ignored)
#
# TORCH picks the torch build installed first (default: the CPU build pinned
# for development and CI). TORCH_INDEX optionally names a pip index for it,
# e.g. PyTorch's CPU-only wheel index on a Linux machine without a GPU:
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

.PHONY: install lab test lint student clean

$(VENV)/.installed: pyproject.toml binder/overrides.d/resnetlearn.json
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -e ".[dev]"
	touch $@

install: $(VENV)/.installed

lab: install
	$(BIN)/jupyter lab --notebook-dir=notebooks --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(LAB_ARGS)

lint: install
	$(BIN)/ruff check .

# One torch thread: float32 sums depend on the thread count, and the notebooks'
# committed outputs were computed with one thread (see README, Tests).
test: lint
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

student: install
	$(BIN)/python -m resnetlearn.student --out student

clean:
	rm -rf $(VENV)
