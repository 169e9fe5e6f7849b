# The two commands a newcomer needs: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: setup test-tools demo test lint explore checkpoint-jar
setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/check-java
	@scripts/check-java
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	@touch $@

# Tools only some tests use (each test is skipped without its tool): a Mosquitto broker for
# the MQTT source's test, headless Chromium for the HTML timeline's. `make test` installs
# them; `make demo` never does.
test-tools: $(VENV)/.test-tools
$(VENV)/.test-tools: scripts/install-mosquitto scripts/install-chromium | $(VENV)/.installed
	@scripts/install-mosquitto
	@scripts/install-chromium
	@touch $@

# The shops-and-coupons example of the RSP-QL paper (examples/e1-shops-coupons), in three
# steps that each say what they show; the folder's run.json names its query, streams, data.
E1 := examples/e1-shops-coupons
SAY := @printf '\n\033[1m%s\033[0m\n%s\n\n'
demo: setup
	@scripts/check-java
	$(SAY) "Step 1 of 3: the answer, from the reference evaluator (instant)" \
		"The query of $(E1)/query.rq over its two streams and background graph."
	$(VENV)/bin/sepia run $(E1) --engine reference --format table
	$(SAY) "Step 2 of 3: the same query as a Spark Structured Streaming job" \
		"Starting Spark takes most of this step (10-30 s); the tables must hold step 1's rows."
	$(VENV)/bin/sepia run $(E1) --engine spark --format table --no-progress
	$(SAY) "Step 3 of 3: the stream files checked by Spark's ingest pipeline" \
		"Elements, triples, time range and rate per stream; any bad element is listed."
	$(VENV)/bin/sepia validate http://example.org/nearby=$(E1)/stream-nearby.trig \
		http://example.org/coupons=$(E1)/stream-coupons.trig
	@printf '\n\033[1mNext steps\033[0m\n'
	@echo "  $(VENV)/bin/sepia run examples/e2-subway-delays --engine local"
	@echo "      any examples/ folder runs as it is; --engine local is the in-process engine"
	@echo "  $(VENV)/bin/sepia explain $(E1)/query.rq"
	@echo "      what a query compiles to, and the local engine's plan"
	@echo "  $(VENV)/bin/sepia run --help"
	@echo "      streams (files, folders, MQTT, Kafka ...), background data, engines, formats"
	@echo "  docs/queries.md: the query languages; docs/formats.md: inputs and results"

lint: setup
	$(VENV)/bin/ruff check src tests
	$(VENV)/bin/mypy

# Two pytest-xdist workers, the Spark tests grouped on one (tests/conftest.py).
# pytest exits 5 when it collected no test: that is not a failure of the code.
test: setup test-tools lint
	@scripts/check-java
	$(PY) -m pytest -n 2 --dist loadgroup; rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests"; rc=0; fi; exit $$rc

# Hypothesis exploration for MINUTES (default 10): random draws of the differential tests;
# failures found land in tests/hypothesis-examples/, replayed by `make test` once committed.
explore: setup
	MINUTES=$(or $(MINUTES),10) scripts/explore

# The checkpoint file manager Spark loads from the driver's class path (session.py), compiled
# against the installed PySpark's jars; the jar is committed, so only a change to its source
# needs this (and a JDK's javac).
checkpoint-jar: setup
	rm -rf build/checkpoint-classes
	javac --release 17 -cp '$(shell $(PY) -c "import pyspark, os; print(os.path.join(os.path.dirname(pyspark.__file__), 'jars'))")/*' \
		-d build/checkpoint-classes src/sepia/runtime/spark/java/LocalCheckpointFileManager.java
	jar --create --file src/sepia/runtime/spark/sepia-checkpoints.jar --date 2026-01-01T00:00:00Z \
		-C build/checkpoint-classes .
