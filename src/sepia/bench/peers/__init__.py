"""Where the benchmark's peer systems are installed (by ``scripts/install-bench-peers``) and
the files that drive them (``rspjs/``: the Node driver and its pinned npm dependencies;
``flink_job.py``: the PyFlink job). The peers are not project dependencies: they live in the
checkout, in ``bench-peers/node/`` and ``.venv-flink/``, or under ``$SEPIA_BENCH_PEERS``."""

from __future__ import annotations

import os
from pathlib import Path

PEERS_DIR = Path(__file__).parent
INSTALL_HINT = "run scripts/install-bench-peers"


def install_root() -> Path:
    """The folder holding ``bench-peers/`` and ``.venv-flink/``: $SEPIA_BENCH_PEERS, else the
    checkout this package is in (an editable install), else the working directory."""
    if chosen := os.environ.get("SEPIA_BENCH_PEERS"):
        return Path(chosen)
    for parent in PEERS_DIR.parents:
        if (parent / "pyproject.toml").exists():
            return parent
    return Path.cwd()
