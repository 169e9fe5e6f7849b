"""EP-SPARQL (seed 003): the binary operators SEQ, EQUALS, OPTIONALSEQ and EQUALSOPTIONAL
between groups, left-associative like UNION (section 4.1), translated as in section 4.2:
SEQ -> SeqJoin, EQUALS -> EqJoin, OPTIONALSEQ -> SeqRightJoin (optional part first),
EQUALSOPTIONAL -> EqLeftJoin. A group holding one of them is read over triple occurrences:
its BGPs become ``OccurrencePattern``, joins ``EventJoin``, UNION ``Or`` and its FILTERs
``EventFilter`` (where getDURATION() and friends see the interval).
"""

from __future__ import annotations

from functools import reduce

from lark import Token

from sepia.algebra import event as ev
from sepia.algebra.pattern import Bgp, Filter, GraphPattern, Join, Match, Union
from sepia.lang.context import Context
from sepia.lang.errors import Span
from sepia.lang.patterns import FilterElement, conjunction, triples_pattern
from sepia.lang.triples import TriplesElement

_EP_ONLY = (
    ev.OccurrencePattern,
    ev.SeqJoin,
    ev.EqJoin,
    ev.SeqRightJoin,
    ev.EqLeftJoin,
    ev.EventJoin,
    ev.EventFilter,
)


def is_ep_event(event: ev.EventPattern) -> bool:
    """True for event patterns only EP-SPARQL writes."""
    if isinstance(event, ev.Or):
        return is_ep_event(event.left) or is_ep_event(event.right)
    return isinstance(event, _EP_ONLY)


def split_filter(event: ev.EventPattern) -> tuple[ev.EventPattern, object]:
    """An optional operand's FILTER becomes the join's condition, as for SPARQL's OPTIONAL."""
    if isinstance(event, ev.EventFilter):
        return event.inner, event.expression
    return event, None


class EpsparqlRules:
    """Group-level lowering for EP-SPARQL."""

    ctx: Context

    def is_event_pattern(self, pattern: GraphPattern) -> bool:
        return isinstance(pattern, Match) and is_ep_event(pattern.event)

    def is_event_group(self, elements: list) -> bool:
        return any(self.is_event_pattern(e) for e in elements if isinstance(e, Match))

    def temporal_operator(
        self, operator: Token, left: GraphPattern, right: GraphPattern
    ) -> GraphPattern:
        """``left OP right`` for the EP-SPARQL operators (and UNION of event patterns)."""
        self.ctx.features.update({"epsparql", "event"})
        span = self.ctx.span(operator)
        first, second = self.to_event(left, span), self.to_event(right, span)
        match operator.type:
            case "SEQ":
                return Match(ev.SeqJoin(first, second, self.ctx.event_policy))
            case "EQUALS":
                return Match(ev.EqJoin(first, second))
            case "OPTIONALSEQ":
                optional, condition = split_filter(first)
                return Match(ev.SeqRightJoin(optional, second, condition))  # type: ignore[arg-type]
            case "EQUALSOPTIONAL":
                optional, condition = split_filter(second)
                return Match(ev.EqLeftJoin(first, optional, condition))  # type: ignore[arg-type]
            case _:
                return Match(ev.Or(first, second))

    def to_event(self, pattern: GraphPattern, span: Span) -> ev.EventPattern:
        """A graph pattern read over triple occurrences (EP-SPARQL's relational semantics)."""
        match pattern:
            case Match(event):
                return event
            case Bgp():
                return ev.OccurrencePattern(pattern)
            case Join(left, right):
                return ev.EventJoin(self.to_event(left, span), self.to_event(right, span))
            case Union(left, right):
                return ev.Or(self.to_event(left, span), self.to_event(right, span))
            case Filter(expression, inner):
                return ev.EventFilter(expression, self.to_event(inner, span))
            case _:
                self.ctx.fail(
                    span,
                    f"{type(pattern).__name__} cannot take part in an EP-SPARQL event pattern",
                    expected="triple patterns, groups, UNION, FILTER and the EP-SPARQL operators",
                )

    def event_group(self, elements: list, span: Span) -> GraphPattern:
        """A group with EP-SPARQL operators: all of it is one event pattern."""
        events: list[ev.EventPattern] = []
        filters = []
        for element in elements:
            if isinstance(element, FilterElement):
                filters.append(element.expression)
            elif isinstance(element, TriplesElement):
                events.append(self.to_event(triples_pattern(element), element.span))
            elif isinstance(element, GraphPattern):
                events.append(self.to_event(element, span))
            else:
                self.ctx.fail(
                    span,
                    "OPTIONAL, MINUS and BIND cannot be mixed with EP-SPARQL "
                    "operators in one group",
                    expected="OPTIONALSEQ or EQUALSOPTIONAL",
                )
        event = reduce(ev.EventJoin, events)
        if filters:
            event = ev.EventFilter(conjunction(filters), event)
        return Match(event)
