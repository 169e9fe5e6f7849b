"""The engine's background: graphs encoded in bulk from their N-Triples text give the ids
that encoding each of the store's terms one by one gives, whatever the block cuts."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyoxigraph as ox
import pytest

from sepia.algebra.query import Entailment
from sepia.engine import background as module
from sepia.engine.background import Background
from sepia.engine.codec import Codec
from sepia.engine.hosts.prepared import ntriples_ids
from sepia.engine.hosts.session import Session
from sepia.lang import parse_query
from sepia.rdf.results import Result
from sepia.rdf.stream import StreamElement
from sepia.semantics.evaluator import evaluate

E = "http://example.org/"
G = ox.NamedNode(E + "g")
TURTLE = f"""@prefix : <{E}> . @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
:a :p :b ; :name "Anna Smith" ; :label "chat"@fr ; :n "01"^^xsd:integer ; :d "2.50"^^xsd:decimal .
:b :p :c ; :note "two words" ; :n 7 ; :when "2020-01-01T00:00:00Z"^^xsd:dateTime .
:c :p <{E}caf%C3%A9> ; :name "café" .
"""


def _store(text: str, graph: ox.NamedNode | None = None) -> ox.Store:
    store = ox.Store()
    store.load(text.encode(), format=ox.RdfFormat.TURTLE, to_graph=graph)
    return store


def _one_by_one(store: ox.Store, graph: ox.NamedNode | ox.DefaultGraph) -> set[tuple]:
    """The graph's triples encoded term by term into a dictionary of their own."""
    codec = Codec()
    return {
        (codec.encode(q.subject), codec.encode(q.predicate), codec.encode(q.object))
        for q in store.quads_for_pattern(None, None, None, graph)
    }, codec


def _decoded(background: Background, name: ox.NamedNode | None) -> set[tuple]:
    s, p, o = background.triples(name)
    decode = background.dictionary.decode
    return {(decode(a), decode(b), decode(c)) for a, b, c in zip(s.tolist(), p.tolist(),
                                                                 o.tolist(), strict=True)}


@pytest.mark.parametrize("block", [1 << 22, 1, 120])
def test_bulk_encoded_graphs_hold_the_stores_triples(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "TEXT_BLOCK", block)  # one block, a line each, a few lines
    monkeypatch.setattr(module, "SMALL_TEXT", 0)  # a small graph is cut too
    monkeypatch.setattr(Background, "encode_triples", None)  # no term objects on this path
    store = _store(TURTLE, G)
    store.add(ox.Quad(ox.NamedNode(E + "x"), ox.NamedNode(E + "p"), ox.Literal("default")))
    background = Background.encode(store, Codec(), ntriples_ids)
    assert set(background.columns) == {G, None}
    expected, codec = _one_by_one(store, G)
    assert len(background.triples(G)[0]) == len(expected) == 11
    assert _decoded(background, G) == {tuple(codec.decode(i) for i in t) for t in expected}
    # the same ids as encoding each term: a stream's term meets the background's id
    ids = {tuple(background.dictionary.encode(codec.decode(i)) for i in t) for t in expected}
    assert set(zip(*(c.tolist() for c in background.triples(G)), strict=True)) == ids
    assert set(background.graph(G).triples()) == ids  # indexed when first read
    assert _decoded(background, None) == {
        (ox.NamedNode(E + "x"), ox.NamedNode(E + "p"), ox.Literal("default"))}


def test_a_small_graph_is_encoded_from_pyoxigraphs_terms() -> None:
    """Under ``SMALL_TEXT`` the cutter is never asked (nor polars loaded for it)."""

    def refuse(lines: list[str], dictionary: Codec) -> None:
        raise AssertionError("the cutter was asked")

    store = _store(TURTLE, G)
    background = Background.encode(store, Codec(), refuse)
    expected, codec = _one_by_one(store, G)
    assert _decoded(background, G) == {tuple(codec.decode(i) for i in t) for t in expected}
    assert len(background.triples(G)[0]) == 11


