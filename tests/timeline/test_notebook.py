"""examples/notebooks runs top to bottom in a fresh kernel (nbclient), Spark part included,
and shows what its text says: three policies' matches (4, 2, 2 on E3, as
docs/semantics.md derives them), the timeline inline, Spark agreeing with the reference."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).parents[2] / "examples" / "notebooks"

pytestmark = [pytest.mark.spark, pytest.mark.long]


def test_compare_policies_notebook_runs() -> None:
    path = NOTEBOOKS / "compare-policies.ipynb"
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    texts = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "5 elements; RSEP-QL query query" in texts
    assert "matches per policy: {'unrestricted': 4, 'chronological': 2, 'recent': 2}" in texts
    assert "Spark agrees with the reference: True" in texts
    table = next(
        o
        for o in outputs
        if "text/html" in o.get("data", {}) and "differs" in o["data"]["text/html"]
    )
    assert table["data"]["text/plain"].count("\n") == 4  # header and the four matches
    assert any("image/svg+xml" in o.get("data", {}) for o in outputs)
