"""What an engine produces: one `Result` per output row, and the jsonl contract of io.md.

A result is a solution (`binding`), a set of triples (CONSTRUCT) or a boolean (ASK),
produced by query `query` at evaluation time `t`, with `op` "+" (RStream / IStream) or "-"
(DStream). Event-pattern results carry the `interval` that justifies them, and the rows of
one SPAseq Kleene match share a `match` id. Times are Sepia's integers; the writers print
them in the run's `TimeKind`.

`binding` is a `Solution` (a mapping from variable names to terms) sorted by variable
name, so two equal solutions compare (and hash) equal whatever order they were built in:
tests compare result multisets. It may be given as a mapping or as (name, term) pairs.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import repeat
from pathlib import Path
from typing import Any, Literal

import pyoxigraph as ox

from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import Term, parse_term, term_to_nt
from sepia.rdf.time import TimeKind, format_time, parse_datetime_ms

Op = Literal["+", "-"]


class Solution(tuple[tuple[str, Term], ...]):
    """A solution mapping: variable name -> term, sorted by name.

    Read it as a mapping (``b["x"]``, ``b.get("x")``, ``"x" in b``, ``keys()``, ``items()``,
    ``values()``, ``dict(b)``); it is also the tuple of ``(name, term)`` pairs it always was
    (iterating and indexing give pairs), so code written against pairs keeps working.
    """

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for name, term in tuple.__iter__(self):
                if name == key:
                    return term
            raise KeyError(key)
        return tuple.__getitem__(self, key)

    def get(self, key: str, default: Term | None = None) -> Term | None:
        return next((term for name, term in tuple.__iter__(self) if name == key), default)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return any(name == key for name, _ in tuple.__iter__(self))
        return tuple.__contains__(self, key)

    def keys(self) -> list[str]:
        return [name for name, _ in tuple.__iter__(self)]

    def values(self) -> list[Term]:
        return [term for _, term in tuple.__iter__(self)]

    def items(self) -> list[tuple[str, Term]]:
        return list(tuple.__iter__(self))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self.items()) == dict(other.items())
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"Solution({dict(self.items())!r})"



@dataclass(frozen=True, slots=True)
class Result:
    """One output row of a continuous query (exactly one of binding, triples, boolean).

    >>> import pyoxigraph as ox
    >>> row = Result("offers", 8, binding={"shopper": ox.NamedNode("http://example.org/eve")})
    >>> row.binding["shopper"].value, "shop" in row.binding, row.op
    ('http://example.org/eve', False, '+')
    """

    query: str
    t: int
    op: Op = "+"
    binding: Solution | Mapping[str, Term] | tuple[tuple[str, Term], ...] | None = None
    triples: tuple[ox.Triple, ...] | None = None
    boolean: bool | None = None
    interval: tuple[int, int] | None = None
    match: str | None = None

    def __post_init__(self) -> None:
        if self.op not in ("+", "-"):
            raise ValueError(f"op must be '+' or '-', not {self.op!r}")
        if sum(part is not None for part in (self.binding, self.triples, self.boolean)) != 1:
            raise ValueError("a result has exactly one of binding, triples, boolean")
        if self.binding is not None:
            pairs = self.binding.items() if isinstance(self.binding, Mapping) else self.binding
            bound = [pair for pair in pairs if pair[1] is not None]  # None means unbound
            object.__setattr__(self, "binding", Solution(sorted(bound, key=lambda pair: pair[0])))
        if self.triples is not None:
            object.__setattr__(self, "triples", tuple(self.triples))

    @classmethod
    def of_solution(
        cls, query: str, t: int, op: Op, binding: Solution,
        interval: tuple[int, int] | None = None, match: str | None = None,
    ) -> Result:
        """A SELECT row whose ``binding`` is already a ``Solution`` sorted by name with no
        unbound variable (an engine that built it so): made without ``__post_init__``'s
        checks and sorting, which cost more than the rest of a columnar evaluation."""
        made = object.__new__(cls)
        s_query, s_t, s_op, s_binding, s_triples, s_boolean, s_interval, s_match = _SLOTS
        s_query(made, query)
        s_t(made, t)
        s_op(made, op)
        s_binding(made, binding)
        s_triples(made, None)
        s_boolean(made, None)
        s_interval(made, interval)
        s_match(made, match)
        return made

    @classmethod
    def of_solutions(
        cls, query: str, op: Op, ts: Sequence[int], bindings: Sequence[Solution],
        intervals: Sequence[tuple[int, int] | None], matches: Sequence[str | None],
    ) -> list[Result]:
        """``of_solution`` for many rows (the sequences aligned): each slot is set for all
        the rows by one ``map``, with no Python call per row (a columnar SPAseq query
        releases W6's 31,576 rows; a call each was a fifth of its results' cost)."""
        count = len(ts)
        made = list(map(object.__new__, repeat(cls, count)))
        none = [None] * count
        columns: tuple[Iterable[object], ...] = (
            repeat(query, count), ts, repeat(op, count), bindings, none, none, intervals, matches)
        for setter, values in zip(_SLOTS, columns, strict=True):
            deque(map(setter, made, values), maxlen=0)
        return made

    @property
    def values(self) -> dict[str, Term]:
        """The binding as a dict (empty for CONSTRUCT and ASK results)."""
        return dict(self.binding.items()) if isinstance(self.binding, Solution) else {}

    @property
    def evaluation(self) -> tuple[str, int, str]:
        """Which evaluation a row belongs to: writers that group rows group by this."""
        return (self.query, self.t, self.op)


_SLOTS = tuple(Result.__dict__[f.name].__set__ for f in fields(Result))
"""The setters of ``Result``'s slots, in field order (``Result.of_solution`` calls them:
a slot's own setter skips the frozen dataclass's ``__setattr__``)."""


def result_to_json(result: Result, kind: TimeKind) -> dict[str, Any]:
    """The jsonl object of io.md, keys in the contract's order."""
    line: dict[str, Any] = {"query": result.query, "t": format_time(result.t, kind),
                            "op": result.op}
    if result.interval is not None:
        line["from"] = format_time(result.interval[0], kind)
        line["to"] = format_time(result.interval[1], kind)
    if result.match is not None:
        line["match"] = result.match
    if result.binding is not None:
        line["binding"] = {name: term_to_nt(term) for name, term in result.values.items()}
    elif result.triples is not None:
        line["triples"] = [triple_to_nt(triple) for triple in result.triples]
    else:
        line["boolean"] = result.boolean
    return line


