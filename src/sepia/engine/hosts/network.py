"""Query networks (language.md section 7): queries joined by the streams they produce.

A CONSTRUCT query registered as a stream (``REGISTER RSTREAM <s2> AS CONSTRUCT ...``, also
C-SPARQL's ``REGISTER STREAM``) makes ``<s2>`` a stream: each of its result graphs becomes
one element stamped with the result's time, or with the interval [from, to] of the event
match it came from, named as the reference names it (``sepia.semantics.network``). The
queries that read ``<s2>`` (declare it, or declare no stream at all: EP-SPARQL reads every
stream) are *consumers*, stepped after their producers.

The reference evaluates the whole finite input at once, so a consumer evaluated at t sees
every derived element stamped t or earlier. Here a producer may make results for an
instant later (a window query fires the instants between arrivals when its next element
comes; a sequence with a negation or a Kleene tail confirms a match late), so a consumer
is only stepped through the time every producer it reads has *settled*: no result stamped
at or before it can come any more. Its input (the run's elements and the derived ones)
waits in an inbox meanwhile, and the run's results are handed out in time order up to the
least settled consumer. A producer whose own input goes quiet can thus hold its consumers
back until the input ends (exact, never early).

Rules reading their own output make EP-SPARQL's Q-closure (seed 003 section 4): the
reference evaluates the network to a fixpoint, so the matches of an instant feed back into
that same instant. The engine runs a cycle of EP-SPARQL RSTREAM rules whose patterns only
grow (SEQ, EQUALS, the joins, UNION, FILTER over triple occurrences) and that read no other
query's output: at each arrival, the triples their matches derive (stamped with their
intervals, all ending then) go back into every rule as occurrences, until no new triple
comes (``_closure``). Other cycles are refused: the engine evaluates an instant once.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

from sepia.algebra import query as qa
from sepia.algebra.query import Unsupported
from sepia.engine.hosts.engine_path import Engine
from sepia.engine.query.continuous import ContinuousQuery
from sepia.engine.query.events import EventQuery
from sepia.engine.query.partition import PartitionedQuery, held_results, held_rows
from sepia.rdf.results import MAX_ROUNDS, Result, derived_element
from sepia.rdf.stream import StreamElement
from sepia.rdf.time import TimeKind

Queued = tuple[int, int, int, int, StreamElement]
"""An inbox entry: time, producer rank (0: the run's input), start, arrival, element."""


def reads(query: qa.Query, stream: str) -> bool:
    """Whether a query reads ``stream``: it declares it, or declares none (EP-SPARQL)."""
    declared = query.dataset.streams
    return not declared or any(d.iri.value == stream for d in declared)


@dataclass(slots=True, eq=False)
class Node:
    """One query of the network and what it has been given."""

    engine: Engine
    rank: int
    """Its place among the queries as registered (orders derived elements of one time)."""
    output: str | None
    upstream: list[Node] = field(default_factory=list)
    inbox: list[Queued] = field(default_factory=list)
    """A consumer's elements not yet stepped through (a heap)."""
    through: int | None = None
    """The time through which the node has been given its input."""
    settled: int | None = None
    """No result of the node stamped at or before this can come any more."""
    made: int = 0
    """Results made so far (a derived element is named by its result's number)."""
    group: tuple[Node, ...] = ()
    """The rules it reads and that read it, itself included (a Q-closure), if any."""

    def bound(self, t: int) -> int:
        """How far it may step at t: to t, or to the least time its producers have settled
        through (they step before it, so each has settled by then)."""
        floors = [t]
        for producer in self.upstream:
            assert producer.settled is not None, "producers step before their consumers"
            floors.append(producer.settled)
        return min(floors)


class Network:
    """The session's queries, producers before their consumers."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.kind: TimeKind | None = None
        """The run's kind of time (derived elements carry it), from its first element."""
        self.held: list[tuple[int, int, Result]] = []
        self.queued = 0
        self.arrivals = 0

    @property
    def linked(self) -> bool:
        """Whether some query reads a stream one of the queries produces."""
        return any(node.upstream or node.group for node in self.nodes)

    def add(self, engine: Engine) -> None:
        """A query joins the network (refused if it closes a cycle the engine cannot run)."""
        nodes = [*self.nodes, Node(engine, len(self.nodes), engine.query.output_stream)]
        reading = {
            id(n): [p for p in nodes if p.output is not None and reads(n.engine.query, p.output)]
            for n in nodes
        }
        groups = {id(n): _cycle(n, nodes, reading) for n in nodes}
        for n in nodes:
            group = groups[id(n)]
            if group and not all(_closes(m.engine) for m in group):
                raise Unsupported(
                    f"a query network with a cycle through {n.engine.name}: only EP-SPARQL "
                    "RSTREAM rules over SEQ, EQUALS, joins, UNION and FILTER run as a Q-closure"
                )
            if any(p not in group for m in group for p in reading[id(m)]):
                raise Unsupported(f"a Q-closure through {n.engine.name} reading other queries")
        upstream = {id(n): [p for p in reading[id(n)] if p not in groups[id(n)]] for n in nodes}
        for n in nodes:
            n.upstream, n.group = upstream[id(n)], groups[id(n)]
        self.nodes = _topological(nodes, upstream)

    # --- time ---------------------------------------------------------------------------
    def advance(self, t: int, batch: Sequence[StreamElement]) -> list[Result]:
        """The run's elements stamped t: each query steps as far as its producers allow."""
        self.kind = self.kind or (batch[0].kind if batch else None)
        if not self.linked:
            return [r for node in self.nodes for r in node.engine.advance(t, batch)]
        results = []
        closed: dict[int, list[Result]] = {}
        for node in self.nodes:
            if node.upstream:
                for element in batch:
                    self._queue(node, element, 0)
                made = self._step(node, node.bound(t))
            elif node.group:
                if id(node) not in closed:
                    closed.update(self._closure(node.group, t, batch))
                made = closed[id(node)] + self._settle(node, t)
            else:
                made = node.engine.advance(t, batch) + self._settle(node, t)
            results += self._derive(node, made)
        return self._release(results)

    def watermark(self, t: int) -> list[Result]:
        """A live clock at t: every query fires its time-driven instants through t (its
        producers' first)."""
        if not self.linked:
            return [r for node in self.nodes for r in node.engine.watermark(t)]
        results = []
        for node in self.nodes:
            bound = node.bound(t)
            made = self._step(node, bound) if node.upstream else []
            made += node.engine.watermark(bound)
            node.through = max(bound, node.through if node.through is not None else bound)
            node.settled = _settled(node.engine, bound)
            results += self._derive(node, made)
        return self._release(results)

    def flush(self, until: int | None = None) -> list[Result]:
        """The input ended: producers flush first, their last derived elements go in, then
        their consumers flush."""
        results = []
        for node in self.nodes:
            made = self._step(node, None) if node.upstream else []
            results += self._derive(node, made + node.engine.flush(until))
        if not self.linked:
            return results
        ready = [r for *_, r in sorted(self.held)] + results
        self.held = []
        return sorted(ready, key=lambda r: r.t)  # stable: held ones first within a time

    # --- one node ------------------------------------------------------------------------
    def _queue(self, node: Node, element: StreamElement, rank: int) -> None:
        if node.through is not None and element.time <= node.through:
            raise Unsupported(
                f"a derived element of <{element.stream}> stamped {element.time}, after "
                f"{node.engine.name} was evaluated through {node.through} (a match interval "
                "ending before the instant that reports it)"
            )
        self.arrivals += 1
        entry = (element.time, rank, element.start if rank else 0, self.arrivals, element)
        heapq.heappush(node.inbox, entry)

    def _step(self, node: Node, bound: int | None) -> list[Result]:
        """A consumer's elements through ``bound`` (None: all), one time at a time."""
        results: list[Result] = []
        inbox = node.inbox
        while inbox and (bound is None or inbox[0][0] <= bound):
            t = inbox[0][0]
            batch = []
            while inbox and inbox[0][0] == t:
                batch.append(heapq.heappop(inbox)[-1])
            results += node.engine.advance(t, batch)
            node.through = t
        if bound is not None:
            if node.through is None or bound > node.through:
                node.through = bound
            results += self._settle(node, bound)
        return results

    def _closure(
        self, group: tuple[Node, ...], t: int, batch: Sequence[StreamElement]
    ) -> dict[int, list[Result]]:
        """A step of a Q-closure's rules: the triples their matches derive go back in, at
        the same instant, until no new one comes; each rule's last round of results is the
        instant's (its pattern only grows)."""
        results = {id(m): m.engine.advance(t, batch) for m in group}
        fed: set[tuple[str, int, int, object]] = set()
        for _ in range(MAX_ROUNDS):
            derived = []
            for m in group:
                assert m.output is not None  # a rule of the closure reads its own output
                for r in results[id(m)]:
                    start, end = r.interval or (r.t, r.t)
                    key = (m.output, start, end)
                    new = tuple(x for x in r.triples or () if (*key, x) not in fed)
                    if new:
                        fed.update((*key, x) for x in new)
                        graph = f"urn:sepia:closure:{r.query}:{t}:{len(fed)}"
                        kind = self.kind or TimeKind.ABSTRACT
                        derived.append(StreamElement(m.output, graph, start, end, new, kind))
            if not derived:
                return results
            results = {id(m): m.engine.advance(t, derived) for m in group}
        raise RuntimeError(
            f"the query network still derives new events after {MAX_ROUNDS} rounds"
        )

    def _settle(self, node: Node, through: int) -> list[Result]:
        """After a node was given its input through ``through``: fire the instants up to
        there that every later input keeps (those up to its flush end), and note what is
        settled."""
        engine = node.engine
        node.through = through
        end = engine.flush_end()
        results = engine.watermark(min(through, end)) if end is not None else []
        node.settled = _settled(engine, through)
        return results

    def _derive(self, node: Node, results: list[Result]) -> list[Result]:
        """A producer's results as elements of its stream, into its consumers' inboxes."""
        first = node.made
        node.made += len(results)
        if node.output is None or not results:
            return results
        consumers = [n for n in self.nodes if node in n.upstream]
        kind = self.kind or TimeKind.ABSTRACT
        for n, r in enumerate(results, start=first):
            element = derived_element(node.output, r, n, kind)
            if element is None:
                continue
            for consumer in consumers:
                self._queue(consumer, element, 1 + node.rank)
        return results

    def _release(self, results: list[Result]) -> list[Result]:
        """Results in time order, up to the least settled consumer (the others wait)."""
        for r in sorted(results, key=lambda r: r.t):
            heapq.heappush(self.held, (r.t, self.queued, r))
            self.queued += 1
        settled = [n.settled for n in self.nodes if n.upstream]
        floors = [s for s in settled if s is not None]
        if len(floors) < len(settled):
            return []
        floor = min(floors, default=None)
        ready = []
        while self.held and (floor is None or self.held[0][0] <= floor):
            ready.append(heapq.heappop(self.held)[2])
        return ready

    # --- state ---------------------------------------------------------------------------
    def rows(self) -> list[tuple]:
        """The network's own state: the run's kind of time, per query its counters, and
        the held results (query name, then ``held_rows``)."""
        state: list[tuple] = [("kind", None if self.kind is None else self.kind.value)]
        for node in self.nodes:
            state.append(("node", node.engine.name, node.through, node.settled, node.made))
        for *_, r in sorted(self.held):
            state += [("held", r.query, *row) for row in held_rows([r])]
        return state

    def waiting(self) -> list[tuple[str, int, int, StreamElement]]:
        """The consumers' inboxes: query name, producer rank, arrival number, element."""
        return [
            (node.engine.name, rank, arrival, element)
            for node in self.nodes
            for _, rank, _, arrival, element in sorted(node.inbox)
        ]

    def restore(
        self, rows: Sequence[tuple], waiting: Sequence[tuple[str, int, int, StreamElement]]
    ) -> None:
        """Resume from ``rows()`` and ``waiting()``."""
        by_name = {node.engine.name: node for node in self.nodes}
        self.held, self.queued = [], 0
        for tag, *row in rows:
            if tag == "kind":
                self.kind = None if row[0] is None else TimeKind(row[0])
            elif tag == "node":
                name, through, settled, made = row
                node = by_name[name]
                node.through, node.settled, node.made, node.inbox = through, settled, made, []
            else:
                (result,) = held_results(row[0], [row[1:]])
                self.held.append((result.t, self.queued, result))
                self.queued += 1
        for name, rank, arrival, element in waiting:
            entry = (element.time, rank, element.start if rank else 0, arrival, element)
            heapq.heappush(by_name[name].inbox, entry)
            self.arrivals = max(self.arrivals, arrival)


def _closes(engine: Engine) -> bool:
    """Whether a query reading its own output can run as a Q-closure: an EP-SPARQL RSTREAM
    pattern whose matches only grow (so the last round holds every earlier one's)."""
    if not isinstance(engine, ContinuousQuery) or not isinstance(engine.kind, EventQuery):
        return False
    return engine.kind.only_grows() and engine.operator is qa.RStream


def _settled(engine: Engine, through: int) -> int:
    """The time up to which no more results of ``engine`` can come, given its input through
    ``through``: a sequence's run waiting on a negation (a ``, !B`` guard after its last
    element, or a tail ``!B``) completes a match reported at or after its last event; a
    window query fires the scheduled instants after its clock."""
    if not isinstance(engine, PartitionedQuery):
        return engine.settled(through)
    bound = min((p.settled(through) for _, p in engine.parts.values()), default=through)
    return min(bound, engine.held[0][0] - 1) if engine.held else bound


def _cycle(node: Node, nodes: list[Node], reading: dict[int, list[Node]]) -> tuple[Node, ...]:
    """The queries on a cycle of reads through ``node`` (itself included), in registration
    order; none when it is on no cycle."""

    def reached(start: Node) -> set[int]:
        seen, todo = {id(start)}, [start]
        while todo:
            for p in reading[id(todo.pop())]:
                if id(p) not in seen:
                    seen.add(id(p))
                    todo.append(p)
        return seen

    below = reached(node)
    group = tuple(n for n in nodes if id(n) in below and id(node) in reached(n))
    return group if len(group) > 1 or node in reading[id(node)] else ()


def _topological(nodes: list[Node], upstream: dict[int, list[Node]]) -> list[Node]:
    """Producers before consumers, else in registration order (``upstream`` has no cycle:
    a Q-closure's rules do not count as each other's upstream)."""
    ordered: list[Node] = []
    placed: set[int] = set()
    while len(ordered) < len(nodes):
        ready = next(
            n for n in nodes
            if id(n) not in placed and all(id(p) in placed for p in upstream[id(n)])
        )  # fmt: skip
        ordered.append(ready)
        placed.add(id(ready))
    return ordered
