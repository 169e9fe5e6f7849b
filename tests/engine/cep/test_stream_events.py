"""An EVENT over a stream rather than a window (a SPAseq GPM outside a sequence: a lone
GPM, GPMs under ``|`` and ``&``, the same-time conjunction): it sees every element of the
stream so far, as the reference's does; the engine reads it through a landmark window
from before every time. Generated queries, alone and beside an RSEP-QL MATCH, agree with
the reference."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..generators import (
    EVENTS,
    EX,
    GPMS,
    declared,
    event_head,
    event_windows,
    partition_clause,
    streams,
)
from ..support import assert_agrees, assert_resumes

CHECKS = [HealthCheck.too_slow, HealthCheck.data_too_large]


@st.composite
def stream_event_queries(draw) -> str:
    """``SEQ(A)``, ``SEQ(A | B)``, ``SEQ(A & B)`` ... over the generators' GPMs, alone or
    joined with an RSEP-QL MATCH over a window, under each form and streaming operator."""
    names = draw(st.lists(st.sampled_from(sorted(GPMS)), min_size=1, max_size=3, unique=True))
    expression = names[0]
    for name in names[1:]:
        expression = f"({expression} {draw(st.sampled_from(['|', '&']))} {name})"
    spaseq = f"{{ SEQ({expression}) {' '.join(GPMS[n] for n in names)} }}"
    event = draw(st.sampled_from(EVENTS))
    body = draw(st.sampled_from([spaseq, spaseq, f"{spaseq} MATCH {{ {event} }}",
                                 f"{spaseq} ?x :r ?q ."]))  # fmt: skip
    head = event_head(draw)
    windows = declared(draw, ["w1", "w2"], event_windows)
    return (
        f"PREFIX : <{EX}>\n{head}\nFROM STREAM S1 :s1\nFROM STREAM S2 :s2\n"
        f"{windows}\nWHERE {{ {body} }}"
    )


@settings(max_examples=200, deadline=None, suppress_health_check=CHECKS)
@given(stream_event_queries(), streams())
def test_events_over_streams_agree_with_reference(text, data):
    assert_agrees(text, data)


@settings(max_examples=40, deadline=None, suppress_health_check=CHECKS)
@given(stream_event_queries(), streams(), st.data())
def test_events_over_streams_resume_from_a_snapshot(text, data, split):
    """The stream's implicit window is state like any window: a resumed session agrees."""
    assert_resumes(text, data, split.draw(st.integers(0, sum(len(es) for es in data.values()))))


@st.composite
def partitioned_stream_event_queries(draw) -> str:
    """``SEQ(A)`` or ``SEQ(A | B)`` under PARTITION BY one of the GPMs' variables."""
    names = draw(st.lists(st.sampled_from(sorted(GPMS)), min_size=1, max_size=2, unique=True))
    partition = partition_clause(draw, [GPMS[n] for n in names])
    return (
        f"PREFIX : <{EX}>\nSELECT *\nFROM STREAM S1 :s1\nFROM STREAM S2 :s2\n{partition}\n"
        f"WHERE {{ SEQ({' | '.join(names)}) {' '.join(GPMS[n] for n in names)} }}"
    )


@settings(max_examples=60, deadline=None, suppress_health_check=CHECKS)
@given(partitioned_stream_event_queries(), streams())
def test_partitioned_events_over_streams_agree_with_reference(text, data):
    assert_agrees(text, data, renamed=True)
