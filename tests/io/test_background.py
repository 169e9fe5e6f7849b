"""Background data (`--data [G=]PATH`): every syntax, gzip, named graphs, errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pyoxigraph as ox
import pytest

from sepia.io.background import load_background
from sepia.io.errors import InputError

E = "http://example.org/"
A, P, B = ox.NamedNode(E + "a"), ox.NamedNode(E + "p"), ox.NamedNode(E + "b")
G = ox.NamedNode(E + "g")
DEFAULT = ox.DefaultGraph()

TRIPLE_FILES = {
    "d.ttl": f"@prefix : <{E}> .\n:a :p :b .\n",
    "d.nt": f"<{E}a> <{E}p> <{E}b> .\n",
    "d.rdf": (
        '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
        f' xmlns:ex="{E}">\n<rdf:Description rdf:about="{E}a"><ex:p rdf:resource="{E}b"/>'
        "</rdf:Description>\n</rdf:RDF>\n"
    ),
    "d.jsonld": f'{{"@id": "{E}a", "{E}p": {{"@id": "{E}b"}}}}',
}


def quads(store: ox.Store) -> set[ox.Quad]:
    return set(store)


@pytest.mark.parametrize("name", sorted(TRIPLE_FILES))
def test_every_triples_syntax_into_default_graph_or_a_named_one(
    name: str, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_text(TRIPLE_FILES[name])
    assert quads(load_background([(None, path)])) == {ox.Quad(A, P, B, DEFAULT)}
    assert quads(load_background([(E + "g", path)])) == {ox.Quad(A, P, B, G)}


def test_datasets_keep_their_named_graphs(tmp_path: Path) -> None:
    trig = tmp_path / "d.trig"
    trig.write_text(f"@prefix : <{E}> .\n:a :p :b .\n:g {{ :b :p :a . }}\n")
    nquads = tmp_path / "d.nq.gz"
    nquads.write_bytes(gzip.compress(f"<{E}a> <{E}p> <{E}a> <{E}h> .\n".encode()))
    store = load_background([(None, trig), (None, nquads)])
    assert quads(store) == {
        ox.Quad(A, P, B, DEFAULT), ox.Quad(B, P, A, G), ox.Quad(A, P, A, ox.NamedNode(E + "h"))
    }
    # with GRAPH=, only the default-graph part moves into GRAPH
    moved = load_background([(E + "x", trig)])
    assert quads(moved) == {ox.Quad(A, P, B, ox.NamedNode(E + "x")), ox.Quad(B, P, A, G)}


def test_gzip_and_relative_iris(tmp_path: Path) -> None:
    path = tmp_path / "d.ttl.gz"
    path.write_bytes(gzip.compress(b"<a> <p> <b> .\n"))
    (quad,) = quads(load_background([(None, path)]))
    assert quad.subject == ox.NamedNode(tmp_path.resolve().as_uri() + "/a")


def test_errors_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.ttl"
    path.write_text(f"@prefix : <{E}> .\n:a :p :b .\n:a :p :b :c .\n")
    with pytest.raises(InputError) as caught:
        load_background([(None, path)])
    assert (caught.value.file, caught.value.line) == (str(path), 3)
    assert str(caught.value).startswith(f"{path}:3: syntax error: ")
    unknown = tmp_path / "d.xyz"
    unknown.write_text("")
    with pytest.raises(InputError, match="cannot tell the RDF syntax"):
        load_background([(None, unknown)])


@pytest.fixture
def skipping(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines are blanked in files of any size, 64 bytes of text at a time (so a file's
    blocks end inside lines, and many blocks are read ahead)."""
    import sepia.io.background as background

    monkeypatch.setattr(background, "SKIPPING_FROM", 0)
    monkeypatch.setattr(background, "SKIP_BLOCK", 64)


@pytest.mark.parametrize("read", [None, {E + "p"}], ids=["whole", "lines-of-q-blanked"])
def test_truncated_gzip_background_names_the_line_where_it_breaks_off(
    read: set[str] | None, skipping: None, tmp_path: Path
) -> None:
    text = "".join(f"<{E}s{n}> <{E}{'pq'[n % 2]}> <{E}o> .\n" for n in range(3000)).encode()
    packed = gzip.compress(text)[:2000]
    path = tmp_path / "d.nt.gz"
    path.write_bytes(packed)
    import zlib

    line = zlib.decompressobj(31).decompress(packed).count(b"\n") + 1
    with pytest.raises(InputError) as caught:
        load_background([(None, path)], read)
    assert str(caught.value) == f"{path}:{line}: the gzip data ends early (a truncated file)"


