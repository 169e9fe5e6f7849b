"""The driver's half of a split whose buckets report partial states (`Split.merged`).

W3's `AVG(?price)` per ?company, split by ?trade: each bucket evaluates the query over its
trades with SUM and AVG as their exact partial sums (`sepia.engine.plan.partials`), so a
window's group comes as one row per bucket that met it. Here the rows of one query, time,
operation and group (the binding's other values) are made one: COUNTs added, partial sums
merged (`rdf.numbers.Sum.merge`: exact, so the total is the unsplit one) and finished as
the engine finishes SUM and AVG (`rdf.aggregates.finished`; an erroneous sum leaves its
variable unbound). The run's results all come in one batch (`JobSpec.merges`), so every
part of a group is in the batch being written.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from sepia.rdf.aggregates import finished
from sepia.rdf.numbers import Sum
from sepia.rdf.terms import Term, term_to_nt
from sepia.rdf.vocabulary import XSD

Merges = Mapping[int, tuple[tuple[str, str], ...]]
"""Each merged query's position (its results' `query_index`), with its merged variables
and their functions (COUNT, SUM, AVG)."""
INTEGER = ox.NamedNode(XSD + "integer")
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""`json.dumps(..., ensure_ascii=False)`, as the host writes its lines."""


def merged(table: pa.Table, merges: Merges) -> pa.Table:
    """A batch's result rows (`host.RESULT_ORDER` columns) with the merged queries' rows
    made one per group: its `partition` empty and `seq` 0, so that the sort orders a
    query's rows of one time by their lines, as it orders a spread unit's."""
    if not merges or not table.num_rows:
        return table
    chosen = pc.is_in(table.column("query_index"), pa.array(list(merges), pa.int32()))
    if not pc.any(chosen).as_py():
        return table
    parts = table.filter(chosen)
    rows = merged_lines(
        parts.column("query_index").to_pylist(), parts.column("t").to_pylist(),
        parts.column("line").to_pylist(), merges,
    )
    made = pa.table({
        "t": pa.array([t for t, _, _ in rows], pa.int64()),
        "query_index": pa.array([n for _, n, _ in rows], pa.int32()),
        "partition": pa.array([""] * len(rows), pa.string()),
        "seq": pa.array([0] * len(rows), pa.int32()),
        "line": pa.array([line for _, _, line in rows], pa.string()),
    })
    return pa.concat_tables([table.filter(pc.invert(chosen)), made.select(table.column_names)])


def merged_lines(
    index: Sequence[int], times: Sequence[int], lines: Sequence[str], merges: Merges
) -> list[tuple[int, int, str]]:
    """(t, query_index, line) of each group, from its partial rows' query positions, times
    and jsonl lines."""
    groups: dict[tuple, tuple[int, int, dict, dict[str, Sum | int]]] = {}
    for position, t, line in zip(index, times, lines, strict=True):
        row = json.loads(line)
        binding = row["binding"]
        names = merges[position]
        key = (position, line[: line.index(', "binding": ')],
               tuple(sorted((k, v) for k, v in binding.items() if k not in dict(names))))
        found = groups.get(key)
        if found is None:
            found = groups[key] = (position, t, row, {})
        _add(found[3], binding, names)
    return [(t, position, _finished(row, states, merges[position]))
            for position, t, row, states in groups.values()]  # fmt: skip


def _add(states: dict[str, Sum | int], binding: dict[str, str], names: tuple) -> None:
    """One bucket's partial values of a group added to the group's states."""
    for name, function in names:
        text = binding[name]
        lexical = text[1 : text.rindex('"')]
        if function == "COUNT":
            states[name] = int(states.get(name, 0)) + int(lexical)
            continue
        state = states.get(name)
        part = Sum.from_state_text(lexical)
        if isinstance(state, Sum):
            state.merge(part)
        else:
            states[name] = part


def _finished(row: dict, states: dict[str, Sum | int], names: tuple) -> str:
    """The group's line: each merged variable's value finished (unbound: left out)."""
    binding = row["binding"]
    for name, function in names:
        state = states[name]
        if isinstance(state, int):
            value: Term | None = ox.Literal(str(state), datatype=INTEGER)
        else:
            value = finished(state, function == "AVG")
        if value is None:
            del binding[name]
        else:
            binding[name] = term_to_nt(value)
    return _ENCODE(row)

