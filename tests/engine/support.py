"""What the engine tests share: the background store and result comparison."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import pairwise

import pyoxigraph as ox

from sepia.algebra.query import Query
from sepia.engine.codec import Codec
from sepia.engine.columnar import ColumnBatch
from sepia.engine.plan.planner import plan
from sepia.engine.r2r import operators as po
from sepia.engine.rows import Slots
from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement, StreamSet
from sepia.runtime.local import Session, run
from sepia.semantics import evaluate

from .generators import BACKGROUND, EX, S1, SCHEMA
from .shares import judge


@contextmanager
def engine_path(chosen: str) -> Iterator[None]:
    """Sessions made inside take this engine path (``SEPIA_ENGINE_PATH``: rows, columnar)."""
    before = os.environ.get("SEPIA_ENGINE_PATH")
    os.environ["SEPIA_ENGINE_PATH"] = chosen
    try:
        yield
    finally:
        if before is None:
            del os.environ["SEPIA_ENGINE_PATH"]
        else:
            os.environ["SEPIA_ENGINE_PATH"] = before


def background(schema: bool = False) -> ox.Store:
    """The tests' background data, with an RDFS schema over their vocabulary if asked."""
    store = ox.Store()
    store.load(BACKGROUND.encode(), format=ox.RdfFormat.TRIG)
    if schema:
        store.load(SCHEMA.encode(), format=ox.RdfFormat.TURTLE)
    return store


def canonical(results: list[Result]) -> Counter:
    """Rows grouped into matches: a Kleene match's rows stay together, its name dropped
    (the reference numbers matches once the whole input is known, the engine as they
    complete); every other row is its own group."""
    groups: dict[object, list] = {}
    for r in results:
        key = (r.t, r.interval, r.match) if r.match is not None else object()
        groups.setdefault(key, []).append((r.t, r.op, r.binding, r.triples, r.boolean, r.interval))
    return Counter(tuple(sorted(rows, key=repr)) for rows in groups.values())


def assert_agrees(
    text: str,
    data: dict,
    store: ox.Store | None = None,
    *,
    rdfs: bool = False,
    renamed: bool = False,
    ordered: bool = True,
) -> None:
    """The engine's answer is the reference's over ``store`` (default: the tests'
    background): as a multiset of results, or with ``renamed`` as matches up to their names
    (``canonical``); with ``ordered``, in time order too."""
    store = background() if store is None else store
    query = parse_query(text)
    expected = evaluate(query, data, store, name="q", rdfs=rdfs)
    judge(text, data, expected)
    got = list(run([("q", query)], data, store, rdfs=rdfs))
    same = canonical if renamed else Counter
    assert same(got) == same(expected), text
    if query.order:  # an ordered SELECT: each evaluation's rows in the reference's order
        assert got == expected, text
    if ordered:
        assert [r.t for r in got] == sorted(r.t for r in got)


def assert_resumes(text: str | Query, data: dict, cut: int, *, renamed: bool = False) -> None:
    """A session restored from a JSON snapshot after ``cut`` elements gives the results of
    one that ran through (the reference's); ``text`` may be a compiled query; ``renamed``
    as in ``assert_agrees``."""
    query = parse_query(text) if isinstance(text, str) else text
    expected = evaluate(query, data, background(), name="q")
    judge(str(text), data, expected)
    merged = list(StreamSet(data).merged())  # as `run` reads them: each stream in its order
    first = Session(background())
    first.register(query, "q")
    got = [r for e in merged[:cut] for r in first.push(e)]
    state = json.loads(json.dumps(first.snapshot()))
    second = Session(background())
    second.register(query, "q")
    second.restore(state)
    got += [r for e in merged[cut:] for r in second.push(e)] + second.flush()
    same = canonical if renamed else Counter
    assert same(got) == same(expected), text


def filter_plan(condition: str) -> tuple[Codec, po.Select, Slots]:
    """A codec, the planned FILTER and the slots of ``?a :p ?b . ?b :p ?c . ?x :q ?d``
    filtered by ``condition`` (?d is never bound with ?a ?b ?c): what the vector FILTER
    tests compare with the evaluator on."""
    text = (f"PREFIX : <{EX}> SELECT * WHERE {{ ?a :p ?b . ?b :p ?c . ?x :q ?d "
            f"FILTER({condition}) }}")
    codec = Codec()
    physical = plan(parse_query(text), codec, (), {})
    select = physical.root
    while not isinstance(select, po.Select):
        select = select.inner  # type: ignore[attr-defined]
    return codec, select, physical.slots


