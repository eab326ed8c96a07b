# Two commands, both self-installing into ./.venv:
#   make lab    install, then start JupyterLab on notebooks/
#   make test   install, then lint and run the whole suite (unit tests + pytest --nbval)
#
# TORCH picks the torch build installed first (default: the CPU build pinned
# for development and CI). TORCH_INDEX optionally names a pip index for it,
# e.g. PyTorch's CPU-only wheel index on a Linux machine without a GPU:
#   make lab TORCH_INDEX=https://download.pytorch.org/whl/cpu
# LAB_SETTINGS: JupyterLab settings shipped with the project (binder/overrides.json:
# no "get Jupyter news?" prompt, no update check), installed into the venv.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV ?= .venv
TORCH ?= torch==2.13.0
TORCH_INDEX ?=
LAB_ARGS ?=
BIN := $(VENV)/bin
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json

.PHONY: install lab test lint clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install "$(TORCH)" $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(BIN)/python -m pip install -e ".[dev]"
	touch $@

$(LAB_SETTINGS): binder/overrides.json $(VENV)/.installed
	mkdir -p $(dir $@)
	cp binder/overrides.json $@

install: $(VENV)/.installed $(LAB_SETTINGS)

lab: install
	$(BIN)/jupyter lab --notebook-dir=notebooks --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate $(LAB_ARGS)

lint: install
	$(BIN)/ruff check .

# One torch thread: float32 sums depend on the thread count, and the notebooks'
# committed outputs were computed with one thread (see README, Tests).
test: lint
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest --nbval --nbval-current-env --nbval-sanitize-with tests/nbval_sanitize.cfg

clean:
	rm -rf $(VENV)
