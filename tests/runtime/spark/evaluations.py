"""Result lines compared the way the output contract allows: evaluations in their order, the
rows of one evaluation (which no ORDER BY orders) as a bag."""

from __future__ import annotations

import json
from itertools import groupby


def evaluations(lines: list[str]) -> list[str]:
    """`lines` (jsonl results) with each evaluation's rows (a run of one query and t)
    sorted, every line spelled with its keys sorted (a binding's keys have no set order)."""
    rows = [json.loads(line) for line in lines]
    spelled = [json.dumps(row, sort_keys=True) for row in rows]
    key = [(row["query"], row["t"]) for row in rows]
    runs = [list(g) for _, g in groupby(zip(key, spelled, strict=True), key=lambda p: p[0])]
    return [line for run in runs for line in sorted(line for _, line in run)]
