"""The naive baselines against the worked examples of spec/semantics.md (E1, E2, E4, E5),
whose expected answers were derived by hand from the papers."""

from __future__ import annotations

import time
from pathlib import Path

from sepia.bench.systems.naive_intervals import drop_then_rise, repeated_delays
from sepia.bench.systems.naive_spaseq import Event, SeqExpression, Step
from sepia.bench.systems.naive_windows import SlidingWindow, run_windows
from sepia.io.streams import read_stream
from sepia.rdf.stream import StreamSet
from sepia.workloads.manifest import BackgroundFile, Manifest, StreamFile, Variant

EXAMPLES = Path(__file__).parents[2] / "examples"
EX = "http://example.org/"
LATER = 60.0


def _manifest(streams: dict[str, str], variant: Variant) -> Manifest:
    files = tuple(StreamFile(name, EX + name, path, 0, 0, 0) for name, path in streams.items())
    return Manifest("example", 1, 1, files, tuple(BackgroundFile(p, 0) for p in
                                                  variant.background), (variant,))


def test_present_window_is_rsp_ql_example_7() -> None:
    w1 = SlidingWindow("w1", "nearby", width=5, slide=2, t0=1)
    assert [w1.present_opening(t) for t in (8, 9, 16)] == [3, 5, 11]
    assert list(w1.closes_holding(7)) == [8, 10]  # (3,8] and (5,10]; not (1,6], not (7,12]


def test_e1_shops_and_coupons_window_close_rstream() -> None:
    sparql = f"""PREFIX : <{EX}> SELECT ?shopper ?shop ?shop_owner ?coupon WHERE {{
      GRAPH <urn:sepia:window:w1> {{ ?shopper :isNearby ?shop }}
      GRAPH <urn:sepia:window:w2> {{ ?shop_owner :offers ?coupon }}
      ?shop_owner :owns ?shop }}"""
    params = {"windows": {"w1": {"stream": "nearby", "width": 5, "slide": 2, "t0": 1},
                          "w2": {"stream": "coupons", "width": 2, "slide": 2, "t0": 0}},
              "report": "window-close", "report_window": "w2", "operator": "rstream",
              "sparql": sparql}
    variant = Variant("e1", None, ("background.ttl",), params=params)
    manifest = _manifest({"nearby": "stream-nearby.trig", "coupons": "stream-coupons.trig"},
                         variant)
    outcome = run_windows(EXAMPLES / "e1-shops-coupons", manifest, variant,
                          time.perf_counter() + LATER)
    assert (outcome.results, outcome.elements, outcome.complete) == (3, 7, True)
    assert len(outcome.latencies_ms) == 3


def test_e2_subway_delays_one_result() -> None:
    params = {"namespace": EX, "width_ms": 10, "centre": EX + "c"}
    variant = Variant("e2", None, ("background.ttl",), params=params)
    manifest = _manifest({"publicTransport": "stream.trig"}, variant)
    outcome = repeated_delays(EXAMPLES / "e2-subway-delays", manifest, variant,
                              time.perf_counter() + LATER)
    assert (outcome.results, outcome.elements) == (1, 4)


def test_e5_epsparql_drop_then_rise_one_result() -> None:
    params = {"predicate": EX + "price", "drop": 0.7, "rise": 1.05, "duration_ms": 30}
    variant = Variant("e5", None, params=params)
    manifest = _manifest({"prices": "stream.trig"}, variant)
    outcome = drop_then_rise(EXAMPLES / "e5-epsparql-drop-rise", manifest, variant,
                             time.perf_counter() + LATER)
    assert (outcome.results, outcome.elements) == (1, 6)


def _e4_events() -> list[Event]:
    folder = EXAMPLES / "e4-spaseq-selection"
    sources = {"S1": read_stream(folder / "stream-power.trig", "S1"),
               "S2": read_stream(folder / "stream-weather.trig", "S2")}
    events = []
    for element in StreamSet(sources).merged():
        fields = {t.predicate.value.removeprefix(EX): t.object.value for t in element.triples}
        events.append(Event(element.time, element.stream, fields))
    return events


