"""What a kind of continuous query does with time, and the state it keeps of its own.

``ContinuousQuery`` keeps what every query has (windows, clock, previous answer, the query
form) and chooses its kind once, from the physical plan; the kind answers each step. The
defaults here are a kind that time alone never changes and that holds nothing of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sepia.engine.rows import Row
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement

if TYPE_CHECKING:
    from sepia.engine.query.continuous import ContinuousQuery, Snapshot


class QueryKind:
    """One kind of continuous query, stepped by its ``host``."""

    low: int | None = None
    """The first arrival a window query's windows read (no instant before it)."""
    matched = 0
    """How many matches a SPAseq automaton completed (numbers them)."""
    dropped = 0
    """Automaton runs dropped by ``--max-runs``."""
    timed = False
    """Whether time alone, with no event of its own, can change what it holds."""

    def __init__(self, host: ContinuousQuery) -> None:
        self.host = host

    def advance(self, t: int, elements: Sequence[StreamElement]) -> list[Result]:
        """Everything due up to t, given the elements stamped t."""
        raise NotImplementedError

    def watermark(self, t: int) -> list[Result]:
        """Nothing stamped t or earlier will arrive: what time alone makes due through t."""
        return []

    def pass_time(self, t: int) -> list[Result]:
        """Time reaches t on the streamset with no event of this query's own."""
        return []

    def flush(self, until: int | None) -> list[Result]:
        """The input ended: what is still due."""
        return []

    def settled(self, through: int) -> int:
        """The time up to which no more results can come, given the input through it."""
        return through

    def solutions(self, rows: list[Row], t: int) -> list[Row]:
        """Of the plan's solutions at t, those the query answers with at t."""
        return rows

    def deadline(self) -> int | None:
        """The first instant at which a step with no event could change the state."""
        return None

    def waiting_since(self) -> int | None:
        """The end of the oldest match waiting for the next event (a ``, !B`` guard)."""
        return None

    def runs_held(self) -> int:
        return 0

    def idle(self) -> bool:
        """Whether it holds nothing of its own a fresh one would not."""
        return True

    def rows(self) -> Snapshot:
        """Its own state rows, by snapshot table."""
        return {}

    def restore(self, snapshot: Snapshot, low: int | None, matched: int, dropped: int) -> None:
        """Resume its own state from the snapshot's rows (and the clock's counters)."""
        self.low, self.matched, self.dropped = low, matched, dropped
