"""The flat public API runs the docstring's embedding example on a worked example."""

from __future__ import annotations

from pathlib import Path

import sepia

E3 = Path(__file__).parents[1] / "examples" / "e3-rsepql-landmark"


def test_embedding_a_session_gives_the_reference_answer() -> None:
    session = sepia.Session()
    session.register((E3 / "query.rq").read_text(), "query")
    results = []
    for element in sepia.read_stream(E3 / "stream.trig", "http://example.org/s"):
        results += session.push(element)
    results += session.flush()
    query = sepia.parse_query((E3 / "query.rq").read_text())
    streams = {
        "http://example.org/s": list(sepia.read_stream(E3 / "stream.trig", "http://example.org/s"))
    }
    reference = sepia.evaluate_reference(query, streams)
    key = lambda r: (r.t, r.interval, r.binding)  # noqa: E731
    assert sorted(results, key=key) == sorted(reference, key=key)
    assert len(results) == 4
