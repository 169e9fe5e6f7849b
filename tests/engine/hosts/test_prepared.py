"""A background encoded once (``PreparedBackground``) serves many sessions: each answers
and numbers its terms as a session that encoded the store itself, and none sees another's
terms."""

from __future__ import annotations

import pyoxigraph as ox

from sepia.engine.codec import Codec
from sepia.engine.hosts.prepared import PreparedBackground
from sepia.engine.hosts.session import Session

EX = "http://example.org/"
QUERY = (
    "PREFIX : <http://example.org/> SELECT ?x ?name "
    "FROM NAMED WINDOW :w ON :s [RANGE 10 STEP 5] "
    "WHERE { WINDOW :w { ?x :p :o } GRAPH :db { ?x :name ?name } }"
)


def _store() -> ox.Store:
    store = ox.Store()
    db = ox.NamedNode(EX + "db")
    for n in range(3):
        store.add(ox.Quad(ox.NamedNode(f"{EX}c{n}"), ox.NamedNode(EX + "name"),
                          ox.Literal(f"card {n}"), db))  # fmt: skip
    return store


def _answers(session: Session) -> list[tuple[int, str, str]]:
    session.register(QUERY, "q")
    p, o = ox.NamedNode(EX + "p"), ox.NamedNode(EX + "o")
    found = []
    for t, x in [(1, "c0"), (2, "c2"), (7, "c9"), (12, "c1")]:
        found += session.push_graph(EX + "s", t, [ox.Triple(ox.NamedNode(EX + x), p, o)])
    found += session.flush()
    return sorted((r.t, r.binding["x"].value, r.binding["name"].value) for r in found)


def test_a_session_from_it_answers_and_numbers_terms_as_one_from_the_store():
    store = _store()
    fresh, prepared = Session(store), Session(PreparedBackground.of(store))
    answers = _answers(prepared)
    assert answers == _answers(fresh)
    # each element's card joined with its holder's name in the background (c9 has none)
    assert [(t, name) for t, _, name in answers] == [(1, "card 0"), (2, "card 2"), (12, "card 1")]
    assert list(prepared.dictionary.rows()) == list(fresh.dictionary.rows())


def test_sessions_from_it_do_not_share_their_terms():
    ready = PreparedBackground.of(_store())
    before = list(ready.codec.rows())
    first, second = Session(ready), Session(ready)
    _answers(first)
    new = ox.NamedNode(EX + "only-in-first")
    at = first.dictionary.encode(new)
    assert second.dictionary.lookup(f"<{EX}only-in-first>") is None
    assert list(ready.codec.rows()) == before
    assert second.dictionary.encode(ox.NamedNode(EX + "other")) == len(before) + 1
    assert at > len(before)


def test_a_codec_copy_keeps_ids_and_forgets_on_its_own():
    codec = Codec()
    a, b = ox.NamedNode(EX + "a"), ox.Literal("01", datatype=ox.NamedNode(
        "http://www.w3.org/2001/XMLSchema#integer"))
    ids = [codec.encode(a), codec.encode(b)]
    copy = codec.copy()
    assert [copy.encode(a), copy.encode(b)] == ids
    copy.forget({ids[1]})
    assert codec.decode(ids[1]) == ox.Literal("1", datatype=b.datatype)
    assert codec.encode(b) == ids[1]
    assert copy.encode(b) == 3 and codec.encode(ox.NamedNode(EX + "c")) == 3
