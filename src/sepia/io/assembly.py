"""Quads in file order -> stream elements in time order (the RSP data model of io.md).

Each named graph is one element; its time is given in the default graph by
`<g> prov:generatedAtTime T`, or `prov:startedAtTime` and `prov:endedAtTime` for an interval.
A time statement may come anywhere before its graph's triples, or after them as long as it
comes before the next graph's triples start (that is when an element is complete). Any
other default-graph triple is an error: nothing in the file is dropped silently.

Elements are released in non-decreasing order of their end time. The watermark is the
latest time seen minus the allowed lateness: an element older than it is rejected, a later
one waits in a small heap until the watermark passes it, so late ones are put back in order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import pyoxigraph as ox

from sepia.io.chunks import Broken, Chunk, GraphLabel, Parsed
from sepia.io.errors import StreamError
from sepia.rdf.time import TimeKind, TimeValue, format_time, parse_time_literal
from sepia.rdf.vocabulary import PROV, XSD

TIME_PREDICATES = {
    PROV + "generatedAtTime": "generated",
    PROV + "startedAtTime": "started",
    PROV + "endedAtTime": "ended",
}

XSD_INTEGER = ox.NamedNode(XSD + "integer")

# (error, the rejected text for the dead-letter file, whether to report it as a new error)
Reject = Callable[[StreamError, bytes, bool], None]


class Assembled(NamedTuple):
    """A complete, accepted element: graph, [start, end], and its quads as parsed."""

    graph: GraphLabel
    start: int
    end: int
    quads: list[ox.Quad]


class _Rejected(Exception):
    """An element that cannot be accepted, and why."""


class TimeStatement(NamedTuple):
    """A time statement as read: which time it gives, the quad, and where it was."""

    slot: str
    quad: ox.Quad
    chunk: Chunk
    quad_index: int


def resolve_times(statements: list[TimeStatement]) -> tuple[int, int, TimeKind]:
    """(start, end, kind) given by an element's time statements, or _Rejected saying why."""
    if len(statements) == 1 and statements[0].slot == "generated":  # the common case
        value = _time_value(statements[0].quad.object)
        return value.value, value.value, value.kind
    times: dict[str, TimeValue] = {}
    for slot, quad, _, _ in statements:
        value = _time_value(quad.object)
        known = times.setdefault(slot, value)
        if known != value:
            shown = [format_time(v.value, v.kind) for v in (known, value)]
            raise _Rejected(f"two different times for one graph: {quad.predicate} "
                            f"{shown[0]} and {shown[1]}")
    return _point_or_interval(times.get("generated"), times.get("started"), times.get("ended"))


def _point_or_interval(
    point: TimeValue | None, started: TimeValue | None, ended: TimeValue | None
) -> tuple[int, int, TimeKind]:
    if point is not None:
        if started or ended:
            raise _Rejected("has both prov:generatedAtTime and a started/ended interval")
        return point.value, point.value, point.kind
    if started is None or ended is None:
        if started or ended:
            missing = "prov:endedAtTime" if started else "prov:startedAtTime"
            raise _Rejected(f"interval time without {missing}")
        raise _Rejected(
            "no time: no prov:generatedAtTime (or prov:startedAtTime and prov:endedAtTime) "
            "for this graph before its triples or right after them"
        )
    if started.kind is not ended.kind:
        raise _Rejected("interval mixes an integer time and an xsd:dateTime")
    if started.value > ended.value:
        raise _Rejected("interval starts after it ends")
    return started.value, ended.value, started.kind


def _time_value(term: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple) -> TimeValue:
    """`parse_time_literal` (a bad time is _Rejected), with a shortcut for xsd:integer."""
    if isinstance(term, ox.Literal) and term.datatype == XSD_INTEGER:
        text = term.value
        if text.isdigit():
            return TimeValue(int(text), TimeKind.ABSTRACT)
    try:
        return parse_time_literal(term)
    except ValueError as error:
        raise _Rejected(str(error)) from None


@dataclass(slots=True)
class _Open:
    """The element being read: its graph, quads so far, where it starts, its times."""

    graph: GraphLabel
    quads: list[ox.Quad]
    chunk: Chunk
    index: int
    times: list[TimeStatement]


def graph_name(graph: GraphLabel) -> str:
    """An element's name as Sepia reports it: the IRI, or `_:id` for a blank node."""
    return graph.value if isinstance(graph, ox.NamedNode) else str(graph)


def nquads_text(quads: list[ox.Quad]) -> bytes:
    return "".join(f"{quad} .\n" for quad in quads).encode()


