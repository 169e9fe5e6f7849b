"""Splitting a window query by a variable, without PARTITION BY: when it is safe.

A query can run as several independent engines, each over a share of the stream triples,
when the plan proves that every result depends on one value of a variable ?k and that every
stream triple a result uses binds ?k to that value. Then the triples that bind values of one
share (a bucket of values) are all its engine needs, and its engine's results for those
values are the whole query's. The proof asked for here is deliberately narrow (when unsure,
do not split):

- a SELECT whose rows are one GROUP BY group each, ?k among the GROUP BY keys and projected
  (so each result row says which bucket owns it; an engine drops the groups it does not own,
  which it may see partly: a triple can bind two values);
- below the GROUP BY only basic graph patterns, joins, FILTER and BIND (no OPTIONAL, MINUS,
  UNION, sub-select, VALUES, property path, EXISTS, GRAPH, event pattern), and ?k in every
  triple pattern: a triple joins a result of value v only through a pattern that binds ?k,
  so it binds v;
- above it only HAVING, BIND and the projection (no DISTINCT, ORDER BY, LIMIT: they act
  across groups);
- time windows, reported at window close or periodically (an engine whose share of a
  window is empty reports the same empty set of its groups); under ISTREAM or DSTREAM no
  NON EMPTY, which would skip a share's evaluation and change what the next one is
  compared with; with background data no NON EMPTY either (a group made of background
  triples alone is reported only while the window holds something); no RDFS entailment
  (inferred triples bind values the stream triples do not show).

The engines must still step through every instant of the streamset, so that their windows
open, close and report together (the Spark job sends a bucket that got no triple at an
instant a stand-in: `sepia.runtime.spark.job`).

Where no projected GROUP BY variable is in every triple pattern (W3: `?trade st:company
?company ; st:price ?price` grouped by ?company), a run whose results of an instant all
come in one batch (`merge`: a run of files) may still split by a variable that holds one
place of every triple pattern (?trade, the subject of both): a triple binds one value of it
there, so it goes to one bucket, and every solution of the patterns is found in exactly
one bucket, whole. Each bucket then reports its groups' partial states (COUNT, and the
exact sums behind SUM and AVG: `sepia.engine.plan.partials`), which a stage of the job adds up per
instant and group before it finishes them (`Split.merged`). Asked on top of the above:
only COUNT, SUM and AVG (not DISTINCT), each projected under its own name; above the
GROUP BY nothing but the projection (no HAVING, no BIND over an aggregate); RSTREAM (the
other operators compare each evaluation with the last, which no bucket sees whole); no
background data (every bucket would count its triples).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra import expression as ex
from sepia.algebra import pattern as pa
from sepia.algebra import query as qa
from sepia.algebra import report as rp
from sepia.algebra.scope import nodes
from sepia.rdf.terms import Term

TIME_WINDOWS = (ds.Sliding, ds.Landmark, ds.Interval)


MERGEABLE = frozenset({"COUNT", "SUM", "AVG"})
"""Aggregates whose buckets' partial states add up to the whole's."""


@dataclass(frozen=True, slots=True)
class Split:
    """The variable the query splits by, and the triple patterns that bind it."""

    variable: ox.Variable
    patterns: tuple[pa.TriplePattern, ...]
    merged: tuple[tuple[str, str], ...] = ()
    """A split whose buckets' partial states a later stage merges: each projected
    aggregate's variable and function (COUNT, SUM or AVG). Empty: every result is a group
    of the split variable, reported by the bucket that owns its value."""

    def values_of(self, triple: ox.Triple) -> set[Term]:
        """The values of the variable the triple binds: one per pattern it matches."""
        return {v for p in self.patterns if (v := _bound(p, triple, self.variable)) is not None}


def split_of(
    query: qa.Query, background: bool = False, rdfs: bool = False, merge: bool = False
) -> Split | str:
    """The query's split, or why it has none. `background`: the run has background data;
    `merge`: its results of an instant all come in one batch, so a split may be merged."""
    if rdfs or query.entailment is not qa.Entailment.NONE:
        return "RDFS entailment"
    if query.partition_by is not None:
        return "PARTITION BY splits it already"
    if not isinstance(query.form, qa.Select):
        return "not a SELECT"
    windows = query.dataset.windows
    if not windows or not all(isinstance(w.spec, TIME_WINDOWS) for w in windows):
        return "not only time windows"
    reason = _report_refusal(query, background)
    if reason is not None:
        return reason
    stream = query.expression
    inner = stream.inner if isinstance(stream, (qa.RStream, qa.IStream, qa.DStream)) else stream
    group, reason = _group_below_projection(inner)
    if group is None:
        return reason
    keys = [v for v in group.variables if isinstance(v, ox.Variable)]
    found = list(_triple_patterns(group.inner))
    refused = [p for p in found if isinstance(p, str)]
    if refused:
        return refused[0]
    triples = [p for p in found if isinstance(p, pa.TriplePattern)]
    for key in keys:
        if triples and all(key in _variables(p) for p in triples) and _projected(inner, key):
            return Split(key, tuple(triples))
    why = "no projected GROUP BY variable is in every triple pattern"
    if not merge:
        return why
    merged = _merged_split(stream, inner, group, triples, background)
    return merged if isinstance(merged, Split) else f"{why}; {merged}"


def explain_split(query: qa.Query) -> str:
    """`sepia explain`'s line on the split (without background data, without RDFS)."""
    found = split_of(query, merge=True)
    if isinstance(found, Split) and found.merged:
        return (
            f"split by ?{found.variable.value} in a run of files: it holds one place of "
            "every triple pattern, so Spark spreads its values over buckets, each "
            "reporting its groups' partial COUNT, SUM and AVG, which a later stage adds up"
        )
    if isinstance(found, Split):
        return (
            f"split by ?{found.variable.value}: every triple pattern binds it and every "
            "result is one of its groups, so Spark spreads its values over buckets"
        )
    return f"split: none ({found})"


