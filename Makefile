# coflowlab: the two set-up commands are `make demo` and `make test`.
# Each creates .venv (python3 -m venv) when it is missing and installs the package into it.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
PYTEST_ARGS ?=

.PHONY: demo test test-slow proofs bench lint typecheck clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): setup.cfg pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m coflowlab demo

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS)

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow $(PYTEST_ARGS)

# the property suites with thousands of examples each, and their summary table
proofs: $(STAMP)
	COFLOWLAB_PROOFS=thorough $(PY) -m pytest -q proofs-checks --proofs-summary $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy coflowlab formulations approximations heuristics instances reports

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