SMALL_RUN = """
import sys
import subprocess
import sys

import pyoxigraph as ox
from sepia.engine.hosts.session import Session
from sepia.lang import parse_query
from sepia.rdf.stream import StreamElement
E = "http://example.org/"
store = ox.Store()
store.load(sys.argv[1].encode(), format=ox.RdfFormat.TURTLE)
session = Session(store)
session.register(parse_query(
    "PREFIX : <http://example.org/> SELECT ?name "
    "FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 10] "
    "WHERE { WINDOW :w { ?x :p ?y } ?x :name ?name }"), "q")
triple = ox.Triple(ox.NamedNode(E + "a"), ox.NamedNode(E + "p"), ox.NamedNode(E + "b"))
session.push(StreamElement(E + "s", "_:g", 1, 1, (triple,)))
print(sorted(str(r.binding["name"]) for r in session.flush()))
print("polars" in sys.modules)
"""


def test_a_run_over_a_small_background_never_loads_polars() -> None:
    """A session over a few background triples answers without the columnar reader's
    libraries (0.3 s of CPU at every small run's start)."""
    done = subprocess.run([sys.executable, "-c", SMALL_RUN, TURTLE], capture_output=True,
                          text=True, check=True)
    assert done.stdout.splitlines() == ["['\"Anna Smith\"']", "False"]


@pytest.mark.parametrize("turtle", [
    f"@prefix : <{E}> . :a :p [ :q :b ] . _:n :q :c .",
    f'@prefix : <{E}> . :a :p :b ; :note "line\\nbreak \\"quoted\\"" ; :q "tab\\t" .',
])
def test_blank_nodes_and_escapes_are_encoded_from_pyoxigraphs_terms(turtle: str) -> None:
    store = _store(turtle, G)
    background = Background.encode(store, Codec(), ntriples_ids)
    expected, codec = _one_by_one(store, G)
    assert _decoded(background, G) == {tuple(codec.decode(i) for i in t) for t in expected}
    assert len(background.graph(G)) == 3 == len(expected)


def test_empty_and_missing_graphs() -> None:
    background = Background.encode(_store(f"<{E}a> <{E}p> <{E}b> .", G), Codec(), ntriples_ids)
    assert not background.empty(G)
    assert background.empty(None) and background.empty(ox.NamedNode(E + "other"))
    assert background.names == (G,)
    assert len(background.triples(None)[0]) == 0 and len(background.graph(None)) == 0


NAME, NOTE, P = E + "name", E + "note", E + "p"
IN = E + "in"


def test_unread_predicates_are_not_encoded() -> None:
    store = _store(TURTLE, G)
    background = Background.encode(store, Codec(), ntriples_ids, frozenset({NAME}))
    assert _decoded(background, G) == {
        (ox.NamedNode(E + "a"), ox.NamedNode(NAME), ox.Literal("Anna Smith")),
        (ox.NamedNode(E + "c"), ox.NamedNode(NAME), ox.Literal("café"))}
    lookup = background.dictionary.lookup
    assert lookup('"two words"') is None and lookup(f"<{NOTE}>") is None
    assert lookup(f"<{E}b>") is None  # a subject of unread triples only
    assert background.names == (G,) and not background.empty(G)
    background.select(frozenset({NAME, NOTE}))  # a later query reads one more
    assert len(background.triples(G)[0]) == 3
    assert lookup('"two words"') is not None and lookup(f"<{P}>") is None
    background.select(None)  # one reads every predicate
    expected, codec = _one_by_one(store, G)
    assert _decoded(background, G) == {tuple(codec.decode(i) for i in t) for t in expected}


def test_a_graph_without_read_triples_is_still_named() -> None:
    background = Background.encode(_store(TURTLE, G), Codec(), ntriples_ids, frozenset())
    assert background.names == (G,) and not background.empty(G)
    assert len(background.triples(G)[0]) == 0 and len(background.dictionary) == 0