def _merged_split(
    stream: object, inner: pa.GraphPattern, group: pa.Group,
    triples: list[pa.TriplePattern], background: bool,
) -> Split | str:
    """A split whose buckets' partial states are merged (see the module), or why not."""
    if background:
        return "partial sums with background data"
    if not isinstance(stream, qa.RStream):
        return "partial sums under ISTREAM or DSTREAM"
    outputs = _aggregate_outputs(inner, group)
    if isinstance(outputs, str):
        return outputs
    variable = _in_one_place(triples)
    if variable is None:
        return "no variable holds one place of every triple pattern"
    return Split(variable, tuple(triples), outputs)


def _aggregate_outputs(
    inner: pa.GraphPattern, group: pa.Group
) -> tuple[tuple[str, str], ...] | str:
    """Each projected aggregate's variable and function, where the projection holds only
    GROUP BY keys and COUNT, SUM and AVG each bound to a name of its own (else why not)."""
    functions = {b.variable: b.aggregate for b in group.aggregates}
    if any(a.function.value not in MERGEABLE or a.distinct for a in functions.values()):
        return "an aggregate other than COUNT, SUM and AVG"
    if not isinstance(inner, pa.Project):
        return "no projection"
    named: dict[ox.Variable, str] = {}
    node = inner.inner
    while isinstance(node, pa.Extend):
        if not isinstance(node.expression, ox.Variable) or node.expression not in functions:
            return "a BIND above the GROUP BY"
        named[node.variable] = functions[node.expression].function.value
        node = node.inner
    if node is not group:
        return "HAVING"
    if any(v not in named and v not in group.variables for v in inner.variables):
        return "a projected variable that is no GROUP BY key or aggregate"
    return tuple((v.value, named[v]) for v in inner.variables if v in named)


def _in_one_place(triples: list[pa.TriplePattern]) -> ox.Variable | None:
    """A variable in the same place (subject, predicate or object) of every triple pattern:
    a triple binds one value of it, wherever it matches."""
    for place in ("subject", "predicate", "object"):
        first = getattr(triples[0], place) if triples else None
        if isinstance(first, ox.Variable) and all(getattr(t, place) == first for t in triples):
            return first
    return None


def _report_refusal(query: qa.Query, background: bool) -> str | None:
    report = query.report
    if not isinstance(report, rp.Report):
        return "not reported on windows"
    kinds = {type(s) for s in report.strategies}
    if kinds - {rp.WindowClose, rp.Periodic, rp.NonEmpty} or not kinds - {rp.NonEmpty}:
        return "reported on content change"
    if rp.NonEmpty in kinds and not isinstance(query.expression, qa.RStream):
        return "NON EMPTY under ISTREAM or DSTREAM"
    if rp.NonEmpty in kinds and background:
        return "NON EMPTY with background data"
    return None


def _group_below_projection(node: pa.GraphPattern) -> tuple[pa.Group | None, str]:
    """The one GROUP BY under the projection, HAVING and BINDs (None: why not)."""
    while True:
        match node:
            case pa.Project(inner) | pa.Extend(inner):
                if isinstance(node, pa.Extend) and _has_pattern(node.expression):
                    return None, "EXISTS in a BIND"
                node = inner
            case pa.Filter(expression, inner):
                if _has_pattern(expression):
                    return None, "EXISTS in a FILTER"
                node = inner
            case pa.Group():
                return (node, "") if node.variables else (None, "an aggregate over all rows")
            case pa.Distinct() | pa.Reduced() | pa.OrderBy() | pa.Slice():
                return None, f"{type(node).__name__} across groups"
            case _:
                return None, "no GROUP BY"


def _triple_patterns(node: pa.GraphPattern) -> Iterator[pa.TriplePattern | str]:
    """The triple patterns below a GROUP BY, or (last) why the shape is not covered."""
    match node:
        case pa.Bgp(triples):
            yield from triples
        case pa.Join(left, right):
            yield from _triple_patterns(left)
            yield from _triple_patterns(right)
        case pa.Filter(expression, inner) | pa.Extend(inner, _, expression):
            if _has_pattern(expression):
                yield "EXISTS below the GROUP BY"
                return
            yield from _triple_patterns(inner)
        case pa.Window(_, inner):
            yield from _triple_patterns(inner)
        case _:
            yield f"{type(node).__name__} below the GROUP BY"


def _variables(pattern: pa.TriplePattern) -> set[ox.Variable]:
    terms = (pattern.subject, pattern.predicate, pattern.object)
    return {t for t in terms if isinstance(t, ox.Variable)}


def _projected(node: pa.GraphPattern, variable: ox.Variable) -> bool:
    return isinstance(node, pa.Project) and variable in node.variables


def _has_pattern(expression: ex.Expression) -> bool:
    """Whether an expression holds a graph pattern (EXISTS, NOT EXISTS)."""
    return bool(nodes(expression, ex.Exists, inside=False))


def _bound(pattern: pa.TriplePattern, triple: ox.Triple, variable: ox.Variable) -> Term | None:
    """The value `variable` takes when `triple` matches `pattern` (None: no match)."""
    seen: dict[ox.Variable | ox.BlankNode, Term] = {}
    for want, have in zip(
        (pattern.subject, pattern.predicate, pattern.object),
        (triple.subject, triple.predicate, triple.object),
        strict=True,
    ):
        if isinstance(want, (ox.Variable, ox.BlankNode)):  # a blank node: a variable too
            if seen.setdefault(want, have) != have:
                return None
        elif want != have:
            return None
    return seen.get(variable)
