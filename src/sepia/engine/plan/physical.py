"""The physical plan of a query: what the planner gives the continuous query.

A query is of one of four kinds, a closed union the continuous query dispatches on once:
a window query (``WindowPlan``: evaluated at the instants its report policy makes due), a
SPAseq sequence (``SequencePlan``: an event automaton), an event pattern of RSEP-QL,
CQELS-CEP or EP-SPARQL (``EventPlan``: an event tree pushed as its mappings complete), or
several MATCHes (``MatchesPlan``); the last two with a REPORT clause are evaluated at its
instants instead (their ``schedule``). What every kind has (the slot table, the graph pattern's
operators, the windows) is in ``PhysicalQuery`` itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra import query as qa
from sepia.engine.cep.automaton import (
    Automaton,
)
from sepia.engine.cep.epsparql import Horizon, OccurrenceLeaf
from sepia.engine.cep.event_trees import EventTree
from sepia.engine.cep.runs import Within
from sepia.engine.r2r import operators as po
from sepia.engine.rows import Slots
from sepia.engine.s2r.report import Schedule
from sepia.engine.s2r.windows import WindowOperator

Functions = dict[ox.NamedNode, Callable[..., ox.Literal | None]]
"""Extension functions by IRI, as pyoxigraph's ``custom_functions`` takes them."""


@dataclass(frozen=True, slots=True)
class Partition:
    """PARTITION BY ?v (language.md 4b): the variable's slot, and the plan of every basic
    event pattern of the query in full (FILTERs on other elements' variables included, as
    the reference reads them): an event joins partition x when one of them binds ?v = x."""

    slot: int | None
    """None when no pattern mentions ?v: no event joins any partition."""
    leaves: tuple[po.PhysicalPlan, ...]


class GpmRows:
    """The rows of GPM plans on the events of one instant, shared by the queries that run
    one ``PhysicalQuery`` (PARTITION BY's router, then the partitions, match each event with
    structurally equal plans): a cache of pure results (``ContinuousQuery._gpm``), not
    state. Plans are keyed by their identity, each mapped once to the first equal plan."""

    LIMIT = 1 << 12

    def __init__(self) -> None:
        self.rows: dict[tuple, tuple[object, list]] = {}
        self._same: dict[int, tuple[po.PhysicalPlan, int]] = {}
        self._plans: dict[po.PhysicalPlan, po.PhysicalPlan] = {}

    def plan_key(self, plan: po.PhysicalPlan) -> int:
        """One number for all the plans equal to ``plan`` (kept alive here, so that no
        other object takes its identity)."""
        found = self._same.get(id(plan))
        if found is None:
            found = self._same[id(plan)] = (plan, id(self._plans.setdefault(plan, plan)))
        return found[1]


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """A window query: evaluated at the instants its report policy makes due (without a
    policy: once, at 0)."""

    schedule: Schedule | None


@dataclass(frozen=True, slots=True)
class SequencePlan:
    """A SPAseq sequence expression: its event automaton, WITHIN and PARTITION BY."""

    automaton: Automaton
    within: Within | None
    partition: Partition | None


@dataclass(frozen=True, slots=True)
class EventPlan:
    """An RSEP-QL, CQELS-CEP or EP-SPARQL event pattern, its mappings pushed as they end."""

    tree: EventTree
    occurrences: tuple[OccurrenceLeaf, ...]
    """EP-SPARQL's BGPs over triple occurrences in ``tree``."""
    horizon: Horizon | None
    """A top-level getDURATION() bound on the event pattern (what occurrences can be
    forgotten, when the pattern only grows)."""
    partition: Partition | None
    schedule: Schedule | None = None
    """A REPORT clause: every mapping over the windows at its instants, not pushed."""


@dataclass(frozen=True, slots=True)
class MatchesPlan:
    """Several MATCHes: the event tree of each, their matches joined by the pattern."""

    trees: tuple[EventTree, ...]
    schedule: Schedule | None = None
    """A REPORT clause: every match over the windows at its instants, not pushed."""


QueryPlan = WindowPlan | SequencePlan | EventPlan | MatchesPlan


@dataclass(frozen=True, slots=True)
class PhysicalQuery:
    """Everything the engine needs to run one query continuously."""

    query: qa.Query
    slots: Slots
    root: po.PhysicalPlan
    windows: dict[ox.NamedNode, tuple[str, WindowOperator]]
    default_graph: tuple[po.GraphRef, ...]
    kind: QueryPlan
    gpm_rows: GpmRows = dataclasses.field(default_factory=lambda: GpmRows(), compare=False)
    """GPM plans' rows on one event, shared by the queries running this plan."""

    @property
    def schedule(self) -> Schedule | None:
        """The report policy a window query, or an event query with a REPORT clause, is
        evaluated by (other event queries push their matches as they complete)."""
        return None if isinstance(self.kind, SequencePlan) else self.kind.schedule

    @property
    def partition(self) -> Partition | None:
        """PARTITION BY, on a sequence or an event pattern."""
        return self.kind.partition if isinstance(self.kind, SequencePlan | EventPlan) else None
