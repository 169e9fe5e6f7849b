"""What a timeline shows, read from a run: its streams' elements, each named window at each
evaluation instant, the instants the report policy chose, and every result.

Nothing here evaluates a query. The elements are the run's input; the instants and the
windows follow from the query's report policy and window definitions exactly as the
reference evaluator defines them (``sepia.semantics.report``, ``sepia.semantics.windows``);
the results are whatever engine's results are given, so a picture of a local run shows the
local engine's answers. The member elements of an event match are worked out from the
match's interval and bindings (``sepia.timeline.members``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox

from sepia.algebra import dataset as ds
from sepia.algebra.query import Entailment, Query
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.semantics import windows as wf
from sepia.semantics.evaluator import Evaluation
from sepia.timeline.members import match_members
from sepia.timeline.text import Shortener


@dataclass(frozen=True, slots=True)
class Element:
    """One stream element: ``number`` is its place in the timeline's element list."""

    number: int
    stream: str
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Bracket:
    """A window at one evaluation instant ``t``: the present window (opening, close], of
    which (opening, t] is what the evaluation sees; ``others`` are the other windows of a
    sliding window that also hold t (not shown to the query)."""

    window: str
    t: int
    opening: int
    close: int
    others: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Mark:
    """One result at time ``t``; an event match also has its interval and member elements.
    ``differs`` marks a result that not every compared setting gave."""

    lane: str
    t: int
    op: str
    text: str
    label: str = ""
    interval: tuple[int, int] | None = None
    members: tuple[int, ...] = ()
    differs: bool = False


@dataclass(slots=True)
class ResultLane:
    """The results of one query (or one setting of `sepia compare`) and its instants."""

    name: str
    instants: list[int]
    marks: list[Mark] = field(default_factory=list)
    brackets: dict[str, list[Bracket]] = field(default_factory=dict)


@dataclass(slots=True)
class Timeline:
    """Everything a picture of a run shows, already cut to the time range asked for."""

    streams: dict[str, list[Element]]
    lanes: list[ResultLane]
    span: tuple[int, int]
    title: str = ""
    note: str = ""

    @property
    def elements(self) -> list[Element]:
        return [e for es in self.streams.values() for e in es]


@dataclass(frozen=True, slots=True)
class Run:
    """One query's run as the timeline reads it: the compiled query, the name its results
    carry (the lane's name unless ``lane`` says otherwise) and its results."""

    name: str
    query: Query
    results: Sequence[Result]
    lane: str | None = None
    differs: Callable[[Result], bool] | None = None
    """Which results to mark as not given by every compared setting (`sepia compare`)."""


def timeline(
    runs: Sequence[Run],
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None = None,
    *,
    until: int | None = None,
    span: tuple[int, int] | None = None,
    title: str = "",
    windows: bool = True,
) -> Timeline:
    """The timeline of ``runs`` over ``streams``, cut to ``span`` (whole run when None).
    ``windows=False`` leaves the window brackets out (`sepia compare` draws results only)."""
    shorten = Shortener(runs[0].query.prefixes if runs else ())
    numbered: dict[int, int] = {}
    lanes_of_streams: dict[str, list[Element]] = {}
    for iri, elements in streams.items():
        lane = lanes_of_streams.setdefault(iri, [])
        for e in elements:
            numbered[id(e)] = len(numbered)
            lane.append(Element(numbered[id(e)], iri, e.start, e.end, shorten.triples(e.triples)))
    lanes = [_lane(run, streams, background, until, shorten, numbered, windows) for run in runs]
    whole = _whole_span(lanes_of_streams, lanes)
    chosen = span or whole
    shown = Timeline(
        {iri: [e for e in es if _inside(e, chosen)] for iri, es in lanes_of_streams.items()},
        [_cut(lane, chosen) for lane in lanes],
        chosen,
        title,
    )
    if span is not None:
        shown.note = f"time range {span[0]}..{span[1]} of {whole[0]}..{whole[1]}"
    return shown


def _lane(
    run: Run,
    streams: Mapping[str, Sequence[StreamElement]],
    background: ox.Store | None,
    until: int | None,
    shorten: Shortener,
    numbered: dict[int, int],
    windows: bool,
) -> ResultLane:
    rdfs = run.query.entailment is Entailment.RDFS
    evaluation = Evaluation(run.query, streams, background, run.name, rdfs)
    instants = evaluation.instants(until)
    lane = ResultLane(run.lane or run.name, instants)
    if windows:
        for decl in run.query.dataset.windows:
            elements = evaluation.data.stream(decl.stream.value)
            label = shorten.term(decl.name)
            lane.brackets[label] = [
                b for t in instants if (b := bracket(decl, label, elements, t)) is not None
            ]
    members = match_members(run.query, streams, evaluation.data.schema)
    for result in run.results:
        if result.query != run.name:
            continue
        linked = tuple(numbered[id(e)] for e in members(result)) if result.interval else ()
        differs = run.differs is not None and run.differs(result)
        text, label = shorten.result(result), shorten.values(result)
        lane.marks.append(
            Mark(lane.name, result.t, result.op, text, label, result.interval, linked, differs)
        )
    return lane


def bracket(
    decl: ds.WindowDecl, label: str, elements: Sequence[StreamElement], t: int
) -> Bracket | None:
    """The window ``decl`` shows at t as (opening, close] (None: no window holds t)."""
    match decl.spec:
        case ds.Sliding(width, slide, t0):
            holding = wf.windows_for(t, width, slide, t0)
            if not holding:
                return None
            (opening, close), others = holding[0], tuple(holding[1:])
            return Bracket(label, t, opening, close, others)
        case ds.Landmark(t0):
            return Bracket(label, t, t0 - 1, t)
        case ds.Now():
            return Bracket(label, t, t - 1, t)
        case ds.CountBased(count):
            shown = wf.count_based(count)(elements, t)
            return Bracket(label, t, (shown[0].time - 1) if shown else t, t)
        case ds.Interval(start, end):
            return Bracket(label, t, start - 1, end)
    return None


def _whole_span(streams: dict[str, list[Element]], lanes: list[ResultLane]) -> tuple[int, int]:
    times = [t for es in streams.values() for e in es for t in (e.start, e.end)]
    for lane in lanes:
        times += lane.instants + [m.t for m in lane.marks]
        times += [t for bs in lane.brackets.values() for b in bs for t in (b.opening, b.close)]
    return (min(times), max(times)) if times else (0, 1)


def _inside(e: Element, span: tuple[int, int]) -> bool:
    return e.start <= span[1] and e.end >= span[0]


def _cut(lane: ResultLane, span: tuple[int, int]) -> ResultLane:
    return ResultLane(
        lane.name,
        [t for t in lane.instants if span[0] <= t <= span[1]],
        [m for m in lane.marks if span[0] <= m.t <= span[1]],
        {w: [b for b in bs if span[0] <= b.t <= span[1]] for w, bs in lane.brackets.items()},
    )
