# coflowlab: the two set-up commands are `make demo` and `make test`.
# Each creates .venv (python3 -m venv) when it is missing and installs the package into it.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
# Known-good versions of the whole dependency tree (Python 3.11), refreshed with `make lock`.
LOCK   := requirements-lock.txt
PYTEST_ARGS ?=

.PHONY: demo test test-slow proofs bench lint typecheck lock clean

$(PY):
	$(PYTHON) -m venv $(VENV)

# Everything, the build tools included, comes from the lock file: setuptools and wheel are
# installed first so the editable build uses the locked ones (no build isolation).
$(STAMP): setup.cfg pyproject.toml $(LOCK) | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check -c $(LOCK) --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -c $(LOCK) --no-build-isolation -e ".[test,dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m coflowlab demo

test: $(STAMP)
	$(PY) -m pytest -q -m "not slow" --timeout=900 $(PYTEST_ARGS)

test-slow: $(STAMP)
	$(PY) -m pytest -q -m slow $(PYTEST_ARGS)

# the property suites with thousands of examples each, and their summary table
proofs: $(STAMP)
	COFLOWLAB_PROOFS=thorough $(PY) -m pytest -q proofs-checks --proofs-summary --timeout=900 $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: $(STAMP)
	$(VENV)/bin/mypy coflowlab formulations approximations heuristics instances reports

# Re-resolves the newest versions setup.cfg allows, in a throw-away environment, and writes
# them to the lock file (all extras, gurobi included). Run it, then `make clean test`.
lock:
	rm -rf .lock-venv
	$(PYTHON) -m venv .lock-venv
	.lock-venv/bin/python -m pip install --quiet --upgrade pip setuptools wheel
	.lock-venv/bin/python -m pip install --quiet ".[test,dev,gurobi]"
	{ echo "# coflowlab lock file: known-good versions, written by 'make lock' on $$(date -u +%F)"; \
	  echo "# with $$(.lock-venv/bin/python --version); used as pip constraints by make demo/test."; \
	  .lock-venv/bin/python -m pip freeze --all --exclude coflowlab; } > $(LOCK).tmp
	mv $(LOCK).tmp $(LOCK)
	rm -rf .lock-venv

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
