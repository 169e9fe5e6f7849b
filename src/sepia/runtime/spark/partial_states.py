"""The merging half of a split whose buckets report partial states (`Split.merged`).

W3's `AVG(?price)` per ?company, split by ?trade: each bucket evaluates the query over its
trades with SUM and AVG as their exact partial sums (`sepia.engine.plan.partials`), so a
window's group comes as one row per bucket that met it. Here the rows of one query, time,
operation and group (the binding's other values) are made one: COUNTs added, partial sums
merged (exact, so the total is the unsplit one) and finished as the engine finishes SUM
and AVG (`rdf.aggregates.finished`; an erroneous sum leaves its variable unbound). The
run's results all come in one batch (`JobSpec.merges`), so every part of a group is in
the batch; its rows are partitioned by time and merged in a stage of the job
(`merged_batches`), in parallel. Merged by the driver instead, as it collects the batch,
W3's stateful stage took 0.5-0.8 s longer to hand over its 220,000 partial rows and the
merge 1.1-1.3 s on the driver, where this stage takes 1.2 s in all.

Most groups are merged by vector operations (`merged_groups`); the rest line by line
(`merged_lines`), the two giving the same lines (tests/runtime/spark/test_partial_states.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyoxigraph as ox

from sepia.rdf.aggregates import finished
from sepia.rdf.numbers import DATATYPES, DECIMAL, INTEGER, SCALE, SCALED_STATE, Sum
from sepia.rdf.terms import Term
from sepia.runtime.spark.result_lines import term_json

LEXICAL = '[^"\\\\]*'
"""A merged member's lexical form: a count's digits or a partial state's text."""
COUNT_TEXT = "^(?P<count>[0-9]{1,18})$"
LIMB = 10**10
"""Partial totals (of 30 digits at most: `SCALED_STATE`) are added as three int64 limbs."""

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
    every = pc.all(chosen).as_py()
    parts = table if every else table.filter(chosen)
    firsts, lines = merged_groups(parts, merges)
    made = parts.drop_columns(["line"]).take(pa.array(firsts, pa.int64()))  # not its lines
    count = len(lines)
    for name, values in (("partition", [""] * count), ("seq", [0] * count)):
        field = made.schema.field(name)
        made = made.set_column(made.schema.get_field_index(name), field,
                               pa.array(values, field.type))  # fmt: skip
    made = made.append_column(table.schema.field("line"), pa.array(lines, pa.string()))
    made = made.select(table.column_names)
    return made if every else pa.concat_tables([table.filter(pc.invert(chosen)), made])


def merged_groups(parts: pa.Table, merges: Merges) -> tuple[list[int], list[str]]:
    """The first partial row of each group and the group's line, from the merged queries'
    partial rows. A group whose states are integers and decimals alone, their total not
    negative (`numbers.SCALED_STATE`: all of W3's), is merged by vector operations: its
    members cut out of its rows' lines (`_cut`), the rest of a line naming its group,
    their numbers added up by Arrow's grouped sums and finished as vectors
    (`_finished_values`). Any other group's rows go through `merged_lines` (a task's
    113,000 partial rows of W3 took 0.88 s there, 0.29 s here)."""
    firsts: list[int] = []
    made: list[str] = []
    for position, names in merges.items():
        rows = pc.indices_nonzero(pc.equal(parts.column("query_index"), position))
        lines = parts.column("line")
        lines = (lines if len(rows) == len(lines) else lines.take(rows)).combine_chunks()
        groups, keys = _summed(rows, lines, names)
        fast, values = _finished_values(groups, names)
        firsts += groups.column("row_min").filter(fast).to_pylist()
        keys_of = groups.column("key").filter(fast).to_pylist()
        made += _placed_values(keys_of, names, [v.filter(fast).to_pylist() for v in values])
        slow = groups.column("key").filter(pc.invert(fast))
        if len(slow):
            chosen = pc.is_in(keys, slow)
            some = rows.filter(chosen).to_pylist()
            found, slowly = merged_lines(lines.filter(chosen).to_pylist(), names)
            firsts += [some[n] for n in found]
            made += slowly
    return firsts, made


def _summed(rows: pa.Array, lines: pa.Array, names: tuple[tuple[str, str], ...]
            ) -> tuple[pa.Table, pa.Array]:  # fmt: skip
    """The partial rows' groups (by their lines without the members' lexical forms), each
    with its first row, whether all its rows' members are of a shape added up here, and
    the sums of their numbers; and each row's group key."""
    columns: dict[str, pa.Array] = {"row": rows}
    fast = pa.array(np.ones(len(lines), np.bool_))
    keys = lines
    for n, (name, function) in enumerate(names):
        lexical, keys = _cut(keys, f'"{name}": "\\"')
        fast = pc.and_(fast, _numbers(lexical, function, f"{n}:", columns))
    columns["key"], columns["fast"] = keys, fast
    sums = [(name, "sum") for name in columns if ":" in name]
    groups = pa.table(columns).group_by("key").aggregate([("row", "min"), ("fast", "all"), *sums])
    return groups, keys


