"""Event patterns printed back to query text, in the syntax of the dialect that writes them:
RSEP-QL ``MATCH { }``, CQELS-CEP ``SEQ`` with a negation, SPAseq ``SEQ( )`` with its
``DEFINE GPM`` blocks, EP-SPARQL's binary operators between groups.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sepia.algebra import event as ev
from sepia.algebra import expression as ex
from sepia.algebra.scope import basic_events

if TYPE_CHECKING:
    from sepia.algebra import pattern as gp

_SPASEQ = {ev.SelectionPolicy.STRICT_CONTIGUITY: ",", ev.SelectionPolicy.SKIP_TILL_NEXT: ";",
           ev.SelectionPolicy.SKIP_TILL_ANY: ":"}


class EventText:
    """Methods of ``QueryText`` for event patterns (terms, groups and expressions come from
    ``QueryText``)."""

    if TYPE_CHECKING:  # given by QueryText
        def term(self, term: object) -> str: ...

        def group(self, pattern: gp.GraphPattern) -> str: ...

        def elements(self, pattern: gp.GraphPattern) -> list[str]: ...

        def expression(self, node: ex.Expression) -> str: ...

    def event_elements(self, event: ev.EventPattern) -> list[str]:
        """Group elements whose translation is ``Match(event)``, in the event's dialect."""
        leaves = basic_events(event)
        if any(isinstance(leaf, ev.OccurrencePattern) for leaf in leaves):
            return self.ep_elements(event)
        if any(isinstance(leaf, ev.Event) and leaf.label for leaf in leaves):
            gpms = {leaf.label: leaf for leaf in leaves if isinstance(leaf, ev.Event)}
            defines = [f"DEFINE GPM {label} ON {self.term(gpm.stream)} {self.group(gpm.pattern)}"
                       for label, gpm in gpms.items()]
            return [f"SEQ({self.spaseq(event)})", *defines]
        if isinstance(event, ev.NoHead | ev.NoTail | ev.SeqWithout):
            return self.cqels(event)
        return ["MATCH { " + self.rsep(event) + " }"]

    def rsep(self, event: ev.EventPattern) -> str:
        match event:
            case ev.Event(pattern, window, None, None) if window is not None:
                return f"EVENT {self.term(window)} {self.group(pattern)}"
            case ev.Seq(left, right, _):
                right_text = self.rsep(right)
                if isinstance(right, ev.Seq):
                    right_text = f"({right_text})"
                return f"{self.rsep(left)} SEQ {right_text}"
            case ev.First(inner):
                return f"FIRST({self.rsep(inner)})"
            case ev.Last(inner):
                return f"LAST({self.rsep(inner)})"
        raise ValueError(f"no query text for event pattern {type(event).__name__}")

    def spaseq(self, event: ev.EventPattern) -> str:
        def operand(node: ev.EventPattern) -> str:
            return self.spaseq(node) if isinstance(node, ev.Event) else f"({self.spaseq(node)})"

        match event:
            case ev.Event(label=label) if label:
                return label
            case ev.Seq(left, right, policy) if policy in _SPASEQ:
                return f"{operand(left)} {_SPASEQ[policy]} {operand(right)}"
            case ev.And(left, right):
                return f"{operand(left)} & {operand(right)}"
            case ev.Or(left, right):
                return f"{operand(left)} | {operand(right)}"
            case ev.Kleene(inner):
                return operand(inner) + "+"
            case ev.Optional(inner):
                return operand(inner) + "?"
            case ev.Negation(inner):
                return "!" + operand(inner)
        raise ValueError(f"no SPAseq text for {type(event).__name__}")

    def cqels(self, event: ev.EventPattern) -> list[str]:
        """``WINDOW w { SEQ({P1}, !{P2}, ...) }``, or the window form over several windows."""
        items = _cqels_items(event)
        windows = {leaf.window for leaf, _ in items}
        if len(windows) == 1:
            (window,) = windows
            sequence = ", ".join(("!" if negated else "") + self.group(leaf.pattern)
                                 for leaf, negated in items)
            return [f"WINDOW {self.term(window)} {{ SEQ({sequence}) }}"]
        if len(windows) < len(items):
            raise ValueError("a CQELS-CEP event clause reads each window once")
        sequence = ", ".join(("!" if negated else "") + self.term(leaf.window)
                             for leaf, negated in items)
        blocks = [f"WINDOW {self.term(leaf.window)} {self.group(leaf.pattern)}"
                  for leaf, _ in items]
        return [f"SEQ({sequence})", *blocks]

    def ep_elements(self, event: ev.EventPattern) -> list[str]:
        """EP-SPARQL group elements whose event group is ``event``."""
        match event:
            case ev.EventFilter(condition, inner):
                return [*self.ep_elements(inner), f"FILTER({self.expression(condition)})"]
            case ev.EventJoin(left, right):
                return [*self.ep_elements(left), self.ep_operand(right)]
            case ev.OccurrencePattern(bgp):
                return self.elements(bgp)
            case _:
                return [self.ep_binary(event)]

    def ep_operand(self, event: ev.EventPattern, condition: ex.Expression | None = None) -> str:
        inner = event if condition is None else ev.EventFilter(condition, event)
        return "{ " + " ".join(self.ep_elements(inner)) + " }"

    def ep_binary(self, event: ev.EventPattern) -> str:
        match event:
            case ev.SeqJoin(left, right, _):
                return f"{self.ep_operand(left)} SEQ {self.ep_operand(right)}"
            case ev.EqJoin(left, right):
                return f"{self.ep_operand(left)} EQUALS {self.ep_operand(right)}"
            case ev.SeqRightJoin(optional, required, condition):
                return (f"{self.ep_operand(optional, condition)} OPTIONALSEQ "
                        f"{self.ep_operand(required)}")
            case ev.EqLeftJoin(left, right, condition):
                return (f"{self.ep_operand(left)} EQUALSOPTIONAL "
                        f"{self.ep_operand(right, condition)}")
            case ev.Or(left, right):
                return f"{self.ep_operand(left)} UNION {self.ep_operand(right)}"
        raise ValueError(f"no EP-SPARQL text for {type(event).__name__}")


def _cqels_items(event: ev.EventPattern) -> list[tuple[ev.Event, bool]]:
    """The elements of a CQELS-CEP SEQ, left to right, with their negation flag."""
    match event:
        case ev.Event():
            return [(event, False)]
        case ev.Seq(left, right, _):
            return _cqels_items(left) + _cqels_items(right)
        case ev.NoHead(ev.Event() as negated, right):
            return [(negated, True), *_cqels_items(right)]
        case ev.NoTail(left, ev.Event() as negated):
            return [*_cqels_items(left), (negated, True)]
        case ev.SeqWithout(left, ev.Event() as negated, right):
            return [*_cqels_items(left), (negated, True), *_cqels_items(right)]
    raise ValueError(f"no CQELS-CEP text for {type(event).__name__}")