@pytest.mark.parametrize(("pattern", "read"), [
    ("?x :p ?y . ?y :name ?n", {P, NAME}),
    ("?x :p/:name|^:note ?n", {P, NAME, NOTE}),
    ("?x :p* ?y FILTER EXISTS { ?y :name ?n }", {P, NAME}),
    ("?x ?pred ?y", None),
    ("?x !:p ?y", None),
])
def test_the_predicates_a_query_reads(pattern: str, read: set[str] | None) -> None:
    text = f"PREFIX : <{E}> SELECT * WHERE {{ {pattern} }}"
    assert module.read_predicates(parse_query(text)) == (None if read is None else frozenset(read))
    assert module.read_predicates(parse_query(text, entailment=Entailment.RDFS)) is None


WINDOWED = (f"PREFIX : <{E}> SELECT ?x ?v FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 5] "
            "WHERE {{ WINDOW :w {{ ?x :in :o }} GRAPH <{g}> {{ {pattern} }} }}")


ELEMENTS = [StreamElement(E + "s", f"{E}e{t}", t, t, (ox.Triple(
    ox.NamedNode(E + x), ox.NamedNode(E + "in"), ox.NamedNode(E + "o")),)) for t, x in
    [(1, "a"), (2, "b"), (7, "c"), (12, "a")]]


def _answers(results: list[Result], name: str) -> list[tuple[int, str, str]]:
    return sorted((r.t, r.binding["x"].value, str(r.binding["v"])) for r in results
                  if r.query == name)


def _reference(pattern: str, name: str) -> list[tuple[int, str, str]]:
    """The reference evaluator's answers to the query over the whole store."""
    query = parse_query(WINDOWED.format(g=G.value, pattern=pattern))
    return _answers(evaluate(query, {E + "s": ELEMENTS}, _store(TURTLE, G), name=name), name)


@pytest.mark.parametrize("forget", [None, 1])
def test_queries_reading_more_predicates_than_the_first_answer_exactly(
    forget: int | None,
) -> None:
    session = Session(_store(TURTLE, G), forget_terms=forget)
    queries = {"names": "?x :name ?v", "notes": "?x :note ?v", "any": "?x ?p ?v"}
    session.register(WINDOWED.format(g=G.value, pattern=queries["names"]), "names")
    assert session.dictionary.lookup('"two words"') is None  # :note not read yet
    for name in ("notes", "any"):
        session.register(WINDOWED.format(g=G.value, pattern=queries[name]), name)
    if session.forgetting is not None:  # the terms encoded at each register are pinned
        session.forgetting.collect([session], pinned=session.background.pinned())
    results = [r for e in ELEMENTS for r in session.push(e)] + session.flush()
    for name, pattern in queries.items():
        assert _answers(results, name) == _reference(pattern, name)
    assert {(x, v) for _, x, v in _answers(results, "notes")} == {(E + "b", '"two words"')}
    assert '"chat"@fr' in {v for _, _, v in _answers(results, "any")}  # :label: no query's


SEQUENCE = (f"PREFIX : <{E}> SELECT ?x ?v ?n FROM STREAM S1 <{E}s> PARTITION BY ?x "
            "WHERE {{ SEQ(A, B) DEFINE GPM A ON S1 {{ ?x :in :o }} "
            "DEFINE GPM B ON S1 {{ ?x :in :o GRAPH <{g}> {{ ?x :p ?v . ?x :name ?n }} }} }}")
LOOKED_UP = TURTLE + ':z :p :a ; :name "Zed" .\n'
"""``:z``'s triples are read by the query's predicates, but no event binds ``:z``."""
SEQUENCE_ELEMENTS = [StreamElement(E + "s", f"{E}e{t}", t, t, (ox.Triple(
    ox.NamedNode(E + x), ox.NamedNode(E + "in"), ox.NamedNode(E + "o")),)) for t, x in
    [(1, "a"), (2, "c"), (3, "b"), (5, "a"), (6, "b"), (8, "c")]]


