"""Graph patterns: the SPARQL 1.1 algebra (section 18.2) plus RSP-QL's Window and Match.

Operator names and fields follow the SPARQL specification. ``Window`` is the window graph
pattern of RSEP-QL (seed 001, section 3.3, and RSP-QL seed 004, Definition 17): the inner
pattern is evaluated over the instantaneous graph of a named window. ``Match`` turns an event
pattern into solution mappings (RSEP-QL's event graph pattern, section 4.2); each mapping
keeps the interval [from, to] of its event match so results can report it.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra.event import EventPattern
from sepia.algebra.expression import Aggregate, Expression
from sepia.algebra.path import Path
from sepia.algebra.terms import RdfTerm, TermPattern


@dataclass(frozen=True, slots=True)
class TriplePattern:
    """``s p o`` with variables allowed in each position (RSP-QL seed 004, Definition 2)."""

    subject: TermPattern
    predicate: ox.NamedNode | ox.Variable
    object: TermPattern


@dataclass(frozen=True, slots=True)
class Bgp:
    """A basic graph pattern: a set of triple patterns matched together (SPARQL 18.2.1)."""

    triples: tuple[TriplePattern, ...]


@dataclass(frozen=True, slots=True)
class PathPattern:
    """``s path o`` with a property path that is not a single IRI (SPARQL 18.2.2.3)."""

    subject: TermPattern
    path: Path
    object: TermPattern


@dataclass(frozen=True, slots=True)
class Join:
    """Join(P1, P2) of SPARQL 18.2.2.6, RSP-QL Definition 19."""

    left: GraphPattern
    right: GraphPattern


@dataclass(frozen=True, slots=True)
class LeftJoin:
    """LeftJoin(P1, P2, F): OPTIONAL with the optional group's filter (SPARQL 18.2.2.6)."""

    left: GraphPattern
    right: GraphPattern
    expression: Expression | None = None


@dataclass(frozen=True, slots=True)
class Filter:
    """Filter(F, P) (SPARQL 18.2.2.6); F sees the whole group (filter scope)."""

    expression: Expression
    inner: GraphPattern


@dataclass(frozen=True, slots=True)
class Union:
    """Union(P1, P2) (SPARQL 18.2.2.6)."""

    left: GraphPattern
    right: GraphPattern


@dataclass(frozen=True, slots=True)
class Minus:
    """Minus(P1, P2) (SPARQL 18.2.2.6)."""

    left: GraphPattern
    right: GraphPattern


@dataclass(frozen=True, slots=True)
class Graph:
    """``GRAPH g { P }`` over the named background graphs (SPARQL 18.2.2.6)."""

    name: ox.NamedNode | ox.Variable
    inner: GraphPattern


@dataclass(frozen=True, slots=True)
class Extend:
    """Extend(P, var, expr): BIND and SELECT expressions (SPARQL 18.2.2.6 and 18.2.4.4)."""

    inner: GraphPattern
    variable: ox.Variable
    expression: Expression


@dataclass(frozen=True, slots=True)
class Values:
    """Inline data (SPARQL 18.2.2.6 ToMultiSet); None in a row is UNDEF."""

    variables: tuple[ox.Variable, ...]
    rows: tuple[tuple[RdfTerm | None, ...], ...]


@dataclass(frozen=True, slots=True)
class AggregateBinding:
    """One aggregate of a group and the variable its value is bound to."""

    variable: ox.Variable
    aggregate: Aggregate


@dataclass(frozen=True, slots=True)
class Group:
    """Group + Aggregation + AggregateJoin of SPARQL 18.2.4.1, in one node.

    Grouping expressions are bound by an ``Extend`` below, so keys are variables; an empty
    ``variables`` with aggregates is the single implicit group.
    """

    inner: GraphPattern
    variables: tuple[ox.Variable, ...]
    aggregates: tuple[AggregateBinding, ...]


@dataclass(frozen=True, slots=True)
class OrderCondition:
    """One ORDER BY key."""

    expression: Expression
    descending: bool = False


@dataclass(frozen=True, slots=True)
class OrderBy:
    """ToList + OrderBy (SPARQL 18.2.5.1)."""

    inner: GraphPattern
    conditions: tuple[OrderCondition, ...]


@dataclass(frozen=True, slots=True)
class Project:
    """Projection onto the SELECT variables (SPARQL 18.2.5.2)."""

    inner: GraphPattern
    variables: tuple[ox.Variable, ...]


@dataclass(frozen=True, slots=True)
class Distinct:
    """DISTINCT (SPARQL 18.2.5.3)."""

    inner: GraphPattern


@dataclass(frozen=True, slots=True)
class Reduced:
    """REDUCED (SPARQL 18.2.5.4): may drop duplicates; Sepia keeps them."""

    inner: GraphPattern


@dataclass(frozen=True, slots=True)
class Slice:
    """OFFSET / LIMIT (SPARQL 18.2.5.5), per evaluation of a continuous query."""

    inner: GraphPattern
    offset: int = 0
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class Window:
    """``WINDOW w { P }``: P over the window's instantaneous graph (RSEP-QL, Eq. 3).

    [[WINDOW w P]]^t = [[P]]^t over SDS_w(t), the union of the graphs in the window at t.
    """

    name: ox.NamedNode
    inner: GraphPattern


@dataclass(frozen=True, slots=True)
class Match:
    """``MATCH E``: event mappings of E as solution mappings (RSEP-QL section 4.2, Eq. 8).

    The evaluation starts under the identity window W^id; each solution carries the interval
    of the event mapping it came from, reported with the result.
    """

    event: EventPattern


GraphPattern = (
    Bgp | PathPattern | Join | LeftJoin | Filter | Union | Minus | Graph | Extend | Values
    | Group | OrderBy | Project | Distinct | Reduced | Slice | Window | Match
)