def xsd(text: str, kind: str) -> ox.Literal:
    """A literal of the XML Schema datatype ``kind`` ("integer", "decimal", ...)."""
    return ox.Literal(text, datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#" + kind))


def element(n: int, t: int, *triples: tuple[str, str, object], stream: str = S1
            ) -> StreamElement:
    """An element of ``stream`` (graph ``_:g<n>``) at t holding ``triples``: each name an
    IRI of the tests' namespace, each int an xsd:integer."""

    def term(x: object) -> ox.NamedNode | ox.Literal:
        return ox.Literal(str(x), datatype=ox.NamedNode(
            "http://www.w3.org/2001/XMLSchema#integer")) if isinstance(x, int) else (
            ox.NamedNode(EX + str(x)))

    graph = tuple(ox.Triple(term(s), term(p), term(o)) for s, p, o in triples)
    return StreamElement(stream, f"_:g{n}", t, t, graph)


def integer(n: int) -> str:
    """An xsd:integer's N-Triples text, as a result's binding prints it."""
    return f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>'


def session_of(
    text: str, path: str = "columnar-always", store: ox.Store | None = None, rdfs: bool = False
) -> Session:
    """A session over ``store`` (default: the tests' background) running ``text`` as "q",
    made on the engine path ``path`` (``engine_path``: by default the columnar core,
    where it covers it)."""
    with engine_path(path):
        session = Session(background() if store is None else store, rdfs=rdfs)
        session.register(parse_query(text), "q")
    return session


def row_engines(
    text: str, merged: list[StreamElement], store: ox.Store | None = None, rdfs: bool = False
) -> list[Result]:
    """The row engine's results for ``merged`` pushed one element at a time, then
    flushed: the lines the columnar core gives too, in the same order."""
    rows = session_of(text, "rows", store, rdfs)
    return [r for e in merged for r in rows.push(e)] + rows.flush()


def cut_anywhere(
    text: str, data: dict, cuts: list[int], same: Callable[[list[Result]], Counter] = Counter,
    store: ox.Store | None = None, rdfs: bool = False,
) -> tuple[list[Result], list[Result]]:
    """The columnar core's results for ``data`` pushed as batches cut at ``cuts``
    (``pushed_in_cuts``), asserted to be the reference's over ``store`` (``same``: as a
    bag, or as matches up to their names with ``canonical``), and the row engine's for
    the same elements (``row_engines``), for the caller to compare."""
    store = background() if store is None else store
    expected = evaluate(parse_query(text), data, store, name="q", rdfs=rdfs)
    judge(text, data, expected)
    merged = list(StreamSet(data).merged())
    got = pushed_in_cuts(session_of(text, store=store, rdfs=rdfs), merged, cuts)
    assert same(got) == same(expected), text
    return got, row_engines(text, merged, store, rdfs)


def assert_columnar_agrees(
    text: str, data: dict, engine: type, *, renamed: bool = False
) -> None:
    """The query runs on the columnar core (an ``engine``) and its push path gives the
    reference's answer, in time order (``assert_agrees``)."""
    assert isinstance(session_of(text).queries[0], engine), text
    with engine_path("columnar-always"):
        assert_agrees(text, data, renamed=renamed)


def pushed_in_cuts(session: Session, merged: list[StreamElement], cuts: list[int]) -> list[Result]:
    """The session's results for ``merged`` pushed as batches of columns cut at the element
    offsets ``cuts`` (inside a run, between two events of a partition), then flushed."""
    batch = ColumnBatch.from_elements(merged, session.dictionary)
    bounds = sorted({0, len(merged), *(c for c in cuts if c < len(merged))})
    got = [r for a, b in pairwise(bounds) for r in session.push_columns(batch.slice(a, b))]
    return got + session.flush()


def recorded_numbers(monkeypatch) -> tuple[list, list]:
    """The ids ``NumericIds`` is taught (each call's) and learns itself (one by one),
    recorded as the engine runs (``monkeypatch``: pytest's)."""
    from sepia.engine.columnar.groups import NumericIds

    taught: list = []
    learnt: list = []
    teach, learn = NumericIds.taught, NumericIds._learn
    monkeypatch.setattr(NumericIds, "taught", lambda self, *a: (taught.append(a[0]),
                                                                teach(self, *a)))
    monkeypatch.setattr(NumericIds, "_learn", lambda self, new: (learnt.extend(new.tolist()),
                                                                learn(self, new)))
    return taught, learnt
