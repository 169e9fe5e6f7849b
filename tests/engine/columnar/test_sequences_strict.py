"""A strict step's pairs from the candidates' instants (``sequences._at_instants``): the
pairs a join on the partition, the time and the shared slots gives, in its order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from sepia.engine.columnar.partitions import TIME, Routing
from sepia.engine.columnar.sequences import LAST, _at_instants, _Kept
from sepia.engine.columnar.tables import Table, join_pairs, unique_rows

KEY, SHARED, OWN = 0, 1, 2
"""The partition's slot, a slot runs and candidates share, a candidate's own."""
ELEMENT_TIMES = np.array([3, 3, 5, 8, 8, 9, 12, 15], dtype=np.int64)
"""Each element's time: two pairs of elements share one."""

rows = st.tuples(st.integers(0, 2), st.integers(0, 7), st.integers(1, 3))


@settings(max_examples=200, deadline=None)
@given(st.lists(rows, max_size=14), st.lists(rows, max_size=10), st.booleans())
def test_instant_pairs_are_the_joins(candidates, runs, partitioned):
    """Candidates (partition, element, shared value) routed on their elements, runs
    (partition, last element, shared value): each run's pairs at its partition's next
    instant are ``join_pairs``' of the run (with that instant's time) and the candidates,
    pair for pair and in order; a second pairing with the same ``_Kept`` gives them again.
    Without PARTITION BY every row is in partition 0 and the key is just another slot."""
    slot = KEY if partitioned else None
    key = np.array([c[0] if partitioned else 0 for c in candidates], dtype=np.int64)
    element = np.array([c[1] for c in candidates], dtype=np.int64)
    routed_key, routed = unique_rows([key, element]) if len(key) else (key, element)
    routing = Routing(routed, routed_key, *unique_rows([routed_key, ELEMENT_TIMES[routed]]))
    found = Table({KEY: np.array([c[0] for c in candidates], dtype=np.int64),
                   TIME: ELEMENT_TIMES[element],
                   SHARED: np.array([c[2] for c in candidates], dtype=np.int64),
                   OWN: np.arange(len(candidates), dtype=np.int64)}, len(candidates))
    waiting = Table({KEY: np.array([r[0] for r in runs], dtype=np.int64),
                     LAST: ELEMENT_TIMES[np.array([r[1] for r in runs], dtype=np.int64)],
                     SHARED: np.array([r[2] for r in runs], dtype=np.int64)}, len(runs))
    keys = waiting.columns[KEY] if partitioned else np.zeros(len(runs), dtype=np.int64)
    at, has = routing.next_index(keys, waiting.columns[LAST])
    going = waiting.take(np.flatnonzero(has))
    going = Table({**going.columns, TIME: routing.instant_time[at[has]]}, going.size)
    if not partitioned:  # the key is a slot like another: joined on too
        going.columns.pop(KEY)
    kept = _Kept()
    expected = [p.tolist() for p in join_pairs(going, found)]
    assert [p.tolist() for p in _at_instants(going, at[has], found, routing, kept, slot)] == (
        expected)
    assert [p.tolist() for p in _at_instants(going, at[has], found, routing, kept, slot)] == (
        expected)
