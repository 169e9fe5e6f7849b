"""The merging half of a split whose buckets report partial states (`Split.merged`).

W3's `AVG(?price)` per ?company, split by ?trade: each bucket evaluates the query over its
trades with SUM and AVG as their exact partial sums (`sepia.engine.plan.partials`), so a
window's group comes as one row per bucket that met it. Here the rows of one query, time,
operation and group (the binding's other values) are made one: COUNTs added, partial sums
merged (`rdf.numbers.Sum.from_state_texts`: exact, so the total is the unsplit one) and
finished as the engine finishes SUM and AVG (`rdf.aggregates.finished`; an erroneous sum leaves its
variable unbound). The run's results all come in one batch (`JobSpec.merges`), so every
part of a group is in the batch; the batch's rows are partitioned by time and merged in
a stage of the job (`merged_batches`), in parallel, not by the driver.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from sepia.rdf.aggregates import finished
from sepia.rdf.numbers import DATATYPES, INTEGER, Sum
from sepia.rdf.terms import Term
from sepia.runtime.spark.result_lines import term_json

Merges = Mapping[int, tuple[tuple[str, str], ...]]
"""Each merged query's position (its results' `query_index`), with its merged variables
and their functions (COUNT, SUM, AVG)."""


def merged_batches(batches: Iterable[pa.RecordBatch], merges: Merges) -> Iterator[pa.RecordBatch]:
    """mapInArrow body (`job.results_frame`): a partition of a batch's result rows,
    partitioned by time so that every part of a group is in it, with the merged queries'
    rows made one per group (`merged`)."""
    read = list(batches)
    if read:
        yield from merged(pa.Table.from_batches(read), merges).to_batches()


def merged(table: pa.Table, merges: Merges) -> pa.Table:
    """Result rows (`host.RESULT_DDL` columns) with the merged queries' rows made one per
    group, its `partition` empty and `seq` 0, so that the sink orders a query's rows of
    one time by their lines, as it orders a spread unit's."""
    if not merges or not table.num_rows:
        return table
    chosen = pc.is_in(table.column("query_index"), pa.array(list(merges), pa.int32()))
    if not pc.any(chosen).as_py():
        return table
    parts = table.filter(chosen)
    firsts, lines = merged_lines(
        parts.column("query_index").to_pylist(), parts.column("line").to_pylist(), merges
    )
    made = parts.drop_columns(["line"]).take(pa.array(firsts, pa.int64()))  # not its lines
    count = len(lines)
    for name, values in (("partition", [""] * count), ("seq", [0] * count)):
        field = made.schema.field(name)
        made = made.set_column(made.schema.get_field_index(name), field,
                               pa.array(values, field.type))  # fmt: skip
    made = made.append_column(table.schema.field("line"), pa.array(lines, pa.string()))
    made = made.select(table.column_names)
    return pa.concat_tables([table.filter(pc.invert(chosen)), made])


def merged_lines(
    index: Sequence[int], lines: Sequence[str], merges: Merges
) -> tuple[list[int], list[str]]:
    """The first partial row of each group and the group's line, from the partial rows'
    query positions and jsonl lines. A line is not parsed: its merged members (`"n":
    "\\"12\\"^^<...>"`) are cut out by one expression, and the rest of it names the
    group (W3's 220,000 partial lines took 4.4 s parsed and written again as JSON)."""
    members = {position: _members(names) for position, names in merges.items()}
    groups: dict[str, tuple[int, int, dict[str, list[str]]]] = {}
    for row, (position, line) in enumerate(zip(index, lines, strict=True)):
        pieces = members[position].split(line)  # text, then (name, lexical, text) per member
        key = "".join(piece if n % 3 == 0 else f'"{piece}": @'
                      for n, piece in enumerate(pieces) if n % 3 != 2)  # fmt: skip
        found = groups.get(key)
        if found is None:
            found = groups[key] = (row, position, {name: [] for name, _ in merges[position]})
        for n in range(1, len(pieces), 3):
            found[2][pieces[n]].append(pieces[n + 1])
    firsts = [row for row, _, _ in groups.values()]
    made = [_finished(key, parts, merges[position])
            for key, (_, position, parts) in groups.items()]  # fmt: skip
    return firsts, made


def _members(names: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    """The jsonl members of the merged variables: their names and their literals' lexical
    forms (a count's digits, a partial state's text: neither holds a quote)."""
    alternatives = "|".join(re.escape(name) for name, _ in names)
    return re.compile(f'"({alternatives})": "\\\\"([^"\\\\]*)\\\\"\\^\\^<[^>]*>"')


def _finished(key: str, parts: dict[str, list[str]], names: tuple) -> str:
    """The group's line: each merged variable's parts added up and finished, written in
    its place (an unbound SUM or AVG left out, with its separator)."""
    line = key
    for name, function in names:
        value: Term | None
        if function == "COUNT":
            value = ox.Literal(str(sum(map(int, parts[name]))), datatype=DATATYPES[INTEGER])
        else:
            value = finished(Sum.from_state_texts(parts[name]), function == "AVG")
        place = f'"{name}": @'
        if value is None:
            line = line.replace(", " + place, "") if ", " + place in line else (
                line.replace(place + ", ", "").replace(place, ""))  # fmt: skip
        else:
            line = line.replace(place, f'"{name}": {term_json(value)}')
    return line