def jsonl_line(result: Result, kind: TimeKind) -> str:
    return json.dumps(result_to_json(result, kind), ensure_ascii=False)


def triple_to_nt(triple: ox.Triple) -> str:
    return f"{triple} ."


def result_from_json(line: Mapping[str, Any]) -> Result:
    """Read back one jsonl object (ISO times become epoch milliseconds)."""
    interval = None
    if "from" in line:
        interval = (_time(line["from"]), _time(line["to"]))
    binding = triples = None
    if "binding" in line:
        binding = {name: parse_term(text) for name, text in line["binding"].items()}
    if "triples" in line:
        triples = tuple(_triple(text) for text in line["triples"])
    return Result(
        query=line["query"], t=_time(line["t"]), op=line["op"], binding=binding,
        triples=triples, boolean=line.get("boolean"), interval=interval, match=line.get("match"),
    )


def read_results_jsonl(path: Path | str) -> list[Result]:
    """Every result of a jsonl file; a bad line raises with its line number."""
    return list(iter_results_jsonl(path))


def iter_results_jsonl(path: Path | str) -> Iterator[Result]:
    with open(path, encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                yield result_from_json(json.loads(text))
            except (ValueError, KeyError, TypeError, SyntaxError) as error:
                raise ValueError(f"{path}:{number}: not a result line: {error}") from None


def _time(value: int | str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"time must be an integer or an ISO 8601 string, not {value!r}")
    return value if isinstance(value, int) else parse_datetime_ms(value)


def _triple(text: str) -> ox.Triple:
    quads = list(ox.parse(text, format=ox.RdfFormat.N_TRIPLES))
    if len(quads) != 1:
        raise ValueError(f"not one N-Triples triple: {text!r}")
    return quads[0].triple


MAX_ROUNDS = 64
"""Derivations are monotone for the papers' rules; a network that keeps changing after
this many rounds is reported instead of looping forever."""


def derived_element(stream: str, result: Result, n: int, kind: TimeKind) -> StreamElement | None:
    """The event graph the n-th result of a registered CONSTRUCT query makes, stamped with
    its match interval or its time (None: no triples, no element)."""
    if not result.triples:
        return None
    start, end = result.interval or (result.t, result.t)
    graph = f"urn:sepia:derived:{result.query}:{n}"
    return StreamElement(stream, graph, start, end, result.triples, kind)