def _cut(lines: pa.Array, prefix: str) -> tuple[pa.Array, pa.Array]:
    """The lexical form each line holds after `prefix` (up to the backslash that closes
    it; empty where the line holds no `prefix`), and the lines without them. Cut by byte
    positions over the lines' buffers: Arrow has no kernel that cuts each row at a place
    of its own, and a regular expression's replacement took 0.3 s for W3's lines."""
    lines = lines.cast(pa.large_string())
    count = len(lines)
    _, offsets_buffer, data_buffer = lines.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int64)[lines.offset : lines.offset + count + 1]
    data = np.frombuffer(data_buffer, np.uint8)[offsets[0] : offsets[-1]] if data_buffer else (
        np.zeros(0, np.uint8))  # fmt: skip
    offsets = offsets - offsets[0]
    at = pc.find_substring(lines, prefix).to_numpy(zero_copy_only=False)
    begin = np.where(at >= 0, offsets[:-1] + at + len(prefix.encode()), offsets[:-1])
    stops = np.flatnonzero(data == ord("\\"))
    following = np.searchsorted(stops, begin)
    end = stops[np.minimum(following, len(stops) - 1)] if len(stops) else begin
    end = np.where((at >= 0) & (following < len(stops)) & (end <= offsets[1:]), end, begin)
    lengths = end - begin
    cut = np.concatenate([[0], np.cumsum(lengths)])
    inside = np.arange(cut[-1]) + np.repeat(begin - cut[:-1], lengths)  # the lexical bytes
    kept = np.ones(len(data), np.bool_)
    kept[inside] = False
    lexical = pa.LargeStringArray.from_buffers(count, pa.py_buffer(cut), pa.py_buffer(data[inside]))
    rest = pa.LargeStringArray.from_buffers(
        count, pa.py_buffer(offsets - cut), pa.py_buffer(data[kept])
    )
    return lexical, rest


def _numbers(lexical: pa.Array, function: str, prefix: str, columns: dict[str, pa.Array]
             ) -> pa.Array:  # fmt: skip
    """A member's numbers as columns to sum, named after `prefix`: a COUNT's, and a
    partial state's count, decimals and total in three limbs (most significant first).
    Returns where the lexical forms are of that shape (elsewhere the numbers are 0)."""
    read = pc.extract_regex(lexical, COUNT_TEXT if function == "COUNT" else SCALED_STATE)
    columns[prefix + "count"] = _integers(pc.struct_field(read, "count"))
    if function != "COUNT":
        columns[prefix + "decimals"] = _integers(pc.struct_field(read, "decimals"))
        digits = pc.utf8_lpad(pc.fill_null(pc.struct_field(read, "scaled"), "0"), 30, "0")
        for n in range(3):
            limb = pc.utf8_slice_codeunits(digits, 10 * n, 10 * n + 10)
            columns[f"{prefix}limb{n}"] = _integers(limb)
    return pc.is_valid(read)


def _integers(digits: pa.Array) -> pa.Array:
    """Digits as int64 (0 where null)."""
    return pc.cast(pc.fill_null(digits, "0"), pa.int64())


def _finished_values(groups: pa.Table, names: tuple[tuple[str, str], ...]
                     ) -> tuple[pa.Array, list[pa.Array]]:  # fmt: skip
    """Which groups are merged here (all their rows summed here, totals within the
    bounds below), and each member's finished value as jsonl text (`term_json`'s):
    a COUNT's sum; a SUM's total, or an AVG's total divided by its count, truncated at
    18 fractional digits (as `numbers.mean`), written as `numbers.number_text` writes
    integers and decimals."""
    fast = groups.column("fast_all").to_numpy(zero_copy_only=False)
    values = []
    for n, (_, function) in enumerate(names):
        count = groups.column(f"{n}:count_sum").to_numpy()
        if function == "COUNT":
            whole, fraction, decimal = count, np.zeros_like(count), np.zeros(len(count), np.bool_)
        else:
            ok, whole, fraction, decimal = _finished_sums(groups, f"{n}:", function == "AVG")
            fast = fast & ok
        values.append(_literal_json(whole, fraction, decimal))
    return pa.array(fast), values


