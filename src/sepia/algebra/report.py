"""Report policies: when a continuous query is evaluated (RSP-QL seed 004, Definition 23).

A policy is data: a conjunction of SECRET strategies, each optionally restricted to one
window (``OF <w>``; None means any window of the query), or the push policy of event
queries, or a single evaluation for a query without streams. Defaults per dialect are in
spec/language.md section 3 and are chosen by ``sepia.lang``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyoxigraph as ox


@dataclass(frozen=True, slots=True)
class ContentChange:
    """``ON CONTENT CHANGE``: evaluate whenever an element enters a window."""

    window: ox.NamedNode | None = None


@dataclass(frozen=True, slots=True)
class WindowClose:
    """``ON WINDOW CLOSE``: evaluate when a window closes (at c)."""

    window: ox.NamedNode | None = None


@dataclass(frozen=True, slots=True)
class NonEmpty:
    """``NON EMPTY``: evaluate only when the window content is not empty."""

    window: ox.NamedNode | None = None


@dataclass(frozen=True, slots=True)
class Periodic:
    """``EVERY d``: evaluate at t0 + k * period."""

    period: int
    window: ox.NamedNode | None = None


Strategy = ContentChange | WindowClose | NonEmpty | Periodic


@dataclass(frozen=True, slots=True)
class Report:
    """A policy P = strategy_1 AND ... AND strategy_n; every one must hold (Definition 23)."""

    strategies: tuple[Strategy, ...]


@dataclass(frozen=True, slots=True)
class PushMatches:
    """Event queries: every match is reported once, when its last event arrives."""


@dataclass(frozen=True, slots=True)
class Once:
    """A query without streams: evaluated once, like SPARQL."""


ReportPolicy = Report | PushMatches | Once
