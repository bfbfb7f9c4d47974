# Stud Arena: set up the virtualenv, run the tests, the benchmarks and training.
#   make test                 build .venv if needed, then run pytest
#   make test TORCH=torch     same, but let pip pick the torch build
PY ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0

PYTHON := $(VENV)/bin/python
PIP := $(PYTHON) -m pip
STAMP := $(VENV)/.installed

.PHONY: setup test bench train clean

setup: $(STAMP)

# The pinned torch goes in first so that the project's loose `torch>=2.13` is already met and
# pip does not fetch a different build. Editing pyproject.toml, setup.py or the compiled core's
# source re-runs the install, which rebuilds the core (envs/_stud_core).
$(STAMP): pyproject.toml setup.py src/stud_core.cpp
	test -x $(PYTHON) || $(PY) -m venv $(VENV)
	$(PIP) install "$(TORCH)"
	$(PIP) install -e ".[dev]"
	@touch $@

test: setup
	$(PYTHON) -m pytest

bench: setup
	@set -e; for script in $(sort $(wildcard bench/*.py)); do \
	  echo "== $$script"; \
	  $(PYTHON) $$script; \
	done

train: setup
	$(PYTHON) train/ppo.py --config configs/soko_ppo.yaml

# Removes build and test leftovers; the virtualenv stays (delete $(VENV) by hand to rebuild it).
clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis
	find $(wildcard envs agents arena train tests bench) -type d -name __pycache__ -prune -exec rm -rf {} +
