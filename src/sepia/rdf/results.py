"""What an engine produces: one `Result` per output row, and the jsonl contract of io.md.

A result is a solution (`binding`), a set of triples (CONSTRUCT) or a boolean (ASK),
produced by query `query` at evaluation time `t`, with `op` "+" (RStream / IStream) or "-"
(DStream). Event-pattern results carry the `interval` that justifies them, and the rows of
one SPAseq Kleene match share a `match` id. Times are Sepia's integers; the writers print
them in the run's `TimeKind`.

`binding` is stored sorted by variable name, so two equal solutions compare (and hash)
equal whatever order they were built in: tests compare result multisets.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyoxigraph as ox

from sepia.rdf.terms import Term, parse_term, term_to_nt
from sepia.rdf.time import TimeKind, format_time, parse_datetime_ms

Op = Literal["+", "-"]
Binding = tuple[tuple[str, Term], ...]


@dataclass(frozen=True, slots=True)
class Result:
    """One output row of a continuous query (exactly one of binding, triples, boolean)."""

    query: str
    t: int
    op: Op = "+"
    binding: Binding | Mapping[str, Term] | None = None
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
            object.__setattr__(self, "binding", tuple(sorted(bound, key=lambda pair: pair[0])))
        if self.triples is not None:
            object.__setattr__(self, "triples", tuple(self.triples))

    @property
    def values(self) -> dict[str, Term]:
        """The binding as a dict (empty for CONSTRUCT and ASK results)."""
        return dict(self.binding or ())  # type: ignore[arg-type]

    @property
    def evaluation(self) -> tuple[str, int, str]:
        """Which evaluation a row belongs to: writers that group rows group by this."""
        return (self.query, self.t, self.op)


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
