"""Large stream files cut into pieces at element boundaries (`splits`): the pieces read
together give the whole file's elements, in file order; files laid out otherwise are not
cut; a TriG piece sees the directives before it; errors name the file's own line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sepia.bench.harness import dataset
from sepia.runtime.spark import splits
from sepia.runtime.spark.elements import IngestError
from sepia.runtime.spark.ingest import IngestOptions, file_elements
from sepia.workloads import workload

PROV = "<http://www.w3.org/ns/prov#generatedAtTime>"


def rows(path: Path, pieces: list[splits.Piece] | None = None) -> list[tuple]:
    """The element rows of the file, read whole or piece by piece (graph, times, triples)."""
    parts = pieces or [None]
    return [
        (row[2], *row[3:])
        for piece in parts
        for row, _ in file_elements("s", str(path), IngestOptions(), "stop", piece)
    ]


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(splits, "PIECE_BYTES", 5_000)
    monkeypatch.setattr(splits, "WINDOW", 4_000)


@pytest.mark.parametrize("name", ["W4", "W7"])
def test_pieces_of_a_generated_file_give_its_elements_in_order(name, tmp_path):
    data, manifest = dataset(workload(name), 200, 7, tmp_path)
    path = data / manifest.streams[0].path
    pieces = splits.pieces(path, 4)
    assert len(pieces) >= 3
    assert [p.begin for p in pieces][1:] == [q.end for q in pieces][:-1]
    whole, cut = rows(path), rows(path, pieces)
    assert [r[1:] for r in cut] == [r[1:] for r in whole]
    assert [r[0] for r in cut] == sorted(r[0] for r in cut)  # seq follows file order


def nquads(n: int, time_first: bool = True) -> str:
    lines = []
    for k in range(n):
        time = f'<http://e/g{k}> {PROV} "{k}"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
        body = f'<http://e/s{k}> <http://e/p> "{"x" * 40}" <http://e/g{k}> .\n'
        lines += [time, body] if time_first else [body, time]
    return "".join(lines)


def test_nquads_are_cut_between_elements(tmp_path):
    path = tmp_path / "s.nq"
    path.write_text(nquads(200))
    pieces = splits.pieces(path, 3)
    assert len(pieces) == 3
    text = path.read_bytes()
    assert all(text[p.begin :].startswith(b"<http://e/g") for p in pieces[1:])
    assert rows(path, pieces) != [] and [r[1:] for r in rows(path, pieces)] == [
        r[1:] for r in rows(path)
    ]


def test_a_file_with_time_statements_after_their_graph_is_read_whole(tmp_path):
    path = tmp_path / "s.nq"
    path.write_text(nquads(200, time_first=False))
    assert splits.pieces(path, 3) == [splits.Piece(0, 0, path.stat().st_size)]


def test_a_file_with_every_time_statement_first_is_read_whole(tmp_path):
    path = tmp_path / "s.nq"
    text = nquads(200)
    lines = text.splitlines(keepends=True)
    path.write_text("".join(lines[0::2] + lines[1::2]))
    assert splits.pieces(path, 3) == [splits.Piece(0, 0, path.stat().st_size)]


def test_a_trig_piece_reads_the_directives_before_it(tmp_path):
    """A prefix redefined halfway: the later pieces read their terms with the new one."""
    head = "@prefix prov: <http://www.w3.org/ns/prov#> .\n@prefix : <http://a/> .\n"
    element = ':g{k} prov:generatedAtTime {k} .\n:g{k} {{ :s{k} :p "{pad}" . }}\n'
    first = "".join(element.format(k=k, pad="x" * 40) for k in range(100))
    second = "".join(element.format(k=k, pad="x" * 40) for k in range(100, 200))
    path = tmp_path / "s.trig"
    path.write_text(head + first + "@prefix : <http://b/> .\n" + second)
    pieces = splits.pieces(path, 4)
    assert len(pieces) == 3 and b"<http://b/>" in pieces[-1].header
    cut = rows(path, pieces)
    assert [r[1:] for r in cut] == [r[1:] for r in rows(path)]
    assert "<http://b/s199>" in cut[-1][-1]


LINES = ["@prefix : <http://a/> .", "  PREFIX : <http://b/>", "\t@Base <http://c/> .",
         "BASE <http://d/>", "prefixes :s :p :o .", "<http://p/s> <http://p/p> 1 .",
         "Bob { :s :p :o . }", ":g prov:generatedAtTime 3 .", "", "@basement", "pre"]


@given(st.lists(st.sampled_from(LINES), max_size=12), st.booleans())
def test_directive_lines_are_the_whole_regexs_matches(lines, final_newline):
    """The lines found by their first character, then matched, are exactly the matches of
    the directive pattern run over the whole text (blanks, case, lookalike words)."""
    text = ("\n".join(lines) + ("\n" if final_newline else "")).encode()
    whole = [(m.start(), m.group(0)) for m in splits._DIRECTIVE.finditer(text)]
    assert splits.directive_lines(text, len(text)) == whole


def test_an_error_in_a_later_piece_names_the_files_line(tmp_path):
    path = tmp_path / "s.nq"
    lines = nquads(200).splitlines(keepends=True)
    lines[351] = "<http://e/s175> <http://e/p> broken <http://e/g175> .\n"  # line 352
    path.write_text("".join(lines))
    pieces = splits.pieces(path, 3)
    last = next(p for p in pieces if p.begin <= sum(map(len, lines[:351])) < p.end)
    assert last.index > 0
    with pytest.raises(IngestError, match=r"s\.nq:352\b"):
        rows(path, [last])
