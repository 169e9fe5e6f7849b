"""Basic graph patterns matched over indexed, encoded graphs (the R2R operators' leaves).

A triple pattern's positions are slots (variables) or constants (term ids). A BGP is
evaluated by index nested-loop joins, the most selective connected pattern next; over a
graph of a few triples (an event's, ``graph.SMALL``), which is not indexed, the BGP is
compiled once into steps that keep the triples holding each pattern's constants before
extending the rows. Delta evaluation matches single patterns against the triples that
entered a window (``PatternMatcher``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import chain

from sepia.engine.graph import EncodedTriple, TripleIndex
from sepia.engine.rows import Row


@dataclass(frozen=True, slots=True)
class Slot:
    """A pattern position holding a variable (or a pattern blank node): its slot."""

    index: int


@dataclass(frozen=True, slots=True)
class Constant:
    """A pattern position holding a term: its id."""

    id: int


Position = Slot | Constant
EncodedPattern = tuple[Position, Position, Position]


def scan(
    graphs: list[TripleIndex],
    patterns: tuple[EncodedPattern, ...],
    width: int,
    seeds: list[Row] | None = None,
    seeded: frozenset[int] = frozenset(),
    *,
    compiled: CompiledScans | None = None,
) -> list[Row]:
    """Evaluate a BGP over the union of ``graphs`` by index nested-loop joins, from
    ``seeds`` (rows binding exactly the slots ``seeded`` among the BGP's) if given.
    ``compiled``: the BGP's own memo of small-graph scans, kept by its plan node (None:
    compiled for this call only)."""
    rows: list[Row] = [(None,) * width] if seeds is None else seeds
    if len(graphs) == 1 and graphs[0].small:
        steps = None if compiled is None else compiled.get(seeded)
        if steps is None:
            steps = _steps(patterns, seeded)
            if compiled is not None:
                compiled[seeded] = steps
        return _scan_small(graphs[0].triples(), steps, rows)
    return extend_all(rows, [(p, graphs) for p in patterns], set(seeded))


class PatternMatcher:
    """One triple pattern compiled once to match a few triples at a time (the triples that
    entered a window, in delta evaluation): no index, no join order to choose."""

    __slots__ = ("_empty", "_steps")

    def __init__(self, pattern: EncodedPattern, width: int) -> None:
        self._steps = _steps((pattern,), frozenset())
        self._empty: list[Row] = [(None,) * width]

    def rows(self, triples: list[EncodedTriple]) -> list[Row]:
        """A row binding the pattern's slots for each triple it matches."""
        return _scan_small(triples, self._steps, self._empty)


@dataclass(frozen=True, slots=True)
class _Step:
    """One triple pattern of a BGP over a small graph, in join order: the (position, id)
    its triples must hold, the (position, slot) already bound that they must repeat, the
    (position, earlier position) of a variable new here but repeated (``?x :p ?x``), and
    the (slot, position) it binds."""

    constants: tuple[tuple[int, int], ...]
    bound: tuple[tuple[int, int], ...]
    repeats: tuple[tuple[int, int], ...]
    binds: tuple[tuple[int, int], ...]


CompiledScans = dict[frozenset[int], tuple[_Step, ...]]
"""A BGP's small-graph scans compiled by the slots seeded: each plan node holding a BGP
keeps its own, so the memo lives and dies with its query."""


def _steps(patterns: tuple[EncodedPattern, ...], seeded: frozenset[int]) -> tuple[_Step, ...]:
    """A BGP compiled for ``_scan_small``: the join order ``_most_selective`` takes on small
    graphs (the first pattern connected to what is bound), each step's checks worked out
    once."""
    remaining, bound, steps = list(patterns), set(seeded), []
    while remaining:
        pattern = remaining.pop(
            next(
                (i for i, p in enumerate(remaining)
                 if any(isinstance(x, Slot) and x.index in bound for x in p)),
                0,
            )
        )
        constants, old, repeats = [], [], []
        binds: dict[int, int] = {}
        for position, term in enumerate(pattern):
            if isinstance(term, Constant):
                constants.append((position, term.id))
            elif term.index in bound:
                old.append((position, term.index))
            elif term.index in binds:
                repeats.append((position, binds[term.index]))
            else:
                binds[term.index] = position
        steps.append(_Step(tuple(constants), tuple(old), tuple(repeats), tuple(binds.items())))
        bound |= binds.keys()
    return tuple(steps)