Q, R = ox.NamedNode(E + "q"), ox.NamedNode(E + "r")
STAMP = ox.NamedNode("http://www.w3.org/ns/prov#generatedAtTime")


def test_only_the_read_predicates_are_loaded_and_the_first_triple(
    skipping: None, tmp_path: Path
) -> None:
    path = tmp_path / "d.nt"
    path.write_text(
        f"<{E}a> <{E}q> <{E}b> .\n"  # the first triple: kept, so the graph exists
        f'<{E}a> <{E}p> "x"@en .\n'
        f"_:n1 <{E}q> <{E}b> .\n"
        f'<{E}b> <{E}p> "a \\"quoted\\" \\u00e9"^^<{E}t> .\r\n'
        f'<{E}b> <{E}r> "no" .\n'
        f'<{E}g> <{STAMP.value}> "3"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
        f"<{E}b> <{E}p> _:n1 .\n"
        f"<{E}b>  <{E}q>  <{E}c> .\n"  # two spaces: not N-Triples as written here, kept
        f"<{E}c> <{E}p> <{E}a> ."  # no line break at the end
    )
    store = load_background(path, {P.value})
    assert shapes(store) == {
        (f"<{E}a>", Q, f"<{E}b>"),
        (f"<{E}a>", P, '"x"@en'),
        (f"<{E}b>", P, f'"a \\"quoted\\" \u00e9"^^<{E}t>'),
        (f"<{E}g>", STAMP, '"3"^^<http://www.w3.org/2001/XMLSchema#integer>'),
        (f"<{E}b>", P, "_"),
        (f"<{E}b>", Q, f"<{E}c>"),
        (f"<{E}c>", P, f"<{E}a>"),
    }
    assert len(store) == 7
    whole = load_background(path)
    assert len(whole) == 9
    assert {t for t in shapes(whole) if t[1] == P} == {t for t in shapes(store) if t[1] == P}


def shapes(store: ox.Store) -> set[tuple[str, ox.NamedNode, str]]:
    """The triples, blank nodes written ``_`` (each load names them anew)."""
    def text(term: object) -> str:
        return "_" if isinstance(term, ox.BlankNode) else str(term)

    return {(text(q.subject), q.predicate, text(q.object)) for q in store}


def test_a_graph_of_unread_predicates_still_exists(skipping: None, tmp_path: Path) -> None:
    path = tmp_path / "d.nt.gz"
    path.write_bytes(gzip.compress("".join(
        f"<{E}s{n}> <{E}q> <{E}o> .\n" for n in range(20)).encode()))  # fmt: skip
    store = load_background([(E + "g", path)], {P.value})
    assert [q.graph_name for q in store] == [G]
    assert len(load_background([(E + "g", path)])) == 20


def test_turtle_statements_and_long_strings_are_parsed_whole(
    skipping: None, tmp_path: Path
) -> None:
    path = tmp_path / "d.ttl"
    literal = f"first line\n<{E}a> <{E}q> <{E}b> .\nlast line"
    path.write_text(
        f"@prefix : <{E}> .\n"
        f"<{E}a> <{E}q> <{E}b> .\n"
        f":a :q :c ;\n  :p :d .\n"
        f"<{E}a> <{E}q> <{E}e> .\n"
        f'<{E}a> <{E}p> """{literal}""" .\n'
        f"<{E}a> <{E}q> <{E}f> .\n"
    )
    store = load_background(path, {P.value})
    objects = {str(q.object) for q in store if q.predicate == P}
    assert objects == {f"<{E}d>", ox.Literal(literal).__str__()}
    by_q = {str(q.object) for q in store if q.predicate == Q}
    # the first whole triple, the prefixed one, and all from the long string's block on
    assert {f"<{E}b>", f"<{E}c>", f"<{E}f>"} <= by_q


def test_errors_name_the_same_line_when_lines_are_blanked(
    skipping: None, tmp_path: Path
) -> None:
    lines = [f"<{E}s{n}> <{E}q> <{E}o> .\n" for n in range(40)]
    for bad, line in ((f'<{E}s> <{E}q> "open .\n', 31), (f"<{E}s> <{E}p> <{E}o> <{E}x> .\n", 31)):
        path = tmp_path / "bad.nt"
        path.write_text("".join(lines[:30]) + bad + "".join(lines[30:]))
        with pytest.raises(InputError) as caught:
            load_background(path, {P.value})
        assert (caught.value.file, caught.value.line) == (str(path), line)