def _finished_sums(groups: pa.Table, prefix: str, average: bool
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """A SUM's or AVG's result per group, as its whole part, its 18 fractional digits as
    an integer, and whether it is a decimal (else an integer); and where it is exact here:
    a total below 9 * 10^36 (within an integer's bound, `Sum.total`) and a count below
    10^8 (so that a limb's remainder times `LIMB` fits 64 bits)."""
    count = groups.column(prefix + "count_sum").to_numpy()
    high, middle, low = (groups.column(f"{prefix}limb{n}_sum").to_numpy() for n in range(3))
    carry, low = np.divmod(low, LIMB)
    carry, middle = np.divmod(middle + carry, LIMB)
    high = high + carry
    ok = (high < 9 * 10**16) & (count < 10**8)
    if average:
        divisor = np.where(ok & (count > 0), count, 1)
        high, rest = np.divmod(high, divisor)
        middle, rest = np.divmod(rest * LIMB + middle, divisor)
        low = (rest * LIMB + low) // divisor
        decimal = count > 0  # AVG of no values: 0, an integer
    else:
        decimal = groups.column(prefix + "decimals_sum").to_numpy() > 0
    high = np.where(ok, high, 0)  # no overflow where not kept
    point = SCALE // LIMB  # the middle limb's last 8 digits are fractional
    return ok, high * (LIMB**2 // SCALE) + middle // point, (middle % point) * LIMB + low, decimal


def _literal_json(whole: np.ndarray, fraction: np.ndarray, decimal: np.ndarray) -> pa.Array:
    """Integers' and decimals' jsonl texts (`term_json` of their literals) from their
    whole parts and 18 fractional digits: a decimal without trailing zeros, nor a dot
    when whole."""
    wholes = pc.cast(pa.array(whole), pa.string())
    digits = pc.utf8_rtrim(pc.utf8_lpad(pc.cast(pa.array(fraction), pa.string()), 18, "0"), "0")
    text = pc.if_else(pa.array(fraction == 0), wholes,
                      pc.binary_join_element_wise(wholes, digits, "."))  # fmt: skip
    iri = pc.if_else(pa.array(decimal), DATATYPES[DECIMAL].value, DATATYPES[INTEGER].value)
    return pc.binary_join_element_wise('"\\"', text, '\\"^^<', iri, '>"', "")


def _placed_values(lines: list[str], names: tuple[tuple[str, str], ...],
                   values: list[list[str]]) -> list[str]:  # fmt: skip
    """Each group's line: its key (a partial row's line without its members' lexical
    forms) with its members' values written in their places."""
    made = []
    for line, *found in zip(lines, *values, strict=True):
        for (name, _), value in zip(names, found, strict=True):
            head = f'"{name}": '
            start = line.index(head + '"\\"')
            stop = line.index('>"', start) + 2
            line = line[:start] + head + value + line[stop:]
        made.append(line)
    return made


def merged_lines(lines: Sequence[str], names: tuple[tuple[str, str], ...]
                 ) -> tuple[list[int], list[str]]:  # fmt: skip
    """`merged_groups` for any partial rows of one query (`names`: its merged variables),
    line by line. A line is not parsed: its merged members (`"n": "\\"12\\"^^<...>"`) are
    cut out by one expression, and the rest of it names the group."""
    members = _members(names)
    groups: dict[str, tuple[int, dict[str, list[str]]]] = {}
    for row, line in enumerate(lines):
        pieces = members.split(line)  # text, then (name, lexical, text) per member
        key = "".join(piece if n % 3 == 0 else f'"{piece}": @'
                      for n, piece in enumerate(pieces) if n % 3 != 2)  # fmt: skip
        found = groups.get(key)
        if found is None:
            found = groups[key] = (row, {name: [] for name, _ in names})
        for n in range(1, len(pieces), 3):
            found[1][pieces[n]].append(pieces[n + 1])
    firsts = [row for row, _ in groups.values()]
    made = [_finished(key, parts, names) for key, (_, parts) in groups.items()]
    return firsts, made


def _members(names: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    """The jsonl members of the merged variables: their names and their literals' lexical
    forms (a count's digits, a partial state's text: neither holds a quote)."""
    alternatives = "|".join(re.escape(name) for name, _ in names)
    return re.compile(_member(f"({alternatives})", f"({LEXICAL})"))


def _member(name: str, lexical: str) -> str:
    """A regular expression of a jsonl member, its name and its typed literal's lexical
    form given as expressions (Python's and Arrow's alike)."""
    return f'"{name}": "\\\\"{lexical}\\\\"\\^\\^<[^>]*>"'


def _finished(key: str, parts: dict[str, list[str]], names: tuple) -> str:
    """The group's line: each merged variable's parts added up and finished, written in
    its place."""
    line = key
    for name, function in names:
        value: Term | None
        if function == "COUNT":
            value = ox.Literal(str(sum(map(int, parts[name]))), datatype=DATATYPES[INTEGER])
        else:
            value = finished(Sum.from_state_texts(parts[name]), function == "AVG")
        line = _placed(line, name, value)
    return line


def _placed(line: str, name: str, value: Term | None) -> str:
    """A group's line with `name`'s value written in its place (`"name": @`); an unbound
    SUM or AVG left out, with its separator."""
    place = f'"{name}": @'
    if value is None:
        return line.replace(", " + place, "") if ", " + place in line else (
            line.replace(place + ", ", "").replace(place, ""))  # fmt: skip
    return line.replace(place, f'"{name}": {term_json(value)}')
