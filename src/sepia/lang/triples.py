"""Lowering of triples blocks and property paths (SPARQL 1.1 rules 55, 75-104, 18.2.2.4).

A path that is one IRI, or the inverse of one, becomes a plain triple pattern; any other path
stays a ``PathPattern``. The nested element ``[path]`` / ``[path term]`` of CQELS-CEP becomes
``NestedTest``. Collections and ``[ ... ]`` expand to fresh blank nodes as in section 19.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra import path as pa
from sepia.algebra.pattern import PathPattern, TriplePattern
from sepia.lang.context import Context
from sepia.lang.errors import Span
from sepia.rdf.vocabulary import RDF

RDF_TYPE = ox.NamedNode(RDF + "type")
TripleItem = TriplePattern | PathPattern


@dataclass(frozen=True, slots=True)
class NodeWithTriples:
    """A subject or object written as a collection or ``[ ... ]``: its node and its triples."""

    node: ox.BlankNode | ox.NamedNode
    triples: tuple[TripleItem, ...]


@dataclass(frozen=True, slots=True)
class TriplesElement:
    """One triples block of a group: a basic graph pattern plus path patterns."""

    items: tuple[TripleItem, ...]
    span: Span


def triple_item(subject: object, verb: object, obj: object) -> TripleItem:
    """A plain triple when the verb is a variable, an IRI or an inverse IRI, else a path."""
    match verb:
        case ox.Variable() | ox.NamedNode():
            return TriplePattern(subject, verb, obj)  # type: ignore[arg-type]
        case pa.Link(iri):
            return TriplePattern(subject, iri, obj)  # type: ignore[arg-type]
        case pa.Inverse(pa.Link(iri)):
            return TriplePattern(obj, iri, subject)  # type: ignore[arg-type]
        case _:
            return PathPattern(subject, verb, obj)  # type: ignore[arg-type]


class TripleRules:
    """Transformer methods for triples and property paths (blank nodes come from TermRules)."""

    ctx: Context

    if TYPE_CHECKING:  # given by TermRules
        def fresh_blank_node(self) -> ox.BlankNode: ...

    @v_args(meta=True)
    def triples_block(self, meta: Meta, children: list) -> TriplesElement:
        items: list[TripleItem] = []
        for child in children:
            items.extend(child.items if isinstance(child, TriplesElement) else child)
        return TriplesElement(tuple(items), self.ctx.span(meta))

    @v_args(meta=True)
    def triples_template(self, meta: Meta, children: list) -> TriplesElement:
        return self.triples_block(meta, children)

    def triples_same_subject_path(self, children: list) -> list[TripleItem]:
        subject = children[0]
        items: list[TripleItem] = []
        if isinstance(subject, NodeWithTriples):
            items.extend(subject.triples)
            subject = subject.node
        for verb, objects in children[1] if len(children) > 1 else []:
            for obj in objects:
                if isinstance(obj, NodeWithTriples):
                    items.append(triple_item(subject, verb, obj.node))
                    items.extend(obj.triples)
                else:
                    items.append(triple_item(subject, verb, obj))
        return items

    def property_list(self, children: list) -> list:
        return children[0]

    def property_list_not_empty(self, children: list) -> list[tuple[object, list]]:
        return [(children[i], children[i + 1]) for i in range(0, len(children), 2)]

    @v_args(inline=True)
    def verb(self, verb: object) -> object:
        return verb

    def object_list(self, children: list) -> list:
        return children

    @v_args(inline=True)
    def graph_node(self, node: object) -> object:
        return node

    def collection(self, children: list) -> NodeWithTriples:
        """``( a b )``: an rdf:first / rdf:rest list of fresh blank nodes (SPARQL 19.7)."""
        nodes = [self.fresh_blank_node() for _ in children]
        items: list[TripleItem] = []
        for index, (node, member) in enumerate(zip(nodes, children, strict=True)):
            value = member.node if isinstance(member, NodeWithTriples) else member
            rest = nodes[index + 1] if index + 1 < len(nodes) else ox.NamedNode(RDF + "nil")
            items.append(TriplePattern(node, ox.NamedNode(RDF + "first"), value))
            items.append(TriplePattern(node, ox.NamedNode(RDF + "rest"), rest))
            if isinstance(member, NodeWithTriples):
                items.extend(member.triples)
        return NodeWithTriples(nodes[0], tuple(items))

    @v_args(inline=True)
    def blank_node_property_list(self, properties: list) -> NodeWithTriples:
        node = self.fresh_blank_node()
        return NodeWithTriples(node, tuple(self.triples_same_subject_path([node, properties])))

    # ---- property paths ----------------------------------------------------------------
    @v_args(inline=True)
    def path_link(self, iri: object) -> pa.Path:
        return pa.Link(RDF_TYPE if isinstance(iri, Token) else iri)  # type: ignore[arg-type]

    @v_args(inline=True)
    def path_alternative(self, left: pa.Path, right: pa.Path) -> pa.Path:
        return pa.Alternative(left, right)

    @v_args(inline=True)
    def path_sequence(self, left: pa.Path, right: pa.Path) -> pa.Path:
        return pa.Sequence(left, right)

    @v_args(inline=True)
    def path_inverse(self, inner: pa.Path) -> pa.Path:
        return pa.Inverse(inner)

    @v_args(inline=True)
    def path_zero_or_one(self, inner: pa.Path) -> pa.Path:
        return pa.ZeroOrOne(inner)

    @v_args(inline=True)
    def path_zero_or_more(self, inner: pa.Path) -> pa.Path:
        return pa.ZeroOrMore(inner)

    @v_args(inline=True)
    def path_one_or_more(self, inner: pa.Path) -> pa.Path:
        return pa.OneOrMore(inner)

    @v_args(inline=True)
    def path_nested(self, inner: pa.Path, term: object = None) -> pa.Path:
        self.ctx.features.add("nested-path")
        return pa.NestedTest(inner, term)  # type: ignore[arg-type]

    def path_negated_set(self, children: list) -> pa.Path:
        steps = [c for c in children if not isinstance(c, Token)]
        return pa.NegatedSet(
            tuple(iri for iri, inverse in steps if not inverse),
            tuple(iri for iri, inverse in steps if inverse),
        )

    @v_args(inline=True)
    def path_one_in_set(self, iri: object) -> tuple[ox.NamedNode, bool]:
        return (RDF_TYPE if isinstance(iri, Token) else iri), False  # type: ignore[return-value]

    @v_args(inline=True)
    def path_one_inverse(self, iri: object) -> tuple[ox.NamedNode, bool]:
        return (RDF_TYPE if isinstance(iri, Token) else iri), True  # type: ignore[return-value]
