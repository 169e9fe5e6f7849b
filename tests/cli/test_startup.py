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
