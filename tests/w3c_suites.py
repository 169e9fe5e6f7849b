"""Where the W3C SPARQL suites are expected, and what a run does without them.

They sit in the shared folder beside the repository (``../shared/conformance/w3c-sparql``;
CI clones it there) or under ``$SEPIA_SHARED``. They are the only independent check of the
SPARQL both evaluators share, so a missing suite must not pass as a few "skipped" lines: under
``CI=true`` the run fails at its start (``tests/conftest.py``); elsewhere it prints one warning
line naming the suites skipped.
"""

from __future__ import annotations

import os
from pathlib import Path

SHARED = Path(os.environ.get("SEPIA_SHARED") or Path(__file__).resolve().parents[2] / "shared")
W3C = SHARED / "conformance" / "w3c-sparql"
SPARQL11 = W3C / "sparql11"
SUITES = {
    "SPARQL 1.1 evaluation (both evaluators)": SPARQL11,
    "SPARQL 1.0/1.1 syntax": W3C / "sparql10",
    "SPARQL 1.1 RDFS entailment": SPARQL11 / "entailment",
}


def missing() -> list[str]:
    """The suites not found, each as 'name (expected at path)'."""
    return [f"{name} (expected at {path})" for name, path in SUITES.items() if not path.is_dir()]


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"1", "true", "yes"}


def message() -> str:
    """One line naming the suites missing and where they are expected."""
    return (
        "W3C conformance suites not found: " + "; ".join(missing())
        + ". Put the shared folder beside the repository or set SEPIA_SHARED."
    )
