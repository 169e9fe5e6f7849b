"""SPAseq (seed 002): ``SEQ(A; B+, C)`` over GPMs defined by ``DEFINE GPM A ON S1 { P }``.

Sequence operators map to ``Seq`` with the strategy of Definitions 10-12 (``,`` strict
contiguity, ``;`` skip-till-next, ``:`` skip-till-any), left-associative like the grammar of
Definition 4; ``+`` is Kleene plus, ``?`` optional, ``!`` negation, ``&`` conjunction and
``|`` disjunction. Each GPM becomes an ``Event`` over its named stream, labelled by its name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra import event as ev
from sepia.algebra.pattern import Bgp, GraphPattern, Match
from sepia.lang.context import Context
from sepia.lang.dialects.sequence import SeqAtom, SeqNode, SeqSyntax, atoms, map_events
from sepia.lang.errors import Span

_STRATEGIES = {
    ",": ev.SelectionPolicy.STRICT_CONTIGUITY,
    ";": ev.SelectionPolicy.SKIP_TILL_NEXT,
    ":": ev.SelectionPolicy.SKIP_TILL_ANY,
}
_UNARY: dict[str, Callable[[ev.EventPattern], ev.EventPattern]] = {
    "+": ev.Kleene, "?": ev.Optional, "!": ev.Negation
}
_BINARY: dict[str, Callable[[ev.EventPattern, ev.EventPattern], ev.EventPattern]] = {
    "&": ev.And, "|": ev.Or
}


@dataclass(frozen=True, slots=True)
class SpaseqSequence:
    """The sequence expression of a group, waiting for the group's GPM definitions."""

    event: ev.EventPattern
    names: tuple[SeqAtom, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class GpmDefinition:
    """``DEFINE GPM name ON stream { P }`` (Definition 6: the GPM (u, P))."""

    name: str
    stream: ox.NamedNode
    pattern: GraphPattern
    span: Span


def spaseq_event(node: SeqSyntax) -> ev.EventPattern:
    """The algebra of a sequence expression; GPMs are labelled placeholders until resolved."""
    match node:
        case SeqAtom(_, name, _):
            return ev.Event(Bgp(()), label=name)  # type: ignore[arg-type]
        case SeqNode(operator, (left, right), _) if operator in _STRATEGIES:
            return ev.Seq(spaseq_event(left), spaseq_event(right), _STRATEGIES[operator])
        case SeqNode(operator, (left, right), _):
            return _BINARY[operator](spaseq_event(left), spaseq_event(right))
        case SeqNode(operator, (inner,), _):
            return _UNARY[operator](spaseq_event(inner))
    raise AssertionError(f"not a sequence expression: {node}")


class SpaseqRules:
    """Transformer methods and group resolution for SPAseq."""

    ctx: Context

    def spaseq_sequence(self, expression: SeqSyntax, span: Span) -> SpaseqSequence:
        self.ctx.features.add("spaseq")
        return SpaseqSequence(spaseq_event(expression), tuple(atoms(expression)), span)

    @v_args(meta=True, inline=True)
    def define_gpm(
        self,
        meta: Meta,
        _define: Token,
        _gpm: Token,
        name: Token,
        _on: Token,
        stream: Token | ox.NamedNode,
        pattern: GraphPattern,
    ) -> GpmDefinition:
        self.ctx.features.add("spaseq")
        if isinstance(stream, Token):
            if str(stream) not in self.ctx.stream_names:
                self.ctx.fail(
                    stream,
                    f"undeclared stream {stream}",
                    expected=f"a clause FROM STREAM {stream} <iri> before WHERE",
                )
            stream = self.ctx.stream_names[str(stream)]
        return GpmDefinition(str(name), stream, pattern, self.ctx.span(meta))

    def resolve_gpms(self, elements: list) -> list:
        """Replace the group's sequence and GPM definitions by one ``Match``."""
        definitions: dict[str, GpmDefinition] = {}
        for gpm in (e for e in elements if isinstance(e, GpmDefinition)):
            if gpm.name in definitions:
                self.ctx.fail(gpm.span, f"GPM {gpm.name} is defined twice")
            definitions[gpm.name] = gpm
        sequences = [e for e in elements if isinstance(e, SpaseqSequence)]
        if not sequences:
            if definitions:
                first = next(iter(definitions.values()))
                self.ctx.fail(
                    first.span,
                    f"GPM {first.name} is defined but no SEQ( ) uses it",
                    expected="a sequence expression SEQ( ... ) in the same group",
                )
            return elements
        if len(sequences) > 1:
            self.ctx.fail(sequences[1].span, "a group may hold only one SPAseq sequence")
        sequence = sequences[0]
        for atom in sequence.names:
            if atom.value not in definitions:
                self.ctx.fail(
                    atom.span,
                    f"undeclared GPM {atom.value}",
                    expected=f"DEFINE GPM {atom.value} ON <stream> {{ ... }} in the same group",
                )
        def defined(e: ev.Event) -> ev.Event:
            assert e.label is not None  # every leaf is a GPM placeholder here
            gpm = definitions[e.label]
            return dataclasses.replace(e, pattern=gpm.pattern, stream=gpm.stream)

        event = map_events(sequence.event, defined)
        self.ctx.features.add("event")
        rest = [e for e in elements if not isinstance(e, (GpmDefinition, SpaseqSequence))]
        return [Match(event), *rest]