class Assembler:
    """Feeds on parsed pieces and fills `ready` with elements in time order."""

    def __init__(self, file: str, allowed_lateness: int, reject: Reject) -> None:
        if allowed_lateness < 0:
            raise ValueError("allowed lateness must be >= 0")
        self.file = file
        self.lateness = allowed_lateness
        self.kind: TimeKind | None = None
        self.ready: list[Assembled] = []
        self._reject = reject
        self._open: _Open | None = None
        self._pending: dict[GraphLabel, list[TimeStatement]] = {}
        self._poisoned: dict[GraphLabel, int] = {}
        self._latest: int | None = None
        self._late: list[tuple[int, int, int, Assembled]] = []
        self._count = 0

    def feed(self, piece: Parsed | Broken) -> None:
        if isinstance(piece, Broken):
            self._broken(piece)
            return
        chunk, offset = piece.chunk, piece.offset
        current = self._open
        graph = current.graph if current else None
        quads = current.quads if current else []
        for index, quad in enumerate(piece.quads, start=offset):
            name = quad.graph_name
            if name == graph:
                quads.append(quad)
            elif isinstance(name, ox.DefaultGraph):
                self._default_quad(quad, chunk, index)
            else:
                self._close()
                current = self._start(name, chunk, index)
                graph, quads = name, current.quads
                quads.append(quad)

    def finish(self) -> None:
        """End of file: close the last element, report orphan times, release everything."""
        self._close()
        for graph, times in self._pending.items():
            _, _, chunk, index = times[0]
            reason = "time statement for a graph that has no triples after it in this file"
            self._reject_times(chunk.line_of(index), graph, times, reason, report=True)
        self._pending.clear()
        while self._late:
            self.ready.append(heapq.heappop(self._late)[3])

    def _start(self, graph: GraphLabel, chunk: Chunk, index: int) -> _Open:
        times = self._pending.pop(graph, None) if self._pending else None
        self._open = _Open(graph, [], chunk, index, times or [])
        return self._open

    def _default_quad(self, quad: ox.Quad, chunk: Chunk, index: int) -> None:
        slot = TIME_PREDICATES.get(quad.predicate.value)
        if slot is None:
            reason = (
                f"default-graph triple that is not a time statement: {quad} "
                "(only prov:generatedAtTime, prov:startedAtTime, prov:endedAtTime go there)"
            )
            error = StreamError(self.file, chunk.line_of(index), None, reason)
            self._reject(error, nquads_text([quad]), True)
            return
        subject = quad.subject
        assert not isinstance(subject, ox.Triple)  # a triple term is never a quad's subject
        statement = TimeStatement(slot, quad, chunk, index)
        if self._open is not None and subject == self._open.graph:
            self._open.times.append(statement)
        elif self._poisoned and subject in self._poisoned:
            follow = StreamError(self.file, chunk.line_of(index), graph_name(subject),
                                 self._poison_reason(subject))
            self._reject(follow, nquads_text([quad]), False)
        else:
            self._pending.setdefault(subject, []).append(statement)

    def _close(self) -> None:
        element = self._open
        if element is None:
            return
        self._open = None
        if self._poisoned and element.graph in self._poisoned:
            reason = self._poison_reason(element.graph)
            self._reject_element(element, reason, report=False)
            return
        try:
            start, end, kind = resolve_times(element.times)
            self._check_kind(kind)
        except _Rejected as rejected:
            self._reject_element(element, str(rejected), report=True)
            return
        latest = self._latest
        if latest is not None and end < latest - self.lateness:
            self._reject_element(element, self._late_reason(end, latest), report=True)
            return
        if latest is None or end > latest:
            self._latest = latest = end
        done = Assembled(element.graph, start, end, element.quads)
        if not self._late and end <= latest - self.lateness:
            self.ready.append(done)
            return
        self._count += 1
        heapq.heappush(self._late, (end, start, self._count, done))
        watermark = latest - self.lateness
        while self._late and self._late[0][0] <= watermark:
            self.ready.append(heapq.heappop(self._late)[3])

    def _check_kind(self, kind: TimeKind) -> None:
        if self.kind is None:
            self.kind = kind
        elif kind is not self.kind:
            raise _Rejected(
                f"time is an {_KIND_NAMES[kind]} but earlier elements of this stream have "
                f"{_KIND_NAMES[self.kind]} times (one stream cannot mix them)"
            )

    def _late_reason(self, end: int, latest: int) -> str:
        kind = self.kind or TimeKind.ABSTRACT
        shown, seen = format_time(end, kind), format_time(latest, kind)
        if self.lateness == 0:
            return f"out of order: time {shown} comes after time {seen}"
        return (
            f"too late: time {shown} is more than the allowed lateness ({self.lateness}) "
            f"before time {seen}"
        )

    def _broken(self, piece: Broken) -> None:
        label = piece.label
        error = StreamError(self.file, piece.line, label and graph_name(label), piece.message)
        self._reject(error, piece.text, True)
        if label is None:
            return
        self._poisoned[label] = piece.line
        times = self._pending.pop(label, None)
        if times is not None:
            self._reject_times(piece.line, label, times, self._poison_reason(label), report=False)

    def _poison_reason(self, graph: GraphLabel) -> str:
        return f"rejected with its syntax error at line {self._poisoned[graph]}"

    def _reject_element(self, element: _Open, reason: str, *, report: bool) -> None:
        line = element.chunk.line_of(element.index)
        times = [statement.quad for statement in element.times]
        error = StreamError(self.file, line, graph_name(element.graph), reason)
        self._reject(error, nquads_text(element.quads + times), report)

    def _reject_times(
        self, line: int, graph: GraphLabel, times: list[TimeStatement], reason: str, *,
        report: bool,
    ) -> None:
        error = StreamError(self.file, line, graph_name(graph), reason)
        self._reject(error, nquads_text([statement.quad for statement in times]), report)


_KIND_NAMES = {TimeKind.ABSTRACT: "integer", TimeKind.DATETIME: "xsd:dateTime"}
