# The two commands a newcomer needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup demo test lint explore
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/check-java scripts/install-mosquitto scripts/install-chromium
	@scripts/check-java
	@scripts/install-mosquitto
	@scripts/install-chromium
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $@

# The shops-and-coupons example of the RSP-QL paper (examples/e1-shops-coupons): the Spark
# ingest pipeline checks its streams, the reference evaluator answers the query, then the
# same query runs as a Spark Structured Streaming job (the default engine).
E1 := examples/e1-shops-coupons
E1_INPUTS := --stream http://example.org/nearby=$(E1)/stream-nearby.trig \
	--stream http://example.org/coupons=$(E1)/stream-coupons.trig --data $(E1)/background.ttl
demo: setup
	@scripts/check-java
	$(VENV)/bin/sepia validate http://example.org/nearby=$(E1)/stream-nearby.trig \
		http://example.org/coupons=$(E1)/stream-coupons.trig
	$(VENV)/bin/sepia run $(E1)/query.rq --engine reference --format table $(E1_INPUTS)
	$(VENV)/bin/sepia run $(E1)/query.rq --engine spark --format table $(E1_INPUTS)

lint: setup
	$(VENV)/bin/ruff check src tests

# pytest exits 5 when it collected no test: that is not a failure of the code.
test: setup lint
	@scripts/check-java
	$(PY) -m pytest; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; rc=0; fi; exit $$rc

# Hypothesis exploration for MINUTES (default 10): random draws of the differential tests;
# failures found land in tests/hypothesis-examples/, replayed by `make test` once committed.
explore: setup
	MINUTES=$(or $(MINUTES),10) scripts/explore