def _scan_small(
    triples: list[EncodedTriple], steps: tuple[_Step, ...], rows: list[Row]
) -> list[Row]:
    """A BGP over a graph of a few triples (an event's): each step first keeps the triples
    holding its constants (independent of the rows), then extends every row by those that
    agree with it; rows come out in ``extend_all``'s order."""
    for step in steps:
        if not rows:
            break
        candidates = _holding(triples, step.constants)
        if step.repeats:
            candidates = [t for t in candidates if all(t[i] == t[j] for i, j in step.repeats)]
        out: list[Row] = []
        bound, binds = step.bound, step.binds
        for row in rows:
            for triple in candidates:
                if bound and any(
                    row[slot] is not None and triple[i] != row[slot] for i, slot in bound
                ):
                    continue  # (an unbound seed slot is a wildcard, as in ``extend``)
                values = list(row)
                for slot, position in binds:
                    values[slot] = triple[position]
                out.append(tuple(values))
        rows = out
    return rows


def _holding(
    triples: list[EncodedTriple], constants: tuple[tuple[int, int], ...]
) -> list[EncodedTriple]:
    """The triples holding each (position, id): one constant (a pattern's predicate, most
    often) compared directly, without a generator per triple."""
    if len(constants) == 1:
        ((i, v),) = constants
        return [t for t in triples if t[i] == v]
    return [t for t in triples if all(t[i] == v for i, v in constants)]


Atom = tuple[EncodedPattern, list[TripleIndex]]
"""A triple pattern and the graphs (their union) it is matched in."""


def extend_all(rows: list[Row], atoms: list[Atom], bound: set[int]) -> list[Row]:
    """Rows (each binding ``bound``) joined with every atom by index nested loops, the most
    selective connected atom next. Atoms may read different graphs (delta evaluation)."""
    remaining = list(atoms)
    bound = set(bound)
    while remaining and rows:
        pattern, graphs = remaining.pop(_most_selective(remaining, bound))
        rows = extend(rows, pattern, graphs, bound)
        bound |= {p.index for p in pattern if isinstance(p, Slot)}
    return rows


def _most_selective(atoms: list[Atom], bound: set[int]) -> int:
    """Next atom (its index): connected to what is bound (no cross product) and smallest by
    index size."""
    if len(atoms) == 1:
        return 0
    if all(g.small for _, graphs in atoms for g in graphs):  # an event's graph: any order
        return next(
            (i for i, (pattern, _) in enumerate(atoms)
             if any(isinstance(p, Slot) and p.index in bound for p in pattern)),
            0,
        )

    def cost(i: int) -> tuple[bool, int]:
        pattern, graphs = atoms[i]
        connected = not bound or any(isinstance(p, Slot) and p.index in bound for p in pattern)
        consts = [p.id if isinstance(p, Constant) else None for p in pattern]
        return (not connected, sum(g.estimate(*consts) for g in graphs))

    return min(range(len(atoms)), key=cost)


def extend(
    rows: list[Row], pattern: EncodedPattern, graphs: list[TripleIndex], bound: set[int]
) -> list[Row]:
    """Each row extended by each triple matching the pattern under it. Every row of a BGP
    binds the same slots (``bound``), so which positions bind what, and which must repeat
    an earlier position (``?x :p ?x``), is worked out once for the step."""
    free: dict[int, int] = {}
    repeats: list[tuple[int, int]] = []
    for position, term in enumerate(pattern):
        if isinstance(term, Slot) and term.index not in bound:
            if term.index in free:
                repeats.append((free[term.index], position))
            else:
                free[term.index] = position
    assignments = list(free.items())
    graphs = [g for g in graphs if g] or graphs[:1]  # C-SPARQL: often an empty background
    out: list[Row] = []
    for row in rows:
        query = [t.id if isinstance(t, Constant) else row[t.index] for t in pattern]
        for triple in _matches(graphs, query[0], query[1], query[2]):
            if repeats and any(triple[a] != triple[b] for a, b in repeats):
                continue
            values = list(row)
            for slot, position in assignments:
                values[slot] = triple[position]
            out.append(tuple(values))
    return out


def _matches(
    graphs: list[TripleIndex], s: int | None, p: int | None, o: int | None
) -> Iterator[EncodedTriple]:
    if len(graphs) == 1:
        return graphs[0].match(s, p, o)
    return iter(set(chain.from_iterable(g.match(s, p, o) for g in graphs)))