def _sequence_answers(results: list[Result]) -> list[tuple[int, str, str, str]]:
    return sorted((r.t, r.binding["x"].value, r.binding["v"].value, str(r.binding["n"]))
                  for r in results)


@pytest.mark.parametrize("forget", [None, 1])
@pytest.mark.parametrize("path", ["columnar", "rows"])
def test_a_sequence_looks_up_the_background_subjects_its_events_bind(
    forget: int | None, path: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SEPIA_ENGINE_PATH", path)
    monkeypatch.setattr(module, "LOOKUPS_FROM", 1)  # a graph this small is encoded whole
    session = Session(_store(LOOKED_UP, G), forget_terms=forget)
    session.register(SEQUENCE.format(g=G.value))
    assert session.dictionary.lookup('"Anna Smith"') is None  # nothing encoded yet
    results = []
    for element in SEQUENCE_ELEMENTS:
        results += session.push(element)
        if session.forgetting is not None:  # looked-up terms stay while they are held
            session.forgetting.collect([session], pinned=session.background.pinned())
    results += session.flush()
    # a and c each have a :p and a :name (c's is café); b has no :name
    assert _sequence_answers(results) == [
        (5, E + "a", E + "b", '"Anna Smith"'), (8, E + "c", E + "caf%C3%A9", '"café"')]
    expected = evaluate(parse_query(SEQUENCE.format(g=G.value)), {E + "s": SEQUENCE_ELEMENTS},
                        _store(LOOKED_UP, G))
    assert _sequence_answers(results) == _sequence_answers(expected)
    zed = session.dictionary.lookup('"Zed"')
    assert (zed is None) == (path == "columnar")  # the row engine reads the graph whole


EXPIRING = (f"PREFIX : <{E}> SELECT ?x ?v WITHIN 1 MINUTES FROM STREAM S1 <{E}s> "
            "PARTITION BY ?x WHERE {{ SEQ(A, B) DEFINE GPM A ON S1 {{ ?x :in :o }} "
            "DEFINE GPM B ON S1 {{ ?x :in :o GRAPH <{g}> {{ ?x :p ?v }} }} }}")
KEYS = 120


def test_looked_up_subjects_are_forgotten_with_the_runs_that_named_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A long stream naming ever new subjects: each key's two elements match (its run ends
    there or expires a minute later), and a collection after each element forgets the key,
    its looked-up value and their lookup, so the dictionary stays at the live state's size
    instead of growing by two terms a key (it did while the lookups were walked)."""
    store = _store("".join(f"<{E}k{i}> <{E}p> <{E}v{i}> .\n" for i in range(KEYS)), G)
    monkeypatch.setattr(module, "LOOKUPS_FROM", 1)
    elements = [StreamElement(E + "s", f"{E}e{i}-{n}", t, t, (ox.Triple(
        ox.NamedNode(f"{E}k{i}"), ox.NamedNode(E + "in"), ox.NamedNode(E + "o")),))
        for i in range(KEYS) for n, t in enumerate([i * 120_000, i * 120_000 + 1])]
    session = Session(store, forget_terms=1)
    session.register(EXPIRING.format(g=G.value))
    results, sizes = [], []
    for element in elements:
        results += session.push(element)
        assert session.forgetting is not None
        session.forgetting.collect([session], pinned=session.background.pinned())
        sizes.append(len(session.dictionary))
    results += session.flush()
    expected = evaluate(parse_query(EXPIRING.format(g=G.value)), {E + "s": elements}, store)
    answers = sorted((r.t, r.binding["x"].value, r.binding["v"].value) for r in results)
    assert answers == sorted((r.t, r.binding["x"].value, r.binding["v"].value)
                             for r in expected)
    assert len(answers) == KEYS  # each key once, with its own value
    assert max(sizes[20:]) <= sizes[19] + 6


def test_a_background_with_few_looked_up_triples_is_encoded_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Looking subjects up one by one costs more than encoding a small graph at once: under
    ``LOOKUPS_FROM`` triples of the predicates a sequence reads by subject, they are encoded
    when the query is registered; from it on, only as events name their subjects. The
    answers are the same either way."""
    triples = 7  # LOOKED_UP's :p and :name triples: :a's two, :b's one, :c's two, :z's two
    answers = {}
    for threshold, encoded in [(triples + 1, True), (triples, False)]:
        monkeypatch.setattr(module, "LOOKUPS_FROM", threshold)
        session = Session(_store(LOOKED_UP, G))
        session.register(SEQUENCE.format(g=G.value))
        assert (session.dictionary.lookup('"Zed"') is not None) == encoded
        answers[encoded] = _sequence_answers(
            [r for e in SEQUENCE_ELEMENTS for r in session.push(e)] + session.flush())
    assert answers[True] == answers[False] == [
        (5, E + "a", E + "b", '"Anna Smith"'), (8, E + "c", E + "caf%C3%A9", '"café"')]