def _power(event: Event, bindings: dict) -> list[dict]:
    return [{"l": event.fields["loc"]}] if event.stream == "S1" else []


def _weather(event: Event, bindings: dict) -> list[dict]:
    return [bindings] if event.stream == "S2" and event.fields["loc"] == bindings["l"] else []


def test_e4_spaseq_skip_till_next_and_strict_contiguity() -> None:
    events = _e4_events()
    forever = time.perf_counter() + LATER
    next_ = SeqExpression((Step((_power,)), Step((_weather,), ";")), within=50)
    strict = SeqExpression((Step((_power,)), Step((_weather,), ",")), within=50)
    assert next_.count_matches(events, forever) == (2, 5)  # H1-W1 and H2-W1
    assert strict.count_matches(events, forever) == (1, 5)  # H2-W1 only
    tight = SeqExpression((Step((_power,)), Step((_weather,), ";")), within=5)
    assert tight.count_matches(events, forever) == (1, 5)  # H1-W1 spans 10 > 5


def test_kleene_counts_every_iteration_count_as_a_match() -> None:
    """SEQ(A, B+) on a, b, b, x, b: strict iterations give a-b and a-b-b, then x ends it."""
    kinds = "abbxb"
    events = [Event(t, "S", {"kind": k}) for t, k in enumerate(kinds)]

    def is_(kind: str):
        return lambda event, bindings: [bindings] if event.fields["kind"] == kind else []

    pattern = SeqExpression((Step((is_("a"),)), Step((is_("b"),), ",", kleene=True)), within=10)
    assert pattern.count_matches(events, time.perf_counter() + LATER) == (2, 5)


def test_a_later_step_is_never_at_the_same_instant() -> None:
    """SPAseq Q5's SEQ(A; (B & C)) over three sensors reporting at the same minutes (W7),
    threshold 3. Minute 1: A=5, B=6, C=7 (B & C at A's own instant: not a match, a sequence
    moves forward in time); minute 2: A=2 (not above 3), B=4 (< 5: no); minute 3: B=8, C=5
    (both >= 5: the match; skip-till-next takes this first later instant). Up to minute 2:
    no match (the old matcher counted minute 1's); up to minute 3: one."""
    values = {1: (5, 6, 7), 2: (2, 4, 9), 3: (1, 8, 5)}
    events = [Event(minute, stream, {"v": value})
              for minute, triple in values.items()
              for stream, value in zip(("S1", "S2", "S3"), triple, strict=True)]

    def sensor(stream: str, test):
        return lambda e, b: [{**b, stream: e.fields["v"]}] if e.stream == stream and test(
            e.fields["v"], b) else []

    a = sensor("S1", lambda v, b: v > 3)
    b_gpm = sensor("S2", lambda v, b: v >= b["S1"])
    c_gpm = sensor("S3", lambda v, b: v >= b["S1"])
    pattern = SeqExpression((Step((a,)), Step((b_gpm, c_gpm), ";")), within=10)
    forever = time.perf_counter() + LATER
    assert pattern.count_matches(events[:6], forever) == (0, 6)
    assert pattern.count_matches(events, forever) == (1, 9)


def test_kleene_iterations_are_at_strictly_later_instants() -> None:
    """SEQ(A, B+) on a@0, b@1, b@1, b@2: the iterations after a take one b of instant 1
    (either: two runs), then the b of instant 2 is strictly next (two more); two b of one
    instant are never consecutive iterations."""
    events = [Event(t, "S", {"kind": k}) for t, k in ((0, "a"), (1, "b"), (1, "b"), (2, "b"))]

    def is_(kind: str):
        return lambda event, bindings: [bindings] if event.fields["kind"] == kind else []

    pattern = SeqExpression((Step((is_("a"),)), Step((is_("b"),), ",", kleene=True)), within=10)
    assert pattern.count_matches(events, time.perf_counter() + LATER) == (4, 4)
