"""A key's results as jsonl lines, rendered as one batch.

`sepia.rdf.results.jsonl_line` renders a result on its own: a dict of its fields, each
term's and time's text made again, then `json.dumps`, which makes an encoder per call. A
key's step returns many results that repeat few distinct pieces (W7 at 300,000 elements:
221,288 lines of three times and four terms each, drawn from a few hundred values), and
in a unit without PARTITION BY one Spark task renders them all on one core. Here each
distinct piece (a time, a term, a name) is encoded once per batch and a line is joined
from the encoded pieces, in the order and with the separators `json.dumps` writes: the same
text as `jsonl_line`, in about half the time. A result without a binding (CONSTRUCT, ASK)
is rendered by `jsonl_line` itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from itertools import chain

import numpy as np

from sepia.rdf.results import Result, jsonl_line
from sepia.rdf.terms import term_to_nt
from sepia.rdf.time import TimeKind, format_time

_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""`json.dumps(..., ensure_ascii=False)` without an encoder made per call."""


class _Encoded(dict[Hashable, str]):
    """Each piece's JSON text (`json_text`), made the first time the piece is met."""

    def __init__(self, json_text: Callable[[Hashable], str]) -> None:
        super().__init__()
        self.json_text = json_text

    def __missing__(self, piece: Hashable) -> str:
        encoded = self[piece] = self.json_text(piece)
        return encoded


def term_json(piece: Hashable) -> str:
    """A piece's JSON text: a string as it is, a term as its N-Triples text."""
    return _ENCODE(piece if isinstance(piece, str) else term_to_nt(piece))  # type: ignore[arg-type]


def _time_json(kind: TimeKind) -> Callable[[Hashable], str]:
    """A time's JSON text written as `json.dumps` writes it, without the encoder (most of a
    result's times are new ones): an integer's digits, or the ISO 8601 text in quotes (it
    holds nothing JSON escapes)."""
    if kind is TimeKind.ABSTRACT:
        return str
    return lambda value: f'"{format_time(value, kind)}"'  # type: ignore[arg-type]


def jsonl_lines(results: Sequence[Result], kind: TimeKind) -> list[str]:
    """`[jsonl_line(r, kind) for r in results]`, each distinct piece encoded once."""
    return _rendered(results, kind, heads=False)[1]


def ordered_lines(results: Sequence[Result], kind: TimeKind) -> tuple[list[str], list[str]]:
    """Each result's order head and its jsonl line in `kind`, in one pass.

    A bucket's results are ordered among all buckets' by `result_order`, their jsonl line
    with abstract times (`Step.order`): rendering it beside the output line cost W4
    v-shape `;` a second line per result. The *head* is that line up to where its match or
    binding begins, the key opening them included (`, "match": ` or `, "binding": {`):
    the rest is the output line's own tail, the same text in either kind. No head is a
    proper prefix of another (JSON escapes every quote inside a string, so equal heads up
    to a head's last key are the same members, and the next member is the tail), so among
    results of one time and query, ordering by (head, output line) is ordering by
    `result_order`: heads differ where the abstract lines first differ before their tails,
    and results with equal heads have equal times, so their lines differ only in the tail.
    A result without a binding (CONSTRUCT, ASK) has its whole abstract line as its head."""
    return _rendered(results, kind, heads=True)


def _rendered(
    results: Sequence[Result], kind: TimeKind, heads: bool
) -> tuple[list[str], list[str]]:
    """(heads, lines): see `ordered_lines`; no heads unless asked."""
    times = _Encoded(_time_json(kind))
    if kind is TimeKind.DATETIME:
        times.update(dated_texts(results))
    texts = _Encoded(term_json)
    lines: list[str] = []
    made: list[str] = []
    for result in results:
        if result.binding is None:
            lines.append(jsonl_line(result, kind))
            if heads:
                made.append(jsonl_line(result, TimeKind.ABSTRACT))
            continue
        query, op = texts[result.query], texts[result.op]
        if result.match is None:
            opened = ', "binding": {'
            rest = [opened]
        else:
            opened = ', "match": '
            rest = [opened, texts[result.match], ', "binding": {']
        binding = ", ".join(f"{texts[name]}: {texts[term]}" for name, term in result.binding)
        interval = result.interval
        if interval is None:
            line = ['{"query": ', query, ', "t": ', times[result.t], ', "op": ', op]
        else:
            line = ['{"query": ', query, ', "t": ', times[result.t], ', "op": ', op,
                    ', "from": ', times[interval[0]], ', "to": ', times[interval[1]]]  # fmt: skip
        lines.append("".join([*line, *rest, binding, "}}"]))
        if heads:
            head = ['{"query": ', query, ', "t": ', str(result.t), ', "op": ', op]
            if interval is not None:
                head += [', "from": ', str(interval[0]), ', "to": ', str(interval[1])]
            made.append("".join([*head, opened]))
    return made, lines


ISO_TIMES = (0, 1 << 32)
"""Epoch seconds whose ISO text numpy writes as `format_time` does, [from, to): within
them a time's milliseconds survive the float seconds `format_time` goes through."""


def dated_texts(results: Sequence[Result]) -> dict[Hashable, str]:
    """The JSON text of each distinct time of `results` (`t`, `from`, `to`) as dateTime,
    all written by one numpy call (W4 v-shape `;`: most of a bucket's 22,641 results at
    100,000 elements bring a new time, and `format_time` cost a third of their lines);
    times outside `ISO_TIMES` are left to `format_time`."""
    intervals = chain.from_iterable(r.interval for r in results if r.interval is not None)
    moments = np.unique(np.array([*(r.t for r in results), *intervals], dtype=np.int64))
    low, high = ISO_TIMES
    inside = moments[(moments >= low * 1000) & (moments < high * 1000)]
    written = np.datetime_as_string(inside.astype("datetime64[ms]"), unit="ms")
    return {m: f'"{text}Z"' for m, text in zip(inside.tolist(), written.tolist(), strict=True)}
