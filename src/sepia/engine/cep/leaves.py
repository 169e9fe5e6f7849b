"""Each basic event pattern's matches over the elements its window shows, kept from one
instant to the next (a cache of the windows' contents, not state).

An unrestricted SEQ asks its left operand, for every right partner ending at t, for the
events that end before the partner starts and are compatible with it (RSEP-QL Eq. 7):
matching every element the window shows again for each partner costs the window's size per
partner. Here each element is matched once, when first read, its mappings kept in window
order and hashed on the slots every mapping of the pattern binds, so a partner reads only
the mappings that agree with it there. A window only drops elements from its front and
appends at its back, so what is kept is a prefix of the window's deque, each entry holding
its element's tuple (compared by identity: a new window, restored, starts afresh).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from sepia.engine.cep.epsparql import Matcher
from sepia.engine.cep.intervals import EventMapping
from sepia.engine.r2r import operators as po
from sepia.engine.rows import Row, compatible
from sepia.engine.s2r.windows import WindowState

T = TypeVar("T")
E = TypeVar("E")


class LeafMatches:
    """The mappings (row, start, end) of one pattern over each element of one window."""

    __slots__ = ("elements", "index", "keys", "needs", "plan", "version", "window")

    def __init__(self, plan: po.PhysicalPlan, keys: tuple[int, ...]) -> None:
        self.plan = plan
        self.keys = keys
        """Slots every mapping binds: the index's key (none: no index)."""
        self.needs = needed_predicates(plan)
        """Predicates an element must hold for the pattern to match it (``needed_predicates``)."""
        self.window: WindowState | None = None
        self.version = -1
        self.elements: deque[tuple[tuple, list[EventMapping]]] = deque()
        """(the window's element, its mappings), in window order."""
        self.index: dict[tuple, deque[EventMapping]] = {}
        """The mappings by their values at ``keys``, each deque in window order."""

    def follow(self, window: WindowState, starts: deque | None, match: Matcher) -> None:
        """Catch up with the window: drop what it evicted, match what it admitted."""
        if window is self.window and window.version == self.version:
            return
        self.window, self.version = window, window.version
        shown, kept = window.elements, self.elements
        while kept and (not shown or kept[0][0] is not shown[0]):
            self._drop()
        for i in range(len(kept), len(shown)):
            element = shown[i]
            time, triples = element
            start = time if starts is None else starts[i]
            mappings: list[EventMapping] = [
                (row, start, time) for row in match(self.plan, time, triples)
            ] if _holds(triples, self.needs) else []
            kept.append((element, mappings))
            if self.keys:
                for m in mappings:
                    self.index.setdefault(self._key(m[0]), deque()).append(m)

    def _drop(self) -> None:
        """The oldest element leaves: its mappings are the first of their index entries."""
        _, mappings = self.elements.popleft()
        if not self.keys:
            return
        for m in mappings:
            key = self._key(m[0])
            entry = self.index[key]
            entry.popleft()
            if not entry:
                del self.index[key]

    def _key(self, row: Row) -> tuple:
        return tuple([row[k] for k in self.keys])

    def select(self, before: int, mu: Row | None, exact: int | None) -> set[EventMapping]:
        """The mappings ending by ``before`` (at ``exact``, when given) compatible with
        ``mu``, as ``event_trees._shown`` reads the window."""
        if exact is not None:
            return self._ending(exact, before, mu)
        candidates = self._candidates(mu)
        if mu is None:
            return {m for m in candidates if m[2] <= before}
        return {m for m in candidates if m[2] <= before and compatible(m[0], mu)}

    def ends_at(self, t: int) -> bool:
        """Whether a mapping ends at ``t`` (read from the newest back, as ``_ending``)."""
        for element, mappings in reversed(self.elements):
            time = element[0]
            if time < t:
                return False
            if time == t and mappings:
                return True
        return False

    def _ending(self, exact: int, before: int, mu: Row | None) -> set[EventMapping]:
        """Read from the newest back: an arrival's own elements are at the window's end."""
        found: set[EventMapping] = set()
        if exact > before:
            return found
        for element, mappings in reversed(self.elements):
            time = element[0]
            if time < exact:
                break
            if time == exact:
                found.update(m for m in mappings if mu is None or compatible(m[0], mu))
        return found

    def _candidates(self, mu: Row | None) -> Iterable[EventMapping]:
        """The mappings that can be compatible with ``mu``: its index entry when it binds
        every key slot, else all."""
        keys = self.keys
        if mu is not None and keys and all(mu[k] is not None for k in keys):
            return self.index.get(self._key(mu), ())
        return (m for _, mappings in self.elements for m in mappings)


def needed_predicates(plan: po.PhysicalPlan) -> tuple[int, ...]:
    """The predicates (ids) an event's graph must hold for a basic event pattern that is a
    BGP over it alone to match: each triple pattern's constant one. An element without one
    of them is not matched (W9's ``{ ?v :delayAt ?s }`` skips the arrivals and the other
    events, most of the stream). Of any other plan, none (an empty tuple)."""
    if not isinstance(plan, po.Scan) or plan.graphs != (po.EventGraph(),):
        return ()
    return tuple(dict.fromkeys(
        p.id for _, p, _ in plan.patterns if isinstance(p, po.Constant)
    ))


def _holds(triples: tuple, needs: tuple[int, ...]) -> bool:
    """Whether some triple of ``triples`` has each predicate of ``needs``."""
    for p in needs:
        for triple in triples:
            if triple[1] == p:
                break
        else:
            return False
    return True


class Leaves:
    """The kept matches of every basic event pattern of one query, by leaf; leaves with
    the same pattern over the same window share them (CQELS-CEP's ``SEQ({?v :delayAt ?s},
    {?v :delayAt ?s}, ...)``: each element is matched once, not once per leaf)."""

    def __init__(self, hidden: frozenset[int]) -> None:
        self.hidden = hidden
        """Slots ``event_rows`` unbinds: never index keys."""
        self.kept: dict[int, tuple[object, LeafMatches]] = {}
        self.shared: dict[tuple[object, po.PhysicalPlan], LeafMatches] = {}
        """The matches by (window name, pattern), which the leaves' entries point to."""
        self.end_leaves: dict[int, tuple[Any, Any]] = {}
        """Each tree's leaves that can end its mappings (``ends``), by the tree's id."""

    def ends(self, tree: T, of: Callable[[T], E]) -> E:
        """``of(tree)`` (``event_trees.end_leaves``), worked out once per tree."""
        found = self.end_leaves.get(id(tree))
        if found is None or found[0] is not tree:
            found = self.end_leaves[id(tree)] = (tree, of(tree))
        return found[1]

    def of(
        self, leaf: object, name: object, plan: po.PhysicalPlan, window: WindowState,
        starts: deque | None, match: Matcher,
    ) -> LeafMatches:
        """``leaf``'s matches (``plan`` over ``window``, named ``name``), caught up with
        the window."""
        found = self.kept.get(id(leaf))
        if found is None or found[0] is not leaf:
            matches = self.shared.get((name, plan))
            if matches is None:
                keys = tuple(sorted(po.certain(plan) - self.hidden))
                matches = self.shared[(name, plan)] = LeafMatches(plan, keys)
            found = self.kept[id(leaf)] = (leaf, matches)
        found[1].follow(window, starts, match)
        return found[1]
