# Stud Arena: set up the virtualenv, run the tests, the benchmarks and training.
#   make test                 build .venv if needed, then run ruff check and pytest
#   make test TORCH=torch     same, but let pip pick the torch build
#   make bench                install the benchmarks' extras (.[bench]) if needed, run every bench/*.py
#   make bench QUICK=1        the same with each script's --quick options (a smoke run, not numbers)
#
# TORCH is passed to `pip install` unquoted, so it may carry pip options, e.g. where pip would
# otherwise fetch the CUDA build:
#   make test TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"
# (quote a version range inside it: TORCH="'torch>=2.13'").
PY ?= python3
VENV ?= .venv
TORCH ?= torch==2.13.0
QUICK ?=

PYTHON := $(VENV)/bin/python
PIP := $(PYTHON) -m pip
STAMP := $(VENV)/.installed
BENCH_STAMP := $(VENV)/.installed-bench
# QUICK=1 (any value but empty, 0, no or false) adds --quick to every benchmark script.
BENCH_FLAGS := $(if $(filter-out 0 no false,$(QUICK)),--quick)

.PHONY: setup test bench train clean

setup: $(STAMP)

# The pinned torch goes in first so that the project's loose `torch>=2.13` is already met and
# pip does not fetch a different build. Editing pyproject.toml, setup.py or any file of the
# compiled core's source (every file under src/) re-runs the install, which rebuilds the core
# (envs/_stud_core).
CORE_SOURCES := $(wildcard src/*.cpp src/*.h src/*/*.h)
$(STAMP): pyproject.toml setup.py $(CORE_SOURCES)
	test -x $(PYTHON) || $(PY) -m venv $(VENV)
	$(PIP) install $(TORCH)
	$(PIP) install -e ".[dev]"
	@touch $@

# The benchmarks' extras (rlcard, for PettingZoo's texas_holdem_v4 reference) have a stamp of
# their own, so that `make bench` installs them into a .venv that `make test` built, and
# `make test` never needs them.
$(BENCH_STAMP): $(STAMP) pyproject.toml
	$(PIP) install -e ".[dev,bench]"
	@touch $@

test: setup
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest

bench: $(BENCH_STAMP)
	@set -e; for script in $(filter-out bench/quick_option.py,$(sort $(wildcard bench/*.py))); do \
	  echo "== $$script $(BENCH_FLAGS)"; \
	  start=$$(date +%s); \
	  $(PYTHON) $$script $(BENCH_FLAGS); \
	  echo "== $$script took $$(( $$(date +%s) - start )) s"; \
	done

train: setup
	$(PYTHON) train/ppo.py --config configs/soko_ppo.yaml

# Removes build and test leftovers; the virtualenv stays (delete $(VENV) by hand to rebuild it).
clean:
	rm -rf build dist *.egg-info .pytest_cache .hypothesis
	find $(wildcard envs agents arena train tests bench) -type d -name __pycache__ -prune -exec rm -rf {} +
