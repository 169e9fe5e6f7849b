"""CQELS-QL and CQELS-CEP (seed 000): ``WINDOW <w> { P }`` blocks, inline
``STREAM <s> [spec] { P }`` windows, and SEQ with at most one negated element.

A SEQ of n elements with no negation is SEQ(E1, SEQ(E2, ..., En)) (Eqs. 3-4 and 10-11); one
negated element in the middle, first or last gives SEQ_WO, NO_HEAD or NO_TAIL (Eqs. 5-8,
12-15). The triple sequence form lives inside a WINDOW block, whose window its elements read;
the window form names windows whose WINDOW blocks, in the same group, it consumes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra import event as ev
from sepia.algebra.dataset import WindowSpec
from sepia.algebra.pattern import Bgp, Filter, GraphPattern, Join, Match, Window
from sepia.lang.context import Context, Reference
from sepia.lang.dialects.sequence import SeqAtom, SeqNode, SeqSyntax, atoms, map_events
from sepia.lang.errors import Span

if TYPE_CHECKING:
    from sepia.algebra.dataset import WindowDecl


@dataclass(frozen=True, slots=True)
class WindowSequence:
    """``SEQ(<w1>, !<w2>, ...)`` waiting for the WINDOW blocks of its group."""

    event: ev.EventPattern
    windows: tuple[SeqAtom, ...]
    span: Span


def bind_window(pattern: GraphPattern, window: ox.NamedNode) -> GraphPattern:
    """``WINDOW w { P }``: triple sequences in P read w; the rest is Window(w, ...)."""
    if not _holds_sequence(pattern):
        return Window(window, pattern)
    match pattern:
        case Match(event):
            return Match(
                map_events(
                    event,
                    lambda e: (
                        dataclasses.replace(e, window=window)
                        if e.window is None and e.stream is None
                        else e
                    ),
                )
            )
        case Join(left, right):
            return Join(bind_window(left, window), bind_window(right, window))
        case Filter(expression, inner):
            return Filter(expression, bind_window(inner, window))
        case _:
            return Window(window, pattern)


def _holds_sequence(pattern: GraphPattern) -> bool:
    """True when a triple sequence (a Match) stands among the group's joined elements."""
    match pattern:
        case Match():
            return True
        case Join(left, right):
            return _holds_sequence(left) or _holds_sequence(right)
        case Filter(_, inner):
            return _holds_sequence(inner)
        case _:
            return False


class CqelsRules:
    """Transformer methods and group resolution for CQELS constructs."""

    ctx: Context

    if TYPE_CHECKING:  # given by StreamRules
        def generated_window(
            self, stream: ox.NamedNode, spec: WindowSpec, into_default: bool = False
        ) -> WindowDecl: ...

    @v_args(meta=True, inline=True)
    def window_graph(
        self, meta: Meta, _keyword: Token, window: ox.NamedNode, pattern: GraphPattern
    ) -> GraphPattern:
        span = self.ctx.span(meta)
        self.ctx.window_references.append(Reference(window.value, self.ctx.iri_span(window, span)))
        return bind_window(pattern, window)

    @v_args(inline=True)
    def stream_graph(
        self, _keyword: Token, stream: ox.NamedNode, spec: WindowSpec, pattern: GraphPattern
    ) -> GraphPattern:
        self.ctx.features.add("inline-stream")
        window = self.generated_window(stream, spec)
        return bind_window(pattern, window.name)

    def cqels_chain(self, expression: SeqSyntax) -> ev.EventPattern:
        """The CQELS-CEP operator tree of a flat ``SEQ(e1, ..., !ei, ..., en)``."""
        items = list(self._flatten(expression))
        negated = [i for i, (_, negative, _) in enumerate(items) if negative]
        if len(negated) > 1:
            self.ctx.fail(
                items[negated[1]][2],
                "a CQELS-CEP SEQ may negate only one element; this is a second '!'",
                expected="at most one '!' per SEQ",
            )
        if len(items) < 2:
            self.ctx.fail(expression.span, "a SEQ needs at least two elements")
        events = [event for event, _, _ in items]
        if not negated:
            return self._seq(events)
        i = negated[0]
        if i == 0:
            return ev.NoHead(events[0], self._seq(events[1:]))
        if i == len(events) - 1:
            return ev.NoTail(self._seq(events[:-1]), events[-1])
        return ev.SeqWithout(self._seq(events[:i]), events[i], self._seq(events[i + 1 :]))

    def _seq(self, events: list[ev.EventPattern]) -> ev.EventPattern:
        if len(events) == 1:
            return events[0]
        return ev.Seq(events[0], self._seq(events[1:]), self.ctx.event_policy)

    def _flatten(self, node: SeqSyntax):
        match node:
            case SeqNode(",", (left, right), _):
                yield from self._flatten(left)
                yield from self._flatten(right)
            case SeqNode("!", (SeqAtom() as atom,), span):
                yield self._leaf(atom), True, span
            case SeqAtom():
                yield self._leaf(node), False, node.span
            case SeqNode(operator, _, span):
                self.ctx.fail(
                    span,
                    f"'{operator}' is not a CQELS-CEP sequence operator",
                    expected="elements separated by ',' with at most one '!'",
                )

    def _leaf(self, atom: SeqAtom) -> ev.Event:
        if atom.kind == "window":
            return ev.Event(Bgp(()), window=atom.value)  # type: ignore[arg-type]
        return ev.Event(atom.value)  # type: ignore[arg-type]

    def triple_sequence(self, expression: SeqSyntax, span: Span) -> GraphPattern:
        self.ctx.features.update({"cqels-cep", "event"})
        self.ctx.sequence_spans.append(span)
        return Match(self.cqels_chain(expression))

    def window_sequence(self, expression: SeqSyntax, span: Span) -> WindowSequence:
        self.ctx.features.update({"cqels-cep", "event"})
        event = self.cqels_chain(expression)
        windows = tuple(atoms(expression))
        return WindowSequence(event, windows, span)

    def resolve_window_sequences(self, elements: list) -> list:
        """Give each window of an event clause the pattern of its WINDOW block (consumed)."""
        for sequence in [e for e in elements if isinstance(e, WindowSequence)]:
            blocks = {}
            for atom in sequence.windows:
                block = next(
                    (e for e in elements if isinstance(e, Window) and e.name == atom.value), None
                )
                if block is None:
                    self.ctx.fail(
                        atom.span,
                        f"SEQ names window {atom.value}, but this group has no WINDOW block for it",
                        expected=f"WINDOW {atom.value} {{ ... }} next to the SEQ",
                    )
                name = atom.value
                assert isinstance(name, ox.NamedNode)  # a window atom names its window
                self.ctx.window_references.append(Reference(name.value, atom.span))
                blocks[atom.value] = block
                elements = [e for e in elements if e is not block]
            event = map_events(sequence.event, partial(_read_in, blocks))
            elements = [Match(event) if e is sequence else e for e in elements]
        return elements


def _read_in(blocks: dict, event: ev.Event) -> ev.Event:
    """A window leaf given the pattern of its WINDOW block."""
    if event.window in blocks:
        return dataclasses.replace(event, pattern=blocks[event.window].inner)
    return event
