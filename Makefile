# The two commands a newcomer needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/check-java
	@scripts/check-java
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $@

demo: setup
	@scripts/check-java
	$(VENV)/bin/sepia validate examples/*/stream*.trig

lint: setup
	$(VENV)/bin/ruff check src tests

# pytest exits 5 when it collected no test: that is not a failure of the code.
test: setup lint
	@scripts/check-java
	$(PY) -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; rc=0; fi; exit $$rc
