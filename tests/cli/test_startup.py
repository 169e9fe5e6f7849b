"""Commands that do not use Spark or the benchmark's plots do not import them: pyspark,
pandas and matplotlib cost every `sepia` process about a second at start-up (a local run
of E1 took 1.7 s, 0.6 s without them)."""

from __future__ import annotations

import subprocess
import sys


def test_the_cli_starts_without_spark_pandas_or_matplotlib():
    probe = (
        "import sys; from sepia.cli import app; "
        "print(sorted(m for m in ('pyspark', 'pandas', 'matplotlib') if m in sys.modules))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == "[]"


def test_the_cli_loads_engines_only_for_the_command_that_runs_one():
    """`sepia --help`, `sepia generate` or `sepia explain` never load the engine (numpy,
    polars, the columnar core), the reference evaluator or the timeline's replay: importing
    them all took 1.5 s of the 2.1 s of `import sepia.cli` (a loaded machine); a command
    loads what it runs when it runs."""
    heavy = ("sepia.engine", "sepia.semantics", "sepia.timeline", "numpy", "polars")
    probe = (
        f"import sys; from sepia.cli import app; "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    found = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == "[]"
