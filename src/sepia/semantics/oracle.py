"""The correctness oracle of RSP-QL (seed 004, Definitions 25-26 and Theorem 1), as
CSRBench uses it: is another engine's answer the answer of some RSP-QL query the engine's
query can stand for?

The queries differ only in the t0 of their sliding windows. By Theorem 1, windows (a, b, t0)
and (a, b, t0 + n*b) agree from t0 + n*b on, so each window's t0 ranges over
{t0, ..., t0 + b - 1} only; the answers are compared from t_s, the largest of those values
(Definition 26), which skips the start-up transient. Answers are compared as multisets of
jsonl lines, ignoring the query name (the order within one t is not significant) and the
lexical form of literals (compared in pyoxigraph's canonical form, as the reference holds
them).
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra.query import Query
from sepia.rdf.results import Result, result_to_json
from sepia.rdf.stream import StreamElement
from sepia.rdf.terms import canonical, parse_term, term_to_nt
from sepia.semantics.evaluator import evaluate, time_kind


@dataclass(frozen=True, slots=True)
class Difference:
    """The first evaluation time at which two answers differ, and how."""

    t: int | str
    missing: tuple[str, ...]
    unexpected: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Verdict:
    """The oracle's answer: whether some admissible t0 reproduces the answer (and which), or
    the first difference against the closest candidate."""

    correct: bool
    t_start: int
    tried: int
    t0: Mapping[str, int] = field(default_factory=dict)
    difference: Difference | None = None

    def describe(self) -> str:
        """A readable report for ``sepia check``."""
        head = f"compared from t = {self.t_start} over {self.tried} choice(s) of t0"
        choice = ", ".join(f"{w}: t0 = {t}" for w, t in self.t0.items()) or "no sliding window"
        if self.correct:
            return f"correct: matches the RSP-QL answer with {choice} ({head})"
        assert self.difference is not None
        lines = [f"wrong: no admissible t0 reproduces the answer ({head})"]
        lines.append(f"closest candidate: {choice}; first difference at t = {self.difference.t}")
        lines += [f"  missing:    {x}" for x in self.difference.missing]
        lines += [f"  unexpected: {x}" for x in self.difference.unexpected]
        return "\n".join(lines)


def _key(line: Mapping[str, object]) -> str:
    """A jsonl line as compared: without the query name, its terms in the form the
    reference holds them (``terms.canonical``: another engine may print a literal as its
    input wrote it, ``"102.10"^^xsd:decimal`` for ``"102.1"``)."""
    kept = {k: v for k, v in line.items() if k != "query"}
    if isinstance(binding := kept.get("binding"), Mapping):
        kept["binding"] = {k: _canonical_text(v) for k, v in binding.items()}
    if isinstance(triples := kept.get("triples"), list):
        kept["triples"] = sorted((_canonical_statement(x) for x in triples), key=str)
    return json.dumps(kept, sort_keys=True)


def _canonical_text(text: object) -> object:
    """An N-Triples term's text in canonical form (anything else as it is)."""
    try:
        return term_to_nt(canonical(parse_term(str(text))))
    except ValueError:
        return text


def _canonical_statement(text: object) -> object:
    """An N-Triples statement with its terms in canonical form (anything else as it is)."""
    try:
        (quad,) = ox.parse(str(text), format=ox.RdfFormat.N_TRIPLES)
    except (SyntaxError, ValueError):
        return text
    terms = (quad.subject, quad.predicate, quad.object)
    return f"{ox.Triple(*map(canonical, terms))} ."  # type: ignore[arg-type]


def _from(lines: Sequence[Mapping[str, object]], t_start: int) -> Counter[str]:
    return Counter(_key(x) for x in lines if not isinstance(x["t"], int) or x["t"] >= t_start)


def candidates(query: Query) -> list[dict[ox.NamedNode, int]]:
    """Every admissible combination of t0 values for the query's sliding windows."""
    sliding = [w for w in query.dataset.windows if isinstance(w.spec, ds.Sliding)]
    ranges = [range(w.spec.t0, w.spec.t0 + w.spec.slide) for w in sliding]  # type: ignore[union-attr]
    return [
        {w.name: t0 for w, t0 in zip(sliding, combination, strict=True)}
        for combination in itertools.product(*ranges)
    ]


def with_t0(query: Query, t0: Mapping[ox.NamedNode, int]) -> Query:
    """The RSP-QL query that differs from ``query`` only in its windows' t0."""
    windows = tuple(
        replace(w, spec=replace(w.spec, t0=t0[w.name]))
        if w.name in t0 and isinstance(w.spec, ds.Sliding | ds.Landmark)
        else w
        for w in query.dataset.windows
    )
    return replace(query, dataset=replace(query.dataset, windows=windows))


def _first_difference(expected: Counter[str], actual: Counter[str]) -> Difference:
    missing, unexpected = expected - actual, actual - expected
    first = min(json.loads(x)["t"] for x in (missing | unexpected))
    return Difference(
        first,
        tuple(sorted(x for x in missing.elements() if json.loads(x)["t"] == first)),
        tuple(sorted(x for x in unexpected.elements() if json.loads(x)["t"] == first)),
    )


def check(
    query: Query,
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None,
    answer: Sequence[Mapping[str, object] | Result],
    *,
    until: int | None = None,
) -> Verdict:
    """Whether ``answer`` (results, or their jsonl objects) is correct for ``query`` over
    the finite input."""
    choices = candidates(query)
    kind = time_kind(streams, query.time_kind)
    t_start = max((t for c in choices for t in c.values()), default=0)
    lines = [result_to_json(r, kind) if isinstance(r, Result) else r for r in answer]
    actual = _from(lines, t_start)
    closest: tuple[int, dict[ox.NamedNode, int], Counter[str]] | None = None
    for t0 in choices:
        results = evaluate(with_t0(query, t0), streams, background, until=until)
        expected = _from([result_to_json(r, kind) for r in results], t_start)
        named = {w.value: t for w, t in t0.items()}
        if expected == actual:
            return Verdict(True, t_start, len(choices), named)
        distance = sum(((expected - actual) + (actual - expected)).values())
        if closest is None or distance < closest[0]:
            closest = (distance, t0, expected)
    assert closest is not None
    _, t0, expected = closest
    named = {w.value: t for w, t in t0.items()}
    return Verdict(False, t_start, len(choices), named, _first_difference(expected, actual))
