"""Lowering of the streaming clauses: FROM ... windows and streams, WITHIN, REPORT,
PARTITION BY and EVENT POLICY (language.md sections 1-5)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyoxigraph as ox
from lark import Token, v_args
from lark.tree import Meta

from sepia.algebra.dataset import (
    CountBased,
    Interval,
    Landmark,
    Now,
    Sliding,
    StreamDecl,
    WindowDecl,
    WindowSpec,
)
from sepia.algebra.event import SelectionPolicy
from sepia.algebra.query import Within
from sepia.algebra.report import ContentChange, NonEmpty, Periodic, Report, Strategy, WindowClose
from sepia.lang.context import Context, Reference
from sepia.lang.durations import Duration

GENERATED_WINDOW = "urn:sepia:window:"


@dataclass
class StreamClauses:
    """Everything between the query form and WHERE."""

    within: Within | None = None
    default_graphs: list[ox.NamedNode] = field(default_factory=list)
    named_graphs: list[ox.NamedNode] = field(default_factory=list)
    streams: list[StreamDecl] = field(default_factory=list)
    windows: list[WindowDecl] = field(default_factory=list)
    report: Report | None = None
    partition_by: ox.Variable | None = None


class StreamRules:
    """Transformer methods for the clauses of language.md sections 1-5."""

    ctx: Context

    def stream_clauses(self, children: list) -> StreamClauses:
        clauses = StreamClauses()
        for child in children:
            child(clauses)
        return clauses

    @v_args(inline=True)
    def within(self, keyword: Token, width: Duration, tumbling: Token | None = None) -> object:
        self.ctx.features.add("within")
        if width.value <= 0:
            self.ctx.fail(keyword, "WITHIN 0 admits no match", expected="a positive duration")

        def apply(clauses: StreamClauses) -> None:
            clauses.within = Within(width.value, tumbling is not None)

        return apply

    @v_args(inline=True)
    def from_default(self, _from: Token, iri: ox.NamedNode) -> object:
        return lambda clauses: clauses.default_graphs.append(iri)

    @v_args(inline=True)
    def from_named(self, _from: Token, _named: Token, iri: ox.NamedNode) -> object:
        return lambda clauses: clauses.named_graphs.append(iri)

    @v_args(meta=True, inline=True)
    def from_named_window(
        self,
        meta: Meta,
        _from: Token,
        _named: Token,
        _window: Token,
        name: ox.NamedNode,
        _on: Token,
        *source: object,
    ) -> object:
        """`ON STREAM <s>` (RSP4J, RSP-JS) is `ON <s>` (the RSP-QL paper)."""
        stream, spec = source[-2:]
        assert isinstance(stream, ox.NamedNode) and isinstance(spec, WindowSpec)
        self.ctx.features.add("named-window")
        if name.value in self.ctx.declared_windows:
            self.ctx.fail(meta, f"window {name} is declared twice")
        self.ctx.declared_windows.add(name.value)

        def apply(clauses: StreamClauses) -> None:
            _add_stream(clauses, StreamDecl(stream))
            clauses.windows.append(WindowDecl(name, stream, spec))

        return apply

    @v_args(inline=True)
    def from_stream(
        self, _from: Token, _stream: Token, stream: ox.NamedNode, spec: WindowSpec | None = None
    ) -> object:
        window = self.generated_window(stream, spec, into_default=True) if spec else None
        if spec is not None:
            self.ctx.features.add("csparql-stream")

        def apply(clauses: StreamClauses) -> None:
            _add_stream(clauses, StreamDecl(stream))
            if window is not None:
                clauses.windows.append(window)

        return apply

    @v_args(inline=True)
    def from_named_stream(
        self, _from: Token, _stream: Token, name: Token, stream: ox.NamedNode
    ) -> object:
        if str(name) in self.ctx.stream_names:
            self.ctx.fail(name, f"stream name {name} is declared twice")
        self.ctx.stream_names[str(name)] = stream
        return lambda clauses: clauses.streams.append(StreamDecl(stream, str(name)))

    def generated_window(
        self, stream: ox.NamedNode, spec: WindowSpec, into_default: bool = False
    ) -> WindowDecl:
        """A window with a generated name: C-SPARQL FROM STREAM and CQELS inline STREAM."""
        name = ox.NamedNode(f"{GENERATED_WINDOW}{len(self.ctx.declared_windows) + 1}")
        self.ctx.declared_windows.add(name.value)
        window = WindowDecl(name, stream, spec, into_default)
        self.ctx.generated_windows.append(window)
        return window

    # ---- window specs -------------------------------------------------------------------
    @v_args(inline=True)
    def window_spec(self, spec: WindowSpec) -> WindowSpec:
        return spec

    @v_args(meta=True)
    def range_window(self, meta: Meta, children: list) -> WindowSpec:
        durations = [c for c in children if isinstance(c, Duration)]
        start = next((c for c in children if isinstance(c, tuple)), (0,))[0]
        width = durations[0].value
        slide = durations[1].value if len(durations) > 1 else 1
        self._positive(meta, width, slide)
        return Sliding(width, slide, start)

    @v_args(meta=True)
    def tumbling_window(self, meta: Meta, children: list) -> WindowSpec:
        width = next(c for c in children if isinstance(c, Duration)).value
        start = next((c for c in children if isinstance(c, tuple)), (0,))[0]
        self._positive(meta, width, width)
        return Sliding(width, width, start)

    def _positive(self, meta: Meta, width: int, slide: int) -> None:
        """A window of width 0 shows nothing; a step of 0 never moves (and divides by 0)."""
        if width <= 0 or slide <= 0:
            which = "width (RANGE)" if width <= 0 else "step (STEP, SLIDE)"
            self.ctx.fail(meta, f"a window {which} of 0", expected="a positive duration")

    def now_window(self, _children: list) -> WindowSpec:
        return Now()

    def landmark_window(self, children: list) -> WindowSpec:
        start = next((c.value for c in children if isinstance(c, Duration)), 0)
        return Landmark(start)

    def count_window(self, children: list) -> WindowSpec:
        return CountBased(int(children[-1]))

    def interval_window(self, children: list) -> WindowSpec:
        start, end = (c.value for c in children if isinstance(c, Duration))
        return Interval(start, end)

    @v_args(inline=True)
    def window_start(self, _keyword: Token, point: Duration) -> tuple[int]:
        return (point.value,)

    # ---- REPORT, PARTITION BY, EVENT POLICY -------------------------------------------
    def report_clause(self, children: list) -> object:
        strategies = tuple(c for c in children if not isinstance(c, Token))
        self.ctx.features.add("report")

        def apply(clauses: StreamClauses) -> None:
            clauses.report = Report(strategies)

        return apply

    def content_change(self, children: list) -> Strategy:
        return ContentChange(_window_of(children))

    def window_close(self, children: list) -> Strategy:
        return WindowClose(_window_of(children))

    def non_empty(self, children: list) -> Strategy:
        return NonEmpty(_window_of(children))

    def periodic(self, children: list) -> Strategy:
        period = next(c for c in children if isinstance(c, Duration))
        return Periodic(period.value, _window_of(children))

    @v_args(meta=True, inline=True)
    def report_of(self, meta: Meta, _of: Token, window: ox.NamedNode) -> tuple[ox.NamedNode]:
        self.ctx.window_references.append(
            Reference(window.value, self.ctx.iri_span(window, self.ctx.span(meta)))
        )
        return (window,)

    @v_args(meta=True, inline=True)
    def partition_clause(
        self, meta: Meta, _partition: Token, _by: Token, variable: ox.Variable
    ) -> object:
        self.ctx.partition_span = self.ctx.span(meta)

        def apply(clauses: StreamClauses) -> None:
            clauses.partition_by = variable

        return apply

    @v_args(inline=True)
    def event_policy(self, _event: Token, _policy: Token, choice: Token) -> object:
        self.ctx.event_policy = SelectionPolicy(str(choice).lower())
        return lambda clauses: None


def _window_of(children: list) -> ox.NamedNode | None:
    return next((c[0] for c in children if isinstance(c, tuple)), None)


def _add_stream(clauses: StreamClauses, stream: StreamDecl) -> None:
    if all(s.iri != stream.iri for s in clauses.streams):
        clauses.streams.append(stream)
