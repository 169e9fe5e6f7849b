"""A MATCH's rows joined with a background BGP: its plan cannot say which slots its rows
bind (an event pattern may leave some unbound), so ``_multi_join`` reads them off the rows;
the BGP is then probed with the few matches rather than read whole and crossed with them."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from sepia.engine.graph import TripleIndex
from sepia.engine.r2r import operators as po
from sepia.engine.r2r.scan import Constant, Slot

TYPE, SUBWAY, TRAM = 1, 2, 3
WIDTH = 3


@dataclass
class Reads:
    """A context: one background graph (vehicle ``10 + i`` a subway for even i, else a
    tram) and the matches of MATCH 0."""

    rows: list[tuple]
    background: TripleIndex = field(default_factory=lambda: TripleIndex([
        (10 + i, TYPE, SUBWAY if i % 2 == 0 else TRAM) for i in range(40)
    ]))
    width: int = WIDTH

    def graph(self, ref: po.GraphRef) -> TripleIndex:
        return self.background

    def matches(self, number: int) -> list[tuple]:
        return self.rows


def _plan() -> po.MultiJoin:
    """MATCH joined with ``?0 rdf:type :subway``, as the planner makes it."""
    subway = po.Scan(
        (po.BackgroundGraph(None),),  # type: ignore[arg-type]
        ((Slot(0), Constant(TYPE), Constant(SUBWAY)),),
    )
    inputs = (po.Matches(0), subway)
    return po.MultiJoin(inputs, tuple(po.certain(p) for p in inputs))


def test_a_match_binds_what_its_rows_all_bind():
    assert po._bound_in([(1, None, 5), (2, None, None)]) == {0}
    assert po._bound_in([(1, 4, 5)]) == {0, 1, 2}
    assert po._bound_in([]) == frozenset()


def test_the_background_is_probed_with_the_matches(monkeypatch: pytest.MonkeyPatch):
    seeded: list[object] = []
    original = po.scan

    def recording(*args, **kwargs):
        seeded.append(args[3] if len(args) > 3 else None)
        return original(*args, **kwargs)

    monkeypatch.setattr(po, "scan", recording)
    rows = [(12, None, 7), (13, None, 7), (14, 9, 8)]  # 12 and 14 are subways, 13 a tram
    got = po.run(_plan(), Reads(rows))
    assert sorted(got, key=repr) == [(12, None, 7), (14, 9, 8)]
    assert seeded == [rows]  # looked up from the three matches, not read whole


def test_matches_binding_nothing_are_crossed_with_the_background():
    got = po.run(_plan(), Reads([(None, None, 7)]))
    assert sorted(got) == [(10 + i, None, 7) for i in range(0, 40, 2)]
