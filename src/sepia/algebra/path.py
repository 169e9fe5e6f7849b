"""Property paths (SPARQL 1.1, section 9 and 18.2.2.3) extended with nested path elements.

The nested element comes from nSPARQL's nested regular expressions as CQELS-CEP uses them
(seed 000, section 3.1: ``elt ::= elt [elt]``). ``NestedTest(path, term)`` is a node test:
it holds at node x when x reaches some node (or exactly ``term``) by ``path``. In
``^:beg/[:means :subway]/:end`` it keeps the connections whose ``:means`` is ``:subway``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox

from sepia.algebra.terms import TermPattern


@dataclass(frozen=True, slots=True)
class Link:
    """One IRI step ``:p`` (SPARQL's ``link``)."""

    iri: ox.NamedNode


@dataclass(frozen=True, slots=True)
class Inverse:
    """``^path``: the path walked backwards."""

    path: Path


@dataclass(frozen=True, slots=True)
class Sequence:
    """``a / b``."""

    left: Path
    right: Path


@dataclass(frozen=True, slots=True)
class Alternative:
    """``a | b``."""

    left: Path
    right: Path


@dataclass(frozen=True, slots=True)
class ZeroOrMore:
    """``path*``."""

    path: Path


@dataclass(frozen=True, slots=True)
class OneOrMore:
    """``path+``."""

    path: Path


@dataclass(frozen=True, slots=True)
class ZeroOrOne:
    """``path?``."""

    path: Path


@dataclass(frozen=True, slots=True)
class NegatedSet:
    """``!(:a | ^:b)``: any one step whose IRI is not listed (``NPS`` of SPARQL 1.1)."""

    forward: tuple[ox.NamedNode, ...]
    inverse: tuple[ox.NamedNode, ...]


@dataclass(frozen=True, slots=True)
class NestedTest:
    """``[path]`` or ``[path term]``: nSPARQL's nested node test (seed 000, section 2.3).

    Walking it from x stays at x, and succeeds when ``path`` leads from x to some node, or to
    ``term`` when one is given: [[self::[e]]] = {(x, x) | exists y: (x, y) in [[e]]}.
    """

    path: Path
    term: TermPattern | None = None


Path = Link | Inverse | Sequence | Alternative | ZeroOrMore | OneOrMore | ZeroOrOne | NegatedSet \
    | NestedTest
