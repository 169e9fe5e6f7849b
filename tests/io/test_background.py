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


def test_truncated_gzip_background_names_the_line_where_it_breaks_off(tmp_path: Path) -> None:
    text = "".join(f"<{E}s{n}> <{E}p> <{E}o> .\n" for n in range(3000)).encode()
    packed = gzip.compress(text)[:2000]
    path = tmp_path / "d.nt.gz"
    path.write_bytes(packed)
    import zlib

    line = zlib.decompressobj(31).decompress(packed).count(b"\n") + 1
    with pytest.raises(InputError) as caught:
        load_background([(None, path)])
    assert str(caught.value) == f"{path}:{line}: the gzip data ends early (a truncated file)"