def test_found_triples_are_selected_by_subject_and_forgotten_with_their_terms() -> None:
    found = module.Found()
    found.add([3, 1], (np.array([3, 1, 3]), np.array([10, 10, 11]), np.array([7, 8, 9])))
    found.add([5, 2], (np.array([5]), np.array([10]), np.array([4])))  # 2: no triple
    assert found.known == {1, 2, 3, 5}
    s, p, o = found.of(np.array([1, 2, 3]))  # grouped by subject, each in the store's order
    assert (s.tolist(), p.tolist(), o.tolist()) == ([1, 3, 3], [10, 10, 11], [8, 7, 9])
    assert [c.tolist() for c in found.of(np.array([2]))] == [[], [], []]
    found.forget({9, 2})  # 3 has object 9: its triples go, and 2 itself
    assert found.known == {1, 5}
    assert [c.tolist() for c in found.of(np.array([1, 5]))] == [[1, 5], [10, 10], [8, 4]]


@pytest.mark.parametrize(("pattern", "held"), [
    ("?x :name ?v", {IN, NAME}),
    ("?x :p+ ?v", {IN, P}),
    ("?x :p* ?v", None),  # zero-length steps relate every node of the graph to itself
    ("?x :p? ?v", None),
])
def test_a_store_loaded_for_the_queries_predicates_answers_as_the_whole_one(
    pattern: str, held: set[str] | None, tmp_path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The graph written as N-Triples (``:d`` only in a triple of a predicate no pattern
    names) and loaded for the predicates ``loaded_for`` names, its other lines blanked:
    the session's answers are the reference's over the whole store."""
    import sepia.io.background as loading
    from sepia.io.background import load_background

    monkeypatch.setattr(loading, "SKIPPING_FROM", 0)
    text = TURTLE + ':d :note "only a note" .\n'
    path = tmp_path / "g.nt"
    lines = _store(text).dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
    path.write_bytes(b"".join(sorted(lines.splitlines(keepends=True))))  # :d's line last
    query = parse_query(WINDOWED.format(g=G.value, pattern=pattern))
    assert module.loaded_for([query]) == (None if held is None else frozenset(held))
    store = load_background([(G.value, path)], module.loaded_for([query]))
    assert len(store) < len(_store(text)) if held else len(store) == len(_store(text))
    session = Session(store)
    session.register(query, "q")
    elements = [*ELEMENTS, StreamElement(E + "s", E + "e13", 13, 13, (ox.Triple(
        ox.NamedNode(E + "d"), ox.NamedNode(E + "in"), ox.NamedNode(E + "o")),))]
    results = [r for e in elements for r in session.push(e)] + session.flush()
    reference = evaluate(query, {E + "s": elements}, _store(text, G), name="q")
    assert _answers(results, "q") == _answers(reference, "q")
    assert bool(held) or (13, E + "d", f"<{E}d>") in _answers(results, "q")
