"""What the columnar sequences share: SPAseq's (``sequences``) and CQELS-CEP's
(``event_sequences``), pushed without a REPORT clause, report each match when its last
event arrives, so time passing brings nothing due; and both step a batch span by span,
never cutting an instant (its elements complete matches together)."""

from __future__ import annotations

import numpy as np

from sepia.algebra import query as qa
from sepia.engine.codec import Codec
from sepia.engine.columnar.partitions import gpm_scan
from sepia.engine.columnar.tables import Ids
from sepia.engine.plan.physical import EventPlan, PhysicalQuery
from sepia.engine.query.continuous import ContinuousQuery
from sepia.engine.r2r import operators as po
from sepia.engine.r2s import streams as r2s
from sepia.rdf.results import Result


class Pushed:
    """What a columnar sequence answers through its host (the row engine's planned query,
    whose windows, plan and dictionary it runs on), and the time side of the
    registered-query interface for an engine that reports every match as its last event
    arrives."""

    host: ContinuousQuery

    @property
    def query(self) -> qa.Query:
        return self.host.query

    @property
    def dictionary(self) -> Codec:
        assert isinstance(self.host.dictionary, Codec)
        return self.host.dictionary

    def event_plans(self) -> list[po.PhysicalPlan]:
        """The plans of the GPMs / basic event patterns matched on each element."""
        raise NotImplementedError

    def predicates(self) -> frozenset[str] | None:
        """The predicate IRIs the event patterns read; None when one reads a variable
        predicate (the columnar reader keeps only these triples)."""
        found: set[str] = set()
        for plan in self.event_plans():
            parts = gpm_scan(plan)
            assert parts is not None
            for _, p, _ in parts[0].patterns:
                if not isinstance(p, po.Constant):
                    return None
                found.add(self.dictionary.decode_text(p.id)[1:-1])
        return frozenset(found)

    def watermark(self, t: int) -> list[Result]:
        """Matches are pushed as they complete: a watermark brings nothing due."""
        return []

    def flush(self, until: int | None = None) -> list[Result]:
        """Nothing waits for the end of the input."""
        return []

    def flush_end(self) -> None:
        return None

    def settled(self, through: int) -> int:
        """No match is reported later than the event completing it."""
        return through


def pushed_uncovered(physical: PhysicalQuery) -> str | None:
    """Why an event plan's matches are not pushed as they end, each once, as the columnar
    event engines report them (a REPORT clause, PARTITION BY, another form), or None."""
    kind, query = physical.kind, physical.query
    assert isinstance(kind, EventPlan)
    if kind.schedule is not None:
        return "a REPORT clause: every mapping over the windows at its instants"
    if kind.partition is not None:
        return "PARTITION BY over an event pattern"
    if not isinstance(query.form, qa.Select) or r2s.operator_of(query) is not qa.RStream:
        return "a query form other than a SELECT streamed by RSTREAM"
    return None


def spans(times: Ids, size: int) -> list[tuple[int, int]]:
    """Cuts of a batch (``times``: its elements', sorted) into spans of about ``size``
    elements, never inside an instant."""
    bounds, start = [], 0
    while start < len(times):
        stop = min(start + size, len(times))
        if stop < len(times):
            stop = int(np.searchsorted(times, times[stop], side="left")) or stop
            if stop <= start:
                stop = int(np.searchsorted(times, times[start], side="right"))
        bounds.append((start, stop))
        start = stop
    return bounds
