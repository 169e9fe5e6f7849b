import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sepia.rdf import Dictionary, parse_term, term_to_nt

XSD_INT = ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")


def test_equal_terms_share_an_id_and_ids_start_at_one() -> None:
    d = Dictionary()
    a = d.encode(ox.NamedNode("http://e/a"))
    one = d.encode(ox.Literal("1", datatype=XSD_INT))
    assert (a, one) == (1, 2)
    assert d.encode(ox.NamedNode("http://e/a")) == 1
    assert d.decode(2) == ox.Literal("1", datatype=XSD_INT)
    assert d.lookup('"2"^^<http://www.w3.org/2001/XMLSchema#integer>') is None


def test_unknown_id_raises() -> None:
    with pytest.raises(KeyError):
        Dictionary().decode_text(0)


texts = st.lists(
    st.sampled_from(['<http://e/a>', '"x"@en', '_:b1', '"1"^^<http://e/t>', '"a\\"b"', "<http://e/b>"])
)


@given(texts)
def test_rows_rebuild_the_same_dictionary(items: list[str]) -> None:
    d = Dictionary()
    ids = d.encode_many(items)
    rebuilt = Dictionary.from_rows(reversed(list(d.rows())))
    assert [rebuilt.decode_text(i) for i in ids] == items
    assert list(rebuilt.rows()) == list(d.rows())


def test_extend_accepts_rows_added_elsewhere_and_rejects_clashes() -> None:
    d = Dictionary()
    d.encode_text("<http://e/a>")
    copy = Dictionary.from_rows(d.rows())
    copy.encode_text("<http://e/b>")
    d.extend(copy.rows(since=1))
    assert d.lookup("<http://e/b>") == 2
    with pytest.raises(ValueError, match=r"two ids|has id"):
        d.extend([(5, "<http://e/a>")])


def test_term_text_round_trips() -> None:
    for text in ['<http://e/a>', '"x"@en', '"1"^^<http://www.w3.org/2001/XMLSchema#integer>']:
        assert term_to_nt(parse_term(text)) == text
    with pytest.raises(ValueError, match="not an RDF term"):
        parse_term("<unclosed")


def test_ids_above_a_floor_are_read_from_the_newest_back() -> None:
    d = Dictionary()
    for i in range(10):
        d.encode_text(f"<http://e/{i}>")
    d.forget({3, 9})
    assert d.ids() == [1, 2, 4, 5, 6, 7, 8, 10]
    assert d.ids(above=5) == [6, 7, 8, 10]
    assert d.ids(above=8) == [10] and d.ids(above=10) == []
